"""GuideLLM's console report (``guidellm benchmark`` / ``guidellm run`` stdout) → rows.

Upstream printers: ``GenerativeBenchmarksConsole`` in ``benchmark/output.py`` (guidellm 0.2 -
0.3: ``Benchmarks Metadata``, ``Benchmarks Info``, ``Benchmarks Stats``) and
``GenerativeBenchmarkerConsole`` in ``benchmark/outputs/console.py`` over ``utils/console.py``
(0.4 - current: ``Run Summary Info``, ``Text Metrics Statistics``, ``Request Token
Statistics``, ``Request Latency Statistics``, ``Server Throughput Statistics``...).

Every table has one row per benchmark of the sweep, in the same order, so row *i* of each
table describes benchmark *i*: one ``serving_runs`` row per benchmark with the same columns the
same run's ``benchmarks.json`` gives (:mod:`.guidellm_report`), and one ``latency_stats`` row
per printed latency statistic (request latency is printed in seconds, stored as ``e2el`` in ms;
0.2.0 labelled it ``(ms)`` while printing seconds).  Example (0.3)::

    Benchmarks Stats:
    ================================================================================
    Metadata   | Request Stats         || Out Tok/sec| Tot Tok/sec| Req Latency (sec)  |||
      Benchmark| Per Second| Concurrency|        mean|        mean|  mean|  median|   p99
    -----------|-----------|------------|------------|------------|------|--------|------
    synchronous|       1.55|        1.00|       198.1|       992.7|  0.64|    0.64|  0.69

gives ``request_throughput=1.55, concurrency=1.0, output_throughput=198.1,
total_token_throughput=992.7, mean_e2el_ms=640.0, max_concurrency=1`` and e2el mean, median and
p99 rows.  A column no field knows lands in ``extra`` as ``<table>: <group> / <name> / <unit>``.
"""

from __future__ import annotations

import re
from typing import Any

from lark import Lark, Token, v_args

from ..schemas.models import LatencyStat, ServingRun, fields_of
from . import grammar
from .base import Block, BlockFormat, BlockParseError, Context, Parsed, Problem, half_unit
from .grammar import ColumnTransformer, flatten
from .runcontext import infer_engine
from ..reading.cmdline import parse_command

COMMANDS = {"guidellm": re.compile(r"\bguidellm\s+(?:benchmark|run)\b")}
TITLES = (r"Benchmarks (?:Metadata|Info|Stats):?|Run Summary Info"
          r"|(?:Text|Image|Video|Audio|Tool Call) Metrics Statistics(?: \(Completed Requests\))?"
          r"|Request (?:Token|Latency) Statistics(?: \(Completed Requests\))?"
          r"|Server Throughput Statistics(?: \(All Requests\))?")
# The icon the 0.4+ console prints before a title (ℹ), possibly mangled by a terminal.
START = re.compile(r"^\s*(?:[^\s|]{1,3}\s+)?(?:" + TITLES + r")\s*$")
TABLE_LINE = re.compile(r"^\s*(?:\||=|-{3})|\|")
METADATA_LINE = re.compile(r"^[ \t]{2,}\S")

# Printed latency group → (latency_stats metric, factor to ms)
LATENCY_GROUPS = (
    (re.compile(r"^req(?:uest)? latency", re.I), "e2el", 1000.0),
    (re.compile(r"^ttfot\b", re.I), "ttfot", 1.0),
    (re.compile(r"^ttft\b", re.I), "ttft", 1.0),
    (re.compile(r"^itl\b", re.I), "itl", 1.0),
    (re.compile(r"^tpot\b", re.I), "tpot", 1.0),
)
STAT_WORDS = {"mean": "mean", "mdn": "median", "median": "median", "std": "std", "min": "min",
              "max": "max"}
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
    ("timings", "dur", "sec"): "duration",                           # 0.4+ Run Summary
    ("input tokens", "comp", "tot"): "total_input_tokens",
    ("output tokens", "comp", "tot"): "total_output_tokens",
    ("requests", "per sec", "mean"): "request_throughput",           # 0.4+ Server Throughput
    ("requests", "concurrency", "mean"): "concurrency",
    ("input tokens", "per sec", "mean"): "input_throughput",
    ("output tokens", "per sec", "mean"): "output_throughput",
    ("total tokens", "per sec", "mean"): "total_token_throughput",
}
# Said the same way as benchmarks.json's reader says them (guidellm_report.bench_to_parsed).
EXTRA_NAMES = {("requests made", "inc"): "incomplete"}
STRATEGY_COLUMNS = {("metadata", "benchmark"), ("benchmark", "strategy")}
STRATEGY_RE = re.compile(r"^(?P<kind>[a-z_]+)(?:@(?P<value>[\d.]+))?$")
WORKER_MODEL_RE = re.compile(r"backend_model='([^']*)'")
WORKER_TARGET_RE = re.compile(r"backend_target='([^']*)'")
WORKER_TYPE_RE = re.compile(r"backend_type='([^']*)'")
VALIDATED_MODEL_RE = re.compile(r"backend validated with model\s+(\S+)", re.I)
NO_VALUE = {"", "--", "N/A", "None", "nan"}
SERVING_FIELDS = fields_of(ServingRun)


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
    title = match.group(0) if match else text.strip()
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
                current = cell.strip()
            labels[i].append(current)
    return [tuple(x for x in column if x) for column in labels]


def _number(text: str) -> float | None:
    text = text.strip()
    if text in NO_VALUE:
        return None
    return float(text)


