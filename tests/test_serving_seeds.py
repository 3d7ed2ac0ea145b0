"""The four real notes in fixtures/seeds: every serving block found, with its values and context."""

from __future__ import annotations

import pytest

from conftest import SEEDS, ingest_into, rows, run_by


def test_seed_run_counts(seeds_db):
    counts = {r["name"]: r["runs"] for r in rows(seeds_db, "SELECT name, runs FROM sources")}
    assert counts == {
        "deepseek-v3_h100_tp-vs-pp_llamacpp.md": 11,
        "mi300x_llama70b_tp-pp_specdecode.md": 6,
        "multi-gpu_report_pp-vs-tp.md": 0,
        "strix-halo_vllm-vs-llamacpp.md": 11,
    }
    assert rows(seeds_db, "SELECT count(*) AS n FROM serving_runs")[0]["n"] == 28
    assert rows(seeds_db, "SELECT count(*) AS n FROM unparsed_blocks")[0]["n"] == 0


def test_deepseek_first_run(seeds_db):
    run = run_by(seeds_db, "deepseek", "r.line_start = (SELECT min(line_start) FROM serving_runs "
                                       "WHERE source_id = r.source_id)")
    assert run["max_concurrency"] == 64
    assert run["completed"] == 1024
    assert run["duration"] == 849.46
    assert run["mean_ttft_ms"] == 2639.01
    assert run["p99_itl_ms"] == 5306.83
    assert run["total_input_tokens"] == 229783
    assert run["total_token_throughput"] == 501.62
    assert run["section"] == "vLLM TP vs PP > PP=2 TP=8"
    assert run["engine"] == "vllm"
    assert run["backend"] == "openai-chat"
    assert run["endpoint"] == "/v1/chat/completions"
    assert run["host"] == "ip-10-1-21-143" and run["port"] == 8000
    assert run["dataset_name"] == "sharegpt" and run["num_prompts"] == 1024 and run["seed"] == 42
    assert run["request_rate"] == float("inf")
    assert run["namespace"]["percentile_metrics"] == "ttft,tpot,itl"
    assert "--max-concurrency 64" in run["command"]


def test_deepseek_wrapped_command_and_namespace(seeds_db):
    # The c=512 run's command and Namespace are hard-wrapped at the terminal width.
    run = run_by(seeds_db, "deepseek", "r.section LIKE '%PP=2 TP=8' AND r.max_concurrency = 512")
    assert "--max-concurrency 512 --seed 42" in run["command"]
    assert '--model "deepseek-ai/DeepSeek-V3" --dataset-name sharegpt' in run["command"]
    assert run["namespace"]["dataset_name"] == "sharegpt"
    assert run["namespace"]["tokenizer_mode"] == "auto"
    assert run["mean_ttft_ms"] == 101638.17


def test_deepseek_llamacpp_and_vllm_labels(seeds_db):
    llama = run_by(seeds_db, "deepseek", "r.label = 'llama.cpp'")
    assert llama["engine"] == "llama.cpp"
    assert llama["port"] == 8080 and llama["max_concurrency"] == 1
    assert llama["output_throughput"] == 22.24
    tp16 = run_by(seeds_db, "deepseek", "r.label = 'vLLM TP=16'")
    assert tp16["engine"] == "vllm"
    assert tp16["duration"] == 1826.67
    # No command or Namespace of its own: it must not borrow the previous run's.
    assert tp16["command"] is None and tp16["namespace"] is None


def test_deepseek_shell_loop_runs(seeds_db):
    loop = rows(seeds_db, "SELECT max_concurrency, duration, command FROM serving_runs "
                          "WHERE section = 'vLLM TP vs PP > TP16' ORDER BY line_start")
    assert [r["max_concurrency"] for r in loop] == [64, 128, 256, 512]
    assert [r["duration"] for r in loop] == [699.36, 406.81, 332.79, 324.76]
    assert all("for c in" not in r["command"] and "benchmark_serving.py" in r["command"]
               for r in loop)


