"""llama-bench: the seeds' markdown tables, the structured outputs, and what must not happen.

Values asserted here are read off the seed notes and fixtures by eye.
Per-fixture expectations live beside each fixture in fixtures/llama_bench/*.expected.json.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchvault.ingest.parse import parse_file
from benchvault.parsers.base import Context, Problem
from benchvault.parsers.llama_bench_output import _json_records, read
from conftest import FIXTURES, SEEDS, ingest_into, rows

LLAMA = FIXTURES / "llama_bench"
DEEPSEEK = SEEDS / "deepseek-v3_h100_tp-vs-pp_llamacpp.md"
# Columns a llama-bench markdown table carries (with its device lines, command and build line).
TABLE_COLUMNS = ("model_type", "model_size", "model_n_params", "backends", "n_gpu_layers", "test",
                 "n_prompt", "n_gen", "n_depth", "avg_ts", "stddev_ts", "build_commit",
                 "build_number", "gpu_info", "gpu_count", "model_filename")


def results(db: Path, source: str, where: str = "1", params=()) -> list[dict]:
    return rows(db, "SELECT r.* FROM llama_bench_results r JOIN sources s ON s.id = r.source_id "
                    f"WHERE s.name LIKE ? AND {where} ORDER BY r.line_start", (source + "%", *params))


def test_seeds_give_eighteen_rows(seeds_db):
    assert len(rows(seeds_db, "SELECT id FROM llama_bench_results")) == 18
    assert rows(seeds_db, "SELECT count(*) n FROM unparsed_blocks WHERE format LIKE 'llama%'"
                ) == [{"n": 0}]


def test_deepseek_seed(seeds_db):
    pp = results(seeds_db, "deepseek-v3", "test = 'pp512'")
    assert len(pp) == 1
    row = pp[0]
    assert row["model_type"] == "deepseek2 671B Q5_K - Medium"
    assert row["model_size"] == round(442.74 * 2 ** 30)
    assert row["model_n_params"] == 671_030_000_000
    assert (row["backends"], row["n_gpu_layers"]) == ("CUDA", 99)
    assert (row["avg_ts"], row["stddev_ts"]) == (290.28, 1.25)
    assert (row["build_commit"], row["build_number"]) == ("b56f079e", 4418)
    assert row["gpu_count"] == 8
    assert row["gpu_info"].split(", ") == ["NVIDIA H100 80GB HBM3"] * 8
    assert row["gpu_arch"] == "9.0"
    assert row["model_filename"] == "DeepSeek-V3-Q5_K_M.gguf"
    assert (row["section"], row["label"]) == ("llama.cpp > llama-bench", "llama-bench")
    # the table row is line 303; its block ran to the build line (306)
    assert (row["line_start"], row["n_prompt"], row["n_gen"]) == (303, 512, 0)
    assert "290.28 ± 1.25" in row["raw_text"]


def test_strix_halo_seed_env_prefix_and_mojibake(seeds_db):
    q4 = results(seeds_db, "strix-halo", "model_type = 'llama 7B Q4_0' AND test = 'pp512'")
    assert len(q4) == 2
    plain, hipblaslt = q4
    assert (plain["avg_ts"], plain["stddev_ts"], plain["env"]) == (878.31, 4.11, None)
    assert (hipblaslt["avg_ts"], hipblaslt["stddev_ts"]) == (972.75, 6.99)
    assert json.loads(hipblaslt["env"]) == {"ROCBLAS_USE_HIPBLASLT": "1"}
    for row in q4:
        assert row["flash_attn"] == 1
        assert (row["build_commit"], row["build_number"]) == ("4d74393bc", 6327)
        assert (row["gpu_info"], row["gpu_arch"], row["gpu_count"]) == (
            "AMD Radeon Graphics", "gfx1151", 1)
        assert row["backends"] == "ROCm"
        assert row["model_filename"] == "/models/gguf/llama-2-7b.Q4_0.gguf"
    assert hipblaslt["command"].startswith("ROCBLAS_USE_HIPBLASLT=1 build/bin/llama-bench -fa 1")
    everything = results(seeds_db, "strix-halo")
    assert len(everything) == 16
    assert sum(1 for r in everything if r["env"]) == 8


@pytest.mark.parametrize("ext", ["json", "jsonl", "csv", "sql"])
def test_structured_output_gives_the_markdown_rows(ext, tmp_path):
    """The derived -o json/jsonl/csv/sql files hold the deepseek table's values: same rows."""
    apart, markdown_db = tmp_path / "structured.db", tmp_path / "markdown.db"
    ingest_into(markdown_db, DEEPSEEK)
    ingest_into(apart, LLAMA / f"deepseek_h100_derived_{ext}.{ext}")
    markdown = [{c: r[c] for c in TABLE_COLUMNS} for r in results(markdown_db, "deepseek-v3")]
    structured = [{c: r[c] for c in TABLE_COLUMNS} for r in results(apart,
                                                                      "deepseek_h100_derived")]
    assert len(markdown) == 2
    assert structured == markdown
    # Both in one warehouse: the two rows, each seen in the note and in the file.
    both = tmp_path / "both.db"
    ingest_into(both, DEEPSEEK, LLAMA / f"deepseek_h100_derived_{ext}.{ext}")
    assert rows(both, "SELECT test, avg_ts FROM llama_bench_results ORDER BY test") == [
        {"test": "pp512", "avg_ts": 290.28}, {"test": "tg128", "avg_ts": 23.63}]
    assert rows(both, "SELECT count(DISTINCT source_id) AS files, count(*) AS n FROM sightings "
                      "WHERE kind = 'llama_bench_results'") == [{"files": 2, "n": 4}]


