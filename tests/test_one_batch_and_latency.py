"""vLLM's latency benchmark (vllm_bench_latency) and SGLang's one-batch benchmarks
(sglang_one_batch_server, sglang_one_batch): what is a run, what it holds, and what is prose.
They are offline benchmarks: their rows are offline_runs (step lines offline_steps), never
serving runs.  Own text throughout (fixtures/<format>/derived-*.txt|md hold the fuller
shapes)."""

from __future__ import annotations

import pytest

from benchvault.ingest.parse import parse_file
from benchvault.schemas.offline import OfflineRun, OfflineStep
from conftest import ingest_into, rows

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
               "--output-len 64 --num-iters 12 --tensor-parallel-size 2 --dtype bfloat16")
    parsed, warnings = read(tmp_path, "\n".join(
        [f"$ {command}", "Bench iterations: 100%|██████████| 12/12 [00:06<00:00,  1.95it/s]",
         *LATENCY]) + "\n")
    assert warnings == []
    [run] = parsed
    row = run.row
    assert isinstance(row, OfflineRun) and run.children == []
    assert (row.format, row.engine, row.tool, row.phase, row.model, row.line_start,
            row.line_end) == ("vllm_bench_latency", "vllm", "vllm bench latency", "benchmark",
                              "m/x", 3, 10)
    assert (row.avg_latency, row.std_latency) == (0.5123, 0.0041)
    assert (row.p10_latency, row.p25_latency, row.p50_latency, row.p75_latency,
            row.p90_latency, row.p99_latency) == (0.5071, 0.5094, 0.5118, 0.515, 0.5177, 0.523)
    assert (row.batch_size, row.input_len, row.output_len, row.num_iters,
            row.tensor_parallel_size, row.dtype) == (16, 256, 64, 12, 2, "bfloat16")
    assert row.extra is None
    assert run.tolerance["avg_latency"] == pytest.approx(0.00005)


def test_vllm_latency_output_is_an_offline_row_and_no_serving_run(tmp_path):
    path = tmp_path / "latency.md"
    path.write_text("$ vllm bench latency --model m/x --batch-size 8\n"
                    + "\n".join(LATENCY) + "\n", encoding="utf-8")
    db = tmp_path / "w.db"
    ingest_into(db, path)
    assert rows(db, "SELECT COUNT(*) AS n FROM serving_runs") == [{"n": 0}]
    assert rows(db, "SELECT COUNT(*) AS n FROM latency_stats") == [{"n": 0}]
    assert rows(db, "SELECT batch_size, avg_latency, p50_latency, p99_latency, sightings "
                    "FROM offline_runs") == [{"batch_size": 8, "avg_latency": 0.5123,
                                              "p50_latency": 0.5118, "p99_latency": 0.523,
                                              "sightings": 1}]


def test_vllm_latency_garbled_value_costs_that_value(tmp_path):
    lines = list(LATENCY)
    lines[7] = "99% percentile latency: 0.5!30 seconds"
    parsed, warnings = read(tmp_path, "\n".join(lines) + "\n")
    [run] = parsed
    assert run.row.p99_latency is None and run.row.p90_latency == 0.5177
    assert any(line == 8 and "0.5!30" in why for line, why in run.warnings)


def test_a_sweep_typed_up_a_line_per_run_is_a_run_per_line_with_its_label(tmp_path):
    # What people type after a `for bs in ...` loop: each run's Avg latency line after its label
    command = "vllm bench latency --model m/x --input-len 256 --output-len 64"
    parsed, warnings = read(tmp_path, "\n".join(
        [f"$ {command}", "", "Batch size 1: Avg latency: 0.5123 seconds",
         "- bs=8: Avg latency: 0.9071 seconds",
         "**batch size 32, out=128**: Avg latency: 2.5118 seconds"]) + "\n", "note.md")
    assert warnings == []
    got = [(r.row.label, r.row.batch_size, r.row.input_len, r.row.output_len, r.row.avg_latency,
            r.row.model, r.row.line_start) for r in parsed]
    assert got == [("Batch size 1", 1, 256, 64, 0.5123, "m/x", 3),
                   ("bs=8", 8, 256, 64, 0.9071, "m/x", 4),
                   ("batch size 32, out=128", 32, 256, 128, 2.5118, "m/x", 5)]


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
    assert (row.format, row.engine, row.tool, row.phase, row.total_latency,
            row.output_throughput, row.overall_throughput, row.batch_size, row.input_len,
            row.output_len, row.base_url) == (
        "sglang_one_batch_server", "sglang", "sglang.bench_one_batch_server", "benchmark",
        3.21, 637.45, 5737.02, 16, 300, 128, "http://localhost:30000")
    assert row.extra is None


