"""The throughput/latency frontier: what each configuration gives one user against what it
gives per GPU, and which configurations no other beats on both.

Per-user throughput is the output tokens per second one request sees: 1000 / mean TPOT (ms),
or output throughput / concurrency when the run printed no TPOT.  Throughput per GPU is output
throughput over the GPUs the result used: `--tag gpus=N` at ingest, else TP × PP × DP ×
replicas from the server launch or the label (`tp2 x 4`).  A configuration is on the frontier
when no other in its group has at least as much of both and more of one.  Repeats count as
their mean.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pandas as pd

from .analysis import empty_report, groups, load, series_fields, series_of
from .kinds import ReportKind
from .report import Report, ReportOptions, slugify
from .table import Column, Table, format_number

METRICS = ("output_throughput", "mean_tpot_ms")
X, Y = "per_user_tok_s", "per_gpu_tok_s"


def per_user(row: pd.Series) -> float | None:
    tpot = row.get("mean_tpot_ms")
    if tpot is not None and not pd.isna(tpot) and tpot > 0:
        return 1000.0 / float(tpot)
    throughput, users = row.get("output_throughput"), row.get("max_concurrency")
    if throughput is not None and users and not pd.isna(users) and not pd.isna(throughput):
        return float(throughput) / float(users)
    return None


def frontier(points: pd.DataFrame) -> pd.Series:
    """True for the points no other point dominates (>= on both axes, > on one)."""
    flags = []
    for i, row in points.iterrows():
        beaten = ((points[X] >= row[X]) & (points[Y] >= row[Y]) &
                  ((points[X] > row[X]) | (points[Y] > row[Y]))).any()
        flags.append(not beaten)
    return pd.Series(flags, index=points.index)


def build(conn: sqlite3.Connection, spec: ReportKind, options: ReportOptions) -> list[Report]:
    rows = load(conn, spec.table, options, list(METRICS))
    if rows.empty_note:
        return [empty_report(spec, spec.title, rows)]
    reports = []
    for title, part in groups(rows):
        reports.append(_group(spec, part, rows.layout, title, rows.filters))
    return reports


def _group(spec: ReportKind, part: pd.DataFrame, layout, title: str,
           filters: list[str]) -> Report:
    part = part.copy()
    part[X] = part.apply(per_user, axis=1)
    gpus = pd.to_numeric(part.get("gpus"), errors="coerce") if "gpus" in part else \
        pd.Series(float("nan"), index=part.index)
    part[Y] = pd.to_numeric(part.get("output_throughput"), errors="coerce") / gpus
    fields = series_fields(part, layout, leave_out=())
    part["_name"] = series_of(part, fields)
    known = part.dropna(subset=[X, Y])
    part["on_frontier"] = False
    if not known.empty:
        part.loc[known.index, "on_frontier"] = frontier(known)
    notes = []
    unknown = part[part[X].isna() | part[Y].isna()]
    for _, row in unknown.iterrows():
        why = "no GPU count (ingest with --tag gpus=N)" if pd.isna(row[Y]) else \
            "neither mean TPOT nor concurrency"
        notes.append(f"{row['_name']}: left out, {why}.")
    ordered = part.sort_values([Y, X], ascending=False, na_position="last", kind="stable")
    cells = []
    for _, row in ordered.iterrows():
        cells.append([row["_name"], _num(row[X]), _num(row.get("gpus"), 0), _num(row[Y]),
                      _num(row.get("output_throughput")), "yes" if row["on_frontier"] else ""])
    columns = [Column("_name", "Configuration", kind="text"),
               Column(X, "Per-user Tok/s", better="higher"),
               Column("gpus", "GPUs", kind="int"),
               Column(Y, "Output Tok/s/GPU", better="higher"),
               Column("output_throughput", "Output Tok/s", better="higher"),
               Column("on_frontier", "Frontier", kind="text")]
    bold = [[False, False, False, False, False, flag == "yes"] for *_, flag in cells]
    notes.insert(0, "Per-user Tok/s = 1000 / mean TPOT (or output throughput / concurrency); "
                    "frontier: no other configuration of the group has as much of both and "
                    "more of one.")
    return Report(spec, f"{spec.title}: {title}" if title else spec.title, spec.description,
                  Table(columns, cells, bold), part, notes, filters, slug=slugify(title),
                  draw=chart)


def _num(value, decimals: int = 2) -> str:
    if value is None or pd.isna(value):
        return ""
    return str(int(value)) if decimals == 0 else format_number(float(value))


def chart(report: Report, base: Path) -> tuple[Path, Path] | None:
    """Per-user against per-GPU throughput; the frontier's points joined and labelled."""
    import matplotlib.pyplot as plt

    from .charts import save_figure

    data = report.frame.dropna(subset=[X, Y]) if X in report.frame else pd.DataFrame()
    if data.empty:
        return None
    fig, ax = plt.subplots(figsize=(7, 4.5))
    others = data[~data["on_frontier"]]
    best = data[data["on_frontier"]].sort_values(X)
    ax.scatter(others[X], others[Y], color="0.6", label="dominated")
    ax.plot(best[X], best[Y], marker="o", color="C3", label="frontier")
    for i, (_, row) in enumerate(data.sort_values([X, Y]).iterrows()):
        # Short labels (no organisation), staggered so that near points stay readable.
        label = re.sub(r"\b[\w.-]+/", "", str(row["_name"]))[:36]
        ax.annotate(label, (row[X], row[Y]), fontsize=6, textcoords="offset points",
                    xytext=(4, 3 + 8 * (i % 3)))
    ax.set_xlabel("Per-user output tok/s (1000 / mean TPOT)")
    ax.set_ylabel("Output tok/s per GPU")
    ax.set_title(report.title[:90])
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    return save_figure(fig, base)
