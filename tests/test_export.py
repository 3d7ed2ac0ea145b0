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


def _by_place(table_rows, sources, runs=None):
    """Rows keyed by what they are, not by id: a run by its file and lines, a latency stat by
    its run's; ids and references dropped."""
    path = {s["id"]: s["path"] for s in sources}
    place = {r["id"]: (path[r["source_id"]], r["line_start"], r["line_end"])
             for r in runs} if runs is not None else {}
    out = []
    for row in table_rows:
        key = (path[row["source_id"]], row["line_start"], row["line_end"]) \
            if "source_id" in row and row["source_id"] is not None else place.get(row.get("run_id"))
        values = tuple((k, "nan" if isinstance(v, float) and math.isnan(v) else v)
                       for k, v in sorted(row.items())
                       if k not in ("id", "source_id", "run_id", "launch_id", "config_id",
                                    "group_id", "ingested_at"))
        out.append((repr(key), values))
    return sorted(out, key=repr)


def test_parquet_round_trip_equals_sqlite(seeds_db, tmp_path):
    """Every row comes back (ids numbered 1, 2, 3... in the order of what the rows are, each
    reference renumbered alike): runs by file and lines, their latency stats by run."""
    result = CliRunner().invoke(app, ["export", "--db", str(seeds_db), "--format", "parquet",
                                      "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    back = {t: pq.read_table(tmp_path / f"{t}.parquet").to_pylist()
            for t in ("serving_runs", "latency_stats", "sources")}
    want = {t: rows(seeds_db, f"SELECT * FROM {t}") for t in back}
    assert "ingested_at" not in back["sources"][0]
    assert [s["path"] for s in back["sources"]] == sorted(s["path"] for s in want["sources"])
    for table in back:
        assert [r["id"] for r in back[table]] == list(range(1, len(want[table]) + 1))
    assert _by_place(back["serving_runs"], back["sources"]) == \
        _by_place(want["serving_runs"], want["sources"])
    assert len(back["latency_stats"]) > 100
    assert _by_place(back["latency_stats"], back["sources"], back["serving_runs"]) == \
        _by_place(want["latency_stats"], want["sources"], want["serving_runs"])
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


def _parquet_tables(db, out):
    from pathlib import Path

    from benchvault.export import export

    return {p.name: pq.read_table(p) for p in export(Path(db), "parquet", out)}


def test_parquet_through_adbc_equals_the_typed_python_path(seeds_db, tmp_path, monkeypatch):
    """The ADBC driver types a column from its first batch (1,024 rows): a column NULL there
    and set further down must still come out as the model's type, not a guessed integer."""
    import shutil
    import sqlite3

    from benchvault import export as export_module

    db = tmp_path / "grown.db"
    shutil.copy(seeds_db, db)
    conn = sqlite3.connect(db)
    columns = [r[1] for r in conn.execute("PRAGMA table_info(serving_runs)") if r[1] != "id"]
    for _ in range(6):   # 28 runs → 1,792: past the driver's first batch
        conn.execute(f"INSERT INTO serving_runs ({', '.join(columns)}) "
                     f"SELECT {', '.join(columns)} FROM serving_runs")
    # request_goodput: NULL in every seed run, a float from run 1,500 on
    conn.execute("UPDATE serving_runs SET request_goodput = id / 7.0 WHERE id > 1500")
    conn.commit()
    conn.close()
    used = []
    adbc_path = export_module._parquet_by_adbc
    monkeypatch.setattr(export_module, "_parquet_by_adbc",
                        lambda *a: used.append(adbc_path(*a)) or used[-1])
    fast = _parquet_tables(db, tmp_path / "adbc")
    assert used and all(used), "the ADBC path fell back"
    monkeypatch.setattr(export_module, "_parquet_by_adbc", lambda *a: False)
    slow = _parquet_tables(db, tmp_path / "python")
    assert fast.keys() == slow.keys()
    for name, table in slow.items():
        assert fast[name].schema.equals(table.schema), name
        assert fast[name].equals(table), name
    runs = fast["serving_runs.parquet"]
    assert runs.num_rows == 28 * 64
    assert str(runs.schema.field("request_goodput").type) == "double"
    assert sorted(v for v in runs.column("request_goodput").to_pylist() if v is not None) == \
        sorted(i / 7.0 for i in range(1501, 28 * 64 + 1))


def test_parquet_without_the_adbc_driver(seeds_db, tmp_path, monkeypatch):
    """No driver installed: the typed Python path writes the very same files."""
    import sys

    with_driver = _parquet_tables(seeds_db, tmp_path / "with")
    monkeypatch.setitem(sys.modules, "adbc_driver_sqlite.dbapi", None)   # import fails
    without = _parquet_tables(seeds_db, tmp_path / "without")
    assert with_driver.keys() == without.keys()
    assert all(with_driver[n].equals(t) for n, t in without.items())


def test_a_warehouse_in_a_folder_named_with_url_characters(seeds_db, tmp_path):
    """`#`, `?` and `%` in a path are percent-encoded in the read-only URI: export, the
    report and the unchanged-files check open this very file, not a cut-off name."""
    import shutil
    from pathlib import Path

    from benchvault.ingest.find import all_unchanged
    from benchvault.reports.render import build

    odd = tmp_path / "runs #1 ?a=%41"
    odd.mkdir()
    db = odd / "w %41.db"
    shutil.copy(seeds_db, db)
    result = CliRunner().invoke(app, ["export", "--db", str(db), "--format", "csv",
                                      "--table", "sources", "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    with open(tmp_path / "out" / "sources.csv") as fh:
        names = sorted(row["name"] for row in csv.DictReader(fh))
    assert names == sorted(r["name"] for r in rows(seeds_db, "SELECT name FROM sources"))
    assert len(names) == 4
    assert build(db, ["sweep"]) == build(seeds_db, ["sweep"])
    seeds = [Path(r["path"]) for r in rows(seeds_db, "SELECT path FROM sources")]
    assert all_unchanged(db, seeds) is True


def test_arrow_reads_bind_parameters_type_a_null_first_column_and_refuse_a_stray_type(tmp_path):
    """arrowsql.typed_batches (the driver's low-level statement API): parameters bound in
    order, a column NULL in the first rows still read as text, a text value in a REAL column
    refused with ArrowReadFailed (the caller then reads the rows as tuples)."""
    import sqlite3

    import pyarrow as pa
    import pytest

    from benchvault.arrowsql import ArrowReadFailed, typed_batches

    db = tmp_path / "w.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE t (id INTEGER, model TEXT, tput REAL)")
    conn.executemany("INSERT INTO t VALUES (?, ?, ?)",
                     [(i, None if i < 3000 else f"m{i % 7}", i / 4) for i in range(5000)])
    conn.commit()
    schema = pa.schema([("id", pa.int64()), ("model", pa.string()), ("tput", pa.float64())])
    table = pa.Table.from_batches(list(typed_batches(
        conn, "SELECT id, model, tput FROM t WHERE tput >= ? AND (model = ? OR model IS NULL)",
        [250.0, "m3"], schema)), schema)
    expected = conn.execute("SELECT id, model, tput FROM t WHERE tput >= 250.0 AND "
                            "(model = 'm3' OR model IS NULL)").fetchall()
    assert [tuple(r.values()) for r in table.to_pylist()] == expected
    assert table.schema == schema and len(expected) > 2000

    conn.execute("UPDATE t SET tput = 'fast' WHERE id = 4990")
    conn.commit()
    with pytest.raises(ArrowReadFailed):
        list(typed_batches(conn, "SELECT id, model, tput FROM t", [], schema))
