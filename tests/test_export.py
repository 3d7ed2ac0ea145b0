"""Export round trip: what Parquet/CSV/JSON hold equals the SQLite rows."""

from __future__ import annotations

import csv
import json
import math

import pyarrow.parquet as pq
from typer.testing import CliRunner

from benchvault.cli import app
from conftest import rows


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def test_parquet_round_trip_equals_sqlite(seeds_db, tmp_path):
    result = CliRunner().invoke(app, ["export", "--db", str(seeds_db), "--format", "parquet",
                                      "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    for table in ("serving_runs", "latency_stats", "sources"):
        back = pq.read_table(tmp_path / f"{table}.parquet").to_pylist()
        want = rows(seeds_db, f"SELECT * FROM {table} ORDER BY rowid")
        assert len(back) == len(want) > 0
        for got_row, want_row in zip(back, want):
            assert set(got_row) == set(want_row)
            assert all(_same(got_row[k], want_row[k]) for k in want_row), table
    runs = pq.read_table(tmp_path / "serving_runs.parquet")
    assert str(runs.schema.field("mean_ttft_ms").type) == "double"
    assert str(runs.schema.field("completed").type) == "int64"


def test_csv_and_json_exports(seeds_db, tmp_path):
    for fmt in ("csv", "json"):
        result = CliRunner().invoke(app, ["export", "--db", str(seeds_db), "--format", fmt,
                                          "--table", "serving_runs", "--out", str(tmp_path)])
        assert result.exit_code == 0, result.output
    with open(tmp_path / "serving_runs.csv") as fh:
        csv_rows = list(csv.DictReader(fh))
    json_rows = [json.loads(line) for line in open(tmp_path / "serving_runs.jsonl")]
    assert len(csv_rows) == len(json_rows) == 28
    first = min(json_rows, key=lambda r: (r["source_id"], r["line_start"]))
    assert first["duration"] == 849.46 and first["request_rate"] == "inf"


def test_unknown_table_is_an_error(seeds_db, tmp_path):
    result = CliRunner().invoke(app, ["export", "--db", str(seeds_db), "--table", "nope",
                                      "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "no such table: nope" in result.output
