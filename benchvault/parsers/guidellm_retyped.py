"""A GuideLLM report retyped by hand → one ``serving_runs`` row per benchmark.

People copy GuideLLM's console tables into a note by hand: the rules and the outer borders go,
the headers get simpler (``Req Latency Sec``, ``TTFT ms``, ``Input tok/s``), each over its
statistics (``Mdn | Mean``, ``Mdn | p95``), and each benchmark keeps its strategy as its name::

    Benchmark | Req Latency Sec |      | TTFT ms |       | Output tok/s
              | Mdn             | Mean | Mdn     | p95   | Mean
    constant  | 3.1             | 3.2  | 71.5    | 98.0  | 812.4
    constant  | 3.9             | 4.1  | 88.0    | 140.2 | 1630.0

It is read as the tool it resembles: a table is GuideLLM's when a header row holds only
statistic words (``Mdn``, ``Mean``, ``p95``) or its rows are named by GuideLLM's strategies
(``synchronous``, ``throughput``, ``constant@2.5``).  Each column is read by its header words
(the metric, its unit, its statistic; a group spans the empty header cells after it), through
the console reader's own cells (:mod:`.guidellm_console`), so units and statistics land where
the printed report's would.  Several such tables one after another describe the same
benchmarks: row *i* of each is benchmark *i*.  Every run says, in a warning, that it was matched
by its header words, not by a printed report.  A table of other headers stays a published
table (:mod:`.published_markdown`).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from ..reading.tablecells import claiming_format
from . import block_formats
from . import guidellm_console as gc
from . import published_markdown
from .base import Block, BlockFormat, Parsed, Problem

# A metric a header names, the words that say it (read in lower case).
METRICS = (
    (re.compile(r"\bttft\b|time to first token"), "TTFT"),
    (re.compile(r"\btpot\b|time per output token"), "TPOT"),
    (re.compile(r"\bitl\b|inter.?token"), "ITL"),
    (re.compile(r"\be2el?\b|\b(?:req(?:uest)?\s*)?latency\b"), "Request Latency"),
)
THROUGHPUT = re.compile(r"\b(?:tok(?:en)?s?|req(?:uest)?s?)\s*(?:/|per)\s*s(?:ec(?:ond)?)?\b"
                        r"|\b(?:rps|tps)\b")
STAT_WORD = re.compile(r"^(?:mdn|median|mean|avg|average|std|stdev|min|max|p\d+(?:\.\d+)?)$")
STRATEGY = re.compile(r"^(?:synchronous|throughput|concurrent|constant|poisson|sweep)\b"
                      r"(?:@\d+(?:\.\d+)?)?$", re.I)
SEPARATOR = re.compile(r"^[\s|:+=-]*$")
HEADER_WORD = re.compile(r"\b(?:ttft|tpot|itl|latency|tok/s|req/s|concurrency)\b", re.I)
NUMBER = re.compile(r"^[-+]?\d[\d,]*(?:\.\d+)?(?:\s*±\s*[\d.]+)?$")


def cells(line: str) -> list[str]:
    """A table line's cells, its outer borders left off: a line with a pipe at both ends is
    bordered; a borderless table's line that starts with `|` has an empty first cell."""
    text = line.strip()
    if len(text) > 1 and text.startswith("|") and text.endswith("|"):
        text = text[1:-1]
    return [" ".join(c.split()) for c in text.split("|")]


def _stat_row(row: list[str]) -> bool:
    words = [c.lower() for c in row if c]
    return bool(words) and all(STAT_WORD.match(w) for w in words)


def spans(line: str) -> list[tuple[int, int]]:
    """Where each of ``cells(line)`` stands in the line: (first, past last) character."""
    bars = [i for i, c in enumerate(line) if c == "|"]
    text = line.strip()
    bordered = len(text) > 1 and text.startswith("|") and text.endswith("|")
    edges = bars if bordered else [-1, *bars, len(line)]
    return [(a + 1, b) for a, b in zip(edges, edges[1:])]


