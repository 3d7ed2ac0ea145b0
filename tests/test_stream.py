"""A big file parsed by a worker process of its own while this one writes (stream.streamed):
the same rows, warnings, progress and errors as reading it here."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import (WAREHOUSE_TABLES, assert_same_item, ingested_warehouse,
                      warehouse_tables)
from benchvault.ingest import pipeline, stream, workers
from benchvault.ingest.find import expand_paths
from benchvault.ingest.outcome import IngestWarning
from benchvault.ingest.parse import parse_file
from benchvault.ingest.pipeline import ingest_file
from benchvault.parsers.base import Block
from benchvault.reading.lines import ReadReport
from benchvault.schemas.store import connect

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "fixtures/seeds/strix-halo_vllm-vs-llamacpp.md"
def test_streamed_items_are_the_items_read_here(tmp_path):
    # A note with a line that is not UTF-8: the warning comes through the stream and the
    # worker's findings reach this process's report.
    note = tmp_path / "note.md"
    note.write_bytes(SEED.read_bytes() + "\nthroughput on the caf\xe9 box\n".encode("latin-1"))
    here, there = ReadReport(), ReadReport()
    expected = list(parse_file(note, None, here))
    got = list(stream.streamed(lambda report, defer: parse_file(note, None, report), there))
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        assert_same_item(a, b)
    assert there.fallback_lines == here.fallback_lines != []
    assert any(isinstance(i, IngestWarning) and "not UTF-8" in i.reason for i in got)


def _three_then_fail(report, defer):
    yield from ("a", "b", "c")
    raise ValueError("line 4 is bad")


def test_an_error_in_the_worker_is_raised_here_after_the_items_before_it():
    got = []
    with pytest.raises(ValueError, match="line 4 is bad"):
        for item in stream.streamed(_three_then_fail, ReadReport()):
            got.append(item)
    assert got == ["a", "b", "c"]


def _dies(report, defer):
    yield "a"
    os._exit(3)


def test_a_worker_that_dies_is_reported_as_lost():
    with pytest.raises(stream.WorkerLost):
        list(stream.streamed(_dies, ReadReport()))


def test_streamed_files_store_what_one_process_stores(tmp_path, monkeypatch):
    files = expand_paths([ROOT / "fixtures/seeds", ROOT / "fixtures/vllm_server",
                          ROOT / "fixtures/spec_decode", ROOT / "fixtures/serving_result_json"])
    serial, one = ingested_warehouse(tmp_path / "serial.db", files, jobs=1)
    # Every file "big": none goes to the pool, each is streamed from a worker of its own.
    monkeypatch.setattr(workers, "POOL_MAX_BYTES", -1)
    monkeypatch.setattr(pipeline, "STREAM_MIN_BYTES", 0)
    calls = []
    real = stream.streamed
    monkeypatch.setattr(stream, "streamed", lambda *a: calls.append(1) or real(*a))
    streamed, two = ingested_warehouse(tmp_path / "streamed.db", files, jobs=2)
    assert len(calls) == len(files)
    assert [(r.path, r.status, r.counts, len(r.warnings)) for r in streamed] == \
        [(r.path, r.status, r.counts, len(r.warnings)) for r in serial]
    assert sum(r.runs for r in serial) > 30
    for table in WAREHOUSE_TABLES:
        assert two[table] == one[table], table


def test_a_lost_worker_means_the_file_is_read_here(tmp_path, monkeypatch):
    serial, one = ingested_warehouse(tmp_path / "serial.db", [SEED], jobs=1)
    monkeypatch.setattr(pipeline, "STREAM_MIN_BYTES", 0)
    monkeypatch.setattr(stream, "_produce", lambda parse, sender: os._exit(3))
    db = connect(tmp_path / "w.db")
    try:
        result = ingest_file(db, SEED, stream=True)
    finally:
        db.close()
    assert result.status == "ingested" and result.runs == serial[0].runs > 0
    assert warehouse_tables(tmp_path / "w.db") == one


def test_a_streamed_file_reports_its_bytes(tmp_path, monkeypatch):
    monkeypatch.setattr(pipeline, "STREAM_MIN_BYTES", 0)
    monkeypatch.setattr(stream, "PROGRESS_BYTES", 1)   # a message for every chunk read
    from benchvault.reading.lines import LineSource

    monkeypatch.setattr(LineSource, "CHUNK", 512)
    chunks: list[int] = []
    db = connect(tmp_path / "w.db")
    try:
        result = ingest_file(db, SEED, on_bytes=chunks.append, stream=True)
    finally:
        db.close()
    assert result.runs > 0
    assert len(chunks) > 1 and sum(chunks) == SEED.stat().st_size


def test_blocks_left_to_the_writer_are_built_there_alike(tmp_path, monkeypatch):
    """With every block left to the writer (its share at the most), the items and the
    warehouse are those of a one-process ingest."""
    here = list(parse_file(SEED))
    got = list(stream.streamed(lambda report, defer: parse_file(SEED, None, report,
                                                               lambda: True), ReadReport()))
    assert len(got) == len(here)
    for a, b in zip(got, here):
        assert_same_item(a, b)

    files = expand_paths([ROOT / "fixtures/seeds", ROOT / "fixtures/vllm_serving"])
    serial, one = ingested_warehouse(tmp_path / "serial.db", files, jobs=1)
    monkeypatch.setattr(workers, "POOL_MAX_BYTES", -1)
    monkeypatch.setattr(pipeline, "STREAM_MIN_BYTES", 0)
    monkeypatch.setattr(stream.Share, "__call__", lambda self: True)
    built_here = []
    real = stream.build_deferred

    def counting(items):
        built_here.extend(i for i in items if isinstance(i, Block))
        return real(items)

    monkeypatch.setattr(stream, "build_deferred", counting)
    streamed, two = ingested_warehouse(tmp_path / "streamed.db", files, jobs=2)
    assert len(built_here) > 30
    for table in WAREHOUSE_TABLES:
        assert two[table] == one[table], table
    assert [r.counts for r in streamed] == [r.counts for r in serial]


def test_the_writers_share_follows_who_waits():
    share = stream.Share()
    assert not any(share() for _ in range(20))          # at first the worker builds all
    for _ in range(10):
        share.handed_over(0.0)                          # the writer was waiting each time
    assert sum(share() for _ in range(100)) == 50       # at the most, every second block
    share.handed_over(0.050)                            # a batch waited 50 ms for the writer
    share.handed_over(0.050)
    assert sum(share() for _ in range(120)) == 30       # two steps back: every fourth
    for _ in range(10):
        share.handed_over(1.0)
    assert not any(share() for _ in range(20))
