"""compare pairs like with like, on real llama-bench outputs of three builds.

A setting is printed, defaulted (a markdown table hides it at the build's default:
benchvault/parsers/llama_bench.defaults.toml) or unknown (a blank).  Printed and defaulted values
pair only with equal ones; an unknown one pairs with any value and is said; every difference
is said; no comparable rows is exit 1 and one line.  Builds: llama.cpp 1d1ccce
(llama-cpp-python 0.2.90), 4227c9b (0.3.16), 0c1e570 (0.3.36), from fixtures/contract/.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from benchvault.cli import app
from benchvault.reports.settings import llama_bench_default
from conftest import FIXTURES, ingest_into
from test_peers import pipe_rows

CONTRACT = FIXTURES / "contract"
OLD, MID, NEW = (CONTRACT / f"llama.cpp-{v}" for v in ("0.2.90", "0.3.16", "0.3.36"))


def compare(db, *args):
    return CliRunner().invoke(app, ["compare", "--db", str(db), "--report", "llama-bench",
                                    *args])


def notes(text: str) -> list[str]:
    return [ln[2:] for ln in text.splitlines() if ln.startswith("- ")]


def q8_0_only(tmp_path):
    """0.3.36's -o json with its Q8_0 records only: a build that ran the Q8_0 model alone."""
    path = tmp_path / "llama.cpp-0.3.36-q8_0-only.json"
    records = [r for r in json.loads((NEW / "out_json.json").read_text())
               if r["model_type"].endswith("Q8_0")]
    path.write_text(json.dumps(records, indent=2) + "\n")
    return path


def truth(path, **where) -> float:
    [row] = [r for r in json.loads(path.read_text())
             if all(r[k] == v for k, v in where.items())]
    return row["avg_ts"]


def test_printed_plus_full_records_pair_as_the_peer_pairs_them(tmp_path):
    """Baseline: one build's -o json.  Candidate: the next build's markdown table (no CPU, no
    cpu_mask printed) and its -o sql of another invocation (cpu_mask 0x0, a field the older
    build's records do not have: it ran as that setting's first default).  The peer pairs 4
    rows (pp32 and tg8 of both models); so does compare."""
    db = tmp_path / "w.db"
    ingest_into(db, OLD / "out_json.json", MID / "md_default_two_models.md", MID / "out_sql.sql")
    result = compare(db, "--baseline", "build_commit=1d1ccce", "--candidate",
                     "build_commit=4227c9b")
    assert result.exit_code == 0, result.output
    rows = [(r["Model"], r["Test"], r["Baseline t/s"], r["Candidate t/s"])
            for r in pipe_rows(result.stdout)]
    assert rows == [("llama ?B F16", "pp32", "29206.35", "30930.59"),
                    ("llama ?B F16", "tg8", "5152.45", "2991.13"),
                    ("llama ?B Q8_0", "pp32", "30014.46", "15876.40"),
                    ("llama ?B Q8_0", "tg8", "3810.06", "3931.34")]
    said = notes(result.stdout)
    # The markdown rows ran pp64/tg16: nothing to pair with, and it is said.
    assert "Only in the candidate: Model llama ?B F16, Test pp64" in said
    # Either candidate file alone: the records pair the same 4 rows, the table none (exit 1).
    alone = tmp_path / "md.db"
    ingest_into(alone, OLD / "out_json.json", MID / "md_default_two_models.md")
    result = compare(alone, "--baseline", "build_commit=1d1ccce", "--candidate",
                     "build_commit=4227c9b")
    assert result.exit_code == 1
    assert result.stdout.startswith("no comparable rows: ") and result.stdout.count("\n") == 1
    assert "Test pp32, tg8, pp32+tg8; " in result.stdout and "Test pp64, tg16" in result.stdout


def test_a_column_hidden_at_its_default_pairs_only_with_its_default(tmp_path):
    """0.3.16's default table has no `fa` column: flash attention was off (its default).
    Against 0.2.90's JSON with fa 0 and 1 it pairs only with the fa 0 rows."""
    db = tmp_path / "w.db"
    baseline = OLD / "md_sweep_p_n_t_fa.truth.json"      # llama-bench's own -oe json output
    ingest_into(db, baseline, MID / "md_default_two_models.md")
    result = compare(db, "--baseline", "build_commit=1d1ccce", "--candidate",
                     "build_commit=4227c9b")
    assert result.exit_code == 0, result.output
    rows = pipe_rows(result.stdout)
    assert [(r["Model"], r["Test"], r["Baseline t/s"], r["Candidate t/s"]) for r in rows] == [
        ("llama ?B F16", "pp64", f"{truth(baseline, n_threads=2, n_prompt=64, flash_attn=False):.2f}",
         "754.92"),
        ("llama ?B F16", "tg16", f"{truth(baseline, n_threads=2, n_gen=16, flash_attn=False):.2f}",
         "69.49")]
    assert rows[0]["Baseline t/s"] == "3149.13"         # fa 0; fa 1 ran 89.04
    # What the table cannot know is said: no markdown table prints the CPU or the model file.
    said = notes(result.stdout)
    assert "CPU: AMD EPYC vs unknown" in said
    assert "Model filename: tiny-llama-F16.gguf vs unknown" in said
    assert "Only in the candidate: Model llama ?B Q8_0, Test pp64" in said


