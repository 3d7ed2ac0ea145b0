"""Canned queries: the comparisons a benchmark engineer opens in one click.

Each query is built from the database actually being served (``present``: table or view name
→ its columns) and returns ``None`` when what it reads is not there yet, so a warehouse without
llama-bench results or server launches simply lists fewer queries.  Where a query reads a
table whose columns belong to another area, it picks them from that table's row model (its
facet columns and its columns with units) instead of naming them here.

Every query shows where each row came from (``source`` file name and ``line_start``), and
names its output columns after model columns so Datasette shows their units.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from ..schemas.models import Row
from ..schemas.store import row_models

Present = Mapping[str, Sequence[str]]

# Text a speculative-decoding run carries in its context (heading, label, command, arguments).
SPEC_DECODE_WORDS = ("specul", "draft", "eagle", "medusa", "mtp", "ngram")
# server_launches columns that are set only when a launch used speculative decoding.
SPEC_DECODE_LAUNCH_COLUMNS = ("speculative_model", "num_speculative_tokens")


@dataclass(frozen=True)
class CannedQuery:
    name: str
    title: str
    description: str
    build: Callable[[Present], str | None]
    # datasette-vega chart shown with the results: mark, x_column, y_column, color_column...
    chart: dict[str, str] = field(default_factory=dict)


def _has(present: Present, table: str, *columns: str) -> bool:
    return table in present and all(c in present[table] for c in columns)


def _pick(present: Present, table: str, alias: str, columns: Sequence[str]) -> list[str]:
    """``alias.column`` for the columns ``table`` really has, in the order given."""
    return [f"{alias}.{c}" for c in columns if c in present.get(table, ())]


def _model(table: str) -> type[Row] | None:
    return next((m for m in row_models() if m.__table__ == table), None)


def _extra(model: type[Row], name: str) -> dict[str, Any]:
    extra = model.model_fields[name].json_schema_extra
    return extra if isinstance(extra, dict) else {}


def _is_json(model: type[Row], name: str) -> bool:
    annotation = str(model.model_fields[name].annotation)
    return "dict" in annotation or "list" in annotation


def _facets_and_measures(model: type[Row], present_columns: Sequence[str]):
    names = [n for n in model.model_fields if n in present_columns]
    facets = [n for n in names if _extra(model, n).get("facet")]
    measures = [n for n in names if _extra(model, n).get("unit") and n not in facets
                and not _is_json(model, n)]
    measures.sort(key=lambda n: not _extra(model, n).get("better"))  # headline metrics first
    return facets, measures


def _where_from(present: Present, table: str, alias: str) -> tuple[str, str]:
    """Columns and join that name the source file and line of each row."""
    if _has(present, table, "source_id") and "sources" in present:
        cols = ["s.name AS source"] + _pick(present, table, alias, ("line_start",))
        return ", ".join(cols), f" LEFT JOIN sources s ON s.id = {alias}.source_id"
    return ", ".join(_pick(present, table, alias, ("line_start",))) or "NULL AS source", ""


RUN_METRICS = ("completed", "duration", "request_throughput", "output_throughput",
               "total_token_throughput", "mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms",
               "mean_tpot_ms", "p99_tpot_ms", "mean_itl_ms", "p99_itl_ms")


def concurrency_sweep(present: Present) -> str | None:
    if not _has(present, "serving_runs", "max_concurrency", "model"):
        return None
    cols = _pick(present, "serving_runs", "r", ("model", "engine", "section", "label",
                                                 "max_concurrency", *RUN_METRICS))
    where_cols, join = _where_from(present, "serving_runs", "r")
    return (f"SELECT r.id AS run_id, {', '.join(cols)}, {where_cols}\n"
            f"FROM serving_runs r{join}\n"
            "WHERE r.max_concurrency IS NOT NULL\n"
            "  AND (:model = '' OR r.model LIKE '%' || :model || '%')\n"
            "ORDER BY r.model, r.engine, r.section, r.max_concurrency, r.line_start")


def engine_comparison(present: Present) -> str | None:
    if not _has(present, "serving_runs", "engine", "max_concurrency", "output_throughput"):
        return None
    metrics = _pick(present, "serving_runs", "r", ("request_throughput", "total_token_throughput",
                                                    "mean_ttft_ms", "mean_tpot_ms", "mean_itl_ms",
                                                    "label"))
    where_cols, join = _where_from(present, "serving_runs", "r")
    # SQLite returns the other columns from the row that holds MAX(): the best run's.
    return ("SELECT r.max_concurrency, r.engine, r.model, COUNT(*) AS runs,\n"
            f"  MAX(r.output_throughput) AS output_throughput, {', '.join(metrics)},\n"
            f"  r.id AS run_id, {where_cols}\n"
            f"FROM serving_runs r{join}\n"
            "WHERE r.output_throughput IS NOT NULL\n"
            "  AND (:max_concurrency = '' OR r.max_concurrency = CAST(:max_concurrency AS INTEGER))\n"
            "GROUP BY r.max_concurrency, r.engine, r.model\n"
            "ORDER BY r.max_concurrency, r.model, output_throughput DESC")


OFFLINE_METRICS = ("prefill_latency", "prefill_throughput", "median_decode_latency",
                   "median_decode_throughput", "total_latency", "overall_throughput",
                   "avg_latency", "p50_latency", "p99_latency", "requests_per_second",
                   "tokens_per_second", "output_tokens_per_second", "output_throughput")


def offline_sweep(present: Present) -> str | None:
    """Offline cases (never a serving run) by group, configuration and batch size."""
    if not _has(present, "offline_runs", "batch_size", "phase", "group_id"):
        return None
    cols = _pick(present, "offline_runs", "r", ("engine", "tool", "model",
                                                 "tensor_parallel_size", "batch_size",
                                                 "input_len", "output_len", "n_kv",
                                                 *OFFLINE_METRICS))
    where_cols, join = _where_from(present, "offline_runs", "r")
    group = ("g.title AS group_title", " LEFT JOIN offline_groups g ON g.id = r.group_id") \
        if "offline_groups" in present else ("NULL AS group_title", "")
    return (f"SELECT {group[0]}, {', '.join(cols)}, r.id AS offline_id, {where_cols}\n"
            f"FROM offline_runs r{group[1]}{join}\n"
            "WHERE r.phase = 'benchmark'\n"
            "  AND (:model = '' OR r.model LIKE '%' || :model || '%')\n"
            "ORDER BY group_title, r.engine, r.tool, r.model, r.batch_size, r.input_len, "
            "r.output_len, r.n_kv, r.line_start")


# Columns naming the model a llama-bench row measured, most telling first.
MODEL_COLUMNS = ("model", "model_type", "model_filename")


def _llama_bench_table(present: Present) -> str | None:
    for model in row_models():
        table = model.__table__
        if re.search(r"llama.?bench", table) and table in present and any(
                c in present[table] for c in MODEL_COLUMNS):
            return table
    return None


def llama_bench_by_model_and_test(present: Present) -> str | None:
    table = _llama_bench_table(present)
    if table is None:
        return None
    columns = present[table]
    facets, measures = _facets_and_measures(_model(table), columns)
    models = [c for c in MODEL_COLUMNS if c in columns]
    test = [c for c in columns if c == "test"]
    where_cols, join = _where_from(present, table, "t")
    cols = [f"t.{c}" for c in dict.fromkeys(models + test + measures + facets)]
    model_match = " OR ".join(f"t.{c} LIKE '%' || :model || '%'" for c in models)
    order = ", ".join(f"t.{c}" for c in models[:1] + test + [c for c in ("id",) if c in columns])
    return (f"SELECT {', '.join(cols)}, {where_cols}\n"
            f"FROM {table} t{join}\n"
            f"WHERE (:model = '' OR {model_match})\n"
            f"ORDER BY {order}")


def spec_decode_summary(present: Present) -> str | None:
    if not _has(present, "serving_runs", "output_throughput"):
        return None
    # What the user wrote around the run (not the server's log, which names
    # speculative_config=None on every launch) ...
    context = [f"coalesce(r.{c}, '')" for c in ("section", "label", "command")
               if c in present["serving_runs"]]
    text = " || ' ' || ".join(context)
    runs = f"(SELECT r.*, lower({text}) AS spec_context FROM serving_runs r) r"
    matches = " OR ".join(f"r.spec_context LIKE '%{w}%'" for w in SPEC_DECODE_WORDS)
    # ... or a launch that asked for a draft model / speculative tokens.
    join_launch = ""
    launch_columns = [c for c in SPEC_DECODE_LAUNCH_COLUMNS
                      if c in present.get("server_launches", ())]
    if launch_columns and _has(present, "serving_runs", "launch_id"):
        join_launch = " LEFT JOIN server_launches l ON l.id = r.launch_id"
        matches += "".join(f" OR l.{c} IS NOT NULL" for c in launch_columns)
    if "accept_length" in present["serving_runs"]:
        matches = f"r.accept_length IS NOT NULL OR {matches}"
    cols = _pick(present, "serving_runs", "r", ("section", "label", "engine", "model",
                                                 "max_concurrency", "accept_length",
                                                 "output_throughput", "request_throughput",
                                                 "mean_tpot_ms", "mean_itl_ms", "mean_ttft_ms"))
    where_cols, join = _where_from(present, "serving_runs", "r")
    # Speculative-decoding log lines of the run (another area's table): the average of each
    # metric its model marks better-higher/lower, e.g. the draft acceptance rate.
    metrics_model, averaged, join_metrics = _model("spec_decode_metrics"), [], ""
    if metrics_model and _has(present, "spec_decode_metrics", "run_id"):
        averaged = [f"AVG(m.{n}) AS {n}" for n in metrics_model.model_fields
                    if n in present["spec_decode_metrics"]
                    and _extra(metrics_model, n).get("better")]
        join_metrics = " LEFT JOIN spec_decode_metrics m ON m.run_id = r.id"
        matches = f"m.id IS NOT NULL OR {matches}"
        averaged.insert(0, "COUNT(m.id) AS spec_decode_lines")
    return (f"SELECT r.id AS run_id, {', '.join(cols + averaged)}, {where_cols}\n"
            f"FROM {runs}{join}{join_launch}{join_metrics}\n"
            f"WHERE {matches}\n"
            + ("GROUP BY r.id\n" if join_metrics else "") +
            "ORDER BY r.model, r.section, r.max_concurrency, r.line_start")


def server_capacity(present: Present) -> str | None:
    model = _model("server_launches")
    if model is None or "server_launches" not in present:
        return None
    facets, measures = _facets_and_measures(model, present["server_launches"])
    if not measures:
        return None
    where_cols, join = _where_from(present, "server_launches", "l")
    cols = [f"l.{c}" for c in dict.fromkeys(["id", *facets, *measures])
            if c in present["server_launches"]]
    model_filter = ("WHERE (:model = '' OR l.model LIKE '%' || :model || '%')\n"
                    if "model" in present["server_launches"] else "")
    return (f"SELECT {', '.join(cols)}, {where_cols}\n"
            f"FROM server_launches l{join}\n{model_filter}"
            f"ORDER BY {', '.join(f'l.{c}' for c in facets[:3]) or 'l.id'}")


def server_during_runs(present: Present) -> str | None:
    """Each run linked to its server beside what that server logged while it ran."""
    if "run_server_stats" not in present or not _has(present, "serving_runs", "launch_id"):
        return None
    runs = _pick(present, "serving_runs", "r", ("label", "engine", "model", "max_concurrency",
                                                 "request_rate", "output_throughput",
                                                 "mean_ttft_ms", "launch_matched_on"))
    launch = _pick(present, "server_launches", "l", ("version", "port"))
    stats = [f"v.{c}" for c in present["run_server_stats"] if c not in ("run_id", "launch_id")]
    where_cols, join = _where_from(present, "serving_runs", "r")
    order = "s.path, r.line_start" if join else "r.line_start"
    return (f"SELECT r.id AS run_id, {', '.join(runs)},\n"
            f"  {', '.join(f'{c} AS server_{c[2:]}' for c in launch) or 'r.launch_id'},\n"
            f"  {', '.join(stats)}, {where_cols}\n"
            f"FROM serving_runs r JOIN run_server_stats v ON v.run_id = r.id{join}\n"
            "LEFT JOIN server_launches l ON l.id = r.launch_id\n"
            "WHERE (:model = '' OR r.model LIKE '%' || :model || '%')\n"
            f"ORDER BY {order}")


def latest_ingest(present: Present) -> str | None:
    if not _has(present, "sources", "ingested_at", "name"):
        return None
    cols = _pick(present, "sources", "s", ("id", "name", "ingested_at", "runs", "warnings",
                                           "size", "encoding", "parser_version", "tags", "path"))
    unparsed = ""
    if _has(present, "unparsed_blocks", "source_id"):
        unparsed = (",\n  (SELECT COUNT(*) FROM unparsed_blocks u WHERE u.source_id = s.id) "
                    "AS unparsed_blocks")
    return (f"SELECT {', '.join(cols)}{unparsed}\nFROM sources s\n"
            "ORDER BY s.ingested_at DESC, s.id DESC")


def configurations(present: Present) -> str | None:
    """Each configuration with its repeats: n, mean and sample std of the key metrics."""
    if not _has(present, "configurations", "n", "group_id"):
        return None
    fields = _pick(present, "configurations", "c", (
        "id", "title", "series", "engine", "hardware", "model", "tensor_parallel_size",
        "pipeline_parallel_size", "replicas", "quantization", "speculative_model",
        "num_speculative_tokens", "dataset_name", "input_len", "output_len", "num_prompts",
        "request_rate", "max_concurrency", "n"))
    stats = [f"c.{m}{s}" for m in ("output_throughput", "mean_ttft_ms", "mean_tpot_ms",
                                   "request_throughput")
             for s in ("", "_std", "_min", "_max") if f"{m}{s}" in present["configurations"]]
    group = ("g.title AS group_title", " LEFT JOIN experiment_groups g ON g.id = c.group_id") \
        if _has(present, "experiment_groups", "title") else ("c.group_id", "")
    return (f"SELECT {group[0]}, {', '.join(fields + stats)}\n"
            f"FROM configurations c{group[1]}\n"
            "WHERE (:group = '' OR " + ("g.title" if group[1] else "c.group_id") +
            " LIKE '%' || :group || '%')\n"
            "ORDER BY c.group_id, c.engine, c.model, c.tensor_parallel_size, "
            "c.pipeline_parallel_size, c.quantization, c.max_concurrency, c.request_rate")


def runs_seen_more_than_once(present: Present) -> str | None:
    """Runs read from more than one place, with every place (file:line, format)."""
    if not _has(present, "sightings", "run_id", "source_id") or \
            not _has(present, "serving_runs", "sightings"):
        return None
    cols = _pick(present, "serving_runs", "r", ("label", "engine", "model", "max_concurrency",
                                                 "output_throughput", "sightings"))
    return (f"SELECT r.id AS run_id, {', '.join(cols)},\n"
            "  (SELECT group_concat(s.name || ':' || g.line_start || ' (' || g.format || ')', "
            "'; ') FROM sightings g JOIN sources s ON s.id = g.source_id "
            "WHERE g.run_id = r.id) AS seen_in\n"
            "FROM serving_runs r WHERE r.sightings > 1\nORDER BY r.sightings DESC, r.id")


def slo_check(present: Present) -> str | None:
    """Every run against two common SLOs (blank: not checked), fail before unknown."""
    if not _has(present, "serving_runs", "p99_ttft_ms", "mean_tpot_ms", "config_id") or \
            not _has(present, "configurations", "series"):
        return None
    fail = ("(:max_p99_ttft_ms != '' AND r.p99_ttft_ms > CAST(:max_p99_ttft_ms AS REAL)) OR "
            "(:max_mean_tpot_ms != '' AND r.mean_tpot_ms > CAST(:max_mean_tpot_ms AS REAL))")
    unknown = ("(:max_p99_ttft_ms != '' AND r.p99_ttft_ms IS NULL) OR "
               "(:max_mean_tpot_ms != '' AND r.mean_tpot_ms IS NULL)")
    goodput = ", r.request_goodput" if "request_goodput" in present["serving_runs"] else ""
    return ("SELECT g.title AS group_title, c.series, r.max_concurrency, r.request_rate,\n"
            f"  r.p99_ttft_ms, r.mean_tpot_ms, r.output_throughput{goodput},\n"
            f"  CASE WHEN {fail} THEN 'fail' WHEN {unknown} THEN 'unknown' ELSE 'pass' END "
            "AS verdict, r.id AS run_id\n"
            "FROM serving_runs r JOIN configurations c ON c.id = r.config_id\n"
            "LEFT JOIN experiment_groups g ON g.id = r.group_id\n"
            "ORDER BY r.group_id, c.series, r.max_concurrency, r.request_rate")


def pareto_frontier(present: Present) -> str | None:
    """Per-user against per-GPU throughput per configuration; the frontier of each group."""
    need = ("tensor_parallel_size", "pipeline_parallel_size", "mean_tpot_ms",
            "output_throughput", "group_id")
    if not _has(present, "configurations", *need):
        return None
    dp = "COALESCE(c.data_parallel_size, 1)" if "data_parallel_size" in \
        present["configurations"] else "1"
    return ("WITH p AS (\n"
            "  SELECT c.id AS config_id, c.group_id, c.title, c.n,\n"
            "    1000.0 / c.mean_tpot_ms AS per_user_tok_s,\n"
            "    c.output_throughput / (c.tensor_parallel_size * "
            f"COALESCE(c.pipeline_parallel_size, 1) * {dp}) AS per_gpu_tok_s,\n"
            "    c.output_throughput, c.mean_tpot_ms\n"
            "  FROM configurations c\n"
            "  WHERE c.mean_tpot_ms > 0 AND c.tensor_parallel_size IS NOT NULL)\n"
            "SELECT g.title AS group_title, p.*,\n"
            "  CASE WHEN EXISTS (SELECT 1 FROM p o WHERE o.group_id IS p.group_id AND\n"
            "    o.per_user_tok_s >= p.per_user_tok_s AND o.per_gpu_tok_s >= p.per_gpu_tok_s\n"
            "    AND (o.per_user_tok_s > p.per_user_tok_s OR o.per_gpu_tok_s > p.per_gpu_tok_s))\n"
            "  THEN 'dominated' ELSE 'frontier' END AS frontier\n"
            "FROM p LEFT JOIN experiment_groups g ON g.id = p.group_id\n"
            "ORDER BY p.group_id, p.per_gpu_tok_s DESC")


def llama_bench_trend(present: Present) -> str | None:
    """llama-bench t/s of each model and test across builds, builds in build-number order."""
    need = ("build_commit", "build_number", "model_type", "test", "avg_ts")
    if not _has(present, "llama_bench_results", *need):
        return None
    threads = " || ' · t' || COALESCE(t.n_threads, '?')" if "n_threads" in \
        present["llama_bench_results"] else ""
    return ("SELECT t.model_type || ' · ' || t.test" + threads + " AS series,\n"
            "  t.build_commit, t.build_number, AVG(t.avg_ts) AS avg_ts, COUNT(*) AS runs,\n"
            "  MIN(t.test_time) AS first_test_time\n"
            "FROM llama_bench_results t\n"
            "WHERE (:model = '' OR t.model_type LIKE '%' || :model || '%')\n"
            "GROUP BY series, t.build_commit\n"
            "ORDER BY series, t.build_number, first_test_time, t.build_commit")


QUERIES: tuple[CannedQuery, ...] = (
    CannedQuery("concurrency_sweep", "Concurrency sweep",
                "Every serving run with a max concurrency, per model, engine and section, in "
                "concurrency order. Leave model empty for all; a part of the name matches.",
                concurrency_sweep,
                {"mark": "line", "x_column": "max_concurrency", "x_type": "quantitative",
                 "y_column": "output_throughput", "y_type": "quantitative",
                 "color_column": "section"}),
    CannedQuery("engine_comparison", "Engine comparison at a concurrency",
                "Best output throughput of each engine and model at one max concurrency "
                "(empty: every concurrency), with the run that reached it.",
                engine_comparison,
                {"mark": "bar", "x_column": "engine", "x_type": "ordinal",
                 "y_column": "output_throughput", "y_type": "quantitative",
                 "color_column": "model"}),
    CannedQuery("offline_sweep", "Offline sweep",
                "Offline benchmarks (vllm bench latency / throughput, SGLang bench_one_batch, "
                "bench_one_batch_server, bench_offline_throughput, llama.cpp llama-batched-bench "
                "and llama-sweep-bench) by group and batch size: prefill and median decode "
                "throughput (tok/s), total latency (s), the latency "
                "distribution and offline throughputs; warm-up cases left out. Leave model "
                "empty for all; a part of the name matches.",
                offline_sweep,
                {"mark": "line", "x_column": "batch_size", "x_type": "quantitative",
                 "y_column": "median_decode_throughput", "y_type": "quantitative",
                 "color_column": "group_title"}),
    CannedQuery("llama_bench_by_model_and_test", "llama-bench by model and test",
                "llama-bench results ordered by model and test (pp512, tg128, ...).",
                llama_bench_by_model_and_test),
    CannedQuery("spec_decode_summary", "Speculative decoding summary",
                "Serving runs whose context (heading, label, command, server launch) mentions "
                "speculative decoding or that printed an accept length.",
                spec_decode_summary,
                {"mark": "bar", "x_column": "label", "x_type": "ordinal",
                 "y_column": "output_throughput", "y_type": "quantitative",
                 "color_column": "section"}),
    CannedQuery("server_capacity", "Server capacity",
                "What each server launch reported about its capacity (memory, KV cache, "
                "maximum concurrency), with its settings.",
                server_capacity),
    CannedQuery("server_during_runs", "The server during each run",
                "Each run linked to its server launch (in its own file, or found in another "
                "by port, model and time) beside what the server logged in the run's window: "
                "stats lines, most requests running and waiting, highest KV-cache usage, mean "
                "generation throughput, preemptions, speculative-decoding acceptance. Leave "
                "model empty for all; a part of the name matches.",
                server_during_runs,
                {"mark": "bar", "x_column": "max_concurrency", "x_type": "ordinal",
                 "y_column": "max_running", "y_type": "quantitative",
                 "color_column": "model"}),
    CannedQuery("configuration_repeats", "Configurations and their repeats",
                "Each configuration (what defines a run: engine, model, launch settings, "
                "workload, load) with its number of runs n and, over them, the mean, sample "
                "standard deviation (n-1), min and max of the key metrics; grouped as reports "
                "group them. Leave group empty for all; a part of its title matches.",
                configurations,
                {"mark": "line", "x_column": "max_concurrency", "x_type": "quantitative",
                 "y_column": "output_throughput", "y_type": "quantitative",
                 "color_column": "series"}),
    CannedQuery("runs_seen_more_than_once", "Runs seen more than once",
                "Runs read from several places (a printed block and its --save-result JSON, "
                "a note pasted twice): one row each, with every file:line it was seen at.",
                runs_seen_more_than_once),
    CannedQuery("slo_check", "SLOs after the fact",
                "Every run against p99 TTFT and mean TPOT limits (ms; leave one blank to skip "
                "it): pass, fail, or unknown when the run stored no such statistic; per "
                "series (a configuration without its load) in load order, with the goodput "
                "printed at run time. `benchvault report slo` takes any SLO.",
                slo_check,
                {"mark": "line", "x_column": "max_concurrency", "x_type": "quantitative",
                 "y_column": "p99_ttft_ms", "y_type": "quantitative",
                 "color_column": "series"}),
    CannedQuery("pareto_frontier", "Throughput/latency frontier",
                "Per configuration: per-user output tok/s (1000 / mean TPOT) against output "
                "tok/s per GPU (TP × PP × DP of the launch); the configurations no other of "
                "their group beats on both are the frontier.",
                pareto_frontier,
                {"mark": "circle", "x_column": "per_user_tok_s", "x_type": "quantitative",
                 "y_column": "per_gpu_tok_s", "y_type": "quantitative",
                 "color_column": "frontier"}),
    CannedQuery("llama_bench_trend", "llama-bench across builds",
                "Mean t/s of each model, test and thread count per llama.cpp build, builds in "
                "build-number order. `benchvault report trend` flags regressions.",
                llama_bench_trend,
                {"mark": "line", "x_column": "build_commit", "x_type": "ordinal",
                 "y_column": "avg_ts", "y_type": "quantitative", "color_column": "series"}),
    CannedQuery("latest_ingest", "Latest ingest",
                "Files ingested, newest first, with the runs, warnings and unparsed blocks "
                "each one gave.", latest_ingest),
)


def canned_queries(present: Present) -> list[tuple[CannedQuery, str]]:
    """The queries the served database can answer, each with its SQL."""
    out = []
    for query in QUERIES:
        sql = query.build(present)
        if sql:
            out.append((query, sql))
    return out
