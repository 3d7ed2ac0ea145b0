"""Hand the warehouse to engines that scale: every table as CSV, JSON lines or Parquet.

Parquet columns get real types (from the pydantic models) so DuckDB/Spark/Trino read numbers
as numbers; JSON columns stay JSON text.  Rows are written in the order of what they are and
numbered in that order (canonical.py): the same files give the same export, byte for byte,
whatever order they were ingested in.  When each file was ingested is left out.
"""

from __future__ import annotations

import csv
import json
import math
import sqlite3
from pathlib import Path
from typing import Iterator

from . import canonical
from .arrowsql import ArrowReadFailed, ArrowReader, column_types
from .dbfile import readonly_uri
from .schemas.store import row_models

FORMATS = ("csv", "json", "parquet")
BATCH_ROWS = 10_000      # rows held at once at most
BATCH_BYTES = 4 << 20    # ... and about this much text: runs carry their raw text and Namespace


def _readonly(db_path: Path) -> sqlite3.Connection:
    return sqlite3.connect(readonly_uri(db_path), uri=True)


def exportable_tables(conn: sqlite3.Connection) -> list[str]:
    present = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    return [m.__table__ for m in row_models() if m.__table__ in present]


def _batch_rows(conn: sqlite3.Connection, table: str) -> int:
    """Rows per batch so that one batch holds about BATCH_BYTES, from a sample's row size."""
    names = [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]
    if not names:
        return BATCH_ROWS
    size = " + ".join(f'coalesce(length("{n}"), 0) + 8' for n in names)
    average = conn.execute(f'SELECT avg({size}) FROM (SELECT * FROM "{table}" LIMIT 1000)'
                           ).fetchone()[0] or 1
    return max(100, min(BATCH_ROWS, int(BATCH_BYTES / average)))


def _columns(conn: sqlite3.Connection, tables: list[str]) -> dict[str, list[str]]:
    return {t: [r[1] for r in conn.execute(f'PRAGMA table_info("{t}")')] for t in tables}


def _batches(conn: sqlite3.Connection, table: str, query: str
             ) -> Iterator[tuple[list[str], list[tuple]]]:
    rows = _batch_rows(conn, table)
    cursor = conn.execute(query)
    names = [d[0] for d in cursor.description]
    while batch := cursor.fetchmany(rows):
        yield names, batch


def _arrow_schema(table: str, names: list[str]):
    import pyarrow as pa

    types = column_types(table)
    return pa.schema([(n, types.get(n, pa.string())) for n in names])


class _Numbering:
    """The tables' new ids (canonical.py), made on a connection as a table to read needs
    them, once each: on ``conn``, or on the Arrow driver's connection (``arrow``), opened
    once for every table a Parquet export reads through it."""

    def __init__(self, conn: sqlite3.Connection, tables: list[str]):
        self.conn, self.columns, self.made = conn, _columns(conn, tables), set()
        self.reader: ArrowReader | None = None
        self.made_there: set[str] = set()

    def here(self, table: str) -> None:
        for statement in canonical.statements(self.columns, table, done=self.made):
            self.conn.execute(statement)
        self.made |= canonical.needed(table, set(self.columns))

    def arrow(self, table: str) -> ArrowReader:
        """The driver's connection, with what ``table`` needs numbered there."""
        if self.reader is None:
            self.reader = ArrowReader(self.conn.execute("PRAGMA database_list").fetchone()[2])
        for statement in canonical.statements(self.columns, table, done=self.made_there):
            self.reader.execute(statement)
        self.made_there |= canonical.needed(table, set(self.columns))
        return self.reader

    def close(self) -> None:
        if self.reader is not None:
            self.reader.close()


def export_table(conn: sqlite3.Connection, table: str, fmt: str, out_dir: Path,
                 numbering: _Numbering) -> Path:
    """Write ``table`` to ``out_dir`` in canonical order (``numbering``: the new ids)."""
    out = out_dir / f"{table}.{'jsonl' if fmt == 'json' else fmt}"
    names, query = canonical.select(table, numbering.columns[table], set(numbering.columns))
    if fmt != "parquet":
        numbering.here(table)
    if fmt == "csv":
        with open(out, "w", newline="") as fh:
            writer = None
            for names, batch in _batches(conn, table, query):
                if writer is None:
                    writer = csv.writer(fh)
                    writer.writerow(names)
                writer.writerows(batch)
    elif fmt == "json":
        with open(out, "w") as fh:
            for names, batch in _batches(conn, table, query):
                for row in batch:
                    record = {n: (str(v) if isinstance(v, float) and not math.isfinite(v) else v)
                              for n, v in zip(names, row)}
                    fh.write(json.dumps(record) + "\n")
    elif fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        # The system allocator hands batches back; Arrow's pools keep them (60 MB more peak).
        pa.set_memory_pool(pa.system_memory_pool())
        schema = _arrow_schema(table, names)
        if _parquet_by_adbc(numbering, table, query, schema, out):
            return out
        numbering.here(table)
        with pq.ParquetWriter(out, schema) as writer:
            for _, batch in _batches(conn, table, query):
                # Columns straight from the transposed tuples (a list copy of each: a fifth of
                # the export's time at 100k runs).
                writer.write_table(pa.table(
                    [pa.array(c, type=schema.field(i).type) for i, c in enumerate(zip(*batch))],
                    schema=schema))
    else:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    return out


def _parquet_by_adbc(numbering: _Numbering, table: str, query: str, schema, out: Path) -> bool:
    """Write the rows of ``query`` to ``out`` from Arrow batches the ADBC driver reads
    (arrowsql.py: 100k runs and their 1.1M latency rows in half the time), on its own
    connection where ``table``'s numbering is made.  False, with nothing written, when the
    driver is not installed or meets a value of another type than the model's: the caller's
    typed reader then writes the file."""
    import pyarrow.parquet as pq

    try:
        reader = numbering.arrow(table)
        with pq.ParquetWriter(out, schema) as writer:
            for batch in reader.batches(query, [], schema):
                writer.write_batch(batch)
        return True
    except ArrowReadFailed:
        out.unlink(missing_ok=True)
        return False


def export(db_path: Path, fmt: str, out_dir: Path, tables: list[str] | None = None) -> list[Path]:
    """Write each table (or just ``tables``) to ``out_dir``; returns the files written."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    conn = _readonly(db_path)
    try:
        available = exportable_tables(conn)
        chosen = tables or available
        missing = [t for t in chosen if t not in available]
        if missing:
            raise ValueError(f"no such table: {', '.join(missing)} (have: {', '.join(available)})")
        out_dir.mkdir(parents=True, exist_ok=True)  # only once there is something to write
        numbering = _Numbering(conn, available)
        try:
            return [export_table(conn, t, fmt, out_dir, numbering) for t in chosen]
        finally:
            numbering.close()
    finally:
        conn.close()
