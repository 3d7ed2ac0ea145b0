"""N-way comparison: one baseline against every candidate, row by row, ratio by ratio.

``benchvault compare --by engine --baseline vllm`` makes each other engine a candidate (or
repeat ``--candidate WHERE``).  Rows are the baseline's configurations; a candidate's value
sits in the row whose configuration it shares (concurrency, dataset, ... every field both
have values of in common).  A side whose rows differ in more than the row key (the llama.cpp
side holding three quantizations) is split into one candidate per variant, and a baseline that
does is shown one row per variant: a number is never averaged with another configuration's.
Each candidate column has its ratio to the baseline (above 1x is better, whichever way the
metric goes) and, in a last row, the geometric mean of its ratios.
"""

from __future__ import annotations

import math
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from .pairing import MODEL_FIELDS, differences, match_rows, note, pairing_fields, sides_line
from .ratios import Comparison, NoComparableRows, format_speedup, speedup, texts
from .settings import WORDS
from .settings import shown as shown_setting
from .settings import text as setting_text
from .experiments import TEST_FIELDS, Layout, fold_repeats
from .kinds import ReportKind
from .query import ReportError, apply_where, parse_conditions
from .experiments import DISPLAY
from .table import DECIMALS, Column, Table, column_info, format_value

LOAD = ("max_concurrency", "request_rate")


@dataclass
class Side:
    name: str
    rows: pd.DataFrame


@dataclass
class NWay(Comparison):
    sides: list[str] = field(default_factory=list)        # candidate names, in column order
    frame: pd.DataFrame | None = None                     # row labels and every side's values
    row_labels: list[str] = field(default_factory=list)   # one per table row, for charts
    baseline: str = ""


def selection(text: str) -> list[str]:
    """`engine=vllm;model~Q4` → its conditions (`;` joins the conditions of one side)."""
    return [part.strip() for part in text.split(";") if part.strip()]


def sides_of(frame: pd.DataFrame, baseline: list[str], candidates: list[list[str]],
             by: list[str]) -> tuple[Side, list[Side], set[str]]:
    """The baseline and the candidates, and the columns the user chose them by."""
    if by:
        names, keys = side_names(frame, by)
        if is_plain(baseline):
            base_mask = (names.str.lower() == baseline[0].lower()) | (keys == baseline[0].lower())
            base_name = next(iter(names[base_mask]), baseline[0])
        else:
            rows = apply_where(frame, parse_conditions(baseline), DISPLAY)
            base_mask = frame.index.isin(rows.index)
            base_name = " · ".join(dict.fromkeys(names[base_mask])) or "baseline"
        if not base_mask.any():
            raise ReportError(f"--baseline {' '.join(baseline)}: no rows have it; "
                              f"{', '.join(by)} takes: {', '.join(dict.fromkeys(names))}")
        base = Side(base_name, frame[base_mask])
        others = [Side(n, frame[(names == n) & ~base_mask])
                  for n in dict.fromkeys(names[~base_mask])]
        return base, others, set(by)
    base_rows = apply_where(frame, parse_conditions(baseline), DISPLAY)
    chosen = {c.column for c in parse_conditions(baseline)}
    others = []
    for conditions in candidates:
        parsed = parse_conditions(conditions)
        chosen |= {c.column for c in parsed}
        others.append(Side(";".join(conditions), apply_where(frame, parsed, DISPLAY)))
    return Side(";".join(baseline), base_rows), others, chosen


def is_plain(baseline: list[str]) -> bool:
    """A baseline given as a value of the --by columns (`vllm`), not as conditions."""
    return bool(baseline) and not any(op in baseline[0] for op in ("=", "~", "<", ">"))


def side_names(frame: pd.DataFrame, by: list[str]) -> tuple[pd.Series, pd.Series]:
    """Each row's side as shown (`vLLM · 16`) and as stored, lower case (`vllm · 16`)."""
    missing = [c for c in by if c not in frame]
    if missing:
        raise ReportError(f"--by: unknown column {', '.join(missing)}")
    shown = [texts(frame[DISPLAY[c] if DISPLAY.get(c) in frame else c]) for c in by]
    stored = [frame[c].astype(str) for c in by]
    return (_joined(shown, frame.index), _joined(stored, frame.index).str.lower())


