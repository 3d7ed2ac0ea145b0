"""Results printed as a table drawn with borders → the rows of the format that reads it.

A script that prints its results through tabulate (``grid``, ``psql``), prettytable or rich
draws them in a box, and that is what people paste (seed-like example)::

    +--------------+-------------+---------------+
    | Concurrency  |   TTFT (ms) |   Output tok/s |
    +==============+=============+===============+
    | 1            |        25.1 |         160.3 |
    +--------------+-------------+---------------+

The block starts at the top border and goes on while its lines are borders or rows.
``reading.boxed`` turns it into the pipe table it stands for, line for line, and the table
formats that claim pipe tables by their header words read it (``llama_retyped``,
``serving_retyped``, ``guidellm_retyped``), with their warning that it was read by its header
words.  A table none of them claims gives nothing: a box of numbers is any program's output.
"""

from __future__ import annotations

from dataclasses import replace

from . import block_formats
from .base import Block, BlockFormat, Parsed, Problem
from ..reading.boxed import TOP, in_box, pipe_lines
from ..reading.tablecells import claiming_format


def resumes(lines: list[str], line: str) -> bool:
    """After a line typed into the table, it goes on at its next border or row."""
    return in_box(line)


def build(block: Block) -> list[Parsed | Problem]:
    # (a line typed between the rows is skipped, with a warning)
    foreign = [i for i, line in enumerate(block.lines) if i and not in_box(line)]
    pipes = pipe_lines(["" if i in foreign else line for i, line in enumerate(block.lines)])
    if pipes is None:
        return []
    fmt = claiming_format(pipes, FORMAT, block_formats(), or_starting=True,
                          context=block.context)
    if fmt is None:
        return []
    out = fmt.build(replace(block, format=fmt, lines=pipes))
    return [*out, *(Problem(block.line_start + i, "a line inside the table that is no row of "
                            "it: skipped", block.lines[i]) for i in foreign)]


FORMAT = BlockFormat(
    name="boxed_table",
    # (it writes no table of its own: the rows are the claiming format's)
    table="llama_bench_results, serving_runs",
    description="Results printed as a table drawn with borders (tabulate's grid or psql, "
                "prettytable, rich): read by the table format that claims it by its header "
                "words.",
    upstream=("llama-bench / vllm bench serve results as a script prints them through "
              "tabulate, prettytable or rich",),
    markers=("+--", "+==", "┌─", "┏━", "╭─", "╔═", "┍━", "╒═"),
    start=TOP,
    end=None,
    max_lines=2_000,
    build=build,
    continues=in_box,
    resumes=resumes,
    restarts=False,
    consumes=False,
    cuts=False,
)
