"""File → blocks → validated rows → SQLite, one transaction per file.

Library entry point for ``benchvault ingest``: everything the CLI does is callable from here.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Iterator

from pydantic import ValidationError

from . import __version__
# expand_paths and TEXT_SUFFIXES stay importable from here: the library's entry point.
from .files import (SOURCE_COLUMNS, TEXT_SUFFIXES, FileResult, IngestWarning,  # noqa: F401
                    _real_dir, expand_paths, real_path, stat_says)
from .parallel import can_fork
from .parsers import file_formats
from .parsers.base import Block, BlockParseError, Context, Facts, FileFormat, Parsed, Problem
from .reading.lines import (SNIFF_BYTES, FileDigest, LineSource, ReadReport, UnreadableFile,
                           file_digest)
from .experiments.refresh import refresh_configurations
from .experiments.sightings import forget_source
from .schemas import store
from .schemas.models import Source, UnparsedBlock, fields_of

if TYPE_CHECKING:
    import sqlite_utils

    from .parallel import Parallel

    from .reading.segmenter import LineHit

# The segmenter, the grammars and the linker are imported when a file is read: an ingest of
# unchanged files (the usual re-run) starts without them.


def parse_file(path: Path, tags: dict[str, str] | None = None,
               report: ReadReport | None = None,
               defer: Callable[[], bool] | None = None) -> Iterator[Parsed | IngestWarning]:
    """Every row (with children) and every warning in ``path``, in file order.  ``defer``:
    asked before each complete block is built; True gives the Block itself, for the caller
    to build (build_deferred) -- a worker handing some of its work to the writer."""
    report = report if report is not None else ReadReport()
    head = _head(path)
    whole = next((f for f in file_formats() if f.sniff(head[:SNIFF_BYTES], str(path))), None)
    if whole is not None:
        yield from _read_whole(whole, path, tags, report.on_bytes)
        return
    from .reading import prefilter
    from .reading.doctype import sniff_markdown
    from .reading.segmenter import Segmenter

    segmenter = Segmenter(str(path), tags=tags, markdown=sniff_markdown(str(path), head))
    source = LineSource(path, report, prefilter.for_formats())
    try:
        yield from _segments(segmenter, source, defer)
    finally:
        source.close()
    if report.binary:
        yield IngestWarning(1, "binary file (NUL bytes, not UTF-16): not read")
    for lineno in report.fallback_lines[:1]:
        more = len(report.fallback_lines) - 1
        yield IngestWarning(lineno, "not UTF-8; read as Latin-1" + (f" (and {more} more lines)"
                                                                 if more else ""))


def _segments(segmenter, lines: LineSource, defer: Callable[[], bool] | None = None
              ) -> Iterator[Parsed | IngestWarning | Block]:
    from .reading.embedded import Embedded
    from .reading.segmenter import LineHit, Truncated, Unclosed, WrapCut

    for item in segmenter.run(lines):
        if isinstance(item, Parsed):      # a row the fast lane read (reading/fastlane.py)
            yield item
            continue
        if isinstance(item, Embedded):
            yield from _read_embedded(item)
            continue
        if isinstance(item, WrapCut):
            yield IngestWarning(item.line_start, f"a line wrap cut a number in two (lines "
                                f"{item.line_start}-{item.line_end}): kept raw, not guessed",
                                None, item.text)
            continue
        if isinstance(item, Truncated):
            yield IngestWarning(item.line_start, f"{item.format.name}: block starts here but never "
                                f"ends (cut off at line {item.line_end}?)", item.format.name,
                                "\n".join(item.lines))
        elif isinstance(item, Unclosed):
            yield from _build_unclosed(item)
        elif isinstance(item, Block):
            if defer is not None and defer():
                yield item
            else:
                yield from _build_block(item)
        elif isinstance(item, LineHit):
            yield from _build_line(item)


def _head(path: Path) -> bytes:
    """The first bytes, for the whole-file formats' and the markdown sniffs."""
    try:
        with open(path, "rb") as fh:
            return fh.read(1 << 16)
    except OSError:
        return b""  # LineSource says why


def _read_whole(fmt: FileFormat, path: Path, tags: dict[str, str] | None,
                on_bytes: Callable[[int], None] | None = None
                ) -> Iterator[Parsed | IngestWarning]:
    from .reading.progress import reporting

    items = iter(fmt.read(path, Context(path=str(path), tags=dict(tags or {}))))
    while True:
        # The bar moves as a 500 MB result JSON is read; asked only while the format reads,
        # not while this waits on the writer (nothing else is counted if it never resumes).
        with reporting(on_bytes):
            item = next(items, _DONE)
        if item is _DONE:
            return
        if isinstance(item, Problem):
            yield IngestWarning(item.line, f"{fmt.name}: {item.reason}", fmt.name, item.raw_text)
        else:
            yield item


