"""Baseline vs candidate, side by side with speedups (like llama.cpp's compare-llama-bench.py).

Rows of the baseline and of the candidate are paired on the report kind's match columns (minus
the columns the two selections differ by); repeated measurements of a pair are averaged.
Speedup is candidate/baseline for higher-is-better metrics and baseline/candidate for
lower-is-better ones, so above 1 is always better; change is the speedup as a percentage
(``1.25x`` = ``+25.0%``, ``0.80x`` = ``-20.0%``).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .derive import NAME_INPUTS, derive
from .experiments import (
    DISPLAY,
    LLAMA_BENCH,
    TEST_FIELDS,
    Layout,
    add_keys,
    fold_repeats,
    layout_for,
)
from .kinds import ReportKind
from .kinds import kind as get_kind
from .nway import is_plain, nway, side_names, sides_of
from .query import (
    ReportError,
    apply_where,
    connect_readonly,
    has_table,
    load_table,
    parse_conditions,
    read_frame,
    table_columns,
)
from .pairing import MODEL_FIELDS, differences, match_rows, note, pairing_fields, sides_line
from .ratios import Comparison, NoComparableRows, format_speedup, speedup
from .settings import shown
from .report import ReportOptions, naming_for
from .table import DECIMALS, Column, Table, column_info, format_value


def compare(db_path: str | Path, baseline: list[str], candidate: list[str] | None = None, *,
            kind: str = "sweep", where: list[str] | None = None, metrics: list[str] | None = None,
            match: list[str] | None = None, options: ReportOptions | None = None,
            conn: sqlite3.Connection | None = None, candidates: list[list[str]] | None = None,
            by: list[str] | None = None, strict: bool = False) -> Comparison:
    """Baseline against candidate (two sides), or against several (``candidates``: one list
    of conditions each; or ``by``: every other value of those columns) in an N-way table."""
    spec = get_kind(kind)
    options = options or ReportOptions()
    own = conn is None
    conn = conn or connect_readonly(db_path)
    try:
        if not has_table(conn, spec.table):
            return Comparison(None, [], [], notes=[f"This warehouse has no `{spec.table}` table."])
        if by and is_plain(baseline) and not where:
            _check_baseline(conn, spec.table, baseline, list(by), options)
        frame = derive(load_table(conn, spec.table, parse_conditions(where or [])),
                       naming_for(options), scale_replicas=options.scale_replicas)
    finally:
        if own:
            conn.close()
    frame = add_keys(frame, spec.table)
    frame = apply_where(frame, parse_conditions([*spec.where, *(where or [])]), DISPLAY)
    metrics = list(metrics) if metrics else [spec.metric]
    for name in metrics:
        if name not in frame:
            raise ReportError(f"unknown column {name!r}")
    candidates = candidates if candidates is not None else ([candidate] if candidate else [])
    if by or len(candidates) > 1:
        base, others, chosen = sides_of(frame, baseline, candidates, list(by or []))
        return nway(spec, layout_for(spec.table), frame, base, others, chosen, metrics,
                    match=list(match or []), strict=strict)
    candidate = candidates[0] if candidates else []
    base_conds, cand_conds = parse_conditions(baseline), parse_conditions(candidate)
    if not base_conds or not cand_conds:
        raise ReportError("compare wants at least one --baseline and one --candidate condition")
    base = apply_where(frame, base_conds, DISPLAY)
    cand = apply_where(frame, cand_conds, DISPLAY)
    chosen = {c.column for c in base_conds + cand_conds}
    for name in list(match or []):
        if name not in frame:
            raise ReportError(f"unknown column {name!r}")
    notes: list[str] = []
    if base.empty or cand.empty:
        side, conds = ("baseline", baseline) if base.empty else ("candidate", candidate)
        raise NoComparableRows(f"no comparable rows: no {side} rows match "
                               f"{' '.join(conds)}")
    layout = layout_for(spec.table)
    if layout is None:
        return _plain(spec, base, cand, chosen, list(match or []), metrics, notes)
    # Repeats of one configuration are averaged; nothing else is.
    base = fold_repeats(base, layout.repeat_key, metrics, "mean")
    cand = fold_repeats(cand, layout.repeat_key, metrics, "mean")
    fields = pairing_fields(layout, frame)
    matching = match_rows(base, cand, fields, spec.table, chosen=chosen,
                          match=list(match or []), strict=strict)
    if not matching.pairs:
        raise NoComparableRows(sides_line(base, cand, fields, spec.table,
                                          lambda n: _header(spec, n)))
    return _paired_table(spec, layout, base, cand, matching, chosen, metrics, notes)


def _header(spec: ReportKind, name: str) -> str:
    return column_info(spec.table, name).header


def _plain(spec: ReportKind, base: pd.DataFrame, cand: pd.DataFrame, chosen: set[str],
           match: list[str], metrics: list[str], notes: list[str]) -> Comparison:
    """A table without configurations: rows pair on the report kind's match columns."""
    key = match or [c for c in spec.match if c not in chosen and c in base]
    keyed = []
    for side in (base, cand):
        out = side.copy()
        for col in key:
            info = column_info(spec.table, col)
            out[col] = out[col].map(lambda v, info=info: format_value(v, info))
        keyed.append(out)
    b, c = keyed
    paired = b.merge(c, on=key, how="inner", suffixes=("_base", "_cand")) if key else \
        b.add_suffix("_base").join(c.add_suffix("_cand"), how="cross")
    if paired.empty:
        raise NoComparableRows(f"no comparable rows: baseline and candidate share no "
                               f"{', '.join(key)}")
    shown = Shown(key, [], [])
    return _table(spec, shown, [(row, {}) for _, row in paired.iterrows()], metrics, notes)


