"""Every sighting kept, one row per thing seen: a row rebuilt from its sightings, a file's
sightings forgotten.

Ingest places each sighting (ingest/identify.py); a row seen more than once is rebuilt from all
its sightings (:func:`rebuild`).  :func:`forget_source` takes a file's sightings away again (a
file re-ingested, changed or deleted): a row seen elsewhere too is rebuilt from the sightings
left, a row seen only there goes.

A sighting's ``record`` (what it said) is stored only once its row has several sightings;
while it is the only one, the row itself says it.
"""

from __future__ import annotations

import functools
import json
from typing import TYPE_CHECKING, Any

from ..schemas import store
from ..schemas.models import Row, json_safe
from ..schemas.server import LOGGED_BY_LAUNCH
from ..schemas.store import model_for
from .identity import Identity, Said, identities, merge, merge_children, primary_index

if TYPE_CHECKING:
    import sqlite_utils



@functools.cache
def _numeric(model: type[Row]) -> set[str]:
    from .identity import _numbers

    return set(_numbers(model, ()))


@functools.cache
def _json_columns(table: str) -> list[str]:
    model = model_for(table)
    return [n for n, f in model.model_fields.items() if store._is_json(f.annotation)]


def record_values(identity: Identity, text: Any) -> dict[str, Any]:
    """A stored record back as the values it was made from: JSON has no infinities, so a rate
    of inf was kept as the text "inf"."""
    values = loads(text) or {}
    for name in _numeric(model_for(identity.table)):
        if isinstance(values.get(name), str):
            try:
                values[name] = float(values[name])
            except ValueError:
                pass
    return values


def record_text(values: dict[str, Any]) -> str:
    """What a sighting said, as its record stores it: the same values give the same text,
    whether they come from a parsed block or from the row stored (booleans as the integers
    SQLite keeps, keys sorted)."""
    return json.dumps(json_safe({k: int(v) if v.__class__ is bool else v
                                 for k, v in values.items()}), sort_keys=True, default=str)


def loads(text: Any) -> Any:
    return json.loads(text) if isinstance(text, str) else text


def row_values(db: sqlite_utils.Database, identity: Identity, row_id: int) -> dict[str, Any]:
    """What row ``row_id`` says, as a sighting would (JSON columns decoded)."""
    cursor = db.execute(f"SELECT * FROM [{identity.table}] WHERE id = ?", [row_id])
    names = [d[0] for d in cursor.description]
    row = cursor.fetchone()
    return values_of(identity, dict(zip(names, row))) if row else {}


def values_of(identity: Identity, stored: dict[str, Any]) -> dict[str, Any]:
    """A stored row's columns as a sighting would say them (JSON columns decoded), without
    what the warehouse added from a launch read elsewhere (experiments.launches): no sighting
    said that, and a record must not keep it."""
    values = identity.content(stored)
    for name in _json_columns(identity.table):      # stored as JSON text
        if isinstance(values.get(name), str):
            values[name] = loads(values[name])
    if stored.get("launch_matched_on") is not None:
        values["launch_id"] = None
    if stored.get("engine_from_launch"):
        values["engine"] = "unknown"
    return values


# --- rebuilding a row from its sightings --------------------------------------------------------

