"""Markdown pipe tables of published results → ``published_tables`` + ``published_results``.

Reports and notes publish results as GFM tables (the strix-halo seed's hand-made comparison
tables, a report's preset table).  A table is a header row, a delimiter row (`|---|:--:|`) and
body rows; it is kept when at least one body cell is a number, and never when it sits inside a
code fence (pasted tool output lives there) or when another format reads it (llama-bench's
`| model | size | ... | t/s |` table belongs to ``llama_bench``).  Example::

    #### c=1 Comparison
    | Backend   | Model/Quant      | Duration (s) | Req/s |
    |-----------|------------------|--------------|-------|
    | vLLM      | Llama-2-7b (FP16)| 1295.40      | 0.05  |

gives cells (vLLM, Duration (s), 1295.40, s), (vLLM, Req/s, 0.05, req/s), ... captioned
"c=1 Comparison".
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import lru_cache

from lark import Lark, Transformer
from lark.exceptions import LarkError, UnexpectedInput

from . import block_formats
from .base import Block, BlockFormat, Parsed, Problem
from ..reading.tablecells import cell_number, cell_text, claiming_format, table_rows


class RowsToCells(Transformer):
    """Tree → (header cells, [body row cells])."""

    @staticmethod
    def _split(tokens) -> list[str]:
        cells, current, seen_text = [], "", False
        for token in tokens:
            if token.type == "PIPE":
                if seen_text or cells or current:
                    cells.append(current)
                current, seen_text = "", True
            else:
                current += str(token)
        if current.strip():
            cells.append(current)
        # A row that starts with a pipe has no cell before it.
        return cells

    def header_row(self, tokens):
        return ("header", self._split(tokens))

    def body_row(self, tokens):
        return ("body", self._split(tokens), tokens[0].line)

    def delimiter_row(self, _tokens):
        return ("delimiter", None)

    def start(self, items):
        header = next(item[1] for item in items if item[0] == "header")
        body = [item[1] for item in items if item[0] == "body"]
        lines = [item[2] for item in items if item[0] == "body"]
        return header, body, lines


@lru_cache(maxsize=None)
def _parser() -> Lark:
    return Lark.open("published_markdown.lark", rel_to=__file__, parser="lalr",
                     transformer=RowsToCells(), cache=True)


def build(block: Block) -> list[Parsed | Problem]:
    if len(block.lines) < 2:
        return []
    other = claiming_format(block.lines, FORMAT, block_formats(), or_starting=True, context=block.context)
    if other is not None:
        # Read by the format that claims the whole table (a program's own, or results retyped
        # by hand, pasted into a fence as often as not), or left to the one that starts it.
        return other.build(replace(block, format=other)) if other.claims else []
    if block.context.fenced:
        return []       # a program's output: a table of it is no published table
    return read_table(block)


def read_table(block: Block) -> list[Parsed | Problem]:
    """The block's table as a published table, whichever format would claim it."""
    try:
        header, body, lines = _parser().parse(block.text)
    except UnexpectedInput as exc:
        line = getattr(exc, "line", None) or 1
        if line <= 2:
            return []           # no delimiter row: pipes, but not a table
        return [Problem(block.line_start + line - 1, f"unexpected line in table "
                        f"(line {line} of it)", block.text)]
    except LarkError as exc:
        return [Problem(block.line_start, f"cannot read table: {exc}", block.text)]
    out = table_rows(block, FORMAT.name, header, body)
    for parsed in out:
        parsed.warnings.extend(unreadable_numbers(block, header, body, lines))
    return out


# A cell that says "no value" on purpose (a word says it too: `n/a`, `OOM`).
NO_VALUE = re.compile(r"[-–—?.…/\s]*")


def unreadable_numbers(block: Block, header: list[str], body: list[list[str]],
                       lines: list[int]) -> list[tuple[int, str]]:
    """A cell that is no number in a column whose every other row holds one: a number that
    cannot be read (kept as its text, value empty), a warning at its line."""
    rows = [[cell_text(c) for c in row] for row in body]
    out = []
    for column in range(len(header)):
        texts = [row[column] if column < len(row) else "" for row in rows]
        numbers = [cell_number(t)[0] is not None for t in texts]
        for i, text in enumerate(texts):
            others = [numbers[j] for j, t in enumerate(texts) if j != i and t]
            if text and not numbers[i] and others and all(others) and (
                    any(c.isdigit() for c in text) or not any(c.isalpha() for c in text)
                    and not NO_VALUE.fullmatch(text)):
                name = cell_text(header[column]) or f"column {column + 1}"
                out.append((block.line_start + lines[i] - 1,
                            f"{name}: {text!r} is not a number (the column's other rows are): "
                            f"kept as text"))
    return out


def continues(line: str) -> bool:
    return line.lstrip().startswith("|")


FORMAT = BlockFormat(
    name="published_markdown",
    table="published_results",
    description="Markdown pipe tables of results in reports and notes (outside code fences), "
                "one row per cell.",
    upstream=("GitHub-flavoured markdown tables, hand-made or exported by report tools",),
    markers=("|",),
    # a header: at least two cells with text, each closed by a pipe (blank ones between them:
    # groups over two header rows, `|  | RTX 4090 |  | M4 Max |  |`)
    start=re.compile(r"^\s*\|(?:[ \t]*\|)*(?:[ \t]*[^|\s][^|]*\|(?:[ \t]*\|)*){2}"),
    end=None,
    max_lines=20_000,
    build=build,
    consumes=False,
    continues=continues,
    restarts=False,
)
