"""The SQLite warehouse, derived from the pydantic models and written with sqlite-utils."""

from __future__ import annotations

import itertools
import json
import operator
import sqlite3
import sys
import time
import types
import typing
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from ..dbfile import SCHEMA_VERSION, busy_timeout
from ..errors import bad_database
from .experiments import CONFIG_METRICS
from . import models
from .models import Row, json_safe
from .tables import model_for, row_models, stored_order  # noqa: F401  (also for callers)
from .views import ensure_views


if TYPE_CHECKING:
    import sqlite_utils


@lru_cache(maxsize=None)
def _import_sqlite_utils_lightly():
    """sqlite-utils, imported without pandas and numpy when they are not loaded yet, and only
    when a warehouse is opened: the models and the readers do without it (a worker process
    that only reads files never loads it).

    sqlite-utils imports both (half a second, most of an ingest's start-up) only to map their
    scalar types to column types; benchvault never writes such values.  Whatever imports
    pandas later gets it as usual.
    """
    hidden = [name for name in ("pandas", "numpy") if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]  # `import pandas` fails fast
    try:
        import sqlite_utils
    finally:
        for name in hidden:
            del sys.modules[name]
    return sqlite_utils


# (table, columns, unique): the look-ups ingest, reports and Datasette make.
INDEXES = (
    ("serving_runs", ("source_id",), False), ("latency_stats", ("run_id",), False),
    ("unparsed_blocks", ("source_id",), False), ("sources", ("path",), False),
    # which stored run a new sighting may be (benchvault.experiments.sightings)
    ("serving_runs", ("completed", "duration"), False),
    ("llama_bench_results", ("test", "avg_ts"), False),
    ("sightings", ("kind", "fingerprint"), False), ("sightings", ("source_id",), False),
    ("sightings", ("kind", "content_hash"), False), ("sightings", ("kind", "near_tolerance"), False),
    ("sightings", ("run_id",), False), ("sightings", ("llama_bench_id",), False),
    ("sightings", ("launch_id",), False), ("sightings", ("spec_decode_id",), False),
    ("serving_runs", ("group_id",), False),
    # a configuration's runs (it leads), their repeat statistics read from the index alone
    # (experiments.refresh): its runs lie scattered over the table, one page each
    ("serving_runs", ("config_id", *CONFIG_METRICS, "source_id", "line_start", "line_end"),
     False),
    ("configurations", ("key",), True), ("configurations", ("group_id",), False),
    ("experiment_groups", ("key",), True), ("serving_requests", ("source_id",), False),
    ("serving_requests", ("run_id",), False), ("spec_decode_metrics", ("run_id",), False),
    ("llama_bench_results", ("source_id",), False),
    ("serving_runs", ("launch_id",), False),
    # a launch's lines in a run's window (view run_server_stats); its launch_id look-ups too
    ("spec_decode_metrics", ("launch_id", "logged_at"), False),
    ("engine_stats", ("launch_id", "logged_at"), False),
    # the launches a run may have run against, across files (experiments.launches)
    ("server_launches", ("port",), False), ("server_launches", ("source_id", "line_start"), False),
    # the facets Datasette counts on every serving_runs page
    ("serving_runs", ("engine",), False), ("serving_runs", ("model",), False),
    ("serving_runs", ("max_concurrency",), False), ("serving_runs", ("section",), False),
    ("serving_runs", ("label",), False), ("serving_runs", ("tags",), False),
    # offline cases: their file, their step lines, their sightings' look-up, their groups
    ("offline_runs", ("source_id",), False), ("offline_runs", ("tool", "phase"), False),
    ("offline_runs", ("config_id",), False), ("offline_runs", ("group_id",), False),
    ("offline_steps", ("offline_id",), False), ("sightings", ("offline_id",), False),
    ("offline_configurations", ("key",), True), ("offline_groups", ("key",), True),
)


def _sqlite_type(annotation: Any) -> type:
    args = typing.get_args(annotation)
    origin = typing.get_origin(annotation)
    if origin in (Union, types.UnionType):
        annotation = next(a for a in args if a is not type(None))
        origin = typing.get_origin(annotation)
    if annotation is bool:
        return int
    if annotation in (int, float, str):
        return annotation
    return str  # dicts and lists are stored as JSON text


def columns(model: type[Row]) -> dict[str, type]:
    """The model's columns and their SQLite types, in the order its table stores them."""
    fields = model.model_fields
    return {name: _sqlite_type(fields[name].annotation) for name in stored_order(model)}


PAGE_SIZE = 16384
CACHE_KIB = 64 << 10