@dataclass
class Shown:
    """The settings a comparison shows: one column each (equal on both sides of every row),
    a baseline and a candidate column each (they differ on some row)."""

    columns: list[str]
    sides: list[str]
    order: list[str]


def _paired_table(spec: ReportKind, layout: Layout, base: pd.DataFrame, cand: pd.DataFrame,
                  matching, chosen: set[str], metrics: list[str],
                  notes: list[str]) -> Comparison:
    selection = {f for f in chosen if f not in MODEL_FIELDS}
    said = differences(matching, skip=selection)
    same, sides = [], []
    for name in matching.fields:
        if name in selection or name in TEST_FIELDS:
            continue
        values = matching.values(name)
        if name in said:
            # The model, when it differs, is always a column (the others a note if constant).
            if len(set(values)) > 1 or name in ("model", "model_type"):
                sides.append(name)
            else:
                notes.append(note(name, _header(spec, name), values))
        elif len({bv for bv, _ in values}) > 1:
            same.append(name)
    for name in spec.match:
        if name in matching.fields and name not in same and name not in sides \
                and name not in said and name not in TEST_FIELDS and name not in selection:
            same.insert(0, name)
    if layout is LLAMA_BENCH:
        same = _llama_bench_shown(same, matching, sides)
    if "test" in matching.fields:
        same.append("test")
    order = [f for f in ("n_gen", "n_prompt", "n_depth") if f in matching.fields] \
        if layout is LLAMA_BENCH else []
    rows = []
    for p in matching.pairs:
        row = pd.concat([base.loc[p.base].add_suffix("_base"), cand.loc[p.cand].add_suffix("_cand")])
        texts_of = {name: (matching.base.at[p.base, name], matching.cand.at[p.cand, name])
                    for name in matching.fields}
        rows.append((row, texts_of))
    rows = _sorted(rows, same, order)
    for name, label in (("baseline", "base"), ("candidate", "cand")):
        settings = matching.base if label == "base" else matching.cand
        used = {getattr(p, label) for p in matching.pairs}
        telling = [k for k in matching.fields if k not in ("n_prompt", "n_gen", "n_depth")
                   and (k == "test" or len(set(settings[k])) > 1 or k in same)]
        for index in settings.index:
            if index in used:
                continue
            parts = [f"{_header(spec, k)} {shown_value(k, settings.at[index, k])}"
                     for k in telling if settings.at[index, k]]
            notes.append(f"Only in the {name}: " + (", ".join(parts) or "a row"))
    return _table(spec, Shown(same, sides, order), rows, metrics, notes)


def _sorted(rows: list, names: list[str], order: list[str]) -> list:
    def key(item):
        _, texts_of = item
        out = []
        for name in [n for n in names if n != "test"] + order:
            value = texts_of.get(name, (None, None))[0]
            if name in order:
                try:
                    out.append((0, float(value), ""))
                except (TypeError, ValueError):
                    out.append((1, 0.0, str(value)))
            else:
                out.append((0, 0.0, "" if value is None else str(value)))
        return out
    return sorted(rows, key=key) if order else rows