def _joined(parts: list[pd.Series], index: pd.Index) -> pd.Series:
    out = pd.Series("", index=index, dtype=object)
    for at, part in enumerate(parts):
        out = out + (" · " if at else "") + part.astype(object)
    return out


def _varies(rows: pd.DataFrame, column: str) -> bool:
    return column in rows and texts(rows[column]).nunique() > 1


def nway(spec: ReportKind, layout: Layout | None, frame: pd.DataFrame, base: Side,
         candidates: list[Side], chosen: set[str], metrics: list[str],
         match: list[str] | None = None, strict: bool = False) -> NWay:
    if layout is None:
        raise ReportError(f"an N-way comparison needs configurations; {spec.name} has none")
    if base.rows.empty:
        raise NoComparableRows(f"no comparable rows: no baseline rows match {base.name}")
    base = Side(base.name, fold_repeats(base.rows, layout.repeat_key, metrics, "mean"))
    candidates = [Side(c.name, fold_repeats(c.rows, layout.repeat_key, metrics, "mean"))
                  for c in candidates if not c.rows.empty]
    if not candidates:
        raise NoComparableRows("no comparable rows: no candidate rows match "
                               "(the baseline is every row)")
    fields = pairing_fields(layout, frame)
    header = (lambda n: column_info(spec.table, n).header)
    # Each candidate pairs with the baseline as two sides do; a candidate holding several
    # configurations that pair with one baseline row is split by what tells them apart.
    split, notes = [], []
    for c in candidates:
        matching = match_rows(base.rows, c.rows, fields, spec.table, chosen=chosen,
                              match=match, strict=strict)
        if not matching.pairs:
            notes.append(f"{c.name}: " + sides_line(base.rows, c.rows, fields, spec.table,
                                                    header))
            continue
        partners: dict = {}
        for p in matching.pairs:
            partners.setdefault(p.base, []).append(p.cand)
        ambiguous = [f for f in fields if any(len({matching.cand.at[i, f] for i in found}) > 1
                                              for found in partners.values())]
        for part in (_split(c, ambiguous) if ambiguous else [c]):
            split.append((part, matching if part is c else
                          match_rows(base.rows, part.rows, fields, spec.table, chosen=chosen,
                                     match=match, strict=strict)))
    if not split:
        raise NoComparableRows(sides_line(base.rows, pd.concat([c.rows for c in candidates]),
                                          fields, spec.table, header,
                                          ("the baseline", "the candidates")))
    row_fields = [f for f in fields if f not in chosen and _varies(base.rows, f)
                  and f not in TEST_FIELDS]
    if "test" in base.rows and _varies(base.rows, "test"):
        row_fields.append("test")
    selection = {f for f in chosen if f not in MODEL_FIELDS}
    for c, matching in split:
        for name, values in differences(matching, skip=selection).items():
            notes.append(f"{c.name}: " + note(name, header(name), values))
    return _table(spec, base, split, row_fields, metrics, notes)


def _split(side: Side, fields: list[str]) -> list[Side]:
    varying = [f for f in fields if _varies(side.rows, f)]
    if not varying:
        return [side]
    shown = side.rows[[DISPLAY[f] if DISPLAY.get(f) in side.rows else f for f in varying]]
    label = shown.apply(lambda r: " · ".join(v for v in texts(r) if v), axis=1)
    return [Side(f"{side.name} · {name}" if name else side.name, side.rows[label == name])
            for name in dict.fromkeys(label)]


