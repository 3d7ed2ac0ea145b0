"""Keep ``configurations`` and ``experiment_groups`` in step with the runs.

Ingest calls :func:`refresh_configurations` at the end of each file's transaction with the
runs the file placed or changed and the configurations that lost a run: each run gets its
configuration (and group), and each configuration touched is marked to be counted again
(``n`` left NULL).  :func:`summarise` then gives every such configuration its repeat
statistics (n, mean, sample standard deviation, min, max) and its group its counts, once per
ingest rather than once per file: a year of notes touches each configuration in most files,
and counting its hundreds of runs again each time made a big ingest quadratic.  A
configuration's work is proportional to its runs; an ingest's, to what it touched.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any, Iterable

from ..schemas.experiments import CONFIG_METRICS, Configuration, ExperimentGroup
from ..schemas import store
from .configs import (config_key, config_title, configuration, group_key, group_of, group_title,
                      model_family, repeat_values)
from .offline import refresh_offline

if TYPE_CHECKING:
    import sqlite_utils

CHUNK = 500
LAUNCH_COLUMNS = ("tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size",
                  "quantization", "dtype", "kv_cache_dtype", "max_model_len",
                  "speculative_model", "num_speculative_tokens")


def _chunks(ids: Iterable[int]) -> Iterable[list[int]]:
    ids = sorted(ids)
    for start in range(0, len(ids), CHUNK):
        yield ids[start:start + CHUNK]


def _runs(db: sqlite_utils.Database, run_ids: list[int]) -> list[dict[str, Any]]:
    marks = ", ".join("?" * len(run_ids))
    launch = ", ".join(f"l.[{c}] AS [launch_{c}]" for c in LAUNCH_COLUMNS)
    spec = ("(SELECT d.num_speculative_tokens FROM spec_decode_metrics d WHERE d.run_id = r.id "
            "AND d.num_speculative_tokens IS NOT NULL ORDER BY d.id DESC LIMIT 1)"
            if db["spec_decode_metrics"].exists() else "NULL")
    cursor = db.execute(
        f"SELECT r.*, s.name AS source_name, s.path AS source_path, {launch}, "
        f"{spec} AS observed_spec_tokens, l.source_id AS launch_source_id "
        "FROM serving_runs r LEFT JOIN sources s ON s.id = r.source_id "
        f"LEFT JOIN server_launches l ON l.id = r.launch_id WHERE r.id IN ({marks})", run_ids)
    names = [d[0] for d in cursor.description]
    runs = [dict(zip(names, row)) for row in cursor.fetchall()]
    _machines(db, runs)
    return runs


def _machines(db: sqlite_utils.Database, runs: list[dict[str, Any]]) -> None:
    """Each run's ``machine_hardware`` and ``machine_engine``: the GPU, and the one engine
    installed or recorded, of the environment report (or recorded facts) in its file nearest
    to it (the earlier one when two are as near), else of the first one in its launch's
    file."""
    if not runs or not db["environments"].exists():
        return
    sources = sorted({s for r in runs for s in (r["source_id"], r.get("launch_source_id"))
                      if s is not None})
    found: dict[int, list[tuple[int, str]]] = {}
    for chunk in _chunks(sources):
        for source_id, line, hardware, engine, vllm, sglang in db.execute(
                "SELECT source_id, line_start, hardware, engine, vllm_version, sglang_version "
                f"FROM environments WHERE source_id IN ({', '.join('?' * len(chunk))}) "
                "AND hardware IS NOT NULL ORDER BY source_id, line_start", chunk):
            found.setdefault(source_id, []).append((line or 0, hardware, engine or (
                "vllm" if vllm and not sglang else "sglang" if sglang and not vllm else None)))
    for run in runs:
        own = found.get(run["source_id"])
        machine = None
        if own:
            at = run.get("line_start") or 0
            machine = min(own, key=lambda e: (abs(e[0] - at), e[0]))
        elif found.get(run.get("launch_source_id")):
            machine = found[run["launch_source_id"]][0]
        if machine is not None:
            run["machine_hardware"], run["machine_engine"] = machine[1], machine[2]


def _launch_in_result(extra: Any) -> dict[str, Any]:
    """Launch settings a result file reported itself (SGLang's server_info, read into
    extra["launch"]) for a run no launch log is linked to."""
    if isinstance(extra, str):
        try:
            extra = json.loads(extra)
        except ValueError:
            return {}
    launch = extra.get("launch") if isinstance(extra, dict) else None
    return {k: v for k, v in launch.items() if k in LAUNCH_COLUMNS} \
        if isinstance(launch, dict) else {}


def _family(db: sqlite_utils.Database, run: dict[str, Any], asked: dict[tuple, Any]
            ) -> str | None:
    """The run's model family; a run whose client printed no model takes the one family of the
    other runs under its heading (else in its file), when there is exactly one.  ``asked``:
    the families found so far in this refresh, by file and heading."""
    family = model_family(run.get("model"))
    if family is not None:
        return family
    for where, value in (("section = ?", run.get("section")), ("1", None)):
        if where != "1" and value is None:
            continue
        params = [run["source_id"], *([value] if where != "1" else [])]
        key = ("family", *params)
        models = asked.get(key)
        if models is None:
            models = asked[key] = {model_family(m) for (m,) in db.execute(
                f"SELECT DISTINCT model FROM serving_runs WHERE source_id = ? AND {where} "
                "AND model IS NOT NULL", params)} - {None}
        if len(models) == 1:
            return next(iter(models))
        if models:
            return None
    return None


WORKLOAD = ("dataset_name", "num_prompts", "random_input_len", "random_output_len",
            "sharegpt_output_len", "sonnet_input_len", "sonnet_output_len", "hf_output_len")


def _inherit_workload(db: sqlite_utils.Database, run: dict[str, Any],
                      asked: dict[tuple, Any]) -> None:
    """A run pasted without its command takes the workload of the runs beside it (same file
    and heading) that sent the very same prompts (same requests, same input tokens).
    ``asked``: the answers so far in this refresh (the runs of one sweep ask alike; nothing
    here changes a workload column)."""
    if run.get("dataset_name") is not None or run.get("completed") is None or \
            run.get("total_input_tokens") is None:
        return
    params = [run["source_id"], run.get("section"), run["completed"], run["total_input_tokens"]]
    key = ("workload", *params)
    siblings = asked.get(key)
    if siblings is None:
        # DISTINCT: a file may hold hundreds of such runs; their workloads are few.  (The run
        # itself has no dataset, so it is never among them.)
        siblings = asked[key] = db.execute(
            f"SELECT DISTINCT {', '.join(WORKLOAD)} FROM serving_runs WHERE source_id = ? AND "
            "section IS ? AND completed = ? AND total_input_tokens = ? AND dataset_name IS NOT "
            "NULL LIMIT 2", params).fetchall()
    if len(siblings) == 1:
        for column, value in zip(WORKLOAD, siblings[0]):
            if run.get(column) is None:
                run[column] = value


def _get_or_create(db: sqlite_utils.Database, table: str, key: str, row: Any) -> int:
    found = db.execute(f"SELECT id FROM [{table}] WHERE key = ?", [key]).fetchone()
    if found:
        return found[0]
    # Our own INSERT of the non-NULL columns (store.insert), not sqlite-utils' generic one:
    # a file of runs with no command or label makes a configuration per run.
    return store.insert(db, row)


def refresh_configurations(db: sqlite_utils.Database, run_ids: Iterable[int],
                           config_ids: Iterable[int] = ()) -> None:
    """Give ``run_ids`` their configuration and group; mark every configuration touched (and
    ``config_ids``, which lost a run) to be counted again by :func:`summarise`."""
    touched_configs = set(config_ids)
    asked: dict[tuple, Any] = {}  # the per-run look-ups answered so far
    for chunk in _chunks(run_ids):
        assigned = []
        for run in _runs(db, chunk):
            _inherit_workload(db, run, asked)
            launch = {c: run.get(f"launch_{c}") for c in LAUNCH_COLUMNS}
            if run.get("launch_id") is None:
                launch.update(_launch_in_result(run.get("extra")))
            config = configuration(run, launch, run.get("source_name"),
                                   run.get("observed_spec_tokens"))
            family = _family(db, run, asked)
            group = group_of(config, family)
            group_id = _get_or_create(db, "experiment_groups", group_key(group), ExperimentGroup(
                key=group_key(group), title=group_title(group), **group))
            key = config_key(config, family, f"{run['source_path']}:{run['line_start']}")
            config_id = _get_or_create(db, "configurations", key, Configuration(
                key=key, title=config_title(config), series=config_title(config, load=False),
                group_id=group_id, model_family=family,
                **config))
            if run.get("config_id") is not None:
                touched_configs.add(run["config_id"])
            touched_configs.add(config_id)
            assigned.append((config_id, group_id, run["id"]))
        db.conn.executemany("UPDATE serving_runs SET config_id = ?, group_id = ? WHERE id = ?",
                            assigned)
    for chunk in _chunks(touched_configs):
        db.execute(f"UPDATE configurations SET n = NULL WHERE id IN ({', '.join('?' * len(chunk))})",
                   chunk)


def summarise(db: sqlite_utils.Database) -> None:
    """Repeat statistics for every configuration marked to be counted (``n`` NULL), deleted
    when it has no run left, and the counts of their groups (deleted when empty); the offline
    cases' configurations and groups (experiments.offline)."""
    stale = [r[0] for r in db.execute("SELECT id FROM configurations WHERE n IS NULL")]
    groups: set[int] = set()
    for config_id in stale:
        group = _summarise_configuration(db, config_id)
        if group is not None:
            groups.add(group)
    for group_id in sorted(groups):
        _summarise_group(db, group_id)
    refresh_offline(db)


