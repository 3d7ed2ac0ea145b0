"""Server launches, speculative-decoding rows and their links, read from the real seeds."""

from __future__ import annotations

import json

from conftest import ingest_into, rows


def _launches(db, source):
    return rows(db, "SELECT l.* FROM server_launches l JOIN sources s ON s.id = l.source_id "
                    "WHERE s.name LIKE ? ORDER BY l.line_start", (source + "%",))


def test_deepseek_launch_from_script_log(seeds_db):
    (launch,) = _launches(seeds_db, "deepseek")
    assert launch["version"] == "0.6.6.post2.dev5+g5ce4627a"
    assert (launch["tensor_parallel_size"], launch["pipeline_parallel_size"]) == (8, 2)
    assert launch["max_model_len"] == 8192
    assert (launch["gpu_blocks"], launch["cpu_blocks"]) == (2889, 528)
    assert (launch["max_concurrency_x"], launch["max_concurrency_tokens"]) == (5.64, 8192)
    # [2025-01-05 11:32:46] (the script) → INFO 01-05 12:04:53 (vLLM, no year)
    assert launch["started_at"] == "2025-01-05 11:32:46"
    assert launch["ready_at"] == "2025-01-05 12:04:53"
    assert launch["load_seconds"] == 1927
    # Two `Full vLLM command:` lines: the second (with -pp 2) is the one that ran.
    assert "--pipeline-parallel-size 2" in launch["command"]
    assert launch["args_from"] == "namespace"
    assert json.loads(launch["args"])["num_scheduler_steps"] == 20


def test_deepseek_runs_link_to_their_launch(seeds_db):
    (launch,) = _launches(seeds_db, "deepseek")
    linked = rows(seeds_db, "SELECT section, label, max_concurrency FROM serving_runs "
                            "WHERE launch_id = ? ORDER BY line_start", (launch["id"],))
    in_section = [r for r in linked if r["section"] == "vLLM TP vs PP > PP=2 TP=8"]
    assert [r["max_concurrency"] for r in in_section] == [64, 128, 256, 512]
    # Runs whose headings say TP16, or llama.cpp, ran against another server.
    unlinked = rows(seeds_db, "SELECT r.label FROM serving_runs r JOIN sources s "
                              "ON s.id = r.source_id WHERE s.name LIKE 'deepseek%' "
                              "AND r.launch_id IS NULL")
    assert {r["label"] for r in unlinked} == {"TP16", "llama.cpp", "vLLM TP=16"}


def test_mi300x_each_run_has_its_launch(seeds_db):
    got = rows(seeds_db, "SELECT l.tensor_parallel_size tp, l.pipeline_parallel_size pp, "
                         "l.speculative_model, l.num_speculative_tokens "
                         "FROM serving_runs r JOIN sources s ON s.id = r.source_id "
                         "JOIN server_launches l ON l.id = r.launch_id "
                         "WHERE s.name LIKE 'mi300x%' ORDER BY r.line_start")
    assert [(r["tp"], r["pp"] or 1) for r in got] == [(8, 1), (2, 4), (2, 1), (8, 1), (8, 1),
                                                       (8, 1)]
    assert [r["speculative_model"] for r in got] == [
        None, None, None, "meta-llama/Llama-3.2-1B-Instruct",
        "meta-llama/Llama-3.2-1B-Instruct", "meta-llama/Llama-3.1-8B-Instruct"]


