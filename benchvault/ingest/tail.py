"""Tail: a file still being written, read as far as its bytes go, then waiting for more.

A file is read in one pass of generators (the line reader, the segmenter, the builders of
parse_file) whose state -- the block open, the heading and label over it, the line number --
is what lets the next bytes be read as an ingest of the whole file reads them.  So the pass
is not started again when bytes are appended: it runs in a thread of its own and, at the
end of the bytes written so far (ReadReport.follow), waits there until it is told to read
on, or that the file ends there.

Only one side runs at a time: :meth:`Tail.take` hands the turn to the reader and waits for
it back.  So nothing the reader touches is touched by anyone else while it runs, and the
caller alone writes the warehouse.  The thread is a call stack kept for later, not a
second worker.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from ..reading.lines import ReadReport
from .parse import parse_file


class _Closed(BaseException):
    """Raised in the reader's thread to end it (not an Exception: nothing on the way may
    take it for a reading error)."""


class Tail:
    """``parse_file(path)`` for a file that is still being written (see the module)."""

    BATCH = 256      # items handed over at a time: the caller stores them as they come
    SLICE = 0.5      # seconds the reader runs before handing the turn back (a big file)

    def __init__(self, path: Path, tags: dict[str, str] | None = None):
        self.report = ReadReport(on_bytes=self._chunk_read, follow=self._at_end)
        self.caught_up = False      # the reader waits at the end of the bytes written
        self.done = False           # the file is read to its end
        self.error: BaseException | None = None     # what ended the reading, if not its end
        self.consumed = 0           # bytes the reader took so far (of a text file)
        self._items: list[Any] = []
        self._final = False
        self._closing = False
        self._since = 0.0
        self._turn = threading.Semaphore(0)      # the reader's
        self._back = threading.Semaphore(0)      # the caller's
        self._thread = threading.Thread(target=self._read, args=(path, tags), daemon=True,
                                        name=f"tail {path.name}")
        self._thread.start()

    def take(self, final: bool = False) -> list[Any]:
        """The next items in file order, at most BATCH: the reader runs until it has them,
        has read every byte written so far (``caught_up``), has run SLICE seconds, or has
        reached the end (``done``; ``error`` says if a failure ended it).  ``final``: the
        bytes written now end the file, and what is open at their end is read as an ingest
        of the whole file reads it (a block complete, cut short, or a warning)."""
        if self.done:
            return []
        self._final, self.caught_up = final, False
        self._turn.release()
        self._back.acquire()
        items, self._items = self._items, []
        return items

    def close(self) -> None:
        """Stop reading (the file was replaced, or the watch ends before the file does)."""
        if not self.done:
            self._closing = True
            self._turn.release()
            self._back.acquire()
        self._thread.join()

    # -- in the reader's thread ------------------------------------------------------------
    def _read(self, path: Path, tags: dict[str, str] | None) -> None:
        try:
            self._wait_turn()
            for item in parse_file(path, tags, self.report):
                self._items.append(item)
                if len(self._items) >= self.BATCH:
                    self._hand_back()
        except _Closed:
            pass
        except BaseException as exc:  # noqa: BLE001 - the caller's to report
            self.error = exc
        finally:
            self.done = True
            self._back.release()

    def _hand_back(self) -> None:
        self._back.release()
        self._wait_turn()

    def _wait_turn(self) -> None:
        self._turn.acquire()
        if self._closing:
            raise _Closed
        self._since = time.monotonic()

    def _at_end(self) -> bool:
        """ReadReport.follow: False once the file is to end here (it was read to the end of
        what is written); else wait for the caller, then True: read on (after a ``final``
        take too: what was written meanwhile is part of the file)."""
        if self._final:
            return False
        self.caught_up = True
        self._hand_back()
        return True

    def _chunk_read(self, size: int) -> None:
        """ReadReport.on_bytes: a big file's reading hands the turn back now and then."""
        self.consumed += size
        if time.monotonic() - self._since > self.SLICE:
            self._hand_back()