def _table(spec: ReportKind, base: Side, paired: list, row_fields: list[str],
           metrics: list[str], notes: list[str]) -> NWay:
    candidates = [c for c, _ in paired]
    partner = []
    for c, matching in paired:
        found: dict = {}
        for p in matching.pairs:
            found.setdefault(p.base, p.cand)
        partner.append(found)
    columns = []
    for name in row_fields:
        col = column_info(spec.table, name)
        col.kind, col.fmt = "text", dict(spec.formats).get(name)
        columns.append(col)
    infos = {m: column_info(spec.table, m) for m in metrics}
    for metric, info in infos.items():
        info.decimals = DECIMALS
        columns.append(Column(metric, f"{base.name} {info.header}"))
        for c in candidates:
            columns += [Column(metric, f"{c.name} {info.header}"),
                        Column("speedup", f"{c.name} vs {base.name}")]
    cells, ratios, labels = [], {}, []
    chart_rows = []
    worst = None
    for index, row in base.rows.iterrows():
        matches = [c.rows.loc[[found[index]]] if index in found else c.rows.iloc[0:0]
                   for c, found in zip(candidates, partner)]
        if all(m.empty for m in matches):
            notes.append("Only the baseline has " + _describe(spec, row, row_fields))
            continue
        line = [_shown(spec, row, name) for name in row_fields]
        label = " · ".join(v for v in line if v) or base.name
        chart = {"label": label, base.name: _number(row, metrics[0])}
        for metric, info in infos.items():
            line.append(format_value(row.get(metric), info))
            for c, m in zip(candidates, matches):
                if m.empty:
                    line += ["", ""]
                    continue
                value = m.iloc[0].get(metric)
                ratio = speedup(row.get(metric), value, info.better)
                line += [format_value(value, info), format_speedup(ratio)[0]]
                if ratio is not None and ratio > 0:
                    ratios.setdefault((metric, c.name), []).append(ratio)
                    pct = (ratio - 1.0) * 100.0
                    worst = pct if worst is None else min(worst, pct)
                if metric == metrics[0]:
                    chart[c.name] = _number(m.iloc[0], metric)
        cells.append(line)
        labels.append(label)
        chart_rows.append(chart)
    for c, found in zip(candidates, partner):
        used = set(found.values())
        for index, row in c.rows.iterrows():
            if index not in used:
                notes.append(f"Only {c.name} has " + _describe(spec, row, row_fields))
    mean_row = ["geometric mean"] + [""] * (len(row_fields) - 1) if row_fields else []
    for metric in metrics:
        mean_row.append("")
        for c in candidates:
            values = ratios.get((metric, c.name), [])
            mean = math.exp(sum(math.log(v) for v in values) / len(values)) if values else None
            mean_row += ["", format_speedup(mean)[0]]
    if row_fields:
        cells.append(mean_row)
    notes.append("Ratios: candidate over baseline, inverted for metrics where lower is better "
                 "(above 1x is always better); the last row is each column's geometric mean.")
    table = Table(columns, cells, [[False] * len(columns) for _ in cells])
    key = sorted({f for _, m in paired for f in m.fields})
    return NWay(table, key, metrics, worst, notes, sides=[c.name for c in candidates],
                frame=pd.DataFrame(chart_rows), row_labels=labels, baseline=base.name)


def _number(row: pd.Series, metric: str) -> float | None:
    value = row.get(metric)
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _shown(spec: ReportKind, row: pd.Series, name: str) -> str:
    if name in WORDS:                       # flash attention: on / off / auto
        return shown_setting(name, setting_text(row.get(name))) if setting_text(
            row.get(name)) is not None else ""
    column = DISPLAY.get(name)
    value = row.get(column) if column in row.index else row.get(name)
    info = column_info(spec.table, name)
    info.fmt = dict(spec.formats).get(name)
    return format_value(value, info)


def _describe(spec: ReportKind, row: pd.Series, names: list[str]) -> str:
    parts = [f"{column_info(spec.table, n).header} {_shown(spec, row, n)}" for n in names
             if _shown(spec, row, n)]
    return ", ".join(parts) or "a row"


def grouped_bar_chart(result: NWay, table: str, title: str,
                      base: Path) -> tuple[Path, Path] | None:
    """Every side's value of the first metric, one group of bars per row."""
    from .charts import save_figure

    import matplotlib.pyplot as plt

    data = result.frame
    if data is None or data.empty:
        return None
    sides = [result.baseline, *result.sides]
    width = 0.8 / len(sides)
    fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(data) * len(sides) ** 0.5), 4))
    for i, side in enumerate(sides):
        values = [v if v is not None and not pd.isna(v) else 0 for v in data.get(side, [])]
        ax.bar([x + i * width for x in range(len(data))], values, width, label=side[:60])
    # Row labels without organisations, wrapped: they sit side by side under the bars.
    labels = [textwrap.fill(re.sub(r"\b[\w.-]+/", "", str(label)), 22)
              for label in data["label"]]
    ax.set_xticks([x + width * (len(sides) - 1) / 2 for x in range(len(data))], labels,
                  fontsize=7)
    ax.set_ylabel(column_info(table, result.metrics[0]).header)
    ax.set_title(title)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=7)
    return save_figure(fig, base)
