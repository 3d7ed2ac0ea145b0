"""Charts for reports (matplotlib, Agg backend, no network): PNG and SVG side by side.

Output is deterministic (no dates in the files, fixed SVG ids) so regenerating a README's
charts from the same rows rewrites the same bytes.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from .report import Report
from .experiments import group_key
from .table import column_info, format_value  # noqa: E402

CHARTS = {
    "throughput": ("output_throughput", "Output throughput vs max concurrency"),
    "ttft": ("mean_ttft_ms", "Mean TTFT vs max concurrency"),
    "llamabench": ("avg_ts", "llama-bench tokens/s"),
}

plt.rcParams.update({"svg.hashsalt": "benchvault", "svg.fonttype": "path",
                     "figure.dpi": 100, "font.size": 9})


def save_figure(fig, base: Path) -> tuple[Path, Path]:
    png, svg = base.with_suffix(".png"), base.with_suffix(".svg")
    fig.savefig(png, metadata={"Software": None}, bbox_inches="tight")
    fig.savefig(svg, metadata={"Date": None, "Creator": None}, bbox_inches="tight")
    plt.close(fig)
    return png, svg


def _legend_labels(keys: list[tuple], fallback: str = "runs") -> list[str]:
    """Name each line by the parts of its key that differ between lines (``fallback`` when
    there is one line and nothing to tell apart)."""
    distinct = set(keys)
    width = max((len(k) for k in keys), default=0)
    varying = [i for i in range(width) if len({k[i] for k in distinct}) > 1]
    if not varying and width:
        varying = [1] if width > 1 and keys[0][1] else [0]
    return [_short(" · ".join(str(k[i]) for i in varying if _present(k[i])) or fallback)
            for k in keys]


def _present(value) -> bool:
    return value is not None and value == value and value != ""  # NaN != NaN


def _short(label: str, width: int = 60) -> str:
    # A label is a legend entry, not a report cell: a long heading would crowd out the plot.
    return label if len(label) <= width else label[: width - 1] + "…"


def line_chart(frame: pd.DataFrame, metric: str, title: str,
               base: Path) -> tuple[Path, Path] | None:
    """``metric`` against max_concurrency, one line per engine/model/config."""
    if metric not in frame or "max_concurrency" not in frame:
        return None
    data = frame.dropna(subset=[metric, "max_concurrency"])
    if data.empty:
        return None
    keys = group_key(data)
    model = data["_model_display"].dropna() if "_model_display" in data else pd.Series()
    labels = dict(zip(keys, _legend_labels(keys, str(model.iloc[0]) if len(model) else "runs")))
    fig, ax = plt.subplots(figsize=(7, 4))
    for key in dict.fromkeys(keys):
        rows = data[[k == key for k in keys]].sort_values("max_concurrency")
        ax.plot(rows["max_concurrency"], rows[metric], marker="o", label=labels[key])
    concurrencies = sorted(data["max_concurrency"].unique())
    low, high = concurrencies[0], concurrencies[-1]
    if len(concurrencies) > 1 and low > 0 and high / low >= 8:
        ax.set_xscale("log", base=2)
    ax.set_xticks(concurrencies, [str(int(c)) for c in concurrencies])
    ax.set_xlabel(column_info("serving_runs", "max_concurrency").header)
    ax.set_ylabel(column_info("serving_runs", metric).header)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    return save_figure(fig, base)


def bar_chart(frame: pd.DataFrame, metric: str, title: str,
              base: Path) -> tuple[Path, Path] | None:
    """llama-bench t/s: one panel per test (pp and tg differ by 10x), one bar per model/config."""
    if metric not in frame or frame[metric].dropna().empty:
        return None
    data = frame.dropna(subset=[metric])
    name_col = next((c for c in ("model_type", "model_filename", "_model_display", "model")
                     if c in data), None)
    varying = [c for c in ("build_commit", "backends", "n_gpu_layers", "n_threads", "flash_attn",
                           "type_k", "type_v", "env_text")
               if c in data and data[c].astype("string").fillna("").nunique() > 1]

    def label(row: pd.Series) -> str:
        parts = [str(row.get(name_col))] + [
            f"{column_info('llama_bench_results', c).header}="
            f"{format_value(row.get(c), column_info('llama_bench_results', c))}"
            if c in ("n_gpu_layers", "n_threads", "flash_attn", "type_k", "type_v")
            else format_value(row.get(c), column_info("llama_bench_results", c))
            for c in varying]
        return " · ".join(p for p in parts if p and not p.endswith("=") and p != "nan")

    tests = list(dict.fromkeys(data["test"].astype("string").fillna(""))) if "test" in data \
        else [""]
    counts = [int((data["test"] == t).sum()) if "test" in data else len(data) for t in tests]
    fig, axes = plt.subplots(len(tests), 1, figsize=(8, 0.3 * sum(counts) + 1.1 * len(tests) + 0.5),
                             squeeze=False, height_ratios=[c + 2 for c in counts])
    for ax, test in zip(axes[:, 0], tests):
        rows = data[data["test"] == test] if "test" in data else data
        ax.barh(range(len(rows)), rows[metric].to_list())
        ax.set_yticks(range(len(rows)), [label(r) for _, r in rows.iterrows()], fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel(column_info("llama_bench_results", metric).header)
        ax.set_title(test or title, fontsize=9)
        ax.grid(True, axis="x", alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    return save_figure(fig, base)


def write_charts(report: Report, out_dir: Path, prefix: str, names: list[str] | None = None,
                 link_base: Path | None = None) -> list[dict[str, str]]:
    """Write ``report``'s charts into ``out_dir`` and record links (relative to ``link_base``)."""
    names = list(report.kind.charts) if names is None else names
    if report.frame.empty:
        return []
    out_dir.mkdir(parents=True, exist_ok=True)
    link_base = link_base or out_dir
    made = []
    if report.draw is not None:
        # An analysis draws its own chart (a frontier, a trend), unless charts are off.
        files = report.draw(report, out_dir / prefix) if names else None
        if files:
            png, svg = (_relative(p, link_base) for p in files)
            made.append({"title": report.title, "png": png, "svg": svg})
        report.charts.extend(made)
        return made
    for name in names:
        if name == "analysis":
            continue                      # an analysis's own chart, drawn above when it has one
        if name not in CHARTS:
            from .query import ReportError

            raise ReportError(f"unknown chart {name!r}; charts: {', '.join(CHARTS)}")
        metric, title = CHARTS[name]
        base = out_dir / f"{prefix}-{name}"
        draw = bar_chart if name == "llamabench" else line_chart
        files = draw(report.frame, metric, f"{report.title}: {title}", base)
        if files:
            png, svg = (_relative(p, link_base) for p in files)
            made.append({"title": title, "png": png, "svg": svg})
    report.charts.extend(made)
    return made


def _relative(path: Path, base: Path) -> str:
    import os

    return Path(os.path.relpath(path.resolve(), base.resolve())).as_posix()