def test_strix_halo_c8(seeds_db):
    run = run_by(seeds_db, "strix-halo", "r.label = 'c=8'")
    assert run["backend"] == "vllm"
    assert run["endpoint"] == "/v1/completions"
    assert run["max_concurrency"] == 8
    assert run["total_output_tokens"] == 11157
    assert run["engine"] == "vllm"
    assert run["model"] == "meta-llama/Llama-2-7b-chat-hf"
    assert run["section"] == "vLLM > Benchmarking > Raw Results"


def test_strix_halo_llamacpp_q8_c16(seeds_db):
    run = run_by(seeds_db, "strix-halo", "r.label = 'llama.cpp Q8_0 - c=16'")
    assert run["model"].endswith("llama-2-7b.Q8_0.gguf")
    assert run["engine"] == "llama.cpp"
    assert run["completed"] == 36
    assert run["output_throughput"] == 161.34
    assert run["max_concurrency"] == 16


def test_strix_halo_vllm_bench_serve_command(seeds_db):
    run = run_by(seeds_db, "strix-halo", "r.label = 'llama.cpp Q8_0 - c=1'")
    # The prompt decoration before it was mojibake (`ðŸŸ â¯`): the command is still found.
    assert run["command"].startswith("vllm bench serve --dataset-name sharegpt")
    assert run["namespace"]["dispatch_function"].startswith("<function BenchmarkServingSubcommand")
    assert run["duration"] == 237.27


def test_mi300x_tp2_pp4(seeds_db):
    run = run_by(seeds_db, "mi300x", "r.label = 'tp2 pp4'")
    assert run["duration"] == 393.36
    assert run["p99_itl_ms"] == 4034.65
    assert run["engine"] == "vllm"
    assert run["section"] == "MI300X > Results > tp2 + pp4"
    # No client command in its section: the model is the one its `vllm serve` launch served.
    assert run["model"] == "meta-llama/Llama-3.1-70B-Instruct"


def test_latency_stats_rows(seeds_db):
    run = run_by(seeds_db, "mi300x", "r.label = 'tp2 pp4'")
    stats = rows(seeds_db, "SELECT metric, stat, percentile, value_ms FROM latency_stats "
                           "WHERE run_id = ? ORDER BY id", (run["id"],))
    assert len(stats) == 9
    assert stats[0] == {"metric": "ttft", "stat": "mean", "percentile": None, "value_ms": 2011.53}
    assert stats[-1] == {"metric": "itl", "stat": "p99", "percentile": 99.0, "value_ms": 4034.65}


def test_reingest_adds_nothing(tmp_path):
    db = tmp_path / "w.db"
    first = ingest_into(db, SEEDS)
    assert sum(r.runs for r in first) == 28
    second = ingest_into(db, SEEDS)
    assert [r.status for r in second] == ["unchanged"] * 4
    assert rows(db, "SELECT count(*) AS n FROM serving_runs")[0]["n"] == 28
    assert rows(db, "SELECT count(*) AS n FROM sources")[0]["n"] == 4


def test_changed_file_replaces_its_rows(tmp_path):
    note = tmp_path / "note.md"
    text = (SEEDS / "mi300x_llama70b_tp-pp_specdecode.md").read_text()
    note.write_text(text)
    db = tmp_path / "w.db"
    ingest_into(db, note)
    cut = text[: text.index("## sd 1b")]
    note.write_text(cut)
    (result,) = ingest_into(db, note)
    assert result.status == "replaced"
    assert rows(db, "SELECT count(*) AS n FROM serving_runs")[0]["n"] == 3
    assert rows(db, "SELECT count(*) AS n FROM sources")[0]["n"] == 1
    orphans = rows(db, "SELECT count(*) AS n FROM latency_stats WHERE run_id NOT IN "
                       "(SELECT id FROM serving_runs)")
    assert orphans[0]["n"] == 0


@pytest.mark.parametrize("tag", [{"gpu": "MI300X"}])
def test_tags_on_every_row(tmp_path, tag):
    db = tmp_path / "w.db"
    ingest_into(db, SEEDS / "mi300x_llama70b_tp-pp_specdecode.md", tags=tag)
    tags = {r["tags"] for r in rows(db, "SELECT tags FROM serving_runs")}
    assert tags == {'{"gpu": "MI300X"}'}
