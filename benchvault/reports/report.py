"""What a report is: the options a user sets, and each table a report builds (with its notes,
charts and caption), before it is rendered to Markdown."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd

from .derive import Naming, load_attributes
from .kinds import ReportKind
from .query import ReportError
from .table import Table


@dataclass
class ReportOptions:
    """Everything a user can change about a report (the CLI options, one for one)."""

    where: list[str] = field(default_factory=list)
    sql: str | None = None
    columns: list[str] = field(default_factory=list)
    sort: list[str] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)
    formats: dict[str, str] = field(default_factory=dict)
    renames: dict[str, str] = field(default_factory=dict)
    name_from: str = "model"
    models_file: str | None = None
    title: str | None = None
    template: str | None = None
    scale_replicas: bool = True
    charts: list[str] | None = None      # None: the kind's default charts (when writing files)
    mark_best: bool = True
    repeats: str = "mean"                # mean | best | last | all (runs of one configuration)
    group: bool | None = None            # one table per comparable group; None: unless filtered
    # the analysis reports
    slos: list[str] = field(default_factory=list)      # slo: `p99_ttft_ms<=500` ...
    metric: str | None = None            # trend: the metric followed
    over: str = "build"                  # trend: build | version | date
    threshold: float = 5.0               # trend: a fall worse than this percent is flagged
    order: list[str] = field(default_factory=list)     # trend: the axis in this order first


@dataclass
class Report:
    kind: ReportKind
    title: str
    description: str
    table: Table | None
    frame: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    filters: list[str] = field(default_factory=list)
    charts: list[dict[str, str]] = field(default_factory=list)   # {"title", "png", "svg"}
    caption: str | None = None           # what every row shares, written once above the table
    slug: str = ""                       # names this table's chart files among its kind's
    # an analysis's own chart: draw(report, base path) → (png, svg) or None
    draw: Callable[["Report", Path], tuple[Path, Path] | None] | None = None
    regressions: int = 0                 # trend: points flagged
    axis: list[str] = field(default_factory=list)      # trend: the axis followed, in order

    @property
    def markdown_table(self) -> str:
        return self.table.markdown() if self.table is not None else ""


def naming_for(options: ReportOptions) -> Naming:
    attributes = load_attributes(options.models_file) if options.models_file else {}
    if options.name_from not in ("model", "label", "section", "source"):
        raise ReportError(f"--name-from wants model, label, section or source, "
                          f"got {options.name_from!r}")
    return Naming(options.name_from, dict(options.renames), attributes)


def slugify(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "group"