_DONE = object()


def _read_embedded(item) -> Iterator[Parsed | IngestWarning]:
    """A pasted output file read by its format exactly as the file itself (from a scratch copy:
    the readers stream files), its lines and the note's context put back on every row."""
    import tempfile

    fmt = item.format
    note = fmt.note_context(item.context) if fmt.note_context is not None else {}

    def line(k: int) -> int:
        return item.lines[min(max(k, 1), len(item.lines)) - 1]

    with tempfile.TemporaryDirectory(prefix="benchvault-pasted-") as scratch:
        copy = Path(scratch) / "pasted"
        copy.write_text(item.text, encoding="utf-8")
        got = list(fmt.read(copy, item.context))
    starts = [g.row.line_start or 1 for g in got if not isinstance(g, Problem)]
    # A record read from one line (a JSON value's first) spans to the next record's start.
    ends = [max(a, b - 1) for a, b in zip(starts, starts[1:])] + [len(item.lines)]
    rows = iter(zip(starts, ends))
    for parsed in got:
        if isinstance(parsed, Problem):
            yield IngestWarning(line(parsed.line), f"{fmt.name} (pasted, lines "
                                f"{item.line_start}-{item.line_end}): {parsed.reason}",
                                fmt.name, parsed.raw_text)
            continue
        start, end = next(rows)
        row = parsed.row
        if (row.line_end or start) > start:
            end = row.line_end
        store.assign(row, line_start=line(start), line_end=line(end), **{
            k: v for k, v in note.items()
            if k in fields_of(type(row)) and v is not None and getattr(row, k) is None})
        yield parsed


def build_deferred(items: Iterable[Parsed | IngestWarning | Block]
                   ) -> Iterator[Parsed | IngestWarning]:
    """``items`` with each Block that parse_file's ``defer`` gave back built in its place."""
    for item in items:
        if type(item) is Block:
            yield from _build_block(item)
        else:
            yield item


def _build_block(block: Block, text: str | None = None) -> Iterator[Parsed | IngestWarning]:
    name = block.format.name
    try:
        parsed = block.format.build(block)
    except BlockParseError as exc:
        line = block.line_start + (exc.line - 1 if exc.line else 0)
        yield IngestWarning(line, f"{name}: {exc.reason}", name, block.text)
        return
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        yield IngestWarning(block.line_start, f"{name}: {where}: {first.get('msg')}", name,
                            block.text)
        return
    # A table block gives a row (or a problem) per line of the table.
    for item in parsed if isinstance(parsed, list) else [parsed]:
        if isinstance(item, Problem):
            yield IngestWarning(item.line, f"{name}: {item.reason}", name, item.raw_text)
            continue
        _stamp(item, block.line_start, block.line_end, block.text if text is None else text)
        for line, reason in item.warnings:
            yield IngestWarning(line, f"{name}: {reason}", name)
        yield item


def _build_unclosed(item) -> Iterator[Parsed | IngestWarning]:
    """Read as complete with a warning if the grammar takes it; else the truncation warning."""
    block = item.block
    name = block.format.name
    lines = block.lines[:-1]            # without the closing rule put back for the grammar
    built = list(_build_block(block, text="\n".join(lines)))
    if any(isinstance(b, IngestWarning) for b in built) or not built:
        yield IngestWarning(block.line_start, f"{name}: block starts here but never ends "
                            f"(cut off at line {block.line_end}?)", name, "\n".join(lines))
        return
    yield IngestWarning(item.cut_at, f"{name}: the block of lines {block.line_start}-"
                        f"{block.line_end} has no closing rule here: read as complete", name)
    yield from built


def _build_line(hit: LineHit) -> Iterator[Parsed | IngestWarning]:
    name = hit.format.name
    try:
        parsed = hit.format.build(hit.line, hit.text, hit.context)
    except (BlockParseError, ValidationError, ValueError) as exc:
        yield IngestWarning(hit.line, f"{name}: {exc}", name, hit.text)
        return
    if isinstance(parsed, Facts):
        # One line of a record many lines assemble (a server launch): the Linker merges it.
        parsed.line, parsed.text = hit.line, hit.text
        yield from (IngestWarning(line, f"{name}: {reason}", name)
                    for line, reason in parsed.warnings)
        yield parsed
    elif parsed is not None:
        _stamp(parsed, hit.line, hit.line, hit.text)
        yield parsed


