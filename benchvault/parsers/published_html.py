"""HTML ``<table>`` result tables → ``published_tables`` + ``published_results``.

Reports exported from GitBook and similar tools publish results as HTML tables, often each on
one long line, with the caption just before: a ``####`` heading or a bold paragraph line such
as ``**4.1.1 Qwen-1.5B - 2048 context length @10req at a time for 100 total requests**``
(seed ``multi-gpu_report_pp-vs-tp.md``).  Example::

    <table><thead><tr><th>Preset</th><th>Prompt TPS</th><th>Avg Latency (s)</th></tr></thead>
    <tbody><tr><td>H100X1</td><td>45.74</td><td>6.95</td></tr></tbody></table>

gives cells (H100X1, Prompt TPS, 45.74, tok/s) and (H100X1, Avg Latency (s), 6.95, s).  The
header is the ``<thead>`` row, else the first row of ``<th>`` cells, else the first row.  Tables
in code fences and tables without a number are skipped.
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import lru_cache

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import LarkError

from . import block_formats
from .base import Block, BlockFormat, Parsed, Problem, label_and_heading
from ..reading.aligned import pipe_table
from ..reading.tablecells import cell_text, claiming_format, table_rows


@v_args(inline=True)
class TagsToRows(Transformer):
    """Tree → (caption, [(row is in <thead>, all cells are <th>, [cell texts])])."""

    @staticmethod
    def _text(tokens) -> str:
        return " ".join(str(t) for t in tokens if isinstance(t, Token) and t.type == "TEXT")

    def header_cell(self, *tokens):
        return ("th", self._text(tokens))

    def data_cell(self, *tokens):
        return ("td", self._text(tokens))

    def row(self, _open, *items):
        cells = [c for c in items if isinstance(c, tuple)]
        return ("row", False, all(kind == "th" for kind, _ in cells) and bool(cells),
                [text for _, text in cells])

    def head(self, _open, *items):
        return [("row", True, th, cells) for _, _, th, cells in
                (i for i in items if isinstance(i, tuple))]

    def body(self, _open, *items):
        return [i for i in items if isinstance(i, tuple)]

    foot = body

    def colgroup(self, *_tokens):
        return []

    def caption(self, _open, *tokens):
        return ("caption", self._text(tokens))

    def start(self, _open, *items):
        caption, rows = None, []
        for item in items:
            if isinstance(item, list):
                rows.extend(item)
            elif isinstance(item, tuple) and item[0] == "caption":
                caption = item[1]
            elif isinstance(item, tuple) and item[0] == "row":
                rows.append(item)
        return caption, rows


@lru_cache(maxsize=None)
def _parser() -> Lark:
    return Lark.open("published_html.lark", rel_to=__file__, parser="lalr",
                     transformer=TagsToRows(), cache=True)


def build(block: Block) -> list[Parsed | Problem]:
    if block.context.fenced:
        return []
    text = block.text
    start = text.lower().find("<table")
    try:
        caption, rows = _parser().parse(_closed(text[start:]))
    except (LarkError, ValueError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return [Problem(block.line_start, f"cannot read HTML table: {reason}", text[:4000])]
    if not rows:
        return []
    header_at = next((i for i, r in enumerate(rows) if r[1]), None)
    if header_at is None:
        header_at = 0 if rows[0][2] else None
    if header_at is None:
        header = [f"column {i + 1}" for i in range(max(len(r[3]) for r in rows))]
        body = [r[3] for r in rows]
    else:
        header = rows[header_at][3]
        indexed = [(i, r[3]) for i, r in enumerate(rows) if i != header_at and not r[1]]
        body = [cells for _, cells in indexed]
        # A table of results retyped as HTML reads as the pipe table it stands for, by the
        # format that claims that (a serving comparison, llama-bench results).
        claimed = _claimed(block, text[:start].count("\n"), text[start:], header, indexed)
        if claimed is not None:
            return claimed
    return table_rows(block, FORMAT.name, header, body,
                      caption=cell_text(caption) if caption else None)


def _closed(html: str) -> str:
    """The table up to its last whole row, its open sections and itself closed: the same
    table when it ends with ``</table>``; a table cut short (a paste that stops inside it, the
    closing rule the segmenter adds then) keeps the rows it printed."""
    lower = html.lower()
    last_row = lower.rfind("</tr")
    if last_row < 0:
        end = lower.rfind("</table")
        return html[:html.index(">", end) + 1] if end >= 0 else html
    html = html[:html.index(">", last_row) + 1]
    lower = html.lower()
    for part in ("thead", "tbody", "tfoot"):
        if lower.rfind(f"<{part}") > lower.rfind(f"</{part}"):
            html += f"</{part}>"
    return html + "</table>"


# What makes an HTML table a run's (a serving latency as vLLM names it, a llama-bench test, a
# rate of tokens, in a header or a cell);
# an exported report's tables of other figures (`Prompt TPS`, `Avg Latency (s)`) stay published.
RUN_WORDS = re.compile(r"(?<![A-Za-z])(?:TTFT|TPOT|ITL|E2EL?|(?:pp|tg)\s?\d+"
                       r"|(?:t|tok|tokens?)\s?/\s?s(?:ec)?|req(?:uests?)?\s?/\s?s"
                       r"|tokens?\s+per\s+sec(?:ond)?)(?![A-Za-z])", re.I)


def _claimed(block: Block, before: int, html: str, header: list[str],
             body: list[tuple[int, list[str]]]) -> list[Parsed | Problem] | None:
    """The rows of the format that claims the table, each at its ``<tr>``'s line; None when
    none claims it."""
    # (and the label and heading over it: `Throughput (tok/s):`)
    words = " ".join([*header, *(cell for _, cells in body for cell in cells),
                      *label_and_heading(block.context)])
    if not RUN_WORDS.search(words):
        return None
    pipes = pipe_table(header, [cells for _, cells in body])
    fmt = claiming_format(pipes, FORMAT, block_formats(), or_starting=True, context=block.context)
    if fmt is None:
        return None
    starts = [m.start() for m in re.finditer(r"<tr\b", html, re.I)]
    at = [block.line_start + before + html[:starts[i]].count("\n") if i < len(starts)
          else block.line_start for i, _ in body]
    # (the pipe table's row k stands at line_start + 2 + k: each is put back at its <tr>)
    where = {block.line_start + 2 + k: line for k, line in enumerate(at)}
    moved = (lambda line: where.get(line, block.line_start))
    out = fmt.build(replace(block, format=fmt, lines=pipes))
    for item in out:
        if isinstance(item, Problem):
            item.line = moved(item.line)
            continue
        for row in (item.row, *item.children):
            for name in ("line_start", "line_end"):
                if getattr(row, name, None) is not None:
                    setattr(row, name, moved(getattr(row, name)))
        item.warnings = [(moved(line), reason) for line, reason in item.warnings]
    return out


FORMAT = BlockFormat(
    name="published_html",
    table="published_results",
    description="HTML <table> results in reports and notes (outside code fences), one row "
                "per cell.",
    upstream=("HTML tables in exported reports (GitBook, Notion, Confluence)",),
    markers=("<table",),
    start=re.compile(r"^\s*(?:<[^>]+>\s*)*<table\b", re.I),
    end=re.compile(r".*</table\s*>", re.I),
    max_lines=20_000,
    # A paste that stops inside the table (no `</table>`, every line a tag): read to its last
    # whole row.
    body_line=re.compile(r"^\s*<"),
    closing="</table>",
    build=build,
    consumes=False,
)
