"""vLLM's benchmark clients before the result block (format vllm_client_summary): what is a
run, what is prose, and what it must leave to the other formats.  Own text throughout."""

from __future__ import annotations

import pytest

from benchvault.ingest.parse import parse_file
from benchvault.parsers.vllm_client_summary import FORMAT

RUN_2023 = ["Total time: 64.20 s", "Throughput: 3.12 requests/s", "Average latency: 27.44 s",
            "Average latency per token: 0.08 s", "Average latency per output token: 0.41 s"]


def read(tmp_path, text: str, name: str = "log.txt"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    items = list(parse_file(path))
    return ([i.row for i in items if hasattr(i, "row")],
            [(w.line, w.reason) for w in items if not hasattr(w, "row")])


def test_runs_printed_one_after_another_are_two_runs(tmp_path):
    second = [line.replace("64.20", "70.01").replace("3.12", "2.86") for line in RUN_2023]
    rows, warnings = read(tmp_path, "\n".join(RUN_2023 + second) + "\n")
    assert [(r.line_start, r.line_end, r.duration, r.request_throughput) for r in rows] == [
        (1, 5, 64.2, 3.12), (6, 10, 70.01, 2.86)]
    assert warnings == []


@pytest.mark.parametrize("prose", [
    "Total time: 5 s",
    "Total time: 12.5 s Throughput: fast enough",
    "Throughput: 3 requests/s was what the dashboard said.",
    "Benchmark duration: 40 s, then the node rebooted.",
    "Total time: 3 hours",
])
def test_prose_that_names_a_label_is_no_run(tmp_path, prose):
    rows, warnings = read(tmp_path, f"# Notes\n\n{prose}\n", "note.md")
    assert rows == [] and warnings == []


def test_a_value_that_is_not_a_number_costs_that_value(tmp_path):
    text = "\n".join([RUN_2023[0], "Throughput: n/a requests/s", *RUN_2023[2:]]) + "\n"
    rows, warnings = read(tmp_path, text)
    assert [(r.duration, r.request_throughput, r.extra["average_latency_s"]) for r in rows] \
        == [(64.2, None, 27.44)]
    assert warnings == [(2, "vllm_client_summary: Throughput: 'n/a' is not a number")]


def test_the_result_block_after_it_is_still_read_by_vllm_serving(tmp_path):
    block = ["============ Serving Benchmark Result ============",
             "Successful requests:                     200",
             "Benchmark duration (s):                  41.07",
             "Request throughput (req/s):              4.87",
             "==================================================", ""]
    rows, warnings = read(tmp_path, "\n".join(RUN_2023 + block))
    assert [(r.format, r.duration, r.completed) for r in rows] == [
        ("vllm_client_summary", 64.2, None), ("vllm_serving", 41.07, 200)]
    assert warnings == []


def test_the_padded_result_block_lines_are_not_its_preamble(tmp_path):
    """`Successful requests:` padded to 40 columns belongs to a later result block (cut here):
    it is no preamble of an early-2024 summary."""
    text = "Successful requests:                     200\nBenchmark duration: 12.345678 s\n" \
           "Request throughput: 16.20 requests/s\n"
    rows, _ = read(tmp_path, text)
    assert [(r.completed, r.duration, r.request_throughput) for r in rows] == [
        (None, 12.345678, 16.2)]


def test_every_start_line_holds_a_marker():
    for line in ("Total time: 64.20 s", "   Total time: 64.20 s",
                 "result: 1 GPU Total time: 98.36 s Throughput: 10.17 requests/s",
                 "Benchmark duration: 29.060651 s",
                 "Throughput: 16.90 requests/s, 4326.03 tokens/s",
                 "Throughput: 16.02 requests/s, 8202.24 total tokens/s, 4101.12 output tokens/s"):
        assert FORMAT.starts(line), line
    for line in ("Throughput: 5.99 requests/s", "Benchmark duration (s):                  849.46",
                 "Total time: 3 hours", "Request throughput (req/s):              9.67"):
        assert not FORMAT.starts(line), line
