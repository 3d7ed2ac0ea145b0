"""vLLM's latency benchmark (vllm_bench_latency) and SGLang's one-batch benchmarks
(sglang_one_batch_server, sglang_one_batch): what is a run, what it holds, and what is prose.
Own text throughout (fixtures/<format>/derived-*.txt|md hold the fuller shapes)."""

from __future__ import annotations

import pytest

from benchvault.ingest.parse import parse_file

LATENCY = ["Avg latency: 0.5123 seconds", "Std latency: 0.0041 seconds",
           "10% percentile latency: 0.5071 seconds", "25% percentile latency: 0.5094 seconds",
           "50% percentile latency: 0.5118 seconds", "75% percentile latency: 0.5150 seconds",
           "90% percentile latency: 0.5177 seconds", "99% percentile latency: 0.5230 seconds"]
SERVER_2024 = ["batch size: 16", "latency: 3.21 s", "output throughput: 637.45 token/s",
               "(input + output) throughput: 5737.02 token/s"]
ONE_BATCH = ["Prefill. latency: 0.03000 s, throughput:  30000.00 token/s",
             "Decode.  latency: 0.01230 s, throughput:   1300.81 token/s",
             "Decode.  median latency: 0.01230 s, median throughput:   1300.81 token/s",
             "Total. latency:  1.234 s, throughput:   2000.00 token/s"]