def rebuild(db: sqlite_utils.Database, identity: Identity, row_id: int) -> bool:
    """Rewrite row ``row_id`` from its sightings; False when it has none left.

    Each distinct thing said counts once (a block pasted five times is one sighting's worth of
    values); the row's provenance is its most precise sighting's, the first on a tie.  "First"
    is in reading order (file path, then line), whatever order the files were ingested in; so
    is which sighting of each thing said keeps its record.
    """
    rows = db.execute(f"SELECT g.id, g.source_id, g.line_start, g.line_end, g.raw_text, "
                      f"g.record, g.tolerance, g.children, g.content_hash FROM sightings g "
                      f"LEFT JOIN sources s ON s.id = g.source_id WHERE g.{identity.column} = ? "
                      "ORDER BY s.path, g.line_start, g.line_end, g.id", [row_id]).fetchall()
    if not rows:
        return False
    _records_with_first(db, rows)
    model = model_for(identity.table)
    said: dict[Any, tuple[Said, Any]] = {}
    for r in rows:
        if r[5] is not None:
            said.setdefault(r[8] or r[0], (Said(record_values(identity, r[5]), loads(r[6])),
                                           loads(r[7])))
    if not said:
        # Seen saying one thing only, which the row holds: where it was seen may have changed.
        values = {}
    else:
        saids = [s for s, _ in said.values()]
        values = merge(identity, saids, _numeric(model))
        values = _existing_links(db, values)
    tolerances = [Said({}, loads(r[6])) for r in rows]
    primary = rows[primary_index(tolerances)]
    values.update(source_id=primary[1], line_start=primary[2], line_end=primary[3],
                  raw_text=primary[4])
    if "sightings" in model.model_fields:
        values["sightings"] = len(rows)
    if len(values) > 5:
        row = model(**{k: v for k, v in values.items() if k in model.model_fields})
        record = store.to_record(row)
        for column in ("id", "config_id", "group_id"):
            record.pop(column, None)         # the id stays; the configuration refresh owns these
    else:
        record = values
    assignments = ", ".join(f"[{k}] = ?" for k in record)
    db.execute(f"UPDATE [{identity.table}] SET {assignments} WHERE id = ?",
               [*record.values(), row_id])
    db.execute(f"UPDATE sightings SET is_primary = (id = ?) WHERE {identity.column} = ?",
               [primary[0], row_id])
    if identity.children and len(values) > 5:
        children = merge_children([(s, c or []) for s, c in said.values()], identity.child_key)
        link, names = identity.child_link, identity.child_columns
        db.execute(f"DELETE FROM [{identity.children}] WHERE [{link}] = ?", [row_id])
        if children:
            db.conn.executemany(f"INSERT INTO [{identity.children}] ([{link}], "
                                f"{', '.join(names)}) VALUES "
                                f"({', '.join('?' * (len(names) + 1))})",
                                [(row_id, *c) for c in children])
    return True


def _records_with_first(db: sqlite_utils.Database, rows: list) -> None:
    """Each record on the first sighting (of ``rows``, in reading order) that said it, moved
    there from a sighting of the same text read earlier in ingest order."""
    holders: dict[Any, int] = {}
    for at, r in enumerate(rows):
        holders.setdefault(r[8] or r[0], at)
    for at, r in enumerate(rows):
        first = holders[r[8] or r[0]]
        if r[5] is not None and first != at:
            db.execute("UPDATE sightings SET record = ?, children = ? WHERE id = ?",
                       [r[5], r[7], rows[first][0]])
            db.execute("UPDATE sightings SET record = NULL, children = NULL WHERE id = ?",
                       [r[0]])
            rows[first] = (*rows[first][:5], r[5], rows[first][6], r[7], *rows[first][8:])
            rows[at] = (*r[:5], None, r[6], None, *r[8:])


def _set_count(db: sqlite_utils.Database, identity: Identity, row_id: int, count: int) -> None:
    if "sightings" in model_for(identity.table).model_fields:
        db.execute(f"UPDATE [{identity.table}] SET sightings = ? WHERE id = ?", [count, row_id])


def _existing_links(db: sqlite_utils.Database, values: dict[str, Any]) -> dict[str, Any]:
    """A link a record kept to a launch or run since forgotten is no link."""
    for column, table in (("launch_id", "server_launches"), ("run_id", "serving_runs")):
        if values.get(column) is not None and not db.execute(
                f"SELECT 1 FROM [{table}] WHERE id = ?", [values[column]]).fetchone():
            values[column] = None
    return values


# --- forgetting a file ------------------------------------------------------------------------

