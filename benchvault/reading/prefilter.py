"""Which lines of a chunk of bytes anything could care about, found at C speed.

Between result blocks a log is mostly lines no format reads and no context rule notices
(request logs, prose).  Every format and every context rule declares literal *markers*, one of
which each line it acts on must hold (a block's first line holds `Serving Benchmark Result`, a
heading holds `#`, a command holds `bench`/`serve`/...).  A line holding none of them, and
nothing a cleaning step could turn into one (an ANSI code, a non-ASCII character), is *inert*:
reading it changes nothing, so the segmenter may jump over it while no block is open.

The markers are searched all at once with Hyperscan (Intel's multi-pattern matcher) when it is
installed, else with one alternation regex.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable, Iterator

try:  # pragma: no cover - the fallback is exercised in tests by forcing it
    import hyperscan
except ImportError:  # pragma: no cover
    hyperscan = None

# Bytes a cleaning step (lines.clean_line) could turn into a marker: ANSI codes split words;
# ftfy maps fullwidth letters and ligatures to ASCII, so every non-ASCII line is looked at.
_NON_ASCII = re.compile(rb"[\x80-\xff]")
# The `|` of a table, not of a chat template's special token (`<|begin_of_text|>` in every
# `Received request ... prompt:` line a vLLM server logs): one in ten lines of a server log.
_TABLE_PIPE = rb"(?:^|[^<\n])\|(?:[^>\n]|$)"


def _shortest(markers: set[bytes]) -> list[bytes]:
    """``markers`` without those that hold another (a line with `api_server` holds `serve`):
    fewer patterns scan faster, and the lines found are the same."""
    return sorted(m for m in markers if not any(o != m and o in m for o in markers))


class Prefilter:
    """``candidates(chunk)``: start offsets of the lines of ``chunk`` that hold a marker."""

    def __init__(self, markers: Iterable[str], caseless: Iterable[str] = (),
                 use_hyperscan: bool = True, patterns: Iterable[bytes] = ()):
        folded = _shortest({m.lower().encode() for m in caseless if m})
        # An exact marker that holds a caseless one is found by that one already.
        exact = _shortest({m.encode() for m in markers if m
                           if not any(f in m.lower().encode() for f in folded)})
        # Regexes for what no literal marks (a line that opens a JSON value).
        patterns = tuple(patterns)
        self.markers = (tuple(exact), tuple(folded), patterns)
        self._database = None
        if hyperscan is not None and use_hyperscan:
            expressions = [_pattern(m) for m in exact] + [re.escape(m) for m in folded] \
                + list(patterns)
            flags = [hyperscan.HS_FLAG_MULTILINE] * len(exact) \
                + [hyperscan.HS_FLAG_CASELESS] * len(folded) \
                + [hyperscan.HS_FLAG_MULTILINE] * len(patterns)
            self._database = _compiled(expressions, flags)
        else:
            alternatives = [_pattern(m) for m in exact]
            alternatives += [b"(?i:" + re.escape(m) + b")" for m in folded]
            alternatives += [b"(?:" + p + b")" for p in patterns]
            self._regex = re.compile(b"|".join(alternatives), re.M)

    def _marker_ends(self, chunk: bytes, end: int) -> list[int]:
        view = memoryview(chunk)[:end]
        if self._database is not None:
            ends: list[int] = []
            self._database.scan(view, match_event_handler=lambda _id, _from, to, _f, _c:
                                ends.append(to))
            return ends
        return [m.end() for m in self._regex.finditer(view)]

    def candidates(self, chunk: bytes, end: int | None = None) -> list[int]:
        """Sorted start offsets of the candidate lines in ``chunk[:end]`` (lines end at
        ``\n``): lines holding a marker or a non-ASCII byte."""
        end = len(chunk) if end is None else end
        hits = [match_end - 1 for match_end in self._marker_ends(chunk, end)]
        if not chunk.isascii():
            hits.extend(_first_non_ascii_per_line(chunk, end))
        starts: list[int] = []
        line_end = -1
        for hit in sorted(hits):
            if hit <= line_end:
                continue                       # another hit in a line already taken
            starts.append(chunk.rfind(b"\n", 0, hit) + 1)
            line_end = chunk.find(b"\n", hit, end)
            line_end = end if line_end < 0 else line_end
        return starts


def _compiled(expressions: list[bytes], flags: list[int]):
    """The Hyperscan database of ``expressions``: from the cache file of this very set of
    patterns when one was compiled before (like lark's grammar cache, in the temp directory),
    else compiled and saved there.  A compile is 20 ms of every ingest's start-up, in every
    worker process too; loading it back, 0.1 ms."""
    import hashlib
    import os
    import tempfile
    from pathlib import Path

    key = hashlib.sha256(repr((hyperscan.__version__, expressions, flags)).encode())
    cache = Path(tempfile.gettempdir()) / f".benchvault_hyperscan_{key.hexdigest()[:40]}.db"
    try:
        held = cache.stat()
        # Only a file of this user's that no one else can write.
        if held.st_uid == os.getuid() and not held.st_mode & 0o022:
            database = hyperscan.loadb(cache.read_bytes(), hyperscan.HS_MODE_BLOCK)
            database.scratch = hyperscan.Scratch(database)
            return database
    except (OSError, hyperscan.error):
        pass        # none yet, or not one to trust: compiled again
    database = hyperscan.Database()
    database.compile(expressions=expressions, ids=list(range(len(expressions))),
                     elements=len(expressions), flags=flags)
    try:
        part = cache.with_name(f"{cache.name}.{os.getpid()}.part")
        part.write_bytes(hyperscan.dumpb(database))
        part.chmod(0o600)
        os.replace(part, cache)      # whole or not at all, whoever else writes it meanwhile
    except OSError:
        part.unlink(missing_ok=True)
    return database


def _pattern(marker: bytes) -> bytes:
    return _TABLE_PIPE if marker == b"|" else re.escape(marker)


def _first_non_ascii_per_line(chunk: bytes, end: int) -> Iterator[int]:
    """Offset of the first non-ASCII byte of each line that has one (one search per line, not
    one hit per byte of a line in another script)."""
    pos = 0
    while (match := _NON_ASCII.search(chunk, pos, end)) is not None:
        yield match.start()
        line_end = chunk.find(b"\n", match.start(), end)
        if line_end < 0:
            return
        pos = line_end + 1


@lru_cache(maxsize=None)
def for_formats(use_hyperscan: bool = True) -> Prefilter:
    """The prefilter for every registered format and the segmenter's context rules."""
    from ..parsers import block_formats, file_formats, line_formats
    from .embedded import json_start_patterns
    from .segmenter import CONTEXT_MARKERS

    exact = list(CONTEXT_MARKERS)
    caseless: list[str] = []
    for fmt in block_formats():
        exact.extend(fmt.markers)
        caseless.extend(fmt.preamble_markers)
    for fmt in line_formats():
        exact.extend(fmt.markers)
    for fmt in file_formats():          # the first line of one pasted into a log
        caseless.extend(fmt.embed_markers)
    return Prefilter(exact, caseless, use_hyperscan,
                     patterns=json_start_patterns(tuple(file_formats())))
