"""Crashes mid-ingest and concurrent ingests leave a consistent warehouse."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from conftest import SEEDS, ingest_into, rows

SEED_RUNS = {"deepseek-v3_h100_tp-vs-pp_llamacpp.md": 11, "mi300x_llama70b_tp-pp_specdecode.md": 6,
             "multi-gpu_report_pp-vs-tp.md": 0, "strix-halo_vllm-vs-llamacpp.md": 11}


def ingest_cmd(db: Path, *paths: Path) -> list[str]:
    return [sys.executable, "-m", "benchvault", "ingest", *map(str, paths), "--db", str(db),
            "--json"]


def big_note(tmp_path: Path, copies: int) -> tuple[Path, int]:
    """A long note made of the mi300x seed repeated: (path, serving blocks in it)."""
    text = (SEEDS / "mi300x_llama70b_tp-pp_specdecode.md").read_text()
    path = tmp_path / "big.md"
    with open(path, "w") as out:
        for _ in range(copies):
            out.write(text)
    return path, 6 * copies


def pragma(db: Path, name: str):
    conn = sqlite3.connect(db)
    try:
        return conn.execute(f"PRAGMA {name}").fetchone()[0]
    finally:
        conn.close()


def integrity(db: Path) -> str:
    return pragma(db, "integrity_check")


def stored_sources(db: Path) -> int:
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            return conn.execute("SELECT count(*) FROM sources").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:
        return 0                        # not made yet


def left_running(db: Path, wait: float = 5.0) -> list[int]:
    """Processes still running an ingest into ``db`` (a killed writer's workers must end)."""
    deadline = time.time() + wait
    while True:
        found = []
        for proc in Path("/proc").iterdir():
            try:
                if proc.name.isdigit() and str(db).encode() in (proc / "cmdline").read_bytes():
                    found.append(int(proc.name))
            except OSError:
                continue            # gone meanwhile
        if not found or time.time() > deadline:
            return found
        time.sleep(0.1)


def _has_table(db: Path, name: str) -> bool:
    """``db`` holds the committed table ``name`` (read as another process would, read-only)."""
    if not db.exists():
        return False
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=0.1)
        try:
            return conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?",
                                (name,)).fetchone() is not None
        finally:
            conn.close()
    except sqlite3.Error:
        return False


