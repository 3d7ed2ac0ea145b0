"""A warehouse written before tables stored their columns in their reading order (schema 1)
is rewritten in place when a newer benchvault opens it: every row, key and index kept."""

from __future__ import annotations

import sqlite3

from benchvault.schemas.store import connect
from benchvault.schemas.tables import stored_order
from benchvault.schemas.models import ServingRun
from conftest import SEEDS, ingest_into, rows


def _columns(db, table):
    conn = sqlite3.connect(db)
    try:
        return [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
    finally:
        conn.close()


def test_an_older_warehouse_gets_its_columns_in_reading_order(tmp_path):
    db = tmp_path / "w.db"
    ingest_into(db, SEEDS)
    before = rows(db, "SELECT * FROM serving_runs ORDER BY id")
    indexes = rows(db, "SELECT name FROM sqlite_master WHERE type = 'index' ORDER BY name")
    # As schema 1 stored them: where a row was read first (the model's own order).
    warehouse = connect(db)
    warehouse["serving_runs"].transform(column_order=list(ServingRun.model_fields))
    warehouse.execute("PRAGMA user_version=1")
    warehouse.close()
    assert _columns(db, "serving_runs")[:3] == ["source_id", "line_start", "line_end"]

    connect(db).close()
    assert _columns(db, "serving_runs") == stored_order(ServingRun)
    assert _columns(db, "serving_runs")[:4] == ["id", "label", "engine", "model"]
    assert _columns(db, "serving_runs")[-1] == "raw_text"
    assert rows(db, "SELECT * FROM serving_runs ORDER BY id") == before
    assert rows(db, "SELECT name FROM sqlite_master WHERE type = 'index' ORDER BY name") == \
        indexes
    assert rows(db, "PRAGMA user_version") == [{"user_version": 2}]
    assert len(rows(db, "SELECT * FROM latency")) > 0          # its views made again
