"""The timestamps a file's log lines printed, by line: when the runs in it were.

`vllm bench serve` logs a few lines before its result (`INFO 11-23 10:07:02 [datasets.py:507]
Sampling input_len ...`); no format reads them, yet they are the only clock a client capture
has.  :class:`LogClock` finds them again once the file is parsed: one pass over its bytes with
one regex (the prefilter let the segmenter skip these lines, so they were never decoded), for
the two prefixes logs print a time in:

    INFO 11-23 10:07:02 [file.py:12] ...         vLLM's logger, no year (`MM-DD HH:MM:SS`)
    (MainProcess pid=7) WARNING 11-23 10:07:02 ...
    [2025-01-05 11:32:46] ...                    a dated line (SGLang, a script, ISO 8601)
    2024-03-01T12:00:05.123Z ...

A stamp is kept as printed, to the second: `11-23 10:07:02` or `2025-01-05 11:32:46`.
"""

from __future__ import annotations

import bisect
import codecs
import re
from pathlib import Path
from typing import Iterable

# Found by the `:MM:SS` of a time (a literal first: the scan runs at memchr speed), then read
# back to the start of its line.
_TIME = re.compile(rb":\d\d:\d\d")
_STAMP = re.compile(
    rb"(?:(?:INFO|WARNING|WARN|DEBUG|ERROR|CRITICAL)[ \t]+(\d\d-\d\d)[ \t]+"
    rb"|^[ \t]*\[?(\d{4}-\d\d-\d\d)[ T])(\d\d:\d\d:\d\d)\Z", re.M)
CHUNK = 1 << 20


class LogClock:
    """``last_between(after, before)``: the last time printed on a line after line ``after``
    and before line ``before`` (1-based), or None.

    ``before``: the lines it will be asked about.  A chunk of the file that holds none of them
    only gives its last time, found from its end (a server log's stats lines print a time
    every few seconds: in a 1 GB log, reading each of them would cost more than the rest of
    the clock)."""

    def __init__(self, path: Path, before: Iterable[int]):
        self.lines: list[int] = []
        self.stamps: list[str] = []
        self._wanted = sorted(set(before))
        try:
            with open(path, "rb") as fh:
                self._scan(fh)
        except OSError:
            pass  # the file went away since it was read: no clock

    def _scan(self, fh) -> None:
        head = fh.read(2)
        if head in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
            return                      # UTF-16 text: its bytes hold no ASCII stamp
        fh.seek(0)
        line, carry = 1, b""
        while self._wanted and line < self._wanted[-1]:     # (no time after it is asked for)
            data = fh.read(CHUNK)
            if not data:
                data, carry = carry, b""
                if not data:
                    return
            else:
                data = carry + data
                cut = data.rfind(b"\n") + 1
                if not cut:             # one line longer than a chunk: read on
                    carry = data
                    continue
                data, carry = data[:cut], data[cut:]
            lines = data.count(b"\n")
            # A line asked about inside this chunk: each of its times may be the answer.
            at = bisect.bisect_right(self._wanted, line)
            if at < len(self._wanted) and self._wanted[at] <= line + lines:
                self._every(data, line)
            else:
                self._last(data, line)
            line += lines

    def _add(self, line: int, stamp: str) -> None:
        if self.lines and self.lines[-1] == line:
            self.stamps[-1] = stamp     # the last on a line
        else:
            self.lines.append(line)
            self.stamps.append(stamp)

    def _every(self, data: bytes, line: int) -> None:
        at = 0
        for found in _TIME.finditer(data):
            stamp = _stamp(data, found)
            if stamp is not None:
                line += data.count(b"\n", at, stamp[0])
                at = stamp[0]
                self._add(line, stamp[1])

    def _last(self, data: bytes, line: int) -> None:
        """Only the chunk's last time: looked for in ever longer tails of it."""
        size = 1 << 12
        while True:
            start = max(0, len(data) - size)
            if start:
                start = data.find(b"\n", start) + 1 or len(data)
            last = None
            for found in _TIME.finditer(data, start):
                last = _stamp(data, found) or last
            if last is not None:
                self._add(line + data.count(b"\n", 0, last[0]), last[1])
                return
            if not start:
                return
            size *= 16

    def last_between(self, after: int, before: int) -> str | None:
        i = bisect.bisect_left(self.lines, before) - 1
        return self.stamps[i] if i >= 0 and self.lines[i] > after else None


def _stamp(data: bytes, found: re.Match) -> tuple[int, str] | None:
    """The start of the line a `:MM:SS` was found on and its time, when the line begins with
    a logger's prefix."""
    start = data.rfind(b"\n", 0, found.start()) + 1
    match = _STAMP.search(data, start, found.end())
    if match is None:
        return None
    return start, ((match[1] or match[2]) + b" " + match[3]).decode("ascii")
