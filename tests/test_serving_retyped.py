"""Serving results retyped by hand as markdown tables (``serving_retyped``): each header's words
land in their serving_runs column; tables of other things stay published tables."""

from __future__ import annotations

import json

import pytest

from benchvault.parsers.serving_retyped import meaning

from conftest import ingest_into, rows


@pytest.mark.parametrize("header, column, factor", [
    ("TTFT p50 (ms)", "median_ttft_ms", 1.0),
    ("P99 TTFT", "p99_ttft_ms", 1.0),
    ("ttft_p99_ms", "p99_ttft_ms", 1.0),
    ("Mean TTFT (ms)", "mean_ttft_ms", 1.0),
    ("Mdn ITL", "median_itl_ms", 1.0),
    ("Avg TPOT (ms)", "mean_tpot_ms", 1.0),
    ("E2E Latency (s)", "mean_e2el_ms", 1000.0),
    ("P90 E2EL (ms)", "p90_e2el_ms", 1.0),
    ("Std TPOT", "std_tpot_ms", 1.0),
    ("Request throughput (req/s)", "request_throughput", 1.0),
    ("Req/s", "request_throughput", 1.0),
    ("RPS", "request_throughput", 1.0),
    ("Output token throughput (tok/s)", "output_throughput", 1.0),
    ("Output tok/s", "output_throughput", 1.0),
    ("Gen tok/s", "output_throughput", 1.0),
    ("Total token throughput (tok/s)", "total_token_throughput", 1.0),
    ("Total tok/s", "total_token_throughput", 1.0),
    ("Peak output token throughput (tok/s)", "max_output_tokens_per_s", 1.0),
    ("Successful requests", "completed", 1.0),
    ("Benchmark duration (s)", "duration", 1.0),
    ("Total input tokens", "total_input_tokens", 1.0),
    ("Total generated tokens", "total_output_tokens", 1.0),
    ("Concurrency", "max_concurrency", 1.0),
    ("Max concurrency", "max_concurrency", 1.0),
    ("Request rate", "request_rate", 1.0),
    ("Num prompts", "num_prompts", 1.0),
    ("N Req", "num_prompts", 1.0),
    ("ISL", "random_input_len", 1.0),
    ("Output len", "random_output_len", 1.0),
    ("Tok/s", "output_throughput", 1.0),     # vLLM's headline figure, the output tokens'
    ("Total Tput (tok/s)", "total_token_throughput", 1.0),
    ("Total Requests", "num_prompts", 1.0),
    ("Requests", "num_prompts", 1.0),
    ("max-concurrency", "max_concurrency", 1.0),      # the flag's name
    ("--num-prompts", "num_prompts", 1.0),
    ("MC", "max_concurrency", 1.0),
    ("Batch Size", "max_concurrency", 1.0),     # LLMPerf's and trtllm-bench's client batch
    ("Input", "random_input_len", 1.0),         # each request's, beside the run's figures
    ("Output", "random_output_len", 1.0),
    ("Measured requests", "num_prompts", 1.0),
    ("Per-token latency (ms)", "mean_tpot_ms", 1.0),     # a token's latency, not a request's
    ("Decode latency per token", "mean_tpot_ms", 1.0),
    ("Throughput (req/min)", "request_throughput", 1 / 60),
    ("Achieved Concurrency", "concurrency", 1.0),     # what the run reached, not its setting
    ("Total Time (sec)", "duration", 1.0),
    ("Elapsed (ms)", "duration", 0.001),
    ("Total time per request (s)", None, 1.0),          # a request's, not the run's
    ("Time/Token (ms)", "mean_tpot_ms", 1.0),
    ("Tokens/s (streaming)", "output_throughput", 1.0),  # a remark in brackets, no unit
    ("Mean TTFT<br>(s)", "mean_ttft_ms", 1000.0),       # the unit on a line of its own
    ("token生成速度TPOT", "mean_tpot_ms", 1.0),         # a term against the words around it
    ("请求耗时Latency", "mean_e2el_ms", 1.0),
    ("模型", "model", 1.0),
    ("📈 Throughput (tok/s, higher = better)", "output_throughput", 1.0),    # which way is better
    ("TPOT (ms, lower = faster)", "mean_tpot_ms", 1.0),
    ("TTFT ↓", "mean_ttft_ms", 1.0),
])
def test_header_words_name_their_column(header, column, factor):
    got = meaning(header)
    assert (got.column, got.factor) == (column, factor)


@pytest.mark.parametrize("header, name", [
    ("Tok/s / GPU", "tok_per_s_per_gpu"),  # one GPU's share: no run's whole throughput
    ("Normalized latency (ms/token)", "normalized_latency_ms_per_token"),   # latency / length
    ("Input tokens", "input_tokens"),  # a run's total, or each prompt's: the words do not say
    ("P99.9 ITL (ms)", "p99.9_itl_ms"),  # no column: kept in latency_stats
])
def test_headers_no_column_knows_keep_their_name(header, name):
    got = meaning(header)
    assert got.column is None and got.name == name


def test_other_tables_stay_published_and_guidellm_stays_guidellm(tmp_path):
    note = tmp_path / "note.md"
    note.write_text(
        "## Memory\n\n| GPU | Memory (GB) | Power (W) |\n|---|---|---|\n| H100 | 79.6 | 700 |\n\n"
        "## One latency only\n\n| Setup | TTFT (ms) | Notes |\n|---|---|---|\n"
        "| TP2 | 120.5 | warm |\n\n"
        "## GuideLLM\n\n| Benchmark | TTFT ms | | Output tok/s |\n|---|---|---|---|\n"
        "| | Mdn | p95 | Mean |\n| synchronous | 41.2 | 60.3 | 141.3 |\n")
    db = tmp_path / "n.db"
    ingest_into(db, note)
    assert [r["caption"] for r in rows(db, "SELECT caption FROM published_tables "
                                           "ORDER BY line_start")] == ["Memory", "One latency only"]
    assert rows(db, "SELECT format, label, median_ttft_ms, p95_ttft_ms FROM serving_runs") == [
        {"format": "guidellm_retyped", "label": "synchronous", "median_ttft_ms": 41.2,
         "p95_ttft_ms": 60.3}]


