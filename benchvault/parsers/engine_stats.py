"""vLLM's periodic engine log line → one ``engine_stats`` row.

Upstream printers: V0 ``vllm/engine/metrics.py`` ``LoggingStatLogger`` (0.2 – 0.10, plus the
separate ``Prefix cache hit rate: GPU: x%, CPU: y%`` line), V1 ``vllm/v1/metrics/loggers.py``
(0.8 → current, ``Engine 000:`` prefix from 0.9).

Example (a V0 log quoted in vllm-project/vllm issues)::

    INFO 08-27 15:21:10 metrics.py:406] Avg prompt throughput: 0.0 tokens/s, Avg generation
    throughput: 75.3 tokens/s, Running: 6 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache
    usage: 9.2%, CPU KV cache usage: 0.0%.

gives ``generation_throughput=75.3, running=6, swapped=0, waiting=0,
gpu_kv_cache_usage_pct=9.2, cpu_kv_cache_usage_pct=0.0``.
"""

from __future__ import annotations

import re
from typing import Any

from lark import Lark, Tree, v_args

from ..schemas.server import EngineStat
from . import grammar
from .base import Context, LineFormat, Parsed
from .grammar import ColumnTransformer, figure, line_values
from .vllm_server_log import row_from_log_line, split_log_line


def _read(label, value) -> tuple[str, Any]:
    """(label without its colon, the value as a float, or None when it is no number)."""
    return " ".join(str(label).rstrip(":").split()), figure(value)


def _count(value) -> int | float | None:
    number = figure(value)
    return int(number) if number is not None and number.is_integer() else number


@v_args(inline=True)
class LineToColumns(ColumnTransformer):
    """Tree → ({column: value}, {unknown label: value}, [(label, unreadable text)]).

    Plain data only, so the parse memo keeps it per shape (see reading/memo.py)."""

    def start(self, line):
        return line

    def v0_prefix_cache(self, _label, *items):
        return self._line(items)

    def v0_gpu(self, label, value):
        return self._field("prefix_cache_hit_rate_pct", label, value)

    def v0_cpu(self, label, value):
        return self._field("cpu_prefix_cache_hit_rate_pct", label, value)

    def stats(self, *items):
        columns, extra, unread = self._line(items)
        device = columns.pop("device_kv_cache_usage_pct", None)
        if device is not None:
            columns.setdefault("gpu_kv_cache_usage_pct", device)
        if "cpu_kv_cache_usage_pct" in columns and "gpu_kv_cache_usage_pct" not in columns \
                and "swapped" not in columns:
            # V1's CPU backend: its KV cache is the device's (V0's CPU one, swap space, is
            # printed after the GPU's, beside `Swapped`)
            columns["gpu_kv_cache_usage_pct"] = columns.pop("cpu_kv_cache_usage_pct")
        return columns, extra, unread

    @staticmethod
    def _line(items):
        return line_values(items)

    @staticmethod
    def _field(name, label, value):
        label, number = _read(label, value)
        return (name, number) if number is not None else (name, None, label, str(value))

    def engine_index(self, label):
        return "engine_index", int(str(label).split()[1].rstrip(":"))

    def engines_aggregated(self, label):
        # the line sums this many engines: no one engine's index (extra, by upstream's words)
        return "other", ("engines aggregated", int(str(label).split()[0]))

    def kv_fetch(self, _label, waiting, _a, progress, _b, completed, _c):
        # requests fetching KV from a connector, by stage (upstream's KV_FETCH_STAGES)
        return Tree("_items", [("other", (f"kv fetch {stage}", _count(value)))
                               for stage, value in (("waiting to start", waiting),
                                                    ("in progress", progress),
                                                    ("completed waiting", completed))])

    def other(self, label, value, *_unit):
        name, number = _read(label, value)
        item = ("other", (name, number))
        return item if number is not None else (*item, name, str(value))

    def column(self, name, children):
        # Every other rule is named after its column: LABEL VALUE [unit].
        return self._field(name, children[0], children[1])


def _parser() -> Lark:
    return grammar.in_parser("engine_stats.lark", __file__, LineToColumns)


def parse_message(message: str) -> tuple[dict[str, Any], dict[str, Any], list[list[str]]]:
    return grammar.parse(_parser(), message, "engine stats line")


def build(line: int, text: str, context: Context) -> Parsed:
    log = split_log_line(text)
    columns, extra, unread = parse_message(log.message)
    warnings = [(line, f"{label}: cannot read {value!r}, stored as null")
                for label, value in unread]
    return Parsed(row=row_from_log_line(EngineStat, log, context, columns, extra),
                  warnings=warnings)


FORMAT = LineFormat(
    name="engine_stats",
    table="engine_stats",
    description="vLLM periodic engine stats line (throughput, running/waiting requests, "
                "KV-cache usage, prefix-cache hit rate), V0 and V1.",
    upstream=("vllm 0.2 – 0.10 V0 LoggingStatLogger", "vllm 0.8+ V1 LoggingStatLogger"),
    markers=("Avg prompt throughput:", "Prefix cache hit rate: GPU"),
    pattern=re.compile(r"(?:^|[\s\]|:])(?:Avg prompt throughput:|Prefix cache hit rate: GPU:)"),
    build=build,
)
