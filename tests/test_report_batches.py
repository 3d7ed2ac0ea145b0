"""A grouped report reads its groups from SQL a batch at a time (memory stays flat on a year of
runs): any batch size gives the very same Markdown, group order and bold included."""

from __future__ import annotations

import pytest

from benchvault.reports import render
from conftest import SEEDS, ingest_into


@pytest.fixture(scope="module")
def seeds_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("batches") / "w.db"
    ingest_into(db, SEEDS)
    return db


@pytest.mark.parametrize("repeats", ["mean", "best", "all"])
def test_every_batch_size_gives_the_same_report(seeds_db, repeats, monkeypatch):
    options = render.ReportOptions(repeats=repeats)
    whole = render.build(seeds_db, ["sweep"], options)
    headings = [line for line in whole.splitlines() if line.startswith("## ")]
    assert [h.split(": ")[1].split(" · ")[0] for h in headings] == [
        "deepseek-v3", "llama-3.1-70b", "llama-2-7b"]
    monkeypatch.setattr(render, "GROUP_BATCH_ROWS", 1)     # one group a batch
    assert render.build(seeds_db, ["sweep"], options) == whole
