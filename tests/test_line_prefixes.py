"""Prefixed runs of lines read as if the prefix were not there: the same rows as the original."""

from __future__ import annotations

import sqlite3

import pytest

from conftest import FIXTURES, ingest_into
from fuzzing import LINE_PREFIXES

TABLES = ("serving_runs", "latency_stats", "llama_bench_results", "server_launches",
          "engine_stats", "spec_decode_metrics")
# Where a row was read and its raw text differ by construction.
IGNORED = {"id", "source_id", "launch_id", "run_id", "config_id", "group_id", "raw_text",
           "line_start", "line_end", "text"}
# Plain captures of each kind (markdown notes hide their headings behind a prefix; the
# compose/docker fixtures carry a collector prefix already).
CAPTURES = sorted(p for d in ("vllm_serving", "llama_bench", "vllm_server", "engine_stats",
                              "spec_decode")
                  for p in (FIXTURES / d).iterdir()
                  if p.suffix in (".txt", ".log") and "derived-" not in p.name
                  and "banner_before_json" not in p.name)


def content(db, drop=()) -> dict:
    conn = sqlite3.connect(db)
    try:
        out = {}
        for table in TABLES:
            columns = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")
                       if r[1] not in IGNORED and r[1] not in drop]
            out[table] = [dict(zip(columns, r)) for r in conn.execute(
                f"SELECT {', '.join(columns)} FROM {table} ORDER BY rowid")]
        return out
    finally:
        conn.close()


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_prefix_reads_like_the_original(capture, tmp_path):
    original = tmp_path / "original.txt"
    original.write_bytes(capture.read_bytes())
    ingest_into(tmp_path / "original.db", original)
    for prefix in LINE_PREFIXES:
        # A `# ` line that is not program output is a comment: the label it gives is the
        # one difference a shell comment may make.
        drop = ("label",) if prefix == b"# " else ()
        # A capture cut before its result (kept for its warning) must stay empty.
        want = content(tmp_path / "original.db", drop)
        lines = original.read_bytes().split(b"\n")
        prefixed = tmp_path / f"prefixed-{len(list(tmp_path.iterdir()))}.txt"
        prefixed.write_bytes(b"\n".join(prefix + line if line.strip() else prefix.rstrip()
                                        for line in lines))
        db = tmp_path / f"{prefixed.stem}.db"
        ingest_into(db, prefixed)
        got = content(db, drop)
        for table in TABLES:
            assert got[table] == want[table], (prefix, table)


def test_a_wide_paste_does_not_hide_a_wrapped_one_after_it(tmp_path):
    """Lines shorter than a whole line read before them are not taken for wrap cuts (the
    terminal was wider), but only within one paste: a later fence starts over."""
    wrapped = (FIXTURES / "engine_stats/derived-wrapped-100-cols-issue14226.log").read_text()
    whole = ("INFO 03-05 18:46:58 loggers.py:78] Avg prompt throughput: 12.5 tokens/s, Avg "
             "generation throughput: 40.1 tokens/s, Running: 2 reqs, Waiting: 0 reqs, GPU KV "
             "cache usage: 0.9%, Prefix cache hit rate: 0.0%")
    note = tmp_path / "two-terminals.md"
    note.write_text(f"# wide terminal\n\n```\n{whole}\n```\n\n# narrow pane\n\n```\n{wrapped}```\n")
    ingest_into(tmp_path / "w.db", note)
    ingest_into(tmp_path / "alone.db", FIXTURES / "engine_stats/derived-wrapped-100-cols-issue14226.log")
    # The headings differ: compared without them (and without the lines, which moved).
    rows, alone = (content(tmp_path / db, drop=("section", "label", "line_start", "line_end"))
                   ["engine_stats"] for db in ("w.db", "alone.db"))
    prompt = rows[0]["prompt_throughput"]
    assert len(alone) >= 2 and len(rows) == 1 + len(alone)
    assert prompt == 12.5   # avg prompt throughput of the whole line
    assert rows[1:] == alone


@pytest.mark.parametrize("before", ["", "[Bug] ", "Server log: ", "> "])
def test_an_sglang_line_behind_a_typed_tag_with_a_remark_after_it(tmp_path, before):
    # An issue's title pasted as its first line: a tag typed before SGLang's dated prefix,
    # the writer's question after the figures.
    note = tmp_path / "note.md"
    note.write_text(f"{before}[2026-06-28 15:16:45] max_total_num_tokens=2086558, "
                    "chunked_prefill_size=8192, max_prefill_tokens=16384, "
                    "max_running_requests=33, context_len=256000, available_gpu_mem=17.22 GB"
                    "  means KV Cache Available total is 2M?\n", encoding="utf-8")
    ingest_into(tmp_path / "w.db", note)
    conn = sqlite3.connect(tmp_path / "w.db")
    assert conn.execute("SELECT kv_cache_tokens, max_num_seqs, max_model_len, "
                        "available_gpu_mem_gib, started_at FROM server_launches").fetchall() \
        == [(2086558, 33, 256000, 17.22, "2026-06-28 15:16:45")]


def test_a_remark_after_a_stats_line_costs_no_field(tmp_path):
    note = tmp_path / "note.md"
    note.write_text(
        "INFO 03-05 18:47:22 [loggers.py:116] Engine 000: Avg prompt throughput: 1480.0 "
        "tokens/s, Avg generation throughput: 1.1 tokens/s, Running: 4 reqs, Waiting: 0 reqs, "
        "GPU KV cache usage: 15.3%, Prefix cache hit rate: 42.0%   <-- stalls here\n",
        encoding="utf-8")
    ingest_into(tmp_path / "w.db", note)
    conn = sqlite3.connect(tmp_path / "w.db")
    assert conn.execute("SELECT gpu_kv_cache_usage_pct, prefix_cache_hit_rate_pct "
                        "FROM engine_stats").fetchall() == [(15.3, 42.0)]
    assert conn.execute("SELECT count(*) FROM unparsed_blocks").fetchone() == (0,)


SERVING_BLOCK = """\
============ Serving Benchmark Result ============
Successful requests:                     200
Benchmark duration (s):                  41.07
Request throughput (req/s):              4.87
---------------Time to First Token----------------
Mean TTFT (ms):                          88.41
P99 TTFT (ms):                           190.77
==================================================
"""


@pytest.mark.parametrize("blank,mark", [("\u00a0", ""), ("\u202f", ""), ("\u2009", ""),
                                        (" ", "\u200b"), (" ", "\ufeff")])
def test_a_page_s_typographic_blanks_and_zero_width_marks_are_what_a_terminal_printed(
        tmp_path, blank, mark):
    # Copied from a rendered page: its <pre> kept no-break spaces, or a zero-width mark stayed
    # at each line's start.
    note = tmp_path / "note.md"
    note.write_text("".join(mark + line.replace(" ", blank) + "\n"
                            for line in SERVING_BLOCK.splitlines()), encoding="utf-8")
    ingest_into(tmp_path / "w.db", note)
    conn = sqlite3.connect(tmp_path / "w.db")
    assert conn.execute("SELECT completed, duration, mean_ttft_ms, p99_ttft_ms "
                        "FROM serving_runs").fetchall() == [(200, 41.07, 88.41, 190.77)]
