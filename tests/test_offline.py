"""Offline benchmarks in their own home: the printed output and its saved JSON are one row,
`report offline` shows a table per group with its chart, and no serving report, comparison
or canned query ever meets an offline case."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from benchvault.browse.queries import canned_queries
from benchvault.reports.compare import compare
from benchvault.reports.render import build, make_reports
from benchvault.reports.report import ReportOptions
from benchvault.serve import read_schema
from conftest import FIXTURES, SEEDS, ingest_into, rows

OFFLINE = [FIXTURES / name for name in ("sglang_one_batch", "sglang_one_batch_server",
                                        "vllm_bench_latency", "sglang_offline_throughput",
                                        "offline_result_json")] + \
    [FIXTURES / "vllm_client_summary" / "derived-vllm-benchmark-throughput-three-shapes.md"]
OFFLINE_FORMATS = ("sglang_one_batch", "sglang_one_batch_server", "vllm_bench_latency",
                   "sglang_offline_throughput", "offline_result_json")


@pytest.fixture(scope="module")
def mixed_db(tmp_path_factory):
    """The seeds' serving runs and every offline fixture in one warehouse."""
    db = tmp_path_factory.mktemp("offline") / "w.db"
    ingest_into(db, SEEDS, *OFFLINE)
    return db


def test_offline_rows_never_land_in_serving_runs(mixed_db, tmp_path):
    seeds_only = tmp_path / "seeds.db"
    ingest_into(seeds_only, SEEDS)
    assert rows(mixed_db, "SELECT COUNT(*) AS n FROM serving_runs") == \
        rows(seeds_only, "SELECT COUNT(*) AS n FROM serving_runs")
    marks = ", ".join("?" * len(OFFLINE_FORMATS))
    assert rows(mixed_db, f"SELECT COUNT(*) AS n FROM serving_runs WHERE format IN ({marks})",
                OFFLINE_FORMATS) == [{"n": 0}]
    assert rows(mixed_db, "SELECT COUNT(*) AS n FROM serving_runs WHERE format = "
                          "'vllm_client_summary' AND command LIKE '%benchmark_throughput%'") \
        == [{"n": 0}]
    tools = {r["tool"] for r in rows(mixed_db, "SELECT DISTINCT tool FROM offline_runs")}
    assert tools == {"sglang.bench_one_batch", "sglang.bench_one_batch_server",
                     "vllm bench latency", "vllm bench throughput",
                     "sglang.bench_offline_throughput"}


@pytest.mark.parametrize("kind", ["sweep", "engines", "slo", "pareto", "trend"])
def test_serving_reports_never_show_an_offline_case(mixed_db, kind):
    options = ReportOptions(slos=["p99_ttft_ms<=100000"], metric="output_throughput",
                            over="date")
    for report in make_reports(mixed_db, kind, options):
        frame = report.frame
        if "format" in frame:
            assert not frame["format"].isin(OFFLINE_FORMATS).any(), report.title
        text = report.markdown_table + " ".join(report.notes)
        for word in ("bench_one_batch", "Qwen2-7B", "Meta-Llama-3-8B", "opt-125m"):
            assert word not in text, (kind, word)


def test_serving_canned_queries_never_list_an_offline_case(mixed_db):
    import sqlite3

    present = read_schema(mixed_db)
    queries = {q.name: sql for q, sql in canned_queries(present)}
    conn = sqlite3.connect(mixed_db)
    try:
        for name, params in (("concurrency_sweep", {"model": ""}),
                             ("engine_comparison", {"max_concurrency": ""})):
            cursor = conn.execute(queries[name], params)
            names = [d[0] for d in cursor.description]
            for row in cursor.fetchall():
                assert "Qwen2-7B" not in json.dumps(dict(zip(names, row)), default=str)
        cursor = conn.execute(queries["offline_sweep"], {"model": "Qwen2"})
        found = cursor.fetchall()
    finally:
        conn.close()
    assert len(found) == 3       # the Qwen2 fixture's three benchmark cases; its warm-up left out


def test_report_offline_a_table_per_group_and_a_chart(mixed_db, tmp_path):
    reports = make_reports(mixed_db, "offline")
    titles = [r.title for r in reports]
    assert "Offline sweep: qwen2-7b · L40S · 512/64" in titles
    sweep = next(r for r in reports if r.title.endswith("qwen2-7b · L40S · 512/64"))
    headers = [c.header for c in sweep.table.columns]
    assert headers[:5] == ["Batch", "Prefill tok/s", "Decode tok/s", "Total (s)", "Total tok/s"]
    assert [row[:4] for row in sweep.table.cells] == [
        ["1", "11549.74", "71.28", "0.928"], ["8", "18757.16", "495.36", "1.236"]]
    assert "Tool: sglang.bench_one_batch" in sweep.caption and "Input len: 512" in sweep.caption
    for report in reports:
        assert "warmup" not in set(report.frame.get("phase", pd.Series(dtype=object)))
    out = tmp_path / "report"
    text = build(mixed_db, ["offline"], ReportOptions(), out_dir=out)
    assert "## Offline sweep: qwen2-7b · L40S · 512/64" in text
    assert (out / "report-offline-qwen2-7b-l40s-512-64.png").stat().st_size > 0
    assert "report-offline-qwen2-7b-l40s-512-64.png" in text


def test_report_all_includes_the_offline_sweep(mixed_db):
    text = build(mixed_db, ["all"], ReportOptions())
    assert "## Offline sweep: qwen2-7b · L40S · 512/64" in text
    assert "## Concurrency sweep" in text