def test_structured_output_is_recognised_by_content_not_name(tmp_path):
    for ext in ("json", "jsonl", "csv", "sql"):
        renamed = tmp_path / f"results-{ext}.txt"
        renamed.write_bytes((LLAMA / f"deepseek_h100_derived_{ext}.{ext}").read_bytes())
    db = tmp_path / "renamed.db"
    ingest_into(db, tmp_path)
    # four files of one table: each of its two rows seen four times, once per format
    got = rows(db, "SELECT g.format, r.test, r.avg_ts FROM sightings g "
                   "JOIN llama_bench_results r ON r.id = g.llama_bench_id ORDER BY g.format, r.test")
    assert [(r["format"], r["test"], r["avg_ts"]) for r in got] == [
        (f"llama_bench_{ext}", test, ts) for ext in sorted(("json", "jsonl", "csv", "sql"))
        for test, ts in (("pp512", 290.28), ("tg128", 23.63))]


def test_powershell_utf16_json_is_read(tmp_path):
    utf16 = tmp_path / "bench.json"
    text = (LLAMA / "deepseek_h100_derived_json.json").read_text()
    utf16.write_bytes(b"\xff\xfe" + text.replace("\n", "\r\n").encode("utf-16-le"))
    got = [item for item in read(utf16, Context())]
    assert [(p.row.test, p.row.avg_ts, p.row.line_start) for p in got] == [
        ("pp512", 290.28, 2), ("tg128", 23.63, 31)]


def test_sql_runs_only_in_a_scratch_database(tmp_path):
    target = tmp_path / "elsewhere.db"
    evil = tmp_path / "evil.sql"
    evil.write_text(
        "CREATE TABLE IF NOT EXISTS llama_bench (model_type TEXT, n_prompt INTEGER, "
        "n_gen INTEGER, avg_ts REAL);\n"
        f"ATTACH DATABASE '{target}' AS other;\n"
        "INSERT INTO llama_bench (model_type, n_prompt, n_gen, avg_ts) "
        "VALUES ('llama 7B Q4_0', '512', '0', '878.31');\n"
        "DROP TABLE llama_bench;\n"
        "INSERT INTO llama_bench SELECT name, 1, 0, 1.0 FROM sqlite_master;\n")
    db = tmp_path / "warehouse.db"
    ingest_into(db, evil)
    assert not target.exists()
    assert [(r["model_type"], r["test"], r["avg_ts"]) for r in rows(
        db, "SELECT * FROM llama_bench_results")] == [("llama 7B Q4_0", "pp512", 878.31)]
    warnings = rows(db, "SELECT line, reason FROM unparsed_blocks ORDER BY line")
    assert [w["line"] for w in warnings] == [2, 4, 5]
    assert rows(db, "SELECT count(*) n FROM sqlite_master WHERE name = 'llama_bench'") == [{"n": 0}]


