"""SQL views of the warehouse, generated from the row models and created with the schema.

A view joins what people want side by side.  Each one declares the tables it needs and is
created (or re-created when its generated SQL changed) only once they exist, so a database
without, say, ``server_launches`` simply has no ``runs_with_server`` yet.  The description
and unit of every view column come from the model column it is read from.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any, Callable

from .models import LATENCY_METRICS, LATENCY_NAMES, Row
from .tables import row_models

# Stats the wide latency view pivots out of latency_stats (a stat not printed stays null).
LATENCY_VIEW_STATS = ("mean", "median", "std", "min", "max",
                      "p25", "p50", "p75", "p90", "p95", "p99", "p99.9")
# Run columns the latency view repeats so a row reads on its own.
LATENCY_VIEW_RUN_COLUMNS = ("source_id", "line_start", "section", "label", "engine", "model",
                            "max_concurrency")
# Launch columns runs_with_server leaves out: provenance the run already has, and raw text.
SERVER_SKIP = {"id", "raw_text", "tags", "section", "label", "source_id", "line_end"}


@dataclass(frozen=True)
class ColumnDoc:
    description: str
    unit: str | None = None


@dataclass(frozen=True)
class View:
    name: str
    description: str
    requires: tuple[str, ...]
    select: Callable[[], str]
    columns: Callable[[], dict[str, ColumnDoc]]


def _model(table: str) -> type[Row] | None:
    return next((m for m in row_models() if m.__table__ == table), None)


def _doc(model: type[Row], name: str) -> ColumnDoc:
    field = model.model_fields[name]
    extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
    return ColumnDoc(field.description or "", extra.get("unit"))


def _latency_column(metric: str, stat: str) -> str:
    return f"{stat.replace('.', '_')}_{metric}_ms"


def _latency_select() -> str:
    pivots = ",\n  ".join(
        f"MAX(CASE WHEN s.metric = '{metric}' AND s.stat = '{stat}' THEN s.value_ms END) "
        f"AS {_latency_column(metric, stat)}"
        for metric in LATENCY_METRICS for stat in LATENCY_VIEW_STATS)
    run_columns = ", ".join(f"r.{c}" for c in LATENCY_VIEW_RUN_COLUMNS)
    return (f"SELECT r.id AS run_id, {run_columns},\n  {pivots}\n"
            "FROM serving_runs r JOIN latency_stats s ON s.run_id = r.id\nGROUP BY r.id")


def _latency_columns() -> dict[str, ColumnDoc]:
    runs = _model("serving_runs")
    out = {"run_id": ColumnDoc("Serving run (serving_runs.id).")}
    out.update({c: _doc(runs, c) for c in LATENCY_VIEW_RUN_COLUMNS})
    for metric in LATENCY_METRICS:
        for stat in LATENCY_VIEW_STATS:
            word = {"mean": "Mean", "median": "Median", "std": "Standard deviation of",
                    "min": "Minimum", "max": "Maximum"}.get(stat, f"{stat[1:]}th percentile of")
            out[_latency_column(metric, stat)] = ColumnDoc(
                f"{word} {LATENCY_NAMES[metric]}, as printed.", "ms")
    return out


def _server_columns() -> list[str]:
    launches = _model("server_launches")
    return [c for c in launches.model_fields if c not in SERVER_SKIP] if launches else []


# Speculative-decoding columns runs_with_server shows: from the last metrics line before the
# run (V0 prints running totals) and its last stage-times line.
SPEC_SKIP = SERVER_SKIP | {"line_start", "launch_id", "run_id", "kind", "extra", "logged_at"}
SPEC_LAST = ("(SELECT MAX(id) FROM spec_decode_metrics WHERE run_id = r.id AND kind {} "
             "'stage_times')")


def _spec_columns() -> list[str]:
    spec = _model("spec_decode_metrics")
    return [c for c in spec.model_fields if c not in SPEC_SKIP] if spec else []


def _runs_with_server_select() -> str:
    launch = ", ".join(f"l.{c} AS server_{c}" for c in _server_columns())
    spec = _spec_columns()
    if not spec:
        return ("SELECT r.*" + (f", {launch}" if launch else "") +
                "\nFROM serving_runs r LEFT JOIN server_launches l ON l.id = r.launch_id")
    stage = {c for c in spec if c.endswith("_time_ms") or c == "proposal_time_per_token_ms"}
    picked = ", ".join(f"{'st' if c in stage else 'sd'}.{c} AS spec_{c}" for c in spec)
    # The engine's own count wins over the launch's argument; both stay visible.
    observed = ("COALESCE(sd.num_speculative_tokens, l.num_speculative_tokens) "
                "AS num_speculative_tokens")
    return (f"SELECT r.*, {launch}, {picked}, {observed}"
            "\nFROM serving_runs r LEFT JOIN server_launches l ON l.id = r.launch_id"
            f"\nLEFT JOIN spec_decode_metrics sd ON sd.id = {SPEC_LAST.format('!=')}"
            f"\nLEFT JOIN spec_decode_metrics st ON st.id = {SPEC_LAST.format('=')}")


def _runs_with_server_columns() -> dict[str, ColumnDoc]:
    runs, launches = _model("serving_runs"), _model("server_launches")
    out = {c: _doc(runs, c) for c in runs.model_fields}
    for c in _server_columns():
        doc = _doc(launches, c)
        out[f"server_{c}"] = ColumnDoc(f"Server launch: {doc.description}", doc.unit)
    spec = _model("spec_decode_metrics")
    for c in _spec_columns():
        doc = _doc(spec, c)
        out[f"spec_{c}"] = ColumnDoc(f"Speculative decoding (last line before the run): "
                                     f"{doc.description}", doc.unit)
    if spec:
        out["num_speculative_tokens"] = ColumnDoc(
            "Speculative tokens per step: what the engine reported for this run, else what "
            "the launch asked for (server_num_speculative_tokens).")
    return out


# run_server_stats: what a run's server logged in the run's window (serving_runs.window_*,
# set by experiments.launches), one aggregate per column of engine_stats: (name, SQL, column
# it is read from, what it is).
IN_WINDOW = ("{t}.launch_id = r.launch_id AND {t}.logged_at BETWEEN r.window_start AND "
             "r.window_end")
SERVER_STATS = (
    ("stats_lines", "COUNT(e.id)", None, "Engine stats lines its server logged in the run's "
                                         "window (vLLM logs one every 10 s per engine)."),
    ("max_running", "MAX(e.running)", "running", "Most requests running at once"),
    ("max_waiting", "MAX(e.waiting)", "waiting", "Most requests waiting at once"),
    ("max_gpu_kv_cache_usage_pct", "MAX(e.gpu_kv_cache_usage_pct)", "gpu_kv_cache_usage_pct",
     "Highest GPU KV-cache usage"),
    ("max_cpu_kv_cache_usage_pct", "MAX(e.cpu_kv_cache_usage_pct)", "cpu_kv_cache_usage_pct",
     "Highest CPU KV-cache usage (V0's swap space; the KV cache itself on vLLM's CPU "
     "backend)"),
    ("mean_generation_throughput", "AVG(e.generation_throughput)", "generation_throughput",
     "Mean of the generation throughput lines"),
    ("mean_prompt_throughput", "AVG(e.prompt_throughput)", "prompt_throughput",
     "Mean of the prompt throughput lines"),
    ("max_swapped", "MAX(e.swapped)", "swapped", "Most requests swapped out to CPU (V0)"),
    ("preemptions", "SUM(json_extract(e.extra, '$.preemptions'))", None,
     "Requests preempted (V1's `Preemptions: N` per line, summed; null when the server "
     "printed none)."),
)
# Speculative decoding in the window: V1 lines count per interval (summed); V0 lines are
# running totals (the last line's rate is the run's, and earlier runs' too).
_SPEC = f"FROM spec_decode_metrics d WHERE {IN_WINDOW.format(t='d')} AND d.kind != 'stage_times'"
SPEC_STATS = (
    ("spec_decode_lines", f"(SELECT COUNT(*) {_SPEC})",
     "Speculative-decoding metrics lines its server logged in the window.", None),
    ("spec_accepted_tokens", f"(SELECT SUM(d.accepted_tokens) {_SPEC} AND d.kind = "
                             "'spec_decoding_metrics')",
     "Draft tokens accepted in the window (V1 lines, summed).", "tokens"),
    ("spec_draft_tokens", f"(SELECT SUM(d.draft_tokens) {_SPEC} AND d.kind = "
                          "'spec_decoding_metrics')",
     "Draft tokens proposed in the window (V1 lines, summed).", "tokens"),
    ("spec_acceptance_rate",
     f"COALESCE((SELECT SUM(d.accepted_tokens) * 1.0 / NULLIF(SUM(d.draft_tokens), 0) {_SPEC} "
     f"AND d.kind = 'spec_decoding_metrics'), (SELECT d.draft_acceptance_rate {_SPEC} "
     "ORDER BY d.logged_at DESC, d.id DESC LIMIT 1))",
     "Accepted / proposed draft tokens over the window (V1); V0: its last line's running "
     "rate.", "fraction"),
    ("spec_mean_acceptance_length", f"(SELECT AVG(d.mean_acceptance_length) {_SPEC})",
     "Mean of the V1 lines' mean acceptance length (tokens per draft, bonus included).",
     "tokens"),
)


# The figures of run_server_stats (what reports may show beside a run).
SERVER_STATS_COLUMNS = tuple(name for name, *_ in (*SERVER_STATS, *SPEC_STATS))


def _server_stats_select() -> str:
    stats = ",\n  ".join(f"{sql} AS {name}" for name, sql, _, _ in SERVER_STATS)
    spec = ",\n  ".join(f"{sql} AS {name}" for name, sql, _, _ in SPEC_STATS)
    return ("SELECT r.id AS run_id, r.launch_id, r.window_start, r.window_end, r.window_from,\n"
            f"  {stats},\n  {spec}\n"
            "FROM serving_runs r\n"
            f"LEFT JOIN engine_stats e ON {IN_WINDOW.format(t='e')}\n"
            "WHERE r.launch_id IS NOT NULL\n"
            "GROUP BY r.id")


def _server_stats_columns() -> dict[str, ColumnDoc]:
    runs, stats = _model("serving_runs"), _model("engine_stats")
    out = {"run_id": ColumnDoc("Serving run (serving_runs.id)."),
           "launch_id": _doc(runs, "launch_id")}
    out.update({c: _doc(runs, c) for c in ("window_start", "window_end", "window_from")})
    for name, _, column, what in SERVER_STATS:
        if column is None:
            out[name] = ColumnDoc(what, "lines" if name == "stats_lines" else "requests")
        else:
            out[name] = ColumnDoc(f"{what} in the run's window (engine_stats.{column}).",
                                  _doc(stats, column).unit)
    for name, _, what, unit in SPEC_STATS:
        out[name] = ColumnDoc(what, unit or "lines")
    return out


VIEWS: tuple[View, ...] = (
    View("latency", "One row per serving run with every latency statistic it printed side by "
                    "side (from latency_stats); null where a stat was not printed.",
         ("serving_runs", "latency_stats"), _latency_select, _latency_columns),
    View("runs_with_server", "Serving runs joined to the server launch they ran against "
                             "(server_* columns come from server_launches) and to the "
                             "speculative-decoding lines logged for them (spec_*).",
         ("serving_runs", "server_launches"), _runs_with_server_select,
         _runs_with_server_columns),
    View("run_server_stats", "One row per serving run linked to its server launch: what the "
                             "server logged in the run's window, from its window_start to its "
                             "window_end (engine stats, speculative decoding); no window when "
                             "the launch logged no such line.",
         ("serving_runs", "engine_stats", "spec_decode_metrics"), _server_stats_select,
         _server_stats_columns),
)


def available_views(tables: set[str]) -> list[View]:
    """Views whose tables are all in ``tables`` (and whose models are registered)."""
    return [v for v in VIEWS if set(v.requires) <= tables and all(_model(t) for t in v.requires)]


def ensure_views(db: Any) -> None:
    """Create every view whose tables exist; re-create one whose generated SQL changed.

    ``db`` is a sqlite-utils Database.  Concurrent ingests may race to create the same view:
    the loser's "already exists" is harmless.
    """
    tables = set(db.table_names())
    existing = {name: sql for name, sql in db.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'view'").fetchall()}
    for view in available_views(tables):
        sql = f"CREATE VIEW {view.name} AS\n{view.select()}"
        if existing.get(view.name) == sql:
            continue
        try:
            if view.name in existing:
                db.execute(f"DROP VIEW IF EXISTS {view.name}")
            db.execute(sql)
        except sqlite3.OperationalError as exc:
            if "already exists" not in str(exc):
                raise
