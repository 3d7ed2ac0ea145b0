"""Lines joined by a visible newline glyph, split back.

Chat exports, digests and some issue trackers turn a pasted log's newlines into a glyph on one
physical line: ``Avg latency: 1.23 seconds ⏎ 10% percentile latency: 1.20 seconds`` (also
``↵``, ``␤``, or the two characters ``\\n`` of an escaped string).  Each piece is the line it
was.  ⏎, ↵ and ␤ stand for nothing else and always split; an escaped ``\\n`` splits only where
a piece is a line benchvault knows (a JSON string or a command's argument holds them too).
"""

from __future__ import annotations

import re
from typing import Callable

GLYPHS = ("\u23ce", "\u21b5", "\u2424")          # ⏎ ↵ ␤
GLYPH_RE = re.compile(r"[ \t]*[\u23ce\u21b5\u2424][ \t]?")
ESCAPED_NEWLINE_RE = re.compile(r"(?:\\r)?\\n")


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
    else:
        return None
    return [piece.rstrip() for piece in pieces]
