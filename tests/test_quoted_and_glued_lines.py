"""Three real input shapes: log lines quoted in backticks in a note's prose, progress dots glued
before a log record, SGLang's oldest `Total throughput (tok/s):` label."""

from __future__ import annotations

import pytest

from conftest import ingest_into, rows
from benchvault.parsers.vllm_serving import parse_block
from benchvault.reading.inlinecode import code_spans
from benchvault.reading.lines import clean_line

BRIEF_LINE = ("- vLLM printed `GPU KV cache size: 75,776 tokens` and `Maximum concurrency for "
              "16,384 tokens per request: 4.62x`, so c=8 fits.")


def ingest_text(tmp_path, name: str, text: str) -> dict[str, list[dict]]:
    path = tmp_path / name
    path.write_text(text)
    db = tmp_path / "t.db"
    ingest_into(db, path)
    return {table: rows(db, f"SELECT * FROM {table} ORDER BY rowid")
            for table in ("server_launches", "engine_stats", "unparsed_blocks")}


# -- 1. log lines quoted in inline code --------------------------------------------------------
def test_code_spans():
    assert code_spans(BRIEF_LINE) == ["GPU KV cache size: 75,776 tokens",
                                      "Maximum concurrency for 16,384 tokens per request: 4.62x"]
    assert code_spans("a ``x `y` z`` b `c`") == ["x `y` z", "c"]
    assert code_spans("no code here, a lone ` tick") == []


def test_prose_quoting_log_lines_reads_them_at_the_quoting_line(tmp_path):
    got = ingest_text(tmp_path, "note.md", f"# L40S\n\nSome prose first.\n{BRIEF_LINE}\n")
    [launch] = got["server_launches"]
    assert launch["kv_cache_tokens"] == 75776
    assert launch["max_concurrency_x"] == 4.62
    assert launch["max_concurrency_tokens"] == 16384
    assert (launch["line_start"], launch["line_end"]) == (4, 4)
    assert launch["label"] == "L40S"
    assert got["unparsed_blocks"] == []


def test_a_quoted_blocks_line_is_no_heading(tmp_path):
    got = ingest_text(tmp_path, "note.md",
                      "# V0 run\n\nThe executor said `# GPU blocks: 2889, # CPU blocks: 528`.\n")
    [launch] = got["server_launches"]
    assert (launch["gpu_blocks"], launch["cpu_blocks"]) == (2889, 528)
    assert launch["section"] == "V0 run"
    assert launch["line_start"] == 3


@pytest.mark.parametrize("text", [
    "- `Maximum concurrency` and `GPU KV cache size` are the figures to watch.\n",
    "- we passed `--gpu-memory-utilization 0.95` and `--max-model-len 16384`.\n",
    "| figure | printed |\n|---|---|\n| KV | `GPU KV cache size: 75,776 tokens` |\n",
])
def test_prose_naming_a_label_stays_prose(tmp_path, text):
    got = ingest_text(tmp_path, "note.md", "# Notes\n\n" + text)
    assert got["server_launches"] == []


def test_a_fenced_line_is_read_as_before(tmp_path):
    got = ingest_text(tmp_path, "note.md",
                      "# Run\n\n```\nINFO 01-05 12:04:53 executor_base.py:57] "
                      "# GPU blocks: 2889, # CPU blocks: 528\n```\n")
    [launch] = got["server_launches"]
    assert (launch["gpu_blocks"], launch["cpu_blocks"], launch["line_start"]) == (2889, 528, 4)


# -- 2. progress dots glued before a log record ------------------------------------------------
@pytest.mark.parametrize("raw, shown", [
    ("...INFO 05-02 10:11:12 [executor_base.py:110] # npu blocks: 466, # CPU blocks: 1820",
     "INFO 05-02 10:11:12 [executor_base.py:110] # npu blocks: 466, # CPU blocks: 1820"),
    (".INFO 05-02 10:11:12 x.py:1] y", "INFO 05-02 10:11:12 x.py:1] y"),
    ("....WARNING 05-02 10:11:20 x.py:1] y", "WARNING 05-02 10:11:20 x.py:1] y"),
    ("..(EngineCore_0 pid=3402) INFO 09-14 08:03:05 [a.py:1] b",
     "(EngineCore_0 pid=3402) INFO 09-14 08:03:05 [a.py:1] b"),
    ("vllm-1  | ...INFO 05-02 10:11:12 x.py:1] y", "INFO 05-02 10:11:12 x.py:1] y"),
    ("...and then it INFORMED us", "...and then it INFORMED us"),
    ("... INFO is what it printed", "... INFO is what it printed"),
    ("...INFORMATION", "...INFORMATION"),
])
def test_glued_dots_are_removed_before_a_record(raw, shown):
    assert clean_line(raw) == shown


def test_glued_dots_keep_the_block_counts(tmp_path):
    got = ingest_text(tmp_path, "capture.log",
                      "INFO 05-02 10:10:40 api_server.py:712] vLLM API server version 0.7.3\n"
                      "Compiling.....\n"
                      "...INFO 05-02 10:11:12 executor_base.py:110] "
                      "# npu blocks: 466, # CPU blocks: 1820\n"
                      ".INFO 05-02 10:11:12 executor_base.py:115] "
                      "Maximum concurrency for 4096 tokens per request: 14.56x\n")
    [launch] = got["server_launches"]
    assert (launch["gpu_blocks"], launch["cpu_blocks"], launch["kv_device"]) == (466, 1820, "npu")
    assert launch["max_concurrency_x"] == 14.56
    assert got["unparsed_blocks"] == []


