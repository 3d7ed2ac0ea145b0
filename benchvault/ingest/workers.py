"""Workers: many small files read and parsed in a process pool while this process stores them.

SQLite has one writer, so this process stores every file, in the order of the paths.  With
``-j N`` the files it has yet to store are read ahead by N - 1 worker processes of a
``concurrent.futures.ProcessPoolExecutor``, handed out in chunks (a worker's results come back
once per chunk, not once per note), and by this process too: when the next chunk is not read
yet, it reads one itself rather than wait -- that chunk, if no worker has started it, else a
later one -- taking it back from the pool with ``Future.cancel()``.  So ``-j 2`` on two cores is
one worker and this process, each on a core: on 500 small notes (bench/many_files.py,
2026-11-25, a 2-core VM) 8% faster than two workers beside a writer, which pay the readers'
imports and the shapes their memos learn once more: 1.49x against 1.37x over ``-j 1``, best
of eight runs each.  A few chunks per process are in flight,
so a year of notes is never all in memory at once.  Each file's items come back packed
(packing.py).  A file a worker could not read (an exception, a worker killed) is read again by
the writer, which reports why with file:line.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import threading
import time
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from .find import real_path, stat_says, stored

if TYPE_CHECKING:
    from .parse import Parsing

# The readers (parse, packing) are imported where a file is read: forked before this process
# loads them, the workers load them on their own cores while this one loads the warehouse's.

# Files up to this size are read by workers when there are several; a bigger one is read by
# the writer, streaming (or by a worker of its own, see stream.py), so that its rows are never
# all in memory at once.
POOL_MAX_BYTES = 8 << 20
# Files a worker reads per task: its results come back together.
CHUNK_FILES = 8
# Chunks in flight per reading process, not read yet: enough that a worker never waits for
# the next while the writer stores one.  At most READ_AHEAD chunks read and not yet stored
# are kept: a writer far behind (a slow disk) holds few files' rows at once.
AHEAD = 3
READ_AHEAD = 32


def default_jobs() -> int:
    """One process per core (up to 4), this one included."""
    return max(1, min(os.cpu_count() or 1, 4))


def can_fork() -> bool:
    """Workers can be forked (not on Windows)."""
    return hasattr(os, "fork")


def to_read(db: sqlite3.Connection | None, paths: list[Path], force: bool) -> list[Path]:
    """The small files of ``paths`` that are not stored as they are now (``db``: the
    warehouse, None for a new one)."""
    todo = []
    for path in paths:
        try:
            stat = path.stat()
            if not path.is_file() or stat.st_size > POOL_MAX_BYTES:
                continue
            if not force and db is not None and \
                    stat_says(stored(db, real_path(path)), stat) is True:
                continue
        except (OSError, sqlite3.Error):
            continue            # the writer says what is wrong with it
        todo.append(path)
    return todo


def start_reading(db: sqlite3.Connection | None, paths: list[Path],
                  tags: dict[str, str] | None, force: bool, jobs: int) -> "Readings | None":
    """Workers reading the small files of ``paths`` that ``db`` does not hold as they are now
    (None: fewer than two such files, one process asked for, or no fork here: the writer
    reads alone)."""
    if jobs < 2 or not can_fork():
        return None
    todo = to_read(db, paths, force)
    return Readings(todo, tags, jobs) if len(todo) > 1 else None


class Readings:
    """``paths`` read by ``jobs`` processes (``jobs - 1`` workers and this one), taken in
    order with :meth:`take`.

    Use as a context manager: leaving it ends the workers (each finishes the chunk it is
    on; none is left behind, Ctrl-C included)."""

    def __init__(self, paths: list[Path], tags: dict[str, str] | None, jobs: int):
        import multiprocessing

        self.tags = tags
        self.chunks = deque(_chunks(paths, jobs))
        self.order = deque(paths)
        self.ready: deque[tuple[Path, Parsing | None]] = deque()
        # Chunks handed out, in order: each a future, or its readings once read here.
        self.pending: deque[tuple[list[Path], Future | list]] = deque()
        self.broken = False
        self.ahead = AHEAD * jobs
        # Forked: a worker starts with what this process has loaded.  The workers start at
        # the first submit, before the writer starts any thread of its own.
        self.pool = ProcessPoolExecutor(max_workers=jobs - 1,
                                        mp_context=multiprocessing.get_context("fork"),
                                        initializer=_worker_starts, initargs=(os.getpid(),))
        self._submit()

    def __enter__(self) -> "Readings":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)

    def take(self, path: Path) -> Parsing | None:
        """``path``'s reading (None: not one of the files handed out, or not read: the
        writer reads it itself).  Paths are taken in the order they were given."""
        if not self.order or self.order[0] != path:
            return None
        self.order.popleft()
        if not self.ready:
            self._collect()
        if not self.ready:
            return None
        _, parsing = self.ready.popleft()
        return parsing

    def _submit(self) -> None:
        while self.chunks and not self.broken and len(self.pending) < READ_AHEAD and \
                sum(not _read(f) and not f.done() for _, f in self.pending) < self.ahead:
            chunk = self.chunks.popleft()
            try:
                future = self.pool.submit(_read_chunk, [str(p) for p in chunk], self.tags)
            except (BrokenProcessPool, RuntimeError, OSError):   # no fork: read here
                self.broken = True
                self.chunks.appendleft(chunk)
                return
            self.pending.append((chunk, future))

    def _collect(self) -> None:
        """The next chunk's readings (None for each file, when its worker failed)."""
        if not self.pending:
            self._submit()
            if not self.pending:            # none left, or no pool (no fork): read here
                if not self.chunks:
                    return
                chunk = self.chunks.popleft()
                self.pending.append((chunk, self._read_here(chunk)))
        chunk, future = self.pending.popleft()
        while not _read(future) and not future.done():
            if future.cancel():             # no worker started it: read here
                future = self._read_here(chunk)
            elif not self._read_one_ahead():
                break                       # nothing else to read: wait for it
        if _read(future):
            readings = future
        else:
            try:
                readings = [_unpacked(r) if r is not None else None for r in future.result()]
            except Exception:       # a worker killed (BrokenProcessPool) or a task failed
                self.broken = self.broken or isinstance(future.exception(), BrokenProcessPool)
                readings = [None] * len(chunk)
        self.ready.extend(zip(chunk, readings))
        self._submit()

    def _read_one_ahead(self) -> bool:
        """Read the nearest later chunk no worker has started (False: none)."""
        for at, (chunk, future) in enumerate(self.pending):
            if not _read(future) and future.cancel():
                self.pending[at] = (chunk, self._read_here(chunk))
                self._submit()
                return True
        return False

    def _read_here(self, chunk: list[Path]) -> list:
        from .parse import parse_whole

        out = []
        for path in chunk:
            try:
                out.append(parse_whole(path, self.tags))
            except Exception:
                out.append(None)        # read again by the writer, which says why
        return out


