"""The questions people ask of benchmark results, answered on the seed notes and the contract
captures: N-way comparison, SLOs after the fact, the Pareto frontier, trends over builds.

Every expected number is computed here by hand from values printed in the fixtures.
"""

from __future__ import annotations

import json
import math
import re

import pytest
from typer.testing import CliRunner

from benchvault.cli import app
from benchvault.reports.render import ReportOptions, make_reports
from conftest import FIXTURES, SEEDS, ingest_into

STRIX = SEEDS / "strix-halo_vllm-vs-llamacpp.md"
DEEPSEEK = SEEDS / "deepseek-v3_h100_tp-vs-pp_llamacpp.md"
MI300X = SEEDS / "mi300x_llama70b_tp-pp_specdecode.md"
TREES = ("0.2.90", "0.3.16", "0.3.36")


def pipe_rows(text: str) -> list[dict[str, str]]:
    lines = [ln for ln in text.splitlines() if ln.startswith("|")]
    split = [[c.strip() for c in re.split(r"(?<!\\)\|", ln)[1:-1]] for ln in lines]
    header, body = split[0], [r for r in split[1:] if not all(set(c) <= set("-: ") for c in r)]
    return [dict(zip(header, r)) for r in body]


def invoke(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def seeds(tmp_path_factory):
    db = tmp_path_factory.mktemp("analyses") / "seeds.db"
    ingest_into(db, STRIX, DEEPSEEK, MI300X)
    return db


# --- N-way comparison ----------------------------------------------------------------------------

def test_vllm_against_llama_cpp_on_llama_2_7b(seeds, tmp_path):
    result = invoke("compare", "--db", seeds, "--by", "engine", "--baseline", "vllm",
                    "--where", "model~Llama-2-7b-chat-hf", "--out", tmp_path)
    assert result.exit_code == 0, result.output
    rows = pipe_rows(result.stdout)
    # the seed's c=1 and c=16 tables: vLLM 8.61 / 72.17 tok/s, llama.cpp f16 12.75 / 66.85
    c1, c16 = 12.75 / 8.61, 66.85 / 72.17
    assert [(r["Concurrency"], r["vLLM Output Tok/s"], r["llama.cpp Output Tok/s"],
             r["llama.cpp vs vLLM"]) for r in rows] == [
        ("c=1", "8.61", "12.75", f"{c1:.2f}x"), ("c=16", "72.17", "66.85", f"{c16:.2f}x"),
        ("geometric mean", "", "", f"{math.sqrt(c1 * c16):.2f}x")]
    assert "Only the baseline has Concurrency c=8" in result.stdout      # not dropped silently
    chart = tmp_path / "compare-output_throughput.png"
    assert chart.read_bytes()[:4] == b"\x89PNG" and (tmp_path / "compare.md").exists()


def test_one_baseline_many_candidates_each_with_its_ratio(seeds):
    result = invoke("compare", "--db", seeds, "--by", "model", "--baseline",
                    "meta-llama/Llama-2-7b-chat-hf", "--where", "source~strix")
    rows = pipe_rows(result.stdout)
    columns = [c for c in rows[0] if c.endswith("vs meta-llama/Llama-2-7b-chat-hf")]
    assert len(columns) == 5                  # every other model of the note is a candidate
    q4 = "llama-2-7b.Q4_K_M.gguf vs meta-llama/Llama-2-7b-chat-hf"
    a, b = 24.75 / 8.61, 178.68 / 72.17
    assert [r[q4] for r in rows] == [f"{a:.2f}x", f"{b:.2f}x", f"{math.sqrt(a * b):.2f}x"]
    # Lower-is-better metrics are inverted: TTFT 121.23 ms -> 145.18 ms is 0.84x.
    ttft = invoke("compare", "--db", seeds, "--by", "model", "--baseline",
                  "meta-llama/Llama-2-7b-chat-hf", "--where", "source~strix", "--metric",
                  "mean_ttft_ms")
    assert pipe_rows(ttft.stdout)[0][q4] == f"{121.23 / 145.18:.2f}x"


def test_fail_on_regression_counts_every_candidate(seeds):
    args = ["compare", "--db", seeds, "--by", "engine", "--baseline", "vllm", "--where",
            "model~Llama-2-7b-chat-hf"]
    # llama.cpp at c=16 is 0.93x: 7.4% worse
    assert invoke(*args, "--fail-on-regression", "5").exit_code == 1
    assert invoke(*args, "--fail-on-regression", "10").exit_code == 0


# --- SLOs after the fact -------------------------------------------------------------------------

def test_highest_concurrency_meeting_the_slo_on_the_deepseek_sweeps(seeds):
    [summary, runs] = make_reports(seeds, "slo", ReportOptions(
        slos=["mean_ttft_ms<=5000"], where=["source~deepseek"]))
    best = {r["Series"]: r for r in pipe_rows(summary.markdown_table)}
    # TP16: 2223.85, 2340.63 ms at c=64/128, then 13584.20; PP=2 TP=8: 2639.01, 4602.03, 36067.72
    tp16 = best["vLLM · TP 16 · PP 1 · Num prompts 1024"]
    pp2 = best["vLLM · TP 8 · PP 2 · Num prompts 1024"]
    assert tp16["Highest Concurrency meeting every SLO"] == "c=128"
    assert tp16["Output Tok/s there"] == "483.22"
    assert pp2["Highest Concurrency meeting every SLO"] == "c=128"
    assert pp2["Output Tok/s there"] == "341.74"
    assert (tp16["Pass"], tp16["Fail"], tp16["Unknown"]) == ("2", "2", "0")
    verdicts = [(r["Concurrency"], r["Verdict"]) for r in pipe_rows(runs.markdown_table)
                if r["Series"] == "vLLM · TP 16 · PP 1 · Num prompts 1024"]
    assert verdicts == [("c=64", "pass"), ("c=128", "pass"), ("c=256", "fail"),
                        ("c=512", "fail")]


def test_a_missing_statistic_is_unknown_never_a_pass(seeds):
    # The seeds print no E2E latency: nothing can pass a p99_e2el_ms SLO.
    [summary, runs] = make_reports(seeds, "slo", ReportOptions(
        slos=["p99_e2el_ms<=1000", "mean_ttft_ms<=5000"], where=["source~deepseek"]))
    verdicts = {r["Verdict"] for r in pipe_rows(runs.markdown_table)}
    assert verdicts == {"unknown (no p99_e2el_ms stored)", "fail"}
    assert {r["Highest Concurrency meeting every SLO"] for r in
            pipe_rows(summary.markdown_table)} == {"none"}


def test_bad_slo_expressions_say_what_is_wrong(seeds):
    unknown = invoke("report", "slo", "--db", seeds, "--slo", "p99_ttft<=500")
    assert unknown.exit_code == 2 and "unknown metric 'p99_ttft'" in unknown.output
    assert "p99_ttft_ms" in unknown.output                   # the metrics are listed
    no_op = invoke("report", "slo", "--db", seeds, "--slo", "p99_ttft_ms 500")
    assert no_op.exit_code == 2 and "METRIC<=VALUE" in no_op.output
    nothing = invoke("report", "slo", "--db", seeds, "--slo", "p99_ttft_ms<=500", "--where",
                     "engine=vllm", "--where", "max_concurrency=3")
    assert "`max_concurrency=3` left none of the" in nothing.stdout


# --- Pareto frontier ------------------------------------------------------------------------------

def test_pareto_over_the_mi300x_configurations(seeds, tmp_path):
    result = invoke("report", "pareto", "--db", seeds, "--where", "source~mi300x", "--out",
                    tmp_path)
    assert result.exit_code == 0, result.output
    text = (tmp_path / "report.md").read_text()
    rows = {r["Configuration"]: r for r in pipe_rows(text)}
    tp8 = rows["TP 8 · PP 1"]
    # 1000 / 36.10 ms TPOT; 2993.85 tok/s on 8 GPUs
    assert tp8["Per-user Tok/s"] == f"{1000 / 36.10:.2f}" and tp8["Output Tok/s/GPU"] == \
        f"{2993.85 / 8:.2f}"
    assert tp8["Frontier"] == "**yes**"
    replicas = rows["TP 2 · PP 1 · Replicas 4"]      # 671.54 x 4 replicas on 8 GPUs
    assert replicas["Output Tok/s/GPU"] == f"{671.54 * 4 / 8:.2f}"
    assert replicas["GPUs"] == "8" and replicas["Frontier"] == ""
    assert [name for name, r in rows.items() if r["Frontier"]] == ["TP 8 · PP 1"]
    png = re.search(r"\(([^)]+\.png)\)", text).group(1)
    assert (tmp_path / png).read_bytes()[:4] == b"\x89PNG"


# --- Trends ------------------------------------------------------------------------------------

def test_trend_over_three_llama_cpp_builds(tmp_path):
    db = tmp_path / "trees.db"
    ingest_into(db, *(FIXTURES / "contract" / f"llama.cpp-{t}" for t in TREES))
    truth = {t: json.loads((FIXTURES / "contract" / f"llama.cpp-{t}" /
                            "md_sweep_p_n_t_fa.truth.json").read_text()) for t in TREES}
    builds = [truth[t][0]["build_commit"] for t in TREES]
    tg16 = [next(r["avg_ts"] for r in truth[t] if r["n_gen"] == 16 and r["n_prompt"] == 0
                 and r["n_threads"] == 2 and int(r["flash_attn"]) == 1) for t in TREES]
    result = invoke("report", "trend", "--db", db, "--over", "build", "--order",
                    ",".join(builds), "--where", "test=tg16", "--where", "n_threads=2",
                    "--where", "flash_attn=1", "--where", "model_type~F16", "--threshold", "10",
                    "--fail-on-regression")
    rows = pipe_rows(result.stdout)
    assert [r["Build"] for r in rows] == builds
    assert [r["t/s"] for r in rows] == [f"{v:.2f}" for v in tg16]
    changes = [f"{(b / a - 1) * 100:+.1f}%" for a, b in zip(tg16, tg16[1:])]
    assert [r["Change"] for r in rows] == ["", *changes]
    flagged = [(b / a - 1) * 100 < -10 for a, b in zip(tg16, tg16[1:])]
    assert [r["Flag"] == "**REGRESSION**" for r in rows] == [False, *flagged]
    assert result.exit_code == (1 if any(flagged) else 0)