def spread(group: str, under: str) -> list[str] | None:
    """The cells of the header line ``group`` when its groups span several cells of the line
    ``under`` it (`| TTFT ms |` over `| Mdn | p95 |`, each group one cell): each group stands
    over the first cell it spans and an empty cell over each further one (as the console
    prints it).  Where each of the group line's bars stands over one of ``under``'s, a group
    spans the cells between its bars; where the retyping kept no column, each group after the
    first spans as many cells as the others.  None: no such spread."""
    tops, bottoms = cells(group), cells(under)
    if len(tops) >= len(bottoms) or len(tops) < 2:
        return None
    top_spans, bottom_spans = spans(group), spans(under)
    ends = {past for _, past in bottom_spans}
    if all(past in ends for _, past in top_spans):
        owner = [next(i for i, (_, past) in enumerate(top_spans) if end <= past)
                 for _, end in bottom_spans]
        return [tops[o] if o not in owner[:i] else "" for i, o in enumerate(owner)]
    # (no column kept: the first cell names the rows, each group spans as many cells)
    per, left = divmod(len(bottoms) - 1, len(tops) - 1)
    if left or per < 2:
        return None
    return [tops[0], *(cell for top in tops[1:] for cell in [top] + [""] * (per - 1))]


# A first column headed by the setting a sweep varies (`| Concurrency | TTFT (ms) | ...`):
# each row's number is that setting's value, as a strategy's (`concurrent@8`) would be.
# (not a rate: a GuideLLM table's rate column may be the rate it measured)
SWEPT_HEADER = {"concurrency": ("max_concurrency", int), "max concurrency": ("max_concurrency", int),
                "max-concurrency": ("max_concurrency", int), "conc": ("max_concurrency", int)}


def _setting(header: list[list[str]], text: str) -> dict[str, Any]:
    named = next((row[0] for row in header if row and row[0].strip()), "")
    column = SWEPT_HEADER.get(re.sub(r"[*`]", "", named).strip().lower())
    if column is None or not re.fullmatch(r"\d+(?:\.\d+)?", text.strip()):
        return {}
    return {column[0]: column[1](float(text))}


def _tables(lines: list[str]) -> list[tuple[list[list[str]], list[tuple[int, list[str]]]]]:
    """(header rows, [(line index, body cells)]) of each table of ``lines``: a body row holds
    a number; header rows come before the body rows of their table."""
    tables: list[tuple[list[list[str]], list[tuple[int, list[str]]]]] = []
    header: list[list[str]] = []
    raw: list[str] = []                     # the header rows' lines
    body: list[tuple[int, list[str]]] = []
    for index, line in enumerate(lines):
        if "|" not in line or SEPARATOR.match(line):
            continue
        row = cells(line)
        if any(NUMBER.match(c) for c in row[1:]):
            body.append((index, row))
            continue
        if body:                            # a header after body rows: the next table
            tables.append((header, body))
            header, raw, body = [], [], []
        if raw and (spread_over := spread(raw[-1], line)) is not None:
            header[-1] = spread_over
        header.append(row)
        raw.append(line)
    if body:
        tables.append((header, body))
    return tables


def resembles(lines: list[str], context: Any = None) -> bool:
    """The lines are a GuideLLM table retyped: headers that name its metrics, and a row of
    statistic words or rows named by its strategies."""
    for header, body in _tables(lines):
        named = sum(bool(HEADER_WORD.search(" ".join(row))) for row in header)
        strategies = body and all(STRATEGY.match(row[0]) for _, row in body if row)
        if named and (any(_stat_row(row[1:]) for row in header) or strategies):
            return True
    return False


def canonical_key(key: tuple[str, ...]) -> tuple[str, ...] | None:
    """A retyped column's header as the console's reader knows it: (`Request Latency (sec)`,
    `Mdn`), (`Output Tokens`, `Per Sec`, `Mean`), (`Requests`, `Concurrency`, `Mean`)."""
    words = " ".join(key).lower()
    stat = next((p for p in reversed(key) if STAT_WORD.match(p.lower())), None)
    for pattern, metric in METRICS:
        if pattern.search(words):
            unit = "sec" if re.search(r"\bs(?:ec(?:onds?)?)?\b|\(s\)", words) and \
                not re.search(r"\bms\b", words) else "ms" if re.search(r"\bms\b", words) \
                else "sec" if metric == "Request Latency" else "ms"
            return (f"{metric} ({unit})", stat or "Mean")
    # (the console's own `Request Stats` over `Per Second`, kept by a retyping)
    if THROUGHPUT.search(words) or re.search(r"\breq(?:uest)?s?\b.*\bper\s*sec", words):
        if re.search(r"\breq|\brps\b", words):
            return ("Requests", "Per Sec", stat or "Mean")
        kind = "Input" if re.search(r"\b(?:input|in|prompt)\b", words) else \
            "Total" if re.search(r"\btotal\b|\btot\b", words) else "Output"
        return (f"{kind} Tokens", "Per Sec", stat or "Mean")
    if "concurrency" in words:
        return ("Requests", "Concurrency", stat or "Mean")
    return None