def connect(path: str | Path) -> sqlite_utils.Database:
    """Open (creating if needed) the warehouse with WAL and a long busy timeout
    (BENCHVAULT_BUSY_TIMEOUT seconds, see dbfile.busy_timeout)."""
    timeout = busy_timeout()
    started = time.monotonic()
    conn = sqlite3.connect(str(path), timeout=timeout, isolation_level=None)
    db = _import_sqlite_utils_lightly().Database(conn)
    if str(path) != ":memory:":
        # A new warehouse's pages (no effect on an existing one): a report or export reads
        # every run's wide row, and 16 KiB pages make that scan one read per ~7 runs instead
        # of one per ~1.5 (the narrow read of 100k runs: 0.28 -> 0.18 s).
        db.execute(f"PRAGMA page_size={PAGE_SIZE}")
        db.execute("PRAGMA journal_mode=WAL")
        # WAL + NORMAL cannot corrupt the file; a power cut may lose the last files' commits,
        # which a re-ingest redoes. FULL would fsync once per file ingested.
        db.execute("PRAGMA synchronous=NORMAL")
        # The indexes a new run touches (its content hash, its look-up, its configuration's
        # covering index) are spread over a big warehouse's pages: SQLite's default 2 MB page
        # cache read most of them again from the OS for every file.
        db.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
    db.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
    db.execute("PRAGMA foreign_keys=ON")
    for attempt in range(50):
        try:
            ensure_schema(db)  # idempotent: safe to run again
            break
        except sqlite3.OperationalError as exc:
            # Processes creating a new database at once: SQLite answers "locked" without
            # waiting while the file switches to WAL; wait and try again (within the timeout).
            if ("locked" not in str(exc) or attempt == 49
                    or time.monotonic() - started >= timeout):
                db.close()
                raise
            time.sleep(0.02 * (attempt + 1))
    return db


def ensure_schema(db: sqlite_utils.Database) -> None:
    # Concurrent first connections: take the write lock before looking (a read that then
    # writes can be refused at once with "database is locked"; BEGIN IMMEDIATE waits).
    db.execute("BEGIN IMMEDIATE")
    try:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise bad_database(f"{_file_of(db)}: written by a newer benchvault (schema "
                               f"{version}, this one knows up to {SCHEMA_VERSION}); upgrade "
                               "benchvault or use another --db")
        _ensure_tables(db)
        # Columns a newer schema added went to the end of their tables: put them in order.
        reorder = 0 < version < SCHEMA_VERSION
        if 0 < version < LAUNCH_KEYS_SINCE:
            _launch_keys_from_args(db)
        if version < SCHEMA_VERSION:
            db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    if reorder:
        _store_in_order(db)
    for table, columns, unique in INDEXES:
        if db[table].exists():
            name = f"idx_{table}_{'_'.join(columns)}"
            db.execute(f"CREATE {'UNIQUE ' if unique else ''}INDEX IF NOT EXISTS {name} "
                       f"ON {table}({', '.join(columns)})")
    ensure_views(db)        # views need the tables above


# The schema version from which tables store their columns in stored_order.
ORDERED_SINCE = 2
# ... and from which a launch keeps the port and model names its clients name.
LAUNCH_KEYS_SINCE = 3


def _launch_keys_from_args(db: sqlite_utils.Database) -> None:
    """Launches stored before they kept their port and served model name get them from the
    arguments they stored (the engine's default port when those name none, as a new launch;
    a port only a `Starting ... server on` line printed comes with a re-ingest)."""
    if not db["server_launches"].exists():
        return
    db.execute(
        "UPDATE server_launches SET port = COALESCE(CAST(json_extract(args, '$.port') AS "
        "INTEGER), CASE WHEN args IS NOT NULL THEN CASE COALESCE(engine, 'vllm') "
        "WHEN 'vllm' THEN 8000 WHEN 'sglang' THEN 30000 WHEN 'llama.cpp' THEN 8080 END END), "
        "served_model_name = CASE json_type(args, '$.served_model_name') "
        "WHEN 'array' THEN json_extract(args, '$.served_model_name[0]') "
        "WHEN 'text' THEN json_extract(args, '$.served_model_name') END "
        "WHERE port IS NULL AND served_model_name IS NULL AND json_valid(args)")