def _stamp(parsed: Parsed, start: int, end: int, text: str) -> None:
    row = parsed.row
    fields = fields_of(type(row))
    store.assign(row, **{name: value for name, value in
                         (("line_start", start), ("line_end", end), ("raw_text", text))
                         if name in fields and getattr(row, name) is None})


def ingest_file(db: sqlite_utils.Database, path: Path, tags: dict[str, str] | None = None,
                force: bool = False, on_bytes: Callable[[int], None] | None = None,
                parsed: "Parsing | None" = None, stream: bool = False) -> FileResult:
    """Ingest one file in one transaction; an unchanged file is skipped.

    Unchanged means: the same size and modification time as when it was read (like make and
    rsync), or, when only the time differs, the same SHA-256.  A new or changed file is hashed
    in a thread while it is parsed, so the hash costs no time on a second core.  ``parsed``:
    the file's items as a worker process read them (see ingest_paths), instead of reading here.
    ``stream``: a file of STREAM_MIN_BYTES or more is parsed by a worker process while this
    one stores its rows (stream.streamed); read here again if that worker dies.
    """
    from .stream import WorkerLost

    try:
        return _ingest_file(db, path, tags, force, on_bytes, parsed, stream)
    except WorkerLost:
        return _ingest_file(db, path, tags, force, on_bytes, parsed, stream=False)


# A file this big is worth a worker process of its own (a fork and a pipe: ~10 ms).
STREAM_MIN_BYTES = 2 << 20


def _ingest_file(db: sqlite_utils.Database, path: Path, tags: dict[str, str] | None,
                 force: bool, on_bytes: Callable[[int], None] | None,
                 parsed: "Parsing | None", stream: bool) -> FileResult:
    abspath = real_path(path)
    result = FileResult(str(path))
    try:
        stat = path.stat()
        if not force and _unchanged(db, abspath, path, stat):
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
        existing = _existing(db, abspath)
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
        touched: set[int] = set()
        configs: set[int] = set()
        if existing:
            touched, configs = forget_source(db, existing["id"])
            store.delete_source(db, existing["id"])
            result.status = "replaced"
        source = Source(path=abspath, name=path.name, sha256="", size=stat.st_size,
                        mtime_ns=stat.st_mtime_ns,
                        ingested_at=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                        parser_version=__version__, tags=tags or None)
        source_id = store.insert(db, source)
        touched |= _write_rows(db, source_id, items, result)
        refresh_configurations(db, touched, configs)
        sha, size = digest.result()
        if size == 0:
            result.warnings.append(IngestWarning(1, "empty file"))
        for warning in result.warnings:
            store.insert(db, UnparsedBlock(source_id=source_id, format=warning.format,
                                           line=warning.line, reason=warning.reason,
                                           raw_text=warning.raw_text))
        db.conn.execute("UPDATE sources SET sha256 = ?, size = ?, encoding = ?, runs = ?, "
                        "warnings = ? WHERE id = ?", [sha, size, report.encoding, result.runs,
                                                      len(result.warnings), source_id])
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


def _unchanged(db: sqlite_utils.Database, abspath: str, path: Path, stat: os.stat_result) -> bool:
    """Stored from this very file by this benchvault version (see files.stat_says)."""
    existing = _existing(db, abspath)
    verdict = stat_says(existing, stat)
    if verdict is None and file_digest(path)[0] == existing["sha256"]:
        db["sources"].update(existing["id"], {"mtime_ns": stat.st_mtime_ns})
        verdict = True
    return bool(verdict)


def _existing(db: sqlite_utils.Database, abspath: str) -> dict | None:
    rows = list(db.query(f"SELECT {SOURCE_COLUMNS} FROM sources WHERE path = ?", [abspath]))
    return rows[0] if rows else None