def read(tmp_path, text: str, name: str = "log.txt"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    items = list(parse_file(path))
    return ([i for i in items if hasattr(i, "row")],
            [(w.line, w.reason) for w in items if not hasattr(w, "row")])


def test_vllm_latency_block_is_one_run_with_its_percentiles(tmp_path):
    command = ("vllm bench latency --model m/x --batch-size 16 --input-len 256 "
               "--output-len 64 --num-iters 12")
    parsed, warnings = read(tmp_path, "\n".join(
        [f"$ {command}", "Bench iterations: 100%|██████████| 12/12 [00:06<00:00,  1.95it/s]",
         *LATENCY]) + "\n")
    assert warnings == []
    [run] = parsed
    row = run.row
    assert (row.format, row.engine, row.model, row.line_start, row.line_end) == (
        "vllm_bench_latency", "vllm", "m/x", 3, 10)
    assert row.mean_e2el_ms == 512.3 and row.std_e2el_ms == 4.1
    assert (row.median_e2el_ms, row.p90_e2el_ms, row.p99_e2el_ms) == (511.8, 517.7, 523.0)
    assert (row.max_concurrency, row.dataset_name, row.random_input_len,
            row.random_output_len) == (16, "random", 256, 64)
    assert row.extra == {"benchmark": "latency", "batch_size": 16, "input_len": 256,
                         "output_len": 64, "num_iters": 12}
    assert [(s.metric, s.stat, s.percentile, s.value_ms) for s in run.children] == [
        ("e2el", "mean", None, 512.3), ("e2el", "std", None, 4.1),
        ("e2el", "p10", 10.0, 507.1), ("e2el", "p25", 25.0, 509.4),
        ("e2el", "p50", 50.0, 511.8), ("e2el", "p75", 75.0, 515.0),
        ("e2el", "p90", 90.0, 517.7), ("e2el", "p99", 99.0, 523.0)]


def test_vllm_latency_garbled_value_costs_that_value(tmp_path):
    lines = list(LATENCY)
    lines[7] = "99% percentile latency: 0.5!30 seconds"
    parsed, warnings = read(tmp_path, "\n".join(lines) + "\n")
    [run] = parsed
    assert run.row.p99_e2el_ms is None and run.row.p90_e2el_ms == 517.7
    assert any(line == 8 and "0.5!30" in why for line, why in run.warnings)


@pytest.mark.parametrize("prose", [
    "The latency: 3 s was fine.",
    "Avg latency: 2 seconds felt slow to us.",
    "We saw latency: 3.21 s and output throughput: 600 token/s on a good day.",
    "batch size: 16",
    "batch size: 16, latency: 3 s",
    "Prefill. latency: was high",
    "Total. latency: 3 s overall",
])
def test_prose_that_names_a_label_is_no_run(tmp_path, prose):
    parsed, warnings = read(tmp_path, f"# Notes\n\n{prose}\n", "note.md")
    assert parsed == [] and warnings == []


def test_sglang_one_batch_server_2024_case(tmp_path):
    command = ("python3 -m sglang.bench_one_batch_server --model None --base-url "
               "http://localhost:30000 --batch-size 16 --input-len 300 --output-len 128 "
               "--skip-warmup")
    parsed, warnings = read(tmp_path, "\n".join([f"$ {command}", *SERVER_2024]) + "\n")
    assert warnings == []
    [run] = parsed
    row = run.row
    assert (row.format, row.engine, row.mean_e2el_ms, row.output_throughput,
            row.total_token_throughput, row.max_concurrency) == (
        "sglang_one_batch_server", "sglang", 3210.0, 637.45, 5737.02, 16)
    assert row.extra == {"benchmark": "one_batch_server", "batch_size": 16, "input_len": 300,
                         "output_len": 128}


def test_sglang_one_batch_server_unmarked_warmup_is_skipped(tmp_path):
    # 2024: the warmup case (16 x 1024 in, 16 out) printed first, as any other
    warmup = ["batch size: 16", "latency: 0.50 s", "output throughput: 512.00 token/s",
              "(input + output) throughput: 33280.00 token/s"]
    command = "python3 -m sglang.bench_one_batch_server --model m/x --batch-size 16"
    parsed, _ = read(tmp_path, "\n".join([f"$ {command}", *warmup, *SERVER_2024]) + "\n")
    assert [p.row.mean_e2el_ms for p in parsed] == [3210.0]


def test_sglang_one_batch_server_cut_after_batch_size_keeps_the_case(tmp_path):
    command = "python3 -m sglang.bench_one_batch_server --model m/x --batch-size 1 8"
    text = "\n".join([f"$ {command}", *SERVER_2024, "batch size: 8"]) + "\n"
    parsed, _ = read(tmp_path, text)
    assert [(p.row.max_concurrency, p.row.mean_e2el_ms) for p in parsed] == [
        (16, 3210.0), (8, None)]
    assert any("cut short" in why for _, why in parsed[1].warnings)


def test_sglang_one_batch_cases_after_warmup(tmp_path):
    command = ("python -m sglang.bench_one_batch --model-path m/x --batch-size 16 "
               "--input-len 1024 --output-len 8")
    text = "\n".join([f"$ {command}", "Warmup ...", *ONE_BATCH, "Benchmark ...",
                      *ONE_BATCH]) + "\n"
    parsed, warnings = read(tmp_path, text)
    assert warnings == []
    [run] = parsed
    row = run.row
    assert (row.format, row.engine, row.model, row.line_start, row.line_end) == (
        "sglang_one_batch", "sglang", "m/x", 8, 11)
    assert (row.mean_e2el_ms, row.total_token_throughput, row.output_throughput,
            row.max_concurrency, row.random_input_len, row.random_output_len) == (
        1234.0, 2000.0, None, 16, 1024, 8)
    assert row.extra == {"benchmark": "one_batch", "batch_size": 16, "input_len": 1024,
                         "output_len": 8, "prefill latency (s)": 0.03,
                         "prefill throughput (token/s)": 30000.0,
                         "median decode latency (s)": 0.0123,
                         "median decode throughput (token/s)": 1300.81}


def test_sglang_one_batch_cut_after_prefill_keeps_what_it_printed(tmp_path):
    parsed, _ = read(tmp_path, ONE_BATCH[0] + "\n")
    [run] = parsed
    assert run.row.mean_e2el_ms is None and run.row.extra["prefill latency (s)"] == 0.03
    assert any("cut short" in why for _, why in run.warnings)


def test_a_line_typed_inside_is_skipped_not_the_end(tmp_path):
    lines = list(LATENCY)
    lines.insert(3, "some unrelated text a user typed")
    parsed, warnings = read(tmp_path, "\n".join(lines) + "\n")
    [run] = parsed
    assert run.row.p99_e2el_ms == 523.0 and run.row.line_end == 9
    assert any(line == 4 for line, _ in warnings)
