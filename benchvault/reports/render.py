"""Make a report: read (read-only) → derive → filter → sort → format → render with jinja2."""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path
from typing import Iterator

import jinja2
import pandas as pd

from .derive import derive
from .experiments import (DISPLAY, Layout, add_keys, field_text, fold_repeats, gpu_names,
                          group_key, layout_for, shared, split, varying, with_texts)
from .kinds import ReportKind, kind as get_kind
from .narrowfold import derive_folded, fold_runs
from .query import (PATH, Condition, ReportError, apply_where, connect_readonly, file_order,
                    has_table,
                    load_table, parse_conditions, run_sql, table_columns, why_empty)
from .report import Report, ReportOptions, naming_for, slugify
from .table import Column, build_table, column_info, escape_cell, format_value

TEMPLATES = Path(__file__).parent / "templates"
# `report all`: every kind whose rows it shows once (engines and llama-bench-compare show the
# same rows as sweep and llama-bench, whose group tables already lead with what varies).
ALL = ("sweep", "llama-bench", "spec-decode", "capacity", "offline")
# ... of which these only when their table holds a row (a serving warehouse gets no empty
# offline section).
ALL_WHEN_PRESENT = {"offline": "offline_runs"}
# Kind columns that are configuration fields shown by the group layout when they vary.
LEADING_SKIP = ("config",)
def _sort(frame: pd.DataFrame, spec: ReportKind, keys: list[str],
          layout: Layout | None = None) -> pd.DataFrame:
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
        group = group_key(frame, layout)
        first = {g: i for i, g in reversed(list(enumerate(group)))}
        frame = frame.assign(_group=[first[g] for g in group])
        return frame.sort_values(["_group", "max_concurrency"], kind="stable",
                                 na_position="last").drop(columns="_group")
    return frame


def resolve_columns(spec: ReportKind, frame: pd.DataFrame, options: ReportOptions,
                    selected: list[str] | None = None,
                    leading: list[str] | None = None) -> list[Column]:
    """``--columns``, else what ``--sql`` selected, else ``leading`` (the configuration fields
    that vary in a group's table) before the kind's measured columns, else the kind's
    defaults; an ``n`` column when rows fold repeats."""
    wanted = list(options.columns)
    if not wanted:
        if selected is not None:
            wanted = list(selected)
        elif leading is not None:
            fields = set(layout_for(spec.table).fields)
            measured = [c for c in spec.columns if c not in fields and c not in LEADING_SKIP
                        and c in frame.columns and frame[c].notna().any()]
            wanted = leading + measured
            if "n" in frame and (frame["n"] > 1).any():
                wanted.append("n")
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
    """Build report ``kind`` as one table (the rows ``options`` select, groups together)."""
    options = options or ReportOptions()
    if options.group is None:
        options = dataclasses.replace(options, group=False)
    return make_reports(db_path, kind, options, conn)[0]


def make_reports(db_path: str | Path, kind: str, options: ReportOptions | None = None,
                 conn: sqlite3.Connection | None = None) -> list[Report]:
    """Build report ``kind`` from the warehouse at ``db_path`` (opened read-only): one report
    per comparable group, unless grouping is off (by default it is when --where or --sql
    chose the rows: the user's selection is the table)."""
    options = options or ReportOptions()
    spec = get_kind(kind)
    own = conn is None
    conn = conn or connect_readonly(db_path)
    try:
        if spec.analysis:
            import importlib

            module = importlib.import_module(f"{__package__}.{spec.analysis}")
            return module.build(conn, spec, options)
        return _make(conn, spec, options)
    finally:
        if own:
            conn.close()