def test_a_run_says_it_was_read_by_its_header_words(tmp_path):
    note = tmp_path / "pr.md"
    note.write_text("| Metric | main | this PR |\n|---|---|---|\n"
                    "| Request throughput (req/s) | 11.72 | 12.90 |\n"
                    "| Mean TTFT (ms) | 120.4 | 101.2 |\n")
    db = tmp_path / "pr.db"
    ingest_into(db, note)
    assert rows(db, "SELECT label, request_throughput, mean_ttft_ms FROM serving_runs "
                    "ORDER BY rowid") == [
        {"label": "main", "request_throughput": 11.72, "mean_ttft_ms": 120.4},
        {"label": "this PR", "request_throughput": 12.9, "mean_ttft_ms": 101.2}]
    reasons = [r["reason"] for r in rows(db, "SELECT reason FROM unparsed_blocks")]
    assert len(reasons) == 2 and all("by its header words" in r for r in reasons)


def read_note(tmp_path, text: str, sql: str) -> list[dict]:
    """``sql``'s rows once a note holding ``text`` is ingested."""
    note = tmp_path / "note.md"
    note.write_text(text)
    db = tmp_path / "note.db"
    ingest_into(db, note)
    return rows(db, sql)


RUNS = "SELECT label, {} FROM serving_runs ORDER BY rowid"


def test_runs_named_in_the_metric_headers_are_a_run_each_per_row(tmp_path):
    text = ("| Rate | k8s TTFT mean (ms) | llm-d TTFT mean (ms) | k8s TTFT p90 (ms) "
            "| llm-d TTFT p90 (ms) |\n|---|---|---|---|---|\n"
            "| 3 | 629 | 213 | 1,014 | 243 |\n| 10 | 926 | 213 | 1,655 | 295 |\n")
    got = read_note(tmp_path, text, RUNS.format("request_rate, mean_ttft_ms, p90_ttft_ms"))
    assert [tuple(r.values()) for r in got] == [
        ("k8s", 3.0, 629.0, 1014.0), ("llm-d", 3.0, 213.0, 243.0),
        ("k8s", 10.0, 926.0, 1655.0), ("llm-d", 10.0, 213.0, 295.0)]


def test_a_cell_of_labelled_figures_one_a_line_is_a_run(tmp_path):
    text = ("| Case | baseline | Optimized |\n|---|---|---|\n"
            "| **ShareGPT** | Total TPS: 9743.28<br>Mean TPOT(ms): 48.57 | Total TPS: 10919.92 "
            "<span style=\"color:green;\">(+12.1%)</span><br/>Mean TPOT(ms): 43.25 |\n")
    got = read_note(tmp_path, text, RUNS.format("total_token_throughput, mean_tpot_ms"))
    assert [tuple(r.values()) for r in got] == [("ShareGPT baseline", 9743.28, 48.57),
                                                ("ShareGPT Optimized", 10919.92, 43.25)]


def test_a_table_without_outer_pipes_and_runs_named_by_several_words(tmp_path):
    # (GFM allows a table written without its outer pipes; one metric per run is enough when
    # the headers name the runs beside it)
    text = ("## Average Latency\n\nConcurrency | vLLM V0 Avg Lat(s) | vLLM V1 Avg Lat(s) "
            "| sglang Avg Lat(s) |\n---|---|---|---|\n5 | 16.98 | 15.75 | 15.00 |\n"
            "50 | 26.18 | 22.80 | 23.38 |\n\nThe engines are close.\n")
    got = read_note(tmp_path, text, RUNS.format("max_concurrency, mean_e2el_ms"))
    assert [tuple(r.values()) for r in got] == [
        ("vLLM V0", 5, 16980.0), ("vLLM V1", 5, 15750.0), ("sglang", 5, 15000.0),
        ("vLLM V0", 50, 26180.0), ("vLLM V1", 50, 22800.0), ("sglang", 50, 23380.0)]


def test_statistics_in_headers_are_no_run_names(tmp_path):
    text = ("| Concurrency | Mean TTFT (ms) | Median TTFT (ms) | P99 TTFT (ms) |\n"
            "|---|---|---|---|\n| 8 | 120.5 | 110.2 | 300.9 |\n")
    got = read_note(tmp_path, text, RUNS.format(
        "max_concurrency, mean_ttft_ms, median_ttft_ms, p99_ttft_ms"))
    assert [tuple(r.values()) for r in got] == [(None, 8, 120.5, 110.2, 300.9)]


SPLIT = ("## Average Latency\n\n| Concurrency | vLLM Avg Lat(s) | sglang Avg Lat(s) |\n"
         "|---|---|---|\n| 5 | 16.98 | 15.00 |\n| 50 | 26.18 | 23.38 |\n\n"
         "## Throughput\n\n| Concurrency | vLLM Gen. toks/s | sglang Gen. toks/s |\n"
         "|---|---|---|\n| 5 | 588.62 | 666.54 |\n| 50 | 2742.96 | 3077.68 |\n")


def test_a_comparison_split_over_tables_is_joined_run_by_run(tmp_path):
    got = read_note(tmp_path, SPLIT, RUNS.format(
        "max_concurrency, mean_e2el_ms, output_throughput, line_start, line_end"))
    assert [tuple(r.values()) for r in got] == [
        ("vLLM", 5, 16980.0, 588.62, 5, 12), ("sglang", 5, 15000.0, 666.54, 5, 12),
        ("vLLM", 50, 26180.0, 2742.96, 6, 13), ("sglang", 50, 23380.0, 3077.68, 6, 13)]
    joined = [r["reason"] for r in rows(tmp_path / "note.db", "SELECT reason FROM "
                                        "unparsed_blocks") if "by its place: joined" in r["reason"]]
    assert len(joined) == 4


