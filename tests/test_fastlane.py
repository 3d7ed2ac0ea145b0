"""The segmenter's fast lane (reading/fastlane.py) stores exactly what the full pass stores.

Each file is ingested twice, the lane on and off, and every table compared row by row; a
log assembled from real lines around the lane's edges (labels that come and go, a server
launch, wrapped and prefixed stats lines, a line the grammar refuses, prose after a
terminal-wide line) must also have been read mostly by the lane, or the comparison proves
nothing.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from conftest import FIXTURES
from benchvault.ingest.find import expand_paths
from benchvault.ingest.pipeline import ingest_paths
from benchvault.parsers.base import Parsed
from benchvault.reading import fastlane, prefilter
from benchvault.reading.lines import LineSource
from benchvault.reading.segmenter import Segmenter
from benchvault.schemas.store import connect

SKIP_COLUMNS = {"sources": ("ingested_at",)}


def _tables(db_path: Path) -> dict[str, list]:
    conn = sqlite3.connect(db_path)
    try:
        names = [n for (n,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
        out = {}
        for name in names:
            columns = [c for (_, c, *_) in conn.execute(f"PRAGMA table_info([{name}])")
                       if c not in SKIP_COLUMNS.get(name, ())]
            out[name] = conn.execute(f"SELECT {', '.join(f'[{c}]' for c in columns)} "
                                     f"FROM [{name}] ORDER BY 1").fetchall()
        return out
    finally:
        conn.close()


def _warehouse(db_path: Path, files: list[Path], lane: bool, monkeypatch) -> dict[str, list]:
    monkeypatch.setattr(Segmenter, "fast_lane", lane)
    db = connect(db_path)
    try:
        ingest_paths(db, files)
    finally:
        db.close()
    return _tables(db_path)


def _same_warehouse(tmp_path: Path, files: list[Path], monkeypatch) -> dict[str, list]:
    fast = _warehouse(tmp_path / "lane.db", files, True, monkeypatch)
    full = _warehouse(tmp_path / "full.db", files, False, monkeypatch)
    monkeypatch.setattr(Segmenter, "fast_lane", True)
    assert fast.keys() == full.keys()
    for table in full:
        assert fast[table] == full[table], table
    return full


def _lane_taken(path: Path) -> tuple[int, int]:
    """(lines the lane read, items the pass gave) for one file."""
    segmenter = Segmenter(str(path))
    source = LineSource(path, None, prefilter.for_formats())
    try:
        items = list(segmenter.run(source))
    finally:
        source.close()
    return segmenter.lane.taken, len(items)


def test_every_fixture_is_stored_the_same_with_and_without_the_lane(tmp_path, monkeypatch):
    files = expand_paths([FIXTURES])
    full = _same_warehouse(tmp_path, files, monkeypatch)
    assert len(full["engine_stats"]) > 20 and len(full["spec_decode_metrics"]) > 5


def _real(path: str) -> list[str]:
    return (FIXTURES / path).read_text(encoding="utf-8").splitlines()


def _stats_lines() -> list[str]:
    return [line for line in _real("contract/vllm-0.32.0/server.log")
            if "Avg prompt throughput" in line]


def test_a_log_around_the_lanes_edges(tmp_path, monkeypatch):
    stats = _stats_lines()
    v0 = _real("engine_stats/v0_metrics_issue22230.log")
    wrapped = _real("engine_stats/derived-wrapped-100-cols-issue14226.log")
    block = (FIXTURES / "vllm_serving").glob("*.txt")
    serving = next(p for p in sorted(block) if "Serving Benchmark Result"
                   in p.read_text(encoding="utf-8")).read_text(encoding="utf-8").splitlines()
    widest = max(stats, key=len)
    # A line the lane reads as the widest yet (numbers grew), then a shorter line cut in two:
    # not a wrap, since the terminal was wider than the cut (the lane must tell the full pass).
    base = stats[1]
    grew = base.replace("throughput: 0.0 tokens/s", "throughput: 90000.0 tokens/s", 1)
    cut = base.replace("throughput: 0.0 tokens/s", "throughput: 900.0 tokens/s", 1)
    assert len(base) < len(cut) - 1 < len(grew)
    lines = [base, grew, "INFO:     127.0.0.1:40000 - \"POST /v1/completions HTTP/1.1\" 200 OK",
             cut[:len(base) + 1], cut[len(base) + 1:],
             *_real("contract/vllm-0.32.0/server.log"),
             "# c=16", *stats, *v0, *serving,
             "# c=32", *stats, *stats,
             widest, "prose a terminal-wide line is followed by, shorter than it",
             widest, "- note: a dash line that could continue it",
             *wrapped,
             "# " + stats[0], "# " + stats[-1],            # a commented-out run of output
             stats[2], "// " + stats[0], "// " + stats[-1], stats[2], "> " + stats[0],
             stats[0].replace("Running:", "Running: x"),   # the grammar refuses it
             widest + " Extra: 1.5 things",                 # a new widest line, an unknown field
             *stats, *_real("spec_decode/v1_log_rename_pr15902.log"), *stats]
    log = tmp_path / "edges.log"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    full = _same_warehouse(tmp_path, [log], monkeypatch)
    taken, _ = _lane_taken(log)
    # Every copy of the stats lines but the first of each shape and context is the lane's.
    assert len(full["engine_stats"]) >= 5 * len(stats) and taken >= 3 * len(stats)
    assert {r[0] for r in sqlite3.connect(tmp_path / "full.db").execute(
        "SELECT label FROM engine_stats")} >= {"c=16", "c=32"}
    assert any("Running: x" in (r[0] or "") for r in sqlite3.connect(
        tmp_path / "full.db").execute("SELECT raw_text FROM unparsed_blocks"))


def test_a_markdown_note_never_takes_the_lane(tmp_path):
    note = tmp_path / "note.md"
    note.write_text("# Runs\n\n```\n" + "\n".join(_stats_lines() * 3) + "\n```\n",
                    encoding="utf-8")
    assert Segmenter(str(note)).lane is None


@pytest.mark.parametrize("contexts", [fastlane.MAX_CONTEXTS + 4])
def test_labels_that_come_and_go_keep_few_memos(tmp_path, contexts):
    stats = _stats_lines()
    log = tmp_path / "labels.log"
    log.write_text("\n".join(line for c in range(contexts) for line in [f"# c={c}", *stats])
                   + "\n", encoding="utf-8")
    segmenter = Segmenter(str(log))
    source = LineSource(log, None, prefilter.for_formats())
    try:
        labels = [item.row.label if isinstance(item, Parsed) else item.context.label
                  for item in segmenter.run(source)]
    finally:
        source.close()
    assert labels == [f"c={c}" for c in range(contexts) for _ in stats]
    assert len(fastlane._MEMOS) == fastlane.MAX_CONTEXTS


def test_a_row_is_built_unvalidated_only_where_validation_checks_types_alone():
    from pydantic import field_validator

    from benchvault.schemas.server import EngineStat

    class Checked(EngineStat):
        @field_validator("running")
        @classmethod
        def _not_negative(cls, value):
            return value

    assert fastlane._checks_only_types(EngineStat)
    assert not fastlane._checks_only_types(Checked)


def test_the_lane_asks_whether_a_wide_line_goes_on_with_no_prefix_cuts():
    # The lane asks of a terminal-wide stats line, with no collector's cuts at hand, whether
    # the next line may be its wrapped end; then whether the two read as one record.
    line = max(_stats_lines(), key=len)
    prose = "Some prose about the setup, the drivers and why the numbers looked that way."
    segmenter = Segmenter("server.log")
    assert segmenter._goes_on([line], prose)
    assert segmenter._best_reading([line, prose]) is None
