"""A note is a note whatever it is called: markdown is decided by the text, region by region."""

from __future__ import annotations

import shutil
import sqlite3

import pytest

from benchvault.reading.doctype import looks_like_markdown, sniff_markdown
from conftest import FIXTURES, SEEDS, ingest_into

TABLES = ("serving_runs", "latency_stats", "llama_bench_results", "published_results",
          "server_launches", "engine_stats", "spec_decode_metrics", "unparsed_blocks")
# Ids and the file's own name differ by construction; everything read from the text must not.
IGNORED = {"id", "source_id", "launch_id", "run_id", "config_id", "group_id", "table_id"}


def content(db) -> dict[str, list[tuple]]:
    conn = sqlite3.connect(db)
    try:
        out = {}
        for table in TABLES:
            columns = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")
                       if r[1] not in IGNORED]
            out[table] = conn.execute(f"SELECT {', '.join(columns)} FROM {table} "
                                      "ORDER BY rowid").fetchall()
        return out
    finally:
        conn.close()


@pytest.mark.parametrize("seed", sorted(SEEDS.glob("*.md")), ids=lambda p: p.stem)
@pytest.mark.parametrize("suffix", [".txt", ".log", ""])
def test_seed_notes_read_the_same_under_any_name(seed, suffix, tmp_path):
    as_md, renamed = tmp_path / "md" / seed.name, tmp_path / "other" / (seed.stem + suffix)
    for path in (as_md, renamed):
        path.parent.mkdir()
        shutil.copy(seed, path)
    ingest_into(tmp_path / "md.db", as_md)
    ingest_into(tmp_path / "other.db", renamed)
    want, got = content(tmp_path / "md.db"), content(tmp_path / "other.db")
    assert sum(map(len, want.values())) > 0
    for table in TABLES:
        assert got[table] == want[table], table


def test_the_multi_gpu_report_publishes_its_tables_as_txt(tmp_path):
    note = tmp_path / "multi-gpu_report_pp-vs-tp.txt"
    shutil.copy(SEEDS / "multi-gpu_report_pp-vs-tp.md", note)
    ingest_into(tmp_path / "w.db", note)
    conn = sqlite3.connect(tmp_path / "w.db")
    assert conn.execute("SELECT count(*) FROM published_results").fetchone()[0] == 534


def test_tool_output_saved_as_md_is_still_tool_output():
    # llama-bench's own `-o md` files and a pasted capture are not notes, whatever the suffix.
    for path in [FIXTURES / "contract" / "llama.cpp-0.3.36" / "md_pg.md",
                 FIXTURES / "notes" / "derived-capture-with-table.log"]:
        assert not sniff_markdown(path.with_suffix(".txt").name, path.read_bytes())


@pytest.mark.parametrize("text, markdown", [
    ("---\ntitle: runs\n---\n\nsome words\n\n# Results\n\nmore\n", True),
    ("# Results\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n- one\n- two\n", True),
    ("```\nINFO 03-01 12:00:01 x\n```\n\n```\n$ vllm serve m\n```\n", True),
    ("$ llama-bench -m x.gguf\n| model | size |\n| --- | --- |\n| llama 7B | 3 GiB |\n\n"
     "build: 1234 (abcd)\n", False),
    ("INFO 03-01 12:00:01 [api_server.py:1] vLLM API server version 0.8.0\n"
     "# c=16\n\n# c=32\n\nINFO 03-01 12:00:02 started\n", False),
])
def test_markdown_is_decided_by_structure(text, markdown):
    assert looks_like_markdown(text.splitlines()) is markdown


def test_commented_output_is_not_a_document_of_headings():
    # Two result blocks kept as `# ` comments, a blank line between: forty `#` lines in runs.
    for name in ["derived-commented-results-only.log", "derived-commented-results-in-script.sh"]:
        path = FIXTURES / "vllm_serving" / name
        assert not sniff_markdown(path.name, path.read_bytes()), name


def test_a_note_with_many_headings_stays_a_note():
    note = ["# L40S sweep", ""]
    for c in (16, 32, 64, 128):
        note += [f"## c={c}", "", f"Throughput went up at c={c}, see the [run](https://x.y/{c}).",
                 "", "### Notes", "", "- one GPU", ""]
    assert looks_like_markdown(note)
    # Two headings in a row are still headings; three `#` lines in a row are comments.
    assert looks_like_markdown(["# Title", "## Setup", "", "- one GPU", "", "## Results", ""])
    assert not looks_like_markdown(["# a", "# b", "# c", "", "# d", "# e", "# f", "",
                                    "# g", "# h", "# i"])

