"""Many small files read on every core while this process writes them, in order.

SQLite has one writer, and the order of writing -- so of identity decisions -- stays the
order of the paths.  ``jobs - 1`` worker processes are forked and the changed files are cut
into chunks that every process claims, the lowest first, from a table they share (a byte per
chunk in a shared file).  This process writes each file in turn.  When the next file's chunk
is unclaimed it reads that chunk itself, and while a worker is still reading it, it reads the
nearest unclaimed chunk instead of waiting.  So ``-j 2`` on two cores is one worker and this
process, each on a core of its own.  The shapes each learns, the others are given
(shapeshare.py).

A worker writes each chunk's readings to a file of its own and sends where they are down a
pipe (24 bytes: it never waits for this process to read them); the pipe's end says it is gone.
Once this process has read all it wrote, the worker writes that file again from its start: it
holds what is waiting to be read, not all that was.

The command ``benchvault ingest`` forks its first worker before the command line itself loads
(fork_early, from __main__.py): that worker loads the readers while this process loads typer
and walks the paths, and it is handed its files (start) when they are known.  A worker forked
from a process that has the readers loaded would instead copy, page by page, the memory it
touches (5,500 page faults, 55 ms, over 500 notes), and one forked after the command line
loaded would start its imports 0.15 s later.  This module imports nothing heavy for that
reason.
"""

from __future__ import annotations

import atexit
import fcntl
import mmap
import os
import pickle
import select
import signal
import sqlite3
import struct
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from .files import stat_says, stored

if TYPE_CHECKING:
    from .ingest import Parsing

# Files up to this size are read by workers when there are several; a bigger one is read by
# the writer, streaming (or by a worker of its own, see stream.py), so that its rows are never
# all in memory at once.
PARALLEL_MAX_BYTES = 8 << 20
# Files a worker reads per claim: they come back together, so this process is woken once per
# chunk, not once per note.
CHUNK_FILES = 8
# Chunks the claim table holds (a byte each, pages only where used); any beyond are read here.
CLAIMS = 1 << 22
# The shared file: the claim cursor, then each worker's count of its result bytes this
# process has read, then the claims, then the task.
_READ_BY_WRITER = 8
_TABLE = _READ_BY_WRITER + 8 * 256
_TASK = _TABLE + CLAIMS
# A chunk's claim: free, or the number of the worker that claimed it, or this process's.
FREE, WRITER = 0, 255
MAX_WORKERS = WRITER - 1
# What a worker sends per chunk read: its index, and where its readings are in its file.
_SENT = struct.Struct("<QQQ")
_LENGTH = struct.Struct("<Q")


def default_jobs() -> int:
    """One process per core (up to 4), this one included."""
    return max(1, min(os.cpu_count() or 1, 4))


def can_fork() -> bool:
    """Workers can be forked (not on Windows)."""
    return hasattr(os, "fork")


