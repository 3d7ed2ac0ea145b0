"""Results retyped as a table aligned with spaces → the rows of the format that reads it.

A note keeps a comparison as plain text, its columns lined up with spaces (in a code fence or
an indented block)::

    model                          C   pp(t/s)  TTFT(ms)  TPOT(ms)  tg(t/s)
    w4a16 (CT, int4_gemm_w4a16)    1   1676     1221.7    47.69     20.97

The header starts the block when its cells (parted by two blanks or more) are three or more and
one names a benchmark figure (a llama-bench test such as ``pp512``, ``t/s``, TTFT, TPOT, ITL,
latency, throughput); rows follow while they hold numbers.  ``reading.aligned`` turns it into the
pipe table it stands for, and the table formats that claim pipe tables by their header words
read it (``llama_retyped``, ``serving_retyped``, ``guidellm_retyped``), with their warning that
it was read by its header words.  A table none of them claims gives nothing: aligned text with
numbers is too common (a process list, a file listing) to keep as published results.
"""

from __future__ import annotations

import re
from dataclasses import replace

from . import block_formats, llama_bench
from .base import Block, BlockFormat, Parsed, Problem
from ..reading.aligned import cells_of, columns, flat_lines, pipe_lines
from ..reading.tablecells import claiming_format

# (a pandas frame's columns are vLLM's result keys: `mean_ttft_ms`, `output_throughput`)
FIGURE = (r"(?<![A-Za-z])(?:[Pp][Pp]\s?\d*|[Tt][Gg]\s?\d*|t/s|tok/s|tokens?/s|TTFT|TPOT|ITL|E2EL?|req/s"
          r"|ttft|tpot|itl|e2el|[Ll]atency|[Tt]hroughput)(?![a-z])")
# Three cells or more parted by two blanks, no pipes, no `Label: value` line.
HEADER = re.compile(r"^(?=[^|:]*" + FIGURE + r")[ \t]*[^\s|>#`~-][^|\n]*?\S(?: {2,}|\t)\S[^|\n]*?"
                    r"\S(?: {2,}|\t)\S[^|\n]*$")
# ...or, its blanks squeezed to one, a header that ends with two figure columns or more
# (`양자화 포맷 PP (t/s) TG (t/s)`): reading.aligned.flat_lines reads it from its right.
# Each figure column with its unit, `(t/s)`, so that a sentence ending `pp512 tg128` is none.
FIGURE_GROUP = FIGURE + r"\s\([^()\s]{1,12}\)"
FLAT_HEADER = re.compile(r"^(?=.{0,100}$)[ \t]*[^\s|>#`~-][^|:\n]*?\s" + FIGURE_GROUP
                         + r"(?:\s" + FIGURE_GROUP + r")+[ \t]*$")
FIGURE_RE = re.compile(FIGURE)
FENCE = re.compile(r"^\s*(?:`{3}|~{3})")


# A rule under the header (`────`, `-----`, `=====`).
RULE = re.compile(r"^\s*[-=─━_]{3,}[-=─━_\s]*$")


def continues(line: str) -> bool:
    return bool(line.strip()) and "|" not in line and not FENCE.match(line) \
        and (any(c.isdigit() for c in line) or RULE.match(line) is not None)


def resumes(lines: list[str], line: str) -> bool:
    """After a line typed into the table, it goes on at a row of no more cells than its
    header has."""
    heads = columns(lines[0]) if lines else None
    return heads is not None and continues(line) and RULE.match(line) is None \
        and 2 <= len(cells_of(line)) <= len(heads)


def build(block: Block) -> list[Parsed | Problem]:
    rows = block.lines[1:]
    foreign = [i for i, line in enumerate(rows, 1) if line.strip() and not continues(line)]
    kept = [block.lines[0], *("" if RULE.match(line) or i in foreign else line
                              for i, line in enumerate(rows, 1))]
    pipes = pipe_lines(kept) if HEADER.match(block.lines[0]) else flat_lines(kept, FIGURE_RE)
    if pipes is None:
        return []
    # (llama-bench's own table, its pipes lost in a copy from a rendered page, is its own)
    fmt = claiming_format(pipes, FORMAT, block_formats(), context=block.context) or \
        (llama_bench.FORMAT if llama_bench.FORMAT.starts(pipes[0]) else None)
    if fmt is None:
        return []
    # (the delimiter row stands one line above the header, so each row keeps its line)
    out = fmt.build(replace(block, format=fmt, lines=pipes, line_start=block.line_start - 1))
    return [*out, *(Problem(block.line_start + i, "a line inside the table that is no row of "
                            "it: skipped", block.lines[i]) for i in foreign)]


FORMAT = BlockFormat(
    name="aligned_table",
    # (it writes no table of its own: the rows are the claiming format's)
    table="llama_bench_results, serving_runs",
    description="Results retyped as a plain-text table aligned with spaces (no pipes): read "
                "by the table format that claims it by its header words.",
    upstream=("llama-bench / vllm bench serve / GuideLLM results, retyped as aligned text",),
    # (a figure, or a statistic or a throughput's word before one, after the two blanks or the
    # tab that part a header's cells, `  Mean TTFT (ms)`, `  Req/s`: a note's `odd TTFT` or a
    # stats line's `Swapped` holds none, and a server log is full of those)
    markers=(*(gap + word for gap in ("  ", "\t") for word in (
        "pp", "PP", "tg", "TG", "TTFT", "TPOT", "ITL", "E2E", "Latency", "latency", "Throughput",
        "throughput", "Mean", "Median", "Avg", "P9", "P5", "Req", "Output", "Total",
        "mean", "median", "p9", "p5", "output_", "total_", "request_")),
        "t/s", "req/s", "tok/s"),
    start=re.compile(HEADER.pattern + "|" + FLAT_HEADER.pattern),
    end=None,
    max_lines=2_000,
    build=build,
    continues=continues,
    resumes=resumes,
    restarts=False,
    consumes=False,
    cuts=False,
)
