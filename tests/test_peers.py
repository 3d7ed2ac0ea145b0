"""benchvault beside the peers that compute the same thing, on the same data.

fixtures/contract/peers/compare-llama-bench/ holds two real `llama-bench -o sql` runs (two
models, flash attention 0 and 1; the second relabelled as another build) and what llama.cpp's
own scripts/compare-llama-bench.py printed for them (`make contract` runs it; see
tests/contract/peers.py).  `benchvault compare --report llama-bench` must give the same rows,
values and speedups.
"""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from benchvault.cli import app
from conftest import FIXTURES, ingest_into

PEER = FIXTURES / "contract" / "peers" / "compare-llama-bench"


def pipe_rows(text: str) -> list[dict[str, str]]:
    lines = [ln for ln in text.splitlines() if ln.startswith("|")]
    split = [[c.strip() for c in re.split(r"(?<!\\)\|", ln)[1:-1]] for ln in lines]
    header, body = split[0], [r for r in split[1:] if not all(set(c) <= set("-: ") for c in r)]
    return [dict(zip(header, r)) for r in body]


def test_compare_llama_bench_builds_agrees_with_compare_llama_bench_py(tmp_path):
    about = json.loads((PEER / "ABOUT.json").read_text())
    command = about["compare.truth.md"]
    baseline, candidate = command[command.index("-b") + 1], command[command.index("-c") + 1]
    db = tmp_path / "w.db"
    ingest_into(db, PEER / "build_a.sql", PEER / "build_b.sql")
    result = CliRunner().invoke(app, ["compare", "--db", str(db), "--report", "llama-bench",
                                      "--baseline", f"build_commit={baseline}",
                                      "--candidate", f"build_commit={candidate}"])
    assert result.exit_code == 0, result.output
    ours = pipe_rows(result.stdout)
    truth = pipe_rows((PEER / "compare.truth.md").read_text())
    assert len(ours) == len(truth) == 8          # 2 models x flash attention No/Yes x 2 tests
    for mine, theirs in zip(ours, truth):       # row for row, in the peer's order
        assert mine["CPU"] == theirs["CPU"]
        assert mine["Model"] == theirs["Model"]
        assert {"off": "No", "on": "Yes"}[mine["fa"]] == theirs["FlashAttention"]
        assert mine["Test"] == theirs["Test"]
        for ours_column, truth_column in (("Baseline t/s", f"t/s {baseline}"),
                                          ("Candidate t/s", f"t/s {candidate}")):
            assert float(mine[ours_column]) == pytest.approx(float(theirs[truth_column]),
                                                             abs=0.0101)
        assert float(mine["Speedup"].rstrip("x")) == pytest.approx(float(theirs["Speedup"]),
                                                                   abs=0.0101)


def test_the_setting_that_differs_is_a_column_never_a_mean(tmp_path):
    """Before, compare paired on model and test only and averaged fa=0 with fa=1."""
    db = tmp_path / "w.db"
    ingest_into(db, PEER / "build_a.sql", PEER / "build_b.sql")
    result = CliRunner().invoke(app, ["compare", "--db", str(db), "--report", "llama-bench",
                                      "--baseline", "build_commit=0c1e570",
                                      "--candidate", "build_commit=c0ffee0",
                                      "--where", "model_type~F16"])
    rows = pipe_rows(result.stdout)
    assert [(r["fa"], r["Test"]) for r in rows] == [("off", "pp64"), ("off", "tg16"),
                                                    ("on", "pp64"), ("on", "tg16")]
    # Two decimals, as llama-bench and its compare script print them.
    assert all(re.fullmatch(r"\d+\.\d\d", r["Baseline t/s"]) for r in rows)
