"""What two-way and N-way comparisons are made of: the ratio of a candidate to its baseline,
shown as a speedup and a change, and the comparison's table with its notes."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from .query import ReportError
from .table import Table, escape_cell, format_number


class NoComparableRows(ReportError):
    """Baseline and candidate share no row that compares: an answer (exit 1, one line
    naming what each side has), not a failure."""


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


def texts(series: pd.Series) -> pd.Series:
    """Values as compared and shown (a blank for none; 16.0 as 16)."""
    return series.map(lambda v: "" if v is None or (isinstance(v, float) and math.isnan(v))
                      else str(int(v)) if isinstance(v, float) and v.is_integer() else str(v))
