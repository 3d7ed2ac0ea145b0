"""A table drawn with borders → the pipe table it stands for, line for line.

Scripts print their results through tabulate, prettytable or rich, and people paste that::

    +-----------+---------+          ┏━━━━━━━━━━━┳━━━━━━━━━┓
    | model     |   pp512 |          ┃ model     ┃   pp512 ┃
    +===========+=========+          ┡━━━━━━━━━━━╇━━━━━━━━━┩
    | Qwen3-8B  |  1234.5 |          │ Qwen3-8B  │  1234.5 │
    +-----------+---------+          └───────────┴─────────┘

Each border becomes a delimiter row (the top one a blank line) and each row a pipe row, so a
row keeps its line.  The lines of a cell written over several lines (a header wrapped in its
column, a grid table's row between two rules) are joined into the first of them, the others
left blank.
"""

from __future__ import annotations

import re

# A vertical stroke of a row: ASCII's, and the box-drawing light, heavy and double ones.
STROKE = "|│┃║"
ROW = re.compile(rf"^\s*[{STROKE}].*[{STROKE}]\s*$")
# A border: corners, joints and horizontal strokes only, three of them or more in a run.
_BORDER_CHARS = "+|:=\\-─━═┄┅┈┉╌╍" + "".join(chr(c) for c in range(0x250C, 0x2570))
BORDER = re.compile(rf"^\s*[{re.escape(_BORDER_CHARS)}\s]*[-=─━═]{{3}}"
                    rf"[{re.escape(_BORDER_CHARS)}\s]*$")
# The border a table starts with: a corner, then strokes and joints, then a corner.
TOP = re.compile(r"^\s*(?:\+(?:[-=]{2,}\+){2,}|[┌┏╭╔┍┎╒╓][─━═┬┳┯┰╤╥╦┭┮┱┲]{4,}[┐┓╮╗┑┒╕╖])\s*$")


def in_box(line: str) -> bool:
    """A line of a boxed table: a border or a row."""
    return BORDER.match(line) is not None or ROW.match(line) is not None


def _cells(line: str) -> list[str]:
    return [c.strip() for c in re.split(rf"[{STROKE}]", line.strip())[1:-1]]


def pipe_lines(lines: list[str]) -> list[str] | None:
    """The pipe table ``lines`` draw, one line for each; None when no row has two cells."""
    rows = [i for i, line in enumerate(lines) if not BORDER.match(line) and ROW.match(line)]
    if not rows or max(len(_cells(lines[i])) for i in rows) < 2:
        return None
    width = max(len(_cells(lines[i])) for i in rows)
    # The rows between two borders: one row each, or one row when the table rules off
    # every row (more than one group after the header) or it is the header.
    groups: list[list[int]] = [[]]
    for i, line in enumerate(lines):
        if i in rows:
            groups[-1].append(i)
        elif groups[-1]:
            groups.append([])
    groups = [g for g in groups if g]
    ruled = len(groups) > 2
    out = ["" if i == 0 else "|" + "---|" * width for i in range(len(lines))]
    for n, group in enumerate(groups):
        for part in ([group] if n == 0 or ruled else [[i] for i in group]):
            joined = [" ".join(filter(None, column)) for column in
                      zip(*(_cells(lines[i]) + [""] * (width - len(_cells(lines[i])))
                            for i in part))]
            out[part[0]] = "| " + " | ".join(joined) + " |"
            for i in part[1:]:
                out[i] = ""
    return out
