"""What defines an offline case (its configuration) and which cases compare (a group).

An offline case's configuration is what, changed, would change its numbers: the engine and
the benchmark program, the model, tensor parallelism, quantization and dtype, the batch size
and the lengths (the prompts of an offline throughput run), and the user's tags.  Cases
sharing all of it are repeats; ``offline_configurations`` keeps their count, mean, standard
deviation, min and max.  A group is one model family on one hardware at one input and output
length: the rows of one offline sweep table, by batch size.

Warm-up cases have no configuration: they are no measurement of the case.  Offline rows live
in their own tables, so no serving sweep, SLO, Pareto or engine comparison ever meets one.

:func:`refresh_offline` recomputes every offline row's configuration and group, and their
statistics, once per ingest: offline results are few (a sweep is tens of cases), and
recomputing them whole keeps them right whatever a file added, changed or took away.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any, Mapping

from ..schemas import store
from ..schemas.offline import OFFLINE_METRICS, OfflineConfiguration, OfflineGroup
from .configs import (TP_RE, _first, _int, config_key, context_texts, hardware_of, model_family,
                      quantization_in, repeat_values, short_model, tags_of)

if TYPE_CHECKING:
    import sqlite_utils

CONFIG_FIELDS = ("engine", "tool", "hardware", "model", "tensor_parallel_size", "quantization",
                 "dtype", "batch_size", "input_len", "output_len", "num_prompts", "n_kv",
                 "n_ubatch", "flash_attn", "is_pp_shared", "tags")
GROUP_FIELDS = ("model_family", "hardware", "input_len", "output_len")


# llama.cpp's settings: in a configuration only when a case printed them (a key without
# them is the key it always was).
LLAMA_SETTINGS = ("n_kv", "n_ubatch", "flash_attn", "is_pp_shared")


def configuration(run: Mapping[str, Any], source_name: str | None = None) -> dict[str, Any]:
    """The configuration of an offline case: ``run`` is its offline_runs row."""
    tags = tags_of(run.get("tags"))
    texts = context_texts(run.get("label"), run.get("section"))
    model = run.get("model")
    settings = {name: value for name in LLAMA_SETTINGS
                if (value := _int(run.get(name))) is not None}
    return settings | {
        "engine": run.get("engine") or "unknown",
        "tool": run.get("tool"),
        "hardware": hardware_of(tags, run.get("label"), run.get("section"), source_name),
        "model": short_model(model),
        "tensor_parallel_size": _int(run.get("tensor_parallel_size")) or _first(TP_RE, texts),
        "quantization": run.get("quantization") or quantization_in(model),
        "dtype": run.get("dtype"),
        "batch_size": _int(run.get("batch_size")),
        "input_len": _int(run.get("input_len")),
        "output_len": _int(run.get("output_len")),
        "num_prompts": _int(run.get("num_prompts")),
        "tags": dict(sorted(tags.items())) or None,
    }


def group_of(config: Mapping[str, Any], family: str | None) -> dict[str, Any]:
    return {"model_family": family, "hardware": config.get("hardware"),
            "input_len": config.get("input_len"), "output_len": config.get("output_len")}


def group_title(group: Mapping[str, Any]) -> str:
    """`qwen2-7b · L40S · 512/64`."""
    lengths = None
    if group.get("input_len") or group.get("output_len"):
        lengths = f"{group.get('input_len') or '?'}/{group.get('output_len') or '?'}"
    parts = [group.get("model_family") or "unknown model", group.get("hardware"), lengths]
    return " · ".join(str(p) for p in parts if p)


def config_title(config: Mapping[str, Any]) -> str:
    """`sglang · bench_one_batch · Qwen2-7B-Instruct · TP2 · bs=8`."""
    model = config.get("model")
    tool = str(config.get("tool") or "").replace("sglang.", "").replace("vllm bench ", "")
    parts = [config.get("engine"), tool or None,
             model.rsplit("/", 1)[-1] if isinstance(model, str) else None,
             f"TP{config['tensor_parallel_size']}" if (config.get("tensor_parallel_size") or 1)
             > 1 else None, config.get("quantization"),
             f"bs={config['batch_size']}" if config.get("batch_size") is not None else None]
    return " · ".join(str(p) for p in parts if p)


def _key(values: Mapping[str, Any], fields: tuple[str, ...]) -> str:
    return json.dumps({k: (v.lower() if isinstance(v, str) else v) for k, v in values.items()
                       if k in fields}, sort_keys=True, default=str)


def _id_of(db: sqlite_utils.Database, table: str, key: str, row: Any) -> int:
    found = db.execute(f"SELECT id FROM [{table}] WHERE key = ?", [key]).fetchone()
    return found[0] if found else store.insert(db, row)


def refresh_offline(db: sqlite_utils.Database) -> None:
    """Every offline case's configuration and group, and their repeat statistics."""
    if not db["offline_runs"].exists():
        return
    cursor = db.execute("SELECT r.*, s.name AS source_name, s.path AS source_path "
                        "FROM offline_runs r LEFT JOIN sources s ON s.id = r.source_id "
                        "ORDER BY s.path, r.line_start, r.id")
    names = [d[0] for d in cursor.description]
    runs = [dict(zip(names, row)) for row in cursor.fetchall()]
    assigned: list[tuple[int | None, int | None, int]] = []
    members: dict[int, list[dict[str, Any]]] = {}
    for run in runs:
        if run.get("phase") == "warmup":
            assigned.append((None, None, run["id"]))
            continue
        config = configuration(run, run.get("source_name"))
        family = model_family(run.get("model"))
        group = group_of(config, family)
        gkey = _key(group, GROUP_FIELDS)
        group_id = _id_of(db, "offline_groups", gkey, OfflineGroup(
            key=gkey, title=group_title(group), **group))
        key = config_key(config, family, f"{run['source_path']}:{run['line_start']}",
                         CONFIG_FIELDS)
        config_id = _id_of(db, "offline_configurations", key, OfflineConfiguration(
            key=key, title=config_title(config), group_id=group_id, model_family=family,
            **config))
        assigned.append((config_id, group_id, run["id"]))
        members.setdefault(config_id, []).append(run)
    db.conn.executemany("UPDATE offline_runs SET config_id = ?, group_id = ? WHERE id = ?",
                        assigned)
    kept = sorted(members)
    marks = ", ".join("?" * len(kept))
    db.execute(f"DELETE FROM offline_configurations WHERE id NOT IN ({marks})", kept)
    for config_id in kept:
        _summarise(db, config_id, members[config_id])
    db.execute("DELETE FROM offline_groups WHERE id NOT IN (SELECT DISTINCT group_id FROM "
               "offline_configurations WHERE group_id IS NOT NULL)")
    for (group_id,) in db.execute("SELECT id FROM offline_groups").fetchall():
        count, runs_in = db.execute("SELECT COUNT(*), COALESCE(SUM(n), 0) FROM "
                                    "offline_configurations WHERE group_id = ?",
                                    [group_id]).fetchone()
        engines = [e for (e,) in db.execute("SELECT DISTINCT engine FROM offline_configurations "
                                            "WHERE group_id = ? ORDER BY engine", [group_id])
                   if e]
        db.execute("UPDATE offline_groups SET configurations = ?, runs = ?, engines = ? "
                   "WHERE id = ?", [count, runs_in, ", ".join(engines) or None, group_id])


def _summarise(db: sqlite_utils.Database, config_id: int, runs: list[dict[str, Any]]) -> None:
    """n, mean, sample standard deviation (n - 1), min and max of each metric over the
    configuration's runs (in reading order; sums exact, so any order gives the same bits)."""
    values: dict[str, Any] = {"n": len(runs), "first_run_id": runs[0]["id"],
                              "last_run_id": runs[-1]["id"]}
    for metric in OFFLINE_METRICS:
        numbers = [r[metric] for r in runs if isinstance(r.get(metric), (int, float))
                   and math.isfinite(r[metric])]
        values.update(repeat_values(metric, numbers))
    assignments = ", ".join(f"[{k}] = ?" for k in values)
    db.execute(f"UPDATE offline_configurations SET {assignments} WHERE id = ?",
               [*values.values(), config_id])
