"""Store: a file's rows, sightings and warnings written to the warehouse.

Called inside the file's transaction (pipeline.ingest_file).  Each item passes once through
the stages before this one: a fact or a row to the linker, a row that can be seen twice to
the placer (identify), every other row straight to the batch writer; then the runs the file
placed get their configurations, and the file's warnings are kept in ``unparsed_blocks``.
"""

from __future__ import annotations

import datetime as dt
import os
from typing import TYPE_CHECKING, Callable, Iterable

from .. import __version__
from ..experiments.refresh import refresh_configurations
from ..experiments.sightings import forget_source
from ..parsers.base import Facts, Parsed
from ..reading.lines import ReadReport
from ..schemas import store
from ..schemas.models import Source, UnparsedBlock, fields_of
from .find import stat_says, stored
from .identify import Placer
from .link import Linker
from .outcome import FileResult, IngestWarning

if TYPE_CHECKING:
    import sqlite_utils


def stored_as_now(db: sqlite_utils.Database, real: str, stat: os.stat_result,
                  digest: Callable[[], str]) -> bool:
    """The file at ``real`` (its real_path) is stored as it is now, by this benchvault version
    (find.stat_says); when only its time changed, ``digest()`` (its SHA-256) decides, and the
    stored time is brought up to date."""
    existing = stored(db.conn, real)
    verdict = stat_says(existing, stat)
    if verdict is None and digest() == existing["sha256"]:
        db.execute("UPDATE sources SET mtime_ns = ? WHERE id = ?",
                   [stat.st_mtime_ns, existing["id"]])
        verdict = True
    return bool(verdict)


def forget(db: sqlite_utils.Database, source_id: int) -> tuple[set[int], set[int]]:
    """Every row and sighting read from ``source_id`` gone (rows seen elsewhere too stay,
    rebuilt from what is left).  Returns the runs rebuilt and the configurations that lost a
    run, for refresh_configurations (once, after the file's new rows if it has any)."""
    touched, configs = forget_source(db, source_id)
    store.delete_source(db, source_id)
    return touched, configs


def add_source(db: sqlite_utils.Database, abspath: str, name: str, stat: os.stat_result,
               tags: dict[str, str] | None) -> int:
    """The file's row in ``sources`` (its hash and counts follow in finish_source)."""
    return store.insert(db, Source(
        path=abspath, name=name, sha256="", size=stat.st_size, mtime_ns=stat.st_mtime_ns,
        ingested_at=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        parser_version=__version__, tags=tags or None))


def write_rows(db: sqlite_utils.Database, source_id: int,
               items: Iterable[Parsed | Facts | IngestWarning], result: FileResult,
               forgotten: tuple[set[int], set[int]] = (set(), set())) -> None:
    """Store a file's items in file order; what it stored is counted in ``result``, its
    warnings kept there.  The runs it placed or changed get their configurations, with those
    ``forgotten`` (forget's) when the file replaces what it said before."""
    writer = store.BatchWriter(db)
    placer = Placer(db, source_id, writer, lambda line, reason: result.warnings.append(
        IngestWarning(line, reason, "identity")))
    linker = Linker(db, source_id, flush=writer.flush, place_launch=placer.place_launch)
    counts = result.counts
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
        counts[row.__table__] = counts.get(row.__table__, 0) + 1
        for child in item.children:
            if known and placer.merges_children(row.__table__, child.__table__):
                continue        # merged into the stored row's by the placer
            for column, target, _ in child.__foreign_keys__:
                if target == row.__table__:
                    store.assign(child, **{column: row_id})
            if "source_id" in fields_of(type(child)):
                store.assign(child, source_id=source_id)
            writer.add(child)
            counts[child.__table__] = counts.get(child.__table__, 0) + 1
    writer.flush()
    linker.finish()
    placer.finish()
    if linker.launch_count:
        counts["server_launches"] = linker.launch_count
    result.known = placer.merged
    touched, configs = forgotten
    refresh_configurations(db, touched | placer.touched_runs, configs)


def finish_source(db: sqlite_utils.Database, source_id: int, sha256: str, size: int,
                  report: ReadReport, result: FileResult) -> None:
    """The file's hash, encoding and counts on its ``sources`` row, its warnings stored."""
    if size == 0:
        result.warnings.append(IngestWarning(1, "empty file"))
    for warning in result.warnings:
        store.insert(db, UnparsedBlock(source_id=source_id, format=warning.format,
                                       line=warning.line, reason=warning.reason,
                                       raw_text=warning.raw_text))
    db.conn.execute("UPDATE sources SET sha256 = ?, size = ?, encoding = ?, runs = ?, "
                    "warnings = ? WHERE id = ?", [sha256, size, report.encoding, result.runs,
                                                  len(result.warnings), source_id])
