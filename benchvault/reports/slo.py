"""SLOs after the fact: which runs meet `p99_ttft_ms<=500`, and the highest load that does.

Each ``--slo METRIC<=VALUE`` (also ``<``, ``>=``, ``>``) is checked against the statistics a
run stored (its columns, or any latency statistic it printed: `p99.9_ttft_ms`,
`p50_e2el_ms`).  A run missing a statistic an SLO needs is *unknown*, listed with the reason,
never counted as passing.  Per series (a configuration without its load: engine, model, TP,
dataset, prompts ...) the highest concurrency (else request rate) at which every SLO held is
named with its throughput, as vLLM's ``--goodput`` would have told at run time; the goodput a
run printed or saved stays beside it.
"""

from __future__ import annotations

import math
import operator
import re
import sqlite3
from dataclasses import dataclass

import pandas as pd

from .analysis import LOAD, Rows, empty_report, groups, load, series_fields, series_of
from .kinds import ReportKind
from .query import ReportError, table_columns
from .report import Report, ReportOptions, slugify
from .table import Column, Table, column_info, format_number, format_value

OPERATORS = {"<=": operator.le, "<": operator.lt, ">=": operator.ge, ">": operator.gt}
_SLO = re.compile(r"^\s*(?P<metric>[A-Za-z_][\w.]*)\s*(?P<op><=|>=|<|>)\s*(?P<value>[-+]?\d+(?:\.\d*)?)"
                  r"\s*(?:ms|s|tok/s|req/s)?\s*$")
_LATENCY = re.compile(r"^(mean|median|std|min|max|p\d+(?:\.\d+)?)_(\w+?)_ms$")


@dataclass(frozen=True)
class Slo:
    metric: str
    op: str
    value: float

    def __str__(self) -> str:
        return f"{self.metric} {self.op} {self.value:g}"

    def holds(self, measured: float) -> bool:
        return OPERATORS[self.op](measured, self.value)


def parse_slo(text: str, metrics: list[str]) -> Slo:
    match = _SLO.match(text)
    if not match:
        raise ReportError(f"--slo wants METRIC<=VALUE (or <, >=, >), e.g. p99_ttft_ms<=500; "
                          f"got {text!r}; metrics: {', '.join(metrics)}")
    if match["metric"] not in metrics and not _LATENCY.match(match["metric"]):
        raise ReportError(f"--slo {text!r}: unknown metric {match['metric']!r}; metrics: "
                          f"{', '.join(metrics)} (or any printed latency statistic, "
                          f"e.g. p99.9_ttft_ms)")
    return Slo(match["metric"], match["op"], float(match["value"]))


def _metrics(frame: pd.DataFrame) -> list[str]:
    return sorted(c for c in frame.columns if column_info("serving_runs", c).better
                  and pd.api.types.is_numeric_dtype(frame[c]))


def _latency_statistics(conn: sqlite3.Connection, frame: pd.DataFrame, names: list[str]
                        ) -> pd.DataFrame:
    """Statistics a run printed that have no column (`p99.9_ttft_ms`), from latency_stats."""
    missing = [n for n in names if n not in frame and _LATENCY.match(n)]
    if not missing or "id" not in frame or "run_id" not in table_columns(conn, "latency_stats"):
        return frame
    frame = frame.copy()
    for name in missing:
        stat, metric = _LATENCY.match(name).groups()
        found = dict(conn.execute("SELECT run_id, value_ms FROM latency_stats WHERE stat = ? "
                                  "AND metric = ?", [stat, metric]).fetchall())
        frame[name] = frame["id"].map(found)
    return frame


def verdicts(frame: pd.DataFrame, slos: list[Slo]) -> pd.DataFrame:
    """Per run and SLO: pass, fail or unknown (with why); and the run's overall status."""
    out = pd.DataFrame(index=frame.index)
    status = pd.Series("pass", index=frame.index)
    reasons = pd.Series("", index=frame.index)
    for slo in slos:
        values = pd.to_numeric(frame.get(slo.metric), errors="coerce") \
            if slo.metric in frame else pd.Series(float("nan"), index=frame.index)
        known = values.notna() & values.map(lambda v: not math.isnan(v))
        passed = values[known].map(slo.holds)
        column = pd.Series("unknown", index=frame.index)
        column[known] = passed.map({True: "pass", False: "fail"})
        out[str(slo)] = column
        status[column == "fail"] = "fail"
        unknown = (column == "unknown") & (status != "fail")
        status[unknown] = "unknown"
        reasons[column == "unknown"] += f"no {slo.metric} stored; "
    out["status"] = status
    out["reason"] = reasons.str.rstrip("; ")
    return out


def build(conn: sqlite3.Connection, spec: ReportKind, options: ReportOptions) -> list[Report]:
    if not options.slos:
        raise ReportError("report slo wants at least one --slo, e.g. --slo p99_ttft_ms<=500 "
                          "--slo mean_tpot_ms<=50")
    rows = load(conn, spec.table, options, [])
    if rows.empty_note:
        return [empty_report(spec, spec.title, rows)]
    known = _metrics(rows.frame)
    slos = [parse_slo(text, known) for text in options.slos]
    frame = _latency_statistics(conn, rows.frame, [s.metric for s in slos])
    reports = []
    for title, part in groups(Rows(frame, rows.layout, rows.filters)):
        reports += _group(spec, part, rows, slos, title)
    return reports