@pytest.mark.parametrize("second", [
    # the same figure again: another experiment's table, not the rest of this one's
    "| Concurrency | vLLM Avg Lat(s) | sglang Avg Lat(s) |\n|---|---|---|\n| 5 | 17.50 | 15.10 |\n"
    "| 50 | 27.00 | 24.00 |\n",
    # other settings in the same places
    "| Concurrency | vLLM Gen. toks/s | sglang Gen. toks/s |\n|---|---|---|\n"
    "| 8 | 588.62 | 666.54 |\n| 64 | 2742.96 | 3077.68 |\n",
])
def test_tables_of_other_runs_are_not_joined(tmp_path, second):
    text = SPLIT.split("## Throughput")[0] + "## Again\n\n" + second
    assert len(read_note(tmp_path, text, "SELECT id FROM serving_runs")) == 8


def test_a_metric_table_of_one_row_joins_the_comparison_before_it(tmp_path):
    text = ("### Throughput\n\n| Metric | With DeepGEMM | Without DeepGEMM |\n|---|---|---|\n"
            "| **Output Token Throughput** | 288.31 tok/s | 566.84 tok/s |\n"
            "| **Request Throughput** | 0.30 req/s | 0.60 req/s |\n\n"
            "### TTFT\n\n| Metric | With DeepGEMM | Without DeepGEMM |\n|---|---|---|\n"
            "| **Mean TTFT** | 244.24 ms | 258.76 ms |\n")
    got = read_note(tmp_path, text, RUNS.format(
        "output_throughput, request_throughput, mean_ttft_ms"))
    assert [tuple(r.values()) for r in got] == [("With DeepGEMM", 288.31, 0.3, 244.24),
                                                ("Without DeepGEMM", 566.84, 0.6, 258.76)]


def test_conc_is_the_concurrency_setting(tmp_path):
    text = ("| Workload | Conc | Output tok/s | TTFT (mean) |\n|---|---|---|---|\n"
            "| Short ctx | 16 | 1320.8 | 343 ms |\n| Long ctx | 4 | 48.8 | 4.29 s |\n")
    assert read_note(tmp_path, text, RUNS.format("max_concurrency, output_throughput, "
                                                 "mean_ttft_ms")) == [
        {"label": "Short ctx", "max_concurrency": 16, "output_throughput": 1320.8,
         "mean_ttft_ms": 343.0},
        {"label": "Long ctx", "max_concurrency": 4, "output_throughput": 48.8,
         "mean_ttft_ms": 4290.0}]


def test_a_header_over_two_rows_names_each_groups_runs(tmp_path):
    text = ("| Concurrency | Req/s |  | Tok/s |  | TTFT (ms) |  |\n|---|---|---|---|---|---|---|\n"
            "| | **base** | **PR** | **base** | **PR** | **base** | **PR** |\n"
            "| 1 | 2.27 | 2.40 | 290.65 | 307.12 | 13.46 | 13.25 |\n"
            "| 8 | 17.49 | 18.40 | 2238.99 | 2355.56 | 21.52 | 23.42 |\n")
    got = read_note(tmp_path, text, RUNS.format(
        "max_concurrency, request_throughput, output_throughput, mean_ttft_ms"))
    assert [tuple(r.values()) for r in got] == [
        ("base", 1, 2.27, 290.65, 13.46), ("PR", 1, 2.4, 307.12, 13.25),
        ("base", 8, 17.49, 2238.99, 21.52), ("PR", 8, 18.4, 2355.56, 23.42)]


def test_cells_with_an_arrow_are_the_runs_before_and_after(tmp_path):
    text = ("| conc | req/s | out tok/s | TTFT p50 | ITL p99 |\n|---|---|---|---|---|\n"
            "| 2 | 0.05 -> 0.06 +20% | 52.7 -> 52.9 +0% | 9537 → 9514 | 310.09 -> 309.95 (-0%) |\n")
    got = read_note(tmp_path, text, RUNS.format(
        "max_concurrency, request_throughput, output_throughput, median_ttft_ms, p99_itl_ms"))
    assert [tuple(r.values()) for r in got] == [
        ("before", 2, 0.05, 52.7, 9537.0, 310.09), ("after", 2, 0.06, 52.9, 9514.0, 309.95)]


def test_a_bare_tok_s_column_gives_way_to_the_tables_output_column(tmp_path):
    text = ("| Setup | Tok/s | Output tok/s | Total tok/s (space-grouped) | TTFT (ms) |\n"
            "|---|---|---|---|---|\n| a | 999 | 500.5 | 336 827 | 12.5 |\n")
    got = read_note(tmp_path, text, RUNS.format(
        "output_throughput, total_token_throughput, mean_ttft_ms"))
    assert [tuple(r.values()) for r in got] == [("a", 500.5, 336827.0, 12.5)]


def test_a_table_in_a_diff_is_read_without_the_diffs_marks(tmp_path):
    # (a changed row was measured before and after: both are runs)
    text = ("recipes/README.md\n```diff\n--- a/README.md\n+++ b/README.md\n@@ -1,4 +1,5 @@\n"
            "+## Measured\n+\n+| Recipe | Concurrency | TTFT p50 (ms) | Output tok/s |\n+|---|---|---|---|\n"
            "-| agg | 4 | 3100 | 250 |\n+| agg | 4 | 2900 | 258 |\n"
            " | disagg | 16 | 32000 | 173 |\n```\n")
    got = read_note(tmp_path, text, RUNS.format("max_concurrency, median_ttft_ms, output_throughput"))
    assert [tuple(r.values()) for r in got] == [("agg", 4, 3100.0, 250.0), ("agg", 4, 2900.0, 258.0),
                                                ("disagg", 16, 32000.0, 173.0)]


