"""Read JSON files one value at a time (never the whole file), with line numbers.

``values(fh)`` yields every top-level value of a file of concatenated JSON values (one object,
JSON lines, vLLM ``--append-result`` files); ``members(fh, into=...)`` walks one top-level
object key by key and yields the items of the array under ``into`` one by one (GuideLLM's
``benchmarks``).  Python's decoder is used, so ``NaN`` / ``Infinity`` (which ``json.dump``
writes) are read.
"""

from __future__ import annotations

import json
from typing import IO, Any, Iterator

CHUNK = 1 << 16
MAX_VALUE = 512 << 20          # one value bigger than this is not a result file's


class JsonStream:
    def __init__(self, fh: IO[str]):
        self.fh, self.buf, self.pos, self.eof, self.line = fh, "", 0, False, 1
        self.decoder = json.JSONDecoder()

    def _fill(self) -> bool:
        more = self.fh.read(CHUNK)
        if not more:
            self.eof = True
            return False
        self.buf, self.pos = self.buf[self.pos:] + more, 0
        return True

    def peek(self, skip: str = " \t\r\n") -> str | None:
        while True:
            while self.pos < len(self.buf) and self.buf[self.pos] in skip:
                self.line += self.buf[self.pos] == "\n"
                self.pos += 1
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self._fill():
                return None

    def take(self, char: str) -> None:
        if self.peek() != char:
            raise ValueError(f"line {self.line}: expected {char!r}")
        self.pos += 1

    def value(self) -> tuple[Any, int]:
        """The next JSON value and the line it starts on."""
        self.peek()
        start = self.line
        while True:
            try:
                value, end = self.decoder.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError:
                if len(self.buf) - self.pos < MAX_VALUE and self._fill():
                    continue
                raise
            # A number or literal cut at the buffer's end may go on in the next chunk.
            if end == len(self.buf) and not self.eof and self._fill():
                continue
            self.line += self.buf.count("\n", self.pos, end)
            self.pos = end
            return value, start


def values(fh: IO[str]) -> Iterator[tuple[Any, int]]:
    stream = JsonStream(fh)
    while stream.peek(" \t\r\n,") is not None:
        yield stream.value()


def members(fh: IO[str], into: str) -> Iterator[tuple[str, Any, int]]:
    """(key, value, line) of a top-level object; the array under ``into`` item by item."""
    stream = JsonStream(fh)
    stream.take("{")
    while stream.peek(" \t\r\n,") not in (None, "}"):
        key, _ = stream.value()
        stream.take(":")
        if key == into and stream.peek() == "[":
            stream.take("[")
            while stream.peek(" \t\r\n,") not in (None, "]"):
                item, line = stream.value()
                yield key, item, line
            stream.take("]")
        else:
            value, line = stream.value()
            yield key, value, line
