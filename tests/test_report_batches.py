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
        "deepseek-v3", "llama-2-7b", "llama-3.1-70b"]
    monkeypatch.setattr(render, "GROUP_BATCH_ROWS", 1)     # one group a batch
    assert render.build(seeds_db, ["sweep"], options) == whole


@pytest.fixture(scope="module")
def fixtures_db(tmp_path_factory):
    from conftest import FIXTURES

    db = tmp_path_factory.mktemp("where") / "w.db"
    ingest_into(db, FIXTURES)
    return db


@pytest.mark.parametrize("where, repeats", [
    (["model~Llama"], "mean"), (["engine=vllm"], "mean"), (["engine=vllm"], "best"),
    (["engine=vllm"], "last"), (["engine=vllm"], "all"), (["max_concurrency=16"], "mean"),
    (["output_throughput>100"], "mean"), (["label~c="], "mean")])
def test_a_where_report_read_a_few_groups_at_a_time_is_the_one_read_whole(
        fixtures_db, where, repeats, monkeypatch):
    """An ungrouped report (a --where) reads, derives and folds a batch of groups at a time:
    the same Markdown as reading every matching run at once, and no read larger than a
    batch's groups."""
    options = render.ReportOptions(where=where, repeats=repeats)
    batched = render._folded_in_batches
    monkeypatch.setattr(render, "_folded_in_batches", lambda *a, **k: None)
    whole = render.build(fixtures_db, ["sweep"], options)
    assert "| " in whole and "No rows match" not in whole

    reads = []
    load_table = render.load_table

    def counted(*args, **kwargs):
        frame = load_table(*args, **kwargs)
        reads.append(len(frame))
        return frame

    monkeypatch.setattr(render, "_folded_in_batches", batched)
    monkeypatch.setattr(render, "load_table", counted)
    monkeypatch.setattr(render, "GROUP_BATCH_ROWS", 5)
    assert render.build(fixtures_db, ["sweep"], options) == whole
    assert len(reads) > 3 and max(reads) < sum(reads)