def _check_baseline(conn: sqlite3.Connection, table: str, baseline: list[str], by: list[str],
                    options: ReportOptions) -> None:
    """A baseline no row has is an error before a year of runs is read: the --by columns'
    distinct values (with what their shown names are made of) are few."""
    present = set(table_columns(conn, table))
    stored = [c for c in by if c in present]
    if len(stored) < len(by):
        return                      # a derived column: the full read says what it takes
    # A model is shown by a name made of its path, label and heading (derive.NAME_INPUTS).
    names_from = NAME_INPUTS if "model" in by else ()
    needed = list(dict.fromkeys([*stored, *(c for c in names_from if c in present)]))
    distinct = read_frame(conn, f"SELECT DISTINCT {', '.join(f't.[{c}]' for c in needed)} "
                                f"FROM [{table}] t")
    names, keys = side_names(derive(distinct, naming_for(options)), by)
    wanted = baseline[0].lower()
    if not ((names.str.lower() == wanted) | (keys == wanted)).any():
        raise ReportError(f"--baseline {' '.join(baseline)}: no rows have it; "
                          f"{', '.join(by)} takes: {', '.join(dict.fromkeys(names))}")


def _llama_bench_shown(shown: list[str], matching, sides: list[str]) -> list[str]:
    """compare-llama-bench.py's columns: the machine and GPU layers first (the CPU too when
    layers stay on it and some row names it), then the model, then the other settings."""
    first = [f for f in ("cpu_info", "gpu_info", "n_gpu_layers", "main_gpu") if f in shown]
    layers = {v for pair in matching.values("n_gpu_layers") for v in pair} \
        if "n_gpu_layers" in matching.fields else {"99"}
    cpus = {v for pair in matching.values("cpu_info") for v in pair if v} \
        if "cpu_info" in matching.fields else set()
    if "cpu_info" not in first and cpus and len(layers) == 1 and layers != {"99"}:
        first.insert(0, "cpu_info")
    if "cpu_info" in first and not cpus:
        first.remove("cpu_info")
    rest = [f for f in shown if f not in first and f not in ("model_type", "model_filename")]
    return first + ([] if "model_type" in sides else ["model_type"]) + rest


def shown_value(name: str, value) -> str:
    return "" if value is None else shown(name, value)


def _table(spec: ReportKind, chosen: "Shown", rows: list, metrics: list[str],
           notes: list[str]) -> Comparison:
    columns = []
    for name in chosen.columns:
        col = column_info(spec.table, name)
        col.kind, col.fmt = "text", dict(spec.formats).get(name)
        columns.append(col)
    for name in chosen.sides:
        info = column_info(spec.table, name)
        columns += [Column(name, f"Baseline {info.header}", kind="text"),
                    Column(name, f"Candidate {info.header}", kind="text")]
    cells, worst = [], None
    for row, texts_of in rows:
        line = [_cell(spec, row, name, texts_of) for name in chosen.columns]
        for name in chosen.sides:
            bv, cv = texts_of[name]
            display = DISPLAY.get(name)
            if display and f"{display}_base" in row.index and bv and cv:
                bv, cv = row[f"{display}_base"], row[f"{display}_cand"]
            line += [shown(name, bv), shown(name, cv)]
        for metric in metrics:
            info = column_info(spec.table, metric)
            info.decimals = DECIMALS          # a mean: two places, as the tools print
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
    return Comparison(table, chosen.columns, metrics, worst, notes)


def _cell(spec: ReportKind, row: pd.Series, name: str, texts_of: dict) -> str:
    """A setting equal on both sides of a paired row, as shown (its display form where the
    report has one: a model's short name)."""
    display = DISPLAY.get(name)
    if display and f"{display}_base" in row.index and isinstance(row[f"{display}_base"], str):
        value = row[f"{display}_base"]
    elif name in texts_of:
        value = texts_of[name][0]
        value = shown(name, value) if value is not None else ""
    else:
        value = row.get(name, row.get(f"{name}_base"))
        value = format_value(value, column_info(spec.table, name))
    if not isinstance(value, str):
        value = "" if value is None else str(value)
    fmt = dict(spec.formats).get(name)
    return fmt.format(value) if fmt and value else value
