"""Identify: a row seen before becomes a sighting of the stored row, not a row of its own.

Ingest hands each row that can be seen twice (experiments.identity.identities()) to
:class:`Placer` instead of inserting it.  A row nothing stored matches is inserted with one
sighting; a row that matches a stored one becomes that row's next sighting, and the row is
rebuilt from all its sightings (experiments.sightings.rebuild).  Which sightings are one row
is decided by experiments.identity; this stage finds the candidates and keeps the sightings.
"""

from __future__ import annotations

import bisect
import functools
import json
import math
from typing import TYPE_CHECKING, Any, Callable, Iterable

from ..experiments.identity import EPSILON, MAX_CONTRADICTED, Identity, Said, contradicts, \
    differences, identities
from ..experiments.sightings import loads, rebuild, record_text, record_values, \
    row_values, values_of
from ..schemas import store
from ..schemas.experiments import Sighting
from ..schemas.models import Row
from ..schemas.server import LOGGED_BY_LAUNCH
from ..schemas.store import model_for

if TYPE_CHECKING:
    import sqlite_utils

def _finite(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


@functools.cache
def _compared(identity: Identity) -> frozenset[str]:
    return frozenset((*identity.key, *filter(None, (identity.near,)), *identity.results,
                      *identity.config))


@functools.cache
def _stored_compared(identity: Identity) -> tuple[str, ...]:
    """The compared columns of ``identity``'s table, in its column order."""
    return tuple(c for c in model_for(identity.table).model_fields if c in _compared(identity))


def _reach(value: float, tolerance: float, widest: float) -> float:
    """How far another sighting's look-up value may be from ``value`` (printed to within
    ``tolerance``) and still agree with it, when that one was printed to within ``widest`` at
    most: identity.close's |a - b| <= max(tolerances) + EPSILON * max(1, |a|, |b|), bounded."""
    tolerance += widest
    return tolerance + 2 * EPSILON * (max(1.0, abs(value)) + tolerance) + 1e-12


class _Local:
    """This file's new rows of one key (a count of requests), found by their ``near`` value
    (duration) in O(log n).  A sweep prints hundreds of runs with the same request count, and
    comparing each new run with every earlier one made a file of distinct runs quadratic
    (19k runs in 20 MB: 196 s).  A row whose near value is farther from the new sighting's
    than both tolerances allow differs from it on that column: it is neither the same row nor
    a contradiction (identity.near_agrees), so leaving it out changes no answer."""

    __slots__ = ("entries", "ids", "nears", "loose", "max_tol")

    def __init__(self) -> None:
        self.entries: list[tuple[int, Said]] = []     # in the order seen
        self.ids: set[int] = set()
        self.nears: list[tuple[float, int]] = []      # (near value, position), sorted
        self.loose: list[int] = []      # positions without a finite near value: always looked at
        self.max_tol = 0.0

    def add(self, row_id: int, said: Said, identity: Identity) -> None:
        # What the comparisons read (identity.differences skips a column either side leaves
        # empty): a sweep's file keeps every new run here, at half the memory of its row.
        compared = _compared(identity)
        said = Said({k: v for k, v in said.values.items() if k in compared and v is not None},
                    said.tolerance)
        near = identity.near
        position = len(self.entries)
        self.entries.append((row_id, said))
        self.ids.add(row_id)
        value = _finite(said.values.get(near)) if near else None
        if value is None:
            self.loose.append(position)
            return
        bisect.insort(self.nears, (value, position))
        self.max_tol = max(self.max_tol, said.tol(near))

    def candidates(self, said: Said, near: str | None) -> list[tuple[int, Said]]:
        """The rows that may agree with ``said``, in the order they were seen."""
        value = _finite(said.values.get(near)) if near else None
        if value is None:
            return self.entries
        reach = _reach(value, said.tol(near), self.max_tol)
        low = bisect.bisect_left(self.nears, (value - reach, -1))
        high = bisect.bisect_right(self.nears, (value + reach, len(self.entries)))
        positions = sorted([position for _, position in self.nears[low:high]] + self.loose)
        return [self.entries[position] for position in positions]


# Tolerances as stored (JSON) by their items: the blocks of one shape print the same digits,
# so a few tolerances serve a file's sightings (printing a block's 16 floats each time took
# ~14 µs, a fifth of placing a block seen before).  Only positive floats (what half_unit
# gives): equal items, equal JSON.
_TOLERANCE_TEXTS: dict[tuple, str] = {}
_MAX_TOLERANCE_TEXTS = 4096


def _tolerance_text(tolerance: dict[str, float]) -> str:
    if not all(v.__class__ is float and v > 0 for v in tolerance.values()):
        return store._json_text(tolerance)
    key = tuple(tolerance.items())
    text = _TOLERANCE_TEXTS.get(key)
    if text is None:
        if len(_TOLERANCE_TEXTS) >= _MAX_TOLERANCE_TEXTS:
            _TOLERANCE_TEXTS.clear()
        text = _TOLERANCE_TEXTS[key] = store._json_text(tolerance)
    return text


class Placer:
    """Places the rows of one file's ingest among the rows already stored (one transaction).

    ``warn(line, reason)`` receives contradictions: a stored row and a new sighting that agree
    on what picks them out (same count of requests, same duration to the printed digit) but not
    on everything else are kept as two rows, and both places are named.
    """

    def __init__(self, db: sqlite_utils.Database, source_id: int, writer: store.BatchWriter,
                 warn: Callable[[int, str], None]):
        self.db, self.source_id, self.writer, self.warn = db, source_id, writer, warn
        self.ids = identities()
        # This file's new rows by table and key, each found by its near value (_Local).
        self.local: dict[tuple, _Local] = {}
        # Content hashes and fingerprints of this file's sightings still in the writer's batch.
        self.local_contents: dict[tuple[str, str], int] = {}
        self.local_fingerprints: dict[tuple[str, str], int] = {}
        # (table, row id) → [repeat sightings of it in this file, the first one's line]
        self.seen_again: dict[tuple[str, int], list] = {}
        # (table, row id) → the lines of this file it was read from: two results read from one
        # line (a table row's cells, one per run) are two runs, however alike their figures.
        self.lines_read: dict[tuple[str, int], set[int]] = {}
        # The widest tolerance of a look-up value among the stored sightings, by table.
        self.widest: dict[str, float] = {}
        self.touched_runs: set[int] = set()
        self.merged = 0

    def forget_stored(self) -> None:
        """Ask the warehouse afresh: another writer may have stored sightings since (a file a
        watch follows is stored in parts, other files' between them)."""
        self.widest.clear()

    def tracks(self, row: Row) -> bool:
        return row.__table__ in self.ids

    def merges_children(self, table: str, child_table: str) -> bool:
        identity = self.ids.get(table)
        return identity is not None and identity.children == child_table

    # -- placing -------------------------------------------------------------------------------
    def place(self, row: Row, tolerance: dict[str, float] | None,
              children: Iterable[Row] = ()) -> tuple[int, bool]:
        """Store ``row`` (a new row) or add it as a sighting of the stored row it is.

        Returns (the row's id, whether it was already stored).  ``children`` of a row already
        stored (its latency stats) are merged into that row's; of a new row, the caller
        inserts them.
        """
        identity = self.ids[row.__table__]
        values = dict(row.__dict__)
        content = identity.content_hash(values, tolerance)
        fingerprint = identity.fingerprint(values) if identity.exact else None
        sighting = Sighting(kind=identity.table, source_id=self.source_id,
                            line_start=values.get("line_start"),
                            line_end=values.get("line_end"), format=values.get("format"),
                            raw_text=values.get("raw_text"),
                            content_hash=content, fingerprint=fingerprint, is_primary=False)
        if tolerance:
            # Stored as its JSON text, which the writer binds as it is.
            store.assign(sighting, tolerance=_tolerance_text(tolerance))
        if identity.near:
            near_tolerance = float((tolerance or {}).get(identity.near, 0.0))
            store.assign(sighting, near_tolerance=near_tolerance)
            if near_tolerance > self._widest(identity):
                self.widest[identity.table] = near_tolerance
        line = values.get("line_start")
        same = self._said_before(identity, content)
        if same is not None and self._read_here(identity, same, line):
            same = None
        if same is not None:
            # The very same text again (a block pasted twice): one more sighting, nothing
            # about the row changes.
            store.assign(sighting, **{identity.column: same})
            self.writer.add(sighting)
            self._seen_again(identity, same, line)
            self._read_at(identity, same, line)
            return same, True
        said = Said(identity.content(values), tolerance or None)
        match = self._find(identity, said, fingerprint, line)
        if match is None:
            if "sightings" in values:
                store.assign(row, sightings=1)
            row_id = self.writer.add(row)
            store.assign(sighting, **{identity.column: row_id}, is_primary=True)
            self.writer.add(sighting)
            self._remember(identity, row_id, said, content, fingerprint)
            self._read_at(identity, row_id, line)
            if identity.table == "serving_runs":
                self.touched_runs.add(row_id)
            return row_id, False
        self.writer.flush()
        self._keep_record(identity, match)
        store.assign(sighting, **{identity.column: match}, record=record_text(said.values),
                     children=[[getattr(c, k) for k in identity.child_columns]
                               for c in children if c.__table__ == identity.children] or None)
        self._insert(sighting)
        self._read_at(identity, match, line)
        self.local_contents[(identity.table, content)] = match
        self._rebuild(identity, match)
        return match, True

    def finish(self) -> None:
        """Count the sightings that repeated a row's text (added in batches, counted once).
        A row this file saw before the sighting its values come from (in reading order), or
        whose sightings said several things, is rebuilt instead: it takes this file's place
        and each record moves to the first sighting that said it -- as if the files had come
        in reading order."""
        self.writer.flush()
        path = self.db.execute("SELECT path FROM sources WHERE id = ?",
                               [self.source_id]).fetchone()
        for (table, row_id), (extra, line) in sorted(self.seen_again.items()):
            identity = self.ids[table]
            if self._comes_first(identity, row_id, path, line) or \
                    self._says_several(identity, row_id):
                rebuild(self.db, identity, row_id)
            elif "sightings" in model_for(table).model_fields:
                self.db.execute(f"UPDATE [{table}] SET sightings = sightings + ? WHERE id = ?",
                                [extra, row_id])
        self.seen_again.clear()

    def _comes_first(self, identity: Identity, row_id: int, path: tuple | None,
                     line: int | None) -> bool:
        """This file's sighting at ``line`` comes before the row's own place."""
        place = self.db.execute(f"SELECT s.path, t.line_start FROM [{identity.table}] t "
                                "JOIN sources s ON s.id = t.source_id WHERE t.id = ?",
                                [row_id]).fetchone()
        return place is None or path is None or \
            (path[0], line or 0) < (place[0], place[1] or 0)

    def _says_several(self, identity: Identity, row_id: int) -> bool:
        return self.db.execute(f"SELECT 1 FROM sightings WHERE {identity.column} = ? AND "
                               "record IS NOT NULL LIMIT 1", [row_id]).fetchone() is not None

    def _read_at(self, identity: Identity, row_id: int, line: int | None) -> None:
        if line is not None:
            self.lines_read.setdefault((identity.table, row_id), set()).add(line)

    def _read_here(self, identity: Identity, row_id: int, line: int | None) -> bool:
        """The row was read from ``line`` of this file already (another run of that line)."""
        return line is not None and line in self.lines_read.get((identity.table, row_id), ())

    def _seen_again(self, identity: Identity, row_id: int, line: int | None) -> None:
        seen = self.seen_again.setdefault((identity.table, row_id), [0, line])
        seen[0] += 1
        if line is not None and (seen[1] is None or line < seen[1]):
            seen[1] = line
        self.merged += 1

    def _rebuild(self, identity: Identity, row_id: int) -> None:
        # Counts of this file's repeats go in first: rebuild recounts every sighting.
        self.seen_again.pop((identity.table, row_id), None)
        rebuild(self.db, identity, row_id)
        self.writer.written_elsewhere(*filter(None, (identity.children,)))
        self.merged += 1
        if identity.table == "serving_runs":
            self.touched_runs.add(row_id)

    def _insert(self, sighting: Sighting) -> None:
        # Through the batch writer, which hands out this table's ids, and written at once: the
        # row is rebuilt from its sightings next.
        self.writer.add(sighting)
        self.writer.flush()

    def _said_before(self, identity: Identity, content: str) -> int | None:
        found = self.local_contents.get((identity.table, content))
        if found is not None:
            return found
        hit = self.db.execute(f"SELECT {identity.column} FROM sightings WHERE kind = ? AND "
                              "content_hash = ? LIMIT 1", [identity.table, content]).fetchone()
        return hit[0] if hit else None

    def _remember(self, identity: Identity, row_id: int, said: Said, content: str,
                  fingerprint: str | None) -> None:
        self.local_contents[(identity.table, content)] = row_id
        if fingerprint is not None:
            self.local_fingerprints[(identity.table, fingerprint)] = row_id
        else:
            key = (identity.table, *(said.values.get(k) for k in identity.key))
            self.local.setdefault(key, _Local()).add(row_id, said, identity)

    def _find(self, identity: Identity, said: Said, fingerprint: str | None,
              line: int | None) -> int | None:
        if fingerprint is not None:
            found = self.local_fingerprints.get((identity.table, fingerprint))
            if found is not None:
                return found
            hit = self.db.execute(
                f"SELECT {identity.column} FROM sightings WHERE kind = ? AND fingerprint = ? "
                "LIMIT 1", [identity.table, fingerprint]).fetchone()
            return hit[0] if hit else None
        key = (identity.table, *(said.values.get(k) for k in identity.key))
        local = self.local.get(key)
        seen: set[int] = local.ids if local is not None else set()
        for row_id, other in local.candidates(said, identity.near) if local is not None else ():
            if not self._read_here(identity, row_id, line) \
                    and self._agrees(identity, said, [other], row_id, line):
                return row_id
        for row_id, said_once in self._stored_candidates(identity, said):
            if row_id in seen or self._read_here(identity, row_id, line):
                continue
            sayings = [said_once] if said_once is not None else self._sayings(identity, row_id)
            if self._agrees(identity, said, sayings, row_id, line):
                return row_id
        return None

    def _stored_candidates(self, identity: Identity, said: Said
                           ) -> list[tuple[int, Said | None]]:
        """The stored rows that may be ``said``'s: equal key, a look-up value within reach of
        its (one indexed range), and, for a row that says one thing (seen once, or the same
        text again), no more than MAX_CONTRADICTED of the identity's screen columns differing
        (each compared as identity.close does, with the row's own sighting's tolerance): about
        one row.  Each with what it says when it says one thing (its values and its sighting's
        tolerance), else None (its sightings' records tell)."""
        where, params = [], []
        for column in identity.key:
            value = said.values.get(column)
            where.append(f"t.[{column}] = ?" if value is not None else f"t.[{column}] IS NULL")
            if value is not None:
                params.append(value)
        if identity.near:
            near = _finite(said.values.get(identity.near))
            if near is None:
                return []
            reach = _reach(near, said.tol(identity.near), self._widest(identity))
            where.append(f"t.[{identity.near}] BETWEEN ? AND ?")
            params += [near - reach, near + reach]
        differ, screened = [], []
        for column in identity.screen:
            value = _finite(said.values.get(column))
            if value is None:
                continue
            # 1 when both have the column and it disagrees beyond both tolerances.
            differ.append(f"coalesce(abs(t.[{column}] - ?) > max(?, coalesce(json_extract("
                          f"g.tolerance, '$.\"{column}\"'), 0)) + ? * max(1, abs(t.[{column}]), "
                          "?), 0)")
            screened += [value, said.tol(column), EPSILON, abs(value)]
        # A row that said several things keeps what each said in its sightings' records.
        several = (f"EXISTS (SELECT 1 FROM sightings h WHERE h.[{identity.column}] = t.id AND "
                   "h.record IS NOT NULL)")
        if len(differ) > MAX_CONTRADICTED:
            where.append(f"({several} OR g.id IS NULL OR {' + '.join(differ)} <= "
                         f"{MAX_CONTRADICTED})")
            params += screened
        # What the comparison reads, not the whole row (its raw text is most of its bytes).
        columns = ", ".join(f"t.[{c}]" for c in _stored_compared(identity))
        cursor = self.db.execute(
            f"SELECT t.id, {columns}, g.tolerance AS [_tolerance], {several} AS [_several] "
            f"FROM [{identity.table}] t "
            f"LEFT JOIN sightings g ON g.[{identity.column}] = t.id AND g.is_primary "
            f"WHERE {' AND '.join(where) or '1'}", params)
        names = [d[0] for d in cursor.description]
        out = []
        for row in cursor.fetchall():
            values = dict(zip(names, row))
            tolerance, several_things = values.pop("_tolerance"), values.pop("_several")
            out.append((values["id"], None if several_things else
                        Said(values_of(identity, values), loads(tolerance))))
        return out

    def _widest(self, identity: Identity) -> float:
        """The widest tolerance any stored sighting printed ``identity.near`` with (indexed);
        sightings stored before it was kept get theirs from their tolerance first."""
        widest = self.widest.get(identity.table)
        if widest is None:
            self.db.execute(
                "UPDATE sightings SET near_tolerance = coalesce(json_extract(tolerance, ?), 0) "
                "WHERE kind = ? AND near_tolerance IS NULL",
                [f'$."{identity.near}"', identity.table])
            widest = self.widest[identity.table] = self.db.execute(
                "SELECT coalesce(max(near_tolerance), 0) FROM sightings WHERE kind = ?",
                [identity.table]).fetchone()[0]
        return widest

    def _sayings(self, identity: Identity, row_id: int) -> list[Said]:
        """What the stored sightings of ``row_id`` said, once per distinct content (the row
        itself while it has one)."""
        rows = self.db.execute(f"SELECT record, tolerance FROM sightings WHERE "
                               f"{identity.column} = ? AND (record IS NOT NULL OR is_primary) "
                               "ORDER BY record IS NULL, id", [row_id]).fetchall()
        if not rows:
            return []
        if rows[0][0] is None:               # one content only: the row says it
            return [Said(row_values(self.db, identity, row_id), loads(rows[0][1]))]
        return [Said(record_values(identity, record), loads(tolerance))
                for record, tolerance in rows if record]

    def _agrees(self, identity: Identity, said: Said, others: list[Said], row_id: int,
                line: int | None) -> bool:
        for other in others:
            differ = differences(identity, said, other)
            if differ:
                if contradicts(identity, said, other, differ):
                    self._contradiction(identity, row_id, differ, said, other, line)
                return False
        return True

    def _contradiction(self, identity: Identity, row_id: int, differ: list[str], said: Said,
                       other: Said, line: int | None) -> None:
        place = self.db.execute(
            "SELECT s.path, g.line_start FROM sightings g JOIN sources s ON s.id = g.source_id "
            f"WHERE g.{identity.column} = ? ORDER BY g.is_primary DESC, g.id LIMIT 1",
            [row_id]).fetchone()
        where = f"{place[0]}:{place[1]}" if place else f"this file (row {row_id})"
        shown = ", ".join(f"{c} {said.values.get(c)} vs {other.values.get(c)}"
                          for c in differ[:3])
        self.warn(line or 1, f"contradicts the {identity.table} row read at {where}: same "
                             f"{', '.join((*identity.key, identity.near))} but {shown}; kept "
                             f"as two rows")

    def _keep_record(self, identity: Identity, row_id: int) -> None:
        """Before a row is seen saying something new, what it said so far is written out on
        one of its sightings (until now the row itself said it)."""
        if self.db.execute(f"SELECT 1 FROM sightings WHERE {identity.column} = ? AND record IS "
                           "NOT NULL LIMIT 1", [row_id]).fetchone():
            return
        first = self.db.execute(f"SELECT id FROM sightings WHERE {identity.column} = ? "
                                "ORDER BY is_primary DESC, id LIMIT 1", [row_id]).fetchone()
        if first is None:
            return
        children = None
        if identity.children:
            children = [list(r) for r in self.db.execute(
                f"SELECT {', '.join(identity.child_columns)} FROM [{identity.children}] "
                f"WHERE [{identity.child_link}] = ? ORDER BY id", [row_id])] or None
        self.db.execute("UPDATE sightings SET record = ?, children = ? WHERE id = ?",
                        [record_text(row_values(self.db, identity, row_id)),
                         json.dumps(children) if children else None, first[0]])

    # -- launches: assembled over a whole file, placed when it is done ------------------------
    def place_launch(self, launch_id: int, values: dict[str, Any]) -> int:
        """Place a launch the linker assembled (already inserted as ``launch_id``): the id it
        keeps (another, when the same launch was stored before)."""
        identity = self.ids["server_launches"]
        said = Said(identity.content(values))
        content = identity.content_hash(values, None)
        fingerprint = identity.fingerprint(values)
        match = self._said_before(identity, content)
        if match is None:
            match = self._find(identity, said, fingerprint, None)
        sighting = Sighting(kind=identity.table, source_id=self.source_id,
                            line_start=values.get("line_start"),
                            line_end=values.get("line_end"), raw_text=values.get("raw_text"),
                            content_hash=content, fingerprint=fingerprint)
        if match is None or match == launch_id:
            store.assign(sighting, launch_id=launch_id, is_primary=True)
            self.writer.add(sighting)
            self._remember(identity, launch_id, said, content, fingerprint)
            return launch_id
        self.writer.flush()
        if self._said_before(identity, content) == match:
            # The same launch text again: its rows link to the stored launch, nothing changes.
            self._repoint_launch(launch_id, match, rebuild_runs=False)
            self.db.execute("DELETE FROM server_launches WHERE id = ?", [launch_id])
            store.assign(sighting, launch_id=match, is_primary=False)
            self.writer.add(sighting)
            self._seen_again(identity, match, values.get("line_start"))
            return match
        self._repoint_launch(launch_id, match)
        self._keep_record(identity, match)
        store.assign(sighting, launch_id=match, is_primary=False,
                     record=record_text(said.values))
        self._insert(sighting)
        self.db.execute("DELETE FROM server_launches WHERE id = ?", [launch_id])
        self._rebuild(identity, match)
        return match

    def _repoint_launch(self, old: int, new: int, rebuild_runs: bool = True) -> None:
        """This file's rows linked to launch ``old`` link to ``new`` (the same launch)."""
        for table in ("serving_runs", *LOGGED_BY_LAUNCH):
            if self.db[table].exists():
                self.db.execute(f"UPDATE [{table}] SET launch_id = ? WHERE launch_id = ?",
                                [new, old])
        if not rebuild_runs:
            return
        rows = self.db.execute("SELECT id, run_id, record FROM sightings WHERE source_id = ? "
                               "AND record IS NOT NULL", [self.source_id]).fetchall()
        runs = set()
        for sighting_id, run_id, record in rows:
            said = loads(record) or {}
            if said.get("launch_id") == old:
                said["launch_id"] = new
                self.db.execute("UPDATE sightings SET record = ? WHERE id = ?",
                                [record_text(said), sighting_id])
                if run_id is not None:
                    runs.add(run_id)
        for run_id in sorted(runs):
            self._rebuild(self.ids["serving_runs"], run_id)
