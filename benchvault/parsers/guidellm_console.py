"""GuideLLM's console report (``guidellm benchmark`` / ``guidellm run`` stdout) → rows.

Upstream printers: ``GenerativeBenchmarksConsole`` in ``benchmark/output.py`` (guidellm 0.2 -
0.3: ``Benchmarks Metadata``, ``Benchmarks Info``, ``Benchmarks Stats``) and
``GenerativeBenchmarkerConsole`` in ``benchmark/outputs/console.py`` over ``utils/console.py``
(0.4 - current: ``Run Summary Info``, ``Text Metrics Statistics``, ``Request Token
Statistics``, ``Request Latency Statistics``, ``Server Throughput Statistics``...).

Every table has one row per benchmark of the sweep, in the same order, so row *i* of each
table describes benchmark *i*: one ``serving_runs`` row per benchmark with the same columns the
same run's ``benchmarks.json`` gives (:mod:`.guidellm_report`), and one ``latency_stats`` row
per printed latency statistic.  Example (0.3)::

    Benchmarks Stats:
    ================================================================================
    Metadata   | Request Stats         || Out Tok/sec| Tot Tok/sec| Req Latency (sec)  |||
      Benchmark| Per Second| Concurrency|        mean|        mean|  mean|  median|   p99
    -----------|-----------|------------|------------|------------|------|--------|------
    synchronous|       1.55|        1.00|       198.1|       992.7|  0.64|    0.64|  0.69

gives ``request_throughput=1.55, concurrency=1.0, output_throughput=198.1,
total_token_throughput=992.7, mean_e2el_ms=640.0, max_concurrency=1`` and e2el mean, median and
p99 rows.  A column no field knows lands in ``extra`` as ``<table>: <group> / <name> / <unit>``.

What varies between versions, and how it is read:

* Units come from the headers (``Sec``, ``ms``, ``(sec)``, ``(ms)``); latencies are stored in ms.
  GuideLLM 0.2 labelled request latency ``Req Latency (ms)`` while printing seconds (0.3 says
  ``(sec)``), so request latency in ``Benchmarks Stats`` is always seconds.
* A cell ``mean ± x`` (``0.4 ± 0.004``) gives the column its mean.  Under a plain ``Mean`` (0.8+)
  x is the half-width of the mean's confidence interval: ``extra`` (``<metric>_mean_ci_margin_ms``,
  ``... / Mean CI Margin``), never a std.  Under ``Mean ± Std`` x is the std: a latency's as its
  ``std`` statistic (``std_<metric>_ms``), any other column's in ``extra`` (``... / Std``).
  0.8's ``*`` after a p95 its sample cannot bound is dropped: the figure is still the p95.
* The Benchmark column names the strategy: its kind (0.4 - 0.7: ``constant``), with what sets it
  after ``@`` in 0.2 - 0.3 and 0.8+ (``str(strategy)``): ``concurrent@8`` and ``throughput@64``
  give ``max_concurrency``, ``constant@6.50`` / ``poisson@6.50`` ``request_rate``, ``trace@1.00``
  the time scale (``extra``); ``throughput@unlimited`` has no cap.
* ``--`` is a missing value.  A cell that reads as nothing expected (``67!.0``) is left empty with
  a warning naming its line and text: one unreadable cell costs that cell, one unreadable table
  that table, never the other benchmarks.
* Header spans (``Mean ||||``: a name, then a zero-width cell per further column) fill every
  column they cover, so 0.6's merged ``Mean`` and its Concurrency-first order read by name, as
  do 0.5.2's ``Server Throughput Statistics (All Requests)`` and 0.7's TTFOT column (a
  ``ttfot`` statistic: serving_runs has no column for it).  A cell wider than its column is
  printed without padding (``| 1024.0| 1024.0|``): cells are what lies between the pipes.
* A table pasted indented (a list, an admonition) is read as if it were not; a table a terminal
  hard-wrapped at its width is put back together line by line (see :func:`unwrap`).
* A report printed twice in one paste is two sightings of the same runs (a table title seen
  again starts the second printing), which the warehouse recognises as one run seen twice.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from lark import Lark, Token, v_args

from ..schemas.models import INCOMPLETE, LatencyStat, ServingRun, fields_of
from . import grammar
from .base import Block, BlockFormat, BlockParseError, Context, Parsed, Problem, half_unit
from .grammar import ColumnTransformer, flatten
from .runcontext import infer_engine, model_in_prose, workload_in_prose
from ..reading.cmdline import parse_command

COMMANDS = {"guidellm": re.compile(r"\bguidellm\s+(?:benchmark|run)\b")}
TITLES = (r"Benchmarks (?:Metadata|Info|Stats):?|Run Summary Info"
          r"|(?:Text|Image|Video|Audio|Tool Call) Metrics Statistics(?: \(Completed Requests\))?"
          r"|Request (?:Token|Latency) Statistics(?: \(Completed Requests\))?"
          r"|Server Throughput Statistics(?: \(All Requests\))?")
# The icon the 0.4+ console prints before a title (ℹ), possibly mangled by a terminal, after a
# list marker when the report was pasted as a list item.
START = re.compile(r"^\s*(?:[-*+]\s+)?(?:[^\s|]{1,3}\s+)?(?:" + TITLES + r")\s*$")
TABLE_LINE = re.compile(r"^\s*(?:\||=|-{3})|\|")
METADATA_LINE = re.compile(r"^[ \t]{2,}\S")
# The last scrap of a table line a terminal wrapped, alone on its line (`99`, `||`, `==`).
SCRAP_LINE = re.compile(r"^\s*[-=]+\s*$|^\s*[\w.±]{1,8}\s*\|*\s*$")
# A line that starts a section of the report (what the grammar's titles read).
SECTION_TITLE = re.compile(
    r"^\s*(?:[-*+]\s+)?(?:[^\s|]{1,3}\s+)?(?:Benchmarks (?:Metadata|Info|Stats):?|Run Summary Info"
    r"|[A-Z][A-Za-z ]*? Statistics(?: \([A-Za-z ]+\))?)\s*$")
# A piece of a top/bottom rule (`====`, `|===|===|`) and of a header separator (`---|---`).
RULE_PIECE = re.compile(r"^[|=]*=[|=]*$|^\|$")
SEPARATOR_PIECE = re.compile(r"^[|-]*-[|-]*$")
# The last scrap of a wrapped table line: the end of its last cell (`99`, `p99`) or of its
# edge (`|`, `||`), of a rule or separator (`==`, `--`).
TAIL_PIECE = re.compile(r"^[^\s|]{0,16}\s*\|*$")
RULE_TAIL = re.compile(r"^[|=\-]+$")

# Printed latency group → (latency_stats metric, factor to ms when the header names no unit)
LATENCY_GROUPS = (
    (re.compile(r"^req(?:uest)?\s*latency", re.I), "e2el", 1000.0),
    (re.compile(r"^ttfot\b", re.I), "ttfot", 1.0),
    (re.compile(r"^ttft\b", re.I), "ttft", 1.0),
    (re.compile(r"^itl\b", re.I), "itl", 1.0),
    (re.compile(r"^tpot\b", re.I), "tpot", 1.0),
)
# A unit as a header prints it: a row of its own (`Sec`, `ms`) or in brackets (`TTFT (ms)`).
UNIT_FACTORS = {"sec": 1000.0, "secs": 1000.0, "s": 1000.0, "seconds": 1000.0,
                "ms": 1.0, "msec": 1.0, "us": 0.001, "µs": 0.001}
UNIT_IN_BRACKETS = re.compile(r"\(([^()]*)\)")
STAT_WORDS = {"mean": "mean", "avg": "mean", "average": "mean", "mdn": "median",
              "median": "median", "std": "std", "stdev": "std", "stddev": "std",
              "std dev": "std", "min": "min", "max": "max"}
MEAN_STD_HEADER = re.compile(r"^(?:mean|avg)\s*(?:±|Â±|\+/?-)\s*std(?:\s*dev)?$", re.I)
# (group, name[, unit]) of a column, lower case, → column of serving_runs
COLUMNS = {
    ("metadata", "duration (s)"): "duration",                        # 0.2 - 0.3 Info
    ("requests made", "comp"): "completed",
    ("requests made", "err"): "failed",
    ("prompt tok total", "comp"): "total_input_tokens",
    ("output tok total", "comp"): "total_output_tokens",
    ("request stats", "per second"): "request_throughput",           # 0.2 - 0.3 Stats
    ("request stats", "concurrency"): "concurrency",
    ("out tok/sec", "mean"): "output_throughput",
    ("tot tok/sec", "mean"): "total_token_throughput",
    ("requests made", "inc"): "incomplete",
    ("metadata", "start time"): "start_time",
    ("metadata", "end time"): "end_time",
    ("timings", "dur", "sec"): "duration",                           # 0.4+ Run Summary
    ("timings", "start"): "start_time",
    ("timings", "end"): "end_time",
    ("requests", "comp", "tot"): "completed",
    ("requests", "inc", "tot"): "incomplete",
    ("requests", "err", "tot"): "failed",
    ("input tokens", "comp", "tot"): "total_input_tokens",
    ("output tokens", "comp", "tot"): "total_output_tokens",
    ("requests", "per sec", "mean"): "request_throughput",           # 0.4+ Server Throughput
    ("goodput", "per sec", "mean"): "request_goodput",               # 0.8: requests within SLOs
    ("requests", "concurrency", "mean"): "concurrency",
    ("input tokens", "per sec", "mean"): "input_throughput",
    ("output tokens", "per sec", "mean"): "output_throughput",
    ("total tokens", "per sec", "mean"): "total_token_throughput",
}
# The others, named as benchmarks.json names them (its fields, snake_case): what no column
# holds but a user would still ask for by name.
EXTRA_NAMES = {
    ("timings", "warm", "sec"): "warmup_duration",
    ("timings", "cool", "sec"): "cooldown_duration",
    ("input tokens", "inc", "tot"): "incomplete_input_tokens",
    ("input tokens", "err", "tot"): "errored_input_tokens",
    ("output tokens", "inc", "tot"): "incomplete_output_tokens",
    ("output tokens", "err", "tot"): "errored_output_tokens",
    ("prompt tok total", "inc"): "incomplete_input_tokens",          # 0.2 - 0.3 Info
    ("prompt tok total", "err"): "errored_input_tokens",
    ("output tok total", "inc"): "incomplete_output_tokens",
    ("output tok total", "err"): "errored_output_tokens",
}
# 0.8's share of requests within the objectives, printed in percent (benchmarks.json:
# slo_attainment, a fraction)
EXTRA_NAMES_PERCENT = {("goodput", "attainment", "%"): "slo_attainment_pct"}
# Any other column: its header words in snake_case, the short forms said whole
# (`Input Tok / Per Req / Mdn` → `input_tokens_per_request_median`); a modality's table
# (`Text Metrics Statistics`) names its modality first.
HEADER_WORDS = {"tok": "tokens", "req": "request", "reqs": "requests", "mdn": "median",
                "avg": "mean", "comp": "completed", "inc": "incomplete", "err": "errored",
                "tot": "total", "sec": "second", "iter": "iteration", "prompt": "input",
                "std": "std", "stdev": "std", "dur": "duration", "warm": "warmup",
                "cool": "cooldown", "%": "pct"}
TEXT_COLUMNS = {"start_time", "end_time"}
STRATEGY_COLUMNS = {("metadata", "benchmark"), ("benchmark", "strategy"), ("strategy",),
                    ("benchmark",)}
# A strategy as printed: its kind, then (0.8: str(strategy)) what sets it after `@` -- the
# streams of `concurrent@8`, the cap of `throughput@64` (`throughput@unlimited`: none), the rate
# of `constant@6.50` / `poisson@6.50`, the time scale of `trace@1.00`.
STRATEGY_RE = re.compile(r"^(?P<kind>[a-z_]+)(?:@(?P<value>\d+(?:\.\d+)?|unlimited))?$")
# kind → where the number after `@` goes: a concurrency cap, or an extra by its benchmarks.json
# name; any other kind's number is its request rate
STRATEGY_VALUES = {"concurrent": "max_concurrency", "throughput": "max_concurrency",
                   "trace": "time_scale"}
WORKER_MODEL_RE = re.compile(r"backend_model='([^']*)'")
WORKER_TARGET_RE = re.compile(r"backend_target='([^']*)'")
WORKER_TYPE_RE = re.compile(r"backend_type='([^']*)'")
VALIDATED_MODEL_RE = re.compile(r"backend validated with model\s+(\S+)", re.I)
NO_VALUE = {"", "-", "--", "---", "—", "n/a", "none", "nan", "null"}
_NUMBER = r"[-+]?(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
# (0.8 marks a p95 its sample cannot bound with `*`: the figure is still the p95)
NUMBER_CELL = re.compile(r"^(?P<mean>" + _NUMBER + r")(?:\s*(?:±|Â±|\+/-|\+-)\s*"
                         r"(?P<std>" + _NUMBER + r"))?\*?$")
# Text a cell may hold besides numbers: a start/end time, a date, a word (a letter in it:
# a cell of symbols only is no label but a number that cannot be read).
TEXT_CELL = re.compile(r"^(?:\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?|\d{4}-\d{2}-\d{2}[T ]?[\d:.]*"
                       r"|[^\d]*[^\W\d_][^\d]*)$")
SERVING_FIELDS = fields_of(ServingRun)


def extra_name(title: str, key: tuple[str, ...]) -> str:
    """The snake_case name a column no field holds is kept under in ``extra``."""
    known = EXTRA_BY_KEY.get(_norm(key))
    if known is not None:
        return known
    words = [HEADER_WORDS.get(w, w) for part in key
             for w in re.findall(r"[a-z0-9]+|%", part.lower().replace("tok/", "tok per "))]
    modality = re.match(r"(Text|Image|Video|Audio|Tool Call) Metrics", title)
    if modality:
        words = [*modality.group(1).lower().split(), *words]
    return "_".join(words) or "value"


def _norm(key: tuple[str, ...]) -> tuple[str, ...]:
    """A header key as looked up: lower case, blanks ignored (a wrap may lose or add one), a
    `Mean ± Std` stat read as mean (its cells carry both)."""
    return tuple("mean" if MEAN_STD_HEADER.match(k.strip()) else re.sub(r"\s+", "", k.lower())
                 for k in key)


COLUMNS_BY_KEY = {_norm(k): v for k, v in COLUMNS.items()}
EXTRA_BY_KEY = {_norm(k): v for k, v in (EXTRA_NAMES | EXTRA_NAMES_PERCENT).items()}
STRATEGY_KEYS = {_norm(k) for k in STRATEGY_COLUMNS}


class CellError(ValueError):
    """A cell that does not read as what its column holds."""


@v_args(inline=True)
class ReportToSections(ColumnTransformer):
    """Tree → [("metadata", {label: value}) | ("table", title, line, [(headers, rows)])]."""

    def start(self, *sections):
        return [s for s in flatten(sections) if isinstance(s, tuple)]

    def metadata(self, _title, *items):
        values: dict[str, str] = {}
        last = None
        for kind, label, text in flatten(items):
            if kind == "line":
                last = label
                values[label] = text
            elif last is not None:      # the wrapped rest of the value above
                values[last] = f"{values[last].rstrip()} {text}"
        return ("metadata", values)

    def meta_line(self, label: Token, value: Token | None = None):
        return ("line", str(label).strip().rstrip(":").strip(), str(value or "").strip())

    def meta_more(self, text: Token):
        return ("more", None, str(text).strip())

    def table(self, title: Token, *parts):
        parts = [p for p in parts if isinstance(p, tuple)]
        return ("table", title_of(str(title)), title.line, parts)

    def part(self, _rule, *rows):
        header, values, seen_separator = [], [], False
        for item in rows:
            if isinstance(item, Token):       # the SEPARATOR between header and values
                seen_separator = True
            elif seen_separator:
                values.append(item)
            else:
                header.append(item[1])
        return (header, values)

    def row(self, *tokens: Token):
        # Between two pipes: a CELL, or nothing at all (a header span's zero-width cell).
        if len(tokens) > 2 and tokens[0].type == "CELL" and not tokens[0].strip() \
                and tokens[1].type == "PIPE" and tokens[-1].type == "PIPE":
            tokens = tokens[1:]               # a 0.4+ row indented more than its table
        cells = [""]
        for tok in tokens:
            if tok.type == "PIPE":
                cells.append("")
            else:
                cells[-1] = str(tok)
        if tokens[0].type == "PIPE":          # 0.4+ rows have outer pipes
            cells.pop(0)
            if tokens[-1].type == "PIPE" and len(cells) > 1:
                cells.pop()
        return (tokens[0].line, cells)

    def other(self, _text):
        return None

    def column(self, name, children):  # pragma: no cover - every rule has its method
        raise BlockParseError(f"unexpected {name} in GuideLLM report")


def title_of(text: str) -> str:
    """`ℹ Request Latency Statistics (Completed Requests)` → `Request Latency Statistics`."""
    match = re.search(TITLES, text)
    title = match.group(0) if match else re.sub(r"^\s*(?:[-*+]\s+)?(?:[^\s|]{1,3}\s+)?", "",
                                                  text).strip()
    return re.sub(r"\s*\((?:Completed|All) Requests\)|:$", "", title)


def _parser() -> Lark:
    return grammar.in_parser("guidellm_console.lark", __file__, ReportToSections)


def parse_report(text: str) -> list[tuple]:
    return grammar.parse(_parser(), text if text.endswith("\n") else text + "\n",
                         "GuideLLM report")


def header_keys(header_rows: list[list[str]]) -> list[tuple[str, ...]]:
    """Each column's header labels, top row first, with group spans filled in.  A group name
    is followed by a zero-width cell per further column it spans."""
    width = max((len(r) for r in header_rows), default=0)
    labels: list[list[str]] = [[] for _ in range(width)]
    for cells in header_rows:
        current = ""
        for i in range(width):
            cell = cells[i] if i < len(cells) else ""
            if cell != "":
                current = " ".join(cell.split())
            labels[i].append(current)
    return [tuple(x for x in column if x) for column in labels]


def read_cell(text: str) -> tuple[float, float | None, str, str | None] | None:
    """(value, std, printed value, printed std) of a number cell, ``mean ± std`` too; None for
    a missing value (`--`); CellError for anything else."""
    stripped = " ".join(text.split())
    if stripped.lower() in NO_VALUE:
        return None
    match = NUMBER_CELL.match(stripped)
    if match is None:
        raise CellError(f"cannot read {stripped!r}")
    mean, std = match.group("mean"), match.group("std")
    value = float(mean.replace(",", ""))
    spread = float(std.replace(",", "")) if std else None
    if not math.isfinite(value) or spread is not None and not math.isfinite(spread):
        raise CellError(f"cannot read {stripped!r}")
    return value, spread, mean, std


def _unit_factor(key: tuple[str, ...]) -> float | None:
    for part in key:
        for word in UNIT_IN_BRACKETS.findall(part) or [part]:
            factor = UNIT_FACTORS.get(word.strip().lower())
            if factor is not None:
                return factor
    return None


def _latency(key: tuple[str, ...], title: str = ""
             ) -> tuple[str, float, str | None, float | None] | None:
    """(metric, factor to ms, stat, percentile) of a latency column, else None.  The stat is
    None when the header names none (a ``mean ± std`` cell then says mean)."""
    if not key:
        return None
    for pattern, metric, default in LATENCY_GROUPS:
        if pattern.match(key[0]):
            factor = _unit_factor(key) or default
            if metric == "e2el" and title == "Benchmarks Stats":
                factor = 1000.0          # seconds, whatever 0.2's `(ms)` says
            word = " ".join(key[-1].lower().split()) if len(key) > 1 else ""
            if word in STAT_WORDS:
                return metric, factor, STAT_WORDS[word], None
            if MEAN_STD_HEADER.match(word):
                return metric, factor, "mean", None
            pct = re.fullmatch(r"p(\d+(?:\.\d+)?)", word)
            if pct:
                value = float(pct.group(1))
                name = "p" + (str(int(value)) if value == int(value) else str(value))
                return metric, factor, name, value
            return metric, factor, None, None
    return None


def _std_name(key: tuple[str, ...]) -> tuple[str, ...]:
    """The key a column's std is kept under: its stat word replaced by `Std` -- or, under a
    plain `Mean` (0.8: `{mean} ± {margin}`), the half-width of the mean's confidence interval,
    no std at all."""
    last = " ".join(key[-1].lower().split()) if key else ""
    if _margin_of_mean(key):
        return (*key[:-1], "Mean CI Margin")
    if last in STAT_WORDS or MEAN_STD_HEADER.match(last):
        return (*key[:-1], "Std")
    return (*key, "Std")


def _margin_of_mean(key: tuple[str, ...]) -> bool:
    """A `± x` under a column headed `Mean` alone is the mean's margin (GuideLLM 0.8's
    _format_mean_with_margin); under `Mean ± Std`, or no stat, a std (0.1)."""
    return bool(key) and " ".join(key[-1].lower().split()) in ("mean", "avg")


class Benchmark:
    """What the tables say about benchmark *i*."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self.extra: dict[str, Any] = {}
        self.tolerance: dict[str, float] = {}
        self.stats: dict[tuple[str, str], LatencyStat] = {}
        self.lines: list[int] = []
        self.warnings: list[tuple[int, str]] = []

    def cell(self, title: str, key: tuple[str, ...], text: str) -> None:
        """Read one cell; a CellError leaves this benchmark's other cells as they are."""
        lowered = _norm(key)
        if lowered in STRATEGY_KEYS:
            self.strategy(" ".join(text.split()))
            return
        latency = _latency(key, title)
        if latency is not None:
            self.latency(title, key, text, *latency)
            return
        column = COLUMNS_BY_KEY.get(lowered)
        if column in TEXT_COLUMNS:               # a start or end time, as printed
            stripped = " ".join(text.split())
            if stripped.lower() not in NO_VALUE:
                if not TEXT_CELL.match(stripped):
                    raise CellError(f"cannot read {stripped!r}")
                self.values[column] = stripped
            return
        if column is not None:
            number = read_cell(text)
            if number is not None:
                value, std, printed, printed_std = number
                self.set(column, value, printed)
                if std is not None:
                    self.extra[extra_name(title, _std_name(key))] = std
            return
        name = extra_name(title, key)
        stripped = " ".join(text.split())
        if stripped.lower() in NO_VALUE:
            return
        try:
            number = read_cell(stripped)
        except CellError:
            if not TEXT_CELL.match(stripped):
                raise
            self.extra[name] = stripped            # a start/end time, a label
            return
        assert number is not None
        value, std = number[0], number[1]
        self.extra[name] = int(value) if name in EXTRA_NAMES.values() and value == int(value) \
            else value
        if std is not None:
            self.extra[extra_name(title, _std_name(key))] = std

    def latency(self, title: str, key: tuple[str, ...], text: str, metric: str, factor: float,
                stat: str | None, pct: float | None) -> None:
        number = read_cell(text)
        if number is None:
            return
        value, std, printed, printed_std = number
        if stat is None:
            if std is None:                    # a bare number under no stat: kept by its name
                self.extra[extra_name(title, key)] = value
                return
            stat = "mean"
        self.stat(metric, stat, pct, value, printed, factor)
        if std is not None and _margin_of_mean(key):
            self.extra[f"{metric}_mean_ci_margin_ms"] = round(std * factor, 9)
        elif std is not None:
            self.stat(metric, "std", None, std, printed_std, factor)

    def stat(self, metric: str, stat: str, pct: float | None, value: float, printed: str | None,
             factor: float) -> None:
        value_ms = round(value * factor, 9)       # 2.26 s is 2260 ms, not 2259.9999...
        self.stats[(metric, stat)] = LatencyStat(metric=metric, stat=stat, percentile=pct,
                                                 value_ms=value_ms)
        column = f"{stat}_{metric}_ms"
        if column in SERVING_FIELDS:
            self.set(column, value_ms, printed or "", factor)

    def set(self, column: str, value: float, printed: str, factor: float = 1.0) -> None:
        annotation = SERVING_FIELDS[column].annotation
        if annotation in (int, int | None):
            if value != int(value):
                raise CellError(f"{printed.strip()!r} is not a whole number")
            value = int(value)
        self.values[column] = value
        unit = half_unit(printed)
        if unit is not None:
            self.tolerance[column] = unit * factor

    def strategy(self, text: str) -> None:
        match = STRATEGY_RE.match(text)
        kind = match.group("kind") if match else text.partition("@")[0].strip()
        if kind:
            self.extra.setdefault("strategy", kind)
        if kind == "synchronous":
            self.values["max_concurrency"] = 1
        number = match.group("value") if match else None
        if number and number != "unlimited":
            column = STRATEGY_VALUES.get(kind, "request_rate")
            if column == "max_concurrency":
                self.values[column] = int(float(number))
            elif column in SERVING_FIELDS:
                self.values[column] = float(number)
                self.tolerance[column] = half_unit(number) or 0.0
            else:
                self.extra[column] = float(number)
        if kind:
            self.extra.setdefault("label", f"{kind}@{match.group('value')}"   # (as printed)
                                  if match and match.group("value") else kind)
        if match is None and "@" in text:       # `constant@1!.5`: the kind without its value
            raise CellError(f"cannot read the strategy {text!r}")


