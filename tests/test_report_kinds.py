"""The llama-bench, speculative-decoding and capacity reports over the seeds' real rows.

Each test is skipped while the table it reads is not part of the warehouse schema yet (the
parsers that fill it are built separately); once the model exists, it runs.
"""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from benchvault.cli import app
from benchvault.reports.compare import compare
from benchvault.reports.render import ReportOptions, make_report, make_reports
from benchvault.schemas.store import row_models
from conftest import SEEDS, ingest_into

TABLES = {m.__table__ for m in row_models()}
STRIX = SEEDS / "strix-halo_vllm-vs-llamacpp.md"
MI300X = SEEDS / "mi300x_llama70b_tp-pp_specdecode.md"
DEEPSEEK = SEEDS / "deepseek-v3_h100_tp-vs-pp_llamacpp.md"


def needs(table):
    return pytest.mark.skipif(table not in TABLES, reason=f"no {table} model yet")


def cells(markdown: str) -> list[list[str]]:
    out = [[c.strip() for c in re.split(r"(?<!\\)\|", ln)[1:-1]]
           for ln in markdown.splitlines() if ln.startswith("|")]
    return [r for r in out if not all(set(c) <= set("-:") for c in r)]


@pytest.fixture(scope="module")
def seeds(tmp_path_factory):
    db = tmp_path_factory.mktemp("kinds") / "seeds.db"
    ingest_into(db, STRIX, MI300X, DEEPSEEK)
    return db


@needs("llama_bench_results")
def test_llama_bench_table_in_its_own_layout(seeds):
    report = make_report(seeds, "llama-bench", ReportOptions(where=["source~strix-halo"]))
    table = cells(report.markdown_table)
    assert table[0] == ["Model", "size", "params", "backend", "ngl", "env", "Test", "t/s"]
    # The seed's first llama-bench table, then the same build with ROCBLAS_USE_HIPBLASLT=1.
    assert table[1] == ["llama 7B Q4_0", "3.56 GiB", "6.74 B", "ROCm", "99", "", "pp512",
                        "878.31 ± 4.11"]
    assert table[3] == ["llama 7B Q4_0", "3.56 GiB", "6.74 B", "ROCm", "99",
                        "ROCBLAS_USE_HIPBLASLT=1", "pp512", "972.75 ± 6.99"]
    # Best per test: pp512 1189.21 (F16 + hipBLASLt), tg128 39.33 (Q4_0).
    bold = [r[-1] for r in table[1:] if r[-1].startswith("**")]
    assert bold == ["**39.33 ± 0.00**", "**1189.21 ± 4.65**"]


@needs("llama_bench_results")
def test_llama_bench_compare_env(seeds):
    result = compare(seeds, ["env_text!=ROCBLAS_USE_HIPBLASLT=1"],
                     ["env_text=ROCBLAS_USE_HIPBLASLT=1"], kind="llama-bench",
                     where=["source~strix-halo"])
    rows = {(r[0], r[1]): r[2:] for r in cells(result.table.markdown())[1:]}
    assert rows[("llama 7B Q4_0", "pp512")] == ["878.31", "972.75", "1.11x", "+10.8%"]
    assert rows[("llama 7B F16", "tg128")] == ["13.91", "13.93", "1.00x", "+0.1%"]
    assert len(rows) == 8


@needs("spec_decode_metrics")
def test_spec_decode_summary(seeds):
    report = make_report(seeds, "spec-decode")
    table = cells(report.markdown_table)
    header = table[0]
    got = [dict(zip(header, r)) for r in table[1:]]
    assert [(r["Draft model"], r["Num speculative tokens"], r["Acceptance"],
             r["System efficiency"], r["Output Tok/s"]) for r in got] == [
        ("meta-llama/Llama-3.2-1B-Instruct", "5", "0.797", "0.64", "**1651.57**"),
        ("meta-llama/Llama-3.2-1B-Instruct", "10", "0.786", "0.443", "1351.84"),
        ("meta-llama/Llama-3.1-8B-Instruct", "5", "**0.871**", "**0.741**", "1632.46"),
    ]


@needs("server_launches")
def test_capacity_report(seeds):
    report = make_report(seeds, "capacity", ReportOptions(where=["source~deepseek"]))
    table = cells(report.markdown_table)
    row = dict(zip(table[0], table[1]))
    # vllm serve deepseek-ai/DeepSeek-V3 --tensor-parallel-size 8 --pipeline-parallel-size 2
    # --gpu-memory-utilization 0.95 --max-model-len 8192; "# GPU blocks: 2889";
    # "Maximum concurrency for 8192 tokens per request: 5.64x"
    assert (row["TP"], row["PP"], row["Max model len"]) == ("8", "2", "8192")
    assert row["Gpu blocks"] == "2889" and row["Max concurrency x"] == "5.64"
    assert re.fullmatch(r"\d+\.\d\d", row["Load (min)"])


@needs("server_launches")
def test_capacity_one_table_per_model_and_hardware(seeds):
    """Launches group as their runs do: model family on hardware (the notes' file names
    say H100, Strix Halo, MI300X), never DeepSeek-V3 beside Llama-2-7B in one table."""
    reports = make_reports(seeds, "capacity")
    assert [r.title for r in reports] == [
        "Server capacity: deepseek-v3 · H100", "Server capacity: llama-2-7b · Strix Halo",
        "Server capacity: llama-3.1-70b · MI300X"]
    tables = [cells(r.markdown_table) for r in reports]
    models = [{row[t[0].index("Model")] for row in t[1:]} for t in tables]
    assert models == [{"deepseek-ai/DeepSeek-V3"},
                      {"meta-llama/Llama-2-7b-chat-hf", "Llama-2-7b-chat-hf.f16.gguf"},
                      {"meta-llama/Llama-3.1-70B-Instruct"}]


@needs("server_launches")
def test_gpus_from_the_launch(seeds):
    """The sd runs' labels say nothing of GPUs; their launch says -tp 8."""
    report = make_report(seeds, "sweep", ReportOptions(where=["config~sd "],
                                                       columns=["config", "gpus"]))
    assert {tuple(r) for r in cells(report.markdown_table)[1:]} == {("sd 1b", "8"),
                                                                    ("sd 8b", "8")}


def test_all_reports_render_without_error(seeds, tmp_path):
    result = CliRunner().invoke(app, ["report", "all", "--db", str(seeds), "--out",
                                      str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    text = (tmp_path / "r" / "report.md").read_text()
    # three serving groups, two llama-bench ones, spec decode, three capacity groups
    assert text.count("\n## ") == 9
    assert "report-sweep-llama-2-7b-strix-halo-sharegpt-throughput.png" in text