def _make(conn: sqlite3.Connection, spec: ReportKind, options: ReportOptions) -> list[Report]:
    title = options.title or spec.title
    conditions: list[Condition] = parse_conditions(options.where)
    filters = [str(c) for c in conditions] + ([f"sql: {options.sql}"] if options.sql else [])
    if options.sql:
        frame = run_sql(conn, options.sql)
    elif not has_table(conn, spec.table):
        note = (f"This warehouse has no `{spec.table}` table: nothing of this kind has been "
                f"ingested into it, or it was built by a benchvault that does not read it yet.")
        return [Report(spec, title, spec.description, None, pd.DataFrame(), [note], filters)]
    else:
        grouped = options.group if options.group is not None else not options.where
        layout = layout_for(spec.table)
        if layout is not None and layout.group_key in table_columns(conn, spec.table):
            if grouped:
                reports = _make_by_group(conn, spec, options, layout, title, filters)
                if reports:
                    return reports
            else:
                folded = _folded_in_batches(conn, spec, options, layout, conditions)
                if folded is not None:
                    frame = with_texts(_needed(folded, spec, options, layout), layout.fields)
                    return [_one_table(spec, frame, options, title, filters, None, None)]
        frame = load_table(conn, spec.table, [*parse_conditions(spec.where), *conditions])
    selected = [c for c in frame.columns if c not in ("id", "source_id", "tags")]
    frame = derive(frame, naming_for(options), scale_replicas=options.scale_replicas)
    layout = None if options.sql else layout_for(spec.table)
    names = dict(conn.execute("SELECT id, name FROM sources").fetchall()) \
        if spec.table == "server_launches" and has_table(conn, "sources") else None
    frame = add_keys(frame, spec.table, names)
    if not options.sql:
        frame = apply_where(frame, parse_conditions(spec.where), DISPLAY)
    everything = frame
    frame = apply_where(frame, conditions, DISPLAY)
    if frame.empty:
        if conditions and not options.sql:     # SQL narrowed the rows already: all of them
            everything = apply_where(derive(load_table(conn, spec.table), naming_for(options)),
                                     parse_conditions(spec.where), DISPLAY)
        notes = ["No rows match" + (f": {why_empty(everything, conditions, DISPLAY)}."
                                    if conditions else ".")]
        return [Report(spec, title, spec.description, None, frame, notes, filters)]
    if layout is not None:
        frame = _fold(frame, spec, layout, options.repeats)
        frame = with_texts(_needed(frame, spec, options, layout), layout.fields)
    grouped = options.group if options.group is not None else not (options.where or
                                                                   options.sql)
    # A table with no layout may still be grouped by add_keys (a launch: model and hardware).
    key = layout.group_key if layout else "_group_key" if "_group_key" in frame else None
    parts = _in_title_order([part for _, part in split(frame, key)]) \
        if grouped and key else [frame]
    reports = []
    for part in parts:
        part_title = title
        if grouped and key is not None:
            part_title = f"{title}: {_group_title(part)}"
        report = _one_table(spec, part, options, part_title, filters,
                            selected if options.sql else None,
                            layout if grouped and not options.columns else None)
        report.slug = slugify(_group_title(part)) if len(parts) > 1 else ""
        reports.append(report)
    return reports


GROUP_BATCH_ROWS = 6000


def _make_by_group(conn: sqlite3.Connection, spec: ReportKind, options: ReportOptions,
                   layout: Layout, title: str, filters: list[str]) -> list[Report]:
    """One table per comparable group, whole groups read from SQL a batch at a time: a year
    of runs is never in memory at once (the warehouse stores every run's group), and a batch
    of ~6,000 rows keeps the per-frame work few.  Empty when no row is left (the caller then
    says which filter emptied the selection)."""
    key = layout.group_key
    assert key is not None
    own, asked = parse_conditions(spec.where), parse_conditions(options.where)
    folded = _folded_narrow(conn, spec, options, layout) \
        if not own and not asked and options.repeats == "mean" else None
    parts: list[tuple[str, pd.DataFrame]] = []
    if folded is None:
        sizes = _group_sizes(conn, spec.table, key)
    else:
        # Groups holding a mixed configuration are folded run by run, below.
        groups = folded[key].map(field_text)
        mixed = set(groups[folded.pop("_mixed")])
        in_mixed = groups.isin(mixed)
        sizes = {g: n for g, n in _group_sizes(conn, spec.table, key).items()
                 if field_text(g) in mixed} if mixed else {}
        if not in_mixed.all():
            parts += split(with_texts(_needed(folded[~in_mixed], spec, options, layout),
                                      layout.fields), key)
    for batch in _folded_batches(conn, spec, options, layout, asked, sizes):
        parts += split(with_texts(_needed(batch, spec, options, layout), layout.fields), key)
    parts = _in_title_order([part for _, part in parts if not part.empty])
    reports = []
    for part in parts:
        report = _one_table(spec, part, options, f"{title}: {_group_title(part)}", filters,
                            None, layout if not options.columns else None)
        report.slug = slugify(_group_title(part)) if len(parts) > 1 else ""
        reports.append(report)
    return reports


def _folded_in_batches(conn: sqlite3.Connection, spec: ReportKind, options: ReportOptions,
                       layout: Layout, conditions: list[Condition]) -> pd.DataFrame | None:
    """The one table of an ungrouped report (a --where): the runs read, derived, filtered
    and folded a batch of groups at a time, as _make_by_group reads them (a configuration
    never spans groups), then put back in file order; None when no run is left.  A --where
    that keeps most of a year of runs held them all at once: 424-506 MB on 100k runs."""
    parts = list(_folded_batches(conn, spec, options, layout, conditions,
                                 _group_sizes(conn, spec.table, layout.group_key)))
    if not parts:
        return None
    folded = pd.concat(parts, ignore_index=True).infer_objects() if len(parts) > 1 else parts[0]
    return folded.sort_values(file_order(folded.columns) or ["id"], kind="stable",
                              ignore_index=True)


