"""The default report folds repeats from a narrow read (benchvault.reports.narrowfold) instead of
deriving and folding every run in pandas: the Markdown must be the very same, derived
metrics and spreads included, and a configuration whose runs scale differently must still
be folded run by run."""

from __future__ import annotations


import pytest

from benchvault.reports import render, narrowfold
from benchvault.reports.experiments import SERVING
from benchvault.reports.kinds import kind
from benchvault.reports.query import connect_readonly
from benchvault.schemas.store import connect
from conftest import FIXTURES, SEEDS, ingest_into, rows

REPEATS = FIXTURES / "experiments" / "derived-three-repeats.md"


MODELS, BATCHES = 4, 15


def copy_runs(warehouse, copies: int) -> None:
    """Every serving run copied ``copies - 1`` times, each copy under one of MODELS model
    variants and BATCHES `batch` tags (repeats of ~copies / 60 runs each), configurations
    and groups refreshed and counted: many repeats with varied contexts, quickly."""
    from benchvault.experiments.refresh import refresh_configurations, summarise

    runs = [r[1] for r in warehouse.execute("PRAGMA table_info(serving_runs)")]
    stats = [r[1] for r in warehouse.execute("PRAGMA table_info(latency_stats)")]
    top = warehouse.execute("SELECT max(id) FROM serving_runs").fetchone()[0]
    stride = 10 ** len(str(top))
    copied = [c for c in runs if c not in ("id", "model", "tags", "config_id", "group_id")]
    warehouse.execute("BEGIN")
    for i in range(1, copies):
        warehouse.execute(
            f"INSERT INTO serving_runs (id, model, tags, {', '.join(copied)}) "
            f"SELECT id + ?, model || '-v{i % MODELS}', "
            f"json_object('batch', '{i % BATCHES}'), {', '.join(copied)} "
            f"FROM serving_runs WHERE id <= ?", [i * stride, top])
        warehouse.execute(
            f"INSERT INTO latency_stats ({', '.join(c for c in stats if c != 'id')}) "
            f"SELECT {', '.join('run_id + ?' if c == 'run_id' else c for c in stats if c != 'id')}"
            f" FROM latency_stats WHERE run_id <= ?", [i * stride, top])
    ids = [r[0] for r in warehouse.execute("SELECT id FROM serving_runs WHERE id > ?", [top])]
    refresh_configurations(warehouse, ids)
    summarise(warehouse)
    warehouse.execute("COMMIT")


@pytest.fixture(scope="module")
def repeats_db(tmp_path_factory):
    """The seeds, the contract captures and three printed repeats, every run copied 120
    times over 4 model variants and 15 tags (repeats of 2 runs each), copies' numbers moved
    a little so that repeats differ."""
    db = tmp_path_factory.mktemp("fold") / "w.db"
    ingest_into(db, SEEDS, FIXTURES / "contract", REPEATS)
    warehouse = connect(db)
    top = warehouse.execute("SELECT max(id) FROM serving_runs").fetchone()[0]
    copy_runs(warehouse, 120)
    # copy i has ids i * stride + the original's; repeats are copies 60 apart
    copy = f"(id / {10 ** len(str(top))})"
    warehouse.execute(f"UPDATE serving_runs SET output_throughput = output_throughput * "
                      f"(1 + {copy} % 7 / 100.0), mean_ttft_ms = mean_ttft_ms * "
                      f"(1 - {copy} % 11 / 50.0), duration = duration + {copy} % 13 "
                      f"WHERE id > ?", [top])
    warehouse.conn.commit()
    warehouse.close()
    return db


def _run_by_run(monkeypatch):
    monkeypatch.setattr(render, "_folded_narrow", lambda *args: None)


@pytest.mark.parametrize("options", [
    render.ReportOptions(),
    render.ReportOptions(columns=["model", "max_concurrency", "output_throughput",
                                  "output_throughput_per_gpu", "request_goodput",
                                  "p99_itl_ms", "load_minutes", "gpus", "n"]),
    render.ReportOptions(scale_replicas=False, sort=["-mean_ttft_ms"]),
    # duration is divided by replicas (`tp2 x 4` in a seed), its spread too
    render.ReportOptions(columns=["model", "max_concurrency", "duration", "replicas", "n"]),
], ids=["default", "derived-columns", "unscaled-sorted", "duration-alone"])
def test_narrow_fold_gives_the_same_report(repeats_db, options, monkeypatch):
    folded = render.build(repeats_db, ["sweep"], options)
    assert "± " in folded and "| 2 " in folded          # repeats were folded: mean ± sd, n
    if "replicas" in options.columns:
        assert "| 4 " in folded
    _run_by_run(monkeypatch)
    assert render.build(repeats_db, ["sweep"], options) == folded


