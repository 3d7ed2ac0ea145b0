"""Put back a log line a narrow terminal or an editor wrapped.

Two kinds of wrap cut a long line into pieces, and the pieces themselves tell which:

* A **hard wrap** (a terminal, a tmux pane, a pod log viewer) cuts at the pane's width, anywhere,
  even inside a number: every piece but the last is exactly that wide (one less when the cut
  fell on a space that was trimmed).  Joined with nothing between them, the pieces are the line.
* A **word wrap** (`fold -s`, an editor, a chat client) cuts at the last space that fits: the
  space stays at the end of a piece or is trimmed, and the word after it would not have fitted.
  Joined with that space, the pieces are the line.

:func:`readings` gives the joints a pane of one width could have made, likelier first;
the caller keeps the first whose joined line its grammar reads cleanly.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence
from pathlib import Path
from string import ascii_letters

from .doctype import is_capture_line

WORD_START = re.compile(r"^[A-Za-z]+")
# A field of a record: its label, then its value (`GPU KV cache usage: 42.2%`).
FIELD_START = re.compile(r"^\s*[A-Za-z#][\w #/().-]{0,60}:\s*[-+\d]")
FIRST_WORD = re.compile(r"\s*(\S+)")
MIN_WRAPPED_WIDTH = 32      # no pane is narrower (a phone's terminal, a split tmux pane)
FLAG_START = re.compile(r"--?[A-Za-z]")
# A line that starts a log record, a block or a table never goes on with a wrapped one.
WRAP_BREAK = re.compile(r"^(?:Namespace\(|={3}|-{3}|INFO\b|WARNING\b|DEBUG\b|ERROR\b|\||`{3}"
                        r"|~{3}|\d+%\||\(\w+ pid=\d+\)|\[\d{4}-|\[\w+=\d+\] )")


@lru_cache(maxsize=1)
def vocabulary() -> frozenset[str]:
    """Every word the formats' grammars and declarations spell (labels, units, phrases)."""
    words: set[str] = set()
    parsers = Path(__file__).resolve().parent.parent / "parsers"
    for path in [*parsers.glob("*.lark"), *parsers.glob("*.py")]:
        words.update(w.lower() for w in re.findall(r"[A-Za-z]{2,}", path.read_text()))
    return frozenset(words)


def printed_widths(pieces: list[str], cuts: Sequence[int]) -> list[int]:
    """Each piece's width as the pane printed it: with the ``cuts`` a cleaning step took off
    its start (a log collector's timestamp or service name), which the pane printed too."""
    return [len(p) + (cuts[at] if at < len(cuts) else 0) for at, p in enumerate(pieces)]


def _hard(pieces: list[str], pane_at_least: int, cuts: Sequence[int] = ()) -> list[str] | None:
    """The joints of a hard wrap at one width, or None when the pieces cannot be one (a
    piece narrower than a line the same pane printed was not cut at its edge)."""
    widths = printed_widths(pieces, cuts)
    width = max(pane_at_least, *widths[:-1])
    if widths[-1] > width or any(w < width - 1 for w in widths[:-1]):
        return None
    # A piece one short lost the space the pane cut at (trailing blanks are trimmed).
    return ["" if w == width or nxt[:1].isspace() else " "
            for w, nxt in zip(widths, pieces[1:])]


def _word(pieces: list[str], cuts: Sequence[int] = ()) -> list[str] | None:
    """The joints of a word wrap at one width, or None: every piece fits the width, and the
    first word of each next piece would not have fitted after the piece before it."""
    widths = printed_widths(pieces, cuts)
    narrowest = max(widths)
    widest = min(w - len(p) + len(p.rstrip()) + len(FIRST_WORD.match(nxt).group(1))
                 for w, p, nxt in zip(widths, pieces, pieces[1:]))
    if narrowest > widest:
        return None
    return [" "] * (len(pieces) - 1)


def _spaced_words(left: str, right: str) -> bool:
    """Were ``left|right`` two words a lost space parted (`cache|usage`), not one word cut
    (`cac|he`)?  The words the grammars know decide; else one word (the likelier cut)."""
    # (the last word found from the end: a search for `[A-Za-z]+$` is quadratic in a long word)
    head, tail = left[len(left.rstrip(ascii_letters)):], WORD_START.match(right)
    if not (head and tail):
        return False
    known = vocabulary()
    return (head + tail.group(0)).lower() not in known \
        and head.lower() in known and tail.group(0).lower() in known


def parted_flag(left: str, right: str) -> bool:
    """Does ``right`` start a command-line flag of its own (`w8a8|--max-model-len`)?"""
    return FLAG_START.match(right) is not None and not left.endswith(("-", "="))


def at_edge(piece: str, nxt: str, pane: Pane | None, widest: int, cut: int = 0) -> bool:
    """Was ``piece`` (printed ``cut`` wider) cut at the edge of the pane (``nxt`` the line
    after it)?  A hard wrap's piece fills it; a word wrap's would not have taken ``nxt``'s
    first word.  Without a pane the capture shows, the widest record line of the paste stands
    for its width."""
    printed = len(piece) + cut
    if pane is not None and pane.kind == "word":
        return printed + 1 + len(FIRST_WORD.match(nxt).group(1)) > pane.width
    width = pane.width if pane is not None else widest
    return bool(width) and printed >= width - 1


