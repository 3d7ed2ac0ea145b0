"""The ingest pipeline: each file passes find → read → parse → link → identify → store once.

Library entry point for ``benchvault ingest``: everything the CLI does is callable from here.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable

from ..experiments.launches import LINK_FORMAT, link_across_files, runs_to_relink
from ..experiments.refresh import refresh_configurations, summarise
from ..reading.lines import FileDigest, ReadReport, UnreadableFile, file_digest
from . import store
from .find import expand_paths, real_path, resolve_afresh, stat_says, stored  # noqa: F401
from .outcome import FileResult, IngestWarning
from .parse import Parsing, parse_file
from .workers import can_fork, start_reading

if TYPE_CHECKING:
    import sqlite_utils

    from .workers import Readings

# A file this big is worth a worker process of its own (stream.py): its rows are stored here
# while the worker parses the rest.
STREAM_MIN_BYTES = 2 << 20


def ingest_paths(db: sqlite_utils.Database, paths: Iterable[Path],
                 tags: dict[str, str] | None = None,
                 on_file: Callable[[FileResult], None] | None = None,
                 force: bool = False, on_bytes: Callable[[int], None] | None = None,
                 jobs: int = 1, readings: "Readings | None" = None) -> list[FileResult]:
    """Ingest ``paths`` in order, each file in one transaction.  With ``jobs`` > 1, the small
    changed files are read ahead by that many processes, this one included (workers.py), and a
    big one by a worker of its own (stream.py); this process stores them all, in the order of
    ``paths``.
    ``readings``: the workers started already (workers.start_reading), closed here."""
    paths = list(paths)
    resolve_afresh()
    if readings is None and jobs > 1:
        readings = start_reading(db.conn, paths, tags, force, jobs)
    results = []
    try:
        for path in paths:
            result = ingest_file(db, path, tags, force=force, on_bytes=on_bytes,
                                 parsed=readings.take(path) if readings else None,
                                 stream=jobs > 1, count=False)
            results.append(result)
            if on_file:
                on_file(result)
    finally:
        if readings is not None:
            readings.close()
        count_repeats(db)
    return results


def count_repeats(db: sqlite_utils.Database) -> None:
    """The repeat statistics of every configuration an ingest touched (experiments.refresh.
    summarise), in a transaction of their own: once per ingest, not once per file."""
    db.execute("BEGIN IMMEDIATE")
    try:
        summarise(db)
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def ingest_file(db: sqlite_utils.Database, path: Path, tags: dict[str, str] | None = None,
                force: bool = False, on_bytes: Callable[[int], None] | None = None,
                parsed: Parsing | None = None, stream: bool = False,
                count: bool = True) -> FileResult:
    """Ingest one file in one transaction; an unchanged file is skipped.

    Unchanged means: the same size and modification time as when it was read (like make and
    rsync), or, when only the time differs, the same SHA-256.  A new or changed file is hashed
    in a thread while it is parsed, so the hash costs no time on a second core.  ``parsed``:
    the file as a worker read it, instead of reading it here.  ``stream``: a file of
    STREAM_MIN_BYTES or more is parsed by a worker process of its own while this one stores
    its rows; read here again if that worker dies.  ``count``: then count the repeats of the
    configurations it touched (count_repeats; ingest_paths does once for all its files).
    """
    from .stream import WorkerLost

    if path.is_dir() or not os.access(path, os.R_OK) and path.exists():
        return FileResult(str(path), status="error", error=f"{path}: not a readable file")
    if not path.exists():
        return FileResult(str(path), status="error", error=f"{path}: no such file")
    try:
        result = _ingest_file(db, path, tags, force, on_bytes, parsed, stream)
    except WorkerLost:
        result = _ingest_file(db, path, tags, force, on_bytes, parsed, stream=False)
    if count:
        count_repeats(db)
    return result


def _ingest_file(db: sqlite_utils.Database, path: Path, tags: dict[str, str] | None,
                 force: bool, on_bytes: Callable[[int], None] | None,
                 parsed: Parsing | None, stream: bool) -> FileResult:
    abspath = real_path(path)
    result = FileResult(str(path))
    try:
        stat = path.stat()
        if not force and store.stored_as_now(db, abspath, stat, lambda: file_digest(path)[0]):
            result.status = "unchanged"
            return result
    except OSError as exc:
        result.status, result.error = "error", f"{path}: {exc.strerror or exc}"
        return result
    except UnreadableFile as exc:
        result.status, result.error = "error", str(exc)
        return result
    digest = items = None
    db.execute("BEGIN IMMEDIATE")
    try:
        existing = stored(db.conn, abspath)
        # Another process may have stored it meanwhile (with this size and time); the hash, if
        # it had to decide, was compared above already.
        if not force and stat_says(existing, stat) is True:
            result.status = "unchanged"
            db.execute("COMMIT")
            return result
        report = parsed.report if parsed is not None else ReadReport(on_bytes=on_bytes)
        if parsed is not None:
            items = parsed.items
        elif stream and stat.st_size >= STREAM_MIN_BYTES and can_fork():
            from .stream import streamed

            # Forked before the hash's thread starts.
            items = streamed(lambda into, defer: parse_file(path, tags, into, defer), report)
        else:
            items = parse_file(path, tags, report)
        digest = FileDigest(path, stat.st_size)
        forgotten: tuple[set[int], set[int]] = (set(), set())
        relink: set[int] = set()
        if existing:
            # The runs linked to (or matching) its launches from before: matched again after.
            relink = runs_to_relink(db, existing["id"])
            forgotten = store.forget(db, existing["id"])
            result.status = "replaced"
        source_id = store.add_source(db, abspath, path.name, stat, tags)
        store.write_rows(db, source_id, items, result, forgotten)
        # Its runs and launches matched with other files' (experiments/launches.py).
        result.warnings += [IngestWarning(line, reason, LINK_FORMAT) for line, reason
                            in link_across_files(db, source_id, relink | forgotten[0])]
        sha, size = digest.result()
        store.finish_source(db, source_id, sha, size, report, result)
        db.execute("COMMIT")
    except UnreadableFile as exc:
        db.execute("ROLLBACK")
        result.status, result.error = "error", str(exc)
    except BaseException:
        db.execute("ROLLBACK")
        raise
    finally:
        if hasattr(items, "close"):
            items.close()       # a worker's stream, or the reader's generator
        if digest is not None:
            digest.result(wait_only=True)
    return result


def forget_missing(db: sqlite_utils.Database, arguments: Iterable[str | Path]
                   ) -> list[FileResult]:
    """Files stored before that no longer exist: each named on the command line, or once under
    a directory named there.  Their sightings go (a run seen elsewhere too stays, rebuilt from
    what is left); each is reported as ``removed``.  A missing file never stored is left to
    ingest to report."""
    gone: list[tuple[int, str]] = []
    for argument in arguments:
        path = Path(argument).resolve()
        if path.is_dir():
            prefix = str(path).rstrip(os.sep) + os.sep
            found = db.execute("SELECT id, path FROM sources WHERE substr(path, 1, ?) = ?",
                               [len(prefix), prefix]).fetchall()
        elif not path.exists():
            found = db.execute("SELECT id, path FROM sources WHERE path = ?",
                               [str(path)]).fetchall()
        else:
            continue
        gone += [(i, p) for i, p in found if not Path(p).exists() and (i, p) not in gone]
    results = []
    for source_id, stored_path in gone:
        db.execute("BEGIN IMMEDIATE")
        try:
            relink = runs_to_relink(db, source_id)
            touched, configs = store.forget(db, source_id)
            refresh_configurations(db, touched, configs)
            link_across_files(db, None, relink | touched)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        results.append(FileResult(stored_path, status="removed"))
    if results:
        count_repeats(db)
    return results
