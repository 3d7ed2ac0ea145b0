"""Worker processes parse, one process writes: the warehouse is the same as a serial ingest."""

from __future__ import annotations

from conftest import FIXTURES, WAREHOUSE_TABLES, ingested_warehouse
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
    from benchvault.ingest import _start_parsing, _unpacked

    files = expand_paths([FIXTURES / "seeds", FIXTURES / "serving_result_json"])
    db = connect(tmp_path / "w.db")
    try:
        pool, pending = _start_parsing(db, files, None, False, 2)
        try:
            assert set(pending) == set(files)
            # raises if one failed
            parsed = {p.name: _unpacked(f.result()) for p, f in pending.items()}
        finally:
            pool.shutdown()
    finally:
        db.close()
    assert len(parsed["strix-halo_vllm-vs-llamacpp.md"].items) > 20


def test_a_first_file_that_fails_before_the_fork_is_read_again(tmp_path, monkeypatch):
    """The first file is read in this process before the workers fork; if that reading
    fails, the file is read again where errors are reported, like a worker's failure."""
    from benchvault import ingest

    files = expand_paths([FIXTURES / "seeds"])
    real, calls = ingest._parse_whole, []

    def first_fails(path, tags):
        calls.append(path)
        if len(calls) == 1:
            raise RuntimeError("the parser crashed")
        return real(path, tags)

    serial, _ = ingested_warehouse(tmp_path / "serial.db", files, jobs=1)
    monkeypatch.setattr(ingest, "_parse_whole", first_fails)
    db = connect(tmp_path / "w.db")
    try:
        results = ingest_paths(db, files, jobs=2)
    finally:
        db.close()
    assert calls[0] == str(files[0])
    assert [r.status for r in results] == ["ingested"] * len(files)
    assert [(r.runs, r.counts) for r in results] == [(r.runs, r.counts) for r in serial]
    assert results[0].runs > 0


def test_notes_go_to_workers_in_chunks_smaller_towards_the_end():
    from benchvault.ingest import _chunks

    sizes = [len(c) for c in _chunks(list(range(499)), 2)]
    assert sizes[:3] == [8, 8, 8] and sizes[-3:] == [1, 1, 1]
    assert sizes == sorted(sizes, reverse=True)
    assert [x for c in _chunks(list(range(499)), 2) for x in c] == list(range(499))
    assert [len(c) for c in _chunks([1, 2, 3], 2)] == [1, 1, 1]


def test_a_note_a_worker_fails_on_is_read_here_and_the_rest_of_its_chunk_kept(tmp_path,
                                                                             monkeypatch):
    from benchvault import ingest

    files = expand_paths([FIXTURES])
    bad, real = files[9], ingest._parse_packed

    def flaky(path, tags):      # called in the forked workers, as patched here
        if path == str(bad):
            raise RuntimeError("the parser crashed")
        return real(path, tags)

    serial, one = ingested_warehouse(tmp_path / "serial.db", files, jobs=1)
    monkeypatch.setattr(ingest, "_parse_packed", flaky)
    db = connect(tmp_path / "w.db")
    try:
        pool, pending = ingest._start_parsing(db, files, None, False, 2)
        try:
            got = {path: ingest._worker_result(future, path) for path, future in pending.items()}
        finally:
            pool.shutdown()
    finally:
        db.close()
    assert len(got) > 150
    assert got[bad] is None and all(got[p] is not None for p in got if p != bad)
    parallel, two = ingested_warehouse(tmp_path / "parallel.db", files, jobs=2)
    assert [(r.path, r.counts) for r in parallel] == [(r.path, r.counts) for r in serial]
    for table in WAREHOUSE_TABLES:
        assert two[table] == one[table], table