def test_figures_written_together_under_an_a_slash_b_header(tmp_path):
    text = ("| Setup | TTFT mean/p99 (ms) | TTFT/TPOT median (ms) | mean accept |\n|---|---|---|---|\n"
            "| eagle | 120.5 / 301.2 | 85 / 12.1 | 3.42 |\n")
    got = read_note(tmp_path, text, RUNS.format(
        "mean_ttft_ms, p99_ttft_ms, median_ttft_ms, median_tpot_ms, accept_length"))
    assert [tuple(r.values()) for r in got] == [("eagle", 120.5, 301.2, 85.0, 12.1, 3.42)]


@pytest.mark.parametrize("header, column, factor", [
    ("并发数", "max_concurrency", 1.0),
    ("吞吐量 (tokens/s)", "output_throughput", 1.0),
    ("平均首token延迟(ms)", "mean_ttft_ms", 1.0),
    ("TTFT平均(ms)", "mean_ttft_ms", 1.0),        # (no word boundary between TTFT and 平均)
    ("P99首字延迟(毫秒)", "p99_ttft_ms", 1.0),
    ("端到端延迟 (s)", "mean_e2el_ms", 1000.0),
    ("TPOT中位数(ms)", "median_tpot_ms", 1.0),
    ("同時実行数", "max_concurrency", 1.0),
])
def test_chinese_and_japanese_headers_name_their_column(header, column, factor):
    got = meaning(header)
    assert (got.column, got.factor) == (column, factor)


def test_a_chinese_metric_table_compares_its_runs(tmp_path):
    text = ("| 指标 | 基线 | 优化后 |\n|---|---|---|\n| 平均TTFT(ms) | 120.5 | 101.2 |\n"
            "| 输出吞吐 (tok/s) | 1500.1 | 1720.4 |\n")
    got = read_note(tmp_path, text, RUNS.format("mean_ttft_ms, output_throughput"))
    assert [tuple(r.values()) for r in got] == [("基线", 120.5, 1500.1), ("优化后", 101.2, 1720.4)]


def test_a_sweep_of_one_measured_figure_is_a_table_of_runs(tmp_path):
    text = ("| Concurrency | Output tok/s |\n|---|---|\n| 1 | 60.1 |\n| 8 | 420.5 |\n\n"
            "| Setup | Output tok/s |\n|---|---|\n| a | 61.1 |\n")
    got = read_note(tmp_path, text, RUNS.format("max_concurrency, output_throughput"))
    assert [tuple(r.values()) for r in got] == [(None, 1, 60.1), (None, 8, 420.5)]


@pytest.mark.parametrize("fold", ["<details><summary>Results</summary>", "**Results**"])
def test_a_workload_in_the_heading_holds_under_a_label_of_its_own(tmp_path, fold):
    text = (f"### Throughput (Long Prompts, Concurrency=32)\n\n{fold}\n\n"
            "| Model | Throughput (tok/s) | Winner |\n|---|---|---|\n"
            "| GPT-OSS-120B | 4,076 | yes |\n| GPT-OSS-20B | 3,605 | no |\n")
    got = read_note(tmp_path, text, RUNS.format("model, max_concurrency, output_throughput"))
    assert [tuple(r.values()) for r in got] == [
        ("Results", "GPT-OSS-120B", 32, 4076.0), ("Results", "GPT-OSS-20B", 32, 3605.0)]


def test_lengths_written_together_under_isl_osl_and_mc_for_concurrency(tmp_path):
    text = ("| ISL/OSL | MC | out tok/s base | out tok/s tuned | out Δ |\n|---|---|---|---|---|\n"
            "| 1000/100 | 4 | 248.6 | 235.3 | -5.4% |\n| 1000/100 | 64 | 1453.8 | 1571.7 | +8.1% |\n")
    got = read_note(tmp_path, text, RUNS.format(
        "random_input_len, random_output_len, max_concurrency, output_throughput"))
    assert [tuple(r.values()) for r in got] == [
        ("base", 1000, 100, 4, 248.6), ("tuned", 1000, 100, 4, 235.3),
        ("base", 1000, 100, 64, 1453.8), ("tuned", 1000, 100, 64, 1571.7)]


def test_a_groups_lengths_written_with_blanks(tmp_path):
    text = ("| scenario | metric | stock | tuned |\n|---|---|---|---|\n"
            "| in2048 / out512 | output tok/s | 700.5 | 810.2 |\n| | median TTFT (ms) | 1500.1 | 1210.4 |\n")
    got = read_note(tmp_path, text, RUNS.format(
        "random_input_len, random_output_len, output_throughput, median_ttft_ms"))
    assert [tuple(r.values()) for r in got] == [
        ("stock", 2048, 512, 700.5, 1500.1), ("tuned", 2048, 512, 810.2, 1210.4)]


@pytest.mark.parametrize("setup, concurrency", [("## Workload and controls", 8), ("## Why", None)])
def test_a_setup_sections_prose_holds_for_the_results_beside_it(tmp_path, setup, concurrency):
    text = (f"{setup}\n\n- Qwen3-14B BF16\n- concurrency 8, 64 prompts\n\n## Median observations\n\n"
            "| Arm | Output tok/s | TTFT p99 (ms) |\n|---|---:|---:|\n"
            "| clean | 59.920 | 520.259 |\n| packed | 59.088 | 515.872 |\n")
    got = read_note(tmp_path, text, RUNS.format("model, max_concurrency, output_throughput"))
    model = "Qwen3-14B" if concurrency else None
    assert [tuple(r.values()) for r in got] == [
        ("clean", model, concurrency, 59.92), ("packed", model, concurrency, 59.088)]


def test_a_label_over_a_fold_names_its_table_before_the_folds_title(tmp_path):
    text = ("Throughput (tok/s, output):\n\n<details><summary>Results</summary>\n\n"
            "| Concurrency | Baseline | Fused | Delta |\n|---|---|---|---|\n"
            "| 1 | 71.6 | 80.7 | +12.7% |\n| 2 | 125.7 | 129.2 | +2.8% |\n\n</details>\n")
    got = read_note(tmp_path, text, RUNS.format("max_concurrency, output_throughput"))
    assert [tuple(r.values()) for r in got] == [
        ("Baseline", 1, 71.6), ("Fused", 1, 80.7), ("Baseline", 2, 125.7), ("Fused", 2, 129.2)]


