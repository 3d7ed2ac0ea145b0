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
The run keeps the list's own lines and span.  Figures said in words, in a list or a sentence
(`the mean TTFT was 346.31 ms`, `TTFT mean 234 ms, p99 1200 ms`), are read the same way, a line
that says a latency starting the run.  (Its module name sorts it after the printers'
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
# (a label is a name: no list of words, `tokens/s, Avg generation throughput`, the piece of an
# engine's stats line a wrap cut)
_LINE = (rf"^\s*(?:[-*+•]\s+)?\**(?P<label>[A-Za-z][^:：\n|*`,;]{{0,60}}?)\**\s*[:：]\s*\**"
         rf"(?P<values>{_VALUE_UNNAMED}(?:\s*[,;]\s*{_VALUE_UNNAMED})*)\**\s*$")
LINE = re.compile(_LINE, re.I)
# Or said in words, each figure's name before its number and its unit after it, in a list or
# a sentence (`The total token throughput was 1112.58 tok/s, the mean TTFT was 346.31 ms`,
# `TTFT mean 234 ms, p99 1200 ms; TPOT mean 12.3 ms`): the name and the unit make a figure of a
# number; a statistic alone right after a figure, `p99 1200 ms`, is of that figure, and so is
# a number of another unit, `Throughput: 2273 token/s, 6.39 req/s`.
_NUMBER = rf"{_DIGIT}(?:{_DIGIT}|,(?=\d{{3}}))*(?:\.{_DIGIT}+)?"
_LATENCY = (r"(?:TTFT|TPOT|ITL|E2EL?(?:\s+latency)?|time\s+to\s+first\s+token"
            r"|inter[- ]token\s+latency|time\s+per\s+output\s+token)")
# (not an engine's stats, `Avg prompt throughput`, nor a drafter's, `Accepted throughput`)
_THROUGHPUT = (r"(?<!prompt )(?<!generation )(?<!accepted )(?<!drafted )"
               r"(?:(?:request|output(?:\s+token)?|input(?:\s+token)?|total(?:\s+token)?|token)\s+)?"
               r"throughput")
_SAY = r"\s*(?:(?:was|is|were|of|at|averaged|around|about)\s+|[:=≈~]\s*)*"
# (its unit after the number, or in brackets after the name: `TTFT (ms) was 98`; a change
# from one run to another, `TTFT: 1135.70ms --> 865.97ms`, is the figure of both, before and
# after, as in a table's cell)
_ARROW = r"(?:-+>|→|=>)"
_FIGURE = (rf"(?:(?P<stat>{_STAT})\s+)?(?P<name>NAMES)(?:\s*\((?P<paren>{_UNIT})\))?"
           rf"{_SAY}(?:(?P<stat2>{_STAT})(?:\s*[:=]\s*|\s+))?(?P<number>{_NUMBER})"
           rf"(?:\s*(?P<unit>{_UNIT}))?(?:\s*{_ARROW}\s*(?P<to>{_NUMBER})(?:\s*(?P<unit2>{_UNIT}))?)?"
           rf"(?(paren)|(?<=[^\d\s]))(?![\w/])")
FIGURE = re.compile(_FIGURE.replace("NAMES", f"{_LATENCY}|{_THROUGHPUT}"), re.I)
# (a statistic, or a unit alone, right after a figure: `, p99 1200 ms`, `, 6.39 req/s`)
AFTER = re.compile(rf"[\s,;(]*(?:and\s+)?(?:(?P<stat>{_STAT})\s*[:=]?\s*)?(?P<number>{_NUMBER})"
                   rf"\s*(?P<unit>{_UNIT})(?![\w/])", re.I)
# A line that says a latency: a sentence's figures start a run there.
SAID = re.compile(r"^(?=.*?\b" + _FIGURE.replace("NAMES", _LATENCY) + ")", re.I)
SAID_ANY = re.compile(r"^(?=.*?\b" + _FIGURE.replace("NAMES", f"{_LATENCY}|{_THROUGHPUT}") + ")",
                      re.I)

# The figures only a serving result has (a count, `Successful requests`, is a line of it too).
SERVING_FIGURE = re.compile(r"\b(?:TTFT|TPOT|ITL|E2EL?|time\s+to\s+first\s+token|inter[- ]token"
                            r"|(?:request|output|input|total|token|tok)\S*\s+throughput"
                            r"|throughput)\b", re.I)
# ...not an engine's own stats lines (vLLM's `Avg prompt throughput: 659.3 tokens/s`, a
# drafter's `Accepted throughput:`): engine_stats and spec_decode read those.
# (nor a piece of one a wrap cut after its `Avg`: `generation throughput: 1.1 tokens/s,`)
_STATS = (r"(?!\s*(?:[-*+•]\s+)?\**\s*(?:(?:avg\s+)?(?:prompt|generation)|accepted|drafted)"
          r"\s+throughput)")
# (anchored first: ``starts`` searches, and the lookaheads would run at every position)
START = re.compile(rf"^{_STATS}(?:(?=[^:：\n]*{SERVING_FIGURE.pattern}){_LINE}"
                   rf"|{SAID.pattern[1:]})", re.I)
OWN_LINE = re.compile(rf"^{_STATS}{_LINE}", re.I)


def _named(stat: str | None, label: str, unit: str | None) -> str:
    """The name a table's header gives a figure: `Mean TTFT (ms)`."""
    name = f"{stat.capitalize() if not stat[0] in 'pP' else stat.upper()} {label}" \
        if stat else label
    # (the unit as the table's header would say it: `Request throughput (req/s)`)
    return f"{name} ({unit})" if unit and "(" not in name else name


def _said_rows(line: str) -> list[tuple[str, str]]:
    """The (label, cell) of each figure said in words: `the mean TTFT was 346.31 ms` →
    (`Mean TTFT (ms)`, `346.31`); `TTFT median 654 ms, P99 2638 ms` → (`Median TTFT (ms)`,
    `654`), (`P99 TTFT (ms)`, `2638`)."""
    line = line.replace("*", "")
    rows, at = [], 0
    while (figure := FIGURE.search(line, at)) is not None:
        unit = figure.group("unit") or figure.group("unit2") or figure.group("paren")
        name = figure.group("name")
        to = figure.group("to")
        rows.append((_named(figure.group("stat") or figure.group("stat2"), name, unit),
                     f"{figure.group('number')} -> {to}" if to else figure.group("number")))
        at = figure.end()
        while not to and (after := AFTER.match(line, at)) is not None:
            stat = after.group("stat")
            if stat is None and (after.group("unit").lower() == unit.lower()
                                 or not re.search("throughput", name, re.I)):
                break           # (another figure of the same unit has a name of its own)
            if after.group("unit") == "%":
                break           # (a change, `21% speedup`, is no figure of a run)
            rows.append((_named(stat, name, after.group("unit")), after.group("number")))
            at = after.end()
    return rows


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
        rows.append((_named(value.group("stat"), label, value.group("unit")),
                     value.group("number")))
    return rows


def _own(line: str) -> bool:
    """A line of the list, or one that says a figure."""
    return OWN_LINE.match(line) is not None or SAID_ANY.match(line) is not None


def resumes(lines: list[str], line: str) -> bool:
    """The list goes on after a line a user typed among its items (`$ nvidia-smi`)."""
    return _own(line)


def build(block: Block) -> list[Parsed | Problem]:
    rows: list[tuple[str, str]] = []
    foreign: list[Problem | Parsed] = []
    for i, line in enumerate(block.lines):
        said = _rows(line) if OWN_LINE.match(line) else _said_rows(line)
        if said:
            rows += said
        elif line.strip():
            foreign.append(Problem(block.line_start + i, "a line inside the list that is no "
                                   "figure of it: skipped", line))
    # (two figures at least, one of them a serving figure's: one such label in prose is none;
    # a figure that changed, `412.5 -> 301.2`, is two runs' figures)
    figures = len(rows) + sum(" -> " in cell for _, cell in rows)
    if figures < 2 or not any(SERVING_FIGURE.search(name) for name, _ in rows):
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
                "`TTFT: mean 456.7 ms, p99 1234.5 ms`) or said in words (`the mean TTFT was "
                "346 ms`): one run, read by its labels' words.",
    upstream=("vllm bench serve / sglang.bench_serving results, written down as a list",),
    # (a figure's name and what follows it, or said in words, `mean TTFT 210.4 ms`: not `odd
    # TTFT;` in a sweep's notes, nor vLLM's stats lines, `Avg prompt throughput:`, which a
    # server log holds by the thousand and whose every hint asks the formats' start patterns.
    # No lowercase name, `ttft`: each marker is looked for at every character of every line,
    # and one that starts with a common letter cost the 200 MB log a tenth of its time)
    markers=("TTFT:", "TPOT:", "ITL:", "TTFT (", "TPOT (", "ITL (", "E2E", "irst token",
             "nter-token", "nter token", "Throughput:", "equest throughput:",
             "oken throughput:", "TTFT ", "TPOT ", "ITL "),
    start=START,
    end=None,
    max_lines=40,
    build=build,
    continues=_own,
    resumes=resumes,
    restarts=False,
    cuts=False,         # (a printed block's own lines are never the start of a list)
)