def _folded_batches(conn: sqlite3.Connection, spec: ReportKind, options: ReportOptions,
                    layout: Layout, conditions: list[Condition], sizes: dict
                    ) -> Iterator[pd.DataFrame]:
    """The runs of the groups in ``sizes`` (runs per group), a batch of groups at a time:
    read, derived, kept by the kind's own and the asked ``conditions``, and folded; a batch
    nothing is left of is passed over."""
    own = parse_conditions(spec.where)
    for batch in _batches(sizes):
        frame = load_table(conn, spec.table, [*own, *conditions],
                           among=(layout.group_key, batch))
        frame = add_keys(derive(frame, naming_for(options),
                                scale_replicas=options.scale_replicas), spec.table)
        frame = apply_where(apply_where(frame, own, DISPLAY), conditions, DISPLAY)
        if not frame.empty:
            yield _fold(frame, spec, layout, options.repeats)


def _in_title_order(parts: list[pd.DataFrame]) -> list[pd.DataFrame]:
    """Group tables by their titles; two groups of one title by where each was first read."""
    def place(part: pd.DataFrame) -> tuple:
        first = part.iloc[0]
        return tuple(field_text(first[c]) if isinstance(first[c], str) else
                     (float("-inf") if pd.isna(first[c]) else first[c])
                     for c in file_order(part.columns) if c != "id")

    return sorted(parts, key=lambda part: (_group_title(part), place(part)))


def _group_sizes(conn: sqlite3.Connection, table: str, key: str) -> dict:
    """Runs per group, groups in the order of their titles (and keys): what a batch holds
    never depends on the order the runs were stored in."""
    groups = key == "group_id" and has_table(conn, "experiment_groups")
    order = "g.title, g.key" if groups else f't."{key}"'
    join = "LEFT JOIN experiment_groups g ON g.id = t.group_id" if groups else ""
    sizes: dict = {}
    for (group,) in conn.execute(f'SELECT t."{key}" FROM "{table}" t {join} ORDER BY {order}'):
        sizes[group] = sizes.get(group, 0) + 1
    return sizes


def _batches(sizes: dict) -> list[list]:
    """Groups in batches of about GROUP_BATCH_ROWS runs (a group is never split)."""
    batches: list[list] = []
    rows = 0
    for group, size in sizes.items():
        if not batches or (batches[-1] and rows + size > GROUP_BATCH_ROWS):
            batches.append([])
            rows = 0
        batches[-1].append(group)
        rows += size
    return batches


def _folded_narrow(conn: sqlite3.Connection, spec: ReportKind, options: ReportOptions,
                   layout: Layout) -> pd.DataFrame | None:
    """Every run's repeats folded from a narrow read (see narrowfold), derived; None when
    nothing has repeats."""
    folded = fold_runs(conn, spec.table, layout.repeat_key,
                       lambda c: column_info(spec.table, c).better is not None,
                       _wanted(spec, options, layout))
    if folded is None:
        return None
    return derive_folded(
        folded,
        lambda f: add_keys(derive(f, naming_for(options), scale_replicas=options.scale_replicas),
                           spec.table),
        lambda values, c: column_info(spec.table, c).better is not None
        and pd.api.types.is_numeric_dtype(values))


def _needed(frame: pd.DataFrame, spec: ReportKind, options: ReportOptions,
            layout: Layout) -> pd.DataFrame:
    """Only the columns a report can show or needs to lay out (a year of runs is wide)."""
    wanted = _wanted(spec, options, layout)
    keep = [c for c in frame.columns if c in wanted or c.startswith("_std_")
            or c.replace("_std_", "") in wanted]
    return frame[keep]


def _wanted(spec: ReportKind, options: ReportOptions, layout: Layout) -> set[str]:
    return {*spec.columns, *spec.context, *spec.best_within, *layout.fields,
              *DISPLAY.values(), *options.columns, *(s.lstrip("-") for s in options.sort),
              layout.repeat_key, layout.group_key or "", "n", "group_title", "_group_title",
              "label", "section", "config", "source", "replicas", "gpus", "test",
              "max_concurrency", "request_rate", "model_family", "id", "line_start",
              "line_end", PATH, "source_id", *(k for k in spec.match)}