@dataclass
class Printing:
    """One printing of the report: its metadata and a Benchmark per row of its tables."""

    metadata: dict[str, str] = field(default_factory=dict)
    benchmarks: list[Benchmark] = field(default_factory=list)
    titles: set[str] = field(default_factory=set)
    span: list[int] = field(default_factory=list)     # first and last line (of the block)

    def holds(self, first: int, lines: list[str]) -> None:
        """This printing goes on over ``lines``, the first at ``first`` in the block."""
        last = first + max((i for i, ln in enumerate(lines) if ln.strip()), default=0)
        self.span = [min(self.span[0], first), max(self.span[1], last)] if self.span \
            else [first, last]


def run_context(context: Context, metadata: dict[str, str]) -> dict[str, Any]:
    """Model, backend and target from the report's metadata, the backend line printed before
    it (0.4+) or the pasted `guidellm benchmark` command."""
    found: dict[str, Any] = {}
    worker = metadata.get("Worker", "")
    for column, pattern in (("model", WORKER_MODEL_RE), ("backend", WORKER_TYPE_RE),
                            ("target", WORKER_TARGET_RE)):
        match = pattern.search(worker)
        if match:
            found[column] = match.group(1)
    for key, value in context.printed.items():
        match = VALIDATED_MODEL_RE.search(f"{key} {value}")
        if match:
            found.setdefault("model", match.group(1))
    seen = context.commands.get("guidellm")
    command = parse_command(seen.text, COMMANDS["guidellm"]) if seen is not None else None
    if command is not None:
        found["command"] = command.text
        args = command.args
        for column, flags in (("model", ("model",)), ("target", ("target",)),
                              ("backend", ("backend", "backend_type"))):
            for flag in flags:
                if isinstance(args.get(flag), str):
                    found.setdefault(column, args[flag])
        data = args.get("data")
        for column, key in (("random_input_len", "prompt_tokens"),
                            ("random_output_len", "output_tokens")):
            # (`--data "prompt_tokens=256,output_tokens=128"`, or the same as JSON)
            if isinstance(data, str) and (match := re.search(rf"\b{key}\W{{1,3}}(\d+)", data)):
                found[column] = int(match.group(1))
    if metadata.get("Run id"):
        found["run_id"] = metadata["Run id"]
    # (0.2 - 0.3: `Request Loader:... data='prompt_tokens=128,output_tokens=128'`)
    loader = metadata.get("Request Loader", "")
    for column, key in (("random_input_len", "prompt_tokens"),
                        ("random_output_len", "output_tokens")):
        if match := re.search(rf"\bdata=.*?\b{key}\W{{1,3}}(\d+)", loader):
            found.setdefault(column, int(match.group(1)))
    if "model" not in found and (named := model_in_prose((*context.section, *context.prose))):
        found["model"] = named          # (`### Qwen2.5:14B` over the table)
    # (`### Raw Test 1: 128 prompt / 128 output tokens`: a workload the note states once)
    for key, value in workload_in_prose((*context.section, *context.prose)).items():
        if key in ("random_input_len", "random_output_len"):
            found.setdefault(key, value)
    return found


