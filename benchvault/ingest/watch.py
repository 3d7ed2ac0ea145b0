"""Watch: ingest PATHS, then follow them -- new files, and the bytes appended to growing ones.

``benchvault ingest --watch``.  Each file is read by a Tail (tail.py), which waits at the end
of the bytes written so far instead of ending there, and stored a part at a time
(store.FileWriter), each part committed, so that a Datasette page shows it on a refresh.  A
block still being written waits for the rest; a log is never read from its start again, its
reader waits where it stopped.  When the watch stops, each file is finished as an ingest of
the whole file finishes it (what is open at its end read as complete or cut short, its
launches placed among other files', its hash): the warehouse is then the one `benchvault
ingest` of the files as they are makes.

Files are looked at by polling: a stat per file and per directory every POLL seconds, a
directory walked again only when its time changed.  It works on every filesystem, and idle
it costs next to nothing.  A file truncated, replaced (another inode) or rewritten under its
reader (the bytes read differ) is read anew; a deleted one is forgotten.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from ..experiments.launches import LINK_FORMAT, link_across_files, runs_to_relink
from ..reading.lines import UnreadableFile, file_digest
from . import store
from .find import expand_paths, real_path, resolve_afresh, stored
from .outcome import FileResult, IngestWarning
from .pipeline import count_repeats, forget_missing
from .read import head_of, whole_format
from .tail import Tail

if TYPE_CHECKING:
    import sqlite_utils

POLL = 0.25          # seconds between looks at the files
SLICE = 1.0          # seconds one file is read before the others get their turn (a commit)
HEAD = 1 << 16       # the bytes head_of reads: what decides how a file is read
SMALL = 1 << 20      # a file up to this size is compared whole when its time changes
EDGE = 1 << 12       # a bigger one: its first HEAD bytes and the last EDGE bytes read
RACY_NS = 2 * 10**9  # a directory changed this close to its walk is walked again
FINISH_BYTES = 16 << 20   # left to read when the watch stops: finished; more: left as it is


class Show:
    """What a watch tells as it goes (the command line prints it; by default, nothing)."""

    def landed(self, path: str, row: Any, known: bool) -> None:
        """A serving run stored (``known``: a sighting of a run stored before)."""

    def warned(self, path: str, warning: IngestWarning) -> None:
        """A warning about ``path``."""

    def read_anew(self, path: str, why: str) -> None:
        """``path`` is read from its start again (``why``), or forgotten (deleted)."""

    def caught_up(self, results: list[FileResult]) -> None:
        """Every file found at the start is read as far as it is written."""


@dataclass
class Followed:
    """A file under watch: how far it is read and stored, and what was read of it."""

    path: Path
    real: str
    seen: tuple[int, int, int] | None = None    # (size, mtime_ns, inode) when last looked at
    stored_as_seen: bool = False     # stored as it was when seen (no reader: nothing more)
    tail: Tail | None = None
    writing: store.FileWriter | None = None
    behind: bool = False             # the reader has not read all that was there yet
    small: bool = False              # read from fewer than HEAD bytes: its head may change
    waiting: tuple[int, int, int] | None = None   # a whole file waiting to stay unchanged
    relink: set[int] = field(default_factory=set)    # runs its old launches had
    linked: set[int] = field(default_factory=set)    # its runs matched across files so far
    shown: int = 0                   # its warnings shown
    shown_runs: set = field(default_factory=set)     # (line, values) of the runs shown
    sha: Any = field(default_factory=hashlib.sha256)
    hashed: int = 0                  # bytes hashed
    head: bytes = b""                # the first HEAD bytes hashed
    edge: bytes = b""                # the last EDGE bytes hashed

    def hash_to(self, size: int) -> None:
        """Hash the bytes written since (the file's SHA-256 is kept as it grows)."""
        if size <= self.hashed:
            return
        with open(self.path, "rb") as fh:
            fh.seek(self.hashed)
            while self.hashed < size:
                chunk = fh.read(min(1 << 20, size - self.hashed))
                if not chunk:
                    break
                self.sha.update(chunk)
                if len(self.head) < HEAD:
                    self.head += chunk[:HEAD - len(self.head)]
                self.edge = (self.edge + chunk)[-EDGE:]
                self.hashed += len(chunk)

    def still_there(self, stat: os.stat_result) -> bool:
        """The bytes hashed so far are still the file's first bytes (a log is appended to;
        an editor may rewrite a note in place): all of them when the file is small, its
        first HEAD and last EDGE bytes read when it is big."""
        if self.seen is not None and stat.st_ino != self.seen[2] or \
                stat.st_size < self.hashed:
            return False
        try:
            with open(self.path, "rb") as fh:
                if self.hashed <= SMALL:
                    return hashlib.sha256(fh.read(self.hashed)).digest() == \
                        self.sha.copy().digest()
                if fh.read(len(self.head)) != self.head:
                    return False
                fh.seek(self.hashed - len(self.edge))
                return fh.read(len(self.edge)) == self.edge
        except OSError:
            return False

    def restart(self, stat: os.stat_result, tags: dict[str, str] | None) -> None:
        """A new reader from the file's first byte."""
        self.seen, self.waiting, self.stored_as_seen = _key(stat), None, False
        self.sha, self.hashed, self.head, self.edge = hashlib.sha256(), 0, b"", b""
        # What a reader decides from the file's first HEAD bytes (a whole-file format,
        # markdown or not, the encoding, a terminal's width) may change while there are fewer.
        self.small = stat.st_size < HEAD
        self.tail = Tail(self.path, tags)


def whole_file(path: Path) -> bool:
    """Is ``path`` read whole (a result JSON, a llama-bench output file), by its first bytes?"""
    return whole_format(path, head_of(path)) is not None


def _key(stat: os.stat_result) -> tuple[int, int, int]:
    return stat.st_size, stat.st_mtime_ns, stat.st_ino


class Watch:
    """``benchvault ingest --watch`` (see the module): :meth:`run` until ``stop`` is set."""

    def __init__(self, db: sqlite_utils.Database, paths: Iterable[str | Path],
                 tags: dict[str, str] | None = None, stop: threading.Event | None = None,
                 show: Show | None = None, force: bool = False, poll: float = POLL):
        self.db, self.paths, self.tags = db, [Path(p) for p in paths], tags
        self.stop = stop if stop is not None else threading.Event()
        self.show = show if show is not None else Show()
        self.force, self.poll = force, poll
        self.files: dict[str, Followed] = {}       # by real path, in path order
        self.dirs: dict[str, int | None] = {}      # each directory walked → its mtime
        self.scanned = 0                           # when they were walked (ns)
        self.results: dict[str, FileResult] = {}   # each file's last reading, by real path
        self.unfinished: list[str] = []            # files left mid-way by the stop
        self.starting = True       # until every file found at the start had its first turn
        self.summed_up = False     # the files found at the start were read as far as written

    # -- the loop ------------------------------------------------------------------------------
    def run(self) -> list[FileResult]:
        """Ingest what is there, then follow it until ``stop``; every file finished then.
        Each file's last result (``unchanged``, ``ingested``, ``replaced``, ``removed``,
        ``error``), in path order."""
        for result in forget_missing(self.db, self.paths):
            self.results[result.path] = result
        self._scan()
        try:
            while not self.stop.is_set():
                behind = self._step()
                self.starting = self.stop.is_set() and self.starting
                if not (behind or self.summed_up):
                    self.summed_up = True
                    self.show.caught_up(self._results())
                if not behind:
                    self.stop.wait(self.poll)
        except BaseException:
            # (a second Ctrl-C, a failure): the readers end, what was committed stays.
            for followed in self.files.values():
                self._drop(followed)
            raise
        self._end()
        return self._results()

    def _results(self) -> list[FileResult]:
        return [self.results[real] for real in sorted(self.results)]

    def _step(self) -> bool:
        """One look at every file; True when one was left with bytes to read."""
        if self._dirs_changed():
            self._scan()
        behind = False
        for followed in list(self.files.values()):
            if self.stop.is_set():
                break
            behind |= self._look(followed)
        return behind

    # -- which files -------------------------------------------------------------------------
    def _scan(self) -> None:
        """Walk the paths: new files followed, vanished ones forgotten."""
        self.scanned = time.time_ns()
        resolve_afresh()
        found = {real_path(p): p for p in expand_paths(self.paths)}
        self.dirs = {}
        for path in self.paths:
            if path.is_dir() or not path.exists():     # (a file named grows: no walk for it)
                self.dirs[str(path)] = _mtime(path)
            if path.is_dir():
                for sub in path.rglob("*"):
                    if sub.is_dir() and not any(part.startswith(".")
                                                for part in sub.relative_to(path).parts):
                        self.dirs[str(sub)] = _mtime(sub)
        gone = [real for real in self.files if real not in found]
        for real in gone:
            self._drop(self.files.pop(real))
        if gone:
            self._forget_deleted()
        for real in sorted(found):
            if real not in self.files:
                self.files[real] = Followed(found[real], real)
        self.files = dict(sorted(self.files.items()))

    def _dirs_changed(self) -> bool:
        # A directory whose time is as late as the walk may have gained a file after it in
        # the same tick of the filesystem's clock (as make and git know): walked once more.
        racy = self.scanned - RACY_NS
        return any((now := _mtime(Path(d))) != mtime or now is not None and now >= racy
                   for d, mtime in self.dirs.items())

    def _drop(self, followed: Followed) -> None:
        if followed.tail is not None:
            followed.tail.close()
        followed.tail = followed.writing = None
        followed.behind = False

    def _forget_deleted(self) -> None:
        for result in forget_missing(self.db, self.paths):
            self.results[result.path] = result
            self.show.read_anew(result.path, "deleted: forgotten")

    # -- one file ------------------------------------------------------------------------------
    def _look(self, f: Followed) -> bool:
        """What ``f`` needs now; True when it still has bytes to read after its turn."""
        try:
            stat = f.path.stat()
        except OSError:
            if f.tail is not None or f.stored_as_seen:
                self._drop(f)
                f.seen, f.stored_as_seen = None, False
                self._forget_deleted()
            return False
        key = _key(stat)
        if f.tail is not None:
            if f.behind:
                return self._pump(f)
            if key == f.seen:
                return False
            if not f.still_there(stat):
                f.shown_runs.clear()
                return self._anew(f, stat, "rewritten, truncated or replaced: read again")
            if f.small:
                # Its first bytes grew: read again (a small file; the runs shown stay shown).
                return self._anew(f, stat, "")
            f.seen = key
            return self._pump(f)
        if f.stored_as_seen and key == f.seen:
            return False
        if f.seen is None and not self.force and self._stored_as_now(f, stat):
            f.seen, f.stored_as_seen = key, True
            self.results.setdefault(f.real, FileResult(str(f.path), status="unchanged"))
            return False
        if not self.starting and f.waiting != key and whole_file(f.path):
            # A result JSON or a llama-bench output file that appeared or changed is read
            # whole once it stays the same for a look (its writer may be half-way).
            f.waiting = key
            return False
        return self._anew(f, stat, "changed: read again" if f.seen is not None else "")

    def _stored_as_now(self, f: Followed, stat: os.stat_result) -> bool:
        try:
            return store.stored_as_now(self.db, f.real, stat, lambda: file_digest(f.path)[0])
        except UnreadableFile:
            return False

    def _anew(self, f: Followed, stat: os.stat_result, why: str, final: bool = False) -> bool:
        """Read ``f`` from its start (new, or no longer what its reader read)."""
        self._drop(f)
        if why:
            self.show.read_anew(str(f.path), why)
        f.restart(stat, self.tags)
        return self._pump(f, final)

    def _pump(self, f: Followed, final: bool = False) -> bool:
        """Read and store what ``f``'s reader has for up to SLICE seconds, in one
        transaction; True when bytes are left to read.  ``final``: to the end of the file as
        it is now, finished there (the watch stops)."""
        tail = f.tail
        assert tail is not None
        started = time.monotonic()
        before = f.path.stat()     # what a file read to its end is stored as (see _finish)
        self.db.execute("BEGIN IMMEDIATE")
        try:
            if f.writing is None:
                self._open(f)
            elif self._source_gone(f):
                # Another ingest replaced it meanwhile: read it anew.
                self.db.execute("ROLLBACK")
                return self._anew(f, f.path.stat(), "stored by another ingest: read again",
                                  final)
            else:
                f.writing.resume()
            writing = f.writing
            while True:
                writing.add(tail.take(final))
                if tail.done or not final and (tail.caught_up or self.stop.is_set() or
                                               time.monotonic() - started > SLICE):
                    break
            if tail.error is not None:
                raise tail.error
            if tail.done:
                self._finish(f, writing, before)
            else:
                size = f.path.stat().st_size
                f.hash_to(size)
                writing.checkpoint(size, tail.report)
                self._link(f, writing)
            self.db.execute("COMMIT")
        except UnreadableFile as exc:
            self.db.execute("ROLLBACK")
            self._drop(f)
            f.stored_as_seen = True
            self.results[f.real] = FileResult(str(f.path), status="error", error=str(exc))
            return False
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        count_repeats(self.db)
        self._tell(f, writing)
        f.behind = not (tail.done or tail.caught_up)
        return f.behind

    def _source_gone(self, f: Followed) -> bool:
        assert f.writing is not None
        return self.db.execute("SELECT 1 FROM sources WHERE id = ?",
                               [f.writing.source_id]).fetchone() is None

    def _open(self, f: Followed) -> None:
        """The file's ``sources`` row, replacing what was stored of it (in the transaction)."""
        stat = f.path.stat()
        result = FileResult(str(f.path))
        existing = stored(self.db.conn, f.real)
        forgotten: tuple[set[int], set[int]] = (set(), set())
        f.relink, f.linked = set(), set()
        if existing:
            # The runs linked to (or matching) its launches from before: matched again after.
            # A launch of a file read in part has no sighting yet (it is placed at the file's
            # end): other files' runs linked to it let go of it here.
            f.relink = runs_to_relink(self.db, existing["id"]) | {r for (r,) in self.db.execute(
                "SELECT id FROM serving_runs WHERE source_id != ? AND launch_id IN (SELECT id "
                "FROM server_launches WHERE source_id = ?)", [existing["id"], existing["id"]])}
            if f.relink:
                marks = ", ".join("?" * len(f.relink))
                self.db.execute(f"UPDATE serving_runs SET launch_id = NULL WHERE id IN ({marks}) "
                                "AND launch_id IN (SELECT id FROM server_launches WHERE "
                                "source_id = ?)", [*sorted(f.relink), existing["id"]])
            forgotten = store.forget(self.db, existing["id"])
            result.status = "replaced"
        source_id = store.add_source(self.db, f.real, f.path.name, stat, self.tags)
        f.writing = store.FileWriter(self.db, source_id, result, forgotten)
        f.writing.landed = []
        self.results[f.real] = result

    def _link(self, f: Followed, writing: store.FileWriter) -> None:
        """At a checkpoint: the file's new runs, and the runs its launches may serve, matched
        with other files' launches (the file's own warnings about them come at its end)."""
        runs = (writing.placer.touched_runs - f.linked) | f.relink | \
            runs_to_relink(self.db, writing.source_id)
        if runs:
            link_across_files(self.db, None, runs)
        f.linked |= writing.placer.touched_runs

    def _finish(self, f: Followed, writing: store.FileWriter, before: os.stat_result
                ) -> None:
        """The file read to its end: stored as an ingest of the whole file stores it, with
        its time as it was ``before`` this last part was read (a file changed while it was
        read is read again, as ingest would)."""
        assert f.tail is not None
        f.hash_to(f.path.stat().st_size)
        writing.finish()
        self.db.execute("UPDATE sources SET mtime_ns = ? WHERE id = ?",
                        [before.st_mtime_ns, writing.source_id])
        result = writing.result
        result.warnings += [IngestWarning(line, reason, LINK_FORMAT) for line, reason in
                            link_across_files(self.db, writing.source_id,
                                              f.relink | writing.forgotten[0])]
        store.finish_source(self.db, writing.source_id, f.sha.hexdigest(), f.hashed,
                            f.tail.report, result, stored=writing.warned)
        f.seen, f.stored_as_seen = _key(before), True
        f.tail = f.writing = None

    def _tell(self, f: Followed, writing: store.FileWriter) -> None:
        for row, known in writing.landed or ():
            shown = (row.line_start, row.output_throughput, row.mean_ttft_ms)
            if shown not in f.shown_runs:
                f.shown_runs.add(shown)
                self.show.landed(str(f.path), row, known)
        writing.landed = []
        for warning in writing.result.warnings[f.shown:]:
            self.show.warned(str(f.path), warning)
        f.shown = len(writing.result.warnings)

    # -- the end -------------------------------------------------------------------------------
    def _end(self) -> None:
        """The last look: each file finished as an ingest of it as it is now would store it
        (what is open at its end read then), new and changed ones read.  When the stop came
        before the files found at the start were all read, or with more than FINISH_BYTES of
        a file left to read, those are left as far as they were stored (any ingest reads
        them again) rather than keep Ctrl-C waiting."""
        if not self.starting and self._dirs_changed():
            self._scan()
        for f in self.files.values():
            try:
                stat = f.path.stat()
            except OSError:
                if f.tail is not None or f.stored_as_seen:
                    self._drop(f)
                    self._forget_deleted()
                continue
            if f.tail is not None and (f.behind or self.starting) and \
                    stat.st_size - f.tail.consumed > FINISH_BYTES:
                self._drop(f)
                self.unfinished.append(str(f.path))
            elif f.tail is not None:
                if f.still_there(stat) and not (f.small and _key(stat) != f.seen):
                    self._pump(f, final=True)
                else:
                    self._anew(f, stat, "", final=True)
            elif not self.starting and not (f.stored_as_seen and _key(stat) == f.seen):
                if f.seen is None and not self.force and self._stored_as_now(f, stat):
                    continue
                self._anew(f, stat, "", final=True)
        count_repeats(self.db)


def _mtime(path: Path) -> int | None:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return None
