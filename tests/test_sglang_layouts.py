"""SGLang `bench_serving --output-file` in each version's layout, beside the printed result.

The JSON-lines file and the block printed for the same run are one run with two sightings and
one configuration; what SGLang measured (`concurrency`) never stands in for what was asked
(`max_concurrency`); the 2024 layout, which has neither request_throughput nor mean TTFT, is
read for what it has.
"""

from __future__ import annotations

import json

from conftest import FIXTURES, ingest_into, rows

JSONL = FIXTURES / "serving_result_json" / "derived-sglang-0.5-current.jsonl"
PRINTED = FIXTURES / "vllm_serving" / "derived-sglang-0.5-current-printed.txt"
LAYOUT_2024 = FIXTURES / "serving_result_json" / "derived-sglang-2024-layout.jsonl"


def test_printed_block_and_its_jsonl_line_are_one_run_and_one_configuration(tmp_path):
    db = tmp_path / "w.db"
    ingest_into(db, JSONL, PRINTED)
    runs = rows(db, "SELECT id, label, model, num_prompts, output_throughput, mean_ttft_ms, "
                    "sightings, config_id FROM serving_runs ORDER BY id")
    assert len(runs) == 2                     # two JSON lines; the printed block is the first
    first = runs[0]
    # The JSON's precision, the note's Namespace (num_prompts: the JSON does not write it).
    assert (first["label"], first["model"], first["num_prompts"]) == \
        ("qwen3-c64", "Qwen/Qwen3-8B", 320)
    assert first["output_throughput"] == 3394.029271130309
    assert first["mean_ttft_ms"] == 911.434012837708
    assert first["sightings"] == 2
    seen = rows(db, "SELECT format, line_start, is_primary FROM sightings WHERE run_id = ? "
                    "ORDER BY is_primary DESC", [first["id"]])
    assert [(s["format"], s["line_start"], s["is_primary"]) for s in seen] == [
        ("sglang_result_json", 1, 1), ("vllm_serving", 10, 0)]
    # The server_info the JSON carries gives the configuration its launch settings.
    configs = rows(db, "SELECT id, title, tensor_parallel_size, max_concurrency, input_len, "
                       "output_len, n FROM configurations ORDER BY max_concurrency")
    assert [(c["title"], c["tensor_parallel_size"], c["input_len"], c["output_len"], c["n"])
            for c in configs] == [("sglang · Qwen3-8B · TP2 · c=64", 2, 2048, 512, 1),
                                  ("sglang · Qwen3-8B · TP2 · c=128", 2, 2048, 512, 1)]
    assert first["config_id"] == configs[0]["id"]


def test_measured_concurrency_is_not_the_concurrency_asked_for(tmp_path):
    db = tmp_path / "w.db"
    ingest_into(db, JSONL)
    got = [(r["max_concurrency"], r["concurrency"]) for r in
           rows(db, "SELECT max_concurrency, concurrency FROM serving_runs ORDER BY id")]
    assert got == [(64, 62.86751233), (128, 121.30912788)]
    extra = json.loads(rows(db, "SELECT extra FROM serving_runs WHERE id = 1")[0]["extra"])
    assert extra["launch"] == {"tensor_parallel_size": 2, "data_parallel_size": 1,
                               "dtype": "auto", "kv_cache_dtype": "auto"}
    assert extra["server_info"]["version"] == "0.5.4"


def test_the_2024_layout_is_read_for_what_it_has(tmp_path):
    db = tmp_path / "w.db"
    ingest_into(db, LAYOUT_2024)
    runs = rows(db, "SELECT request_rate, request_throughput, mean_ttft_ms, median_ttft_ms, "
                    "median_itl_ms, mean_e2el_ms, output_throughput FROM serving_runs ORDER BY id")
    assert [r["request_rate"] for r in runs] == [4.0, 8.0]
    assert all(r["request_throughput"] is None and r["mean_ttft_ms"] is None for r in runs)
    assert [r["median_ttft_ms"] for r in runs] == [61.38312816619873, 88.10687065124512]
    assert runs[1]["mean_e2el_ms"] == 26338.51230144501
    stats = rows(db, "SELECT metric, stat FROM latency_stats WHERE run_id = 1 ORDER BY metric, stat")
    assert [(s["metric"], s["stat"]) for s in stats] == [
        ("e2el", "mean"), ("e2el", "median"), ("itl", "median"), ("ttft", "median")]
    configs = rows(db, "SELECT request_rate, input_len, output_len FROM configurations "
                       "ORDER BY request_rate")
    assert [(c["request_rate"], c["input_len"], c["output_len"]) for c in configs] == [
        (4.0, 1024, 1024), (8.0, 1024, 1024)]
