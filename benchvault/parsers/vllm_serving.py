"""vLLM / SGLang serving benchmark result block → one ``serving_runs`` row.

Upstream printers: vLLM ``benchmarks/benchmark_serving.py`` (0.4 → 0.10), ``vllm bench serve``
(``vllm/benchmarks/serve.py``, 0.9 → current), SGLang ``python -m sglang.bench_serving``.

Example (seed ``strix-halo``, ``# c=8``)::

    ============ Serving Benchmark Result ============
    Successful requests:                     64
    Maximum request concurrency:             8
    Benchmark duration (s):                  225.80
    ...
    P99 ITL (ms):                            431.69
    ==================================================

gives ``completed=64, max_concurrency=8, duration=225.8, ..., p99_itl_ms=431.69`` plus one
``latency_stats`` row per latency line.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import Any

from lark import Lark, Token, v_args
from pydantic import TypeAdapter

from ..schemas.models import LatencyStat, ServingRun, fields_of
from . import grammar
from .base import STRAY, Block, BlockFormat, BlockParseError, Parsed, half_unit
from .grammar import ColumnTransformer, flatten, snake_name
from .runcontext import BENCH_COMMANDS, serving_context

# Printed metric names → the names vLLM's save-result keys use (`p99_{name}_ms`).
_METRIC_KEYS = {"ttft": "ttft", "tpot": "tpot", "itl": "itl", "e2el": "e2el",
                "e2e_latency": "e2el", "latency": "e2el", "client_queue_time": "client_queue_time",
                "e2el_incl_client_queue": "e2el_including_client_queue"}
_LATENCY_RE = re.compile(r"^\s*(Mean|Median|Std|Min|Max|P\d+(?:\.\d+)?)\s+(.*?)\s*\((ms|s)\):", re.I)
_POSITION_RE = re.compile(r"^Position\s+(\d+)$", re.I)
# A printed value that says "no number here" for a context-like field: keep it as text in extra.
_TEXT_OK = {"request_rate", "max_concurrency", "burstiness"}
_NUMBER_RE = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?inf|nan", re.I)
_NOT_SET = {"not set", "none", "n/a", "-"}
# A block's latency rows validated in one call (a third of the cost of one call per row).
_LATENCY_ROWS = TypeAdapter(list[LatencyStat])


def to_number(text: str | None, kind: type) -> int | float | None:
    """The printed number; `inf` stays inf; `not set` is no value; anything else is an error."""
    if text is None:
        return None
    text = text.strip()
    if text.isascii() and text.replace(".", "", 1).isdigit():  # the usual `39.09`, quickly
        if kind is int and text.isdigit():
            return int(text)
        number = float(text)
        return _whole_or_error(number, text) if kind is int else number
    if text.lower() in _NOT_SET:
        return None
    # `1.0 (Poisson process)`, `inf RPS.`: the number is the first word.
    head = text.split()[0].rstrip(".,")
    if not _NUMBER_RE.fullmatch(head):
        raise ValueError(f"{text!r} is not a number")
    number = float(head)
    if kind is int and math.isfinite(number):
        return _whole_or_error(number, text)
    return number


def _whole_or_error(number: float, text: str) -> int:
    if number != int(number):
        raise ValueError(f"{text!r} is not a whole number")
    return int(number)


@v_args(inline=True)
class BlockToFields(ColumnTransformer):
    """Tree → list of (kind, payload, line) items; numbers are converted by ``build``."""

    def start(self, *items):
        # HEADER and FOOTER tokens carry nothing: keep the (kind, payload, line) items
        return [item for item in flatten(items) if isinstance(item, tuple)]

    def value(self, tok: Token | None = None):
        return str(tok).strip() if tok is not None else None

    def section(self, tok: Token):
        return ("section", str(tok).strip("- \t"), tok.line)

    def latency(self, label: Token, value):
        return ("latency", (str(label), value), label.line)

    def other(self, label: Token, value):
        return ("other", (str(label).rstrip(":").strip(), value), label.line)

    def column(self, name, children):
        # (column, printed value, line) for the rules named after their column
        label = children[0]
        return ("field", (name, children[1] if len(children) > 1 else None), label.line)


def _parser() -> Lark:
    return grammar.in_parser("vllm_serving.lark", __file__, BlockToFields)


def parse_block(text: str) -> list[tuple[str, Any, int]]:
    """The block's items in order; raises BlockParseError naming the line within the block."""
    return grammar.parse(_parser(), text if text.endswith("\n") else text + "\n",
                         "result block")


