"""Published result tables (markdown and HTML) land in published_results with the seed's numbers."""

from __future__ import annotations

import pytest

from conftest import FIXTURES, SEEDS, ingest_into, rows

REPORT = "multi-gpu_report_pp-vs-tp.md"


def cell(db, caption_like: str, row_key: str, column: str) -> dict:
    found = rows(db, "SELECT r.* FROM published_results r JOIN published_tables t ON t.id = "
                     "r.table_id JOIN sources s ON s.id = t.source_id WHERE s.name = ? AND "
                     "r.caption LIKE ? AND r.row_key = ? AND r.column_name = ?",
                 (REPORT, f"%{caption_like}%", row_key, column))
    assert len(found) == 1, (caption_like, row_key, column, found)
    return found[0]


@pytest.fixture(scope="module")
def report_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("published") / "report.db"
    ingest_into(db, SEEDS / REPORT)
    return db


@pytest.mark.parametrize("caption, key, column, value, unit", [
    # 4.1.1 Qwen-1.5B, 2048 context (a row of the published table)
    ("4.1.1 Qwen-1.5B - 2048 context", "H100X1", "Prompt TPS", 45.74, "tok/s"),
    ("4.1.1 Qwen-1.5B - 2048 context", "H100X1", "Gen TPS", 649.78, "tok/s"),
    ("4.1.1 Qwen-1.5B - 2048 context", "H100X1", "Avg Latency (s)", 6.95, "s"),
    ("4.1.1 Qwen-1.5B - 2048 context", "H100X1", "Errors", 0, None),
    ("4.1.1 Qwen-1.5B - 2048 context", "mi210x2", "Errors", 10, None),
    ("4.1.1 Qwen-1.5B - 2048 context", "gpu-small", "Request Generation Level TPS", 74.31,
     "tok/s"),
    # pipeline vs tensor table: percentages and the caption from a #### heading
    ("Llama-3.2-3B-Instruct - 2048 context length @10req concurrency", "H100X1",
     "Prompt Speedup (%)", -0.6, "%"),
    ("Llama-3.2-3B-Instruct - 2048 context length @10req concurrency", "mi210x2",
     "Tensor (Gen TPS)", 489.30, "tok/s"),
    # a `#### 4.2.x ... **- 8192 context ...**` heading with bold inside
    ("4.2.1 DeepSeek-R1-Distill-Qwen-1.5B - 8192 context", "gpu-small", "Prompt TPS", 27.97,
     "tok/s"),
    ("4.3.3 Llama-3.1-8B - 64k context", "mi210x2", "Gen TPS", 451.61, "tok/s"),
    # the markdown preset table: units printed in the cells
    ("2.1 GPU Presets", "H100X1", "Memory", 265.0, "GB"),
    ("2.1 GPU Presets", "gpu-xlarge", "GPU Count", 8, None),
])
def test_report_cells(report_db, caption, key, column, value, unit):
    got = cell(report_db, caption, key, column)
    assert got["value"] == pytest.approx(value)
    assert got["unit"] == unit


def test_report_tables_and_text_cells(report_db):
    tables = rows(report_db, "SELECT format, caption, rows FROM published_tables ORDER BY line_start")
    # 1 markdown preset table + the 18 `<table>` lines; prose and figures are not tables
    assert [t["format"] for t in tables].count("published_markdown") == 1
    assert [t["format"] for t in tables].count("published_html") == 18
    concurrency = [t for t in tables if t["caption"] == "5. Overview of concurrency strategies"]
    assert concurrency and concurrency[0]["rows"] == 2
    # the second concurrency row: 1 request at a time, latency printed with 4 decimals
    got = rows(report_db, "SELECT value FROM published_results WHERE caption LIKE '5.%' AND "
                          "row_index = 1 AND column_name = 'Avg Latency (s)'")
    assert got == [{"value": 10.2027}]
    gpu_type = cell(report_db, "2.1 GPU Presets", "mi210x1", "GPU Type")
    assert gpu_type["value"] is None and gpu_type["value_text"] == "AMD MI210"


def test_strix_halo_tables_and_llama_bench_stay_apart(tmp_path):
    db = tmp_path / "strix.db"
    ingest_into(db, SEEDS / "strix-halo_vllm-vs-llamacpp.md")
    captions = [t["caption"] for t in rows(db, "SELECT caption FROM published_tables "
                                               "ORDER BY line_start")]
    assert captions == ["vLLM Concurrency", "vLLM Quant comparison", "c=1 Comparison",
                        "c=16 FP16 Comparison", "c=16 8-bit Quantization Comparison",
                        "c=16 4-bit Quantization Comparison"]
    got = rows(db, "SELECT value, unit FROM published_results WHERE caption = 'c=1 Comparison' "
                   "AND row_key = 'llama.cpp' AND row_index = 2 AND column_name = 'Mean TTFT (ms)'")
    assert got == [{"value": 146.13, "unit": "ms"}]
    bold = rows(db, "SELECT value, value_text FROM published_results WHERE caption = "
                    "'vLLM Concurrency' AND row_index = 2 AND column_name = 'Duration (s)'")
    assert bold == [{"value": 155.97, "value_text": "155.97"}]      # **155.97** in the seed
    # the fenced llama-bench tables are llama-bench results, never published tables
    assert rows(db, "SELECT COUNT(*) AS n FROM published_results WHERE column_name = 't/s'") \
        == [{"n": 0}]


def test_llama_bench_table_outside_fence_is_not_published(tmp_path):
    db = tmp_path / "lb.db"
    ingest_into(db, *sorted((FIXTURES / "llama_bench").glob("*.md")),
                *sorted((FIXTURES / "llama_bench").glob("*.txt")))
    assert rows(db, "SELECT COUNT(*) AS n FROM published_tables") == [{"n": 0}]


def test_fenced_and_numberless_tables_are_skipped(tmp_path):
    note = tmp_path / "note.md"
    note.write_text("## Setup\n\n| key | value |\n|---|---|\n| gpu | MI300X |\n\n"
                    "```\n| a | b |\n|---|---|\n| x | 1.5 |\n```\n\n"
                    "**Results @ c=4**\n\n| model | tok/s |\n|:--|--:|\n| llama \\| 7b | 12.5 |\n")
    db = tmp_path / "n.db"
    ingest_into(db, note)
    got = rows(db, "SELECT caption, row_key, column_name, value, unit FROM published_results")
    assert got == [{"caption": "Results @ c=4", "row_key": "llama | 7b", "column_name": "tok/s",
                    "value": 12.5, "unit": "tok/s"}]


def test_tables_in_a_plain_log_are_tool_output_not_published(tmp_path):
    # llama-bench's SYCL device list, printed into a terminal log: not a published result.
    log = tmp_path / "sycl.log"
    log.write_text("| ID | Device Type | Name | Max compute units |\n|----|---|---|---|\n"
                   "| 0 | [level_zero:gpu:0] | Intel Arc A770 | 512 |\n")
    note = tmp_path / "note.md"
    note.write_text(log.read_text())
    db = tmp_path / "w.db"
    ingest_into(db, log, note)
    found = rows(db, "SELECT s.name FROM published_tables t JOIN sources s ON s.id = t.source_id")
    assert found == [{"name": "note.md"}]
