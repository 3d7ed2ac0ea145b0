"""A query's rows as Arrow record batches, read by the ADBC SQLite driver (in C: no Python
object per value), typed as the caller says.

The driver types each column from the values of its first batch, so a column NULL there
would be guessed an integer and a later text or real value would fail the read.  A row of
typed literals therefore goes first, and is cut off again.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Iterator

from .dbfile import readonly_uri


def column_types(table: str) -> dict:
    """Each column of ``table``'s row model as an Arrow type (int64, float64; string for
    text and JSON): the models say, not what SQLite happens to hold."""
    import pyarrow as pa

    from .schemas.store import columns, row_models

    arrow = {int: pa.int64(), float: pa.float64(), str: pa.string()}
    model = next((m for m in row_models() if m.__table__ == table), None)
    kinds = columns(model) if model is not None else {}
    return {name: arrow.get(kind, pa.string()) for name, kind in kinds.items()}


class ArrowReadFailed(Exception):
    """No driver, or a value of another type than the column's: read the rows another way."""


class ArrowReader:
    """One read-only connection of the ADBC driver to a database file, for several queries
    (temporary tables one makes, the next reads).  Raises ArrowReadFailed when the driver is
    not installed."""

    def __init__(self, path: str | Path):
        try:
            # The driver's low-level API: its DB-API module imports pyarrow.dataset and with
            # it the S3, GCS, Azure, Parquet and Substrait libraries (+16 MB of a report's
            # peak RSS).
            import adbc_driver_manager as adbc
            import adbc_driver_sqlite
        except ImportError:
            raise ArrowReadFailed("the ADBC SQLite driver is not installed") from None
        import pyarrow as pa

        # The system allocator hands batches back; Arrow's own pools keep them (peak RSS).
        pa.set_memory_pool(pa.system_memory_pool())
        self._adbc, self._pa = adbc, pa
        try:
            self.database = adbc_driver_sqlite.connect(readonly_uri(path))
            self.connection = adbc.AdbcConnection(self.database)
        except (OSError, adbc.Error) as exc:
            raise ArrowReadFailed(str(exc)) from None

    def close(self) -> None:
        self.connection.close()
        self.database.close()

    def __enter__(self) -> "ArrowReader":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def execute(self, sql: str) -> None:
        """Run a statement that returns no rows (a temporary table made or filled)."""
        try:
            with self._adbc.AdbcStatement(self.connection) as statement:
                statement.set_sql_query(sql)
                statement.execute_update()
        except self._adbc.Error as exc:
            raise ArrowReadFailed(str(exc)) from None

    def batches(self, sql: str, params: list | tuple, schema) -> Iterator:
        """The rows of ``sql`` as batches of ``schema`` (a pyarrow schema naming every column
        the query gives, in order: int64, float64 or string).  Raises ArrowReadFailed,
        possibly after some batches."""
        pa, adbc = self._pa, self._adbc
        literal = {pa.int64(): "0", pa.float64(): "0.0", pa.string(): "''"}
        first = ", ".join(f'{literal[f.type]} AS "{f.name}"' for f in schema)
        try:
            with adbc.AdbcStatement(self.connection) as statement:
                statement.set_sql_query(f"SELECT {first} UNION ALL SELECT * FROM ({sql})")
                if params:
                    statement.bind(pa.record_batch([[value] for value in params],
                                                   names=[str(i) for i in range(len(params))]))
                stream, _ = statement.execute_query()
                for i, batch in enumerate(pa.RecordBatchReader._import_from_c(stream.address)):
                    yield (batch.slice(1) if i == 0 else batch).cast(schema)
        except (OSError, pa.ArrowException, adbc.Error) as exc:
            # "Type mismatch in column ...": a value of another type further down.
            raise ArrowReadFailed(str(exc)) from None


def typed_batches(conn: sqlite3.Connection, sql: str, params: list | tuple, schema
                  ) -> Iterator:
    """The rows of ``sql``, run read-only on ``conn``'s database file by the ADBC driver, as
    batches of ``schema`` (ArrowReader.batches)."""
    path = conn.execute("PRAGMA database_list").fetchone()[2]
    with ArrowReader(path) as reader:
        yield from reader.batches(sql, params, schema)