def sections_of(lines: list[str]) -> list[tuple[int, list[str]]]:
    """The block cut at each title line: (index of its first line, its lines)."""
    out: list[tuple[int, list[str]]] = []
    for index, line in enumerate(lines):
        if SECTION_TITLE.match(line) or not out:
            out.append((index, []))
        out[-1][1].append(line)
    return out


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def dedent(lines: list[str]) -> list[str]:
    """A section's lines with the indentation its table was pasted with taken off (a table in
    a list item or an admonition); the title keeps its own."""
    table = [ln for ln in lines[1:] if "|" in ln or RULE_PIECE.match(ln.strip())]
    if not table:
        return lines
    cut = min(_indent(ln) for ln in table)
    if cut == 0:
        return lines
    return lines[:1] + [ln[cut:] if ln[:cut].isspace() else ln.lstrip() for ln in lines[1:]]


def unwrap(lines: list[str]) -> tuple[list[str], list[int]]:
    """A section's table lines a terminal hard-wrapped at its width put back together, and
    for each line the index of its first piece.

    A wrapped table shows it in its top rule: a full-width piece of `=` and the rest of the rule
    on the next lines.  Its first piece gives the terminal's width, all pieces the table's.
    Every line of a table has as many `|` as its header separator (0.4+ an edge on each side,
    0.2 - 0.3 none), so a line goes on until it has them all, and a 0.2 line then takes the
    rest of its last cell (`99` of `p99`).  A piece narrower than the terminal lost the blanks
    it ended with (they are put back); one of full width goes on exactly where it stopped,
    even inside a number: within a table two values always have a `|` between them, so the
    joint is not a guess.
    """
    index = next((i for i, ln in enumerate(lines) if RULE_PIECE.match(ln.strip())), None)
    if index is None or index + 1 >= len(lines):
        return lines, list(range(len(lines)))
    first = lines[index].rstrip()
    end = index + 1
    while end < len(lines) and RULE_PIECE.match(lines[end].strip()) \
            and len(lines[end].rstrip()) <= len(first):
        end += 1
    after = lines[end].rstrip() if end < len(lines) else ""
    if end == index + 1 or len(after) > len(first):
        return lines, list(range(len(lines)))
    shape = Wrap(width=len(first), total=sum(len(ln.rstrip()) for ln in lines[index:end]),
                 pipes=_separator_pipes(lines, end), edged=first.lstrip().startswith("|"))
    out, origin = lines[:index], list(range(index))
    i = index
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if not stripped or ("|" not in line and not RULE_PIECE.match(stripped)
                            and not SEPARATOR_PIECE.match(stripped)):
            out.append(line)                  # prose between the tables
            origin.append(i)
            i += 1
            continue
        joined, start = line.rstrip(), i
        i += 1
        while i < len(lines) and lines[i].strip() and not SECTION_TITLE.match(lines[i]) \
                and shape.goes_on(joined, lines[i].rstrip(), i - start):
            joined = joined.ljust(shape.width * (i - start)) + lines[i].rstrip()
            i += 1
        out.append(joined)
        origin.append(start)
    return out, origin


