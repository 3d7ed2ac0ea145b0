"""Did it get slower?  A metric of each configuration over builds, versions or dates.

``--over build``: llama-bench rows across llama.cpp builds, in build-number order (then the
order the builds were first run: their ``test_time``).  ``--over version``: serving runs
across the engine version their server launch printed.  ``--over date``: any rows across the
date of the run (llama-bench's test time, the launch's log time, else the file's modification
time).  One line per configuration without the field followed; each point is the mean of its
repeats, with its change against the previous point (direction-aware: a fall in throughput
and a rise in latency are both negative); a change worse than ``--threshold`` percent is
flagged, and ``--fail-on-regression`` makes it the exit code.
"""

from __future__ import annotations

import datetime as dt
import math
import sqlite3
from pathlib import Path

import pandas as pd

from .analysis import Rows, empty_report, groups, load, require_metric, series_fields, series_of
from .experiments import LLAMA_BENCH, SERVING
from .kinds import ReportKind
from .query import ReportError, has_table
from .report import Report, ReportOptions, slugify
from .table import Column, Table, column_info, format_number

OVER = ("build", "version", "date")
# llama-bench settings that name a configuration across builds: the fields every build
# reports (fields only some builds print, such as use_mmap or load_mode, would split it).
LLAMA_BENCH_TREND = ("model_type", "backends", "gpu_info", "n_gpu_layers", "n_threads",
                     "n_batch", "n_ubatch", "type_k", "type_v", "flash_attn", "split_mode",
                     "env_text", "n_prompt", "n_gen", "n_depth", "test")


def _table_for(metric: str) -> str:
    from ..schemas.llama_bench import LlamaBenchResult

    return "llama_bench_results" if metric in LlamaBenchResult.model_fields else "serving_runs"


def _date(value) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value == "":
        return None
    text = str(value)
    return text[:10] if len(text) >= 10 and text[4] == "-" else text


def _points(conn: sqlite3.Connection, frame: pd.DataFrame, table: str, over: str
            ) -> pd.Series:
    """Each row's place on the axis followed (text that sorts in axis order)."""
    if over == "build":
        if "build_commit" not in frame:
            raise ReportError("--over build follows llama-bench builds: use a llama-bench metric "
                              "such as avg_ts")
        return frame["build_commit"]
    if over == "version":
        if "launch_version" not in frame:
            raise ReportError("--over version follows the engine version a server launch "
                              "printed: serving runs linked to a launch log")
        return frame["launch_version"]
    dates = frame["test_time"].map(_date) if "test_time" in frame else \
        pd.Series([None] * len(frame), index=frame.index)
    if "launch_started_at" in frame:
        dates = dates.fillna(frame["launch_started_at"].map(_date))
    if "source_mtime_ns" in frame:
        dates = dates.fillna(frame["source_mtime_ns"].map(
            lambda ns: None if ns is None or pd.isna(ns) else
            dt.datetime.fromtimestamp(ns / 1e9, dt.timezone.utc).strftime("%Y-%m-%d")))
    return dates


def _order(frame: pd.DataFrame, over: str, points: pd.Series,
           given: list[str] | None = None) -> list[str]:
    """The axis: ``given`` first (the user's order), then builds by build number and first
    test time, versions and dates sorted."""
    values = [v for v in dict.fromkeys(points.dropna())]
    if given:
        listed = [v for g in given for v in values if str(v) == g or str(v).startswith(g)]
        rest = [v for v in values if v not in listed]
        return list(dict.fromkeys(listed)) + _order(frame[points.isin(rest)], over,
                                                    points[points.isin(rest)])
    if over == "build":
        numbers = pd.to_numeric(frame.get("build_number"), errors="coerce")
        times = frame.get("test_time", pd.Series([None] * len(frame), index=frame.index))
        key = {}
        for value in values:
            mask = points == value
            key[value] = (numbers[mask].min() if numbers[mask].notna().any() else math.inf,
                          str(times[mask].dropna().min()) if times[mask].notna().any() else "",
                          list(points).index(value))
        return sorted(values, key=lambda v: key[v])
    if over == "version":
        def version_key(text: str):
            parts = []
            for piece in str(text).replace("+", ".").replace("-", ".").split("."):
                parts.append((0, int(piece), "") if piece.isdigit() else (1, 0, piece))
            return parts
        return sorted(values, key=version_key)
    return sorted(values)


def build(conn: sqlite3.Connection, spec: ReportKind, options: ReportOptions) -> list[Report]:
    if options.over not in OVER:
        raise ReportError(f"--over wants one of {', '.join(OVER)}, got {options.over!r}")
    metric = options.metric or ("avg_ts" if options.over == "build" else "output_throughput")
    table = _table_for(metric)
    spec = ReportKind(spec.name, table, spec.title, spec.description, (), analysis="trend",
                      charts=spec.charts)
    rows = load(conn, table, options, [metric])
    if rows.empty_note:
        return [empty_report(spec, spec.title, rows)]
    require_metric(rows.frame, metric, table)
    frame = rows.frame.copy()
    frame = _with_dates(conn, frame, table)
    frame["_point"] = _points(conn, frame, table, options.over)
    reports = []
    layout = rows.layout
    for title, part in groups(Rows(frame, layout, rows.filters)):
        reports.append(_group(spec, part, layout, title, metric, options, rows.filters))
    return reports


