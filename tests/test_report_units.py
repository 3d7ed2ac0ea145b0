"""Reports over real rows: escaping, names, derived replicas/GPUs, filters, read-only SQL,
compare, charts, templates and a warehouse without a table."""

from __future__ import annotations

import re
import sqlite3

import pytest
from typer.testing import CliRunner

from benchvault.cli import app
from benchvault.reports.charts import write_charts
from benchvault.reports.compare import compare
from benchvault.reports.derive import short_name
from benchvault.reports.query import ReportError
from benchvault.reports.render import ReportOptions, make_report, render
from benchvault.reports.table import escape_cell, format_number, unescape_cell
from conftest import FIXTURES, SEEDS, ingest_into, rows

STRIX = SEEDS / "strix-halo_vllm-vs-llamacpp.md"
MI300X = SEEDS / "mi300x_llama70b_tp-pp_specdecode.md"
HOSTILE = FIXTURES / "reports" / "hostile-labels.md"


@pytest.fixture(scope="module")
def strix_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("strix") / "strix.db"
    ingest_into(db, STRIX)
    return db


def cells(markdown: str) -> list[list[str]]:
    lines = [ln for ln in markdown.splitlines() if ln.startswith("|")]
    out = [[c.strip() for c in re.split(r"(?<!\\)\|", ln)[1:-1]] for ln in lines]
    return [r for r in out if not all(set(c) <= set("-:") for c in r)]


def column(table: list[list[str]], header: str) -> list[str]:
    j = table[0].index(header)
    return [r[j] for r in table[1:]]


def test_hostile_labels_cannot_break_the_table(tmp_path):
    db = tmp_path / "h.db"
    ingest_into(db, HOSTILE)
    labels = [r["label"] for r in rows(db, "SELECT label FROM serving_runs ORDER BY line_start")]
    report = make_report(db, "engines", ReportOptions(name_from="label"))
    md = report.markdown_table
    table = cells(md)
    assert all(len(r) == 8 for r in table)           # no cell split by a `|` in a label
    assert [unescape_cell(c) for c in column(table, "Model")] == labels
    assert "<img" not in md and " `code` " not in md and "[link](" not in md
    assert "**bold**" not in md and "~~gone~~" not in md
    # The best output throughput (178.68, the Q4_K_M block) is the only bold number there.
    assert column(table, "Output Tok/s") == ["161.34", "**178.68**"]


def test_escape_keeps_intraword_underscores():
    assert escape_cell("llama-2-7b.Q4_K_M.gguf") == "llama-2-7b.Q4_K_M.gguf"
    assert escape_cell("_x_") == r"\_x\_"
    assert escape_cell("a|b") == r"a\|b"
    assert escape_cell("line\nbreak") == "line break"


def test_short_names():
    assert short_name("/models/gguf/llama-2-7b.Q8_0.gguf") == "llama-2-7b.Q8_0.gguf"
    assert short_name("meta-llama/Llama-2-7b-chat-hf") == "meta-llama/Llama-2-7b-chat-hf"
    assert short_name("./ckpt/my-model/") == "my-model"
    assert short_name("C:\\models\\x.gguf") == "x.gguf"


def test_replicas_reproduce_the_authors_arithmetic(tmp_path):
    """mi300x seed, `tp2 x 4`: the author wrote 286.06/4 = 71.515, 14.32, 2686.16, 5775.04."""
    db = tmp_path / "m.db"
    ingest_into(db, MI300X)
    report = make_report(db, "sweep", ReportOptions(
        where=["config=tp2 x 4"],
        columns=["replicas", "gpus", "duration", "request_throughput", "output_throughput",
                 "total_token_throughput", "output_throughput_per_gpu"]))
    table = cells(report.markdown_table)
    assert table[1] == ["4", "8", "71.515", "14.32", "2686.16", "5775.04", "335.77"]
    assert any("4 replicas" in n for n in report.notes)
    raw = make_report(db, "sweep", ReportOptions(where=["config=tp2 x 4"],
                                                 columns=["duration", "output_throughput"],
                                                 scale_replicas=False))
    assert cells(raw.markdown_table)[1] == ["286.06", "671.54"]
    tp8 = make_report(db, "sweep", ReportOptions(where=["config=tp8"],
                                                 columns=["gpus", "output_throughput_per_gpu"]))
    assert cells(tp8.markdown_table)[1] == ["8", "374.23"]       # 2993.85 / 8