def _separator_pipes(lines: list[str], start: int) -> int | None:
    """How many `|` the table's header separator (`---|---`, maybe in pieces) holds."""
    for i in range(start, len(lines)):
        if SEPARATOR_PIECE.match(lines[i].strip()):
            j = i + 1
            while j < len(lines) and re.fullmatch(r"[|-]+", lines[j].strip()):
                j += 1
            return sum(ln.count("|") for ln in lines[i:j])
    return None


@dataclass(frozen=True)
class Wrap:
    """A table a terminal wrapped: its width, the table's, the `|` a line of it holds."""

    width: int
    total: int
    pipes: int | None
    edged: bool

    def goes_on(self, joined: str, piece: str, pieces: int) -> bool:
        """Is ``piece`` more of the table line ``joined`` (``pieces`` long so far)?"""
        slack = max(4, self.total // 25)      # a table typed by hand, a cell too wide
        if len(joined) >= self.total + slack:
            return False
        have = joined.count("|")
        if self.pipes is None or not have:     # a 0.2 `====` rule: by its width
            tail = RULE_TAIL if RULE_TAIL.match(joined.strip()) else TAIL_PIECE
            return len(joined) < self.total - slack or (
                self.width * pieces + len(piece) <= self.total + slack
                and tail.match(piece.strip()) is not None)
        if have < self.pipes:
            return True
        # All its `|`: a 0.4+ line is whole; a 0.2 one may lack the rest of its last cell.
        return not self.edged and self.width * pieces + len(piece) <= self.total + slack \
            and TAIL_PIECE.match(piece.strip()) is not None and "|" not in piece \
            and not piece.strip().startswith("=")


def build(block: Block) -> list[Parsed | Problem]:
    printings: list[Printing] = [Printing()]
    problems: list[Problem] = []
    cut = cut_at(block)
    report = sections_of(block.lines)
    for number, (first, raw) in enumerate(report, 1):
        kept = list(range(len(raw)))
        dedented = dedent(raw)
        foreign = foreign_lines(dedented)
        if foreign:
            for i in sorted(foreign):
                problems.append(Problem(block.line_start + first + i, "not a line of the GuideLLM "
                                        "report: skipped", raw[i]))
            kept = [i for i in kept if i not in foreign]
            dedented = [dedented[i] for i in kept]
        lines, origin = unwrap(dedented)
        where = _file_lines(block.line_start + first, [kept[o] for o in origin])
        try:
            sections = parse_report("\n".join(lines))
        except BlockParseError as exc:
            problems.append(Problem(where(exc.line), exc.reason, "\n".join(raw)))
            continue
        for section in sections:
            printing = printings[-1]
            if section[0] == "metadata":
                if printing.titles:           # the report printed again
                    printings.append(printing := Printing())
                printing.metadata.update(section[1])
                printing.holds(first, raw)
                continue
            _, title, _, parts = section
            if title in printing.titles:
                printings.append(printing := Printing(metadata=dict(printing.metadata)))
            printing.titles.add(title)
            printing.holds(first, raw)
            for k, (header_rows, rows) in enumerate(parts, 1):
                # the row the file stops in: the last of the last table of a report cut short
                last = cut is not None and number == len(report) and section is sections[-1] \
                    and k == len(parts)
                read_table(printing, title, header_rows, rows, where, problems, last)
    if cut is not None:
        for printing in printings[-1:]:
            for bench in printing.benchmarks:
                # (`incomplete` may already be the count of incomplete requests it printed)
                bench.extra.setdefault(INCOMPLETE, True)
        problems.append(Problem(cut, "the GuideLLM report is cut short here: the values it "
                                     "printed are kept, marked incomplete"))
    if not any(p.benchmarks for p in printings):
        if problems:
            raise BlockParseError(problems[0].reason, problems[0].line - block.line_start + 1)
        raise BlockParseError("GuideLLM report without a benchmark row")
    out: list[Parsed | Problem] = list(problems)
    printed = [p for p in printings if p.benchmarks]
    for printing in printed:
        context = run_context(block.context, printing.metadata)
        # Printed twice: each printing is a sighting of its own lines.
        span = printing.span if len(printed) > 1 else None
        for bench in printing.benchmarks:
            out.append(_parsed(block, context, bench, span))
    return out


# GuideLLM 0.2 - 0.3 print these tables, in this order, after the metadata.
OLD_TABLES = ("Benchmarks Info", "Benchmarks Stats")


def cut_at(block: Block) -> int | None:
    """The line after which a report ends before it printed everything (a paste cut short):
    its last table has no closing rule, or a 0.2 - 0.3 report stops before its last table."""
    lines = block.lines
    last = len(lines) - 1
    while last > 0 and not lines[last].strip():
        last -= 1
    sections = sections_of(lines[:last + 1])
    first, section = sections[-1]
    title = section[0].strip()
    # its table's lines (prose or a list item's text after the table is not the table)
    table = [ln for ln in section[1:] if "|" in ln or RULE_PIECE.match(ln.strip())]
    if table or "Metadata" not in title and not any(ln.strip() for ln in section[1:]):
        if not table or not RULE_PIECE.match(table[-1].strip()) or sum(
                1 for ln in table if RULE_PIECE.match(ln.strip())) < 2:
            return block.line_start + last
    titles = [sec[0].strip().rstrip(":") for _, sec in sections]
    titles = [t.split(None, 1)[1] if t[:1] in "-*+" else t for t in titles]
    if any(t.endswith("Benchmarks Metadata") or t.endswith("Benchmarks Info") for t in titles) \
            and not any(t.endswith(OLD_TABLES[-1]) for t in titles):
        return block.line_start + last
    return None


def _file_lines(start: int, origin: list[int]) -> Callable[[int | None], int]:
    """Line (1-based, of a section's text as parsed) → line of the file, the section's first
    line being ``start`` and ``origin`` where each parsed line began in it."""
    def where(line: int | None) -> int:
        return start + origin[min(max((line or 1) - 1, 0), len(origin) - 1)]
    return where


def read_table(printing: Printing, title: str, header_rows: list[list[str]],
               rows: list[tuple[int, list[str]]], where: Callable[[int | None], int],
               problems: list[Problem], cut: bool = False) -> None:
    """One part of a table (a header, its rows) into the printing's benchmarks, row i into
    benchmark i.  ``cut``: the file stops in the last row, which keeps the cells it printed
    whole (all but its last, which may stop mid-value)."""
    keys = header_keys(header_rows)
    if not keys or not any(k.lower() in ("benchmark", "metadata", "strategy")
                           for k in keys[0]):
        line = rows[0][0] if rows else None
        problems.append(Problem(where(line), f"{title}: a table without a Benchmark column"))
        return
    index = 0
    for line, cells in rows:
        if not "".join(cells).strip():
            continue
        index += 1
        if cut and (line, cells) == rows[-1] and 1 < len(cells) < len(keys):
            problems.append(Problem(where(line), f"{title}: the row stops after {len(cells)} of "
                                                 f"{len(keys)} cells: the first "
                                                 f"{len(cells) - 1} read", "|".join(cells)))
            cells = cells[:-1] + [""] * (len(keys) - len(cells) + 1)
        elif len(cells) != len(keys):
            problems.append(Problem(where(line), f"{title}: {len(cells)} cells where the "
                                                 f"header has {len(keys)}", "|".join(cells)))
            continue
        while len(printing.benchmarks) < index:
            printing.benchmarks.append(Benchmark())
        bench = printing.benchmarks[index - 1]
        bench.lines.append(where(line))
        for key, text in zip(keys, cells):
            try:
                bench.cell(title, key, text)
            except CellError as exc:
                bench.warnings.append((where(line), f"{title}: {' / '.join(key)}: {exc}: "
                                                    f"left empty"))


def _parsed(block: Block, context: dict[str, Any], bench: Benchmark,
            span: list[int] | None) -> Parsed:
    extra = dict(bench.extra)
    label = extra.pop("label", None)
    if context.get("run_id"):
        extra["run_id"] = context["run_id"]
    model = context.get("model")
    lengths = {k: context[k] for k in ("random_input_len", "random_output_len")
               if k in context and k not in bench.values}
    row = ServingRun(
        **bench.values, **lengths, model=model, backend=context.get("backend"),
        base_url=context.get("target"),         # (GuideLLM's target: the server's URL)
        command=context.get("command"), extra=extra or None,
        tags=block.context.tags or None, format=FORMAT.name,
        section=block.context.section_text, label=label,
        engine=infer_engine(block.context, model, None, None),
        **({"line_start": block.line_start + span[0], "line_end": block.line_start + span[1],
            "raw_text": "\n".join(block.lines[span[0]:span[1] + 1])} if span else {}))
    return Parsed(row=row, children=list(bench.stats.values()), warnings=bench.warnings,
                  tolerance=bench.tolerance)


def continues(line: str) -> bool:
    """Blank lines, table lines, titles and the indented metadata lines belong to the report,
    and so does the last scrap of a table line a terminal wrapped (`99`, `--`)."""
    return (not line.strip() or TABLE_LINE.search(line) is not None or START.match(line)
            is not None or METADATA_LINE.match(line) is not None
            or SCRAP_LINE.match(line) is not None)


def resumes(lines: list[str], line: str) -> bool:
    """After a line that is not the report's (typed into the paste, a prompt), the report goes
    on at a table line inside a table, a rule or a title, or an indented metadata line right
    after metadata lines."""
    if not line.strip():
        return False
    last = next((ln for ln in reversed(lines) if ln.strip()), "")
    if START.match(line):
        return not line.strip().startswith("Benchmarks Metadata")   # a report again
    if METADATA_LINE.match(line) and "|" not in line:
        return METADATA_LINE.match(last) is not None and "|" not in last
    if TABLE_LINE.search(line):
        # not after a table's closing rule (a markdown table after the report)
        return not (RULE_PIECE.match(last.strip()) and not RULE_PIECE.match(line.strip())
                    and not SEPARATOR_PIECE.match(line.strip()))
    return False


def foreign_lines(lines: list[str]) -> set[int]:
    """The lines of a section (title first, as dedented) that are none of its own: a line
    without `|` inside a table (up to its last rule), an unindented line among metadata."""
    if len(lines) < 3:
        return set()
    rules = [i for i, ln in enumerate(lines) if RULE_PIECE.match(ln.strip())]
    if rules:
        return {i for i in range(1, rules[-1]) if lines[i].strip() and "|" not in lines[i]
                and not RULE_PIECE.match(lines[i].strip())
                and not SEPARATOR_PIECE.match(lines[i].strip())
                and not SCRAP_LINE.match(lines[i])}
    if "Metadata" not in lines[0]:
        return set()
    meta = [i for i, ln in enumerate(lines) if METADATA_LINE.match(ln)]
    return {i for i in range(1, meta[-1]) if lines[i].strip()
            and not METADATA_LINE.match(lines[i])} if meta else set()


FORMAT = BlockFormat(
    name="guidellm_console",
    table="serving_runs",
    description="GuideLLM console report (guidellm benchmark / run stdout): one serving run "
                "per benchmark of the sweep, every printed statistic kept.",
    upstream=("guidellm 0.2 - 0.3 Benchmarks Metadata / Info / Stats",
              "guidellm 0.4 - current Run Summary Info, ... Statistics tables"),
    markers=("Benchmarks Metadata", "Benchmarks Info", "Benchmarks Stats", "Run Summary Info",
             "Statistics"),
    start=START,
    end=None,
    max_lines=2000,
    build=build,
    commands=COMMANDS,
    # Bounded: a 1 MB line must not cost a quadratic backtrack.
    preamble=re.compile(r"^(?:\S{1,8}\s{1,4})?\w{1,64} (backend validated with model)\s+(\S+)"),
    preamble_markers=("validated with model",),
    continues=continues,
    restarts=False,
    resumes=resumes,
)
