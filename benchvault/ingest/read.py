"""Read: a file cut into the pieces its formats parse, in file order.

A file a whole-file format recognises (a result JSON, a llama-bench CSV) is that format's to
read as a whole (:func:`whole_format`).  Any other file -- a note, a log, a terminal capture --
is read line by line and cut by the segmenter (``reading/``) into pieces: result blocks,
lines a line format reads, blocks cut short or left unclosed, output files pasted whole, and
rows the fast lane read already.  The file's own problems (binary, not UTF-8) follow its
pieces as warnings.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

from ..parsers import file_formats
from ..parsers.base import FileFormat
from ..reading.lines import SNIFF_BYTES, LineSource, ReadReport
from .outcome import IngestWarning

# The segmenter and the prefilter are imported when a file is cut: an ingest of unchanged
# files (the usual re-run) starts without them.


def whole_format(path: Path, head: bytes) -> FileFormat | None:
    """The whole-file format that reads ``path``, if one recognises its first bytes."""
    return next((f for f in file_formats() if f.sniff(head[:SNIFF_BYTES], str(path))), None)


PREFILTER_MIN_BYTES = 1 << 20


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def head_of(path: Path) -> bytes:
    """The first bytes, for the whole-file formats' and the markdown sniffs."""
    try:
        with open(path, "rb") as fh:
            return fh.read(1 << 16)
    except OSError:
        return b""  # LineSource says why


def pieces(path: Path, head: bytes, tags: dict[str, str] | None, report: ReadReport
           ) -> Iterator[Any]:
    """The segmenter's pieces of ``path`` (see reading/segmenter.py), then the file's own
    problems as warnings.  ``head``: its first bytes (head_of)."""
    from ..reading import prefilter
    from ..reading.doctype import sniff_markdown
    from ..reading.segmenter import Segmenter
    from ..reading.wrap import pane_of

    markdown = sniff_markdown(str(path), head)
    pane = None if markdown else pane_of(head)
    segmenter = Segmenter(str(path), tags=tags, markdown=markdown, pane=pane)
    # A capture pasted from a terminal, a wrapped one above all, is read line by line (its
    # pieces may have lost the prefilter's words); the prefilter skips the idle lines of logs.
    skips = pane is None and _size(path) >= PREFILTER_MIN_BYTES
    source = LineSource(path, report, prefilter.for_formats() if skips else None)
    try:
        yield from segmenter.run(source)
    finally:
        source.close()
    if report.binary:
        yield IngestWarning(1, "binary file (NUL bytes, not UTF-16): not read")
    for lineno in report.fallback_lines[:1]:
        more = len(report.fallback_lines) - 1
        yield IngestWarning(lineno, "not UTF-8; read as Latin-1" + (f" (and {more} more lines)"
                                                                 if more else ""))