def test_mi300x_spec_decode_rows_link_to_the_run_after_them(seeds_db):
    got = rows(seeds_db, "SELECT m.*, r.line_start AS run_line, l.num_speculative_tokens "
                         "AS launch_tokens FROM spec_decode_metrics m "
                         "JOIN sources s ON s.id = m.source_id "
                         "JOIN serving_runs r ON r.id = m.run_id "
                         "JOIN server_launches l ON l.id = m.launch_id "
                         "WHERE s.name LIKE 'mi300x%' ORDER BY m.line_start")
    metrics = [r for r in got if r["kind"] == "speculative_metrics"]
    assert [(r["draft_acceptance_rate"], r["system_efficiency"], r["num_speculative_tokens"],
             r["accepted_tokens"], r["draft_tokens"], r["emitted_tokens"]) for r in metrics] == [
        (0.797, 0.640, 5, 197711, 248165, 190541),
        (0.786, 0.443, 10, 311498, 396390, 193355),
        (0.871, 0.741, 5, 186291, 213925, 190301)]
    # Each line reports on the result block printed right after it.
    assert [r["run_line"] for r in metrics] == [122, 150, 183]
    # `# num_speculative_tokens 10`: the launch said 5, the engine reported 10; both kept.
    assert [(r["num_speculative_tokens"], r["launch_tokens"]) for r in metrics][1] == (10, 5)
    stages = [r for r in got if r["kind"] == "stage_times"]
    assert [(r["proposal_time_per_token_ms"], r["scoring_time_ms"], r["verification_time_ms"],
             r["run_line"]) for r in stages] == [(4.51, 32.27, 1.58, 150), (7.98, 36.46, 1.61, 183)]


def test_partial_and_unknown_lines_are_warnings(tmp_path):
    log = tmp_path / "server.log"
    log.write_text(
        "INFO 01-05 11:33:24 api_server.py:712] vLLM API server version 0.6.6\n"
        "INFO 01-05 11:33:24 api_server.py:713] args: Namespace(model='x', tensor_parallel_si\n"
        "\n"
        "INFO 01-05 12:04:53 metrics.py:1] Speculative metrics: Draft acceptance rate: oops\n"
        "INFO 01-05 12:04:53 metrics.py:2] Avg prompt throughput: 1.0 tokens/s, Running 3\n"
        "INFO 01-05 12:04:53 x.py:61] Maximum concurrency for 8192 tokens per request: 5.64x\n")
    (result,) = ingest_into(tmp_path / "w.db", log)
    assert result.status == "ingested"
    assert sorted(w.line for w in result.warnings) == [2, 4, 5]
    (launch,) = rows(tmp_path / "w.db", "SELECT * FROM server_launches")
    assert (launch["version"], launch["max_concurrency_x"]) == ("0.6.6", 5.64)


def test_a_second_banner_is_a_second_launch(tmp_path):
    log = tmp_path / "two.log"
    log.write_text(
        "INFO 01-05 11:00:00 api_server.py:712] vLLM API server version 0.6.6\n"
        "INFO 01-05 11:00:30 x.py:57] # GPU blocks: 100, # CPU blocks: 10\n"
        "INFO 01-05 12:00:00 api_server.py:712] vLLM API server version 0.6.6\n"
        "INFO 01-05 12:01:00 x.py:57] # GPU blocks: 200, # CPU blocks: 20\n")
    ingest_into(tmp_path / "w.db", log)
    got = rows(tmp_path / "w.db", "SELECT gpu_blocks, load_seconds FROM server_launches")
    assert [(r["gpu_blocks"], r["load_seconds"]) for r in got] == [(100, 30.0), (200, 60.0)]


def test_a_launch_pasted_without_its_command_takes_the_model_the_note_names(tmp_path):
    note = tmp_path / "note.md"
    note.write_text(
        "vLLM 0.6.6 on A100 80GB, meta-llama/Llama-3.1-8B-Instruct\n\n```\n"
        "INFO 01-10 10:00:00 model_runner.py:1094] Loading model weights took 14.9888 GB\n"
        "INFO 01-10 10:00:05 gpu_executor.py:76] # GPU blocks: 28062, # CPU blocks: 2048\n"
        "INFO 01-10 10:00:20 model_runner.py:1535] Graph capturing finished in 15 secs, took "
        "1.32 GiB\n```\n", encoding="utf-8")
    ingest_into(tmp_path / "s.db", note)
    assert rows(tmp_path / "s.db", "SELECT model, gpu_blocks, cuda_graph_capture_s "
                                   "FROM server_launches") == [
        {"model": "meta-llama/Llama-3.1-8B-Instruct", "gpu_blocks": 28062,
         "cuda_graph_capture_s": 15.0}]