# Links other rows keep to a row that can be forgotten: (table, column) per forgotten table.
REFERENCES = {
    "serving_runs": (("spec_decode_metrics", "run_id"),),
    "server_launches": tuple((table, "launch_id") for table in ("serving_runs",
                                                                *LOGGED_BY_LAUNCH)),
}


def forget_source(db: sqlite_utils.Database, source_id: int) -> tuple[set[int], set[int]]:
    """Take away every sighting read from ``source_id``: rows seen elsewhere too are rebuilt
    from what is left, the others are deleted.  Returns the serving runs rebuilt and the
    configurations that lost a run (both to refresh)."""
    if not db["sightings"].exists():
        return set(), set()
    ids = identities()
    seen: dict[str, set[int]] = {}
    for identity in ids.values():
        seen[identity.table] = {r[0] for r in db.execute(
            f"SELECT DISTINCT {identity.column} FROM sightings WHERE source_id = ? AND "
            f"{identity.column} IS NOT NULL", [source_id])}
    _hand_over_records(db, source_id)
    db.execute("DELETE FROM sightings WHERE source_id = ?", [source_id])
    rebuilt: set[int] = set()
    gone: dict[str, list[int]] = {}
    for table, row_ids in seen.items():
        identity = ids[table]
        for row_id in sorted(row_ids):
            left = db.execute(f"SELECT COUNT(*) FROM sightings WHERE {identity.column} = ?",
                              [row_id]).fetchone()[0]
            if left:
                continue
            gone.setdefault(table, []).append(row_id)
    # Rows going away first (so no rebuilt row keeps a link to them), then the rebuilt ones.
    configs = {r[0] for start in range(0, len(gone.get("serving_runs", [])), 500)
               for r in db.execute(
                   "SELECT DISTINCT config_id FROM serving_runs WHERE config_id IS NOT NULL AND "
                   f"id IN ({', '.join('?' * len(gone['serving_runs'][start:start + 500]))})",
                   gone["serving_runs"][start:start + 500])}
    for table, row_ids in gone.items():
        _delete_rows(db, ids[table], row_ids)
    for table, row_ids in seen.items():
        for row_id in sorted(row_ids - set(gone.get(table, ()))):
            rebuild(db, ids[table], row_id)
            if table == "serving_runs":
                rebuilt.add(row_id)
    return rebuilt, configs


def _hand_over_records(db: sqlite_utils.Database, source_id: int) -> None:
    """A record about to go with its file passes to a sighting elsewhere that said the same."""
    holders = db.execute("SELECT id, kind, content_hash, record, children FROM sightings "
                         "WHERE source_id = ? AND record IS NOT NULL", [source_id]).fetchall()
    for _, kind, content, record, children in holders:
        heir = db.execute("SELECT id FROM sightings WHERE kind = ? AND content_hash = ? AND "
                          "source_id != ? ORDER BY id LIMIT 1",
                          [kind, content, source_id]).fetchone()
        if heir:
            db.execute("UPDATE sightings SET record = ?, children = ? WHERE id = ?",
                       [record, children, heir[0]])


def _delete_rows(db: sqlite_utils.Database, identity: Identity, row_ids: list[int]) -> None:
    for start in range(0, len(row_ids), 500):
        chunk = row_ids[start:start + 500]
        marks = ", ".join("?" * len(chunk))
        for table, column in REFERENCES.get(identity.table, ()):
            if db[table].exists():
                db.execute(f"UPDATE [{table}] SET [{column}] = NULL WHERE [{column}] IN "
                           f"({marks})", chunk)
        for child in ("latency_stats", "serving_requests"):
            if identity.table == "serving_runs" and db[child].exists():
                db.execute(f"DELETE FROM [{child}] WHERE run_id IN ({marks})", chunk)
        if identity.table != "serving_runs" and identity.children and \
                db[identity.children].exists():
            db.execute(f"DELETE FROM [{identity.children}] WHERE [{identity.child_link}] IN "
                       f"({marks})", chunk)
        db.execute(f"DELETE FROM [{identity.table}] WHERE id IN ({marks})", chunk)