def _with_dates(conn: sqlite3.Connection, frame: pd.DataFrame, table: str) -> pd.DataFrame:
    """Launch version and time, and the file's modification time, for the axis."""
    if "source_id" in frame and has_table(conn, "sources"):
        mtimes = dict(conn.execute("SELECT id, mtime_ns FROM sources").fetchall())
        frame["source_mtime_ns"] = frame["source_id"].map(mtimes)
    if "launch_id" in frame and has_table(conn, "server_launches"):
        launches = {r[0]: r[1:] for r in conn.execute(
            "SELECT id, version, started_at FROM server_launches")}
        frame["launch_version"] = frame["launch_id"].map(lambda i: launches.get(i, (None,))[0])
        frame["launch_started_at"] = frame["launch_id"].map(
            lambda i: launches.get(i, (None, None))[1])
    return frame


def _group(spec: ReportKind, part: pd.DataFrame, layout, title: str, metric: str,
           options: ReportOptions, filters: list[str]) -> Report:
    over_field = {"build": "build_commit", "version": "launch_version", "date": "_point"}[
        options.over]
    fields_pool = LLAMA_BENCH_TREND if layout is LLAMA_BENCH else tuple(
        f for f in SERVING.fields if f != over_field)
    part = part.copy()
    if "n_depth" in part:
        part["n_depth"] = part["n_depth"].fillna(0)   # builds before -d printed no depth
    if "n_gpu_layers" in part and "backends" in part:
        # On a CPU-only build no layer goes anywhere: 99 (older default) and -1 (newer
        # "auto") run the same.
        part.loc[part["backends"] == "CPU", "n_gpu_layers"] = None
    from .experiments import Layout

    trend_layout = Layout(fields_pool, layout.repeat_key if layout else "", None)
    fields = series_fields(part, trend_layout, leave_out=(over_field,))
    named = [f for f in fields if f not in ("test", "n_prompt", "n_gen", "n_depth")]
    part["_series"] = series_of(part, named, spec.table) + \
        (" · " + part["test"].astype(str) if "test" in part else "")
    info = column_info(spec.table, metric)
    axis = _order(part, options.over, part["_point"], options.order)
    cells, flags, points = [], [], []
    worst = None
    for name in dict.fromkeys(part["_series"]):
        members = part[part["_series"] == name]
        means = []
        for point in axis:
            at = members[members["_point"] == point]
            values = pd.to_numeric(at[metric], errors="coerce").dropna()
            if len(values):
                runs = int(at["n"].sum()) if "n" in at else len(values)
                weights = at.loc[values.index, "n"] if "n" in at else 1
                means.append((point, float((values * weights).sum() / (
                    weights.sum() if "n" in at else len(values))), runs))
        previous = None
        for point, value, n in means:
            change = None
            if previous is not None and previous:
                ratio = value / previous if info.better != "lower" else previous / value
                change = (ratio - 1.0) * 100.0
            flagged = change is not None and change < -abs(options.threshold)
            worst = change if change is not None and (worst is None or change < worst) \
                else worst
            cells.append([name, str(point), format_number(value), str(n),
                          "" if change is None else f"{change:+.1f}%",
                          "REGRESSION" if flagged else ""])
            flags.append(flagged)
            points.append({"series": name, "point": str(point), "value": value})
            previous = value
    columns = [Column("_series", "Configuration", kind="text"),
               Column("_point", {"build": "Build", "version": "Version",
                                 "date": "Date"}[options.over], kind="text"),
               Column(metric, info.header, better=info.better), Column("n", "n", kind="int"),
               Column("change", "Change", kind="text"), Column("flag", "Flag", kind="text")]
    bold = [[False] * 5 + [f] for f in flags]
    notes = [f"Change: against the previous {options.over} of the same configuration "
             f"({'higher' if info.better != 'lower' else 'lower'} is better); a fall worse "
             f"than {abs(options.threshold):g}% is flagged."]
    if any(flags):
        notes.append(f"{sum(flags)} regression(s) beyond {abs(options.threshold):g}%.")
    return Report(spec, f"{spec.title} of {info.header} by {options.over}"
                  + (f": {title}" if title else ""), spec.description,
                  Table(columns, cells, bold), pd.DataFrame(points), notes, filters,
                  slug=slugify(title), draw=chart, regressions=sum(flags),
                  axis=[str(a) for a in axis])


def chart(report: Report, base: Path) -> tuple[Path, Path] | None:
    """One line per configuration along the axis followed; flagged falls marked."""
    import matplotlib.pyplot as plt

    from .charts import save_figure

    data = report.frame
    if data is None or data.empty:
        return None
    axis = report.axis or sorted(set(data["point"]))
    fig, ax = plt.subplots(figsize=(7, 4))
    for name, rows in data.groupby("series", sort=False):
        xs = [axis.index(p) for p in rows["point"]]
        ax.plot(xs, rows["value"], marker="o", label=str(name)[:50])
    ax.set_xticks(range(len(axis)), axis, fontsize=7)
    ax.set_title(report.title[:90])
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=6)
    return save_figure(fig, base)