def test_sglang_one_batch_server_unmarked_warmup_is_a_warmup_row(tmp_path):
    # 2024: the warmup case (16 x 1024 in, 16 out) printed first, as any other
    warmup = ["batch size: 16", "latency: 0.50 s", "output throughput: 512.00 token/s",
              "(input + output) throughput: 33280.00 token/s"]
    command = "python3 -m sglang.bench_one_batch_server --model m/x --batch-size 16"
    parsed, _ = read(tmp_path, "\n".join([f"$ {command}", *warmup, *SERVER_2024]) + "\n")
    assert [(p.row.phase, p.row.total_latency) for p in parsed] == [
        ("warmup", 0.5), ("benchmark", 3.21)]


def test_sglang_one_batch_server_cut_after_batch_size_keeps_the_case(tmp_path):
    command = "python3 -m sglang.bench_one_batch_server --model m/x --batch-size 1 8"
    text = "\n".join([f"$ {command}", *SERVER_2024, "batch size: 8"]) + "\n"
    parsed, _ = read(tmp_path, text)
    assert [(p.row.batch_size, p.row.total_latency) for p in parsed] == [(16, 3.21), (8, None)]
    assert any("cut short" in why for _, why in parsed[1].warnings)


def test_sglang_one_batch_cases_after_warmup(tmp_path):
    command = ("python -m sglang.bench_one_batch --model-path m/x --batch-size 16 "
               "--input-len 1024 --output-len 8")
    text = "\n".join([f"$ {command}", "Warmup ...", *ONE_BATCH, "Benchmark ...",
                      *ONE_BATCH]) + "\n"
    parsed, warnings = read(tmp_path, text)
    assert warnings == []
    warm, run = parsed
    assert (warm.row.phase, warm.row.line_start, warm.row.batch_size, warm.row.output_len) \
        == ("warmup", 3, 16, None)
    row = run.row
    assert (row.format, row.engine, row.tool, row.phase, row.model, row.line_start,
            row.line_end) == ("sglang_one_batch", "sglang", "sglang.bench_one_batch",
                              "benchmark", "m/x", 8, 11)
    assert (row.prefill_latency, row.prefill_throughput, row.median_decode_latency,
            row.median_decode_throughput, row.total_latency, row.overall_throughput) == (
        0.03, 30000.0, 0.0123, 1300.81, 1.234, 2000.0)
    assert (row.batch_size, row.input_len, row.output_len, row.extra) == (16, 1024, 8, None)
    assert [(s.kind, s.step, s.latency_s, s.throughput) for s in run.children] == [
        ("prefill", None, 0.03, 30000.0), ("decode", 0, 0.0123, 1300.81),
        ("decode_median", None, 0.0123, 1300.81), ("total", None, 1.234, 2000.0)]


DECODE_STEPS = ["Prefill. latency: 0.85021 s, throughput:  38541.07 token/s",
                "Decode 0. Batch size: 32, latency: 0.02121 s, throughput:   1508.72 token/s",
                "Decode 1. Batch size: 32, latency: 0.02087 s, throughput:   1533.30 token/s",
                "Decode 2. Batch size: 32, latency: 0.02093 s, throughput:   1528.91 token/s",
                "Decode.  median latency: 0.02093 s, median throughput:   1528.91 token/s",
                "Total. latency:  1.164 s, throughput:  28591.07 token/s"]


def test_one_batch_warmup_and_benchmark_give_one_benchmark_row_and_no_serving_run(tmp_path):
    """`Decode N. Batch size: B` lines: every one a step row, the batch size the case's."""
    path = tmp_path / "one_batch.md"
    command = ("python -m sglang.bench_one_batch --model-path Qwen/Qwen2-7B-Instruct "
               "--batch-size 32 --input-len 1024 --output-len 16")
    path.write_text("\n".join([f"$ {command}", "Warmup ...", *DECODE_STEPS, "Benchmark ...",
                               *DECODE_STEPS]) + "\n", encoding="utf-8")
    db = tmp_path / "w.db"
    ingest_into(db, path)
    assert rows(db, "SELECT COUNT(*) AS n FROM serving_runs") == [{"n": 0}]
    assert rows(db, "SELECT phase, batch_size, input_len, output_len, prefill_throughput, "
                    "median_decode_throughput, config_id IS NOT NULL AS configured "
                    "FROM offline_runs WHERE phase = 'benchmark'") == [
        {"phase": "benchmark", "batch_size": 32, "input_len": 1024, "output_len": 16,
         "prefill_throughput": 38541.07, "median_decode_throughput": 1528.91,
         "configured": 1}]
    assert rows(db, "SELECT phase, output_len, config_id FROM offline_runs "
                    "WHERE phase = 'warmup'") == [
        {"phase": "warmup", "output_len": None, "config_id": None}]
    steps = rows(db, "SELECT s.kind, s.step, s.batch_size, s.latency_s FROM offline_steps s "
                     "JOIN offline_runs r ON r.id = s.offline_id WHERE r.phase = 'benchmark' "
                     "ORDER BY s.id")
    assert [(s["kind"], s["step"], s["batch_size"]) for s in steps] == [
        ("prefill", None, None), ("decode", 0, 32), ("decode", 1, 32), ("decode", 2, 32),
        ("decode_median", None, None), ("total", None, None)]
    assert [s["latency_s"] for s in steps] == [0.85021, 0.02121, 0.02087, 0.02093, 0.02093,
                                               1.164]