def test_a_throughput_column_whose_cells_say_their_rate(tmp_path):
    text = ("| Setup | TTFT (s) | Throughput |\n|---|---|---|\n"
            "| baseline | 1.2 | 850 tok/s |\n| spec decode | 1.1 | 1300 tok/s |\n")
    got = read_note(tmp_path, text, RUNS.format("mean_ttft_ms, output_throughput"))
    assert [tuple(r.values()) for r in got] == [("baseline", 1200.0, 850.0),
                                                ("spec decode", 1100.0, 1300.0)]


def test_thousands_written_k_and_lengths_written_k_left_empty(tmp_path):
    text = ("| ISL (tokens) | Concurrency | Output tok/s | TTFT (ms) |\n|---|---|---|---|\n"
            "| 8k | 16 | 1.2k | 250 |\n| 1024 | 32 | 2,400 | 300 |\n")
    got = read_note(tmp_path, text, RUNS.format("random_input_len, max_concurrency, output_throughput"))
    assert [tuple(r.values()) for r in got] == [(None, None, 16, 1200.0), (None, 1024, 32, 2400.0)]


def test_statistics_as_rows_under_metric_headers_are_one_run(tmp_path):
    text = ("| Percentile | TTFT (ms) | TPOT (ms) | E2E (s) |\n|---|---|---|---|\n"
            "| P50 | 120 | 12.1 | 3.2 |\n| P99 | 250 | 20.2 | 5.5 |\n| Mean | 130 | 12.5 | 3.4 |\n")
    got = read_note(tmp_path, text, RUNS.format(
        "mean_ttft_ms, median_ttft_ms, p99_ttft_ms, median_tpot_ms, p99_e2el_ms"))
    assert [tuple(r.values()) for r in got] == [(None, 130.0, 120.0, 250.0, 12.1, 5500.0)]


def test_metric_rows_with_a_setting_row_need_one_measured_row(tmp_path):
    text = ("| | Baseline | PR |\n|---|---|---|\n| Concurrency | 16 | 16 |\n"
            "| Output tok/s | 1000.5 | 1100.5 |\n")
    got = read_note(tmp_path, text, RUNS.format("max_concurrency, output_throughput"))
    assert [tuple(r.values()) for r in got] == [("Baseline", 16, 1000.5), ("PR", 16, 1100.5)]


def test_metric_rows_in_groups_are_a_run_per_group_and_column(tmp_path):
    text = ("| cell | metric | vLLM 0.27 | PegaInfer |\n| --- | --- | --- | --- |\n"
            "| bs1 @1024/256 | TPOT | 8.21 | **8.16** |\n| | TTFT | 198.3 | **78** |\n"
            "| qps16 | TPOT | **24.06** | 29.71 |\n| | output tok/s | **1394** | 1293 |\n")
    got = read_note(tmp_path, text, RUNS.format(
        "max_concurrency, request_rate, random_input_len, random_output_len, mean_tpot_ms, "
        "mean_ttft_ms, output_throughput"))
    assert [tuple(r.values()) for r in got] == [
        ("vLLM 0.27", 1, None, 1024, 256, 8.21, 198.3, None),
        ("PegaInfer", 1, None, 1024, 256, 8.16, 78.0, None),
        ("vLLM 0.27", None, 16.0, None, None, 24.06, None, 1394.0),
        ("PegaInfer", None, 16.0, None, None, 29.71, None, 1293.0)]


def test_a_row_label_that_merely_holds_a_metric_word_makes_no_metric_rows(tmp_path):
    text = ("| Strategy | TP x EP | Concurrency | TTFT (ms) | TPOT (ms) | Throughput (tok/s) |\n"
            "|---|---|---|---|---|---|\n| Low-latency | 2x2 | 1 | 210 | 14.94 | 65 |\n"
            "| Low-latency | 2x2 | 16 | 167 | 31.80 | 486 |\n| Balanced | 4x4 | 64 | 419 | 42.48 | 1403 |\n")
    got = read_note(tmp_path, text, RUNS.format("max_concurrency, mean_ttft_ms, output_throughput"))
    assert [tuple(r.values()) for r in got] == [
        ("Low-latency", 1, 210.0, 65.0), ("Low-latency", 16, 167.0, 486.0),
        ("Balanced", 64, 419.0, 1403.0)]


@pytest.mark.parametrize("header_a, header_b", [
    ("mean_tpot_ms__triton", "mean_tpot_ms__gluon"),      # (`__` inside a word: no emphasis)
    ("mean_tpot (triton) [ms]", "mean_tpot (gluon) [ms]"),
])
def test_a_runs_name_after_its_metric(tmp_path, header_a, header_b):
    text = (f"| concurrency | {header_a} | {header_b} | tpot_uplift_pct |\n|---|---|---|---|\n"
            "| 1 | 4.08 | 3.45 | 15.44 |\n")
    got = read_note(tmp_path, text, RUNS.format("max_concurrency, mean_tpot_ms"))
    assert [tuple(r.values()) for r in got] == [("triton", 1, 4.08), ("gluon", 1, 3.45)]


def test_a_garbled_setting_cell_is_a_warning_not_a_runs_name(tmp_path):
    text = ("| Concurrency | Output tok/s |\n|---|---|\n| ! | 529.33 |\n| 16 | 871.02 |\n"
            "| Concurrency 64 | 900.5 |\n")
    got = read_note(tmp_path, text, RUNS.format("max_concurrency, output_throughput"))
    assert [tuple(r.values()) for r in got] == [
        (None, None, 529.33), (None, 16, 871.02), ("Concurrency 64", 64, 900.5)]
    reasons = [r["reason"] for r in rows(tmp_path / "note.db", "SELECT reason FROM unparsed_blocks")]
    assert any("'!' is not a number" in r for r in reasons)