def test_the_narrow_rows_read_through_arrow_or_tuples_alike(repeats_db, monkeypatch):
    """The default sweep reads its narrow rows through the ADBC driver; without it (or on a
    value of another type) through sqlite3's tuples: the same report either way."""
    def no_tuples(cursor, order):
        raise AssertionError("read as tuples: the Arrow path was not taken")

    monkeypatch.setattr(narrowfold, "_read_runs", no_tuples)
    through_arrow = render.build(repeats_db, ["sweep"])
    # Arrays sized far below the runs (an id set by hand caps them): they double as they fill.
    monkeypatch.setattr(narrowfold, "MAX_PREALLOCATED_RUNS", 3)
    assert render.build(repeats_db, ["sweep"]) == through_arrow
    monkeypatch.undo()
    monkeypatch.setattr(narrowfold, "_read_runs_arrow", lambda *args: None)
    assert render.build(repeats_db, ["sweep"]) == through_arrow


def test_report_all_is_the_same(repeats_db, monkeypatch):
    folded = render.build(repeats_db, ["all"])
    _run_by_run(monkeypatch)
    assert render.build(repeats_db, ["all"]) == folded


def test_the_three_printed_repeats_fold_to_their_mean_and_spread(repeats_db):
    conn = connect_readonly(repeats_db)
    spec = kind("sweep")
    frame = render._folded_narrow(conn, spec, render.ReportOptions(), SERVING)
    conn.close()
    [row] = frame[(frame["model"] == "meta-llama/Llama-3.1-8B-Instruct")].to_dict("records")
    # printed: 830.09, 809.61, 849.93 tok/s; TTFT 52.31, 55.87, 49.90 ms
    assert row["n"] == 3
    assert round(row["output_throughput"], 2) == 829.88
    assert round(row["_std_output_throughput"], 2) == 20.16
    assert round(row["_std_mean_ttft_ms"], 2) == 3.00
    assert not row["_mixed"]


def test_a_configuration_whose_runs_scale_differently_is_folded_run_by_run(tmp_path,
                                                                            monkeypatch):
    db = tmp_path / "w.db"
    ingest_into(db, REPEATS)
    # One repeat's label now says tp4: 4 GPUs for it alone (no launch tells the others').
    [second] = rows(db, "SELECT id FROM serving_runs WHERE section LIKE '%Repeat 2%'")
    warehouse = connect(db)
    warehouse.execute("UPDATE serving_runs SET label = 'tp4' WHERE id = ?", [second["id"]])
    warehouse.conn.commit()
    warehouse.close()
    conn = connect_readonly(db)
    folded = narrowfold.fold_runs(conn, "serving_runs", "config_id",
                               lambda c: c in ("output_throughput",), {"output_throughput"})
    conn.close()
    assert folded is not None and folded.frame["_mixed"].tolist() == [True]
    options = render.ReportOptions(columns=["output_throughput", "output_throughput_per_gpu",
                                            "n"])
    report = render.build(db, ["sweep"], options)
    # the per-GPU mean mixes 1-GPU-unknown runs with a 4-GPU one as the pandas fold does
    assert "| 3 " in report
    _run_by_run(monkeypatch)
    assert render.build(db, ["sweep"], options) == report


def test_narrow_columns_join_batches_as_pandas_would():
    """The narrow read's columns (filled batch by batch, sorted in place): an integer column
    that meets a NULL in a later batch turns float, a capacity too small doubles, and the
    order is pandas' stable sort with ties kept in reading order."""
    import numpy as np
    import pandas as pd

    batches = [
        {"source_id": np.array([2, 1, 2]), "line_start": np.array([5, 9, 5]),
         "completed": np.array([10, 11, 12]), "mean_ttft_ms": np.array([1.5, 2.5, 3.5])},
        {"source_id": np.array([1, 2]), "line_start": np.array([9, 1]),
         "completed": np.array([np.nan, 14.0]), "mean_ttft_ms": np.array([4.5, np.nan])},
    ]
    names = list(batches[0])
    columns = narrowfold._Columns(names, capacity=2)
    for batch in batches:
        columns.add([batch[name] for name in names])
    got = columns.frame(["source_id", "line_start"])
    expected = pd.concat([pd.DataFrame(b) for b in batches], ignore_index=True).sort_values(
        ["source_id", "line_start"], kind="stable", na_position="first", ignore_index=True)
    pd.testing.assert_frame_equal(got, expected)
    assert got["completed"].dtype == np.float64
    assert got["completed"].fillna(-1).tolist() == [11.0, -1, 14.0, 10.0, 12.0]
    assert narrowfold._Columns(names, capacity=0).frame(["source_id"]).empty

    # A NULL in an order column (NaN): pandas sorts, NULLs first, as the tuple path does.
    columns = narrowfold._Columns(names, capacity=8)
    for batch in batches:
        columns.add([batch[name] for name in names])
    by_ttft = columns.frame(["mean_ttft_ms", "source_id"])
    assert np.isnan(by_ttft["mean_ttft_ms"][0])
    assert by_ttft["mean_ttft_ms"].tolist()[1:] == [1.5, 2.5, 3.5, 4.5]