def test_one_batch_sweep_gives_a_row_per_case(tmp_path):
    command = ("python -m sglang.bench_one_batch --model-path m/x --batch-size 1 8 32 "
               "--input-len 512 --output-len 64")
    parsed, _ = read(tmp_path, "\n".join([f"$ {command}", "Benchmark ...", *ONE_BATCH,
                                          *ONE_BATCH, *ONE_BATCH]) + "\n")
    assert [(p.row.batch_size, p.row.input_len, p.row.output_len) for p in parsed] == [
        (1, 512, 64), (8, 512, 64), (32, 512, 64)]


def test_the_same_case_pasted_twice_is_one_row_and_repeats_aggregate(tmp_path):
    command = ("python -m sglang.bench_one_batch --model-path m/x --batch-size 16 "
               "--input-len 1024 --output-len 8")
    once = "\n".join([f"$ {command}", "Benchmark ...", *ONE_BATCH]) + "\n"
    (tmp_path / "a.md").write_text("# H100\n\n" + once, encoding="utf-8")
    (tmp_path / "b.md").write_text("# H100 again\n\n" + once, encoding="utf-8")
    repeat = once.replace("2000.00 token/s", "2100.00 token/s").replace("1.234 s", "1.175 s")
    (tmp_path / "c.md").write_text("# H100 repeat\n\n" + repeat, encoding="utf-8")
    db = tmp_path / "w.db"
    ingest_into(db, tmp_path / "a.md", tmp_path / "b.md", tmp_path / "c.md")
    assert rows(db, "SELECT sightings, overall_throughput FROM offline_runs ORDER BY id") == [
        {"sightings": 2, "overall_throughput": 2000.0},
        {"sightings": 1, "overall_throughput": 2100.0}]
    assert rows(db, "SELECT COUNT(*) AS n FROM offline_steps") == [{"n": 8}]
    [config] = rows(db, "SELECT n, overall_throughput, overall_throughput_min, "
                        "overall_throughput_max, batch_size, hardware "
                        "FROM offline_configurations")
    assert config == {"n": 2, "overall_throughput": 2050.0, "overall_throughput_min": 2000.0,
                      "overall_throughput_max": 2100.0, "batch_size": 16, "hardware": "H100"}
    assert rows(db, "SELECT title, configurations, runs FROM offline_groups") == [
        {"title": "x · H100 · 1024/8", "configurations": 1, "runs": 2}]


def test_sglang_one_batch_cut_after_prefill_keeps_what_it_printed(tmp_path):
    parsed, _ = read(tmp_path, ONE_BATCH[0] + "\n")
    [run] = parsed
    assert run.row.total_latency is None and run.row.prefill_latency == 0.03
    assert isinstance(run.children[0], OfflineStep)
    assert any("cut short" in why for _, why in run.warnings)


def test_a_line_typed_inside_is_skipped_not_the_end(tmp_path):
    lines = list(LATENCY)
    lines.insert(3, "some unrelated text a user typed")
    parsed, warnings = read(tmp_path, "\n".join(lines) + "\n")
    [run] = parsed
    assert run.row.p99_latency == 0.523 and run.row.line_end == 9
    assert any(line == 4 for line, _ in warnings)


PHASE_TABLE = ["", "### Decode (median)", "", "| Batch Size | Latency (ms) | Throughput (tok/s) |",
               "|---:|---:|---:|", "| 1 | 6.41 | 156.0 |", "| 8 | 7.02 | 1,139.6 |"]


def test_a_retyped_phase_table_after_the_command_is_one_batch_results(tmp_path):
    text = "\n".join(["python -m sglang.bench_one_batch --model-path m/x --batch-size 1 8 "
                      "--input-len 256 --output-len 32", *PHASE_TABLE]) + "\n"
    parsed, warnings = read(tmp_path, text, "notes.md")
    got = [(p.row.batch_size, p.row.median_decode_latency, p.row.median_decode_throughput,
            p.row.input_len, p.row.model) for p in parsed if isinstance(p.row, OfflineRun)]
    assert got == [(1, 0.00641, 156.0, 256, "m/x"), (8, 0.00702, 1139.6, 256, "m/x")]
    assert any("read as bench_one_batch results by its header words" in w for _, w in warnings)


@pytest.mark.parametrize("before", [
    [],                                                             # nothing shows the program
    ["python -m sglang.bench_one_batch --model-path m/x --batch-size 1 8", "",
     "| Batch size | Latency (s) |", "|---:|---:|", "| 1 | 0.84 |", "| 8 | 1.92 |"],
])
def test_a_batch_table_is_one_batch_results_only_where_the_note_shows_the_program(tmp_path,
                                                                                before):
    # (alone, a phase table is anyone's; a table of batch sizes and latencies names no phase)
    table = PHASE_TABLE if not before else []
    parsed, _ = read(tmp_path, "\n".join([*before, *table]) + "\n", "notes.md")
    assert not [p for p in parsed if isinstance(p.row, OfflineRun)]