# -- 3. SGLang's oldest result labels ----------------------------------------------------------
def test_sglang_total_throughput_label():
    block = ("============ Serving Benchmark Result ============\n"
             "Backend:                                 sglang    \n"
             "Output token throughput (tok/s):         1836.77   \n"
             "Total throughput (tok/s):                5510.31   \n"
             "==================================================\n")
    items = parse_block(block)
    fields = {payload[0]: payload[1] for kind, payload, _ in items if kind == "field"}
    assert fields["total_token_throughput"] == "5510.31"
    assert [payload for kind, payload, _ in items if kind == "other"] == []


# -- 4. an output kept as a JSON list of its lines --------------------------------------------
JSON_RECORD = """\
```
    "bench_serving_command": "python3 -m sglang.bench_serving --backend sglang --num-prompts 64",
    "benchmark_result": [
        "============ Serving Benchmark Result ============",
        "Backend:                                 sglang",
        "Successful requests:                     64",
        "Benchmark duration (s):                  12.75",
        "Total input tokens:                      32768",
        "Total generated tokens:                  16384",
        "Request throughput (req/s):              5.02",
        "Output token throughput (tok/s):         1285.02",
        "==================================================",
        "He said \\"done\\""
    ]
```
"""


def test_an_output_kept_as_json_strings_is_read_line_by_line(tmp_path):
    path = tmp_path / "record.md"
    path.write_text(JSON_RECORD)
    db = tmp_path / "t.db"
    ingest_into(db, path)
    assert rows(db, "SELECT backend, completed, duration, total_input_tokens, "
                    "output_throughput, line_start, line_end FROM serving_runs") == [
        {"backend": "sglang", "completed": 64, "duration": 12.75, "total_input_tokens": 32768,
         "output_throughput": 1285.02, "line_start": 4, "line_end": 12}]


# -- 5. benchmark_throughput.py's line after a writer's words ----------------------------------
def test_a_throughput_line_after_words_of_prose_is_read(tmp_path):
    path = tmp_path / "note.md"
    path.write_text("With the Triton kernels off\n"
                    "I got: Throughput: 7.77 requests/s, 3259.16 total tokens/s, "
                    "1569.15 output tokens/s\n")
    db = tmp_path / "t.db"
    ingest_into(db, path)
    assert rows(db, "SELECT tool, requests_per_second, tokens_per_second, "
                    "output_tokens_per_second FROM offline_runs") == [
        {"tool": "vllm bench throughput", "requests_per_second": 7.77,
         "tokens_per_second": 3259.16, "output_tokens_per_second": 1569.15}]


# -- 6. a script's echoed name above each run ---------------------------------------------------
def test_a_word_echoed_above_each_run_in_a_capture_names_it(tmp_path):
    block = ("============ Serving Benchmark Result ============\n"
             "Successful requests:                     200\n"
             "Benchmark duration (s):                  {d}\n"
             "Request throughput (req/s):              0.76\n"
             "==================================================\n")
    path = tmp_path / "note.md"
    path.write_text("```shell\nqps1\n" + block.format(d="262.49") + "\nqps4\n"
                    + block.format(d="134.10") + "max_total_num_tokens=412803\n"
                    + block.format(d="99.99") + "```\n")
    db = tmp_path / "t.db"
    ingest_into(db, path)
    assert rows(db, "SELECT label, duration FROM serving_runs ORDER BY line_start") == [
        {"label": "qps1", "duration": 262.49}, {"label": "qps4", "duration": 134.1},
        {"label": None, "duration": 99.99}]


# -- a result pasted as one code span over many lines; a heading after a block left open ------
RESULT = ["============ Serving Benchmark Result ============", "Backend:                 sglang",
          "Successful requests:     40", "Benchmark duration (s):  61.07",
          "Request throughput (req/s): 0.65", "Mean TTFT (ms):          812.33"]


def serving_runs(tmp_path, text: str) -> list[dict]:
    path = tmp_path / "note.md"
    path.write_text(text)
    db = tmp_path / "runs.db"
    ingest_into(db, path)
    return rows(db, "SELECT label, backend, duration, mean_ttft_ms FROM serving_runs ORDER BY rowid")


def test_a_result_pasted_as_one_code_span_over_many_lines(tmp_path):
    text = "Before the change:\n`" + "\n".join(RESULT) + "`\n\nThat is all.\n"
    [run] = serving_runs(tmp_path, text)
    assert (run["backend"], run["duration"], run["mean_ttft_ms"]) == ("sglang", 61.07, 812.33)


def test_a_heading_right_after_a_block_left_open_names_the_next_result(tmp_path):
    second = [line.replace("61.07", "55.90").replace("812.33", "640.05") for line in RESULT]
    text = "\n".join(["## Baseline", "", *RESULT, "", "## With chunked prefill", "", *second,
                      ""])
    got = serving_runs(tmp_path, text)
    assert [(r["label"], r["duration"]) for r in got] == [
        ("Baseline", 61.07), ("With chunked prefill", 55.9)]