def build(block: Block) -> list[Parsed | Problem]:
    lines = block.lines
    if not resembles(lines):
        # Other tables naming these metrics: each read by the format that claims it or starts
        # at it (llama-bench's own table with its `t/s` written `tok/s`), else published.
        return [item for chunk in _chunks(block) for item in _read_elsewhere(chunk)]
    benches: list[gc.Benchmark] = []
    names: list[str] = []              # the rows' names in the tables read so far
    first = 0                          # where the benchmarks of the current report start
    for header, body in _tables(lines):
        keys = gc.header_keys(header)
        these = [row[0].lower() for _, row in body]
        if these != names:             # other rows: the tables of another report
            first, names = len(benches), these
        for position, (index, row) in enumerate(body):
            if first + position == len(benches):
                benches.append(gc.Benchmark())
            bench = benches[first + position]
            line = block.line_start + index
            bench.lines.append(line)
            for column, text in enumerate(row):
                if not text:
                    continue
                if column == 0:
                    if "label" not in bench.extra:
                        bench.values.update(_setting(header, text))
                        try:
                            bench.strategy(text) if STRATEGY.match(text) \
                                else bench.extra.setdefault("label", text)
                        except gc.CellError as exc:
                            bench.warnings.append((line, f"{text!r}: {exc}"))
                    continue
                key = canonical_key(keys[column]) if column < len(keys) else None
                if key is None:
                    continue
                try:
                    bench.cell("", key, text)
                except gc.CellError as exc:
                    bench.warnings.append((line, f"{' / '.join(keys[column])}: {exc}: left "
                                                 f"empty"))
    out: list[Parsed | Problem] = []
    for bench in benches:
        if not bench.values and not bench.stats:
            continue
        bench.warnings.append((bench.lines[0], "a table retyped by hand, read as GuideLLM's "
                               "by its header words: each column matched by its words, each "
                               "row by its place in its table"))
        span = [bench.lines[0] - block.line_start, bench.lines[-1] - block.line_start]
        parsed = gc._parsed(block, gc.run_context(block.context, {}), bench, span)
        parsed.row.format = FORMAT.name
        out.append(parsed)
    return out


def _read_elsewhere(chunk: Block) -> list[Parsed | Problem]:
    other = claiming_format(chunk.lines, FORMAT, block_formats(), or_starting=True,
                            context=chunk.context)
    if other is None or other is published_markdown.FORMAT:
        return published_markdown.build(chunk)
    return other.build(replace(chunk, format=other))


def _chunks(block: Block) -> list[Block]:
    """The block's tables, each as a published table's block (cut at blank lines)."""
    out: list[Block] = []
    start = None
    for index, line in enumerate([*block.lines, ""]):
        if line.strip() and start is None:
            start = index
        elif not line.strip() and start is not None:
            out.append(Block(published_markdown.FORMAT, block.lines[start:index],
                             block.line_start + start, block.line_start + index - 1,
                             True, block.context))
            start = None
    return out


def continues(line: str) -> bool:
    """A table line (bordered, as a published table's, or with two pipes or more), and the
    blank lines between the tables of one report."""
    return not line.strip() or line.lstrip().startswith("|") or line.count("|") >= 2


def resumes(lines: list[str], line: str) -> bool:
    """After a line that is not the report's (a table's title, a line typed into the paste),
    the report goes on at a table line."""
    return bool(line.strip()) and continues(line) and resembles(lines)


FORMAT = BlockFormat(
    name="guidellm_retyped",
    table="serving_runs",
    description="A GuideLLM report retyped by hand (simplified headers over Mdn/Mean/p95, no "
                "borders): a serving run per benchmark, matched by its header words.",
    upstream=("guidellm console tables, retyped",),
    markers=("|",),
    # a header of three cells or more naming one of GuideLLM's metrics
    start=re.compile(r"^(?=(?:[^|]*\|){2})[^|]*(?:\|[^|]*)*?"
                     r"\b(?:TTFT|TPOT|ITL|[Ll]atency|tok/s|[Cc]oncurrency)\b"),
    end=None,
    max_lines=400,
    build=build,
    continues=continues,
    resumes=resumes,
    restarts=False,
    consumes=False,         # (as a published table: the context is the runs' around it)
    claims=resembles,
)
