"""GuideLLM 0.1's report: a rich box (``╭─ GuideLLM Benchmarks Report``) around one box per
report, its ``Performance Summary by Benchmark`` table drawn with box characters inside two
frames (``│ │ ┃ Benchmark ┃ Requests per Second ┃ ...``), each cell a mean with its unit
(``2.43 sec``, ``61.22 ms``, ``52.10 tokens/sec``).  Read with guidellm_console's benchmarks
(a run per row, its strategy from the Benchmark cell); a report whose table this does not
know is a warning.
"""

from __future__ import annotations

import re

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

    header: list[str] | None = None
    worker = ""
    benches = []
    problems: list[Problem] = []
    for number, line in enumerate(block.lines):
        text = _frameless(line)
        backend = BACKEND_RE.search(text)
        if backend:
            worker = (f"backend_type='{backend['type']}' backend_target='{backend['target']}' "
                      f"backend_model='{backend['model']}'")
        if not text or set(text) <= RULE_CHARS:
            continue
        if text.startswith("┃"):
            header = [name.lower() for name in _cells(text.rstrip("│ "), "┃")]
            continue
        if header is None or "│" not in text:
            continue
        cells = _cells(text, "│")
        if len(cells) != len(header):
            problems.append(Problem(block.line_start + number, f"{len(cells)} cells where the "
                                    f"header has {len(header)}", line))
            continue
        bench = gc.Benchmark()
        bench.lines.append(block.line_start + number)
        for name, cell in zip(header, cells):
            where = block.line_start + number
            if name == "benchmark":
                try:
                    bench.strategy(cell.split()[0] if cell else "")
                except gc.CellError as exc:
                    bench.warnings.append((where, f"Benchmark: {exc}: left empty"))
                continue
            column = COLUMNS.get(name)
            if column is None:
                continue
            number_text, _, unit = cell.partition(" ")
            try:
                value = float(number_text)
            except ValueError:
                bench.warnings.append((where, f"{name}: {cell!r} is not a number: left empty"))
                continue
            factor = TO_MS.get(unit.strip(), 1.0) if column[1] == "ms" else 1.0
            bench.values[column[0]] = value * factor
            half = half_unit(number_text)
            if half is not None:
                bench.tolerance[column[0]] = half * factor
        benches.append(bench)
    if not benches:
        raise BlockParseError("GuideLLM 0.1 report (`Performance Summary by Benchmark` in a "
                              "rich box): no table of it read", 1)
    if not any(_frameless(line).startswith("└") for line in block.lines):
        # The table's bottom rule never came: the paste was cut short.
        for bench in benches:
            bench.extra.setdefault(INCOMPLETE, True)
        problems.append(Problem(block.line_start + len(block.lines) - 1, "the GuideLLM report "
                                "is cut short here: the values it printed are kept, marked "
                                "incomplete"))
    context = gc.run_context(block.context, {"Worker": worker})
    return [*problems, *(gc._parsed(block, context, bench, None) for bench in benches)]


FORMAT = BlockFormat(
    name="guidellm_console_v01",
    table="serving_runs",
    description="GuideLLM 0.1 rich-box report: a serving run per row of its Performance Summary table.",
    upstream=("guidellm 0.1 GuideLLM Benchmarks Report (rich)",),
    markers=("GuideLLM Benchmarks Report",),
    start=START,
    end=None,
    max_lines=2000,
    build=build,
    continues=continues,
    resumes=lambda lines, line: continues(line),
)
