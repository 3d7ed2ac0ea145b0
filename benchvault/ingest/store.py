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
from ..schemas.models import Row, Source, UnparsedBlock, fields_of
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
    writing = FileWriter(db, source_id, result, forgotten)
    writing.add(items)
    writing.finish()


class FileWriter:
    """One file's items stored as they come, in file order, inside the caller's transaction.

    A whole file is stored at once (write_rows: add, then finish).  A file followed while it
    is written (``ingest --watch``) is stored a part at a time, each part committed:
    :meth:`checkpoint` makes what it stored so far whole (rows written, its launches as
    assembled so far, repeats counted, the new runs' configurations, its warnings and counts
    on its ``sources`` row), :meth:`resume` opens the next part, and :meth:`finish` does what
    the end of the file does.
    """

    def __init__(self, db: sqlite_utils.Database, source_id: int, result: FileResult,
                 forgotten: tuple[set[int], set[int]] = (set(), set())):
        self.db, self.source_id, self.result = db, source_id, result
        self.writer = store.BatchWriter(db)
        self.placer = Placer(db, source_id, self.writer, lambda line, reason: result.warnings
                             .append(IngestWarning(line, reason, "identity")))
        self.linker = Linker(db, source_id, flush=self.writer.flush,
                             place_launch=self.placer.place_launch)
        self.forgotten = (set(forgotten[0]), set(forgotten[1]))
        # A list to collect the serving runs stored (with whether each was seen before), for
        # a watch to show as they land; None: not collected.
        self.landed: list[tuple[Row, bool]] | None = None
        self.configured: set[int] = set()      # runs given their configuration at checkpoints
        self.warned = 0                        # warnings stored at checkpoints
        self.checkpoints = 0

    def add(self, items: Iterable[Parsed | Facts | IngestWarning]) -> None:
        """Store ``items``, the next ones of the file."""
        source_id, result = self.source_id, self.result
        writer, placer, linker = self.writer, self.placer, self.linker
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
                try:
                    row_id, known = placer.place(row, item.tolerance, item.children)
                except OverflowError:
                    # A count beyond 64 bits (a 400-digit JSON value): no column holds it.
                    result.warnings.append(IngestWarning(
                        row.line_start or 0, f"{row.__table__}: a number out of range, stored "
                        f"as null: {', '.join(store.out_of_range(row))}"))
                    row_id, known = placer.place(row, item.tolerance, item.children)
            else:
                row_id, known = writer.add(row), False
            linker.after_insert(row, row_id)
            counts[row.__table__] = counts.get(row.__table__, 0) + 1
            if self.landed is not None and row.__table__ == "serving_runs":
                self.landed.append((row, known))
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

    def checkpoint(self, size: int, report: ReadReport) -> None:
        """What the file stored so far made whole, for a commit before its end: its launches
        are placed among other files' when it ends (finish), as the lines that assemble them
        may still come; its hash is left empty and its time NULL, so that any ingest reads it
        again if this one stops before the end."""
        self.writer.flush()
        launches = self.linker.save()
        self.placer.finish()
        self._counted()
        runs = self.placer.touched_runs - self.configured
        if launches:
            # A launch that learnt more (its parallel sizes, its model) changes its runs'.
            marks = ", ".join("?" * len(launches))
            runs |= {r for (r,) in self.db.execute(
                f"SELECT id FROM serving_runs WHERE launch_id IN ({marks})", launches)}
        # What the file replaced counts at its first checkpoint (and again at its end).
        forgotten = self.forgotten if not self.checkpoints else (set(), set())
        refresh_configurations(self.db, runs | forgotten[0], forgotten[1])
        self.configured |= runs
        self.checkpoints += 1
        self._store_warnings()
        self.db.execute("UPDATE sources SET sha256 = '', size = ?, mtime_ns = NULL, "
                        "encoding = ?, runs = ?, warnings = ? WHERE id = ?",
                        [size, report.encoding, self.result.runs, len(self.result.warnings),
                         self.source_id])

    def resume(self) -> None:
        """Open the next part: other writers may have written since the checkpoint, so the
        next ids and the stored look-ups are asked again."""
        self.writer.written_elsewhere(*list(self.writer.next_id))
        self.placer.forget_stored()

    def finish(self) -> None:
        """The end of the file: launches placed among the stored ones, repeats counted, and
        every run it placed or changed given its configuration (again, when checkpoints gave
        it one before: a later line, a launch's or a sibling's, may change it).  Its
        ``sources`` row is finish_source's."""
        self.writer.flush()
        self.linker.finish()
        self.placer.finish()
        self._counted()
        refresh_configurations(self.db, self.forgotten[0] | self.placer.touched_runs,
                               self.forgotten[1])

    def _counted(self) -> None:
        if self.linker.launch_count:
            self.result.counts["server_launches"] = self.linker.launch_count
        self.result.known = self.placer.merged

    def _store_warnings(self) -> None:
        for warning in self.result.warnings[self.warned:]:
            _store_warning(self.db, self.source_id, warning)
        self.warned = len(self.result.warnings)


def finish_source(db: sqlite_utils.Database, source_id: int, sha256: str, size: int,
                  report: ReadReport, result: FileResult, stored: int = 0) -> None:
    """The file's hash, encoding and counts on its ``sources`` row, its warnings stored (but
    the first ``stored``, stored already)."""
    if size == 0:
        result.warnings.append(IngestWarning(1, "empty file"))
    for warning in result.warnings[stored:]:
        _store_warning(db, source_id, warning)
    db.conn.execute("UPDATE sources SET sha256 = ?, size = ?, encoding = ?, runs = ?, "
                    "warnings = ? WHERE id = ?", [sha256, size, report.encoding, result.runs,
                                                  len(result.warnings), source_id])


def _store_warning(db: sqlite_utils.Database, source_id: int, warning: IngestWarning) -> None:
    store.insert(db, UnparsedBlock(source_id=source_id, format=warning.format, line=warning.line,
                                   reason=warning.reason, raw_text=warning.raw_text))
