"""Saved offline-benchmark results (vLLM ``--output-json``, SGLang result JSONL) → ``offline_runs``.

Upstream writers, and the keys each file holds (the columns are named after them):

- ``vllm bench latency --output-json`` (``benchmarks/benchmark_latency.py`` before):
  ``{"avg_latency": 1.63, "latencies": [...], "percentiles": {"10": 1.61, ..., "99": 1.66}}``
- ``vllm bench throughput --output-json``: ``{"elapsed_time", "num_requests",
  "total_num_tokens", "requests_per_second", "tokens_per_second"}``
- ``vllm bench startup --output-json``: ``avg_cold_startup_time``, ``avg_cold_compilation_time``,
  ``avg_warm_...``, each phase's ``..._times`` and ``..._percentiles`` (those in ``extra``)
- SGLang ``bench_one_batch --result-filename`` (JSONL, a line per case): ``run_name``,
  ``batch_size``, ``input_len``, ``output_len``, ``prefill_latency``, ``prefill_throughput``,
  ``median_decode_latency``, ``median_decode_throughput``, ``total_latency``,
  ``overall_throughput``
- SGLang ``bench_one_batch_server`` (JSONL): ``run_name``, ``batch_size``, ``input_len``,
  ``output_len``, ``latency`` (rounded to 4 decimals; ``total_latency`` here),
  ``output_throughput``, ``overall_throughput`` (2 decimals), later ``last_gen_throughput``
- SGLang ``bench_offline_throughput --result-filename`` (JSONL): ``backend``,
  ``successful_requests``, ``total_latency``, ``total_input_tokens``, ``total_output_tokens``,
  ``request_throughput``, ``input_throughput``, ``output_throughput``, ``total_throughput``,
  ``last_gen_throughput``; in the columns its printed block fills (``elapsed_time``,
  ``num_requests``, ``requests_per_second``, ``output_tokens_per_second``,
  ``tokens_per_second``)

Each object is a row of phase ``benchmark``, the very row its printed lines give (one row
with two sightings when both are ingested).  A key no column knows stays in ``extra``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Iterator

from pydantic import ValidationError

from ..reading.cmdline import parse_command
from ..reading.jsonstream import records
from ..reading.lines import sniff_encoding
from ..reading.progress import open_text
from ..schemas.offline import LATENCY_PERCENTILES, OfflineRun
from .base import Context, FileFormat, Parsed, Problem
from .offlinecontext import arguments_row
from .sglang_offline_throughput import COMMANDS as OFFLINE
from .sglang_one_batch import COMMANDS as ONE_BATCH
from .sglang_one_batch_server import COMMANDS as SERVER
from .vllm_bench_latency import LATENCY_COMMANDS
from .vllm_bench_startup import COMMANDS as STARTUP_COMMANDS
from .vllm_client_summary import THROUGHPUT_COMMANDS

# kind → (the keys that tell it, its tool, its engine, key → column where they differ)
KINDS: dict[str, tuple[tuple[str, ...], str, str, dict[str, str]]] = {
    "latency": (("avg_latency", "latencies"), "vllm bench latency", "vllm", {}),
    "throughput": (("elapsed_time", "requests_per_second"), "vllm bench throughput", "vllm",
                   {}),
    "startup": (("avg_cold_startup_time",), "vllm bench startup", "vllm", {}),
    "one_batch": (("prefill_latency",), "sglang.bench_one_batch", "sglang", {}),
    "one_batch_server": (("latency", "overall_throughput"), "sglang.bench_one_batch_server",
                         "sglang", {"latency": "total_latency"}),
    "offline_throughput": (("successful_requests", "total_throughput"),
                           "sglang.bench_offline_throughput", "sglang",
                           {"successful_requests": "num_requests",
                            "total_latency": "elapsed_time",
                            "request_throughput": "requests_per_second",
                            "output_throughput": "output_tokens_per_second",
                            "total_throughput": "tokens_per_second"}),
}
# What bench_one_batch_server rounds its figures to: half a unit of the last digit kept.
_ROUNDED = {"total_latency": 0.00005, "output_throughput": 0.005, "overall_throughput": 0.005,
            "last_gen_throughput": 0.005}
_QUOTED = tuple(dict.fromkeys(f'"{k}"' for keys, *_ in KINDS.values() for k in keys))
# Keys only these files hold (`"latency"` alone is in many a JSON log line): a one-line JSON
# value in a note without any of them is no copy of one.
_OWN_KEYS = ('"avg_latency"', '"elapsed_time"', '"prefill_latency"', '"overall_throughput"',
             '"successful_requests"', '"avg_cold_startup_time"')
_OWN = {"id", "source_id", "line_start", "line_end", "raw_text", "section", "label", "tags",
        "format", "engine", "tool", "phase", "command", "extra", "sightings", "config_id",
        "group_id"}


def kind_of(record: dict[str, Any]) -> str | None:
    for kind, (keys, *_) in KINDS.items():
        if all(k in record for k in keys):
            return kind
    return None


def sniff(head: bytes, path: str) -> bool:
    encoding, binary = sniff_encoding(head)
    if binary:
        return False
    text = head.decode(encoding, errors="ignore").lstrip("\ufeff \t\r\n")
    if not text.startswith("{") or '"completed"' in text:
        return False
    return any(all(f'"{k}"' in text for k in keys) for keys, *_ in KINDS.values())


def _finite(value: Any) -> Any:
    return None if isinstance(value, float) and not math.isfinite(value) else value


def record_row(record: dict[str, Any], line: int, context: Context) -> Parsed | Problem:
    kind = kind_of(record)
    if kind is None:
        return Problem(line, "not an offline benchmark result: none of "
                             f"{', '.join(_QUOTED)} together")
    _, tool, engine, renamed = KINDS[kind]
    columns = OfflineRun.model_fields
    row: dict[str, Any] = dict(note_context(context))
    row.update(tool=tool, engine=engine, phase="benchmark", format=FORMAT.name,
               line_start=line, line_end=line)
    extra: dict[str, Any] = {}
    for key, value in record.items():
        column = renamed.get(key, key)
        if key == "percentiles" and isinstance(value, dict):
            for pct, number in value.items():
                try:
                    name = f"p{float(pct):g}_latency"
                except ValueError:
                    name = None
                if name in columns and float(pct) in LATENCY_PERCENTILES:
                    row[name] = _finite(number)
                else:
                    extra.setdefault("percentiles", {})[pct] = number
        elif column in columns and column not in _OWN:
            row[column] = _finite(value)
        else:
            extra[key] = value
    row["extra"] = extra or None
    try:
        parsed = OfflineRun(**row)
    except ValidationError as exc:
        first = exc.errors()[0]
        return Problem(line, f"{'.'.join(map(str, first['loc']))}: {first['msg']}")
    tolerance = {k: v for k, v in _ROUNDED.items() if getattr(parsed, k) is not None} \
        if kind == "one_batch_server" else None
    return Parsed(row=parsed, tolerance=tolerance or None)


def note_context(context: Context) -> dict[str, Any]:
    """What the note around a pasted copy says: its heading, label and tags, and the offline
    command above it."""
    row: dict[str, Any] = {"section": context.section_text, "label": context.label_or_heading,
                           "tags": context.tags or None}
    for commands in (ONE_BATCH, SERVER, OFFLINE, LATENCY_COMMANDS, THROUGHPUT_COMMANDS,
                     STARTUP_COMMANDS):
        for kind, pattern in commands.items():
            seen = context.commands.get(kind)
            command = parse_command(seen.text, pattern) if seen is not None else None
            if command is not None:
                row["command"] = command.text
                row.update(arguments_row(command.args))
                return row
    return row


def read(path: Path, context: Context) -> Iterator[Parsed | Problem]:
    with open(path, "rb") as fh:
        encoding = sniff_encoding(fh.read(4096))[0]
    encoding = "utf-8-sig" if encoding == "utf-8" else encoding
    line = 1
    with open_text(path, encoding) as fh:
        try:
            for record, line in records(fh):
                if not isinstance(record, dict):
                    yield Problem(line, "not a JSON object: not an offline benchmark result")
                    continue
                yield record_row(record, line, context)
        except ValueError as exc:
            yield Problem(line, f"not valid JSON: {exc}")


FORMAT = FileFormat(
    name="offline_result_json",
    table="offline_runs",
    description="Saved offline benchmark results, recognised by content: vLLM `vllm bench "
                "latency` / `throughput` / `startup` --output-json, SGLang bench_one_batch, "
                "bench_one_batch_server and bench_offline_throughput result JSONL.",
    upstream=("vllm benchmarks/benchmark_latency.py / vllm bench latency --output-json",
              "vllm benchmarks/benchmark_throughput.py / vllm bench throughput --output-json",
              "vllm vllm/benchmarks/startup.py / vllm bench startup --output-json",
              "sglang bench_one_batch / bench_one_batch_server / bench_offline_throughput "
              "--result-filename"),
    sniff=sniff,
    read=read,
    json_keys=_OWN_KEYS,
    note_context=note_context,
)