class _Team:
    """What this process and its workers share, made before the first of them forks: the
    claim table (a cursor and a byte per chunk), how much of each worker's results this
    process has read, the task given to all (after the table, in the same unlinked file) and
    the exchange of shapes."""

    def __init__(self) -> None:
        from .shapeshare import Exchange

        self._file = tempfile.TemporaryFile()
        self.fd = self._file.fileno()
        os.ftruncate(self.fd, _TASK)
        self.table = mmap.mmap(self.fd, _TASK)
        self.exchange = Exchange()
        self.workers: list[_Worker] = []

    def claim_next(self, me: int, count: int) -> int | None:
        """The lowest free chunk of ``count``, now ``me``'s (None: all claimed)."""
        limit = min(count, CLAIMS)
        with self._locked():
            (at,) = _LENGTH.unpack_from(self.table, 0)
            while at < limit and self.table[_TABLE + at] != FREE:
                at += 1
            if at >= limit:
                return None
            self.table[_TABLE + at] = me
            _LENGTH.pack_into(self.table, 0, at + 1)
            return at

    def claim(self, index: int, me: int) -> bool:
        """Chunk ``index`` made ``me``'s, if free."""
        if index >= CLAIMS:
            return True
        with self._locked():
            if self.table[_TABLE + index] != FREE:
                return False
            self.table[_TABLE + index] = me
            return True

    def holder(self, index: int) -> int:
        return self.table[_TABLE + index] if index < CLAIMS else WRITER

    def read_by_writer(self, number: int, more: int = 0) -> int:
        """How many bytes of worker ``number``'s results this process has read (counting
        ``more`` in first)."""
        at = _READ_BY_WRITER + 8 * number
        with self._locked():
            (done,) = _LENGTH.unpack_from(self.table, at)
            if more:
                done += more
                _LENGTH.pack_into(self.table, at, done)
        return done

    def _locked(self):
        # POSIX record locks belong to a process (not shared through fork, unlike flock's).
        return _RecordLock(self.fd)

    def close(self) -> None:
        """End every worker and let the shared files go."""
        for worker in self.workers:
            worker.stop()
        self.table.close()
        self._file.close()
        self.exchange.close()

    def post(self, task: tuple) -> int:
        """Put the task every worker reads after the table; its length."""
        body = pickle.dumps(task, protocol=pickle.HIGHEST_PROTOCOL)
        _write_all(self.fd, body, _TASK)
        return len(body)

    def fork(self) -> "_Worker | None":
        """Fork one more worker (None: fork failed, e.g. out of processes)."""
        number = len(self.workers) + 1
        writer = os.getpid()
        made: list = []
        try:
            tasks_read, tasks_write = os.pipe()
            made += [tasks_read, tasks_write]
            sent_read, sent_write = os.pipe()
            made += [sent_read, sent_write]
            results = tempfile.TemporaryFile()
            made.append(results)
            pid = os.fork()
        except OSError:                           # out of files or processes: one fewer
            for thing in made:
                if isinstance(thing, int):
                    os.close(thing)
                else:
                    thing.close()
            return None
        if pid == 0:                              # the worker
            code = 1
            try:
                os.close(tasks_write)
                os.close(sent_read)
                for other in self.workers:        # so that each one's pipes end with it
                    other.close_ends()
                _work(self, number, tasks_read, sent_write, results.fileno(), writer)
                code = 0
            finally:
                os._exit(code)
        os.close(tasks_read)
        os.close(sent_write)
        worker = _Worker(number, pid, tasks_write, sent_read, results)
        self.workers.append(worker)
        return worker


class _RecordLock:
    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __enter__(self) -> None:
        fcntl.lockf(self.fd, fcntl.LOCK_EX, 1)

    def __exit__(self, *exc) -> None:
        fcntl.lockf(self.fd, fcntl.LOCK_UN, 1)


class _Worker:
    """A worker as this process sees it: its pid, the pipe its task's length goes down (its
    end: dismissed), the pipe it says where each chunk's readings are on, and their file."""

    def __init__(self, number: int, pid: int, tasks: int, sent: int, results) -> None:
        self.number, self.pid, self.tasks, self.sent, self.results = \
            number, pid, tasks, sent, results
        self.pending = b""
        self.gone = self.stopped = False

    def close_ends(self) -> None:
        for fd in (self.tasks, self.sent):
            if fd >= 0:
                os.close(fd)
        self.tasks = self.sent = -1

    def stop(self) -> None:
        """End it (done, or not wanted any more) and reap it."""
        if self.stopped:
            return              # reaped: its pid may be another process's by now
        self.stopped = True
        self.close_ends()
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass
        self.results.close()


