"""GuideLLM's console report read into the same rows as its benchmarks.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import FIXTURES, ingest_into, rows

from benchvault.parsers.guidellm_console import header_keys, parse_report

CONSOLE = FIXTURES / "guidellm_console"
JSON = FIXTURES / "guidellm_report" / "derived-guidellm-0.2-sweep.json"


def test_console_and_json_of_one_run_are_one_run_each(tmp_path):
    db = tmp_path / "w.db"
    ingest_into(db, JSON)
    ingest_into(db, CONSOLE / "derived-guidellm-0.2-sweep-same-run-as-json.txt")
    runs = rows(db, "SELECT label, model, max_concurrency, completed, sightings, mean_ttft_ms "
                    "FROM serving_runs ORDER BY id")
    # Both benchmarks seen twice: the printed table agrees with the JSON at its precision.
    assert [(r["label"], r["max_concurrency"], r["completed"], r["sightings"]) for r in runs] == \
        [("synchronous", 1, 26, 2), ("concurrent@16", 16, 282, 2)]
    assert runs[0]["mean_ttft_ms"] == 48.31        # the JSON's precision wins
    formats = {r["format"] for r in rows(db, "SELECT format FROM sightings")}
    assert formats == {"guidellm_report", "guidellm_console"}


def test_console_run_has_the_json_configuration(tmp_path):
    columns = "label, model, backend, max_concurrency, request_rate, completed, failed"
    got = {}
    for name, path in (("json", JSON),
                       ("console", CONSOLE / "derived-guidellm-0.2-sweep-same-run-as-json.txt")):
        db = tmp_path / f"{name}.db"
        ingest_into(db, path)
        got[name] = rows(db, f"SELECT {columns} FROM serving_runs ORDER BY id")
    assert got["json"] == got["console"]


def test_header_spans_fill_their_columns():
    # 0.4+: a group name then a zero-width cell per further column; a cell of spaces is empty
    keys = header_keys([[" Benchmark ", " TTFT ", "", " ITL "],
                        [" Strategy  ", " ms ", "", " ms "],
                        ["           ", " Mdn ", " p95 ", " Mdn "]])
    assert keys == [("Benchmark", "Strategy"), ("TTFT", "ms", "Mdn"), ("TTFT", "ms", "p95"),
                    ("ITL", "ms", "Mdn")]


def test_prose_between_tables_is_read_past():
    text = ("Benchmarks Stats:\n=====\nMetadata | Request Stats\n Benchmark| Per Second\n"
            "----------|-----------\nsynchronous|       0.45\n=====\n"
            "Saved to benchmarks.json\n")
    sections = parse_report(text)
    assert [s[0] for s in sections] == ["table"]
    headers, values = sections[0][3][0]
    assert values[0][1] == ["synchronous", "       0.45"]


# --- every version's layout, and what a paste does to it -------------------------------------

RESULTS = ("label, model, max_concurrency, request_rate, completed, failed, duration, "
           "total_input_tokens, total_output_tokens, request_throughput, concurrency, "
           "input_throughput, output_throughput, total_token_throughput, mean_ttft_ms, "
           "median_ttft_ms, p95_ttft_ms, p99_ttft_ms, std_ttft_ms, mean_e2el_ms, median_e2el_ms, "
           "p95_e2el_ms, p99_e2el_ms, std_e2el_ms, median_itl_ms, p95_itl_ms, median_tpot_ms, "
           "p95_tpot_ms, extra")
LATENCY_TABLE = """\
ℹ Request Latency Statistics (Completed Requests)
|=============|=============|======|======|======|
| Benchmark   | Request Latency    || TTFT        ||
| Strategy    | {unit1:<19}|| {unit2:<12}||
|             | Mean        | p95  | Mean | p95  |
|-------------|-------------|------|------|------|
| synchronous | {a:<11} | 0.5  | 21.0 | 24.0 |
| concurrent  | 0.9 ± 0.011 | 1.1  | 60.2 | 91.5 |
|=============|=============|======|======|======|
"""


def _ingest_text(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    db = tmp_path / (name + ".db")
    ingest_into(db, path)
    return db


def _results(db) -> list[dict]:
    return rows(db, f"SELECT {RESULTS} FROM serving_runs ORDER BY id")


def _warnings(db) -> list[tuple[int, str]]:
    return [(r["line"], r["reason"]) for r in rows(db, "SELECT line, reason FROM unparsed_blocks "
                                                       "ORDER BY line")]


def test_mean_std_cells_keep_the_mean_and_the_std(tmp_path):
    db = tmp_path / "w.db"
    ingest_into(db, CONSOLE / "derived-guidellm-current-mean-std-cells.md")
    stats = {(r["metric"], r["stat"]): r["value_ms"] for r in rows(
        db, "SELECT metric, stat, value_ms FROM latency_stats WHERE run_id = 1")}
    # `0.4 ± 0.004` under Request Latency / Sec / Mean: the mean and its margin (GuideLLM
    # 0.8's `_format_mean_with_margin`: half its confidence interval), no std
    assert stats[("e2el", "mean")] == 400.0 and ("e2el", "std") not in stats
    assert stats[("ttfot", "mean")] == 22.7 and ("ttfot", "std") not in stats
    assert ("tpot", "std") not in stats            # a plain cell has no std
    extra = json.loads(rows(db, "SELECT extra FROM serving_runs WHERE id = 1")[0]["extra"])
    assert extra["e2el_mean_ci_margin_ms"] == 4.0 and extra["ttfot_mean_ci_margin_ms"] == 1.3
    assert extra["requests_per_second_std"] == 0.1          # under `Mean ± Std`: a std
    assert extra["text_input_tokens_per_second_mean"] == 639.8
    assert extra["text_input_tokens_per_second_mean_ci_margin"] == 3.1


def test_an_unexpected_cell_costs_that_cell_only(tmp_path):
    # `0.4 ± ` (std lost) and `0.4 ± 0.004 ± 1` are no form a console prints
    for n, cell in enumerate(("0.4 ±", "0.4 ± 0.004 ± 1", "O.4", "67!.0")):
        text = LATENCY_TABLE.format(unit1="Sec", unit2="ms", a=cell)
        db = _ingest_text(tmp_path, f"odd{n}.txt", text)
        got = _results(db)
        assert [r["label"] for r in got] == ["synchronous", "concurrent"]
        assert got[0]["mean_e2el_ms"] is None and got[0]["p95_e2el_ms"] == 500.0
        assert got[0]["mean_ttft_ms"] == 21.0
        assert got[1]["mean_e2el_ms"] == 900.0 and got[1]["std_e2el_ms"] is None
        assert json.loads(got[1]["extra"])["e2el_mean_ci_margin_ms"] == 11.0
        [(line, reason)] = _warnings(db)
        assert line == 7 and f"cannot read {' '.join(cell.split())!r}" in reason
        assert "Request Latency / Sec / Mean" in reason


def test_units_come_from_the_headers(tmp_path):
    db = _ingest_text(tmp_path, "units.txt", LATENCY_TABLE.format(unit1="ms", unit2="Sec",
                                                                   a="412.0"))
    got = _results(db)
    assert got[0]["mean_e2el_ms"] == 412.0 and got[0]["p95_e2el_ms"] == 0.5
    assert got[0]["mean_ttft_ms"] == 21000.0
    # GuideLLM 0.2 printed `Req Latency (ms)` over seconds; 0.3's `(sec)` says so: both seconds
    old = (CONSOLE / "derived-guidellm-0.2-sweep-same-run-as-json.txt").read_text()
    db2 = _ingest_text(tmp_path, "sec.txt", old.replace("Req Latency (ms)", "Req Latency (sec)"))
    assert [r["mean_e2el_ms"] for r in _results(db2)] == [1150.0, 1630.0]


def _hard_wrap(text: str, width: int) -> str:
    """A terminal `width` columns wide: every table line cut every `width` characters, the
    blanks a piece ends with trimmed (the lines around the tables are other formats' concern)."""
    out = []
    for line in text.split("\n"):
        if len(line) <= width or "|" not in line and "===" not in line:
            out.append(line)
            continue
        out.extend(line[i:i + width].rstrip() for i in range(0, len(line), width))
    return "\n".join(out)


def _same_rows(a, b) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x == y


@pytest.mark.parametrize("name", [
    "derived-guidellm-0.4-constant-llm-d-pr1459.txt",
    "derived-guidellm-0.5.2-all-requests-garbled-cell.txt",
    "derived-guidellm-0.6-concurrency-first-overflow-printed-twice.md",
    "derived-guidellm-current-mean-std-cells.md",
    "derived-guidellm-0.3-sweep-issue136.txt",
])
@pytest.mark.parametrize("width", [61, 80, 97, 120])
def test_a_terminal_wrap_reads_as_the_unwrapped_table(tmp_path, name, width):
    text = (CONSOLE / name).read_text()
    flat = _ingest_text(tmp_path, "flat" + Path(name).suffix, text)
    wrapped = _ingest_text(tmp_path, "wrapped" + Path(name).suffix, _hard_wrap(text, width))
    _same_rows(_results(wrapped), _results(flat))
    count = "SELECT count(*) AS n FROM latency_stats"
    assert rows(wrapped, count) == rows(flat, count)
    assert len(_warnings(wrapped)) == len(_warnings(flat))


def test_an_unreadable_wrap_costs_its_own_rows_only(tmp_path):
    # Lines cut at random places (no terminal width): the tables that still read are kept.
    text = (CONSOLE / "derived-guidellm-0.4-constant-llm-d-pr1459.txt").read_text()
    lines = text.split("\n")
    at = next(i for i, ln in enumerate(lines) if ln.startswith("| constant") and "3.6" in ln)
    lines[at:at + 1] = [lines[at][:23], lines[at][23:51], lines[at][51:]]
    db = _ingest_text(tmp_path, "cut.txt", "\n".join(lines))
    [run] = _results(db)
    assert run["median_e2el_ms"] is None and run["output_throughput"] == 829.7
    assert _warnings(db)


@pytest.mark.parametrize("indent", ["    ", "  ", "\t"])
def test_an_indented_report_reads_as_flush(tmp_path, indent):
    for name in ("derived-guidellm-0.4-constant-llm-d-pr1459.txt",
                 "derived-guidellm-0.3-sweep-issue136.txt"):
        text = (CONSOLE / name).read_text()
        flat = _ingest_text(tmp_path, "flat.txt", text)
        body = "\n".join(indent + ln if ln.strip() else ln for ln in text.split("\n"))
        nested = _ingest_text(tmp_path, "nested.md", "# Results\n\n- the sweep:\n\n" + body)
        _same_rows(_results(nested), _results(flat))


def test_two_different_reports_back_to_back_stay_two(tmp_path):
    text = (CONSOLE / "derived-guidellm-0.5.2-all-requests-garbled-cell.txt").read_text()
    start = text.index("ℹ Run Summary Info")
    end = text.index("✔ Benchmarking complete")
    report = text[start:end]
    other = report.replace("| 3.1     |", "| 3.3     |").replace("| 3.9     |", "| 4.0     |")
    db = _ingest_text(tmp_path, "two.txt", report + other.replace("67!.0", "66.0 "))
    got = _results(db)
    assert [r["median_e2el_ms"] for r in got] == [3100.0, 3900.0, 3300.0, 4000.0]
    assert [r["p95_ttft_ms"] for r in got] == [71.5, None, 71.5, 66.0]


def test_dashes_are_missing_values(tmp_path):
    db = tmp_path / "w.db"
    ingest_into(db, CONSOLE / "derived-guidellm-0.4-list-items-dash-cells.md")
    for run in _results(db):
        extra = json.loads(run["extra"])
        assert not [k for k in extra if "output_words" in k]
        assert extra["text_output_tokens_per_second_mean"] > 0
    assert _warnings(db) == []


def test_a_section_the_grammar_cannot_read_costs_that_table_only(tmp_path):
    text = (CONSOLE / "derived-guidellm-0.4-constant-llm-d-pr1459.txt").read_text()
    # the Request Latency table loses its header separator
    separator = "|-----------|---------|--------|" + "------|" * 2 + "-------|" * 2 \
        + "------|" * 4 + "\n"
    assert separator in text
    broken = text.replace(separator, "", 1)
    db = _ingest_text(tmp_path, "broken.txt", broken)
    [run] = _results(db)
    assert run["median_e2el_ms"] is None and run["total_token_throughput"] == 1680.9
    assert run["total_input_tokens"] == 1024
    [(line, reason)] = _warnings(db)
    assert "GuideLLM report" in reason and 30 <= line <= 40


def test_a_retyped_stats_table_keeps_the_request_rate_and_the_heading_names_the_model(tmp_path):
    note = tmp_path / "note.md"
    note.write_text(
        "### Qwen2.5:14B\n\n```\nBenchmark Stats:\n" + "=" * 60 + "\n"
        "Metadata    | Request Stats         || Out Tok/sec | Tot Tok/sec | TTFT (ms)        ||\n"
        "Benchmark   | Per Second | Concurrency | mean        | mean        | mean    | p99   \n"
        "------------|------------|-------------|-------------|-------------|---------|-------\n"
        "concurrent@1| 0.06       | 1.00        | 8.3         | 26.8        | 1686.5  | 1694.1\n"
        "concurrent@2| 0.06       | 1.67        | 8.3         | 26.9        | 11911.1 | 17034.2\n"
        "```\n", encoding="utf-8")
    db = tmp_path / "w.db"
    ingest_into(db, note)
    assert rows(db, "SELECT label, model, request_throughput, concurrency, output_throughput, "
                    "mean_ttft_ms FROM serving_runs ORDER BY line_start") == [
        {"label": "concurrent@1", "model": "Qwen2.5:14B", "request_throughput": 0.06,
         "concurrency": 1.0, "output_throughput": 8.3, "mean_ttft_ms": 1686.5},
        {"label": "concurrent@2", "model": "Qwen2.5:14B", "request_throughput": 0.06,
         "concurrency": 1.67, "output_throughput": 8.3, "mean_ttft_ms": 11911.1}]


def test_the_request_loaders_data_and_the_workers_target_without_a_command():
    from benchvault.parsers.base import Context
    from benchvault.parsers.guidellm_console import run_context

    found = run_context(Context(path="log.txt"), {
        "Worker": "type_='generative_requests_worker' backend_type='openai_http' "
                  "backend_target='http://vllm:8000' backend_model='unsloth/Meta-Llama-3.1-8B'",
        "Request Loader": "type_='generative_request_loader' "
                          "data='prompt_tokens=128,output_tokens=256' data_args=None"})
    assert {k: found.get(k) for k in ("model", "target", "random_input_len",
                                      "random_output_len")} == {
        "model": "unsloth/Meta-Llama-3.1-8B", "target": "http://vllm:8000",
        "random_input_len": 128, "random_output_len": 256}