def readings(pieces: list[str], pane_at_least: int = 0, pane: Pane | None = None,
             cuts: Sequence[int] = ()) -> list[list[str]]:
    """What lies between consecutive ``pieces`` in each way one pane (as wide as its widest
    line so far, ``pane_at_least``, or wider) could have cut them, likelier first (empty: no
    pane could have).  ``cuts``: what a cleaning step took off each piece's start.
    When both kinds fit, the ``pane`` the capture shows says which is likelier; without one,
    a cut between two known words or before a flag says word wrap, anything else hard wrap."""
    if len(pieces) < 2 or not all(p.strip() for p in pieces):
        return []
    if pane is not None and pane.kind == "hard":
        pane_at_least = pane.width     # (a line wider than the pane it shows was not cut by it)
    hard, word = _hard(pieces, pane_at_least, cuts), _word(pieces, cuts)
    found = [j for j in (hard, word) if j is not None]
    if hard is not None and word is not None and (
            pane is not None and pane.kind == "word" or pane is None and len(pieces) == 2
            and (_spaced_words(pieces[0], pieces[1]) or parted_flag(pieces[0], pieces[1]))):
        found.reverse()
    return [j for i, j in enumerate(found) if j not in found[:i]]


def ragged_readings(pieces: list[str]) -> list[list[str]]:
    """What lies between ``pieces`` that no one pane cut (a web page's wrap in a proportional
    font, a line broken after each field by hand), likelier first: a cut inside what reads as
    one token (`30|21.5`, `tokens/|s`, `thro|ughput`, `|%`) took nothing, any other the space
    it was made at; then every joint a space, then every joint nothing."""
    if len(pieces) < 2 or not all(p.strip() for p in pieces):
        return []
    likeliest = ["" if not left[-1:].isspace() and not right[:1].isspace()
                 and cut_in_token(left, right) else " " for left, right in zip(pieces, pieces[1:])]
    # (a record written out a field per line, its separators left off, last)
    fields = [", " if FIELD_START.match(right) and not left.rstrip().endswith((",", ":", ";"))
              else joint for joint, left, right in zip(likeliest, pieces, pieces[1:])]
    found = [likeliest, [" "] * len(likeliest), [""] * len(likeliest), fields]
    return [j for i, j in enumerate(found) if j not in found[:i]]


def ragged_joined(pieces: list[str]) -> str:
    """The line ``pieces`` likeliest were, cut at no one width (one piece: itself)."""
    return joined(pieces, ragged_readings(pieces)[0]) if len(pieces) > 1 else pieces[0]


def cut_in_token(left: str, right: str) -> bool:
    """Is ``left|right`` one token cut, not two a space parted?"""
    if not (left and right):
        return False
    a, b = left[-1], right[0]
    if a.isdigit() and (b.isdigit() or b in ".%") or a == "." and b.isdigit():
        return True
    if a in "/#(_-=" or b in "%,;:)/":
        return True
    tail = WORD_START.match(right)      # (a letter outside ASCII starts no word they know)
    if a.isalpha() and tail is not None:    # a word the grammars know, cut (`thro|ughput`)
        head = left[len(left.rstrip(ascii_letters)):]
        return (head + tail.group(0)).lower() in vocabulary()
    return False


def joined(pieces: list[str], joints: list[str]) -> str:
    """The line ``pieces`` were cut from.  Where a space was cut at, the blanks around the cut
    are that one space: a word wrap may keep it at the piece's end, and an editor's hanging
    indent starts the next piece with more."""
    out = [pieces[0]]
    for joint, piece in zip(joints, pieces[1:]):
        if joint.endswith(" "):
            out[-1], piece = out[-1].rstrip(), piece.lstrip()
        out += [joint, piece]
    return "".join(out)


@dataclass(frozen=True)
class Pane:
    """How a capture's long lines were wrapped: ``hard`` at ``width``, or by ``word`` within
    ``width`` (its widest line)."""

    kind: str
    width: int


def pane_of(head: bytes) -> Pane | None:
    """The pane that wrapped a capture's lines, from its first bytes; None when none did.
    Then each of its lines must be read: a wrap may cut the very words a prefilter looks for
    (`GPU KV ca|che size`).

    A hard wrap leaves lines of one width, most followed by a piece that starts no log record;
    a word wrap, lines near the widest, followed by a piece whose first word would not have
    fitted after them.  A log's own prose lines between records show neither.
    """
    raw = head.decode("utf-8", "replace").split("\n")
    raw = [line.rstrip("\r") for line in raw[:-1]]      # (the last: cut, or empty)
    lines = [line.rstrip() for line in raw]
    pairs = [(a, b, r) for a, b, r in zip(lines, lines[1:], raw) if len(a) >= MIN_WRAPPED_WIDTH]
    if not pairs:
        return None

    def piece(b: str) -> bool:      # (an indented line is a list's or a table's, likelier)
        return bool(b) and not b[0].isspace() and not is_capture_line(b) \
            and not WRAP_BREAK.match(b)

    # A hard wrap: the lines a piece follows are nearly all the pane's width, as printed, and
    # few end on a blank (a word wrap's end anywhere within it, on the blank it cut at or
    # where that was trimmed).
    widest = max(len(r) for _, _, r in pairs)
    cut = [r for _, b, r in pairs if piece(b)]
    # (the width most of them share: a line a glitch spliced onto another is wider)
    width = max(Counter(map(len, cut)).items(), key=lambda c: (c[1], c[0]), default=(0, 0))[0]
    at_width = [r for r in cut if len(r) == width]
    if len(cut) >= 3 and 3 * len(at_width) >= 2 * len(cut) \
            and 2 * sum(r[-1].isspace() for r in at_width) <= len(at_width):
        return Pane("hard", len(at_width[0]))
    # A word wrap: lines near the widest, followed by a piece whose first word would not
    # have fitted after them.
    near = [(a, b) for a, b, r in pairs if len(r) >= widest - 20]
    cut = [(a, b) for a, b in near if piece(b)
           and len(a) + 1 + len(FIRST_WORD.match(b).group(1)) > widest]
    if not (len(cut) >= 2 and 4 * len(cut) >= len(near)):
        return None
    return Pane("word", widest)
