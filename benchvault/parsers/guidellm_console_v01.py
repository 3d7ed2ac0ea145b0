"""GuideLLM 0.1's report (core/report.py GuidanceReport.print): a rich box (``╭─ GuideLLM
Benchmarks Report``) around a ``Benchmark Report N`` box per report, each holding its details
(``Backend(type=..., target=..., model=...)``) and four tables drawn with box characters
(``┃ Benchmark ┃ Requests per Second ┃ ...``), one row per benchmark in the same order:

* ``Requests Data by Benchmark``: ``Requests Completed`` / ``Request Failed`` (``127/128``: of
  the requests made), ``Duration`` (``90.40 sec``), ``Start Time`` / ``End Time``;
* ``Tokens Data by Benchmark``: ``Prompt`` / ``Output`` token means per request and their
  ``(1%, 5%, 50%, 95%, 99%)`` percentiles (``extra``);
* ``Performance Stats by Benchmark``: request latency (s), TTFT and ITL (ms) at ``[1%, 5%, 10%,
  50%, 90%, 95%, 99%]``, a comma-separated list per cell (``latency_stats``; 50% is the median);
* ``Performance Summary by Benchmark``: each cell a mean with its unit (``2.43 sec``,
  ``61.22 ms``, ``52.10 tokens/sec``).

Row i of every table of a report box is its benchmark i (read with guidellm_console's
benchmarks: a run per row, its strategy from the Benchmark cell, ``asynchronous@1.50
req/sec``).  A header rich wrapped over two lines is joined per column, and so is a row whose
cells it wrapped (upstream fills every cell, ``N/A`` for none: a line with an empty cell goes
on the row above).  The boxes around a table are told from its own edges by how many ``│``
precede its header's ``┃``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..schemas.models import INCOMPLETE
from .base import Block, BlockFormat, BlockParseError, Problem, half_unit

START = re.compile(r"^\s*╭─+\s*GuideLLM Benchmarks Report\b")
BOX = "│╭╰┃┏┡└┗┣"


def continues(line: str) -> bool:
    return line.lstrip()[:1] in BOX if line.strip() else False


# Column → (ServingRun field, unit its values are stored in).
COLUMNS = {"requests per second": ("request_throughput", None),
           "request latency": ("mean_e2el_ms", "ms"),
           "time to first token": ("mean_ttft_ms", "ms"),
           "inter token latency": ("mean_itl_ms", "ms"),
           "output token throughput": ("output_throughput", None)}
TO_MS = {"ms": 1.0, "sec": 1000.0, "s": 1000.0, "secs": 1000.0}
# Requests Data by Benchmark: `completed/made`, `failed/made`
COUNTS = {"requests completed": "completed", "request failed": "failed"}
# Tokens Data by Benchmark: the mean per request, and its percentiles (`Prompt (1%, 5%, ...)`)
TOKEN_MEANS = {"prompt": "input_tokens_per_request_mean",
               "output": "output_tokens_per_request_mean"}
TOKEN_LISTS = {"prompt": "input_tokens_per_request", "output": "output_tokens_per_request"}
# Performance Stats by Benchmark: `Request Latency [1%, 5%, ..., 99%] (sec)`, a list per cell
LATENCY_LISTS = {"request latency": "e2el", "time to first token": "ttft",
                 "inter token latency": "itl"}
PERCENT_LIST = re.compile(r"^(?P<what>[a-z ]+?)\s*[\[(](?P<list>[\d.%, ]+)[\])]"
                          r"\s*(?:\((?P<unit>[a-z]+)\))?$")
REPORT_RE = re.compile(r"╭─+\s*Benchmark Report \d+")
BACKEND_RE = re.compile(r"Backend\(type=(?P<type>[^,)]*), target=(?P<target>[^,)]*), "
                        r"model=(?P<model>[^,)]*)\)")
RULE_CHARS = set("━─┏┓┡┩└┘┳╇┴╭╮╰╯ ")


def _frameless(line: str) -> str:
    """A line of the report without the boxes around it."""
    text = line.strip()
    while text[:1] == "│" and text[-1:] == "│" and len(text) > 1:
        text = text[1:-1].strip()
    return text


def _cells(text: str, bar: str) -> list[str]:
    return [cell.strip() for cell in text.strip(bar).split(bar)]


def build(block: Block):
    from . import guidellm_console as gc

    reports: list[list] = [[]]          # each `Benchmark Report N` box: a Benchmark per row
    worker = ""
    problems: list[Problem] = []
    table: Table | None = None
    closed = False
    for number, line in enumerate(block.lines):
        text = _frameless(line)
        where = block.line_start + number
        backend = BACKEND_RE.search(text)
        if backend:
            worker = (f"backend_type='{backend['type']}' backend_target='{backend['target']}' "
                      f"backend_model='{backend['model']}'")
        if REPORT_RE.search(line) and reports[-1]:
            reports.append([])
        if text.startswith("┃"):
            if table is None or table.rows:
                table = Table(depth=line.split("┃", 1)[0].count("│"))
            table.header.append(_cells(text.rstrip("│ "), "┃"))
            closed = False
            continue
        if text.startswith("└") and table is not None:
            _read_table(gc, table, reports[-1], problems)
            table, closed = None, True
            continue
        if table is None or not table.header or "│" not in text or set(text) <= RULE_CHARS:
            continue
        # the boxes around the table, then its own edge, on either side of its cells
        parts = line.strip().split("│")
        edge = table.depth + 1
        cells = [cell.strip() for cell in parts[edge:len(parts) - edge]]
        if table.rows and "" in cells and len(cells) == len(table.rows[-1][1]):
            # upstream fills every cell (`N/A` for none): a line with an empty cell is the
            # rest of the row above, whose cells rich wrapped at the terminal's width
            table.rows[-1] = (table.rows[-1][0], [f"{a} {b}".strip() for a, b
                                                  in zip(table.rows[-1][1], cells)])
        else:
            table.rows.append((where, cells))
    cut = table is not None and not closed
    if table is not None:
        _read_table(gc, table, reports[-1], problems)
    benches = [bench for report in reports for bench in report]
    if not benches:
        raise BlockParseError("GuideLLM 0.1 report (tables in a rich box): no table of it read", 1)
    if cut:
        # The last table's bottom rule never came: the paste was cut short.
        for bench in benches:
            bench.extra.setdefault(INCOMPLETE, True)
        problems.append(Problem(block.line_start + len(block.lines) - 1, "the GuideLLM report "
                                "is cut short here: the values it printed are kept, marked "
                                "incomplete"))
    context = gc.run_context(block.context, {"Worker": worker})
    return [*problems, *(gc._parsed(block, context, bench, None) for bench in benches)]


@dataclass
class Table:
    """One rich table of a report: its header lines (a long header wraps) and its rows."""

    depth: int = 0                   # how many boxes it is drawn in
    header: list[list[str]] = field(default_factory=list)
    rows: list[tuple[int, list[str]]] = field(default_factory=list)

    def names(self) -> list[str]:
        width = max(len(cells) for cells in self.header)
        return [" ".join(cells[i] for cells in self.header if i < len(cells) and cells[i])
                .lower() for i in range(width)]


def _read_table(gc, table: Table, benches: list, problems: list[Problem]) -> None:
    """Row i of every table of a report is its benchmark i."""
    names = table.names()
    for index, (where, cells) in enumerate(table.rows):
        if len(cells) != len(names):
            problems.append(Problem(where, f"{len(cells)} cells where the header has "
                                           f"{len(names)}", " │ ".join(cells)))
            continue
        while len(benches) <= index:
            benches.append(gc.Benchmark())
        bench = benches[index]
        bench.lines.append(where)
        for name, cell in zip(names, cells):
            try:
                _read_cell(gc, bench, name, cell)
            except (ValueError, gc.CellError) as exc:
                bench.warnings.append((where, f"{name}: {cell!r}: {exc}: left empty"))


def _read_cell(gc, bench, name: str, cell: str) -> None:
    if name == "benchmark":
        if "strategy" not in bench.extra:
            bench.strategy(cell.split()[0] if cell else "")
        return
    if not cell or cell.lower() == "n/a":
        return
    if name in COLUMNS:
        column, unit_column = COLUMNS[name]
        number_text, _, unit = cell.partition(" ")
        value = float(number_text)
        factor = TO_MS.get(unit.strip(), 1.0) if unit_column == "ms" else 1.0
        bench.values[column] = value * factor
        half = half_unit(number_text)
        if half is not None:
            bench.tolerance[column] = half * factor
    elif name in COUNTS:                      # `127/128`: of the requests made
        done, _, _total = cell.partition("/")
        bench.values[COUNTS[name]] = int(done)
    elif name == "duration":                  # `90.12 sec`
        bench.values["duration"] = float(cell.split()[0])
    elif name in ("start time", "end time"):
        bench.values[name.replace(" ", "_")] = cell
    elif name in TOKEN_MEANS:
        bench.extra[TOKEN_MEANS[name]] = float(cell)
    else:
        percents = PERCENT_LIST.match(name)
        if percents is None:
            return
        values = [v.strip() for v in cell.split(",")]
        pcts = [float(p) for p in re.findall(r"(\d+(?:\.\d+)?)%", percents.group("list"))]
        if len(values) != len(pcts):
            raise ValueError(f"{len(values)} values for {len(pcts)} percentiles")
        what = percents.group("what").strip()
        metric = LATENCY_LISTS.get(what)
        factor = TO_MS.get((percents.group("unit") or "").strip(), 1.0)
        for pct, printed in zip(pcts, values):
            stat = "median" if pct == 50 else "p" + (f"{pct:g}")
            if metric is not None:
                bench.stat(metric, stat, pct, float(printed), printed, factor)
            elif what in TOKEN_LISTS:
                bench.extra[f"{TOKEN_LISTS[what]}_{stat}"] = float(printed)


FORMAT = BlockFormat(
    name="guidellm_console_v01",
    table="serving_runs",
    description="GuideLLM 0.1 rich-box report: a serving run per benchmark row of its four "
                "tables (requests, tokens, latency percentiles, performance summary).",
    upstream=("guidellm 0.1 GuideLLM Benchmarks Report (rich)",),
    markers=("GuideLLM Benchmarks Report",),
    start=START,
    end=None,
    max_lines=2000,
    build=build,
    continues=continues,
    resumes=lambda lines, line: continues(line),
)
