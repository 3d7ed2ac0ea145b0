"""Read JSON files one value at a time (never the whole file), with line numbers.

``records(fh, arrays=..., dropped=...)`` yields every top-level value of a file of concatenated
JSON values (one object, JSON lines, vLLM ``--append-result`` files), reading a top-level
object member by member and the arrays under ``arrays`` and ``dropped`` item by item,
``dropped`` ones not kept (a vLLM ``--save-detailed`` result is one object whose per-request
arrays are most of the file); ``members(fh, into=...)`` walks one top-level object key by key
and yields the items of the array under ``into`` one by one (GuideLLM's ``benchmarks``).

Python's decoder is used, so ``NaN`` / ``Infinity`` (which ``json.dump`` writes for an
infinite request rate, and vLLM and SGLang result files hold) are read: ijson, the streaming
library, refuses them in every backend (3.6: "lexical error: invalid char").
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

    def _fill(self, size: int = CHUNK) -> bool:
        more = self.fh.read(size)
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
                # The value goes on past the buffer: read as much again as is buffered, so
                # that a big value is decoded a few times, not once per chunk (a 52 MB
                # result object took 347 s that way).
                pending = len(self.buf) - self.pos
                if pending < MAX_VALUE and self._fill(max(CHUNK, pending)):
                    continue
                raise
            # A number or literal cut at the buffer's end may go on in the next chunk.
            if end == len(self.buf) and not self.eof and self._fill():
                continue
            self.line += self.buf.count("\n", self.pos, end)
            self.pos = end
            return value, start


def members(fh: IO[str], into: str) -> Iterator[tuple[str, Any, int]]:
    """(key, value, line) of a top-level object; the array under ``into`` item by item."""
    for key, value, line, kind in _members(JsonStream(fh), frozenset({into})):
        if kind != "array":
            yield key, value, line


def records(fh: IO[str], arrays: frozenset[str] = frozenset(),
            dropped: frozenset[str] = frozenset()) -> Iterator[tuple[Any, int]]:
    """(value, line it starts on) for every top-level value of a file of concatenated JSON
    values; a top-level object is read a member at a time, the arrays under ``arrays`` and
    ``dropped`` an item at a time, and ``dropped`` members are not kept."""
    stream = JsonStream(fh)
    while (first := stream.peek(" \t\r\n,")) is not None:
        if first != "{":
            yield stream.value()
            continue
        start = stream.line
        record: dict[str, Any] = {}
        for key, value, _, kind in _members(stream, arrays | dropped):
            if key in dropped:
                continue
            if kind == "item":
                record[key].append(value)
            else:
                record[key] = [] if kind == "array" else value
        yield record, start


def _members(stream: JsonStream, arrays: frozenset[str]
             ) -> Iterator[tuple[str, Any, int, str]]:
    """(key, value, line, kind) for each member of the object that comes next: ``kind`` is
    "value", or for an array under a key in ``arrays`` "array" (its value None) followed by
    one "item" for each of its items."""
    stream.take("{")
    for _ in _elements(stream, "}"):
        key, line = stream.value()
        if not isinstance(key, str):
            raise ValueError(f"line {line}: expected a key, got {key!r}")
        stream.take(":")
        if key in arrays and stream.peek() == "[":
            stream.take("[")
            yield key, None, line, "array"
            for _ in _elements(stream, "]"):
                item, item_line = stream.value()
                yield key, item, item_line, "item"
        else:
            value, value_line = stream.value()
            yield key, value, value_line, "value"


def _elements(stream: JsonStream, close: str) -> Iterator[None]:
    """Once per element of the object or array whose opening bracket was just taken, the
    commas between them checked as JSON has them; takes the closing bracket."""
    if stream.peek() == close:
        stream.take(close)
        return
    while True:
        yield
        if stream.peek() != ",":
            stream.take(close)      # "expected ']'" when it is not there either
            return
        stream.take(",")
