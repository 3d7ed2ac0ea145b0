"""Progress by bytes: a big log moves the bar as it is read, not only when it is done."""

from __future__ import annotations

from pathlib import Path

from benchvault.ingest.pipeline import ingest_file
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


def test_whole_file_formats_report_their_bytes_as_they_are_read(tmp_path):
    """A result JSON, a GuideLLM report and llama-bench's -o json/csv/sql files are each one
    item to ingest: their bytes are reported as they are read, adding up to the file."""
    files = [ROOT / "fixtures/serving_result_json/derived-vllm-0.13-detailed-metadata.json",
             ROOT / "fixtures/guidellm_report/derived-guidellm-0.2-sweep.json",
             *(ROOT / f"fixtures/llama_bench/deepseek_h100_derived_{kind}"
               for kind in ("json.json", "csv.csv", "sql.sql"))]
    for path in files:
        chunks: list[int] = []
        db = connect(tmp_path / f"{path.stem}.db")
        try:
            result = ingest_file(db, path, on_bytes=chunks.append)
        finally:
            db.close()
        assert result.status == "ingested" and sum(result.counts.values()) > 0, path.name
        assert chunks and sum(chunks) == path.stat().st_size, path.name
