"""Make a report: read (read-only) → derive → filter → sort → format → render with jinja2."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

import jinja2
import pandas as pd

from .derive import Naming, derive, load_attributes
from .kinds import KINDS, ReportKind, kind as get_kind
from .query import (Condition, ReportError, apply_where, connect_readonly, has_table, load_table,
                    parse_conditions, run_sql)
from .table import Column, Table, build_table, column_info

TEMPLATES = Path(__file__).parent / "templates"
# Columns shown with a display value instead of the stored one.
DISPLAY = {"model": "_model_display", "engine": "_engine_display"}


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

    @property
    def markdown_table(self) -> str:
        return self.table.markdown() if self.table is not None else ""


def naming_for(options: ReportOptions) -> Naming:
    attributes = load_attributes(options.models_file) if options.models_file else {}
    if options.name_from not in ("model", "label", "section", "source"):
        raise ReportError(f"--name-from wants model, label, section or source, "
                          f"got {options.name_from!r}")
    return Naming(options.name_from, dict(options.renames), attributes)


def _sort(frame: pd.DataFrame, spec: ReportKind, keys: list[str]) -> pd.DataFrame:
    if keys:
        names = [k.lstrip("-") for k in keys]
        for name in names:
            if name not in frame:
                raise ReportError(f"--sort: unknown column {name!r}")
        return frame.sort_values(names, ascending=[not k.startswith("-") for k in keys],
                                 kind="stable", na_position="last")
    if spec.sort:
        return frame.sort_values([k for k in spec.sort if k in frame], kind="stable",
                                 na_position="last")
    if spec.sweep and "max_concurrency" in frame and len(frame):
        group = group_key(frame)
        first = {g: i for i, g in reversed(list(enumerate(group)))}
        frame = frame.assign(_group=[first[g] for g in group])
        return frame.sort_values(["_group", "max_concurrency"], kind="stable",
                                 na_position="last").drop(columns="_group")
    return frame


def group_key(frame: pd.DataFrame) -> list[tuple]:
    """One chart line / one sweep per engine, model and config (the innermost heading)."""
    parts = []
    for _, row in frame.iterrows():
        section = row.get("section")
        parts.append((row.get("_engine_display") or row.get("engine") or "",
                      row.get("_model_display") or "",
                      section.split(" > ")[-1] if isinstance(section, str) else ""))
    return parts


def resolve_columns(spec: ReportKind, frame: pd.DataFrame, options: ReportOptions,
                    selected: list[str] | None = None) -> list[Column]:
    """``--columns``, else what ``--sql`` selected, else the kind's defaults."""
    wanted = list(options.columns)
    if not wanted:
        if selected is not None:
            wanted = list(selected)
        else:
            # Defaults: the kind's columns that hold something, and the context columns
            # whose value differs between the rows.
            wanted = [c for c in spec.columns if c in frame.columns
                      and frame[DISPLAY[c] if DISPLAY.get(c) in frame else c].notna().any()]
            varying = [c for c in spec.context if c in frame.columns and c not in wanted
                       and frame[c].astype("string").fillna("").nunique() > 1]
            at = wanted.index(spec.context_before) if spec.context_before in wanted else 0
            wanted = wanted[:at] + varying + wanted[at:]
    missing = [c for c in wanted if c not in frame.columns]
    if missing:
        known = ", ".join(sorted(c for c in frame.columns if not c.startswith("_")))
        raise ReportError(f"--columns: unknown {', '.join(missing)}; columns: {known}")
    formats = dict(spec.formats) | options.formats
    out = []
    for name in wanted:
        col = column_info(spec.table, name)
        col.header = options.headers.get(name) or dict(spec.headers).get(name) or col.header
        col.fmt = formats.get(name) or None
        out.append(col)
    return out


def make_report(db_path: str | Path, kind: str, options: ReportOptions | None = None,
                conn: sqlite3.Connection | None = None) -> Report:
    """Build report ``kind`` from the warehouse at ``db_path`` (opened read-only)."""
    options = options or ReportOptions()
    spec = get_kind(kind)
    own = conn is None
    conn = conn or connect_readonly(db_path)
    try:
        return _make(conn, spec, options)
    finally:
        if own:
            conn.close()


