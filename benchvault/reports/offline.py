"""The offline sweep: engine speed at each batch size, the way an offline benchmark is read.

One table per offline group (one model family on one hardware at one input and output
length), its rows by batch size (then input and output length): prefill and decode throughput
side by side, the batch's total latency, and the latency and throughput figures the other
offline programs print.  Repeats of a configuration are folded into their mean (``n``).
Warm-up cases are left out.  The chart is median decode throughput (llama-batched-bench's
decode throughput) against batch size, one line per configuration but its batch size.

It reads ``offline_runs`` only: no serving run is ever in it, and no offline case in a
serving report.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pandas as pd

from .experiments import field_text, fold_repeats, shared, varying
from .kinds import ReportKind
from .query import apply_where, has_table, load_table, parse_conditions, why_empty
from .report import Report, ReportOptions, slugify
from .table import build_table, column_info

# What tells a group's configurations apart, in the order a reader compares them.
FIELDS = ("engine", "tool", "model", "tensor_parallel_size", "quantization", "dtype",
          "backend")
ORDER = ("batch_size", "input_len", "output_len", "n_kv")
METRICS = ("prefill_throughput", "median_decode_throughput", "decode_throughput",
           "total_latency", "overall_throughput", "prefill_latency", "median_decode_latency",
           "decode_latency", "avg_latency",
           "p50_latency", "p99_latency", "requests_per_second", "tokens_per_second",
           "output_tokens_per_second", "output_throughput", "avg_cold_startup_time",
           "avg_warm_startup_time", "avg_cold_compilation_time", "avg_warm_compilation_time")
DECODE = "median_decode_throughput"


def build(conn: sqlite3.Connection, spec: ReportKind, options: ReportOptions) -> list[Report]:
    conditions = parse_conditions([*spec.where, *options.where])
    filters = [str(c) for c in parse_conditions(options.where)]
    if not has_table(conn, spec.table):
        return [Report(spec, spec.title, spec.description, None, pd.DataFrame(),
                       [f"This warehouse has no `{spec.table}` table."], filters)]
    frame = apply_where(load_table(conn, spec.table, conditions), conditions)
    if frame.empty:
        everything = load_table(conn, spec.table)
        why = why_empty(everything, conditions) if not everything.empty else \
            "no offline benchmark is in the warehouse"
        return [Report(spec, options.title or spec.title, spec.description, None, frame,
                       [f"No rows match: {why}."], filters)]
    frame = fold_repeats(frame, "config_id", [m for m in METRICS if m in frame],
                         options.repeats)
    titles = dict(conn.execute("SELECT id, title FROM offline_groups").fetchall()) \
        if has_table(conn, "offline_groups") else {}
    keys = frame["group_id"] if "group_id" in frame else pd.Series(None, index=frame.index)
    frame = frame.assign(_group_title=[titles.get(k, "") if pd.notna(k) else ""
                                       for k in keys])
    parts = sorted((part for _, part in frame.groupby("_group_title", sort=False,
                                                      dropna=False)),
                   key=lambda p: (p["_group_title"].iloc[0], p.index[0]))
    title = options.title or spec.title
    return [_group(spec, part, title, filters, options, len(parts) > 1) for part in parts]


def _group(spec: ReportKind, part: pd.DataFrame, title: str, filters: list[str],
           options: ReportOptions, several: bool) -> Report:
    group_title = part["_group_title"].iloc[0]
    part = part.sort_values([c for c in ORDER if c in part], kind="stable",
                            na_position="last")
    fields = varying(part, tuple(f for f in FIELDS if f in part))
    # (a llama-sweep-bench's rows differ by the context already in the cache, `n_kv`)
    lengths = [c for c in ("input_len", "output_len", "n_kv") if c in part and
               part[c].nunique(dropna=True) > 1]
    measured = [m for m in METRICS if m in part and part[m].notna().any()]
    sizes = ["batch_size"] if part["batch_size"].notna().any() else []
    wanted = options.columns or [*fields, *sizes, *lengths, *measured]
    if "n" in part and (part["n"] > 1).any() and not options.columns:
        wanted.append("n")
    columns = []
    for name in wanted:
        col = column_info(spec.table, name)
        col.header = options.headers.get(name) or col.header
        columns.append(col)
    common = shared(part, tuple(f for f in (*FIELDS, "input_len", "output_len") if f in part
                                and f not in fields))
    caption = " · ".join(f"{column_info(spec.table, k).header}: {field_text(v)}"
                         for k, v in common.items()) or None
    table = build_table(part, columns, mark_best=options.mark_best)
    part = part.assign(_series=_series(part, fields))
    return Report(spec, f"{title}: {group_title}" if group_title else title, spec.description,
                  table, part, [], filters, caption=caption,
                  slug=slugify(group_title) if several else "", draw=chart)


def _series(part: pd.DataFrame, fields: list[str]) -> list[str]:
    """Each row's line on the chart: its configuration but its batch size."""
    if not fields:
        return ["all"] * len(part)
    return [" · ".join(str(v) for v in values if v is not None and v == v)
            for values in zip(*(part[f].tolist() for f in fields))]


def chart(report: Report, base: Path) -> tuple[Path, Path] | None:
    """Median decode throughput (llama-batched-bench: its decode throughput) against batch
    size, a line per configuration."""
    import matplotlib.pyplot as plt

    from .charts import save_figure

    data = report.frame
    decode = next((m for m in (DECODE, "decode_throughput")
                   if m in data and data[m].notna().any()), None)
    if decode is None or "batch_size" not in data:
        return None
    data = data.dropna(subset=[decode, "batch_size"])
    if data.empty:
        return None
    fig, ax = plt.subplots(figsize=(7, 4))
    for series in dict.fromkeys(data["_series"]):
        rows = data[data["_series"] == series].sort_values("batch_size")
        ax.plot(rows["batch_size"], rows[decode], marker="o", label=str(series)[:60])
    sizes = sorted(data["batch_size"].unique())
    if len(sizes) > 1 and sizes[0] > 0 and sizes[-1] / sizes[0] >= 8:
        ax.set_xscale("log", base=2)
    ax.set_xticks(sizes, [str(int(s)) for s in sizes])
    ax.set_xlabel("Batch size")
    ax.set_ylabel("Median decode throughput (tok/s)" if decode == DECODE
                  else "Decode throughput (tok/s)")
    ax.set_title(report.title[:90])
    ax.grid(True, alpha=0.3)
    if data["_series"].nunique() > 1:
        ax.legend(fontsize=7)
    return save_figure(fig, base)