def _latency(key: tuple[str, ...]) -> tuple[str, float, str, float | None] | None:
    """(metric, factor to ms, stat, percentile) of a latency column, else None."""
    if not key:
        return None
    for pattern, metric, factor in LATENCY_GROUPS:
        if pattern.match(key[0]):
            word = key[-1].lower()
            if word in STAT_WORDS:
                return metric, factor, STAT_WORDS[word], None
            pct = re.fullmatch(r"p(\d+(?:\.\d+)?)", word)
            if pct:
                value = float(pct.group(1))
                name = "p" + (str(int(value)) if value == int(value) else str(value))
                return metric, factor, name, value
    return None


class Benchmark:
    """What the tables say about benchmark *i*."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self.extra: dict[str, Any] = {}
        self.tolerance: dict[str, float] = {}
        self.stats: dict[tuple[str, str], LatencyStat] = {}
        self.lines: list[int] = []

    def cell(self, title: str, key: tuple[str, ...], text: str) -> None:
        lowered = tuple(k.lower() for k in key)
        if lowered in STRATEGY_COLUMNS:
            self.strategy(text.strip())
            return
        latency = _latency(key)
        value = _number(text) if latency or lowered in COLUMNS else None
        if latency is not None:
            metric, factor, stat, pct = latency
            if value is None:
                return
            value_ms = round(value * factor, 9)       # 2.26 s is 2260 ms, not 2259.9999...
            self.stats[(metric, stat)] = LatencyStat(metric=metric, stat=stat, percentile=pct,
                                                     value_ms=value_ms)
            column = f"{stat}_{metric}_ms"
            if column in SERVING_FIELDS:
                self.set(column, value_ms, text, factor)
            return
        column = COLUMNS.get(lowered)
        if column is not None:
            if value is not None:
                self.set(column, value, text)
            return
        name = EXTRA_NAMES.get(lowered) or f"{title}: {' / '.join(key)}"
        stripped = text.strip()
        if stripped in NO_VALUE:
            return
        try:
            number = float(stripped)
            self.extra[name] = int(number) if name in EXTRA_NAMES.values() else number
        except ValueError:
            self.extra[name] = stripped            # a start/end time, a label

    def set(self, column: str, value: float, printed: str, factor: float = 1.0) -> None:
        annotation = SERVING_FIELDS[column].annotation
        if annotation in (int, int | None):
            if value != int(value):
                raise ValueError(f"{column}: {printed.strip()!r} is not a whole number")
            value = int(value)
        self.values[column] = value
        unit = half_unit(printed)
        if unit is not None:
            self.tolerance[column] = unit * factor

    def strategy(self, text: str) -> None:
        match = STRATEGY_RE.match(text)
        kind = match.group("kind") if match else text
        self.extra.setdefault("strategy", kind)
        if kind == "synchronous":
            self.values["max_concurrency"] = 1
        if match and match.group("value"):
            number = match.group("value")
            if kind == "concurrent":
                self.values["max_concurrency"] = int(float(number))
            else:
                self.values["request_rate"] = float(number)
                self.tolerance["request_rate"] = half_unit(number) or 0.0
        self.extra.setdefault("label", f"{kind} {match.group('value')}"
                              if match and match.group("value") else kind)


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
    if metadata.get("Run id"):
        found["run_id"] = metadata["Run id"]
    return found


def build(block: Block) -> list[Parsed | Problem]:
    sections = parse_report(block.text)
    metadata: dict[str, str] = {}
    benchmarks: list[Benchmark] = []
    problems: list[Problem] = []
    for section in sections:
        if section[0] == "metadata":
            metadata.update(section[1])
            continue
        _, title, title_line, parts = section
        for header_rows, rows in parts:
            keys = header_keys(header_rows)
            if not keys or not any(k.lower() in ("benchmark", "metadata") for k in keys[0]):
                problems.append(Problem(block.line_start + title_line - 1,
                                        f"{title}: a table without a Benchmark column"))
                continue
            for index, (line, cells) in enumerate(rows):
                if not "".join(cells).strip():
                    continue
                where = block.line_start + line - 1
                if len(cells) != len(keys):
                    problems.append(Problem(where, f"{title}: {len(cells)} cells where the "
                                                   f"header has {len(keys)}", cells and
                                            "|".join(cells)))
                    continue
                while len(benchmarks) <= index:
                    benchmarks.append(Benchmark())
                bench = benchmarks[index]
                bench.lines.append(where)
                for key, text in zip(keys, cells):
                    try:
                        bench.cell(title, key, text)
                    except ValueError as exc:
                        raise BlockParseError(f"{title}: {' / '.join(key)}: {exc}", line) \
                            from None
    if not benchmarks:
        raise BlockParseError("GuideLLM report without a benchmark row")
    context = run_context(block.context, metadata)
    out: list[Parsed | Problem] = list(problems)
    for bench in benchmarks:
        extra = dict(bench.extra)
        label = extra.pop("label", None)
        for key in ("target", "run_id"):
            if context.get(key):
                extra[key] = context[key]
        model = context.get("model")
        row = ServingRun(
            **bench.values, model=model, backend=context.get("backend"),
            command=context.get("command"), extra=extra or None,
            tags=block.context.tags or None, format=FORMAT.name,
            section=block.context.section_text, label=label,
            engine=infer_engine(block.context, model, None, None))
        out.append(Parsed(row=row, children=list(bench.stats.values()),
                          tolerance=bench.tolerance))
    return out


def continues(line: str) -> bool:
    """Blank lines, table lines, titles and the indented metadata lines belong to the report."""
    return (not line.strip() or TABLE_LINE.search(line) is not None or START.match(line)
            is not None or METADATA_LINE.match(line) is not None)


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
)
