"""Progress by bytes: a big log moves the bar as it is read, not only when it is done."""

from __future__ import annotations

from pathlib import Path

from benchvault.ingest import ingest_file
from benchvault.schemas.store import connect

ROOT = Path(__file__).resolve().parent.parent


def test_bytes_reported_add_up_to_the_file(tmp_path):
    note = ROOT / "fixtures/seeds/strix-halo_vllm-vs-llamacpp.md"
    chunks: list[int] = []
    db = connect(tmp_path / "w.db")
    try:
        result = ingest_file(db, note, on_bytes=chunks.append)
    finally:
        db.close()
    assert result.runs > 0
    assert chunks and sum(chunks) == note.stat().st_size


def test_a_log_bigger_than_a_chunk_reports_more_than_once(tmp_path, monkeypatch):
    from benchvault.reading.lines import LineSource

    monkeypatch.setattr(LineSource, "CHUNK", 256)
    log = ROOT / "fixtures/engine_stats/v1_loggers_issue14226.log"
    chunks: list[int] = []
    db = connect(tmp_path / "w.db")
    try:
        ingest_file(db, log, on_bytes=chunks.append)
    finally:
        db.close()
    assert len(chunks) > 1
    assert sum(chunks) == log.stat().st_size