def _fold(frame: pd.DataFrame, spec: ReportKind, layout: Layout, mode: str) -> pd.DataFrame:
    """Repeats folded per --repeats; the llama-bench `t/s` cell shows the repeats' spread."""
    metrics = [c for c in frame.columns if column_info(spec.table, c).better is not None
               and pd.api.types.is_numeric_dtype(frame[c])]
    better = column_info(spec.table, spec.metric).better if spec.metric else None
    frame = fold_repeats(frame, layout.repeat_key, metrics, mode, spec.metric, better)
    if "ts" in frame and "_std_avg_ts" in frame:
        spread = frame["_std_avg_ts"]
        frame["ts"] = [f"{a:.2f} ± {d:.2f}" if n > 1 and not pd.isna(d) else t
                       for a, d, n, t in zip(frame["avg_ts"], spread, frame["n"], frame["ts"])]
    return frame


def _group_title(frame: pd.DataFrame) -> str:
    for column in ("group_title", "_group_title"):
        if column in frame and frame[column].notna().any():
            return str(frame[column].dropna().iloc[0])
    return "ungrouped"


def _caption(spec: ReportKind, frame: pd.DataFrame, layout: Layout) -> str | None:
    """`Engine vLLM · Hardware H100 · Model deepseek-ai/DeepSeek-V3 · Dataset sharegpt`."""
    parts = []
    for name, value in shared(frame, layout.fields).items():
        info = column_info(spec.table, name)
        column = DISPLAY.get(name)
        shown = frame[column].iloc[0] if column in frame else gpu_names(value)
        parts.append(f"{escape_cell(info.header)} {escape_cell(format_value(shown, info))}")
    return " · ".join(parts) or None


def _one_table(spec: ReportKind, frame: pd.DataFrame, options: ReportOptions, title: str,
               filters: list[str], selected: list[str] | None,
               layout: Layout | None) -> Report:
    frame = _sort(frame, spec, options.sort, layout_for(spec.table) if not options.sql
                  else None)
    notes = []
    leading = [f for f in varying(frame, layout.fields)] if layout is not None else None
    columns = resolve_columns(spec, frame, options, selected, leading)
    display = {c: d for c, d in DISPLAY.items() if d in frame}
    table = build_table(frame, columns, display=display, mark_best=options.mark_best,
                        best_within=tuple(k for k in spec.best_within if k in frame))
    if "replicas" in frame and options.scale_replicas:
        scaled = frame[frame["replicas"] > 1]
        for _, row in scaled.iterrows():
            who = row.get("_model_display") or row.get("label") or ""
            notes.append(f"{who}: {int(row['replicas'])} replicas - throughput multiplied and "
                         f"duration divided by {int(row['replicas'])}.")
    if "n" in frame and (frame["n"] > 1).any():
        notes.append("Rows that fold repeats (n > 1) show "
                     + {"mean": "the mean ± the sample standard deviation (n-1)",
                        "best": "the best run", "last": "the last run",
                        "all": "every run"}[options.repeats] + " of the configuration's runs.")
    if table.any_bold:
        within = f" among rows of the same {', '.join(spec.best_within)}" \
            if spec.best_within else ""
        notes.append(f"Bold: the best value of each column{within} (higher throughput, lower "
                     f"latency and duration); ties are all bold.")
    caption = _caption(spec, frame, layout) if layout is not None else None
    return Report(spec, title, spec.description, table, frame, notes, filters, caption=caption)


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
          out_dir: Path | None = None, prefix: str = "report", table_only: bool = False,
          reports: list[Report] | None = None) -> str:
    """Markdown for ``kinds``; with ``out_dir``, also ``<prefix>.md`` and its charts there.

    ``kinds`` may be ``["all"]`` (every built-in report; a missing table becomes a note).
    """
    options = options or ReportOptions()
    names = ALL if kinds in ([], ["all"]) else kinds
    conn = connect_readonly(db_path)
    made = reports if reports is not None else []
    try:
        if names is ALL:
            names = tuple(n for n in ALL if n not in ALL_WHEN_PRESENT or (
                has_table(conn, ALL_WHEN_PRESENT[n]) and conn.execute(
                    f"SELECT 1 FROM [{ALL_WHEN_PRESENT[n]}] LIMIT 1").fetchone()))
        made += [r for name in names for r in make_reports(db_path, name, options, conn=conn)]
    finally:
        conn.close()
    reports = made
    if out_dir is not None:
        from .charts import write_charts    # matplotlib is loaded only to draw

        for report in reports:
            charts = report.kind.charts if options.charts is None else options.charts
            name = "-".join(filter(None, (prefix, report.kind.name, report.slug)))
            write_charts(report, out_dir, name, list(charts))
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