def test_sigkill_mid_file_leaves_it_all_out_then_rerun_completes(tmp_path):
    big, blocks = big_note(tmp_path, 400)
    db = tmp_path / "w.db"
    proc = subprocess.Popen(ingest_cmd(db, big), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    # Wait until the warehouse's tables are committed, then kill without warning while the
    # file is being read and stored (its rows are one transaction, committed at its end).
    while time.time() < deadline and not _has_table(db, "sources"):
        time.sleep(0.01)
    time.sleep(0.2)
    assert proc.poll() is None, "ingest finished before it could be killed: make the file bigger"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert left_running(db) == []       # the worker reading the file ended with it
    assert integrity(db) == "ok"
    # All of the file or none of it: killed before its commit, nothing of it is stored.
    stored = rows(db, "SELECT count(*) AS n FROM sources")[0]["n"]
    if stored == 0:
        assert rows(db, "SELECT count(*) AS n FROM serving_runs")[0]["n"] == 0
        assert rows(db, "SELECT count(*) AS n FROM latency_stats")[0]["n"] == 0
    else:
        assert rows(db, "SELECT count(*) AS n FROM sightings WHERE kind = 'serving_runs'"
                    )[0]["n"] == blocks
    done = subprocess.run(ingest_cmd(db, big), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    # every block is kept as a sighting; the 400 copies of the note are its 6 runs
    assert rows(db, "SELECT count(*) AS n FROM sightings WHERE kind = 'serving_runs'"
                )[0]["n"] == blocks
    assert rows(db, "SELECT count(*) AS n, sum(sightings) AS seen FROM serving_runs"
                ) == [{"n": 6, "seen": blocks}]
    assert integrity(db) == "ok"


def test_sigkill_amid_many_notes_leaves_no_worker_behind(tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    for i in range(300):
        seed = sorted(SEEDS.glob("*.md"))[i % 4]
        (notes / f"n{i:03d}.md").write_text(f"note {i}\n\n" + seed.read_text())
    db = tmp_path / "w.db"
    proc = subprocess.Popen(ingest_cmd(db, notes) + ["-j", "2"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline and proc.poll() is None and not stored_sources(db):
        time.sleep(0.01)                # some notes stored, the worker mid-chunk
    assert proc.poll() is None, "ingest finished before it could be killed: more notes"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert left_running(db) == []
    assert integrity(db) == "ok"
    stored = rows(db, "SELECT count(*) AS n FROM sources")[0]["n"]
    assert 0 < stored < 300
    done = subprocess.run(ingest_cmd(db, notes), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert rows(db, "SELECT count(*) AS n FROM sources")[0]["n"] == 300


def test_four_concurrent_ingests_on_overlapping_files(tmp_path):
    files = []
    for seed in sorted(SEEDS.glob("*.md")):
        copy = tmp_path / seed.name
        shutil.copy(seed, copy)
        files.append(copy)
    db = tmp_path / "w.db"
    # Each process gets three of the four files, in a different order.
    sets = [files[i:] + files[:i] for i in range(4)]
    procs = [subprocess.Popen(ingest_cmd(db, *chosen[:3]), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for chosen in sets]
    outcomes = [p.communicate(timeout=300) + (p.returncode,) for p in procs]
    assert [code for _, _, code in outcomes] == [0, 0, 0, 0], [err for _, err, _ in outcomes]
    assert integrity(db) == "ok"
    per_source = {r["name"]: r["n"] for r in rows(
        db, "SELECT s.name, count(r.id) AS n FROM sources s "
            "LEFT JOIN serving_runs r ON r.source_id = s.id GROUP BY s.id")}
    assert per_source == SEED_RUNS
    duplicates = rows(db, "SELECT source_id, line_start, count(*) AS n FROM serving_runs "
                          "GROUP BY source_id, line_start HAVING n > 1")
    assert duplicates == []
    stats = rows(db, "SELECT count(*) AS n FROM latency_stats")[0]["n"]
    alone = tmp_path / "alone.db"
    ingest_into(alone, *files)
    assert stats == rows(alone, "SELECT count(*) AS n FROM latency_stats")[0]["n"]


def test_new_warehouse_has_16k_pages_and_an_old_one_keeps_its_own(tmp_path):
    seed = SEEDS / "mi300x_llama70b_tp-pp_specdecode.md"
    new = tmp_path / "new.db"
    ingest_into(new, seed)
    assert pragma(new, "page_size") == 16384

    # A warehouse made with SQLite's default pages is read and grown as it is, not rebuilt.
    old = tmp_path / "old.db"
    conn = sqlite3.connect(old)
    conn.execute("PRAGMA page_size=4096")
    conn.execute("CREATE TABLE someone_elses_notes (x)")
    conn.close()
    ingest_into(old, seed)
    assert pragma(old, "page_size") == 4096
    runs = "SELECT * FROM serving_runs ORDER BY id"
    assert len(rows(new, runs)) == 6
    assert rows(old, runs) == rows(new, runs)
    assert integrity(old) == "ok"


def test_the_command_ends_with_its_output_whole_and_the_warehouse_closed(tmp_path):
    """`benchvault ingest` ends without the interpreter's teardown (__main__.py): the JSON
    on stdout is whole, the exit code is the command's (1: a file could not be read), and
    the warehouse was closed first (no -wal or -shm file left beside it)."""
    db = tmp_path / "w.db"
    done = subprocess.run(ingest_cmd(db, SEEDS, tmp_path / "missing.md"), capture_output=True,
                          text=True)
    assert done.returncode == 1, done.stderr
    results = json.loads(done.stdout)
    assert [r["status"] for r in results][-1] == "error" and len(results) == 5
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.db"]
    assert rows(db, "SELECT count(*) AS n FROM sources")[0]["n"] == 4
