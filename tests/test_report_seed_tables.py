"""The six hand-made tables of the strix-halo seed, regenerated from its own raw results.

Each table's command is documented in README.md (Reports) and listed in
fixtures/reports/strix-halo-tables.json.  Every cell must equal the seed's cell; bold must
follow the rule (best per column, direction from the schema, ties all bold), which is not what
the author's hand bolding did in three places.
"""

from __future__ import annotations

import json
import re
import shlex

import pytest
from typer.testing import CliRunner

from benchvault.cli import app
from benchvault.reports.table import unescape_cell
from conftest import FIXTURES, ROOT, SEEDS, ingest_into

SEED = SEEDS / "strix-halo_vllm-vs-llamacpp.md"
TABLES = json.loads((FIXTURES / "reports" / "strix-halo-tables.json").read_text())["tables"]
# Which direction is better, judged by a reader of the seed (not read from the schema).
HIGHER = {"Req/s", "Output Tok/s", "Total Tok/s"}
LOWER = {"Duration (s)", "Mean TTFT (ms)", "Mean TPOT (ms)"}


def split_row(line: str) -> list[str]:
    cells = re.split(r"(?<!\\)\|", line.strip())
    return [c.strip() for c in cells[1:-1]]


def markdown_tables(lines: list[str]) -> list[list[list[str]]]:
    tables, current = [], []
    for line in lines + [""]:
        if line.lstrip().startswith("|"):
            current.append(split_row(line))
        elif current:
            tables.append([r for r in current if not all(set(c) <= set("-: ") for c in r)])
            current = []
    return tables


def seed_table(heading: str) -> list[list[str]]:
    lines = SEED.read_text(encoding="utf-8").splitlines()
    start = next(i for i, ln in enumerate(lines)
                 if ln.startswith("#") and ln.lstrip("#").strip() == heading)
    return markdown_tables(lines[start + 1:])[0]


def plain(cell: str) -> tuple[str, bool]:
    bold = cell.startswith("**") and cell.endswith("**") and len(cell) > 4
    return unescape_cell(cell[2:-2] if bold else cell), bold


def bold_by_rule(header: list[str], body: list[list[str]]) -> list[list[bool]]:
    flags = [[False] * len(header) for _ in body]
    for j, name in enumerate(header):
        if name not in HIGHER | LOWER:
            continue
        values = [float(plain(r[j])[0]) for r in body]
        best = max(values) if name in HIGHER else min(values)
        for i, v in enumerate(values):
            flags[i][j] = v == best
    return flags


@pytest.fixture(scope="module")
def strix_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("strix") / "strix.db"
    ingest_into(db, SEED)
    return db


def generate(command: str, db, monkeypatch) -> list[list[str]]:
    argv = shlex.split(command)
    assert argv[0] == "benchvault"
    argv = [str(db) if a == "strix.db" else a for a in argv[1:]]
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 0, result.output
    tables = markdown_tables(result.stdout.splitlines())
    assert len(tables) == 1, result.stdout
    return tables[0]


@pytest.mark.parametrize("spec", TABLES, ids=[t["heading"] for t in TABLES])
def test_seed_table_regenerated(spec, strix_db, monkeypatch):
    seed = seed_table(spec["heading"])
    made = generate(spec["command"], strix_db, monkeypatch)
    assert [plain(c)[0] for c in made[0]] == [plain(c)[0] for c in seed[0]]
    assert len(made) == len(seed)
    for made_row, seed_row in zip(made[1:], seed[1:]):
        assert [plain(c)[0] for c in made_row] == [plain(c)[0] for c in seed_row]
    header = [plain(c)[0] for c in seed[0]]
    assert [[plain(c)[1] for c in r] for r in made[1:]] == bold_by_rule(header, seed[1:])


def test_hand_bolding_errors_are_fixed(strix_db, monkeypatch):
    """Where the author's bold was wrong, the generated table is right."""
    by_heading = {t["heading"]: t["command"] for t in TABLES}

    def bold_cells(heading):
        table = generate(by_heading[heading], strix_db, monkeypatch)
        header = [plain(c)[0] for c in table[0]]
        return {(header[j], plain(c)[0]) for r in table[1:] for j, c in enumerate(r)
                if plain(c)[1]}

    c1 = bold_cells("c=1 Comparison")
    # Duration: 237.19 (Q4_K_M) beats 237.27 (Q8_0); the seed bolded 237.27.
    assert ("Duration (s)", "237.19") in c1 and ("Duration (s)", "237.27") not in c1
    # TPOT: 39.09 is the lowest; the seed also bolded 76.32.
    assert ("Mean TPOT (ms)", "39.09") in c1 and ("Mean TPOT (ms)", "76.32") not in c1
    # Req/s tie at 0.15: both bold.
    assert {("Req/s", "0.15")} <= c1
    fp16 = bold_cells("c=16 FP16 Comparison")
    # Lower TPOT is better: vLLM's 162.64, not llama.cpp's 175.86 as bolded by hand.
    assert ("Mean TPOT (ms)", "162.64") in fp16 and ("Mean TPOT (ms)", "175.86") not in fp16


def test_commands_are_documented_in_readme():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for spec in TABLES:
        assert spec["command"] in readme, spec["heading"]
