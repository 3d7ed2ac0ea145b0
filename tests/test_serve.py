"""Datasette metadata, canned queries and views, checked without a browser (see
test_serve_browser.py for the end-to-end test).  Numbers come from the seed notes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from benchvault.browse import queries as canned
from benchvault.schemas import views as schema_views
from benchvault.schemas.models import Provenance, col
from benchvault.schemas.store import columns, connect, row_models
from benchvault.serve import metadata, pint_parses, read_schema, table_metadata
from conftest import rows

# Numeric columns that are references, positions or settings without a dimension, not
# measurements; on/off flags (bool in the models) are skipped too.
IDENTIFIERS = {"id", "port", "seed", "line", "line_start", "line_end", "table_index",
               "row_index", "request_index", "engine_index", "main_gpu", "build_number",
               "flash_attn", "no_op_offload", "exit_status"}
DIMENSIONLESS = {"burstiness"}  # shape factor of the arrival distribution
# A value whose unit differs row by row: published_results has a `unit` column beside it,
# a /metrics sample's unit is in its metric's name, a sighting's look-up tolerance is in the
# unit of its kind's look-up column (seconds of duration, t/s of avg_ts).
UNIT_PER_ROW = {("published_results", "value"), ("metrics_samples", "value"),
                ("sightings", "near_tolerance")}


def _sql(meta: dict, db: Path, name: str) -> str:
    return meta["databases"][db.stem]["queries"][name]["sql"]


@pytest.fixture(scope="module")
def seeds_meta(seeds_db):
    return metadata(seeds_db)


def test_every_column_described_and_every_measure_has_a_unit(seeds_db, seeds_meta):
    tables = seeds_meta["databases"][seeds_db.stem]["tables"]
    units = seeds_meta["plugins"]["benchvault"]["units"]
    for name in ("sources", "serving_runs", "latency_stats", "unparsed_blocks", "latency"):
        assert tables[name]["description"]
        for column, description in tables[name]["columns"].items():
            assert description.strip(), f"{name}.{column} has no description"
    for model in row_models():
        for column, kind in columns(model).items():
            if kind not in (int, float) or column in IDENTIFIERS | DIMENSIONLESS \
                    or (model.__table__, column) in UNIT_PER_ROW or column.endswith("_id") \
                    or "bool" in str(model.model_fields[column].annotation):
                continue
            unit = units[model.__table__].get(column)
            assert unit, f"{model.__table__}.{column} is numeric and has no unit"
            assert f"({unit})" in tables[model.__table__]["columns"][column]
    latency = tables["latency"]
    assert latency["units"]["p99_ttft_ms"] == "ms"
    assert all(u == "ms" for c, u in units["latency"].items() if c.endswith("_ms"))


def test_units_facets_and_labels_come_from_the_models(seeds_db, seeds_meta):
    runs = seeds_meta["databases"][seeds_db.stem]["tables"]["serving_runs"]
    assert runs["units"]["duration"] == "s"
    assert runs["units"]["output_throughput"] == "tok/s"
    assert runs["units"]["request_throughput"] == "req/s"
    assert runs["units"]["mean_ttft_ms"] == "ms"
    # A few facets open (the rows start on the first screen); the others one click away.
    assert runs["facets"] == ["engine", "model", "max_concurrency", "source_id"]
    assert "raw_text" not in runs["sortable_columns"]
    assert "output_throughput" in runs["sortable_columns"]
    sources = seeds_meta["databases"][seeds_db.stem]["tables"]["sources"]
    assert sources["label_column"] == "name"  # a row's source_id shows its file name


def test_units_pint_cannot_parse_are_shown_but_not_given_to_pint():
    assert pint_parses("tok/s") and pint_parses("req/s") and pint_parses("GiB")
    assert not pint_parses("furlongs-per-widget")

    class OddUnits(Provenance):
        __table__ = "odd_units_test_only"
        __description__ = "A table whose units Pint does not know."
        id: int | None = None
        widgets: float | None = col("Widgets made.", "furlongs-per-widget")
        weights: float | None = col("Weights loaded.", "GiB")
        blob: dict | None = col("JSON with a unit that must not reach Pint.", "s")

    try:
        meta = table_metadata(OddUnits, list(OddUnits.model_fields), set())
    finally:  # keep the test model out of every later schema
        del OddUnits.__table__  # row_models() only lists classes that set it
    assert meta["units"] == {"weights": "GiB"}
    assert meta["columns"]["widgets"] == "Widgets made. (furlongs-per-widget)"


def test_concurrency_sweep_reads_the_deepseek_tp16_sweep(seeds_db, seeds_meta):
    found = rows(seeds_db, _sql(seeds_meta, seeds_db, "concurrency_sweep"),
                 {"model": "DeepSeek-V3"})
    tp16 = [r for r in found if r["section"].endswith("TP16")]
    assert [(r["max_concurrency"], r["duration"], r["output_throughput"]) for r in tp16] == [
        (64, 699.36, 281.29), (128, 406.81, 483.22), (256, 332.79, 591.65),
        (512, 324.76, 604.53)]
    assert {r["source"] for r in tp16} == {"deepseek-v3_h100_tp-vs-pp_llamacpp.md"}
    assert [r["line_start"] for r in tp16] == [171, 200, 229, 258]


def test_engine_comparison_at_one_concurrency(seeds_db, seeds_meta):
    found = rows(seeds_db, _sql(seeds_meta, seeds_db, "engine_comparison"),
                 {"max_concurrency": "16"})
    assert {r["max_concurrency"] for r in found} == {16}
    best = {(r["engine"], r["model"]): r["output_throughput"] for r in found}
    assert best[("vllm", "meta-llama/Llama-2-7b-chat-hf")] == 72.17
    assert best[("llama.cpp", "/models/gguf/llama-2-7b.Q8_0.gguf")] == 161.34


def test_spec_decode_summary_finds_the_mi300x_draft_runs(seeds_db, seeds_meta):
    found = rows(seeds_db, _sql(seeds_meta, seeds_db, "spec_decode_summary"))
    assert [(r["label"], r["output_throughput"]) for r in found] == [
        ("num_speculative_tokens 5", 1651.57), ("num_speculative_tokens 10", 1351.84),
        ("num_speculative_tokens 5", 1632.46)]
    if "draft_acceptance_rate" in found[0]:  # the launch logs' `Speculative metrics:` lines
        assert [r["draft_acceptance_rate"] for r in found] == [0.797, 0.786, 0.871]


def test_latest_ingest_lists_every_seed(seeds_db, seeds_meta):
    found = rows(seeds_db, _sql(seeds_meta, seeds_db, "latest_ingest"))
    by_name = {r["name"]: r for r in found}
    assert by_name["deepseek-v3_h100_tp-vs-pp_llamacpp.md"]["runs"] == 11
    assert by_name["strix-halo_vllm-vs-llamacpp.md"]["runs"] == 11


def test_latency_view_pivots_the_printed_stats(seeds_db):
    found = rows(seeds_db, "SELECT l.* FROM latency l JOIN sources s ON s.id = l.source_id "
                           "WHERE s.name LIKE 'deepseek%' ORDER BY l.line_start LIMIT 1")
    # The first DeepSeek block (PP=2 TP=8, c=64) printed these TTFT figures.
    assert found[0]["mean_ttft_ms"] == 2639.01
    assert found[0]["p99_ttft_ms"] == 5234.55
    assert found[0]["p99_9_ttft_ms"] is None  # not printed


def test_metadata_without_the_tables_a_query_needs(tmp_path):
    """A database with only some tables: queries and views over the missing ones are left out."""
    db_path = tmp_path / "partial.db"
    conn = sqlite3.connect(db_path)
    conn.execute("CREATE TABLE sources (id INTEGER PRIMARY KEY, name TEXT, path TEXT, "
                 "ingested_at TEXT, runs INTEGER)")
    conn.close()
    meta = metadata(db_path)
    database = meta["databases"]["partial"]
    assert set(database["queries"]) == {"latest_ingest"}
    assert set(database["tables"]) == {"sources"}
    assert "runs" in database["tables"]["sources"]["columns"]
    assert "sha256" not in database["tables"]["sources"]["columns"]


def test_views_are_created_only_when_their_tables_exist(tmp_path):
    connect(tmp_path / "w.db").close()
    present = read_schema(tmp_path / "w.db")
    assert "latency" in present
    for view in schema_views.VIEWS:
        assert (view.name in present) == (set(view.requires) <= set(present))
    assert canned.canned_queries({}) == []


def test_analysis_queries_with_their_charts(seeds_db, seeds_meta):
    """SLOs, the frontier and llama-bench across builds are one click away, charts preset."""
    queries = seeds_meta["databases"][seeds_db.stem]["queries"]
    charts = seeds_meta["plugins"]["benchvault"]["charts"]
    for name in ("configuration_repeats", "runs_seen_more_than_once", "slo_check",
                 "pareto_frontier",
                 "llama_bench_trend"):
        assert name in queries, name
    assert charts["pareto_frontier"]["color_column"] == "frontier"
    slo = rows(seeds_db, _sql(seeds_meta, seeds_db, "slo_check"),
               {"max_p99_ttft_ms": "", "max_mean_tpot_ms": "100"})
    # mi300x tp8 printed a mean TPOT of 36.10 ms, tp2 + pp4 271.65 ms
    by_tpot = {r["mean_tpot_ms"]: r["verdict"] for r in slo}
    assert by_tpot[36.10] == "pass" and by_tpot[271.65] == "fail"
    frontier = rows(seeds_db, _sql(seeds_meta, seeds_db, "pareto_frontier"))
    mi300x = [r for r in frontier if r["group_title"] == "llama-3.1-70b · MI300X · sharegpt"]
    best = [r for r in mi300x if r["frontier"] == "frontier"]
    assert len(best) == 1 and round(best[0]["per_gpu_tok_s"], 2) == round(2993.85 / 8, 2)


def test_facets_are_counted_once_on_an_immutable_warehouse(seeds_db, seeds_meta):
    """`serve` serves the warehouse immutable: a page's facet counts are taken from the first
    load of that query, not counted again on every load.  A mutable database (anything that
    could change under the page) is counted every time."""
    import asyncio

    from datasette.app import Datasette

    from benchvault.serve import BROWSE

    async def loads(immutable: bool) -> tuple[list[dict], list[str]]:
        ds = Datasette(immutables=[str(seeds_db)] if immutable else [],
                       files=[] if immutable else [str(seeds_db)], metadata=seeds_meta,
                       plugins_dir=str(BROWSE / "plugins"))
        await ds.invoke_startup()
        database = ds.databases[seeds_db.stem]
        counted: list[str] = []
        real = database.execute

        async def logged(sql, *args, **kwargs):
            if "count(*) as count" in sql:
                counted.append(sql)
            return await real(sql, *args, **kwargs)

        database.execute = logged
        pages = []
        for _ in range(3):
            response = await ds.client.get(f"/{seeds_db.stem}/serving_runs.json?_size=0")
            assert response.status_code == 200
            pages.append(response.json()["facet_results"])
        return pages, counted

    pages, counted = asyncio.run(loads(immutable=True))
    facets = pages[0].get("results", pages[0])
    concurrency = {r["value"]: r["count"] for r in facets["max_concurrency"]["results"]}
    assert concurrency[16] >= 3 and len(facets) == 4
    assert pages[1] == pages[2] == pages[0]
    assert len(counted) == len(facets)            # each facet counted on the first load only
    _, counted_mutable = asyncio.run(loads(immutable=False))
    assert len(counted_mutable) == 3 * len(facets)
