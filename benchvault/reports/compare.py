"""Baseline vs candidate, side by side with speedups (like llama.cpp's compare-llama-bench.py).

Rows of the baseline and of the candidate are paired on the report kind's match columns (minus
the columns the two selections differ by); repeated measurements of a pair are averaged.
Speedup is candidate/baseline for higher-is-better metrics and baseline/candidate for
lower-is-better ones, so above 1 is always better; change is the speedup as a percentage
(``1.25x`` = ``+25.0%``, ``0.80x`` = ``-20.0%``).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from .derive import derive
from .kinds import kind as get_kind
from .query import (ReportError, apply_where, connect_readonly, has_table, load_table,
                    parse_conditions)
from .render import DISPLAY, ReportOptions, naming_for
from .table import Column, Table, column_info, escape_cell, format_number, format_value


@dataclass
class Comparison:
    table: Table | None
    match: list[str]
    metrics: list[str]
    worst_change: float | None = None          # percent, lowest over all pairs and metrics
    notes: list[str] = field(default_factory=list)

    def regressed(self, pct: float) -> bool:
        return self.worst_change is not None and self.worst_change < -abs(pct)

    def markdown(self) -> str:
        blocks = [self.table.markdown()] if self.table else []
        if self.notes:
            blocks.append("\n".join(f"- {escape_cell(n)}" for n in self.notes))
        return "\n\n".join(blocks) + "\n"


def speedup(base: float, cand: float, better: str | None) -> float | None:
    if base is None or cand is None or pd.isna(base) or pd.isna(cand):
        return None
    if better == "lower":
        return base / cand if cand else None
    return cand / base if base else None


def format_speedup(ratio: float | None) -> tuple[str, str]:
    if ratio is None:
        return "", ""
    change = f"{(ratio - 1.0) * 100.0:.1f}"
    change = "0.0" if change == "-0.0" else change
    return f"{format_number(ratio)}x", ("" if change.startswith("-") else "+") + change + "%"


def compare(db_path: str | Path, baseline: list[str], candidate: list[str], *,
            kind: str = "sweep", where: list[str] | None = None, metrics: list[str] | None = None,
            match: list[str] | None = None, options: ReportOptions | None = None,
            conn: sqlite3.Connection | None = None) -> Comparison:
    spec = get_kind(kind)
    options = options or ReportOptions()
    own = conn is None
    conn = conn or connect_readonly(db_path)
    try:
        if not has_table(conn, spec.table):
            return Comparison(None, [], [], notes=[f"This warehouse has no `{spec.table}` table."])
        frame = derive(load_table(conn, spec.table), naming_for(options),
                       scale_replicas=options.scale_replicas)
    finally:
        if own:
            conn.close()
    frame = apply_where(frame, parse_conditions(where or []), DISPLAY)
    base_conds, cand_conds = parse_conditions(baseline), parse_conditions(candidate)
    if not base_conds or not cand_conds:
        raise ReportError("compare wants at least one --baseline and one --candidate condition")
    base = apply_where(frame, base_conds, DISPLAY)
    cand = apply_where(frame, cand_conds, DISPLAY)
    differing = {c.column for c in base_conds + cand_conds}
    match = list(match) if match else [c for c in spec.match if c not in differing]
    metrics = list(metrics) if metrics else [spec.metric]
    for name in match + metrics:
        if name not in frame:
            raise ReportError(f"unknown column {name!r}")
    notes = []
    if base.empty or cand.empty:
        notes.append(("No baseline rows" if base.empty else "No candidate rows") + " match.")
        return Comparison(None, match, metrics, notes=notes)

    def shown(df: pd.DataFrame) -> pd.DataFrame:
        df = df.copy()
        for col in match:
            if col in DISPLAY and DISPLAY[col] in df:
                df[col] = df[DISPLAY[col]]
        out = df[metrics].apply(pd.to_numeric, errors="coerce")
        for col in match:       # pair on the values as printed (16 and 16.0 are one key)
            out[col] = df[col].map(lambda v, info=column_info(spec.table, col):
                                   format_value(v, info))
        return out.groupby(match, sort=False, dropna=False)[metrics].mean().reset_index() \
            if match else out[metrics].mean().to_frame().T

    b, c = shown(base), shown(cand)
    paired = b.merge(c, on=match, how="inner", suffixes=("_base", "_cand")) if match else \
        b.add_suffix("_base").join(c.add_suffix("_cand"))
    if paired.empty:
        notes.append(f"No baseline and candidate rows share {', '.join(match)}.")
        return Comparison(None, match, metrics, notes=notes)
    if match:
        for name, side, other in (("baseline", b, c), ("candidate", c, b)):
            lonely = side.merge(other[match], on=match, how="left", indicator=True)
            lonely = lonely[lonely["_merge"] == "left_only"]
            for _, row in lonely.iterrows():
                notes.append(f"Only in the {name}: " +
                             ", ".join(f"{k}={row[k]}" for k in match))
    columns = [column_info(spec.table, m) for m in match]
    for col in columns:
        col.kind = "text"
        col.fmt = dict(spec.formats).get(col.name)
    cells, worst = [], None
    for _, row in paired.iterrows():
        line = [format_value(row[m], col) for m, col in zip(match, columns)]
        for metric in metrics:
            info = column_info(spec.table, metric)
            ratio = speedup(row[f"{metric}_base"], row[f"{metric}_cand"], info.better)
            text, change = format_speedup(ratio)
            line += [format_value(row[f"{metric}_base"], info),
                     format_value(row[f"{metric}_cand"], info), text, change]
            if ratio is not None:
                pct = (ratio - 1.0) * 100.0
                worst = pct if worst is None else min(worst, pct)
        cells.append(line)
    for metric in metrics:
        info = column_info(spec.table, metric)
        columns += [Column(metric, f"Baseline {info.header}"),
                    Column(metric, f"Candidate {info.header}"),
                    Column("speedup", "Speedup"), Column("change", "Change")]
    table = Table(columns, cells, [[False] * len(columns) for _ in cells])
    return Comparison(table, match, metrics, worst, notes)
