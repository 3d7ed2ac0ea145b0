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
from .ratios import Comparison, format_speedup, speedup, texts
from .report import ReportOptions, naming_for
from .table import DECIMALS, Column, Table, column_info, format_value


def compare(db_path: str | Path, baseline: list[str], candidate: list[str] | None = None, *,
            kind: str = "sweep", where: list[str] | None = None, metrics: list[str] | None = None,
            match: list[str] | None = None, options: ReportOptions | None = None,
            conn: sqlite3.Connection | None = None, candidates: list[list[str]] | None = None,
            by: list[str] | None = None) -> Comparison:
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
        return nway(spec, layout_for(spec.table), frame, base, others, chosen, metrics)
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
    notes = []
    if base.empty or cand.empty:
        notes.append(("No baseline rows" if base.empty else "No candidate rows") + " match.")
        return Comparison(None, list(match or []), metrics, notes=notes)
    layout = layout_for(spec.table)
    if layout is not None:
        # Repeats of one configuration are averaged; nothing else is.
        base = fold_repeats(base, layout.repeat_key, metrics, "mean")
        cand = fold_repeats(cand, layout.repeat_key, metrics, "mean")
    pairing = Pairing.of(spec, layout, base, cand, chosen, list(match or []))
    b, c = (pairing.keyed(side, spec) for side in (base, cand))
    paired = b.merge(c, on=pairing.key, how="inner", suffixes=("_base", "_cand")) \
        if pairing.key else b.add_suffix("_base").join(c.add_suffix("_cand"), how="cross")
    if paired.empty:
        notes.append(f"No baseline and candidate rows share {', '.join(pairing.key)}.")
        return Comparison(None, pairing.key, metrics, notes=notes)
    paired = pairing.sorted(paired)
    for name, side, other in (("baseline", b, c), ("candidate", c, b)):
        if not pairing.key:
            continue
        lonely = side.merge(other[pairing.key].drop_duplicates(), on=pairing.key, how="left",
                            indicator=True)
        for _, row in lonely[lonely["_merge"] == "left_only"].iterrows():
            notes.append(f"Only in the {name}: " +
                         ", ".join(f"{k}={row[k]}" for k in pairing.shown))
    return _table(spec, pairing, paired, metrics, notes)


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


@dataclass
class Pairing:
    """How baseline and candidate rows pair, and which of their settings the table shows.

    Rows pair when they agree on every configuration field both selections have values of in
    common (llama-bench: every one of compare-llama-bench.py's key properties); a field whose
    values the two selections do not share (the build compared, a model and its quantization)
    tells baseline from candidate.  Settings that vary between the paired rows are shown (as
    one column, or as a baseline and a candidate column when they tell the sides apart), never
    averaged away.
    """

    key: list[str]
    shown: list[str]
    sides: list[str]              # fields shown for each side (they tell the sides apart)
    order: list[str]              # llama-bench: n_gen, n_prompt, n_depth after the shown ones

    @classmethod
    def of(cls, spec: ReportKind, layout: Layout | None, base: pd.DataFrame,
           cand: pd.DataFrame, chosen: set[str], match: list[str]) -> "Pairing":
        if match or layout is None:
            key = match or [c for c in spec.match if c not in chosen and c in base]
            return cls(key, key, [], [])
        fields = [f for f in (*layout.fields, *TEST_FIELDS) if f in base and f in cand]
        key, sides = [], []
        for f in fields:
            if f in chosen or (set(texts(base[f])) & set(texts(cand[f]))) == set():
                if f not in chosen and (texts(base[f]).nunique() > 1 or
                                        texts(cand[f]).nunique() > 1):
                    sides.append(f)
                continue
            key.append(f)
        both = pd.concat([base, cand])
        shown = [f for f in key if f not in TEST_FIELDS and texts(both[f]).nunique() > 1]
        for f in spec.match:
            if f in key and f not in shown and f not in TEST_FIELDS:
                shown.insert(0 if f != "test" else len(shown), f)
        if layout is LLAMA_BENCH:
            shown = _llama_bench_shown(shown, both)
        if "test" in both and "test" not in shown:
            shown.append("test")
        return cls(key, shown, sides, [f for f in ("n_gen", "n_prompt", "n_depth")
                                       if f in key and layout is LLAMA_BENCH])

    def keyed(self, side: pd.DataFrame, spec: ReportKind) -> pd.DataFrame:
        """The side's rows with their key fields as printed (16 and 16.0 are one key)."""
        out = side.copy()
        for col in self.key:
            source = DISPLAY[col] if col in DISPLAY and DISPLAY[col] in out else col
            info = column_info(spec.table, col)
            out[col] = out[source].map(lambda v, info=info: format_value(v, info))
        return out

    def sorted(self, paired: pd.DataFrame) -> pd.DataFrame:
        if not self.order:
            return paired
        names = [c for c in self.shown if c != "test"] + self.order
        numeric = paired[names].apply(lambda s: pd.to_numeric(s, errors="coerce")
                                      if s.name in self.order else s)
        order = numeric.sort_values(names, kind="stable").index
        return paired.loc[order]


def _llama_bench_shown(shown: list[str], rows: pd.DataFrame) -> list[str]:
    """compare-llama-bench.py's columns: the machine and GPU layers first (the CPU too when
    layers stay on it), then the model, then the other settings that differ."""
    first = [f for f in ("cpu_info", "gpu_info", "n_gpu_layers", "main_gpu") if f in shown]
    layers = texts(rows["n_gpu_layers"]) if "n_gpu_layers" in rows else pd.Series(["99"])
    if "cpu_info" not in first and "cpu_info" in rows and layers.nunique() == 1 \
            and layers.iloc[0] != "99":
        first.insert(0, "cpu_info")
    rest = [f for f in shown if f not in first and f not in ("model_type", "model_filename")]
    return first + ["model_type"] + rest


def _table(spec: ReportKind, pairing: Pairing, paired: pd.DataFrame, metrics: list[str],
           notes: list[str]) -> Comparison:
    shown = [c for c in pairing.shown]
    columns = []
    for name in shown:
        col = column_info(spec.table, name)
        col.kind, col.fmt = "text", dict(spec.formats).get(name)
        columns.append(col)
    for name in pairing.sides:
        info = column_info(spec.table, name)
        columns += [Column(name, f"Baseline {info.header}", kind="text"),
                    Column(name, f"Candidate {info.header}", kind="text")]
    cells, worst = [], None
    for _, row in paired.iterrows():
        line = [_shown(row, name, spec) for name in shown]
        for name in pairing.sides:
            info = column_info(spec.table, name)
            line += [format_value(row.get(f"{name}_base"), info),
                     format_value(row.get(f"{name}_cand"), info)]
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
    if pairing.sides:
        notes.append("Settings that tell baseline from candidate: "
                     + ", ".join(column_info(spec.table, s).header for s in pairing.sides)
                     + "; every pair of rows that agree on the rest is compared.")
    table = Table(columns, cells, [[False] * len(columns) for _ in cells])
    return Comparison(table, pairing.key, metrics, worst, notes)


def _shown(row: pd.Series, name: str, spec: ReportKind) -> str:
    """A key field of a paired row as printed (keys are already text; others per side)."""
    value = row.get(name, row.get(f"{name}_base"))
    if isinstance(value, str):
        fmt = dict(spec.formats).get(name)
        return fmt.format(value) if fmt and value else value
    return format_value(value, column_info(spec.table, name))