def test_json_stream_crosses_chunk_boundaries(tmp_path, monkeypatch):
    """Records are read a chunk at a time; a record cut by a chunk edge still parses whole."""
    import benchvault.parsers.llama_bench_output as output

    monkeypatch.setattr(output, "CHUNK", 64)
    path = LLAMA / "deepseek_h100_derived_json.json"
    got = list(_json_records(path, "utf-8-sig"))
    assert [(line, record["n_prompt"], record["avg_ts"]) for line, record, _ in got] == [
        (2, 512, 290.28), (31, 0, 23.63)]


def test_truncated_json_keeps_what_was_read(tmp_path):
    cut = tmp_path / "cut.json"
    text = (LLAMA / "deepseek_h100_derived_json.json").read_text()
    cut.write_text(text[: text.index('"avg_ts": 23.63')])
    items = list(parse_file(cut))
    parsed = [i for i in items if hasattr(i, "row")]
    problems = [i for i in items if not hasattr(i, "row")]
    assert [p.row.test for p in parsed] == ["pp512"]
    # the second record starts on line 31; the file is cut on line 57, where its avg_ts was
    assert len(problems) == 1 and problems[0].line == 57
    assert "not valid JSON" in problems[0].reason


def test_malformed_rows_warn_with_file_and_line(tmp_path):
    db = tmp_path / "bad.db"
    source = LLAMA / "malformed_rows_derived.md"
    [result] = ingest_into(db, source)
    where = [w.where(str(source)) for w in result.warnings]
    assert where == [f"{source}:11: llama_bench: row has 7 cells, the header has 8",
                     f"{source}:22: llama_bench: t/s: 'out of memory' is not `mean ± std`"]
    kept = rows(db, "SELECT raw_text FROM unparsed_blocks ORDER BY line")
    assert "|           tg128 |" in kept[0]["raw_text"]
    assert "out of memory" in kept[1]["raw_text"]
    assert len(rows(db, "SELECT id FROM llama_bench_results")) == 2


def test_table_without_build_line_and_prose_mentions(tmp_path):
    """`llama-bench:` in prose is not a command; a table ends at its last `|` line (a line
    typed between it and its `build:` line does not take the build line from it)."""
    note = tmp_path / "note.md"
    note.write_text(
        "Just for fun llama-bench:\n\n"
        "| model | size | params | backend | threads | test | t/s |\n"
        "| ----- | ---: | -----: | ------- | ------: | ---: | --: |\n"
        "| llama 7B Q4_0 | 3.56 GiB | 6.74 B | CPU | 16 | pp512 | 61.15 ± 0.10 |\n"
        "llama-bench: benchmark 2/2: starting\n"
        "| llama 7B Q4_0 | 3.56 GiB | 6.74 B | CPU | 16 | tg128 | 9.31 ± 0.01 |\n"
        "That was on the laptop.\n"
        "build: 0000000 (1)\n")
    items = [i for i in parse_file(note)]
    got = [(i.row.test, i.row.n_threads, i.row.avg_ts, i.row.command, i.row.build_commit)
           for i in items if not isinstance(i, Problem)]
    assert got == [("pp512", 16, 61.15, None, "0000000"), ("tg128", 16, 9.31, None, "0000000")]


@pytest.mark.parametrize("model_type, parts", [
    # llama_model_desc() strings named in the survey (/work/survey/llamabench/REPORT.md §1.2)
    ("llama 7B mostly Q4_0", ("llama", "7B", "Q4_0")),
    ("llama 7B mostly Q4_K - Medium", ("llama", "7B", "Q4_K - Medium")),
    ("llama 7B all F32", ("llama", "7B", "F32")),
    ("llama 7B mostly Q4_0 (guessed)", ("llama", "7B", "Q4_0")),
    ("llama 7B (guessed) Q4_0", ("llama", "7B", "Q4_0")),
    ("llama ?B Q4_0_4_8", ("llama", "?B", "Q4_0_4_8")),
    ("qwen35moe 122B.A10B Q4_K - Medium", ("qwen35moe", "122B.A10B", "Q4_K - Medium")),
    ("qwen3moe 30B.A3B IQ4_XS - 4.25 bpw", ("qwen3moe", "30B.A3B", "IQ4_XS - 4.25 bpw")),
    ("gpt-oss 20B MXFP4 MoE", ("gpt-oss", "20B", "MXFP4 MoE")),
    ("bitnet 3B TQ1_0 - 1.69 bpw ternary", ("bitnet", "3B", "TQ1_0 - 1.69 bpw ternary")),
])
def test_model_description_parts(model_type, parts):
    from benchvault.parsers.llama_bench import model_parts
    got = model_parts(model_type)
    assert (got["model_arch"], got["model_size_label"], got["model_ftype"]) == parts