def test_fa_off_vs_auto_is_said_and_only_paired_when_asked(tmp_path):
    """0.3.36's default table hides fa at its default, auto: it pairs with neither fa 0 nor 1
    (exit 1, one line naming both sides' fa); with --match it pairs and says so."""
    db = tmp_path / "w.db"
    ingest_into(db, OLD / "md_sweep_p_n_t_fa.truth.json", NEW / "md_default_two_models.md")
    args = ["--baseline", "build_commit=1d1ccce", "--candidate", "build_commit=0c1e570"]
    refused = compare(db, *args)
    assert refused.exit_code == 1
    assert "fa off, on;" in refused.stdout and "fa auto;" in refused.stdout
    asked = compare(db, *args, "--match", "test,model_type")
    assert asked.exit_code == 0, asked.output
    rows = pipe_rows(asked.stdout)
    assert [(r["Test"], r["Baseline fa"], r["Candidate fa"], r["Candidate t/s"])
            for r in rows] == [("pp64", "off", "auto", "15458.91"), ("pp64", "on", "auto", "15458.91"),
                               ("tg16", "off", "auto", "3179.77"), ("tg16", "on", "auto", "3179.77")]
    assert compare(db, *args, "--match", "test,model_type", "--strict").exit_code == 1


def test_records_with_auto_fa_and_ngl_minus_one_are_not_paired_in_silence(tmp_path):
    """0.3.36's JSON records flash_attn -1 and n_gpu_layers -1; 0.3.16's 0 and 99."""
    db = tmp_path / "w.db"
    ingest_into(db, MID / "out_json.json", NEW / "out_json.json")
    args = ["--baseline", "build_commit=4227c9b", "--candidate", "build_commit=0c1e570"]
    refused = compare(db, *args)
    assert refused.exit_code == 1 and "ngl 99;" in refused.stdout and "fa auto" in refused.stdout
    asked = compare(db, *args, "--match", "test,model_type")
    assert asked.exit_code == 0, asked.output
    said = notes(asked.stdout)
    assert "fa: off vs auto" in said and "ngl: 99 vs -1" in said
    rows = pipe_rows(asked.stdout)
    assert len(rows) == 8                 # 2 models x pp32, tg8, pp32 @ d32, tg8 @ d32
    first = rows[0]
    assert (first["Model"], first["Test"]) == ("llama ?B F16", "pp32")
    assert first["Baseline t/s"] == f"{truth(MID / 'out_json.json', model_type='llama ?B F16', n_prompt=32, n_gen=0, n_depth=0):.2f}"
    assert first["Candidate t/s"] == f"{truth(NEW / 'out_json.json', model_type='llama ?B F16', n_prompt=32, n_gen=0, n_depth=0):.2f}"


def test_different_models_exit_1_in_two_way_and_are_left_out_of_an_n_way(tmp_path):
    """Three builds: two ran the F16 model, one (0.3.36's JSON, its Q8_0 records only) the
    Q8_0 model.  Two-way: exit 1 naming both models, no internal error.  N-way: the Q8_0 build
    is no column, and why is said."""
    db = tmp_path / "w.db"
    ingest_into(db, OLD / "md_sweep_p_n_t_fa.md", MID / "md_sweep_p_n_t_fa.md", q8_0_only(tmp_path))
    two = compare(db, "--baseline", "build_commit=1d1ccce", "--candidate", "build_commit=0c1e570")
    assert two.exit_code == 1, two.output
    assert "Model llama ?B F16;" in two.stdout and "Model llama ?B Q8_0;" in two.stdout
    many = compare(db, "--baseline", "build_commit=1d1ccce", "--candidate", "build_commit=4227c9b",
                   "--candidate", "build_commit=0c1e570")
    assert many.exit_code == 0, many.output
    header = many.stdout.splitlines()[0]
    assert "build_commit=4227c9b vs build_commit=1d1ccce" in header
    assert "0c1e570 vs" not in header
    assert any(n.startswith("build_commit=0c1e570: no comparable rows: ") and
               "Model llama ?B Q8_0" in n for n in notes(many.stdout))
    rows = pipe_rows(many.stdout)
    assert len(rows) == 17                # 16 configurations (threads x fa x 4 tests) + mean
    # Asked for, the two models pair, and the model is said.
    asked = compare(db, "--baseline", "build_commit=4227c9b", "--candidate",
                    "build_commit=0c1e570", "--match", "test")
    assert asked.exit_code == 0, asked.output
    rows = pipe_rows(asked.stdout)
    assert {(r["Baseline Model"], r["Candidate Model"]) for r in rows} == {
        ("llama ?B F16", "llama ?B Q8_0")}
    assert "Model filename: tiny-llama-F16.gguf vs tiny-llama-Q8_0.gguf" in notes(asked.stdout)