@lru_cache(maxsize=1024)
def latency_key(label: str) -> tuple[str, float | None, str]:
    """`P99 TTFT (ms):` → ("p99", 99.0, "ttft"): (stat, percentile, metric); labels repeat."""
    match = _LATENCY_RE.match(label)
    stat, pct = _stat_key(match.group(1))
    return stat, pct, metric_key(match.group(2))


@lru_cache(maxsize=1024)
def _in_seconds(label: str) -> bool:
    match = _LATENCY_RE.match(label)
    return match is not None and match.group(3).lower() == "s"


def metric_key(printed: str) -> str:
    """`TTFT` → ttft, `E2E Latency` → e2el, `probe E2EL` → probe_e2el."""
    key = re.sub(r"[^a-z0-9]+", "_", printed.lower()).strip("_")
    return _METRIC_KEYS.get(key, key)


def _stat_key(word: str) -> tuple[str, float | None]:
    word = word.lower()
    if word.startswith("p"):
        pct = float(word[1:])
        return ("p" + (str(int(pct)) if pct == int(pct) else str(pct))), pct
    return word, None


@lru_cache(maxsize=None)
def _number_kind(column: str) -> type:
    """int for a count column, float for the rest (how its printed value is read)."""
    return int if fields_of(ServingRun)[column].annotation in (int, int | None) else float


@lru_cache(maxsize=1024)
def _latency_column(label: str) -> tuple[str, float | None, str, str | None]:
    """`P99 TTFT (ms):` → ("p99", 99.0, "ttft", "p99_ttft_ms"): latency_key and the row's
    column for it (None when the row has none)."""
    stat, pct, metric = latency_key(label)
    column = f"{stat}_{metric}_ms"
    return stat, pct, metric, column if column in fields_of(ServingRun) else None


# A figure with a character no figure has next to a digit (`!0240`, `tpot:!0`): garbled.
GARBLED_FIGURE = re.compile(rf"\d[{STRAY}]|[{STRAY}]\d")
STORAGE_RE = re.compile(r"^Storage(?:\s*\((?P<backend>[^)]*)\))?$", re.I)


def _cache_report_key(label: str, printed: str, extra: dict[str, Any]) -> tuple[str, str]:
    """(key, value as printed) of a line of SGLang's `Cache Hit Details` (`--cache-report`),
    by its result JSON's `cache_report` keys: the counts under `Total cached tokens:` are
    `device_cached_tokens` ..., the shares under `Cache hit rate: 50.0%` `device_cached_pct`
    ... (a storage tier's backend goes to ``extra`` as `storage_backend`)."""
    share = "cache_hit_rate_pct" in extra
    storage = STORAGE_RE.match(label.strip())
    if storage:
        if storage.group("backend"):
            extra["storage_backend"] = storage.group("backend")
        place = "storage"
    elif label.strip().lower() in ("device", "host"):
        place = label.strip().lower()
    elif label.strip().lower() == "cache hit rate":
        return "cache_hit_rate_pct", printed.strip().rstrip("%")
    else:
        return snake_name(label), printed
    if share:
        return f"{place}_cached_pct", printed.strip().rstrip("%")
    return f"{place}_cached_tokens", printed


def _items_past_foreign_lines(block: Block) -> tuple[list[tuple[str, Any, int]], list]:
    """The block's items, a line the grammar cannot read between its first and last line
    (a line a user typed, a shell prompt) skipped with a warning: it costs itself only.
    Item lines stay the block's own."""
    kept = list(range(1, len(block.lines) + 1))
    warnings: list[tuple[int, str]] = []
    while True:
        try:
            items = parse_block("\n".join(block.lines[k - 1] for k in kept))
        except BlockParseError as exc:
            if not exc.line or not 1 < exc.line < len(kept) or len(warnings) >= 8:
                raise
            k = kept.pop(exc.line - 1)
            warnings.append((block.line_start + k - 1, f"a line the result block does not "
                             f"hold, skipped: {block.lines[k - 1].strip()[:80]!r}"))
            continue
        return [(kind, payload, kept[line - 1]) for kind, payload, line in items], warnings


