"""One test for every raw/expected fixture pair (the ntc-templates pattern).

`fixtures/<format>/<case>.<ext>` is real (or upstream-derived) tool output; beside it,
`<case>.expected.json` says what the warehouse must hold after ingesting it:

    {"serving_runs": [{"completed": 64, "mean_ttft_ms": 121.23}, ...],   # rows in file order,
     "latency_stats": {"count": 9},                                       # or just a count
     "unparsed_blocks": {"count": 0}}

Each listed row gives a subset of columns; the number of rows must match exactly.
Adding a case is adding two files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import FIXTURES, ingest_into, rows

PAIRS = sorted(p for p in FIXTURES.rglob("*.expected.json"))


def raw_for(expected: Path) -> Path:
    stem = expected.name[: -len(".expected.json")]
    candidates = [p for p in expected.parent.glob(stem + ".*") if ".expected." not in p.name]
    assert len(candidates) == 1, f"{expected}: want one raw file beside it, found {candidates}"
    return candidates[0]


def decoded(row: dict) -> dict:
    out = {}
    for key, value in row.items():
        if isinstance(value, str) and value[:1] in "{[":
            try:
                value = json.loads(value)
            except ValueError:
                pass
        out[key] = value
    return out


@pytest.mark.parametrize("expected", PAIRS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixture_pair(expected: Path, tmp_path):
    want = json.loads(expected.read_text())
    db = tmp_path / "pair.db"
    ingest_into(db, raw_for(expected))
    for table, spec in want.items():
        if table.startswith("_"):
            continue
        got = [decoded(r) for r in rows(db, f"SELECT * FROM {table} ORDER BY rowid")]
        if isinstance(spec, dict):
            assert len(got) == spec["count"], f"{table}: {len(got)} rows"
            continue
        assert len(got) == len(spec), f"{table}: {len(got)} rows, expected {len(spec)}"
        for i, (have, subset) in enumerate(zip(got, spec)):
            for column, value in subset.items():
                assert have[column] == value, f"{table}[{i}].{column}: {have[column]!r} != {value!r}"