def test_strict_refuses_what_is_unknown_on_one_side(tmp_path):
    """The markdown row's CPU and model file are unknown: paired and said by default, refused
    under --strict."""
    db = tmp_path / "w.db"
    ingest_into(db, OLD / "md_sweep_p_n_t_fa.truth.json", MID / "md_default_two_models.md")
    args = ["--baseline", "build_commit=1d1ccce", "--candidate", "build_commit=4227c9b"]
    assert compare(db, *args).exit_code == 0
    strict = compare(db, *args, "--strict")
    assert strict.exit_code == 1 and strict.stdout.startswith("no comparable rows: ")
    assert "CPU AMD EPYC;" in strict.stdout and "CPU unknown;" in strict.stdout


def test_vllm_runs_of_two_model_names_pair_only_when_asked_and_say_it(tmp_path):
    """vllm bench serve against 0.27.1 and 0.32.0 servers, each serving the tiny model under
    its own name."""
    db = tmp_path / "w.db"
    ingest_into(db, CONTRACT / "vllm-0.27.1" / "c2.txt", CONTRACT / "vllm-0.32.0" / "c2.txt")
    runner = CliRunner()
    base = ["compare", "--db", str(db), "--baseline", "source_id=1", "--candidate",
            "source_id=2"]
    refused = runner.invoke(app, base)
    assert refused.exit_code == 1
    assert refused.stdout == ("no comparable rows: the baseline has Model tiny-llama-593769cf; "
                              "the candidate has Model tiny-llama-cc9952da\n")
    asked = runner.invoke(app, [*base, "--match", "max_concurrency"])
    assert asked.exit_code == 0, asked.output
    [row] = pipe_rows(asked.stdout)
    assert (row["Concurrency"], row["Baseline Model"], row["Candidate Model"],
            row["Baseline Output Tok/s"], row["Candidate Output Tok/s"]) == (
        "c=2", "tiny-llama-593769cf", "tiny-llama-cc9952da", "79.22", "65.70")
    assert notes(asked.stdout) == []


def test_defaults_by_build():
    assert llama_bench_default("flash_attn", "4227c9b", 1) == "0"
    assert llama_bench_default("flash_attn", "0c1e570", 1) == "-1"
    assert llama_bench_default("flash_attn", "abcdef0", 1) is None      # a shallow clone
    assert llama_bench_default("flash_attn", "abcdef0", 3573) == "0"
    assert llama_bench_default("n_batch", "abcdef0", 1993) == "512"
    assert llama_bench_default("n_batch", "abcdef0", 2450) is None      # change not pinned
    assert llama_bench_default("cpu_info", "4227c9b", 1) is None        # never a column


# --- no internal error, whatever is asked --------------------------------------------------------

@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    scratch = tmp_path_factory.mktemp("pairing")
    db = scratch / "w.db"
    ingest_into(db, OLD / "md_default_two_models.md", OLD / "out_json.json",
                MID / "md_sweep_p_n_t_fa.md", MID / "out_sql.sql",
                NEW / "md_default_two_models.md", q8_0_only(scratch),
                CONTRACT / "vllm-0.11.0" / "c2.txt", CONTRACT / "vllm-0.32.0" / "c2.txt",
                CONTRACT / "vllm-0.32.0" / "goodput.txt")
    return db


SIDES = ["build_commit=1d1ccce", "build_commit=4227c9b", "build_commit=0c1e570",
         "model_type~Q8_0", "model_type~F16", "engine=vllm", "max_concurrency=2", "nosuch=1"]
COLUMNS = ["model", "model_type", "build_commit", "flash_attn", "test", "engine",
           "max_concurrency", "n_threads"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(report=st.sampled_from(["llama-bench", "sweep", "engines"]),
       baseline=st.sampled_from(SIDES + ["vllm", "1d1ccce"]),
       candidates=st.lists(st.sampled_from(SIDES), max_size=3),
       by=st.lists(st.sampled_from(COLUMNS), max_size=2),
       match=st.lists(st.sampled_from(COLUMNS), max_size=2),
       strict=st.booleans())
def test_no_combination_is_an_internal_error(warehouse, report, baseline, candidates, by,
                                             match, strict):
    args = ["compare", "--db", str(warehouse), "--report", report, "--baseline", baseline]
    for c in candidates:
        args += ["--candidate", c]
    if by:
        args += ["--by", ",".join(by)]
    if match:
        args += ["--match", ",".join(match)]
    if strict:
        args.append("--strict")
    result = CliRunner().invoke(app, args)
    assert result.exit_code in (0, 1, 2), (args, result.output, result.exception)
    assert "Traceback" not in result.output
