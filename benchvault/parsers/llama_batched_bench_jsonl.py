"""``llama-batched-bench --output-format jsonl`` and ``llama-sweep-bench --output-format jsonl``
→ ``offline_runs``: one record a line, the same case a table row is.

Upstream printers: the ``LOG("{\\"n_kv_max\\": %d, ...}")`` of ``tools/batched-bench`` (from
2024; read in the llama-cpp-python 0.3.16 and 0.3.36 sdists) and of ik_llama.cpp's
``examples/sweep-bench``::

    {"n_kv_max": 2048, "n_batch": 2048, "n_ubatch": 512, "flash_attn": 0, "is_pp_shared": 0, "n_gpu_layers": 99, "n_threads": 8, "n_threads_batch": 8, "pp": 128, "tg": 128, "pl": 1, "n_kv": 256, "t_pp": 0.233810, "speed_pp": 547.453064, "t_tg": 3.503684, "speed_tg": 36.532974, "t": 3.737494, "speed": 68.495094}

The keys are the table's columns (``llama_batched_bench``): ``pp`` is ``input_len``, ``t_pp``
``prefill_latency`` and so on; the settings are columns of their own name.  A line is JSON,
read by the standard library's decoder; a line that is not, or holds no ``speed_pp``, is not
this format's.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import ValidationError

from ..schemas.offline import OfflineRun
from .base import Context, LineFormat, Parsed
from .llama_batched_bench import (BOOL_SETTINGS, COMMANDS, KEY_COLUMNS, SETTINGS, case_context,
                                  command_context_of)

INT_KEYS = {"pp", "tg", "pl", "n_kv"}
LINE = re.compile(r'^\s*\{\s*"n_kv_max"\s*:.*"speed_pp"\s*:.*\}\s*$')


def build(line: int, text: str, context: Context) -> Parsed | None:
    try:
        record = json.loads(text.strip())
    except ValueError:
        return None
    if not isinstance(record, dict) or "speed_pp" not in record:
        return None
    kind, from_command = command_context_of(context)
    if kind is None:
        kind = "llama_batched_bench" if "pl" in record else "llama_sweep_bench"
    row = case_context(context, kind)
    row.update(phase="benchmark", format=FORMAT.name, line_start=line, line_end=line,
               raw_text=text.strip())
    row.update(from_command)
    extra: dict[str, Any] = {}
    for key, value in record.items():
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            if value is not None:
                extra[key] = value
            continue
        if key in KEY_COLUMNS:
            row[KEY_COLUMNS[key]] = int(value) if key in INT_KEYS else float(value)
        elif key in SETTINGS:
            row[key] = bool(value) if key in BOOL_SETTINGS else int(value)
        else:
            extra[key] = value
    row["extra"] = extra or None
    try:
        return Parsed(row=OfflineRun(**row))
    except ValidationError:
        return None


FORMAT = LineFormat(
    name="llama_batched_bench_jsonl",
    table="offline_runs",
    description="llama-batched-bench / llama-sweep-bench `--output-format jsonl` records: one "
                "offline case a line.",
    upstream=("llama.cpp tools/batched-bench/batched-bench.cpp 2024 – (jsonl)",
              "ik_llama.cpp examples/sweep-bench/sweep-bench.cpp (jsonl)"),
    markers=('"speed_pp"',),
    pattern=LINE,
    build=build,
    commands=COMMANDS,
)