def test_replicas_and_gpus_from_ingest_tags(tmp_path):
    db = tmp_path / "t.db"
    ingest_into(db, STRIX, tags={"replicas": "2", "gpus": "2"})
    report = make_report(db, "sweep", ReportOptions(
        where=["engine=vllm", "model=meta-llama/Llama-2-7b-chat-hf", "max_concurrency=16"],
        columns=["replicas", "gpus", "duration", "output_throughput",
                 "output_throughput_per_gpu"]))
    # 155.97 s / 2 = 77.985, 72.17 tok/s x 2, then / 2 GPUs
    assert cells(report.markdown_table)[1] == ["2", "2", "77.985", "144.34", "72.17"]


def test_format_number_as_printed():
    assert format_number(71.515) == "71.52"                  # two places: half up
    assert format_number(71.515, None) == "71.515"           # as written: keeps its places
    assert format_number(0.797, None) == "0.797"             # vLLM's acceptance rate
    assert format_number(1295.4, None) == "1295.40"
    assert format_number(671.54 * 4, None) == "2686.16"      # no float noise
    assert format_number(0.05) == "0.05"


def test_where_terms(strix_db):
    def models(*where):
        r = make_report(strix_db, "engines", ReportOptions(where=list(where)))
        return column(cells(r.markdown_table), "Model") if r.table else []

    assert models("max_concurrency>=8", "max_concurrency<16") == ["meta-llama/Llama-2-7b-chat-hf"]
    assert models("model~q4_k_m", "model~GPTQ", "max_concurrency=16") == [
        "TheBloke/Llama-2-7B-Chat-GPTQ", "llama-2-7b.Q4_K_M.gguf"]
    assert models("engine=llama.cpp", "model=llama-2-7b.Q8_0.gguf") == [
        "llama-2-7b.Q8_0.gguf", "llama-2-7b.Q8_0.gguf"]
    assert models("completed!=64") == [
        "Llama-2-7b-chat-hf.f16.gguf", "Llama-2-7b-chat-hf.f16.gguf", "llama-2-7b.Q8_0.gguf",
        "llama-2-7b.Q8_0.gguf", "llama-2-7b.Q4_K_M.gguf", "llama-2-7b.Q4_K_M.gguf"]
    with pytest.raises(ReportError, match="unknown column 'nope'"):
        models("nope=1")
    empty = make_report(strix_db, "engines", ReportOptions(where=["max_concurrency=3"]))
    assert empty.table is None and "No rows match" in empty.notes[0]


def test_where_reads_ingest_tags(tmp_path):
    db = tmp_path / "tags.db"
    ingest_into(db, STRIX, tags={"gpu": "gfx1151"})
    ingest_into(db, MI300X, tags={"gpu": "MI300X"})
    r = make_report(db, "engines", ReportOptions(where=["tag.gpu=MI300X"], columns=["source"]))
    assert set(column(cells(r.markdown_table), "Source")) == {MI300X.name}


def test_sort_option(strix_db):
    r = make_report(strix_db, "engines", ReportOptions(where=["max_concurrency=16"],
                                                       sort=["-output_throughput"]))
    assert column(cells(r.markdown_table), "Output Tok/s") == [
        "**178.68**", "161.34", "148.91", "72.17", "66.85", "28.66"]


def test_sql_is_read_only(strix_db):
    before = rows(strix_db, "SELECT count(*) AS n FROM serving_runs")[0]["n"]
    with pytest.raises(ReportError, match="readonly|read-only|query_only"):
        make_report(strix_db, "engines", ReportOptions(sql="DELETE FROM serving_runs"))
    assert rows(strix_db, "SELECT count(*) AS n FROM serving_runs")[0]["n"] == before == 11
    r = make_report(strix_db, "engines", ReportOptions(
        sql="SELECT model, completed, output_throughput FROM serving_runs "
            "WHERE completed < 64 AND max_concurrency = 16"))
    table = cells(r.markdown_table)
    assert table[0] == ["Model", "Completed", "Output Tok/s"]
    assert column(table, "Completed") == ["36", "36", "36"]


