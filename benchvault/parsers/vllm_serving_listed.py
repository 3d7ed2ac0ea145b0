"""A serving result's figures written down as a list → the run ``serving_retyped`` reads.

People who ran ``vllm bench serve`` or ``sglang.bench_serving`` often write the figures they
care about as a list, each label once, its unit after the number and not in the label::

    - Request throughput: 12.34 req/s
    - Output token throughput: 2345.6 tok/s
    - TTFT: mean 456.7 ms, median 401.2 ms, P99 1234.5 ms
    * Throughput: 15.2 requests/s, 3891.2 output tokens/s

Lines each of a label and its figures (a statistic before a number names it), two figures or
more and one of a serving figure at least (TTFT, TPOT, ITL, E2E latency, a throughput), are
one run (a line typed among them is skipped, with a warning):
each figure becomes a row of the table of figures it stands for (`| Mean TTFT (ms) | 456.7 |`)
and ``serving_retyped`` reads that table by its words, with its warning that it was read so.
The run keeps the list's own lines and span.  (Its module name sorts it after the printers'
own formats: a line one of them starts on is theirs.)
"""

from __future__ import annotations

import re
from dataclasses import replace

from . import block_formats
from .base import STRAY, Block, BlockFormat, Parsed, Problem
from ..reading.tablecells import claiming_format

_STAT = r"(?:mean|median|avg|average|std|min|max|p\d{1,2}(?:\.\d+)?)"
_UNIT = (r"(?:ms|s|sec(?:onds?)?|req(?:uest)?s?/s|(?:input\s+|output\s+|total\s+)?(?:tok(?:en)?s?/s"
         r"|tokens/s)|tok/s/user|%)")
# One figure: a statistic that names it (or none), its number and its unit (or none).
# (a digit the paste garbled, `98.!`, keeps the line: serving_retyped says so for that figure)
# (`~` is not among them here: it says a figure is rough, `~45 ms`, and no list writes it)
_DIGIT = rf"[\d{re.escape(STRAY.replace('~', ''))}]"
_VALUE = (rf"(?:(?P<stat>{_STAT})\s*[:=]?\s*)?(?P<number>{_DIGIT}(?:{_DIGIT}|,)*(?:\.{_DIGIT}+)?)"
          rf"(?:\s*(?P<unit>{_UNIT}))?")
VALUE = re.compile(rf"^\s*{_VALUE}\s*$", re.I)
_VALUE_UNNAMED = _VALUE.replace("?P<stat>", "?:").replace("?P<number>", "?:").replace(
    "?P<unit>", "?:")
# A label (a list's marker and bold around it), a colon, figures apart by commas or `;`.
_LINE = (rf"^\s*(?:[-*+•]\s+)?\**(?P<label>[A-Za-z][^:：\n|*`]{{0,60}}?)\**\s*[:：]\s*\**"
         rf"(?P<values>{_VALUE_UNNAMED}(?:\s*[,;]\s*{_VALUE_UNNAMED})*)\**\s*$")
LINE = re.compile(_LINE, re.I)
# The figures only a serving result has (a count, `Successful requests`, is a line of it too).
SERVING_FIGURE = re.compile(r"\b(?:TTFT|TPOT|ITL|E2EL?|time\s+to\s+first\s+token|inter[- ]token"
                            r"|(?:request|output|input|total|token|tok)\S*\s+throughput"
                            r"|throughput)\b", re.I)
# ...not an engine's own stats lines (vLLM's `Avg prompt throughput: 659.3 tokens/s`, a
# drafter's `Accepted throughput:`): engine_stats and spec_decode read those.
_STATS = r"(?!\s*(?:[-*+•]\s+)?\**\s*(?:avg\s+(?:prompt|generation)|accepted|drafted)\s+throughput)"
# (anchored first: ``starts`` searches, and the lookaheads would run at every position)
START = re.compile(rf"^{_STATS}(?=[^:：\n]*{SERVING_FIGURE.pattern}){_LINE}", re.I)
OWN_LINE = re.compile(rf"^{_STATS}{_LINE}", re.I)