def _work(team: _Team, number: int, tasks: int, sent: int, results: int, writer: int) -> None:
    """A worker: load the readers, wait for the task, then read chunks until none is free."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)      # the writer's Ctrl-C ends it
    threading.Thread(target=_end_with, args=(writer,), daemon=True).start()
    from . import ingest
    from .shapeshare import join

    ingest.freeze_what_stays()  # the readers loaded (once), then kept out of the collector's way
    length = os.read(tasks, _LENGTH.size)
    if len(length) < _LENGTH.size:
        return                                          # dismissed
    body = os.pread(team.fd, _LENGTH.unpack(length)[0], _TASK)
    paths, bounds, tags = pickle.loads(body)
    join(team.exchange)
    offset = written = 0
    while (index := team.claim_next(number, len(bounds))) is not None:
        start, end = bounds[index]
        out = []
        for path in paths[start:end]:
            try:
                out.append(_parse_packed(path, tags))
            except Exception:
                out.append(None)
        body = pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL)
        if team.read_by_writer(number) == written:
            offset = 0          # all read: the file is written again from its start
        _write_all(results, body, offset)
        os.write(sent, _SENT.pack(index, offset, len(body)))     # atomic: < PIPE_BUF
        offset += len(body)
        written += len(body)


def _write_all(fd: int, body: bytes, offset: int) -> None:
    view = memoryview(body)
    while view:
        done = os.pwrite(fd, view, offset)
        view, offset = view[done:], offset + done


def _end_with(writer: int) -> None:
    """End this worker when the writer is gone (killed: nothing would read what it sends)."""
    while os.getppid() == writer:
        time.sleep(0.25)
    os._exit(1)


# The team whose first worker fork_early started, for start to hand its files to.
_early: _Team | None = None


def fork_early(args: list[str]) -> None:
    """Fork the first worker of ``benchvault ingest ARGS`` now, before the command line
    loads, unless it asks for one process (``-j 1``) or this machine has one core.  Not handed
    any files (an ingest that turns out to need no worker), it is ended at exit."""
    global _early
    if not can_fork() or (_jobs_asked(args) or default_jobs()) < 2:
        return
    try:
        team = _Team()
    except OSError:             # no temporary file: the ingest forks its workers later, or
        return                  # reads alone
    if team.fork() is not None:
        _early = team
        atexit.register(dismiss_early)


def _jobs_asked(args: list[str]) -> int | None:
    """``-j N`` / ``--jobs N`` / ``-jN`` / ``--jobs=N`` in ``args``, read as the command line
    will (a wrong guess costs an idle worker or a later one, never a wrong result)."""
    for at, arg in enumerate(args):
        if arg == "--":
            break
        if arg in ("-j", "--jobs") and at + 1 < len(args):
            value = args[at + 1]
        elif arg.startswith("--jobs="):
            value = arg[len("--jobs="):]
        elif arg.startswith("-j") and not arg.startswith("--"):
            value = arg[2:]
        else:
            continue
        return int(value) if value.isdigit() else None
    return None


def dismiss_early() -> None:
    """End the worker fork_early started, if start never took it."""
    global _early
    if _early is not None:
        _early.close()
        _early = None


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
    if len(todo) < 2 or not can_fork():
        dismiss_early()
        return None
    try:
        return Parallel(todo, tags, jobs)
    except OSError:             # no temporary file or pipe to share the files through
        return None             # (ingest_file reads each one here)


class Parallel:
    def __init__(self, todo: list[Path], tags: dict[str, str] | None, jobs: int):
        from .shapeshare import join

        global _early
        self.tags = tags
        # Each file's reading once read (None: failed, to be read again by ingest_file,
        # which reports why with file:line).
        self.done: dict[Path, Parsing | None] = {}
        self.team, _early = _early or _Team(), None
        wanted = max(1, min(jobs - 1, len(todo) - 1, MAX_WORKERS))
        try:
            while len(self.team.workers) < wanted and self.team.fork() is not None:
                pass
            for extra in self.team.workers[wanted:]:
                extra.stop()
            self.workers = self.team.workers[:wanted]
            self.chunks = list(_chunks(todo, len(self.workers) + 1))
            self.chunk_of: dict[Path, int] = {}
            bounds, at = [], 0
            for index, chunk in enumerate(self.chunks):
                self.chunk_of.update((path, index) for path in chunk)
                bounds.append((at, at + len(chunk)))
                at += len(chunk)
            length = self.team.post(([str(p) for p in todo], bounds, tags))
        except BaseException:
            self.team.close()
            raise
        join(self.team.exchange)
        for worker in self.workers:
            try:
                os.write(worker.tasks, _LENGTH.pack(length))
            except OSError:                         # it died before it was given its task
                worker.gone = True
        self.arrived: dict[int, list] = {}          # chunk index: the readings sent for it
        self.taken: set[int] = set()                # chunks read here or unpacked from there
        self.unclaimed_from = 0     # every chunk before this one is claimed

    def take(self, path: Path) -> Parsing | None:
        """``path``'s reading, by a worker or by this process (None: read it in ingest_file:
        not one of the files shared out, taken already, or its reading failed)."""
        if path in self.done:
            return self.done.pop(path)
        index = self.chunk_of.get(path)
        if index is None or index in self.taken:
            return None
        while index not in self.arrived:
            holder = self.team.holder(index)
            if holder == FREE and self.team.claim(index, WRITER):
                self._read_here(index)       # no worker has started it: read it here
                return self.done.pop(path)
            if holder != FREE and self.workers[holder - 1].gone:
                # Killed before it sent this chunk: each file is read again in ingest_file.
                self.arrived[index] = [None] * len(self.chunks[index])
                break
            self._collect(block=False)
            if index not in self.arrived and not self._read_one_ahead(index):
                self._collect(block=True)    # nothing left for this process: wait
        self.taken.add(index)
        for other, result in zip(self.chunks[index], self.arrived.pop(index)):
            self.done[other] = _unpacked(result) if result is not None else None
        return self.done.pop(path)

    def _collect(self, block: bool) -> None:
        """Take in what the workers sent (waiting for something when ``block``)."""
        live = {w.sent: w for w in self.workers if not w.gone}
        if not live:
            return
        ready, _, _ = select.select(list(live), [], [], None if block else 0)
        for fd in ready:
            worker = live[fd]
            data = os.read(fd, 1 << 16)
            if not data:                             # gone (killed, or done)
                worker.gone = True
                continue
            data, worker.pending = worker.pending + data, b""
            whole = len(data) - len(data) % _SENT.size
            worker.pending = data[whole:]
            for index, offset, length in _SENT.iter_unpack(data[:whole]):
                self.arrived[index] = pickle.loads(os.pread(worker.results.fileno(), length,
                                                            offset))
                self.team.read_by_writer(worker.number, length)

    def _read_one_ahead(self, index: int) -> bool:
        """Read the nearest chunk after ``index`` that no worker has claimed; False if none."""
        for later in range(max(index + 1, self.unclaimed_from), len(self.chunks)):
            if self.team.holder(later) == FREE and self.team.claim(later, WRITER):
                self.unclaimed_from = later + 1
                self._read_here(later)
                return True
        return False

    def _read_here(self, index: int) -> None:
        self.taken.add(index)
        for path in self.chunks[index]:
            try:
                self.done[path] = _read_sharing(str(path), self.tags)
            except Exception:
                self.done[path] = None

    def close(self) -> None:
        from .shapeshare import leave

        self.team.close()
        leave()


def _chunks(paths: list, processes: int) -> Iterator[list]:
    """``paths`` in order, in chunks of CHUNK_FILES, smaller towards the end: the last
    results come as the workers finish, leaving the writer little to store alone."""
    at = 0
    while at < len(paths):
        size = max(1, min(CHUNK_FILES, (len(paths) - at) // (4 * processes)))
        yield paths[at:at + size]
        at += size


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
