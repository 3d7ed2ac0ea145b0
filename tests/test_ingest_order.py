"""The same files, the same bytes: whatever order files are ingested in, the warehouse holds the
same runs, and `report all`, the README regions, their charts and the CSV export come out
byte for byte the same."""

from __future__ import annotations

import random
import shutil
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchvault.export import export
from benchvault.ingest.find import expand_paths
from benchvault.ingest.pipeline import ingest_paths
from benchvault.reports.render import build
from benchvault.reports.update import update_file
from benchvault.schemas.store import connect
from conftest import FIXTURES, ROOT, SEEDS, rewritten, split_captures

FILES = expand_paths([FIXTURES])
ORDERS = {"path": FILES, "reverse": FILES[::-1],
          "shuffled": random.Random(20261125).sample(FILES, len(FILES))}


def _ingested(db: Path, paths: list[Path]) -> Path:
    warehouse = connect(db)
    try:
        ingest_paths(warehouse, paths)
    finally:
        warehouse.close()
    return db


@pytest.fixture(scope="module")
def warehouses(tmp_path_factory) -> dict[str, Path]:
    scratch = tmp_path_factory.mktemp("orders")
    return {name: _ingested(scratch / f"{name}.db", paths) for name, paths in ORDERS.items()}


def test_the_orders_really_differ():
    assert len(FILES) > 150
    assert ORDERS["path"][:5] != ORDERS["shuffled"][:5] != ORDERS["reverse"][:5]


def test_report_all_is_the_same_whatever_the_ingest_order(warehouses):
    reports = {name: build(db, ["all"]) for name, db in warehouses.items()}
    assert reports["path"].count("\n## ") > 20
    assert reports["reverse"] == reports["path"]
    assert reports["shuffled"] == reports["path"]


def test_the_csv_export_is_the_same_whatever_the_ingest_order(warehouses, tmp_path):
    written = {name: export(db, "csv", tmp_path / name) for name, db in warehouses.items()}
    names = sorted(p.name for p in written["path"])
    assert {"serving_runs.csv", "sightings.csv", "latency_stats.csv", "configurations.csv",
            "sources.csv"} <= set(names)
    for name in ("reverse", "shuffled"):
        assert sorted(p.name for p in written[name]) == names
        for file in names:
            assert (tmp_path / name / file).read_bytes() == \
                (tmp_path / "path" / file).read_bytes(), f"{name}: {file}"


def test_readme_regions_and_their_charts_are_the_same_whatever_the_ingest_order(tmp_path):
    """What `make demo` ingests (the seed notes and the real-tool captures), in three orders:
    the regions of the README and of the docs, and the charts they draw, are the same bytes."""
    demo = expand_paths([SEEDS, FIXTURES / "contract"])
    out = {}
    for name, paths in (("path", demo), ("reverse", demo[::-1]),
                        ("shuffled", random.Random(7).sample(demo, len(demo)))):
        work = tmp_path / name
        (work / "docs").mkdir(parents=True)
        pages = [Path("README.md"), *(p.relative_to(ROOT)
                                      for p in sorted((ROOT / "docs").glob("*.md")))]
        for page in pages:
            shutil.copy(ROOT / page, work / page)
        (work / "fixtures").symlink_to(FIXTURES)
        db = _ingested(tmp_path / f"{name}.db", paths)
        for page in pages:
            update_file(work / page, db)
        out[name] = {p.relative_to(work): p.read_bytes() for p in sorted(work.rglob("*"))
                     if p.is_file() and "fixtures" not in p.parts}
    assert any(p.suffix == ".png" for p in out["path"]) and len(out["path"]) > 5
    assert out["reverse"] == out["path"]
    assert out["shuffled"] == out["path"]


# --- the runs themselves, over any order -----------------------------------------------------

# Notes that see each other's runs: a printed block and its saved JSON, one note under two
# names, repeats, launches and their runs in one file.
SAME_RUNS = expand_paths([FIXTURES / "serving_result_json", FIXTURES / "notes",
                          FIXTURES / "experiments", SEEDS, FIXTURES / "spec_decode"])


def _runs(db: Path) -> list[tuple]:
    """Each run as what it is: its results, its sightings and where its values come from."""
    conn = sqlite3.connect(db)
    try:
        return sorted(conn.execute(
            "SELECT s.path, r.line_start, r.completed, r.duration, r.output_throughput, "
            "r.mean_ttft_ms, r.model, r.label, r.sightings, "
            "(SELECT group_concat(x.path || ':' || x.line_start, ' ') FROM (SELECT so.path, "
            " g.line_start FROM sightings g JOIN sources so ON so.id = g.source_id "
            " WHERE g.run_id = r.id ORDER BY 1, 2) x) "
            "FROM serving_runs r JOIN sources s ON s.id = r.source_id").fetchall(),
            key=repr)
    finally:
        conn.close()


