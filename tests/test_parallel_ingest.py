"""Worker processes parse, one process writes: the warehouse is the same as a serial ingest."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import FIXTURES, WAREHOUSE_TABLES, ingested_warehouse, warehouse_tables
from benchvault.files import expand_paths
from benchvault.ingest import ingest_paths
from benchvault.schemas.store import connect


def test_workers_store_what_one_process_stores(tmp_path):
    files = expand_paths([FIXTURES / "seeds", FIXTURES / "vllm_serving", FIXTURES / "llama_bench",
                          FIXTURES / "vllm_server", FIXTURES / "serving_result_json"])
    serial, one = ingested_warehouse(tmp_path / "serial.db", files, jobs=1)
    parallel, two = ingested_warehouse(tmp_path / "parallel.db", files, jobs=2)
    assert [(r.path, r.status, r.counts, len(r.warnings)) for r in parallel] == \
        [(r.path, r.status, r.counts, len(r.warnings)) for r in serial]
    assert sum(r.runs for r in serial) >= 38 and len(one["llama_bench_results"]) > 100
    for table in WAREHOUSE_TABLES:
        assert two[table] == one[table], table


def test_unchanged_files_are_not_sent_to_workers(tmp_path):
    files = expand_paths([FIXTURES / "seeds"])
    db = connect(tmp_path / "w.db")
    try:
        ingest_paths(db, files, jobs=2)
        again = ingest_paths(db, files, jobs=2)
    finally:
        db.close()
    assert {r.status for r in again} == {"unchanged"}


def test_workers_really_parse(tmp_path):
    """The workers' results are used, not quietly re-read here after a pickling failure."""
    from benchvault import parallel

    files = expand_paths([FIXTURES / "seeds", FIXTURES / "serving_result_json"])
    db = connect(tmp_path / "w.db")
    try:
        reading = parallel.start(db.conn, files, None, False, 2)
        try:
            assert set(reading.chunk_of) == set(files)
            while len(reading.arrived) < len(reading.chunks):
                reading._collect(block=True)                  # all read by the worker
            assert {reading.team.holder(i) for i in range(len(reading.chunks))} == {1}
            assert reading.done == {}                         # none here
            parsed = {p.name: reading.take(p) for p in files}
        finally:
            reading.close()
    finally:
        db.close()
    assert all(parsed.values())
    assert len(parsed["strix-halo_vllm-vs-llamacpp.md"].items) > 20


def test_notes_go_to_workers_in_chunks_smaller_towards_the_end():
    from benchvault.parallel import _chunks

    sizes = [len(c) for c in _chunks(list(range(499)), 2)]
    assert sizes[:3] == [8, 8, 8] and sizes[-3:] == [1, 1, 1]
    assert sizes == sorted(sizes, reverse=True)
    assert [x for c in _chunks(list(range(499)), 2) for x in c] == list(range(499))
    assert [len(c) for c in _chunks([1, 2, 3], 2)] == [1, 1, 1]


@pytest.mark.parametrize("bad", [0, 9, -1])
def test_a_note_whose_reading_fails_is_read_again_and_the_rest_of_its_chunk_kept(
        tmp_path, monkeypatch, bad):
    """Wherever a note is read (a worker, or this process while it would wait), a failure
    there gives way to ingest_file reading it again, which reports any error with file:line."""
    from benchvault import ingest, parallel

    files = expand_paths([FIXTURES])
    bad, real = files[bad], ingest._parse_whole

    def flaky(path, tags):      # also in the workers forked after this
        if path == str(bad):
            raise RuntimeError("the parser crashed")
        return real(path, tags)

    serial, one = ingested_warehouse(tmp_path / "serial.db", files, jobs=1)
    monkeypatch.setattr(ingest, "_parse_whole", flaky)
    db = connect(tmp_path / "w.db")
    try:
        reading = parallel.start(db.conn, files, None, False, 2)
        try:
            got = {path: reading.take(path) for path in reading.chunk_of}
        finally:
            reading.close()
    finally:
        db.close()
    assert len(got) > 150
    assert got[bad] is None and all(got[p] is not None for p in got if p != bad)
    parallel_, two = ingested_warehouse(tmp_path / "parallel.db", files, jobs=2)
    assert [(r.path, r.status, r.counts) for r in parallel_] == \
        [(r.path, r.status, r.counts) for r in serial]
    for table in WAREHOUSE_TABLES:
        assert two[table] == one[table], table


def test_the_command_line_starts_its_worker_early_and_stores_what_one_process_stores(
        tmp_path):
    """`benchvault ingest -j 2` forks its worker before the command line loads (the entry
    point, __main__.py): the same warehouse as `-j 1`, warnings included; then a re-run finds
    every file unchanged and one changed file is replaced alone."""
    import json
    import subprocess
    import sys

    from conftest import ROOT, warehouse_tables

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