def _store_in_order(db: sqlite_utils.Database) -> None:
    """A warehouse made before tables stored their columns in stored_order: each table
    rewritten so (sqlite-utils' transform: rows, keys and indexes kept), its views made
    again after (ensure_views)."""
    db.execute("PRAGMA foreign_keys=OFF")
    db.execute("BEGIN IMMEDIATE")
    try:
        for (view,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'view'").fetchall():
            db.execute(f"DROP VIEW IF EXISTS [{view}]")
        for model in row_models():
            table = db[model.__table__]
            if not table.exists():
                continue
            present = [c.name for c in table.columns]
            wanted = [c for c in stored_order(model) if c in present] + \
                [c for c in present if c not in model.model_fields]
            if present != wanted:
                table.transform(column_order=wanted)
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    finally:
        db.execute("PRAGMA foreign_keys=ON")


def _file_of(db: sqlite_utils.Database) -> str:
    return next((row[2] for row in db.execute("PRAGMA database_list") if row[1] == "main"),
                "the database") or ":memory:"


def _ensure_tables(db: sqlite_utils.Database) -> None:
    for model in row_models():
        table = db[model.__table__]
        cols = columns(model)
        if not table.exists():
            try:
                table.create(cols, pk="id" if "id" in cols else None,
                             foreign_keys=list(model.__foreign_keys__), if_not_exists=True)
            except sqlite3.OperationalError as exc:  # another process created it first
                if "already exists" not in str(exc):
                    raise
        else:
            present = table.columns_dict        # one PRAGMA table_info per table, not per column
            missing = {c: t for c, t in cols.items() if c not in present}
            for name, kind in missing.items():
                table.add_column(name, kind)


def to_record(row: Row) -> dict[str, Any]:
    """Model → column values; JSON for dicts/lists, inf/nan kept as SQLite REAL."""
    # Every column is a plain value or a dict/list (see models.Row), so the validated
    # attributes are the record: model_dump() would only copy them, slower.
    record = dict(row.__dict__)
    for name, value in record.items():
        if isinstance(value, (dict, list)):
            record[name] = _json_text(value)
    return record


def _json_text(value: dict | list) -> str:
    """A JSON column's value as stored (inf/nan as the strings Python prints)."""
    return json.dumps(json_safe(value), default=str)


def assign(row: Row, **values: Any) -> None:
    """Set what ingest itself computes (ids, foreign keys, line numbers, the raw text) without
    re-validating the row: their types are known, and validation on assignment was a tenth of
    ingest time."""
    row.__dict__.update(values)


def update(db: sqlite_utils.Database, table: str, row_id: int, record: dict[str, Any]) -> None:
    """Set the columns of ``record`` (as to_record gives them) on row ``row_id``."""
    statement = f"UPDATE [{table}] SET {', '.join(f'[{k}] = ?' for k in record)} WHERE id = ?"
    try:
        db.execute(statement, [*record.values(), row_id])
    except OverflowError:
        db.execute(statement, [*in_range(list(record.values())), row_id])


def insert(db: sqlite_utils.Database, row: Row) -> int:
    """Insert one row now (its non-NULL columns); its id."""
    layout = layout_of(type(row))
    present, parameters = layout.bound(row)
    try:
        cursor = db.conn.execute(layout.statement(present), parameters)
    except OverflowError:
        cursor = db.conn.execute(layout.statement(present), in_range(parameters))
    return row.__dict__.get("id") or cursor.lastrowid


def out_of_range(row: Row) -> list[str]:
    """Null the integers of ``row`` SQLite cannot hold (beyond 64 bits); their names."""
    names = [name for name, v in row.__dict__.items()
             if isinstance(v, int) and not -2 ** 63 <= v < 2 ** 63]
    assign(row, **dict.fromkeys(names))
    return names


def in_range(parameters: tuple | list) -> tuple:
    """A row's parameters with each integer SQLite cannot hold (beyond 64 bits: a 400-digit
    count in a JSON file) made null.  The number is still in the row's raw text."""
    return tuple(None if isinstance(v, int) and not -2 ** 63 <= v < 2 ** 63 else v
                 for v in parameters)


@lru_cache(maxsize=None)
def layout_of(model: type[Row]) -> "_Layout":
    return _Layout(model)


class _Layout:
    """How one model's rows become INSERT parameters: its columns in order, which of them hold
    JSON, and the statement."""

    def __init__(self, model: type[Row]):
        self.names = tuple(model.model_fields)
        self.table = model.__table__
        self.has_id = "id" in model.model_fields
        self.values = operator.itemgetter(*self.names) if len(self.names) > 1 else \
            (lambda d, name=self.names[0]: (d[name],))
        self.json = [i for i, name in enumerate(self.names)
                     if _is_json(model.model_fields[name].annotation)]
        # The JSON columns' values in one call; all None (the usual case) needs no work.
        self.json_values = operator.itemgetter(*self.json, 0) if self.json else None
        self.no_json = (None,) * len(self.json)
        self.nones = (None,) * len(self.names)
        self.statements: dict[tuple[bool, ...], str] = {}

    def statement(self, present: tuple[bool, ...]) -> str:
        """The INSERT of the columns ``present`` marks (the others are NULL by default)."""
        sql = self.statements.get(present)
        if sql is None:
            names = [n for n, here in zip(self.names, present) if here]
            sql = self.statements[present] = (
                f"INSERT INTO [{self.table}] ({', '.join(f'[{n}]' for n in names)}) "
                f"VALUES ({', '.join('?' * len(names))})")
        return sql

    def bound(self, row: Row) -> tuple[tuple[bool, ...], tuple]:
        """(which columns are not NULL, their values): what an INSERT of the row binds."""
        parameters = self.parameters(row)
        present = tuple(map(operator.is_not, parameters, self.nones))
        return present, tuple(itertools.compress(parameters, present))

    def parameters(self, row: Row) -> tuple:
        values = self.values(row.__dict__)
        if self.json_values is not None and self.json_values(values)[:-1] != self.no_json:
            values = list(values)
            for i in self.json:
                if isinstance(values[i], (dict, list)):
                    values[i] = _json_text(values[i])
        return values


def _is_json(annotation: Any) -> bool:
    return any(typing.get_origin(a) in (dict, list) or a in (dict, list)
               for a in (annotation, *typing.get_args(annotation)))


class BatchWriter:
    """Inserts rows in batches, parents before children, inside the caller's transaction.

    Ids are assigned here (max(id) + 1 onwards) so a child can point at its parent before
    either is written; that is safe because the caller holds the write lock (BEGIN IMMEDIATE).
    Rows go in with plain executemany: a model's columns are known, so sqlite-utils' per-value
    checks (a third of ingest time) are not needed.  Only a row's non-NULL columns are bound
    (rows batched by which those are): each bound parameter costs about as much as the
    Python that finds the NULLs, and a stats line leaves a third of its columns NULL.
    """

    def __init__(self, db: sqlite_utils.Database, batch_rows: int = 2000):
        self.db = db
        self.batch_rows = batch_rows
        self.pending: dict[tuple[type[Row], tuple[bool, ...]], list[tuple]] = {}
        self.next_id: dict[str, int] = {}
        self.count = 0
        self.order = [m.__table__ for m in row_models()]

    def add(self, row: Row) -> int | None:
        model = type(row)
        layout = layout_of(model)
        if layout.has_id and row.id is None:
            table = layout.table
            if table not in self.next_id:
                top = self.db.execute(f"SELECT coalesce(max(id), 0) FROM {table}").fetchone()[0]
                self.next_id[table] = top + 1
            assign(row, id=self.next_id[table])
            self.next_id[table] += 1
        present, parameters = layout.bound(row)
        self.pending.setdefault((model, present), []).append(parameters)
        self.count += 1
        if self.count >= self.batch_rows:
            self.flush()
        return getattr(row, "id", None)

    def written_elsewhere(self, *tables: str) -> None:
        """Rows of ``tables`` were inserted around this writer: ask for the next free id again."""
        for table in tables:
            self.next_id.pop(table, None)

    def flush(self) -> None:
        for model, present in sorted(self.pending, key=lambda k: self.order.index(k[0].__table__)
                                     if k[0].__table__ in self.order else len(self.order)):
            rows = self.pending[model, present]
            if rows:
                statement = layout_of(model).statement(present)
                conn = self.db.conn
                conn.execute("SAVEPOINT batch_rows")
                try:
                    conn.executemany(statement, rows)
                except OverflowError:
                    # (made only when SQLite refused a number: no cost to rows that fit)
                    conn.execute("ROLLBACK TO batch_rows")
                    conn.executemany(statement, [in_range(r) for r in rows])
                conn.execute("RELEASE batch_rows")
                rows.clear()
        self.count = 0


def delete_source(db: sqlite_utils.Database, source_id: int) -> None:
    """Remove a source and every row read from it, children before parents."""
    for model in reversed(row_models()):
        if model is models.Source:
            continue
        if "source_id" in model.model_fields:
            db.execute(f"DELETE FROM {model.__table__} WHERE source_id = ?", [source_id])
            continue
        # A child row (latency_stats) reaches its source through its parent row.
        for column, target, _ in model.__foreign_keys__:
            if "source_id" in model_for(target).model_fields:
                db.execute(f"DELETE FROM {model.__table__} WHERE {column} IN "
                           f"(SELECT id FROM {target} WHERE source_id = ?)", [source_id])
    db.execute("DELETE FROM sources WHERE id = ?", [source_id])
