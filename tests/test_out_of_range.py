"""Property: a number too large (or too small) for its column costs that value only.

Over every fixture pair, numbers in the raw file are replaced by ones no float or integer
column holds (``1e3096``, ``91e30901``, ``-1e400``, a 400-digit integer): in a result's value,
a table cell, a command's argument (``-n 1e3096``), a size (``91e30901 MiB``).  Ingest never
stops with an internal error; the file's other rows are still read.
"""

from __future__ import annotations

import random
import re

import pytest

from conftest import ingest_into, rows
from test_fixture_pairs import PAIRS, raw_for

HUGE = ("1e3096", "91e30901", "-1e400", "9" * 400, "1e-400")
NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])")


def _mutations(text: str, seed: str) -> list[str]:
    """Three copies of ``text``, each with every fifth number (from a seeded offset) made
    huge, so each copy reaches into values, cells and arguments alike."""
    spans = [m.span() for m in NUMBER.finditer(text)]
    rng = random.Random(seed)
    out = []
    for k in range(3):
        offset = rng.randrange(5)
        chosen = spans[offset::5]
        pieces, last = [], 0
        for i, (start, end) in enumerate(chosen):
            pieces += [text[last:start], HUGE[(i + k) % len(HUGE)]]
            last = end
        out.append("".join(pieces) + text[last:])
    return out


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: p.parent.name + "/" + p.name[:-14])
def test_out_of_range_numbers_are_no_internal_error(pair, tmp_path):
    raw = raw_for(pair)
    try:
        text = raw.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        pytest.skip("not text")
    for k, mutated in enumerate(_mutations(text, raw.name)):
        path = tmp_path / f"m{k}{raw.suffix}"
        path.write_text(mutated, encoding="utf-8")
        db = tmp_path / f"m{k}.db"
        ingest_into(db, path)          # an internal error raises here
        # The file itself is stored: nothing was rolled back.
        assert rows(db, "SELECT count(*) AS n FROM sources")[0]["n"] == 1