def test_missing_and_empty_tables(tmp_path, strix_db):
    bare = tmp_path / "bare.db"
    sqlite3.connect(bare).execute("CREATE TABLE sources (id INTEGER PRIMARY KEY)").connection.close()
    for kind, table in (("llama-bench", "llama_bench_results"),
                        ("spec-decode", "spec_decode_metrics"), ("capacity", "server_launches")):
        report = make_report(bare, kind)
        assert report.table is None and f"no `{table}` table" in report.notes[0]
        assert f"no `{table}` table" in render([report])
    result = CliRunner().invoke(app, ["report", "all", "--db", str(bare)])
    assert result.exit_code == 0 and "no `serving_runs` table" in result.stdout


def test_compare_speedup_and_regression_exit(strix_db):
    result = compare(strix_db, ["model~Q8_0"], ["model~Q4_K_M"],
                     metrics=["output_throughput", "mean_ttft_ms"])
    table = cells(result.table.markdown())
    row16 = next(r for r in table[1:] if r[1] == "c=16")
    # The models differ: each side's is shown.
    assert row16[2:4] == ["llama-2-7b.Q8_0.gguf", "llama-2-7b.Q4_K_M.gguf"]
    # 161.34 -> 178.68 tok/s; TTFT 395.97 -> 381.53 ms (lower is better, so a speedup)
    assert row16[4:] == ["161.34", "178.68", "1.11x", "+10.7%", "395.97", "381.53", "1.04x",
                         "+3.8%"]
    runner = CliRunner()
    worse = ["compare", "--db", str(strix_db), "--baseline", "model~Q4_K_M",
             "--candidate", "model~Q8_0"]
    assert runner.invoke(app, worse + ["--fail-on-regression", "5"]).exit_code == 1
    out = runner.invoke(app, worse + ["--fail-on-regression", "10"])
    assert out.exit_code == 0 and "0.90x" in out.stdout and "-9.7%" in out.stdout


def test_charts_png_and_svg_linked(strix_db, tmp_path):
    report = make_report(strix_db, "sweep", ReportOptions(where=["engine=vllm"]))
    made = write_charts(report, tmp_path / "out", "strix", ["throughput", "ttft"],
                        link_base=tmp_path)
    assert [m["png"] for m in made] == ["out/strix-throughput.png", "out/strix-ttft.png"]
    for m in made:
        png, svg = tmp_path / m["png"], tmp_path / m["svg"]
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert "<svg" in svg.read_text() and "<dc:date>" not in svg.read_text()
    text = render([report])
    assert "![Output throughput vs max concurrency](out/strix-throughput.png)" in text
    first = (tmp_path / "out" / "strix-throughput.svg").read_bytes()
    report.charts.clear()
    write_charts(report, tmp_path / "out", "strix", ["throughput"], link_base=tmp_path)
    assert (tmp_path / "out" / "strix-throughput.svg").read_bytes() == first


def test_report_out_dir_and_user_template(strix_db, tmp_path):
    runner = CliRunner()
    out = tmp_path / "report"
    result = runner.invoke(app, ["report", "all", "--db", str(strix_db), "--out", str(out)])
    assert result.exit_code == 0, result.output
    text = (out / "report.md").read_text()
    assert "(report-sweep-throughput.png)" in text and (out / "report-sweep-throughput.svg").exists()
    template = tmp_path / "mine.md.j2"
    template.write_text("{% for r in reports %}{{ r.title }}: {{ r.frame | length }} rows\n"
                        "{{ r.markdown_table }}\n{% endfor %}")
    result = runner.invoke(app, ["report", "engines", "--db", str(strix_db), "--template",
                                 str(template), "--where", "max_concurrency=1"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("Engine / quantization comparison: 4 rows\n| Engine")


def test_reading_a_warehouse_leaves_no_file_beside_it(tmp_path):
    """report, compare and export only read: no -wal or -shm file is left beside the
    warehouse, and its bytes are unchanged."""
    from conftest import SEEDS, ingest_into

    db = tmp_path / "w.db"
    ingest_into(db, SEEDS)
    before = db.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.db"]
    for args in (["report", "all"], ["report", "sweep", "--where", "max_concurrency=16"],
                 ["compare", "--by", "engine", "--baseline", "vllm"],
                 ["export", "--format", "csv", "--out", str(tmp_path / "out")]):
        result = CliRunner().invoke(app, [*args, "--db", str(db)])
        assert result.exit_code == 0, (args, result.output)
        assert sorted(p.name for p in tmp_path.iterdir() if p.suffix != "") == ["w.db"], args
    assert db.read_bytes() == before
