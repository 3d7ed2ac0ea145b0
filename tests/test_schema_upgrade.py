"""A warehouse written before tables stored their columns in their reading order (schema 1)
is rewritten in place when a newer benchvault opens it: every row, key and index kept."""

from __future__ import annotations

import sqlite3

from benchvault.dbfile import SCHEMA_VERSION
from benchvault.schemas.store import connect
from benchvault.schemas.tables import stored_order
from benchvault.schemas.models import ServingRun
from benchvault.schemas.server import ServerLaunch
from conftest import FIXTURES, SEEDS, ingest_into, rows

CONTRACT = FIXTURES / "contract" / "vllm-0.11.0"


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
    assert rows(db, "PRAGMA user_version") == [{"user_version": SCHEMA_VERSION}]
    assert len(rows(db, "SELECT * FROM latency")) > 0          # its views made again


def test_a_schema_2_warehouse_gets_launch_keys_and_links_runs_read_after(tmp_path):
    """Schema 3 keeps a launch's port and served model name, and a run's link and window: a
    schema-2 warehouse gets the columns (in reading order) and its launches' keys from the
    arguments they stored; a client capture ingested after links to its launch."""
    db = tmp_path / "w.db"
    ingest_into(db, CONTRACT / "server.log")
    warehouse = connect(db)
    new = {"server_launches": ("port", "served_model_name"),
           "serving_runs": ("launch_matched_on", "engine_from_launch", "window_start",
                            "window_end", "window_from"),
           "sightings": ("logged_before",)}
    for view in ("runs_with_server", "run_server_stats", "latency"):
        warehouse.execute(f"DROP VIEW IF EXISTS {view}")
    for index in ("idx_server_launches_port", "idx_server_launches_source_id_line_start"):
        warehouse.execute(f"DROP INDEX {index}")
    for table, columns in new.items():
        warehouse[table].transform(drop=set(columns))
    warehouse.execute("PRAGMA user_version=2")
    warehouse.close()
    assert "port" not in _columns(db, "server_launches")

    connect(db).close()
    assert rows(db, "PRAGMA user_version") == [{"user_version": SCHEMA_VERSION}]
    assert _columns(db, "server_launches") == stored_order(ServerLaunch)
    assert _columns(db, "serving_runs") == stored_order(ServingRun)
    assert rows(db, "SELECT port, served_model_name FROM server_launches") == \
        [{"port": 58525, "served_model_name": "tiny-llama-cd1e84fc"}]

    ingest_into(db, CONTRACT / "c2.txt")
    assert rows(db, "SELECT r.engine, l.port FROM serving_runs r JOIN server_launches l "
                    "ON l.id = r.launch_id") == [{"engine": "vllm", "port": 58525}]
    assert rows(db, "SELECT stats_lines FROM run_server_stats") == [{"stats_lines": 1}]


def test_a_schema_3_warehouse_moves_its_offline_results_out_of_serving_runs(tmp_path):
    """Schema 4 gives offline benchmarks their own tables: a schema-3 warehouse, which filed a
    bench_one_batch case as a serving run, gets the tables, and its file read again by the
    next ingest (an older benchvault read it) moves the case to offline_runs."""
    fixture = FIXTURES / "sglang_one_batch" / \
        "derived-sglang-one-batch-warmup-sweep-and-decode-batch-size.md"
    db = tmp_path / "w.db"
    ingest_into(db, fixture)
    warehouse = connect(db)
    # As schema 3 stored it: the cases in serving_runs, each with its sighting.
    source_id = warehouse.execute("SELECT id FROM sources").fetchone()[0]
    for offline_id, line_start, line_end, total in warehouse.execute(
            "SELECT id, line_start, line_end, total_latency FROM offline_runs "
            "WHERE phase = 'benchmark'").fetchall():
        run_id = warehouse["serving_runs"].insert(
            {"source_id": source_id, "line_start": line_start, "line_end": line_end,
             "format": "sglang_one_batch", "engine": "sglang",
             "mean_e2el_ms": total * 1000}).last_pk
        warehouse["sightings"].insert({"kind": "serving_runs", "run_id": run_id,
                                       "source_id": source_id, "line_start": line_start,
                                       "is_primary": 1, "content_hash": f"old{offline_id}"})
    warehouse.execute("DELETE FROM sightings WHERE kind = 'offline_runs'")
    for table in ("offline_steps", "offline_runs", "offline_configurations", "offline_groups"):
        warehouse.execute(f"DROP TABLE {table}")
    warehouse.execute("DROP INDEX idx_sightings_offline_id")
    for view in ("runs_with_server", "run_server_stats", "latency"):
        warehouse.execute(f"DROP VIEW IF EXISTS {view}")
    warehouse["sightings"].transform(drop={"offline_id"})
    warehouse.execute("UPDATE sources SET parser_version = '0.3.0'")
    warehouse.execute("PRAGMA user_version=3")
    warehouse.conn.commit()
    warehouse.close()
    assert len(rows(db, "SELECT * FROM serving_runs")) == 3

    connect(db).close()
    assert rows(db, "PRAGMA user_version") == [{"user_version": SCHEMA_VERSION}]
    assert _columns(db, "sightings")[-1] != "offline_id"        # stored in reading order
    assert rows(db, "SELECT COUNT(*) AS n FROM offline_runs") == [{"n": 0}]

    ingest_into(db, fixture)
    assert rows(db, "SELECT COUNT(*) AS n FROM serving_runs") == [{"n": 0}]
    assert rows(db, "SELECT phase, batch_size, total_latency FROM offline_runs ORDER BY id") == [
        {"phase": "warmup", "batch_size": 1, "total_latency": 0.481},
        {"phase": "benchmark", "batch_size": 1, "total_latency": 0.928},
        {"phase": "benchmark", "batch_size": 8, "total_latency": 1.236},
        {"phase": "benchmark", "batch_size": 32, "total_latency": 1.164}]
    assert rows(db, "SELECT COUNT(*) AS n FROM offline_steps") == [{"n": 20}]