@pytest.fixture(scope="module")
def in_path_order(tmp_path_factory) -> list[tuple]:
    return _runs(_ingested(tmp_path_factory.mktemp("runs") / "path.db", SAME_RUNS))


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(order=st.permutations(SAME_RUNS))
def test_any_ingest_order_gives_the_same_runs(order, in_path_order, tmp_path_factory):
    runs = _runs(_ingested(tmp_path_factory.mktemp("order") / "w.db", list(order)))
    assert len(runs) > 30 and any(r[8] > 1 for r in runs)
    assert runs == in_path_order


# --- runs linked to launches read in other files ---------------------------------------------

def _linked(db: Path) -> list[tuple]:
    """Each run's launch (by where each was read), how it was found, its window and what its
    server logged in it; the link warnings with their files, and each file's count."""
    conn = sqlite3.connect(db)
    try:
        runs = sorted(conn.execute(
            "SELECT g.path, x.line_start, s.path, l.line_start, r.engine, r.launch_matched_on, "
            "r.window_start, r.window_end, r.window_from, c.key, v.stats_lines, v.max_running, "
            "v.mean_generation_throughput, v.spec_decode_lines "
            "FROM serving_runs r JOIN sightings x ON x.run_id = r.id "
            "JOIN sources g ON g.id = x.source_id "
            "LEFT JOIN server_launches l ON l.id = r.launch_id "
            "LEFT JOIN sources s ON s.id = l.source_id "
            "LEFT JOIN configurations c ON c.id = r.config_id "
            "LEFT JOIN run_server_stats v ON v.run_id = r.id").fetchall(), key=repr)
        warned = sorted(conn.execute(
            "SELECT s.path, u.line, u.reason FROM unparsed_blocks u JOIN sources s "
            "ON s.id = u.source_id WHERE u.format = 'link'").fetchall())
        counts = sorted(conn.execute("SELECT path, warnings FROM sources").fetchall())
        return [runs, warned, counts]
    finally:
        conn.close()


@pytest.fixture(scope="module")
def captures(tmp_path_factory) -> list[Path]:
    """The contract's captures split as people save them, with their JSON; two servers of
    one model on two ports; and two launches no client can tell apart."""
    folder = tmp_path_factory.mktemp("captures")
    files = split_captures(folder / "contract", with_results=True)
    server = FIXTURES / "contract" / "vllm-0.11.0" / "server.log"
    client = FIXTURES / "contract" / "vllm-0.11.0" / "c2.txt"
    duration = "Benchmark duration (s):                  0.1"

    def bench(name: str, port: int, digit: int) -> Path:
        # Another run (its duration told apart) against ``port``.
        return rewritten(client, folder / name, ("127.0.0.1:58525", f"127.0.0.1:{port}"),
                         (f"{duration}7", f"{duration}{digit}"))

    for port, digit in ((18731, 1), (18732, 2)):
        files.append(rewritten(server, folder / f"server-{port}.log", ("58525", str(port))))
        files.append(bench(f"bench-{port}.txt", port, digit))
    files.append(rewritten(server, folder / "twin-a.log", ("58525", "18740")))
    files.append(rewritten(server, folder / "twin-b.log", ("58525", "18740"),
                           ("262,144 tokens", "131,072 tokens")))
    files.append(bench("bench-twins.txt", 18740, 3))
    return files


def test_links_across_files_do_not_depend_on_the_ingest_order(captures, tmp_path):
    """Clients and servers in any order, together or one ingest each (a server's log read
    after its clients', then again): the same links, windows, server stats and warnings."""
    states = []
    for seed, order in enumerate([captures, captures[::-1],
                                  *(random.Random(n).sample(captures, len(captures))
                                    for n in range(3))]):
        states.append(_linked(_ingested(tmp_path / f"together-{seed}.db", order)))
    db = tmp_path / "one-by-one.db"
    for path in sorted(captures, key=lambda p: p.suffix == ".log"):      # servers last
        _ingested(db, [path])
    states.append(_linked(db))
    warehouse = connect(db)
    try:
        ingest_paths(warehouse, [p for p in captures if p.suffix == ".log"], force=True)
    finally:
        warehouse.close()
    states.append(_linked(db))
    runs, warned, _ = states[0]
    assert len(runs) > 20 and sum(r[2] is not None for r in runs) > 20 and len(warned) == 1
    for state in states[1:]:
        assert state == states[0]