def test_one_figure_is_enough_when_the_heading_states_the_workload(tmp_path):
    text = ("### Output speed (long prompts, concurrency=48)\n\n"
            "| Model | Throughput (tok/s) | Place |\n|---|---|---|\n"
            "| Mistral-Small-24B | 3,911 | 🥇 |\n| Phi-4-14B | 2,870 | 🥈 |\n\n"
            "### Models\n\n| Model | Throughput (tok/s) |\n|---|---|\n| Gemma-3-4B | 1,204 |\n")
    got = read_note(tmp_path, text, RUNS.format("model, max_concurrency, output_throughput"))
    assert [tuple(r.values())[1:] for r in got] == [
        ("Mistral-Small-24B", 48, 3911.0), ("Phi-4-14B", 48, 2870.0)]
    # (a medal under an unknown header is a word, not a garbled number)
    reasons = [r["reason"] for r in rows(tmp_path / "note.db", "SELECT reason FROM unparsed_blocks")]
    assert not any("is not a number" in r for r in reasons)


def test_a_success_count_out_of_all_and_the_rate_the_prose_states(tmp_path):
    text = ("Runs at `--request-rate 2`, 12 prompts, on Gemma-3-27B-it:\n\n"
            "| input len | success | duration (s) | Time/output token (ms) | mean TTFT (ms) |\n"
            "|---|---|---|---|---|\n| 256 | 12 / 12 | 40.10 | 31.25 | 402.7 |\n"
            "| 4096 | 11 / 12 | 95.30 | 44.80 | 1210.4 |\n")
    got = read_note(tmp_path, text, RUNS.format(
        "model, request_rate, num_prompts, random_input_len, completed, mean_tpot_ms, mean_ttft_ms"))
    assert [tuple(r.values())[1:] for r in got] == [
        ("Gemma-3-27B-it", 2.0, 12, 256, 12, 31.25, 402.7),
        ("Gemma-3-27B-it", 2.0, 12, 4096, 11, 44.8, 1210.4)]


@pytest.mark.parametrize("prose, model", [
    ("## Numbers for Qwen3-14B-Instruct on one L40S", "Qwen3-14B-Instruct"),
    ("served gpt-oss-20b, then the same with", "gpt-oss-20b"),
    ("Qwen3-14B-Q4_K_M.gguf through llama-server", None),      # (a file's name)
    ("Qwen3-14B against Llama-3.1-8B", None),                  # (two models: neither)
    ("meta-llama/Llama-3.1-8B-Instruct, as Llama-3.1-8B", "meta-llama/Llama-3.1-8B-Instruct"),
])
def test_a_model_the_prose_names_without_its_organisation(tmp_path, prose, model):
    text = (f"{prose}\n\n| Concurrency | TTFT (ms) | TPOT (ms) |\n|---|---|---|\n"
            "| 4 | 88.1 | 12.7 |\n")
    got = read_note(tmp_path, text, RUNS.format("model"))
    assert [r["model"] for r in got] == [model]


def test_arrow_cells_with_a_unit_after_both_and_runs_named_by_the_header(tmp_path):
    text = ("| conc | tok/s/user (eager → graphs) | mean TTFT (eager → graphs) |\n|---|---|---|\n"
            "| 8 | 41.2 → 44.0 | 1.21 → 1.05 s |\n| 32 | 30.5 → 33.9 | 2210 → 1980 ms |\n")
    got = read_note(tmp_path, text, RUNS.format("max_concurrency, mean_ttft_ms, extra"))
    assert [(r["label"], r["max_concurrency"], r["mean_ttft_ms"], json.loads(r["extra"]))
            for r in got] == [
        ("eager", 8, 1210.0, {"tok_per_s_per_user": 41.2}),
        ("graphs", 8, 1050.0, {"tok_per_s_per_user": 44.0}),
        ("eager", 32, 2210.0, {"tok_per_s_per_user": 30.5}),
        ("graphs", 32, 1980.0, {"tok_per_s_per_user": 33.9})]


def test_runs_named_by_an_arrow_after_the_metric_and_one_figure_named_over_a_sweep(tmp_path):
    text = ("| dataset | tok/s OFF -> ON | Δtok/s | median TPOT ms |\n|---|---|---|---|\n"
            "| sharegpt | 2210 -> 2480 | +12.2% | 19.80 -> 17.95 |\n| **mean** | | +12.2% | |\n")
    got = read_note(tmp_path, text, RUNS.format("output_throughput, median_tpot_ms"))
    assert [tuple(r.values()) for r in got] == [("OFF", 2210.0, 19.8), ("ON", 2480.0, 17.95)]
    text = ("Throughput (tok/s, output):\n\n| Concurrency | main | PR | Delta |\n|---|---|---|---|\n"
            "| 4 | 101.5 | 110.2 | +8.6% |\n| 64 (saturated) | ~980 | ~1010 | +3% |\n")
    got = read_note(tmp_path, text, RUNS.format("max_concurrency, output_throughput"))
    assert [tuple(r.values()) for r in got] == [
        ("main", 4, 101.5), ("PR", 4, 110.2), ("main", 64, 980.0), ("PR", 64, 1010.0)]


def test_a_dataset_column_and_the_requests_per_run_the_prose_states(tmp_path):
    text = ("Each arm ran 300 requests per run.\n\n| dataset | tok/s OFF -> ON | median TPOT ms |\n"
            "|---|---|---|\n| sharegpt | 2210 -> 2480 | 19.80 -> 17.95 |\n")
    got = read_note(tmp_path, text, RUNS.format("dataset_name, num_prompts, output_throughput"))
    assert [tuple(r.values()) for r in got] == [("OFF", "sharegpt", 300, 2210.0),
                                                ("ON", "sharegpt", 300, 2480.0)]


