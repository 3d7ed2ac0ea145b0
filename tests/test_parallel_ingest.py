"""Worker processes parse, one process writes: the warehouse is the same as a serial ingest,
and no worker outlives the ingest."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT, WAREHOUSE_TABLES, ingested_warehouse, warehouse_tables
from benchvault.ingest import pipeline, workers
from benchvault.ingest.find import expand_paths
from benchvault.ingest.pipeline import ingest_paths
from benchvault.schemas.store import connect


def _same_as_serial(tmp_path, files, results, db_path):
    serial, one = ingested_warehouse(tmp_path / "serial.db", files, jobs=1)
    assert [(r.path, r.status, r.counts, len(r.warnings)) for r in results] == \
        [(r.path, r.status, r.counts, len(r.warnings)) for r in serial]
    two = warehouse_tables(db_path)
    for table in WAREHOUSE_TABLES:
        assert two[table] == one[table], table
    return serial


def test_workers_store_what_one_process_stores(tmp_path):
    files = expand_paths([FIXTURES / "seeds", FIXTURES / "vllm_serving", FIXTURES / "llama_bench",
                          FIXTURES / "vllm_server", FIXTURES / "serving_result_json"])
    parallel, _ = ingested_warehouse(tmp_path / "parallel.db", files, jobs=2)
    serial = _same_as_serial(tmp_path, files, parallel, tmp_path / "parallel.db")
    assert sum(r.runs for r in serial) >= 38


def test_the_worker_and_the_writer_share_the_reading(tmp_path, monkeypatch):
    """Every small file is read once, by the worker or by the writer in a chunk of its own
    (never read again by ingest_file: a pickling failure quietly read again there would hide
    a broken pool), and both read some."""
    files = expand_paths([FIXTURES])
    here = []
    real = workers.Readings._read_here

    def counted(self, chunk):
        here.extend(chunk)
        return real(self, chunk)

    def not_again(*args, **kwargs):
        raise AssertionError("read again by ingest_file")

    monkeypatch.setattr(workers.Readings, "_read_here", counted)
    monkeypatch.setattr(pipeline, "parse_file", not_again)
    db = connect(tmp_path / "w.db")
    try:
        results = ingest_paths(db, files, jobs=2)
    finally:
        db.close()
    monkeypatch.undo()
    _same_as_serial(tmp_path, files, results, tmp_path / "w.db")
    assert 0 < len(here) < len(files) and len(set(here)) == len(here)


def test_unchanged_files_are_not_sent_to_workers(tmp_path, monkeypatch):
    files = expand_paths([FIXTURES / "seeds"])
    db = connect(tmp_path / "w.db")
    try:
        ingest_paths(db, files, jobs=2)
        monkeypatch.setattr(workers, "Readings", None)      # a pool would fail
        again = ingest_paths(db, files, jobs=2)
    finally:
        db.close()
    assert {r.status for r in again} == {"unchanged"}


def test_one_file_runs_no_worker(tmp_path, monkeypatch):
    monkeypatch.setattr(workers, "Readings", None)
    db = connect(tmp_path / "w.db")
    try:
        [result] = ingest_paths(db, [FIXTURES / "seeds" / "strix-halo_vllm-vs-llamacpp.md"],
                                jobs=2)
    finally:
        db.close()
    assert result.runs == 11 and result.counts["llama_bench_results"] == 16


def test_notes_go_to_workers_in_chunks_smaller_towards_the_end():
    sizes = [len(c) for c in workers._chunks(list(range(499)), 2)]
    assert sizes[:3] == [8, 8, 8] and sizes[-3:] == [1, 1, 1]
    assert sizes == sorted(sizes, reverse=True)
    assert [x for c in workers._chunks(list(range(499)), 2) for x in c] == list(range(499))
    assert [len(c) for c in workers._chunks([1, 2, 3], 2)] == [1, 1, 1]


@pytest.mark.parametrize("bad", [0, 9, -1])
def test_a_note_whose_reading_fails_is_read_again_and_the_rest_of_its_chunk_kept(
        tmp_path, monkeypatch, bad):
    """A failure in a worker (or in the writer's own reading of a chunk) gives way to the
    writer reading that file again, which reports any error with file:line; the other files
    of its chunk keep their reading."""
    files = expand_paths([FIXTURES])
    from benchvault.ingest import parse

    bad, real = files[bad], parse.parse_whole

    def flaky(path, tags):      # here and in the workers forked after this
        if str(path) == str(bad):
            raise RuntimeError("the parser crashed")
        return real(path, tags)

    monkeypatch.setattr(parse, "parse_whole", flaky)
    with workers.Readings(files, None, 2) as readings:
        got = {path: readings.take(path) for path in files}
    assert len(got) > 150
    assert got[bad] is None and all(got[p] is not None for p in got if p != bad)
    db = connect(tmp_path / "w.db")
    try:
        results = ingest_paths(db, files, jobs=2)
    finally:
        db.close()
    _same_as_serial(tmp_path, files, results, tmp_path / "w.db")


def test_a_killed_worker_s_files_are_read_by_the_writer(tmp_path):
    """A worker killed mid-ingest breaks the pool: every file not yet read is read by the
    writer, and the warehouse is the one a serial ingest makes."""
    files = expand_paths([FIXTURES / "seeds", FIXTURES / "vllm_serving",
                          FIXTURES / "llama_bench"])
    readings = workers.Readings(files, None, 2)
    os.kill(next(iter(readings.pool._processes)), signal.SIGKILL)
    db = connect(tmp_path / "w.db")
    try:
        results = [pipeline.ingest_file(db, path, parsed=readings.take(path))
                   for path in files]
    finally:
        readings.close()
        db.close()
    assert readings.broken
    _same_as_serial(tmp_path, files, results, tmp_path / "w.db")


def test_no_fork_leaves_the_reading_to_this_process(tmp_path, monkeypatch):
    files = expand_paths([FIXTURES / "seeds"])

    def no_processes(*args, **kwargs):
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", no_processes)
    db = connect(tmp_path / "w.db")
    try:
        results = ingest_paths(db, files, jobs=2)
    finally:
        db.close()
    monkeypatch.undo()
    _same_as_serial(tmp_path, files, results, tmp_path / "w.db")


def _children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry.name))
    return out


def test_no_worker_outlives_an_ingest():
    files = expand_paths([FIXTURES / "seeds", FIXTURES / "vllm_serving"])
    with workers.Readings(files, None, 3) as readings:
        assert len(_children(os.getpid())) == 2
        for path in files:
            readings.take(path)
    assert _children(os.getpid()) == []


def _notes(tmp_path: Path, copies: int) -> Path:
    notes = tmp_path / "notes"
    notes.mkdir()
    seeds = sorted((FIXTURES / "seeds").glob("*.md"))
    for i in range(copies):
        text = seeds[i % len(seeds)].read_text()
        (notes / f"n{i:03d}.md").write_text(f"note {i}\n\n{text}")
    return notes


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc for child processes")
def test_a_killed_writer_leaves_no_worker_behind(tmp_path):
    notes = _notes(tmp_path, 200)
    writer = subprocess.Popen([sys.executable, "-m", "benchvault", "ingest", str(notes),
                               "--db", str(tmp_path / "w.db"), "-j", "2", "--json"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    deadline = time.monotonic() + 60
    while len(_children(writer.pid)) < 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    pool = _children(writer.pid)
    assert len(pool) >= 1
    writer.kill()
    writer.wait()
    deadline = time.monotonic() + 10
    while any(Path(f"/proc/{pid}").exists() and "Z" not in _state(pid) for pid in pool) and \
            time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in pool if Path(f"/proc/{pid}").exists() and "Z" not in _state(pid)]


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


def test_ctrl_c_ends_the_ingest_cleanly(tmp_path):
    """Ctrl-C: exit 130, one line and no traceback, no worker left, the warehouse whole (every
    file stored before it is complete; a re-run stores the rest)."""
    notes = _notes(tmp_path, 200)
    db = tmp_path / "w.db"
    writer = subprocess.Popen([sys.executable, "-m", "benchvault", "ingest", str(notes),
                               "--db", str(db), "-j", "2"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, cwd=ROOT)
    deadline = time.monotonic() + 60
    while not (db.exists() and len(_children(writer.pid)) >= 1) and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.5)
    pool = _children(writer.pid)
    writer.send_signal(signal.SIGINT)
    out, err = writer.communicate(timeout=60)
    assert writer.returncode == 130, err
    assert "Traceback" not in err and "interrupted" in err
    assert not [pid for pid in pool if Path(f"/proc/{pid}").exists()]
    again = subprocess.run([sys.executable, "-m", "benchvault", "ingest", str(notes), "--db",
                            str(db), "--json"], capture_output=True, text=True, cwd=ROOT)
    assert again.returncode == 0, again.stderr
    stored = {r["status"] for r in json.loads(again.stdout)}
    assert "ingested" in stored and stored <= {"ingested", "unchanged"}


def test_the_command_line_stores_with_workers_what_it_stores_alone(tmp_path):
    """`benchvault ingest -j 2` gives the warehouse `-j 1` gives, warnings included; then a
    re-run finds every file unchanged and one changed file is replaced alone."""
    notes = tmp_path / "notes"
    for folder in ("seeds", "vllm_serving", "llama_bench", "vllm_server"):
        shutil.copytree(FIXTURES / folder, notes / folder)

    def ingest(db, *extra):
        done = subprocess.run([sys.executable, "-m", "benchvault", "ingest", str(notes),
                               "--db", str(db), "--json", *extra], capture_output=True,
                              text=True, cwd=ROOT)
        assert done.returncode in (0, 1), done.stderr
        return [(Path(r["path"]).name, r["status"], r["counts"], len(r["warnings"]))
                for r in json.loads(done.stdout)]

    one = ingest(tmp_path / "one.db", "-j", "1")
    two = ingest(tmp_path / "two.db", "-j", "2")
    assert two == one and len(one) > 30 and sum(r[2].get("serving_runs", 0) for r in one) > 30
    stored_one, stored_two = warehouse_tables(tmp_path / "one.db"), \
        warehouse_tables(tmp_path / "two.db")
    for table in WAREHOUSE_TABLES:
        assert stored_two[table] == stored_one[table], table
    assert {status for _, status, _, _ in ingest(tmp_path / "two.db", "-j", "2")} == \
        {"unchanged"}
    changed = sorted((notes / "seeds").glob("*.md"))[0]
    changed.write_text(changed.read_text() + "\nlater\n")
    again = ingest(tmp_path / "two.db", "-j", "2")
    assert [(name, status) for name, status, _, _ in again if status != "unchanged"] == \
        [(changed.name, "replaced")]


def test_ctrl_c_inside_code_made_from_a_string_still_exits_130(tmp_path):
    """Ctrl-C that lands while Python runs code made from a string (a dataclass being made
    as a module loads) is still exit status 130 under ``python -m``, not a death by SIGINT."""
    script = tmp_path / "interrupted_here.py"
    script.write_text(
        "import os, signal, time\n"
        "from benchvault.console import guarded\n"
        "@guarded\n"
        "def command():\n"
        "    exec('os.kill(os.getpid(), signal.SIGINT)\\ntime.sleep(5)')\n"
        "import typer\n"
        "try:\n"
        "    command()\n"
        "except typer.Exit as done:\n"
        "    raise SystemExit(done.exit_code)\n")
    done = subprocess.run([sys.executable, "-m", "interrupted_here"], capture_output=True,
                          text=True, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 130, done.stderr
    assert "interrupted" in done.stderr and "Traceback" not in done.stderr