def test_the_early_worker_is_handed_the_files_or_ended(tmp_path):
    """The worker fork_early starts is the one start hands the files to; an ingest that needs
    no worker (one file) ends it."""
    from benchvault import parallel

    files = expand_paths([FIXTURES / "seeds"])
    serial, one = ingested_warehouse(tmp_path / "serial.db", files, jobs=1)
    parallel.fork_early(["notes", "-j", "2"])
    early = parallel._early.workers[0].pid
    db = connect(tmp_path / "w.db")
    try:
        reading = parallel.start(db.conn, files, None, False, 2)
        assert [w.pid for w in reading.workers] == [early] and parallel._early is None
        ingest_paths(db, files, jobs=2, parallel=reading)
    finally:
        db.close()
    assert _reaped(early)
    two = warehouse_tables(tmp_path / "w.db")
    for table in WAREHOUSE_TABLES:
        assert two[table] == one[table], table

    parallel.fork_early(["one.md"])
    early = parallel._early.workers[0].pid
    assert parallel.start(None, files[:1], None, False, 2) is None
    assert parallel._early is None and _reaped(early)


def _reaped(pid: int) -> bool:
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.parametrize("args,jobs", [
    (["notes", "-j", "1"], 1), (["-j1", "notes"], 1), (["--jobs=3", "x"], 3),
    (["notes", "--jobs", "2", "--db", "w.db"], 2), (["notes", "--db", "w.db"], None),
    (["notes", "-j", "many"], None), (["--", "-j", "1"], None)])
def test_the_entry_point_reads_jobs_as_the_command_line_will(args, jobs):
    from benchvault.parallel import _jobs_asked

    assert _jobs_asked(args) == jobs


def test_a_killed_worker_s_files_are_read_by_the_writer(tmp_path):
    """A worker killed mid-ingest: the chunks it claimed and never sent are read again here,
    and the warehouse is the one a serial ingest makes."""
    import os
    import signal
    import time

    from benchvault import parallel

    files = expand_paths([FIXTURES / "seeds", FIXTURES / "vllm_serving",
                          FIXTURES / "llama_bench"])
    serial, one = ingested_warehouse(tmp_path / "serial.db", files, jobs=1)
    db = connect(tmp_path / "w.db")
    try:
        reading = parallel.start(db.conn, files, None, False, 2)
        worker = reading.workers[0]
        while reading.team.holder(0) != worker.number:
            time.sleep(0.001)               # until it has claimed the first chunk
        os.kill(worker.pid, signal.SIGKILL)
        assert reading.take(files[0]) is None and worker.gone    # to be read again here
        results = ingest_paths(db, files, jobs=2, parallel=reading)
    finally:
        db.close()
    assert [(r.path, r.status, r.counts) for r in results] == \
        [(r.path, r.status, r.counts) for r in serial]
    two = warehouse_tables(tmp_path / "w.db")
    for table in WAREHOUSE_TABLES:
        assert two[table] == one[table], table


def test_a_worker_s_results_file_holds_what_waits_to_be_read_not_all_it_wrote(tmp_path):
    """Once the writer has read all a worker wrote, the worker writes its file again from
    the start: over all the fixtures, the file stays smaller than what went through it."""
    import os

    from benchvault import parallel

    files = expand_paths([FIXTURES])
    reading = parallel.start(None, files, None, False, 2)
    try:
        got = [reading.take(path) for path in files]
        worker = reading.workers[0]
        through = reading.team.read_by_writer(worker.number)
        size = os.fstat(worker.results.fileno()).st_size
    finally:
        reading.close()
    assert sum(g is not None for g in got) > 150
    assert through > 200_000 and size < through / 2, (size, through)


def test_an_early_worker_dead_before_its_task_leaves_the_reading_here(tmp_path):
    import os
    import signal

    from benchvault import parallel

    files = expand_paths([FIXTURES / "seeds"])
    parallel.fork_early(["notes"])
    worker = parallel._early.workers[0]
    os.kill(worker.pid, signal.SIGKILL)
    os.waitid(os.P_PID, worker.pid, os.WEXITED | os.WNOWAIT)     # dead, not yet reaped
    reading = parallel.start(None, files, None, False, 2)
    try:
        assert reading.workers == [worker] and worker.gone
        got = [reading.take(path) for path in files]
    finally:
        reading.close()
    assert all(g is not None for g in got) and len(got) == 4


def test_no_temporary_file_or_no_fork_leaves_the_reading_to_this_process(tmp_path, monkeypatch):
    """Out of temporary space (the shared table, the results) the ingest reads alone; out of
    processes, this process claims every chunk itself."""
    from benchvault import parallel

    files = expand_paths([FIXTURES / "seeds"])

    def no_space(*args, **kwargs):
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as patched:
        patched.setattr(parallel.tempfile, "TemporaryFile", no_space)
        parallel.fork_early(["notes"])
        assert parallel._early is None
        assert parallel.start(None, files, None, False, 2) is None

    monkeypatch.setattr(parallel.os, "fork", no_space)
    reading = parallel.start(None, files, None, False, 2)
    try:
        assert reading.workers == []
        got = [reading.take(path) for path in files]
        holders = {reading.team.holder(i) for i in range(len(reading.chunks))}
    finally:
        reading.close()
    assert all(g is not None for g in got) and holders == {parallel.WRITER}