def _read(handed: Future | list) -> bool:
    """A chunk read here already (its readings, not a future)."""
    return type(handed) is list


def _chunks(paths: list[Path], jobs: int) -> Iterator[list[Path]]:
    """``paths`` in order, in chunks of CHUNK_FILES, smaller towards the end: the last
    results come as the workers finish, leaving the writer little to store alone."""
    at = 0
    while at < len(paths):
        size = max(1, min(CHUNK_FILES, (len(paths) - at) // (4 * jobs)))
        yield paths[at:at + size]
        at += size


def _worker_starts(writer: int) -> None:
    """In each worker: the writer's Ctrl-C is the writer's to handle (the pool is shut down
    cleanly), and a worker whose writer was killed ends instead of waiting for work."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_end_with, args=(writer,), daemon=True).start()


def _end_with(writer: int) -> None:
    while os.getppid() == writer:
        time.sleep(0.5)
    os._exit(1)


def _read_chunk(paths: list[str], tags: dict[str, str] | None) -> list[tuple | None]:
    """A worker's task: each file read and parsed, its items packed (None: it failed, and
    the writer reads it again to say why)."""
    from .packing import pack
    from .parse import parse_whole

    out: list[tuple | None] = []
    for path in paths:
        try:
            parsing = parse_whole(path, tags)
            out.append((pack(parsing.items), parsing.report))
        except Exception:
            out.append(None)
    return out


def _unpacked(result: tuple) -> Parsing:
    from .packing import unpack
    from .parse import Parsing

    items, report = result
    return Parsing(unpack(items), report)
