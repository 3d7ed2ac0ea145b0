"""Lines joined on one physical line, split back: by a visible newline glyph, or a log record
spliced onto the end of another one a terminal cut.

Chat exports, digests and some issue trackers turn a pasted log's newlines into a glyph on one
physical line: ``Avg latency: 1.23 seconds ⏎ 10% percentile latency: 1.20 seconds`` (also
``↵``, ``␤``, the two characters ``\\n`` of an escaped string, or an HTML ``<br>`` of a page or
an issue form).  Each piece is the line it was.  ⏎, ↵ and ␤ stand for nothing else and always
split; an escaped ``\\n`` or a ``<br>`` splits only where a piece is a line benchvault knows (a
JSON string, a command's argument or a table's cell holds them too), and never a table's row.
"""

from __future__ import annotations

import re
from typing import Callable

GLYPHS = ("\u23ce", "\u21b5", "\u2424")          # ⏎ ↵ ␤
GLYPH_RE = re.compile(r"[ \t]*[\u23ce\u21b5\u2424][ \t]?")
ESCAPED_NEWLINE_RE = re.compile(r"(?:\\r)?\\n")
BR_RE = re.compile(r"[ \t]*<br[ \t]*/?>[ \t]?", re.I)


def split_glyphs(text: str, known: Callable[[str], bool]) -> list[str] | None:
    """The lines ``text`` joined, or None when it joined none.  ``known(piece)``: a format
    reads or starts at ``piece`` (asked only for escaped newlines)."""
    if any(glyph in text for glyph in GLYPHS):
        pieces = GLYPH_RE.split(text)
    elif "\\n" in text and text.lstrip()[:1] not in ("{", "[", '"'):
        pieces = ESCAPED_NEWLINE_RE.split(text)
        if not any(known(piece) for piece in pieces[1:]):
            return None
        pieces[-1] = pieces[-1].rstrip().rstrip("\"'")     # the escaped string's closing quote
    elif BR_RE.search(text) and not text.lstrip().startswith("|"):
        pieces = BR_RE.split(text)
        if not any(known(piece) for piece in pieces[1:]):
            return None
    else:
        return None
    return [piece.rstrip() for piece in pieces]


# A vLLM log record's header, with V1's process tag: `(EngineCore pid=7) INFO 07-03 23:23:58`.
RECORD_HEADER_RE = re.compile(r"(?:\([\w .:-]{1,40} pid=\d+\)[ \t]+)?"
                              r"(?:INFO|WARNING|DEBUG|ERROR)[ \t]+\d\d-\d\d[ \t]+\d\d:\d\d:\d\d\b")
SPLICE_MARK_RE = re.compile(r"[ \t]*\$?[ \t]*$")


def split_joined(text: str, known: Callable[[str], bool]) -> list[str] | None:
    """The lines ``text`` joined (by a glyph, or a record spliced onto a cut one), or None when
    it joined none; the cheap tests first."""
    if "\\n" in text or "<br" in text or "<BR" in text \
            or not text.isascii() and any(glyph in text for glyph in GLYPHS):
        pieces = split_glyphs(text, known)
        if pieces:
            return pieces
    if text.count("INFO ") + text.count("WARNING ") > 1:      # two log levels on one line
        return split_spliced(text)
    if "|" in text and FLAT_TABLE_RE.search(text):
        return split_table(text, known)
    return None


# A markdown table flattened onto one line (an RSS or a chat copy that lost its newlines): its
# header row's last pipe, a blank, then the delimiter row's first pipe.
FLAT_TABLE_RE = re.compile(r"\|[ \t]+\|[ \t]*:?-{3,}:?[ \t]*\|")
DELIMITER_CELL_RE = re.compile(r"^[ \t]*:?-+:?[ \t]*$")


def split_table(text: str, known: Callable[[str], bool] = lambda piece: False
                ) -> list[str] | None:
    """The rows of a table written on one line (`| a | b | | --- | --- | | 1 | 2 |`), each a
    line again; None unless the header's width parts every row (an empty cell between rows).
    What stands before the table (a caption, the command and the settings line before a
    llama-batched-bench table) is a line of its own, cut again where ``known(piece)``: a
    format reads or starts at a word of it."""
    start = text.find("|")
    cells = text[start:].strip().strip("|").split("|")
    at = next((i for i, c in enumerate(cells) if DELIMITER_CELL_RE.match(c)), None)
    if at is None or at < 2 or cells[at - 1].strip():
        return None
    width = at - 1                          # the header's cells, then the blank between rows
    rows = [cells[i:i + width] for i in range(0, len(cells), width + 1)]
    gaps = [cells[i + width] for i in range(0, len(cells) - width, width + 1)]
    if any(g.strip() for g in gaps) or len(rows[-1]) != width \
            or not all(DELIMITER_CELL_RE.match(c) for c in rows[1]):
        return None
    lines = ["|" + "|".join(row) + "|" for row in rows]
    return _caption_lines(text[:start].rstrip(), known) + lines


def _caption_lines(caption: str, known: Callable[[str], bool]) -> list[str]:
    """The lines a flattened caption held: cut before each word a format knows a line by."""
    if not caption.strip():
        return []
    cuts = [0] + [m.start() for m in WORD_AFTER_BLANK.finditer(caption)
                  if known(caption[m.start():])]
    return [caption[a:b].rstrip() for a, b in zip(cuts, cuts[1:] + [len(caption)])
            if caption[a:b].strip()]


WORD_AFTER_BLANK = re.compile(r"(?<=[ \t])(?=[^ \t])")


def split_spliced(text: str) -> list[str] | None:
    """A terminal that redrew a line mid-way leaves the next record glued to the cut one
    (`... Running: 32 $INFO 07-03 23:23:58 [metrics.py:536] Avg prompt ...`): each record is
    a line of its own again, the cut one ending where it was cut (the splice's `$` dropped).
    None when ``text`` holds one record header or none."""
    starts = [m.start() for m in RECORD_HEADER_RE.finditer(text)]
    if len(starts) < 2:
        return None
    bounds = [0, *starts[1:], len(text)]
    pieces = [text[a:b] for a, b in zip(bounds, bounds[1:])]
    return [SPLICE_MARK_RE.sub("", piece) for piece in pieces[:-1]] + [pieces[-1].rstrip()]
