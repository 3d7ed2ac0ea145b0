"""A program's output file pasted inside a note: a ``--save-result`` JSON, llama-bench's
``-o json/jsonl/csv/sql``, a GuideLLM ``benchmarks.json``.

People paste the file (``cat result.json``, a fenced block, a ``# ``-commented copy in a
script) beside the printed result and the command that wrote it.  The segmenter collects the
lines of such a copy as a :class:`Region` (a JSON value by its brackets, then any JSON values on
the lines right after it; CSV or SQL to its last line), and the whole-file format that
recognises the text reads it exactly as it reads the file, with the note's context around it.
Lines no format recognises are read again as ordinary lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..parsers.base import Context, FileFormat
from .brackets import json_nesting

# A line that starts a JSON value: `{`, `[{`, `[ {`, or `[` alone (a pretty-printed array).
JSON_START = re.compile(r"^\s*(?:\[\s*)?\{|^\s*\[\s*$")
# The same, as the prefilter finds it in raw bytes (after a comment or quote prefix): an
# opener alone on its line (pretty-printed JSON)...
_PREFIX = rb"^[ \t#>/;-]*"
JSON_OPENER_BYTES = _PREFIX + rb"(?:\[[ \t]*)?\{[ \t\r]*$|" + _PREFIX + rb"\[[ \t\r]*$"


def json_start_patterns(formats: tuple[FileFormat, ...]) -> tuple[bytes, ...]:
    """...or a `{` line holding a key one of ``formats`` writes (a JSON-lines result).  A
    structured log of `{...}` lines holds none of them, and the prefilter skips it whole."""
    keys = sorted({k.encode() for f in formats for k in f.json_keys})
    keyed = _PREFIX + rb"(?:\[[ \t]*)?\{[^\n]*(?:" + b"|".join(map(re.escape, keys)) + rb")"
    return (JSON_OPENER_BYTES, keyed) if keys else (JSON_OPENER_BYTES,)
SQL_START = re.compile(r"^\s*CREATE\s+TABLE\b", re.I)
SQL_STATEMENT = re.compile(r"^\s*(?:CREATE\s+TABLE|INSERT\s+INTO)\b", re.I)
FENCE = re.compile(r"^\s*(?:`{3,}(?!.*`)|~{3,})")   # (```cmd``` is one line of code)
# A line of pretty-printed JSON starts with one of these (a line that does not is one typed
# into the paste, or a prompt).
JSON_LINE = re.compile(r'^\s*(?:["{}\[\],:\d-]|true\b|false\b|null\b|NaN\b|-?Infinity\b|$)')
# Lines not the copy's (a line typed into it, a prompt) it may go on after, one at a time.
MAX_FOREIGN = 1
MAX_LINES = 100_000
MAX_CHARS = 64 << 20
SNIFF_CHARS = 1 << 16


class Openers:
    """``openers(text)``: json / sql / csv when ``text`` may be the first line of a pasted
    output file of one of ``formats``.  Asked of every line outside a block, so it is built
    once per reader and checks the cheap things first."""

    def __init__(self, formats: tuple[FileFormat, ...]):
        self.formats = formats
        # lower() and `in` are ~10x faster than one caseless regex over a 250-byte log line
        self.markers = tuple({m.lower() for f in formats for m in f.embed_markers})

    def __call__(self, text: str) -> str | None:
        if ("{" in text or "[" in text) and JSON_START.match(text):
            return "json"
        lowered = text.lower()
        if not any(m in lowered for m in self.markers):
            return None
        if SQL_START.match(text):
            return "sql"
        if text.count(",") >= 2 and any(f.sniff(text.encode(), "") for f in self.formats):
            return "csv"
        return None


@dataclass
class Region:
    """The logical lines of one pasted copy, gathered until its kind says it ended."""

    kind: str
    formats: tuple[FileFormat, ...]
    items: list[tuple[int, int, str]] = field(default_factory=list)
    depth: int = 0
    chars: int = 0
    statement_open: bool = False     # SQL: the last statement has no `;` yet
    hopeless: bool = False           # past what a sniff reads, and no format knows it
    # A line not the copy's, and blank lines after it, until a line of the copy says it goes
    # on (then it is ``skipped``: the format reads the copy without it) or the copy ends.
    pending: list[tuple[int, int, str]] = field(default_factory=list)
    skipped: list[tuple[int, int, str]] = field(default_factory=list)

    def take(self, start: int, end: int, text: str) -> bool:
        """Add the line if it is part of the copy; False: the copy ended before it."""
        if len(self.items) >= MAX_LINES or self.chars >= MAX_CHARS or self.hopeless:
            return False
        if self.items and not self._continues(text):
            if self.pending and not text.strip():
                self.pending.append((start, end, text))
                return True
            if self.pending or FENCE.match(text) or not text.strip() \
                    or len(self.skipped) >= MAX_FOREIGN:
                return False
            self.pending.append((start, end, text))
            return True
        if self.pending:
            if not text.strip():
                self.pending.append((start, end, text))
                return True
            self.skipped.append(self.pending[0])
            self.items.extend(self.pending[1:])
            self.pending = []
        self.items.append((start, end, text))
        before, self.chars = self.chars, self.chars + len(text) + 1
        if self.kind in ("json", "sql"):
            self.depth += json_nesting(text)
        if before <= SNIFF_CHARS < self.chars:
            # A brace in prose that never closes must not hold a whole log back.
            self.hopeless = self.recognised_by() is None
        elif self.kind == "json" and self.depth <= 0 and len(self.items) == 1:
            # One whole value on its line no format knows (a structured log line, a config
            # snippet): the lines after it are not gathered behind it.
            self.hopeless = self.recognised_by() is None
        if self.kind == "sql" and text.strip():
            self.statement_open = not text.rstrip().endswith(";")
        return True

    def _continues(self, text: str) -> bool:
        if self.kind == "json":
            if self.depth > 0:
                return not FENCE.match(text) and JSON_LINE.match(text) is not None
            return JSON_START.match(text) is not None     # JSON lines: one value a line
        if FENCE.match(text):
            return False
        if self.kind == "csv":
            return bool(text.strip()) and "," in text
        # SQL: a statement's lines, the blank lines between statements, the next statement.
        return self.depth > 0 or self.statement_open or not text.strip() \
            or SQL_STATEMENT.match(text) is not None

    def trailing_blanks(self) -> list[tuple[int, int, str]]:
        """Blank lines at the end belong to what follows, not to the copy (and so does a
        line not the copy's that no line of it followed)."""
        cut = len(self.items)
        while cut > 1 and not self.items[cut - 1][2].strip():
            cut -= 1
        tail, self.items = self.items[cut:] + self.pending, self.items[:cut]
        self.pending = []
        return tail

    def given_back(self) -> list[tuple[int, int, str]]:
        """All its lines, in order, when no format knows the copy: read as ordinary lines."""
        back = sorted([*self.items, *self.skipped])
        self.items, self.skipped = [], []
        return back

    @property
    def text(self) -> str:
        return "\n".join(text for _, _, text in self.items) + "\n"

    def recognised_by(self) -> FileFormat | None:
        if self.hopeless:
            return None
        head = self.text[:SNIFF_CHARS].encode("utf-8", errors="replace")
        return next((f for f in self.formats if f.sniff(head, "")), None)


@dataclass
class Embedded:
    """A pasted output file the segmenter found: ``format`` reads ``text``; ``lines[i]`` is
    the note's line number of the copy's line i+1."""

    format: FileFormat
    text: str
    lines: list[int]
    line_start: int
    line_end: int
    context: Context
    skipped: list[tuple[int, str]] = field(default_factory=list)   # (line, text) not read
