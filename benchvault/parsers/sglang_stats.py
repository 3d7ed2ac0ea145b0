"""SGLang's scheduler log lines (prefill and periodic decode batches) → ``engine_stats`` rows.

Upstream printer: ``python/sglang/srt/managers/scheduler.py`` ``log_prefill_stats`` /
``log_decode_stats`` (later ``scheduler_metrics_mixin.py``), 2024 → current.  The same
columns as vLLM's stats line where the meaning is the same::

    [2025-03-01 12:00:05 TP0] Decode batch. #running-req: 12, #token: 3400, token usage: 0.05,
    gen throughput (token/s): 812.30, #queue-req: 0

gives ``running=12, gpu_kv_cache_usage_pct=5.0, generation_throughput=812.3, waiting=0`` and
``extra={"batch": "decode", "#token": 3400}``.  ``token usage`` is a fraction of the KV pool,
stored as a percentage like vLLM's `GPU KV cache usage`; the data-parallel rank of the
prefix (`DP1 TP8`) is the ``engine_index``.
"""

from __future__ import annotations

import re
from typing import Any

from lark import Lark, v_args

from ..schemas.server import EngineStat
from . import grammar
from .base import Context, LineFormat, Parsed
from .grammar import ColumnTransformer
from .vllm_server_log import row_from_log_line, split_log_line

# label (without its colon) → (column, factor to the column's unit)
COLUMNS = {
    "#running-req": ("running", 1.0),
    "#queue-req": ("waiting", 1.0),
    "token usage": ("gpu_kv_cache_usage_pct", 100.0),
    "full token usage": ("gpu_kv_cache_usage_pct", 100.0),
    "gen throughput (token/s)": ("generation_throughput", 1.0),
    "input throughput (token/s)": ("prompt_throughput", 1.0),
    "cache hit rate": ("prefix_cache_hit_rate_pct", 1.0),     # printed with its `%`
}
# `[gpu_id=0] ` (2024) before the message; `DP1` in the dated prefix's rank tags.
GPU_TAG = re.compile(r"^\[gpu_id=\d+\]\s*")
DP_RANK = re.compile(r"^\s*\[[^\]]*\bDP(\d+)\b[^\]]*\]")


@v_args(inline=True)
class LineToColumns(ColumnTransformer):
    """Tree → ({column: value}, {label: value})."""

    def start(self, batch, *items):
        columns: dict[str, Any] = {}
        extra: dict[str, Any] = {"batch": batch}
        for label, value in items:
            known = COLUMNS.get(label)
            if known is not None and isinstance(value, (int, float)):
                # `0.07` of the pool is 7 %, not 7.000000000000001
                columns[known[0]] = round(value * known[1], 9)
            else:
                extra[label] = value
        return columns, extra

    def batch(self, kind):
        return str(kind).split()[0].lower()

    def item(self, label, value):
        return str(label)[:-1].strip(), value

    def number(self, value, *_percent):
        text = str(value)
        return int(text) if text.lstrip("+-").isdigit() else float(text)

    def flag(self, value):
        return str(value) == "True"

    def numbers(self, *values):
        return [self.number(v) for v in values if v is not None]


def _parser() -> Lark:
    return grammar.in_parser("sglang_stats.lark", __file__, LineToColumns)


def build(line: int, text: str, context: Context) -> Parsed:
    log = split_log_line(text)
    columns, extra = grammar.parse(_parser(), GPU_TAG.sub("", log.message),
                                   "SGLang scheduler stats line")
    rank = DP_RANK.match(text)
    if rank:
        columns["engine_index"] = int(rank.group(1))
    return Parsed(row=row_from_log_line(EngineStat, log, context, columns, extra))


FORMAT = LineFormat(
    name="sglang_stats",
    table="engine_stats",
    description="SGLang scheduler log line (prefill batch, periodic decode batch): running and "
                "queued requests, KV-pool usage, generation throughput, every other field by "
                "its label.",
    upstream=("sglang srt/managers/scheduler.py log_prefill_stats / log_decode_stats",),
    markers=("Decode batch", "Prefill batch", "Extend batch", "Mixed batch"),
    pattern=re.compile(r"(?:^|[\s\]])(?:Decode|Prefill|Extend|Mixed) batch[.,]"),
    build=build,
)
