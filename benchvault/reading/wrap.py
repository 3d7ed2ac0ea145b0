"""Put back a log line a narrow terminal hard-wrapped.

A terminal (or a tmux pane) cuts a long line at its width and the capture saves the pieces as
lines; the cut falls anywhere, and a space that ended a piece is lost when trailing blanks are
trimmed.  So a cut between two letters may have been mid-word (`cac|he`) or at a lost space
(`cache|usage`): the words the grammars know decide, else mid-word (the likelier cut).  A cut
between two digits (`Waiting: 1|2 reqs`) cannot be told from two numbers: it is not guessed.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

WORD_END = re.compile(r"[A-Za-z]+$")
WORD_START = re.compile(r"^[A-Za-z]+")


@lru_cache(maxsize=1)
def vocabulary() -> frozenset[str]:
    """Every word the formats' grammars and declarations spell (labels, units, phrases)."""
    words: set[str] = set()
    parsers = Path(__file__).resolve().parent.parent / "parsers"
    for path in [*parsers.glob("*.lark"), *parsers.glob("*.py")]:
        words.update(w.lower() for w in re.findall(r"[A-Za-z]{2,}", path.read_text()))
    return frozenset(words)


def join_wrapped(left: str, right: str) -> tuple[str, bool]:
    """``left`` and the piece a wrap moved to the next line as the one line it was, and
    whether the cut fell inside a number (then the joint is a guess the caller must not keep)."""
    if not left or not right:
        return left + right, False
    a, b = left[-1], right[0]
    if a.isdigit() and (b.isdigit() or b in ".," and right[1:2].isdigit()) \
            or a in ".," and left[-2:-1].isdigit() and b.isdigit():
        return left + right, True
    if b.isspace() or not (a.isalnum() and b.isalnum()):
        # A cut at punctuation: `tokens/s,|Avg` lost the space after the comma.
        return (left + right if b.isspace() or a in "([{/-_=" or b in ")]},.:;%/"
                else left + " " + right), False
    head, tail = WORD_END.search(left), WORD_START.match(right)
    if head and tail:
        known = vocabulary()
        whole = (head.group(0) + tail.group(0)).lower()
        if whole not in known and head.group(0).lower() in known \
                and tail.group(0).lower() in known:
            return left + " " + right, False
    return left + right, False