def _make(conn: sqlite3.Connection, spec: ReportKind, options: ReportOptions) -> Report:
    title = options.title or spec.title
    conditions: list[Condition] = parse_conditions(options.where)
    filters = [str(c) for c in conditions] + ([f"sql: {options.sql}"] if options.sql else [])
    if options.sql:
        frame = run_sql(conn, options.sql)
    elif not has_table(conn, spec.table):
        note = (f"This warehouse has no `{spec.table}` table: nothing of this kind has been "
                f"ingested into it, or it was built by a benchvault that does not read it yet.")
        return Report(spec, title, spec.description, None, pd.DataFrame(), [note], filters)
    else:
        frame = load_table(conn, spec.table)
    selected = [c for c in frame.columns if c not in ("id", "source_id", "tags")]
    frame = derive(frame, naming_for(options), scale_replicas=options.scale_replicas)
    if not options.sql:
        frame = apply_where(frame, parse_conditions(spec.where), DISPLAY)
    frame = apply_where(frame, conditions, DISPLAY)
    frame = _sort(frame, spec, options.sort)
    notes = []
    if frame.empty:
        notes.append("No rows match" + (f": {'; '.join(filters)}." if filters else "."))
        return Report(spec, title, spec.description, None, frame, notes, filters)
    columns = resolve_columns(spec, frame, options, selected if options.sql else None)
    display = {c: d for c, d in DISPLAY.items() if d in frame}
    table = build_table(frame, columns, display=display, mark_best=options.mark_best,
                        best_within=tuple(k for k in spec.best_within if k in frame))
    if "replicas" in frame and options.scale_replicas:
        scaled = frame[frame["replicas"] > 1]
        for _, row in scaled.iterrows():
            who = row.get("_model_display") or row.get("label") or ""
            notes.append(f"{who}: {int(row['replicas'])} replicas - throughput multiplied and "
                         f"duration divided by {int(row['replicas'])}.")
    if table.any_bold:
        within = f" among rows of the same {', '.join(spec.best_within)}" \
            if spec.best_within else ""
        notes.append(f"Bold: the best value of each column{within} (higher throughput, lower "
                     f"latency and duration); ties are all bold.")
    return Report(spec, title, spec.description, table, frame, notes, filters)


# --- rendering ---------------------------------------------------------------------------------

def environment(extra_dir: Path | None = None) -> jinja2.Environment:
    loaders: list[jinja2.BaseLoader] = [jinja2.FileSystemLoader(str(TEMPLATES))]
    if extra_dir is not None:
        loaders.insert(0, jinja2.FileSystemLoader(str(extra_dir)))
    return jinja2.Environment(loader=jinja2.ChoiceLoader(loaders), autoescape=False,
                              keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True,
                              undefined=jinja2.StrictUndefined)


def render(reports: list[Report], *, template: str | None = None, heading_level: int = 2,
           title: str | None = None) -> str:
    """Markdown for ``reports`` through ``template`` (a file path) or the built-in one."""
    if template:
        path = Path(template)
        if not path.exists():
            raise ReportError(f"--template {template}: no such file")
        tpl = environment(path.parent).get_template(path.name)
    else:
        tpl = environment().get_template("report.md.j2")
    text = tpl.render(reports=reports, report=reports[0] if reports else None, title=title,
                      heading="#" * heading_level)
    return text.rstrip("\n") + "\n"


def render_region(report: Report) -> str:
    """What a README marker region holds: the table, its chart links and notes."""
    text = environment().get_template("region.md.j2").render(report=report)
    return text.strip("\n")


def build(db_path: str | Path, kinds: list[str], options: ReportOptions | None = None,
          out_dir: Path | None = None, prefix: str = "report", table_only: bool = False) -> str:
    """Markdown for ``kinds``; with ``out_dir``, also ``<prefix>.md`` and its charts there.

    ``kinds`` may be ``["all"]`` (every built-in report; a missing table becomes a note).
    """
    from .charts import write_charts

    options = options or ReportOptions()
    names = list(KINDS) if kinds in ([], ["all"]) else kinds
    conn = connect_readonly(db_path)
    try:
        reports = [make_report(db_path, name, options, conn=conn) for name in names]
    finally:
        conn.close()
    if out_dir is not None:
        for report in reports:
            charts = report.kind.charts if options.charts is None else options.charts
            write_charts(report, out_dir, f"{prefix}-{report.kind.name}", list(charts))
    if table_only:
        return "\n\n".join(render_region(r) for r in reports) + "\n"
    title = options.title if len(reports) > 1 else None
    if len(reports) == 1 and options.title:
        reports[0].title = options.title
    text = render(reports, template=options.template,
                  title=title or ("benchvault report" if len(reports) > 1 else None))
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / f"{prefix}.md").write_text(text, encoding="utf-8")
    return text