def _summarise_configuration(db: sqlite_utils.Database, config_id: int) -> int | None:
    """Repeat statistics of one configuration (the sample standard deviation divides by
    n - 1); deleted when it has no run left.  The same runs give the same figures to the last
    bit, in whatever order they were stored (sums are math.fsum's, exact); its first and last
    runs are in reading order (file path, line)."""
    columns = ", ".join(f"r.[{m}]" for m in CONFIG_METRICS)
    rows = db.execute(f"SELECT s.path, r.line_start, r.line_end, r.id, {columns} FROM "
                      "serving_runs r JOIN sources s ON s.id = r.source_id WHERE r.config_id = ?",
                      [config_id]).fetchall()
    found = db.execute("SELECT group_id FROM configurations WHERE id = ?", [config_id]).fetchone()
    if found is None:
        return None
    if not rows:
        db.execute("DELETE FROM configurations WHERE id = ?", [config_id])
        return found[0]
    values: dict[str, Any] = {"n": len(rows), "first_run_id": min(rows)[3],
                              "last_run_id": max(rows)[3]}
    for metric, column in zip(CONFIG_METRICS, list(zip(*rows))[4:]):
        # A metric column holds numbers (inf too) or NULL: NaN is stored as NULL.
        numbers = [v for v in column if v is not None]
        if math.inf in numbers or -math.inf in numbers:
            numbers = [v for v in numbers if math.isfinite(v)]
        values.update(repeat_values(metric, numbers))
    assignments = ", ".join(f"[{k}] = ?" for k in values)
    db.execute(f"UPDATE configurations SET {assignments} WHERE id = ?",
               [*values.values(), config_id])
    return found[0]


def _summarise_group(db: sqlite_utils.Database, group_id: int) -> None:
    stats = db.execute("SELECT COUNT(*), COALESCE(SUM(n), 0) FROM configurations "
                       "WHERE group_id = ?", [group_id]).fetchone()
    if not stats[0]:
        db.execute("UPDATE serving_runs SET group_id = NULL WHERE group_id = ?", [group_id])
        db.execute("DELETE FROM experiment_groups WHERE id = ?", [group_id])
        return
    engines = [e for (e,) in db.execute("SELECT DISTINCT engine FROM configurations WHERE "
                                        "group_id = ? ORDER BY engine", [group_id]) if e]
    db.execute("UPDATE experiment_groups SET configurations = ?, runs = ?, engines = ? "
               "WHERE id = ?", [stats[0], stats[1], ", ".join(engines) or None, group_id])