def _group(spec: ReportKind, part: pd.DataFrame, rows: Rows, slos: list[Slo],
           title: str) -> list[Report]:
    judged = verdicts(part, slos)
    fields = series_fields(part, rows.layout)
    series = series_of(part, fields)
    load_column = next((c for c in LOAD if c in part and part[c].notna().any()), None)
    best_cells, run_cells = [], []
    for name in dict.fromkeys(series):
        members = part[series == name]
        verdict = judged.loc[members.index]
        passing = members[verdict["status"] == "pass"]
        if load_column is not None and passing[load_column].notna().any():
            top = passing.loc[pd.to_numeric(passing[load_column]).idxmax()]
            best = [format_value(top[load_column], _load_info(spec, load_column)),
                    format_value(top.get("output_throughput"),
                                 column_info(spec.table, "output_throughput"))]
        elif not passing.empty:
            best = ["(no load recorded)", ""]
        else:
            best = ["none", ""]
        counts = verdict["status"].value_counts()
        best_cells.append([name, *best, str(len(members)), str(counts.get("pass", 0)),
                           str(counts.get("fail", 0)), str(counts.get("unknown", 0))])
    load_header = column_info(spec.table, load_column).header if load_column else "Load"
    summary = Table(_columns(["Series", f"Highest {load_header} meeting every SLO",
                              "Output Tok/s there", "Runs", "Pass", "Fail", "Unknown"]),
                    best_cells, [[False] * 7 for _ in best_cells])
    order = part.sort_values([c for c in (load_column,) if c], kind="stable").index \
        if load_column else part.index
    for index in order:
        row = part.loc[index]
        verdict = judged.loc[index]
        cells = [series.loc[index],
                 format_value(row.get(load_column), _load_info(spec, load_column))
                 if load_column else ""]
        for slo in slos:
            measured = row.get(slo.metric)
            value = "" if measured is None or pd.isna(measured) else format_number(
                float(measured))
            cells.append(f"{value} {verdict[str(slo)]}".strip())
        goodput = row.get("request_goodput")
        cells += [verdict["status"] + (f" ({verdict['reason']})"
                                       if verdict["status"] == "unknown" else ""),
                  "" if goodput is None or pd.isna(goodput) else format_number(float(goodput))]
        run_cells.append(cells)
    headers = ["Series", load_header, *(str(s) for s in slos), "Verdict",
               "Goodput (req/s, at run time)"]
    runs = Table(_columns(headers), run_cells, [[False] * len(headers) for _ in run_cells])
    slo_text = ", ".join(f"`{s}`" for s in slos)
    name = f"{spec.title}: {title}" if title else spec.title
    notes = [f"SLOs: {slo_text}. A run lacking a statistic an SLO needs is unknown, never a "
             f"pass; repeats count as their mean (n runs folded)."]
    charted = part.assign(_series=series, _load=part[load_column] if load_column else None)
    charted.attrs["load_header"] = load_header
    first = Report(spec, f"{name}: highest load meeting every SLO", spec.description, summary,
                   charted, notes, rows.filters, slug=slugify(title), draw=_chart)
    first.axis = [slos[0].metric, slos[0].op, str(slos[0].value)]
    second = Report(spec, f"{name}: every run", "Each run against each SLO (value and "
                    "verdict), with the goodput the run printed or saved, if any.", runs, part,
                    [], rows.filters)
    return [first, second]


def _load_info(spec: ReportKind, column: str) -> Column:
    info = column_info(spec.table, column)
    info.fmt = dict(spec.formats).get(column)
    return info


def _columns(headers: list[str]) -> list[Column]:
    return [Column(h.lower().replace(" ", "_"), h, kind="text") for h in headers]


def _chart(report: Report, base):
    """The first SLO's statistic against the load, one line per series, the limit dashed."""
    import matplotlib.pyplot as plt

    from .charts import save_figure

    metric, _, limit = report.axis
    data = report.frame.dropna(subset=["_load"]) if "_load" in report.frame else pd.DataFrame()
    if data.empty or metric not in data:
        return None
    fig, ax = plt.subplots(figsize=(7, 4))
    for name, rows in data.groupby("_series", sort=False):
        rows = rows.sort_values("_load")
        ax.plot(rows["_load"], pd.to_numeric(rows[metric], errors="coerce"), marker="o",
                label=str(name)[:50])
    ax.axhline(float(limit), linestyle="--", color="0.3", label=f"SLO {float(limit):g}")
    values = pd.to_numeric(data[metric], errors="coerce").dropna()
    if len(values) and values.min() > 0 and values.max() / values.min() > 100:
        ax.set_yscale("log")              # a saturated server's latency grows 100x
    ax.set_xlabel(report.frame.attrs.get("load_header", "load"))
    ax.set_ylabel(metric)
    ax.set_title(report.title[:90])
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=6)
    return save_figure(fig, base)