def test_compare_report_offline_pairs_offline_rows(mixed_db):
    result = compare(mixed_db, ["batch_size=1"], ["batch_size=8"], kind="offline",
                     where=["tool=sglang.bench_one_batch", "model=Qwen/Qwen2-7B-Instruct"])
    assert result.table is not None
    [row] = result.table.cells
    assert "71.28" in row and "495.36" in row


def _printed(case: dict) -> list[str]:
    """bench_one_batch's own lines for a case (its format strings)."""
    return [f"Prefill. latency: {case['prefill_latency']:6.5f} s, throughput: "
            f"{case['prefill_throughput']:9.2f} token/s",
            f"Decode.  median latency: {case['median_decode_latency']:6.5f} s, median "
            f"throughput: {case['median_decode_throughput']:9.2f} token/s",
            f"Total. latency: {case['total_latency']:6.3f} s, throughput: "
            f"{case['overall_throughput']:9.2f} token/s"]


def test_a_printed_case_and_its_result_jsonl_are_one_row(tmp_path):
    cases = []
    for size, prefill, decode, total in ((1, 0.0443312, 0.0140311, 0.9281234),
                                         (8, 0.2183712, 0.0161498, 1.2361187)):
        cases.append({"run_name": "default", "batch_size": size, "input_len": 512,
                      "output_len": 64, "prefill_latency": prefill,
                      "prefill_throughput": 512 * size / prefill,
                      "median_decode_latency": decode, "median_decode_throughput": size / decode,
                      "total_latency": total, "overall_throughput": 576 * size / total})
    command = ("python -m sglang.bench_one_batch --model-path Qwen/Qwen2-7B-Instruct "
               "--batch-size 1 8 --input-len 512 --output-len 64")
    note = tmp_path / "note.md"
    note.write_text("\n".join([f"$ {command}", "Benchmark ...",
                               *(line for c in cases for line in _printed(c))]) + "\n",
                    encoding="utf-8")
    saved = tmp_path / "result.jsonl"
    saved.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    db = tmp_path / "w.db"
    ingest_into(db, note, saved)
    found = rows(db, "SELECT batch_size, model, run_name, sightings, prefill_latency, format "
                     "FROM offline_runs ORDER BY id")
    # The JSON's full precision wins; the note gives the model, the JSON the run name.
    assert found == [
        {"batch_size": 1, "model": "Qwen/Qwen2-7B-Instruct", "run_name": "default",
         "sightings": 2, "prefill_latency": 0.0443312, "format": "offline_result_json"},
        {"batch_size": 8, "model": "Qwen/Qwen2-7B-Instruct", "run_name": "default",
         "sightings": 2, "prefill_latency": 0.2183712, "format": "offline_result_json"}]
    # The printed case's step lines stay with the row.
    assert rows(db, "SELECT COUNT(*) AS n FROM offline_steps") == [{"n": 6}]


def test_a_latency_json_pasted_in_a_note_takes_the_command_above_it(tmp_path):
    note = tmp_path / "note.md"
    note.write_text("# Llama-3.1-8B, H100\n\n"
                    "$ vllm bench latency --model meta-llama/Llama-3.1-8B-Instruct "
                    "--batch-size 8 --input-len 512 --output-len 128 --output-json out.json\n\n"
                    "```json\n"
                    '{"avg_latency": 1.25, "latencies": [1.2, 1.3], '
                    '"percentiles": {"10": 1.21, "25": 1.225, "50": 1.25, "75": 1.275, '
                    '"90": 1.29, "99": 1.299}}\n'
                    "```\n", encoding="utf-8")
    db = tmp_path / "w.db"
    ingest_into(db, note)
    assert rows(db, "SELECT tool, model, batch_size, input_len, output_len, avg_latency, "
                    "p50_latency, p99_latency, label FROM offline_runs") == [
        {"tool": "vllm bench latency", "model": "meta-llama/Llama-3.1-8B-Instruct",
         "batch_size": 8, "input_len": 512, "output_len": 128, "avg_latency": 1.25,
         "p50_latency": 1.25, "p99_latency": 1.299, "label": "Llama-3.1-8B, H100"}]
    assert rows(db, "SELECT COUNT(*) AS n FROM serving_runs") == [{"n": 0}]


def test_report_all_leaves_out_the_offline_sweep_of_a_serving_warehouse(tmp_path):
    db = tmp_path / "w.db"
    ingest_into(db, SEEDS)
    assert "Offline sweep" not in build(db, ["all"], ReportOptions())
    # asked for by name, it says why it is empty
    assert "no offline benchmark is in the warehouse" in build(db, ["offline"], ReportOptions())


def test_an_offline_result_with_no_command_takes_its_workload_from_the_note(tmp_path):
    note = tmp_path / "note.md"
    note.write_text(
        "vLLM latency benchmark (Llama-3.1-8B, H100, batch 8, input 128, output 256):\n\n"
        "Avg latency: 2.3456 seconds\n10% percentile latency: 2.3012 seconds\n"
        "50% percentile latency: 2.3441 seconds\n90% percentile latency: 2.3912 seconds\n"
        "99% percentile latency: 2.4123 seconds\n", encoding="utf-8")
    ingest_into(tmp_path / "o.db", note)
    assert rows(tmp_path / "o.db", "SELECT model, batch_size, input_len, output_len, "
                                   "avg_latency FROM offline_runs") == [
        {"model": "Llama-3.1-8B", "batch_size": 8, "input_len": 128, "output_len": 256,
         "avg_latency": 2.3456}]