def test_group_means_are_each_groups_own_and_repeats_of_one_number_average_to_it():
    """group_mean_std: a group's mean and spread depend on its own values only (pandas'
    grouped mean of the same 40 values differed with the frame around them), 40 repeats
    that printed 71.515 average to 71.515 (half-up: 71.52, as each run prints), and a
    mean is within two ulps of the exact one."""
    import math
    import random
    from fractions import Fraction

    import numpy as np
    import pandas as pd

    from benchvault.reports.experiments import group_mean_std

    random.seed(5)
    groups = {"a": [71.515] * 40, "b": [8.0, 8.01] * 40,
              "c": [round(random.uniform(1, 5000), 2) for _ in range(37)],
              "d": [float("nan"), 3.25], "e": [float("nan")] * 3}
    keys = pd.Series([k for k, values in groups.items() for _ in values], name="config")
    values = pd.DataFrame({"tput": [v for vs in groups.values() for v in vs]})
    means, spreads = group_mean_std(values, keys)
    assert list(means.index) == list(groups)
    assert means.loc["a", "tput"] == 71.515 and spreads.loc["a", "tput"] == 0.0
    for key in ("b", "c"):
        exact = sum(map(Fraction, groups[key])) / len(groups[key])
        assert abs(means.loc[key, "tput"] - float(exact)) <= 2 * math.ulp(float(exact))
        assert spreads.loc[key, "tput"] == pytest.approx(np.std(groups[key], ddof=1), rel=1e-12)
    assert means.loc["d", "tput"] == 3.25 and math.isnan(spreads.loc["d", "tput"])
    assert math.isnan(means.loc["e", "tput"]) and math.isnan(spreads.loc["e", "tput"])

    # The same group among other rows, in another order of groups: the very same numbers.
    shuffled = list(groups.items())[::-1] + [("z", [1e9, 3.0, 7.5])]
    keys2 = pd.Series([k for k, vs in shuffled for _ in vs])
    values2 = pd.DataFrame({"tput": [v for _, vs in shuffled for v in vs]})
    means2, spreads2 = group_mean_std(values2, keys2)
    for key in groups:
        assert means2.loc[key, "tput"] == means.loc[key, "tput"] or \
            math.isnan(means.loc[key, "tput"])
        assert spreads2.loc[key, "tput"] == spreads.loc[key, "tput"] or \
            math.isnan(spreads.loc[key, "tput"])


def test_fold_repeats_means_are_the_repeated_number():
    """fold_repeats through group_mean_std: 40 runs that printed 2993.85 fold to 2993.85
    (pandas' grouped mean gave 2993.8500000000013 here), whatever runs come before."""
    import pandas as pd

    from benchvault.reports.experiments import fold_repeats

    for before in (0, 7, 50):
        frame = pd.DataFrame({"config_id": [1] * before + [2] * 40,
                              "output_throughput": [123.456] * before + [2993.85] * 40})
        folded = fold_repeats(frame, "config_id", ["output_throughput"], "mean")
        row = folded[folded["config_id"] == 2].iloc[0]
        assert row["n"] == 40 and row["output_throughput"] == 2993.85
        assert row["_std_output_throughput"] == 0.0


def test_a_run_without_a_key_is_its_own_even_beside_a_key_named_like_its_row():
    """Row 2 without a configuration and configuration 2 are two rows, not one repeat."""
    import pandas as pd

    from benchvault.reports.experiments import fold_repeats

    for keys in (pd.array([1, 1, None, 2], dtype="Int64"), [1, 1, None, 2]):
        frame = pd.DataFrame({"config_id": keys, "x": [1.0, 3.0, 5.0, 7.0]})
        folded = fold_repeats(frame, "config_id", ["x"], "mean")
        assert folded["x"].tolist() == [2.0, 5.0, 7.0]
        assert folded["n"].tolist() == [2, 1, 1]
