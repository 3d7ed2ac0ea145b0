"""What the analysis reports (SLOs, Pareto frontier, trends) stand on: the rows a report reads,
filtered, with repeats folded into their configuration, split into comparable groups.

Each analysis is a module of its own (slo.py, pareto.py, trend.py) with a ``build(conn,
options)`` that returns :class:`~benchvault.reports.render.Report` objects, rendered and charted
like every other report.
"""

from __future__ import annotations

import math
import sqlite3
from dataclasses import dataclass

import pandas as pd

from .derive import derive
from .experiments import TRIVIAL, Layout, add_keys, fold_repeats, layout_for, varying
from .kinds import ReportKind
from .query import (ReportError, apply_where, has_table, load_table, parse_conditions,
                    why_empty)
from .report import Report, ReportOptions, naming_for
from .experiments import DISPLAY
from .table import column_info

LOAD = ("max_concurrency", "request_rate")


@dataclass
class Rows:
    """The rows of one analysis, or why there are none."""

    frame: pd.DataFrame
    layout: Layout | None
    filters: list[str]
    empty_note: str | None = None


def load(conn: sqlite3.Connection, table: str, options: ReportOptions,
         metrics: list[str]) -> Rows:
    conditions = parse_conditions(options.where)
    filters = [str(c) for c in conditions]
    if not has_table(conn, table):
        return Rows(pd.DataFrame(), None, filters, f"This warehouse has no `{table}` table.")
    frame = add_keys(derive(load_table(conn, table, conditions), naming_for(options),
                            scale_replicas=options.scale_replicas), table)
    frame = apply_where(frame, conditions, DISPLAY)
    if frame.empty:
        # SQL narrowed the rows already: ask all of them which filter left none.
        everything = derive(load_table(conn, table), naming_for(options)) if conditions \
            else frame
        reason = why_empty(everything, conditions, DISPLAY) if conditions else \
            "nothing of this kind is in the warehouse"
        return Rows(frame, None, filters, f"No rows match: {reason}.")
    layout = layout_for(table)
    if layout is not None:
        frame = fold_repeats(frame, layout.repeat_key, [m for m in metrics if m in frame],
                             options.repeats)
    return Rows(frame, layout, filters)


def groups(rows: Rows) -> list[tuple[str, pd.DataFrame]]:
    """(title, rows) per comparable group, in the order the groups first appear."""
    frame, layout = rows.frame, rows.layout
    if layout is None or layout.group_key not in frame:
        return [("", frame)]
    keys = frame[layout.group_key].astype("string").fillna("")
    out = []
    for key in dict.fromkeys(keys):
        part = frame[keys == key]
        title_column = next((c for c in ("group_title", "_group_title") if c in part), None)
        title = str(part[title_column].dropna().iloc[0]) if title_column and \
            part[title_column].notna().any() else ""
        out.append((title, part))
    return out


def series_fields(part: pd.DataFrame, layout: Layout, leave_out: tuple[str, ...] = LOAD
                  ) -> list[str]:
    """The configuration fields that tell the group's series apart (its load left out)."""
    return [f for f in varying(part, layout.fields) if f not in leave_out]


def series_of(part: pd.DataFrame, fields: list[str], table: str = "serving_runs"
              ) -> pd.Series:
    """A text naming each row's series: `vLLM · TP 16 · PP 1 · Num prompts 1024` (names
    read as they are; numbers with their header)."""
    if not fields:
        return pd.Series(["all runs"] * len(part), index=part.index)

    def name(row: pd.Series) -> str:
        parts = []
        for f in fields:
            value = row.get(DISPLAY[f]) if DISPLAY.get(f) in row.index else row.get(f)
            if not _present(value) or TRIVIAL.get(f) == value:
                continue
            info = column_info(table, f)
            parts.append(_short(value) if info.kind == "text" or isinstance(value, str)
                         else f"{info.header} {_short(value)}")
        return " · ".join(parts) or "all runs"

    return part.apply(name, axis=1)


def _present(value) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value)) \
        and value != ""


def _short(value) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def empty_report(spec: ReportKind, title: str, rows: Rows) -> Report:
    return Report(spec, title, spec.description, None, rows.frame, [rows.empty_note or
                                                                    "No rows."], rows.filters)


def require_metric(frame: pd.DataFrame, name: str, table: str) -> None:
    if name not in frame:
        numeric = sorted(c for c in frame.columns if not c.startswith("_")
                         and pd.api.types.is_numeric_dtype(frame[c]) and not c.endswith("_id"))
        raise ReportError(f"unknown metric {name!r} in {table}; metrics: {', '.join(numeric)}")