def _rows(line: str) -> list[tuple[str, str]]:
    """The (label, cell) of each figure of a list's line: `TTFT: mean 456.7 ms, p99 1234 ms`
    → (`Mean TTFT (ms)`, `456.7`), (`P99 TTFT (ms)`, `1234`)."""
    match = LINE.match(line)
    label = match.group("label").strip()
    rows = []
    for part in re.split(rf"\s*[,;]\s*(?=[A-Za-z]*\s*[:=]?\s*{_DIGIT})", match.group("values")):
        value = VALUE.match(part)
        if value is None:
            continue
        stat = value.group("stat")
        name = f"{stat.capitalize() if not stat[0] in 'pP' else stat.upper()} {label}" \
            if stat else label
        unit = value.group("unit")
        # (the unit as the table's header would say it: `Request throughput (req/s)`)
        rows.append((f"{name} ({unit})" if unit and "(" not in name else name,
                     value.group("number")))
    return rows


def resumes(lines: list[str], line: str) -> bool:
    """The list goes on after a line a user typed among its items (`$ nvidia-smi`)."""
    return OWN_LINE.match(line) is not None


def build(block: Block) -> list[Parsed | Problem]:
    rows: list[tuple[str, str]] = []
    foreign: list[Problem | Parsed] = []
    for i, line in enumerate(block.lines):
        if OWN_LINE.match(line):
            rows += _rows(line)
        elif line.strip():
            foreign.append(Problem(block.line_start + i, "a line inside the list that is no "
                                   "figure of it: skipped", line))
    # (two figures at least, one of them a serving figure's: one such label in prose is none)
    if len(rows) < 2 or not any(SERVING_FIGURE.search(name) for name, _ in rows):
        return []
    pipes = ["| Metric | Value |", "|---|---|"]
    # (the count written first, `- Successful requests: 500`, is what the segmenter saw
    # printed before the list)
    count = block.context.printed.get("Successful requests")
    if count is not None and count.isdigit():
        pipes.append(f"| Successful requests | {count} |")
    pipes += [f"| {name} | {cell} |" for name, cell in rows]
    fmt = claiming_format(pipes, FORMAT, block_formats(), context=block.context)
    if fmt is None:
        return []
    last = block.line_start + len(block.lines) - 1
    out = foreign
    # (the table's line numbers are its own: the run and what is said of it are the list's)
    for item in fmt.build(replace(block, format=fmt, lines=pipes)):
        if isinstance(item, Problem):
            out.append(Problem(block.line_start, item.reason, "\n".join(block.lines)))
            continue
        row = item.row.model_copy(update={"line_start": block.line_start, "line_end": last,
                                          "raw_text": "\n".join(block.lines)})
        out.append(replace(item, row=row, warnings=[(block.line_start, text)
                                                    for _, text in item.warnings]))
    return out


FORMAT = BlockFormat(
    name="vllm_serving_listed",
    # (it writes no table of its own: the run is serving_retyped's)
    table="serving_runs",
    description="A serving result's figures written as a list (`- Mean TTFT: 123.4 ms`, "
                "`TTFT: mean 456.7 ms, p99 1234.5 ms`): one run, read by its labels' words.",
    upstream=("vllm bench serve / sglang.bench_serving results, written down as a list",),
    # (a figure's name and its colon: not `odd TTFT;` in a sweep's notes, nor vLLM's stats
    # lines, `Avg prompt throughput:`, which a server log holds by the thousand)
    markers=("TTFT:", "TPOT:", "ITL:", "TTFT (", "TPOT (", "ITL (", "E2E", "irst token",
             "nter-token", "nter token", "Throughput:", "equest throughput:",
             "oken throughput:"),
    start=START,
    end=None,
    max_lines=40,
    build=build,
    continues=lambda line: OWN_LINE.match(line) is not None,
    resumes=resumes,
    restarts=False,
    cuts=False,         # (a printed block's own lines are never the start of a list)
)