def test_columns_named_by_a_sweeps_setting_under_the_figure_their_heading_names(tmp_path):
    # (a table per figure, joined run by run; the first column a setting of every run)
    text = ("### Output Token Throughput (tok/s)\n| GPU Quantity | 1 Concurrency | c=8 |\n"
            "|---|---|---|\n| 4 | 28.7 | 162.3 |\n\n### Mean Time to First Token (ms)\n"
            "| GPU Quantity | 1 Concurrency | c=8 |\n|---|---|---|\n| 4 | 63 | 190.1 |\n")
    got = read_note(tmp_path, text, RUNS.format("max_concurrency, output_throughput, "
                                                "mean_ttft_ms, extra"))
    assert [tuple(r.values()) for r in got] == [
        ("1 Concurrency", 1, 28.7, 63.0, '{"gpu_quantity": 4.0}'),
        ("c=8", 8, 162.3, 190.1, '{"gpu_quantity": 4.0}')]


def test_a_backend_column_names_each_runs_engine(tmp_path):
    text = ("| Concurrency | Backend | Avg Latency (sec) | Total Time (sec) | Tokens/sec |\n"
            "|---|---|---|---|---|\n| 80 | vLLM | 1.3634 | 1.5618 | 2547.06 |\n"
            "| 80 | TensorRT-LLM | 1.5410 | 1.6711 | 2543.24 |\n")
    got = read_note(tmp_path, text, RUNS.format("engine, max_concurrency, duration, "
                                                "mean_e2el_ms, output_throughput"))
    assert [tuple(r.values())[1:] for r in got] == [
        ("vllm", 80, 1.5618, 1363.4, 2547.06), ("tensorrt-llm", 80, 1.6711, 1541.0, 2543.24)]


def test_a_printed_pandas_frame_of_result_keys_is_read_without_its_index(tmp_path):
    text = ("```\n   max_concurrency  mean_ttft_ms  mean_tpot_ms  output_throughput\n"
            "0                1         21.43          6.12             161.87\n"
            "1               16         48.90          8.75            1790.52\n```\n")
    got = read_note(tmp_path, text, RUNS.format("max_concurrency, mean_ttft_ms, mean_tpot_ms, "
                                                "output_throughput"))
    assert [tuple(r.values())[1:] for r in got] == [(1, 21.43, 6.12, 161.87),
                                                    (16, 48.9, 8.75, 1790.52)]


@pytest.mark.parametrize("second", ["| | (ms) | (s) | tok/s |", "| | ms | s | tok/s |"])
def test_a_row_of_units_under_the_header(tmp_path, second):
    text = (f"| Concurrency | Mean TTFT | Mean E2E | Output |\n|---|---|---|---|\n{second}\n"
            "| 1 | 21.4 | 1.5 | 161.8 |\n| 16 | 48.9 | 2.25 | 1790.5 |\n")
    got = read_note(tmp_path, text, RUNS.format("max_concurrency, mean_ttft_ms, mean_e2el_ms, "
                                                "output_throughput"))
    assert [tuple(r.values())[1:] for r in got] == [(1, 21.4, 1500.0, 161.8),
                                                    (16, 48.9, 2250.0, 1790.5)]


def test_a_header_repeating_a_name_over_a_row_that_names_each_column(tmp_path):
    text = ("| Concurrency | Output tok/s | Output tok/s |\n|---|---|---|\n| | main | PR |\n"
            "| 1 | 161.8 | 170.2 |\n| 16 | 1790.5 | 1850.0 |\n")
    got = read_note(tmp_path, text, RUNS.format("max_concurrency, output_throughput"))
    assert [tuple(r.values()) for r in got] == [
        ("main", 1, 161.8), ("PR", 1, 170.2), ("main", 16, 1790.5), ("PR", 16, 1850.0)]


def test_a_column_of_notes_beside_the_runs_of_a_sweep_is_no_run(tmp_path):
    text = ("### Mean TTFT (ms)\n| Model | c=1 | c=16 | Notes |\n|---|---|---|---|\n"
            "| Qwen3-8B | 21.4 | 48.9 | thermal limited |\n")
    got = read_note(tmp_path, text, RUNS.format("max_concurrency, mean_ttft_ms"))
    assert [tuple(r.values()) for r in got] == [("c=1", 1, 21.4), ("c=16", 16, 48.9)]


@pytest.mark.parametrize("ttft, e2e, said", [
    ("0.066/0.1403", "22.474/77.7903", False),      # under 1: seconds, said in a warning
    ("66/140.3", "22474/77790.3", False),            # milliseconds, as a bare TTFT is
    ("0.066 s/0.1403 s", "22.474 s/77.7903 s", True),   # the cells say it
])
def test_latencies_without_a_unit_under_one_are_seconds(tmp_path, ttft, e2e, said):
    text = ("model | conc | TTFT(AVG/P99) | Latency (AVG/P99)\n-- | -- | -- | --\n"
            f"llama-8b | 4 | {ttft} | {e2e}\n")
    got = read_note(tmp_path, text, RUNS.format("model, max_concurrency, mean_ttft_ms, "
                                                "p99_ttft_ms, mean_e2el_ms, p99_e2el_ms"))
    assert [tuple(r.values())[1:] for r in got] == [
        ("llama-8b", 4, 66.0, 140.3, 22474.0, 77790.3)]
    reasons = [r["reason"] for r in rows(tmp_path / "note.db", "SELECT reason FROM unparsed_blocks")]
    assert any("read as seconds" in r for r in reasons) == (ttft.startswith("0.") and not said)