def _write_rows(db: sqlite_utils.Database, source_id: int, items: Iterable[Parsed | IngestWarning],
                result: FileResult) -> set[int]:
    """Store a file's rows; the serving runs it placed or changed (for their configurations)."""
    from .experiments.sightings import Placer
    from .linking import Linker

    writer = store.BatchWriter(db)
    placer = Placer(db, source_id, writer, lambda line, reason: result.warnings.append(
        IngestWarning(line, reason, "identity")))
    linker = Linker(db, source_id, flush=writer.flush, place_launch=placer.place_launch)
    for item in items:
        if isinstance(item, IngestWarning):
            result.warnings.append(item)
            continue
        if isinstance(item, Facts):
            linker.facts(item)
            continue
        row = item.row
        if "source_id" in fields_of(type(row)):
            store.assign(row, source_id=source_id)
        linker.before_insert(row)
        if placer.tracks(row):
            # A row seen before (its JSON, another note) becomes a sighting of that row.
            row_id, known = placer.place(row, item.tolerance, item.children)
        else:
            row_id, known = writer.add(row), False
        linker.after_insert(row, row_id)
        result.counts[row.__table__] = result.counts.get(row.__table__, 0) + 1
        for child in item.children:
            if known and placer.merges_children(row.__table__, child.__table__):
                continue        # merged into the stored row's by the placer
            for column, target, _ in child.__foreign_keys__:
                if target == row.__table__:
                    store.assign(child, **{column: row_id})
            if "source_id" in fields_of(type(child)):
                store.assign(child, source_id=source_id)
            writer.add(child)
            result.counts[child.__table__] = result.counts.get(child.__table__, 0) + 1
    writer.flush()
    linker.finish()
    placer.finish()
    if linker.launch_count:
        result.counts["server_launches"] = linker.launch_count
    result.known = placer.merged
    return placer.touched_runs


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
            stored = db.execute("SELECT id, path FROM sources WHERE substr(path, 1, ?) = ?",
                                [len(prefix), prefix]).fetchall()
        elif not path.exists():
            stored = db.execute("SELECT id, path FROM sources WHERE path = ?",
                                [str(path)]).fetchall()
        else:
            continue
        gone += [(i, p) for i, p in stored if not Path(p).exists() and (i, p) not in gone]
    results = []
    for source_id, stored_path in gone:
        db.execute("BEGIN IMMEDIATE")
        try:
            touched, configs = forget_source(db, source_id)
            store.delete_source(db, source_id)
            refresh_configurations(db, touched, configs)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        results.append(FileResult(stored_path, status="removed"))
    return results


@dataclass
class Parsing:
    """What a worker process read from one file: its items in file order and its ReadReport."""

    items: list
    report: ReadReport


def _parse_whole(path: str, tags: dict[str, str] | None) -> Parsing:
    report = ReadReport()
    return Parsing(list(parse_file(Path(path), tags, report)), report)


def ingest_paths(db: sqlite_utils.Database, paths: Iterable[Path],
                 tags: dict[str, str] | None = None,
                 on_file: Callable[[FileResult], None] | None = None,
                 force: bool = False, on_bytes: Callable[[int], None] | None = None,
                 jobs: int = 1, parallel: "Parallel | None" = None) -> list[FileResult]:
    """Ingest ``paths`` in order.  With ``jobs`` > 1, small changed files are read by that
    many processes, this one included, while this one writes (SQLite has one writer): the
    order of writing, and so of identity decisions, stays the order of ``paths``.
    ``parallel``: that reading started already (parallel.start), closed here."""
    paths = list(paths)
    _real_dir.cache_clear()
    if parallel is None and jobs > 1 and len(paths) > 1:
        from .parallel import start

        parallel = start(db.conn, paths, tags, force, jobs)
    results = []
    try:
        for path in paths:
            if path.is_dir() or not os.access(path, os.R_OK) and path.exists():
                result = FileResult(str(path), status="error",
                                    error=f"{path}: not a readable file")
            elif not path.exists():
                result = FileResult(str(path), status="error", error=f"{path}: no such file")
            else:
                result = ingest_file(db, path, tags, force=force, on_bytes=on_bytes,
                                     parsed=parallel.take(path) if parallel else None,
                                     stream=jobs > 1)
            results.append(result)
            if on_file:
                on_file(result)
    finally:
        if parallel is not None:
            parallel.close()
    return results


def freeze_what_stays() -> None:
    """Load the readers, then keep what is loaded so far (modules, formats, compiled patterns:
    it lives as long as the process) out of the garbage collector's full passes, which would
    walk all of it again and again (4% of a blocks-only ingest).  In every process that
    reads (a worker forked after it does not copy the pages a collection would touch; one
    forked before calls it itself).  For a process that ingests and ends (the CLI): what is
    frozen is never collected, cycles included."""
    import gc

    global _frozen
    if _frozen:             # once: a process that ingests again (tests) freezes no garbage
        return
    from .reading import prefilter, segmenter  # noqa: F401

    file_formats()
    gc.freeze()
    _frozen = True


_frozen = False
