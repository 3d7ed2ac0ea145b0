"""Many small files read on every core while this process writes them, in order.

SQLite has one writer, and the order of writing -- so of identity decisions -- stays the
order of the paths.  ``jobs - 1`` worker processes are forked and the changed files go to them
in chunks.  This process writes each file in turn.  When the next file's chunk has not been
started by a worker it reads that chunk itself, and while a worker is still reading it, it
reads the nearest chunk no worker has started instead of waiting.  So ``-j 2`` on two cores is
one worker and this process, each on a core of its own.  The shapes each learns, the others
are given (shapeshare.py).

The command line starts this before it loads the readers and the warehouse's libraries
(``start`` needs only sqlite3): the worker loads its own while this process loads them too,
on the core that would otherwise wait for it, and it reads its first files while this one is
still opening the warehouse.  A worker forked from a process that has all of that loaded would
instead copy, page by page, the memory it touches (5,500 page faults, 55 ms, over 500 notes).
This module imports nothing heavy for that reason.
"""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from .files import stat_says, stored

if TYPE_CHECKING:
    from .ingest import Parsing

# Files up to this size are read by workers when there are several; a bigger one is read by
# the writer, streaming (or by a worker of its own, see stream.py), so that its rows are never
# all in memory at once.
PARALLEL_MAX_BYTES = 8 << 20
# Files a worker reads per task: they come back together, so this process is woken once per
# chunk, not once per note.
CHUNK_FILES = 8


def default_jobs() -> int:
    """One process per core (up to 4), this one included."""
    return max(1, min(os.cpu_count() or 1, 4))


def start(db: sqlite3.Connection | None, paths: list[Path], tags: dict[str, str] | None,
          force: bool, jobs: int) -> "Parallel | None":
    """Start reading every small file of ``paths`` not stored in ``db`` as it is now (None:
    fewer than two such files, nothing to share out).  ``db``: any connection to the
    warehouse (None: nothing stored yet)."""
    todo = []
    for path in paths:
        try:
            stat = path.stat()
            if not path.is_file() or stat.st_size > PARALLEL_MAX_BYTES:
                continue
            if not force and db is not None and stat_says(stored(db, path), stat) is True:
                continue
        except (OSError, sqlite3.Error):
            continue            # ingest_file says what is wrong with it
        todo.append(path)
    return Parallel(todo, tags, jobs) if len(todo) >= 2 else None


def can_fork() -> bool:
    """Workers can be forked (not on Windows)."""
    return "fork" in multiprocessing.get_all_start_methods()


class Parallel:
    def __init__(self, todo: list[Path], tags: dict[str, str] | None, jobs: int):
        self.tags = tags
        self.exchange = None
        # Each file's reading once read (None: failed, to be read again by ingest_file,
        # which reports why with file:line).
        self.done: dict[Path, Parsing | None] = {}
        workers = max(1, min(jobs - 1, len(todo) - 1))
        fork = can_fork()
        if fork:
            from .shapeshare import Exchange, join

            # Forked with the exchange's file open; this process takes part too.
            self.exchange = Exchange()
            join(self.exchange)
        self.pool = ProcessPoolExecutor(
            max_workers=workers, mp_context=multiprocessing.get_context(
                "fork" if fork else "spawn"), initializer=_worker_starts,
            initargs=(self.exchange, os.getpid()))
        self.chunks: list[tuple[list[Path], Future]] = []
        self.chunk_of: dict[Path, int] = {}
        for chunk in _chunks(todo, workers + 1):
            self.chunk_of.update((path, len(self.chunks)) for path in chunk)
            self.chunks.append((chunk, self.pool.submit(_parse_chunk, [str(p) for p in chunk],
                                                        tags)))
        self.unstarted_from = 0     # every chunk before this one a worker took or was read

    def take(self, path: Path) -> Parsing | None:
        """``path``'s reading, by a worker or by this process (None: read it in ingest_file:
        not one of the files shared out, or its reading failed)."""
        if path in self.done:
            return self.done.pop(path)
        index = self.chunk_of.get(path)
        if index is None:
            return None
        chunk, future = self.chunks[index]
        while not future.done():
            if future.cancel():                  # no worker has started it: read it here
                self._read_here(chunk)
                return self.done.pop(path)
            if not self._read_one_ahead(index):
                break                            # nothing left for this process: wait
        try:
            results = future.result()
        except Exception:                        # a worker killed
            results = [None] * len(chunk)
        for other, result in zip(chunk, results):
            self.done[other] = _unpacked(result) if result is not None else None
        return self.done.pop(path)

    def _read_one_ahead(self, index: int) -> bool:
        """Read the nearest chunk after ``index`` that no worker has started; False if none."""
        for later in range(max(index + 1, self.unstarted_from), len(self.chunks)):
            chunk, future = self.chunks[later]
            if future.cancel():
                self.unstarted_from = later + 1
                self._read_here(chunk)
                return True
        return False

    def _read_here(self, chunk: list[Path]) -> None:
        for path in chunk:
            try:
                self.done[path] = _read_sharing(str(path), self.tags)
            except Exception:
                self.done[path] = None

    def close(self) -> None:
        self.pool.shutdown(cancel_futures=True)
        if self.exchange is not None:
            from .shapeshare import leave

            leave()


def _worker_starts(exchange, writer: int) -> None:
    """A worker's first step: take part in the exchange of shapes; end with the writer."""
    if exchange is not None:
        from .shapeshare import join

        join(exchange)
    threading.Thread(target=_end_with, args=(writer,), daemon=True).start()


def _end_with(writer: int) -> None:
    """End this worker when the writer is gone (killed: nothing would read what it sends, and
    a send to the full pipe it holds open itself, inherited through fork, would block it for
    ever)."""
    while os.getppid() == writer:
        time.sleep(0.25)
    os._exit(1)


def _chunks(paths: list, processes: int) -> Iterator[list]:
    """``paths`` in order, in chunks of CHUNK_FILES, smaller towards the end: the last
    results come as the workers finish, leaving the writer little to store alone."""
    at = 0
    while at < len(paths):
        size = max(1, min(CHUNK_FILES, (len(paths) - at) // (4 * processes)))
        yield paths[at:at + size]
        at += size


def _parse_chunk(paths: list[str], tags: dict[str, str] | None) -> list:
    """A worker's task: _parse_packed of each path, None for one that failed."""
    from .ingest import freeze_what_stays

    freeze_what_stays()     # the readers loaded (once), then kept out of the collector's way
    out = []
    for path in paths:
        try:
            out.append(_parse_packed(path, tags))
        except Exception:
            out.append(None)
    return out


def _parse_packed(path: str, tags: dict[str, str] | None) -> tuple:
    """A worker's reading of ``path``, its items packed for the writer (packing.pack)."""
    from .packing import pack

    parsing = _read_sharing(path, tags)
    return pack(parsing.items), parsing.report


def _unpacked(result: tuple) -> Parsing:
    """A worker's result (see _parse_packed) as the items it read."""
    from .ingest import Parsing
    from .packing import unpack

    items, report = result
    return Parsing(unpack(items), report)


def _read_sharing(path: str, tags: dict[str, str] | None) -> Parsing:
    """``path`` read (ingest._parse_whole), the shapes the other processes learnt taken in
    before and the ones learnt here sent after (shapeshare.py), when this process shares."""
    from . import ingest
    from .shapeshare import joined

    if joined is not None:
        joined.receive()
    parsing = ingest._parse_whole(path, tags)
    if joined is not None:
        joined.send()
    return parsing

