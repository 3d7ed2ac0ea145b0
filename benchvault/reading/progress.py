"""Bytes-read progress for the whole-file formats: a 500 MB result JSON is one item to ingest,
and its bar should move as it is read, as a log's does (LineSource reports each chunk).

Ingest sets the callback around a whole-file format's ``read``; a format opens its file with
``open_text`` and the bytes read through it are reported (a big file's own worker reports
them to the writer, ingest/stream.py).  Without a callback (a worker reading small files, a test)
``open_text`` is ``open``.
"""

from __future__ import annotations

import io
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Callable, Iterator

_on_bytes: Callable[[int], None] | None = None


@contextmanager
def reporting(on_bytes: Callable[[int], None] | None) -> Iterator[None]:
    """Report to ``on_bytes`` (the number of bytes read since the last call) what files opened
    with ``open_text`` read while this is entered."""
    global _on_bytes
    before, _on_bytes = _on_bytes, on_bytes
    try:
        yield
    finally:
        _on_bytes = before


class _Counted(io.RawIOBase):
    def __init__(self, raw: io.RawIOBase, on_bytes: Callable[[int], None]):
        self.raw, self.on_bytes = raw, on_bytes

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        n = self.raw.readinto(buffer) or 0
        if n:
            self.on_bytes(n)
        return n

    def close(self) -> None:
        self.raw.close()
        super().close()


def open_text(path: str | Path, encoding: str, errors: str = "replace",
              newline: str | None = None) -> IO[str]:
    """``open(path, encoding=..., errors=..., newline=...)``, its bytes reported if asked."""
    if _on_bytes is None:
        return open(path, encoding=encoding, errors=errors, newline=newline)
    counted = _Counted(open(path, "rb", buffering=0), _on_bytes)
    return io.TextIOWrapper(io.BufferedReader(counted, 1 << 20), encoding=encoding,
                            errors=errors, newline=newline)