def test_model_description_not_llama_cpp_is_left_whole():
    from benchvault.parsers.llama_bench import model_parts
    assert model_parts("my fine-tune") == {}


def test_2024_backend_flags_name_the_backend_like_get_backend(tmp_path):
    """0.2.80-0.2.90 JSON: bools instead of `backends`; vulkan outranks blas, rpc appends +RPC."""
    path = tmp_path / "bench.jsonl"
    flags = {"cuda": False, "vulkan": True, "kompute": True, "metal": False, "sycl": False,
             "rpc": True, "gpu_blas": False, "blas": True}
    path.write_text(json.dumps({"build_commit": "1d1ccce6", "build_number": 3600, **flags,
                                "model_type": "llama 8B Q4_0", "n_prompt": 512, "n_gen": 0,
                                "avg_ts": 100.5, "stddev_ts": 1.5}) + "\n")
    [parsed] = list(parse_file(path))
    assert parsed.row.backends == "Vulkan+RPC"
    assert parsed.row.extra["kompute"] is True


def test_prose_before_json_makes_a_note_with_output_pasted_in_it(tmp_path):
    """Only banner lines may precede a whole output file; after prose the file is a note, and
    the JSON lines pasted in it are read as the pasted copy they are, with the note's lines."""
    text = (LLAMA / "derived-upstream-readme-2026-jsonl.jsonl").read_text()
    note = tmp_path / "note.txt"
    note.write_text("My results from yesterday:\n" + text)
    rows = [i.row for i in parse_file(note) if hasattr(i, "row")]
    assert [(r.format, r.line_start, r.avg_ts) for r in rows] == [
        ("llama_bench_jsonl", 2, 7263.609157), ("llama_bench_jsonl", 3, 119.844681)]
    banner = tmp_path / "run.log"
    banner.write_text("load_backend: loaded CUDA backend from /opt/llama/libggml-cuda.so\n" + text)
    assert [i.row.avg_ts for i in parse_file(banner)] == [7263.609157, 119.844681]


SYCL_DEVICE_LIST = """\
ggml_init_sycl: GGML_SYCL_DEBUG: 0
ggml_init_sycl: GGML_SYCL_F16: no
found 6 SYCL devices:
|  |                  |                                             |Compute   |Max compute|Max work|Max sub|               |
|ID|       Device Type|                                         Name|capability|units      |group   |group  |Global mem size|
|--|------------------|---------------------------------------------|----------|-----------|--------|-------|---------------|
| 0|[level_zero:gpu:0]|                 Intel(R) Iris(R) Xe Graphics|       1.3|         96|     512|     32|     3097038848|
"""


def test_sycl_device_table_above_a_table_does_not_spoil_it(tmp_path):
    """The SYCL device list (ggml-org/llama.cpp#5513, 2024) is a `|` table too; the real table of
    sycl_register_mojibake_b9159 right below it still gives its rows and build."""
    table = (LLAMA / "sycl_register_mojibake_b9159.txt").read_text().splitlines()[8:]
    log = tmp_path / "sycl.txt"
    log.write_text(SYCL_DEVICE_LIST + "\n".join(table) + "\n")
    got = [i for i in parse_file(log) if hasattr(i, "row") and i.row.format == "llama_bench"]
    assert [(p.row.line_start, p.row.test, p.row.avg_ts, p.row.stddev_ts, p.row.backends,
             p.row.build_commit) for p in got] == [
        (10, "pp512", 373.50, 3.96, "SYCL", "5c0e94683"),
        (11, "tg128", 50.29, 0.12, "SYCL", "5c0e94683")]
