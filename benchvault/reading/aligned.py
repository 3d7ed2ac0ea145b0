"""A table aligned with spaces, read as the pipe table it stands for.

Notes keep results as plain text tables, in a code fence or an indented block, their columns
lined up with spaces and no pipes::

    model                 attention      quant       size        pp512    tg128
    Qwen3.6-35B-A3B       hybrid DN      Q4_K_XL   20.81 GiB     321.8     25.9

The header names the columns: its cells are parted by two blanks or more (a cell may hold one:
``hybrid DN``, ``20.81 GiB``).  A row's pieces (parted the same way) go to the column whose span
(from its header's start to the next one's) they overlap most, so a value right-aligned under
its header, or a label with a double blank inside (``int4  (AutoRound)``), still lands in its
column.  :func:`pipe_lines` gives the pipe table (header, delimiter row, rows) that the table
formats read.  A table copied from a rendered page parts its cells by one tab each instead:
its rows' cells are counted, not placed (:func:`tab_separated`).  One whose blanks were all
squeezed to one (a page's text copied through a reader that keeps none) is read from its right:
each row ends with as many figures as the header ends with figure columns (:func:`flat_lines`).
"""

from __future__ import annotations

import re

GAP = re.compile(r"\S+(?: \S+)*")       # a cell: words parted by single blanks
MIN_COLUMNS = 3


def _cells(line: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), m.group(0)) for m in GAP.finditer(line.expandtabs())]


def cells_of(line: str) -> list[str]:
    """A line's pieces parted by two blanks or more."""
    return [text for _, _, text in _cells(line)]


def columns(header: str) -> list[tuple[int, str]] | None:
    """(start, name) of each column the header names, None when it names too few."""
    found = [(start, text) for start, _, text in _cells(header)]
    return found if len(found) >= MIN_COLUMNS else None


def row_cells(line: str, heads: list[tuple[int, str]]) -> list[str]:
    """A row's cells, one per header column (empty where it has none)."""
    out: list[list[str]] = [[] for _ in heads]
    bounds = [start for start, _ in heads[1:]] + [10 ** 9]
    for start, end, text in _cells(line):
        overlap = [min(end, stop) - max(start, begin)
                   for (begin, _), stop in zip(heads, bounds)]
        # (a piece left of the first header overlaps it least badly, so goes to it; ties go
        # left)
        best = max(range(len(heads)), key=lambda i: (overlap[i], -i))
        out[best].append(text)
    return ["  ".join(cell) for cell in out]


def tab_cells(line: str) -> list[str]:
    """A line's cells parted by tabs, one per tab (an empty cell between two)."""
    return [" ".join(cell.split()) for cell in line.strip("\n").split("\t")]


def tab_separated(lines: list[str]) -> bool:
    """A table copied from a rendered page (a web page's, a sheet's): its cells parted by one
    tab each, however wide, so a row's cells stand under its header's by their count, not by
    their place on the line.  The header and every row hold tabs."""
    filled = [line for line in lines if line.strip()]
    return bool(filled) and all("\t" in line.strip() for line in filled) \
        and len(tab_cells(filled[0].strip())) >= MIN_COLUMNS


def pipe_table(names: list[str], rows: list[list[str] | None]) -> list[str]:
    """The pipe table of ``names`` over ``rows``: header, delimiter row, one line per row (a
    blank line for None), as the table formats read it."""
    def line(cells: list[str]) -> str:
        return "| " + " | ".join(cells) + " |"
    return [line(names), "|" + "---|" * len(names),
            *("" if row is None else line(row) for row in rows)]


def pipe_lines(lines: list[str]) -> list[str] | None:
    """The pipe table ``lines`` (header first, then rows; blank lines skipped) stand for:
    header, delimiter row, one line per row; None when they are no aligned table (too few
    columns, or a row with more pieces than the header has columns)."""
    rows: list[list[str] | None] = []
    if tab_separated(lines):
        names = tab_cells(lines[0].strip())
        for line in lines[1:]:
            cells = tab_cells(line.strip()) if line.strip() else []
            if len(cells) > len(names):
                return None
            rows.append(cells + [""] * (len(names) - len(cells)) if cells else None)
        return pipe_table(names, rows)
    heads = columns(lines[0]) if lines else None
    if heads is None:
        return None
    lines = _without_index(lines)
    for line in lines[1:]:
        if not line.strip():
            rows.append(None)
            continue
        if len(_cells(line)) > len(heads) + 2:
            return None
        rows.append(row_cells(line, heads))
    return pipe_table([name for _, name in heads], rows)


def _without_index(lines: list[str]) -> list[str]:
    """``lines`` without a printed pandas frame's index (`0`, `1`, ... first on each row, under
    no header), so that the row's cells line up under the header's."""
    body = [line for line in lines[1:] if line.strip()]
    firsts = [line.split()[0] for line in body]
    indent = len(lines[0]) - len(lines[0].lstrip())       # (the header starts past the index)
    if not body or firsts != [str(i) for i in range(len(body))] or indent < len(firsts[-1]):
        return lines
    return [lines[0], *(re.sub(r"^\s*\d+", lambda m: " " * len(m.group(0)), line)
                        for line in lines[1:])]


NUMBER_TOKEN = re.compile(r"^[-+~≈]?\d[\d,]*(?:\.\d+)?$")
UNIT_TOKEN = re.compile(r"^\([^()]{1,12}\)$")


def flat_lines(lines: list[str], figure: re.Pattern[str]) -> list[str] | None:
    """The pipe table of a table whose cells are parted by single blanks (`Quant PP (t/s) TG
    (t/s)` over `Q4_0 143.23 32.27`): every row ends with the same number of figures (one at
    least, two rows at least), the header with as many column names that each name a figure
    (``figure``: a word such as `PP`, `t/s`, `TTFT`; a `(unit)` after a name belongs to it),
    and the words before them name the row.  None for any other lines."""
    filled = [line.split() for line in lines if line.strip()]
    if len(filled) < 3:
        return None
    counts = {len(list(_trailing(tokens))) for tokens in filled[1:]}
    if len(counts) != 1 or 0 in counts:
        return None
    width = counts.pop()
    groups: list[str] = []
    for token in filled[0]:
        if UNIT_TOKEN.match(token) and groups:
            groups[-1] += " " + token
        else:
            groups.append(token)
    names, label = groups[-width:], " ".join(groups[:-width])
    if len(groups) <= width or not all(figure.search(name) for name in names) \
            or any(len(tokens) <= width for tokens in filled[1:]):
        return None
    rows = [[" ".join(tokens[:-width]), *tokens[-width:]] for tokens in filled[1:]]
    return pipe_table([label, *names], rows)


def _trailing(tokens: list[str]):
    """The figures a row's tokens end with."""
    for token in reversed(tokens):
        if not NUMBER_TOKEN.match(token):
            return
        yield token