def build(block: Block) -> Parsed:
    items, warnings = _items_past_foreign_lines(block)
    fields_: dict[str, Any] = {}
    tolerance: dict[str, float] = {}
    extra: dict[str, Any] = {}
    stats: list[dict[str, Any]] = []
    section = None
    heading = None
    printed_backend = None
    positions: dict[int, float] = {}
    for kind, payload, line in items:
        try:
            if kind == "latency":
                label, printed = payload
                stat, pct, metric, column = _latency_column(label)
                value = to_number(printed, float)
                if value is None:
                    continue
                factor = 1000.0 if _in_seconds(label) else 1.0     # (GPUStack's `Latency(s)`)
                value *= factor
                stats.append({"metric": metric, "stat": stat, "percentile": pct, "value_ms": value})
                if column is not None:
                    fields_[column] = value
                    unit = half_unit(printed)
                    if unit is not None:
                        tolerance[column] = unit * factor
            elif kind == "field":
                column, printed = payload
                if column == "backend":
                    printed_backend = printed.strip() if printed else None
                    continue
                try:
                    value = fields_[column] = to_number(printed, _number_kind(column))
                    unit = half_unit(printed) if value is not None else None
                    if unit is not None:
                        tolerance[column] = unit
                except ValueError:
                    if column not in _TEXT_OK:
                        raise
                    extra[column] = printed  # SGLang's `Traffic request rate: trace`
                    # a number that does not read (a digit, or no word at all), not a word
                    if any(c.isdigit() for c in printed) or not any(c.isalpha() for c in printed):
                        warnings.append((block.line_start + line - 1,
                                         f"{column}: {printed.strip()!r} is not a number: "
                                         f"kept as printed"))
            elif kind == "section":
                section = payload
            else:
                label, printed = payload
                if not str(printed or "").strip():
                    # a heading of the lines after it (`Per-position acceptance (%):`), no value
                    heading = label
                    continue
                position = _POSITION_RE.match(label)
                if position and section and "speculative" in section.lower() \
                        or position and heading and "acceptance" in heading.lower():
                    positions[int(position.group(1))] = to_number(printed, float)
                    continue
                key = snake_name(label)
                if section and "cache hit" in section.lower():
                    key, printed = _cache_report_key(label, printed, extra)
                if key in extra and section:      # the same label in another section
                    key = f"{snake_name(section)}_{key}"
                try:
                    extra[key] = to_number(printed, float)
                except ValueError:
                    extra[key] = printed    # a word: `SLOs (ms): ttft:500 tpot:50`
                    if GARBLED_FIGURE.search(printed):
                        extra[key] = None
                        warnings.append((block.line_start + line - 1,
                                         f"{label}: {printed.strip()!r} has a garbled figure: "
                                         "stored as null"))
        except ValueError as exc:
            # A value that cannot be read costs that value only: null, with a warning.
            warnings.append((block.line_start + line - 1, f"{exc}: stored as null"))
    if positions:
        fields_["spec_decode_per_position_acceptance_rates"] = [
            positions[i] for i in sorted(positions)]
    row = serving_context(block.context, printed_backend=printed_backend)
    if printed_backend and not row.get("backend"):
        row["backend"] = printed_backend        # SGLang prints its --backend argument
    # What the block itself printed beats what the context said, `not set` included (a
    # command or Namespace further up belongs to an earlier run then).
    row.update(fields_)
    row["extra"] = extra or None
    row["format"] = FORMAT.name
    return Parsed(row=ServingRun(**row), children=_LATENCY_ROWS.validate_python(stats),
                  warnings=warnings, tolerance=tolerance)


FORMAT = BlockFormat(
    name="vllm_serving",
    table="serving_runs",
    description="Serving benchmark result block (vLLM benchmark_serving.py, vllm bench serve, "
                "SGLang bench_serving).",
    upstream=("vllm 0.4 – 0.11 benchmark_serving.py", "vllm bench serve", "sglang bench_serving"),
    markers=("Serving Benchmark Result",),
    start=re.compile(r"^\s*=+\s*Serving Benchmark Result\s*=+\s*$", re.I),
    end=re.compile(r"^\s*={10,}\s*$"),
    max_lines=120,
    build=build,
    commands=BENCH_COMMANDS,
    preamble=re.compile(r"^(Traffic request rate|Burstiness factor|Maximum request concurrency|"
                        r"Max request concurrency):\s*(.+)$", re.I),
    preamble_markers=("request rate", "burstiness", "request concurrency"),
    # `Label (unit):   value` lines and `----Section----` rules (SGLang's `-----TTFT-----`).
    # SGLang's text values too (`Backend: sglang`, `Max request concurrency: not set`).
    body_line=re.compile(r"^\s*(?:[A-Za-z][^:]{0,80}:[ \t]*[-+]?(?:\d[\d.,]*|inf|nan)"
                         r"(?:[eE][-+]?\d+)?\s*\S{0,12}|-{2,}[^\n]{0,80}?-{2,}"
                         r"|Backend:[ \t]+[\w.-]{1,40}|[A-Za-z][^:]{0,80}:[ \t]+not set)\s*$",
                         re.I),
    closing="=" * 50,
    # A percentile line: the block got as far as its latency sections.
    body_complete=re.compile(r"^\s*P\d{2}(?:\.\d+)?\s.*\(ms\):"),
)