def test_the_figure_a_heading_names_over_models_as_rows_and_gpus_as_columns(tmp_path):
    text = ("## Headline Comparison — TPOT (ms, lower = faster)\n\n| Model | H100 | H200 |\n"
            "|---|---|---|\n| 1.5B | 3.1 ms | **2.1 ms** |\n| 32B | 16.8 ms (AWQ) | 17.9 ms (BF16) |\n")
    got = read_note(tmp_path, text, RUNS.format("model, mean_tpot_ms"))
    assert [tuple(r.values()) for r in got] == [
        ("H100", "1.5B", 3.1), ("H200", "1.5B", 2.1), ("H100", "32B", 16.8), ("H200", "32B", 17.9)]


def test_a_unit_said_for_some_latencies_holds_for_those_that_say_none(tmp_path):
    text = ("branch   rate     median TTFT (ms)   std TTFT     p99 TTFT     std TPOT     p99 TPOT\n"
            "------   ----     ----------------   --------     --------     --------     --------\n"
            "MAIN     1.00     141.95             29.83        287.21       0.84         11.67\n"
            "PR       1.00     137.69             28.51        277.24       0.84         11.40\n")
    got = read_note(tmp_path, f"```\n{text}```\n", RUNS.format(
        "median_ttft_ms, std_ttft_ms, p99_ttft_ms, std_tpot_ms, p99_tpot_ms"))
    assert [tuple(r.values())[1:] for r in got] == [(141.95, 29.83, 287.21, 0.84, 11.67),
                                                    (137.69, 28.51, 277.24, 0.84, 11.4)]



def test_one_serving_figure_over_two_runs_compares_them(tmp_path):
    note = tmp_path / "note.md"
    note.write_text(
        "SGLang, Kimi-K2 on 4x GB300, TP4\n\n"
        "| SGLang source | Prefill CUDA graph | Output throughput |\n| --- | --- | ---: |\n"
        "| `b94ac87` (parent) | disabled | 184.53 tok/s |\n"
        "| `7da30f4` (merge) | `tc_piecewise` | 177.71 tok/s |\n", encoding="utf-8")
    db = tmp_path / "n.db"
    ingest_into(db, note)
    assert rows(db, "SELECT engine, label, output_throughput FROM serving_runs "
                    "ORDER BY line_start") == [
        {"engine": "sglang", "label": "b94ac87 (parent)", "output_throughput": 184.53},
        {"engine": "sglang", "label": "7da30f4 (merge)", "output_throughput": 177.71}]


def test_a_concurrency_column_over_statistics_header_rows_is_each_runs_setting(tmp_path):
    note = tmp_path / "note.md"
    note.write_text(
        "vLLM 0.10.1, Llama-3.1-8B, H100\n\n"
        "| Concurrency | TTFT (ms) | | | TPOT (ms) | |\n|---|---|---|---|---|---|\n"
        "| | p50 | p90 | p99 | p50 | p99 |\n| 8 | 45.2 | 60.1 | 88.4 | 7.1 | 9.3 |\n"
        "| 32 | 98.7 | 140.2 | 210.5 | 10.2 | 14.8 |\n", encoding="utf-8")
    db = tmp_path / "n.db"
    ingest_into(db, note)
    assert rows(db, "SELECT max_concurrency, p50_ttft_ms, p99_ttft_ms, p99_tpot_ms "
                    "FROM serving_runs ORDER BY line_start") == [
        {"max_concurrency": 8, "p50_ttft_ms": 45.2, "p99_ttft_ms": 88.4, "p99_tpot_ms": 9.3},
        {"max_concurrency": 32, "p50_ttft_ms": 98.7, "p99_ttft_ms": 210.5, "p99_tpot_ms": 14.8}]


def test_a_saved_result_cut_down_to_its_figures_is_still_the_result(tmp_path):
    note = tmp_path / "note.md"
    note.write_text(
        "From the saved JSON (vLLM 0.11.0, Qwen3-8B):\n\n```json\n{\n  \"completed\": 500,\n"
        "  \"request_throughput\": 12.34,\n  \"output_throughput\": 2345.6,\n"
        "  \"mean_ttft_ms\": 123.4,\n  \"p99_ttft_ms\": 456.7\n}\n```\n", encoding="utf-8")
    db = tmp_path / "n.db"
    ingest_into(db, note)
    assert rows(db, "SELECT completed, request_throughput, mean_ttft_ms, p99_ttft_ms "
                    "FROM serving_runs") == [
        {"completed": 500, "request_throughput": 12.34, "mean_ttft_ms": 123.4,
         "p99_ttft_ms": 456.7}]


def test_a_paragraph_wrapped_in_the_source_states_its_workload_whole(tmp_path):
    """Markdown joins a paragraph's lines: `100` at one line's end and `prompts` at the next's
    start are `100 prompts`; `random dataset` names the dataset."""
    text = ("## Throughput\n\n`vllm bench serve`, random dataset, 1024 input / 256 output "
            "tokens, 100\nprompts, max-concurrency 16, seed 0.\n\n"
            "| Config | req/s | output tok/s | mean TTFT (ms) |\n|---|---|---|---|\n"
            "| fp16 | 1.224 | 313.5 | 597.9 |\n| fp8 | 1.162 | 297.4 | 665.6 |\n")
    got = read_note(tmp_path, text, RUNS.format(
        "dataset_name, random_input_len, random_output_len, num_prompts, max_concurrency, "
        "mean_ttft_ms"))
    assert [tuple(r.values()) for r in got] == [
        ("fp16", "random", 1024, 256, 100, 16, 597.9),
        ("fp8", "random", 1024, 256, 100, 16, 665.6)]


def test_a_rate_under_a_latency_header_is_no_latency(tmp_path):
    """`1000/tpot` over `14tok/s`: the rate a TPOT makes is not a TPOT in milliseconds."""
    text = ("| engine | ttft | 1000/tpot |\n|---|---|---|\n| vllm | 1.3s | 14tok/s |\n"
            "| mindIE | 2.9s | 20tok/s |\n")
    got = read_note(tmp_path, text, RUNS.format("mean_ttft_ms, mean_tpot_ms"))
    assert [tuple(r.values()) for r in got] == [("vllm", 1300.0, None), ("mindIE", 2900.0, None)]
