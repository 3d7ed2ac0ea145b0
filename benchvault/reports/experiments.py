"""Reports over experiments: repeats folded into one row, one table per comparable group, and
the columns each table needs chosen from what varies in it.

The configuration of a row and its group come from the warehouse (``configurations``,
``experiment_groups``, see benchvault.experiments); this module only decides how a report shows
them:

- repeats (rows of one configuration) become one row: the mean with its sample standard
  deviation (``86.89 ± 1.20``) and ``n``, or the best, the last, or all of them;
- a group's table leads with the configuration fields that vary inside it, in the order a
  reader compares them (engine, parallelism, quantization, ..., concurrency), and names the
  fields every row shares once, in a caption above it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..experiments.configs import CONFIG_FIELDS, hardware_of, model_family, tags_of
from .query import ReportError

REPEATS = ("mean", "best", "last", "all")
# llama-bench's own settings (compare-llama-bench.py's key properties, build and env added):
# rows sharing all of them and the test are repeats.
LLAMA_BENCH_CONFIG = ("build_commit", "cpu_info", "gpu_info", "backends", "model_filename",
                      "model_type", "n_gpu_layers", "tensor_buft_overrides", "n_batch",
                      "n_ubatch", "embeddings", "cpu_mask", "cpu_strict", "poll", "n_threads",
                      "type_k", "type_v", "use_mmap", "no_kv_offload", "split_mode", "main_gpu",
                      "tensor_split", "flash_attn", "n_cpu_moe", "devices", "env_text",
                      "n_prompt", "n_gen", "n_depth")
# Shown when they vary, in this order (what compare-llama-bench.py shows, env and build added).
LLAMA_BENCH_SHOWN = ("build_commit", "cpu_info", "gpu_info", "backends", "n_gpu_layers",
                     "tensor_buft_overrides", "model_type", "n_batch", "n_ubatch", "embeddings",
                     "cpu_mask", "cpu_strict", "poll", "n_threads", "type_k", "type_v",
                     "use_mmap", "no_kv_offload", "split_mode", "main_gpu", "tensor_split",
                     "flash_attn", "n_cpu_moe", "devices", "env_text")
# Fields llama-bench folds into its test name.
TEST_FIELDS = ("n_prompt", "n_gen", "n_depth", "test")
# Serving fields never worth a column or a caption line on their own.
SERVING_HIDDEN = ("tags",)
# A constant that says nothing (one replica) stays out of the caption.
TRIVIAL = {"replicas": 1}
# Fields a row may simply not know (no launch log, no command pasted): a blank there is
# "unknown", not a value of its own, so it neither makes the field vary nor keeps it out of
# the caption.  Elsewhere a blank is a value: no draft model means no speculative decoding.
BLANK_IS_UNKNOWN = {"hardware", "model", "dtype", "kv_cache_dtype", "max_model_len",
                    "dataset_name", "input_len", "output_len", "num_prompts", "request_rate",
                    "data_parallel_size", "build_commit", "cpu_info", "gpu_info",
                    "model_filename"}


@dataclass(frozen=True)
class Layout:
    """How one table of a report kind is keyed: its configuration fields and repeat key."""

    fields: tuple[str, ...]            # configuration fields, in the order they are shown
    repeat_key: str                    # column equal for repeats
    group_key: str | None              # column equal for comparable rows


SERVING = Layout(tuple(f for f in CONFIG_FIELDS if f not in SERVING_HIDDEN), "config_id",
                 "group_id")
LLAMA_BENCH = Layout(LLAMA_BENCH_SHOWN, "_repeat_key", "_group_key")


def layout_for(table: str) -> Layout | None:
    return {"serving_runs": SERVING, "llama_bench_results": LLAMA_BENCH}.get(table)


def field_text(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def add_keys(frame: pd.DataFrame, table: str, source_names: dict[int, str] | None = None
             ) -> pd.DataFrame:
    """Repeat and group keys for a table whose warehouse keeps none (llama-bench; a server
    launch's group: its model family on its hardware, found as a run's is, in its tags, its
    label and headings, then its file's name ``source_names`` gives)."""
    if table == "server_launches" and not frame.empty:
        return _launch_groups(frame, source_names or {})
    if table != "llama_bench_results" or frame.empty:
        return frame
    frame = frame.copy()
    present = [c for c in LLAMA_BENCH_CONFIG if c in frame]
    frame["_repeat_key"] = frame[present].astype("string").fillna("").agg("\x1f".join, axis=1)
    hardware = frame["gpu_info"].where(frame["gpu_info"].fillna("") != "", frame["cpu_info"]) \
        if "gpu_info" in frame and "cpu_info" in frame else pd.Series("", index=frame.index)
    family = (frame.get("model_arch", pd.Series("", index=frame.index)).fillna("") + " " +
              frame.get("model_size_label", pd.Series("", index=frame.index)).fillna(""))
    frame["_group_key"] = family.str.strip() + "\x1f" + hardware.fillna("").astype(str)
    frame["_group_title"] = [" · ".join(p for p in (f.strip(), gpu_names(h)) if p)
                             or "llama-bench"
                             for f, h in zip(family, hardware.fillna("").astype(str))]
    return frame


def _launch_groups(frame: pd.DataFrame, source_names: dict[int, str]) -> pd.DataFrame:
    frame = frame.copy()
    column = (lambda name: frame[name] if name in frame else pd.Series(None, index=frame.index,
                                                                         dtype=object))
    keys, titles = [], []
    for model, tags, label, section, source in zip(column("model"), column("tags"),
                                                   column("label"), column("section"),
                                                   column("source_id")):
        hardware = hardware_of(tags_of(tags), label, section, source_names.get(source))
        family = model_family(model)
        keys.append(f"{(family or '').lower()}\x1f{(hardware or '').lower()}")
        titles.append(" · ".join(p for p in (family or "unknown model", hardware) if p))
    return frame.assign(_group_key=keys, _group_title=titles)


# --- repeats ------------------------------------------------------------------------------------

def fold_repeats(frame: pd.DataFrame, key: str, metrics: list[str], mode: str,
                 best_metric: str | None = None, better: str | None = None) -> pd.DataFrame:
    """One row per configuration (``key``): ``n`` and, per ``mode``, the mean of each metric
    (with ``_std_<metric>``, the sample standard deviation, where n > 1), the best run by
    ``best_metric``, the last run, or every run (``all``, n still counted)."""
    if mode not in REPEATS:
        raise ReportError(f"--repeats wants one of {', '.join(REPEATS)}, got {mode!r}")
    if key not in frame or frame.empty:
        return frame.assign(n=1) if not frame.empty else frame
    keys = frame[key]
    # Numbered keys without a gap (the narrow fold's) are used as they are.  A run without a
    # key is its own: named by its row, with a NUL no key holds (row 2's "2" was config 2's).
    if not pd.api.types.is_integer_dtype(keys) or keys.isna().any():
        keys = keys.astype("string").fillna("\0" + frame.index.to_series().astype(str))
    counts = keys.map(keys.value_counts())
    frame = frame.assign(n=counts.astype(int), _repeat=keys)
    if mode == "all" or (counts <= 1).all():
        return frame.drop(columns="_repeat")
    if mode == "last":
        return frame[~keys.duplicated(keep="last")].drop(columns="_repeat")
    if mode == "best":
        metric = best_metric if best_metric in frame else None
        if metric is None:
            return frame[~keys.duplicated(keep="last")].drop(columns="_repeat")
        values = pd.to_numeric(frame[metric], errors="coerce")
        order = values.sort_values(ascending=better == "lower", kind="stable",
                                   na_position="last").index
        best = frame.loc[order][~keys.loc[order].duplicated(keep="first")]
        return best.loc[[i for i in frame.index if i in best.index]].drop(columns="_repeat")
    numeric = [m for m in metrics if m in frame]
    values = frame[numeric].apply(pd.to_numeric, errors="coerce")
    values = values.where(values.abs() != float("inf"))     # an `inf` rate is no measurement
    means, spreads = group_mean_std(values, keys)
    first = frame[~keys.duplicated(keep="first")].copy()
    # Every metric at once (one column at a time cost 85 ms a table on 50 metrics).
    first_keys = keys.loc[first.index].to_numpy()
    mean = means.reindex(first_keys).set_axis(first.index)
    spread = spreads.reindex(first_keys).set_axis(first.index).add_prefix("_std_")
    first[numeric] = mean.where(mean.notna(), first[numeric])
    return pd.concat([first.drop(columns="_repeat"), spread], axis=1)


def group_mean_std(values: pd.DataFrame, keys: pd.Series) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per key (in the order first seen): each column's mean and sample standard deviation
    over its non-NaN values (NaN with none, or fewer than two for the deviation).

    Each group's sums run over its own values in order, so a configuration's mean is the
    same whatever else the frame holds: pandas' grouped mean is not (40 copies of 2993.85
    gave 2993.85 in one frame and 2993.8500000000013 in another), which flipped a printed
    half-way digit between a report read in batches and one read whole."""
    codes, uniques = pd.factorize(keys, sort=False)
    order = np.argsort(codes, kind="stable")
    sorted_codes = codes[order]
    starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
    index = pd.Index(uniques, name=keys.name)
    if len(order) == 0:
        empty = pd.DataFrame(index=index, columns=values.columns, dtype=float)
        return empty, empty.copy()
    sizes = np.diff(np.r_[starts, len(order)])
    means = np.empty((len(starts), values.shape[1]))
    spreads = np.empty_like(means)
    # A column at a time: the whole frame's temporaries added 12 MB to peak RSS on 100k runs.
    for j, column in enumerate(values.columns):
        x = values[column].to_numpy(dtype=float, na_value=np.nan)[order]
        present = ~np.isnan(x)
        counts = np.add.reduceat(present.astype(np.int64), starts)
        with np.errstate(invalid="ignore", divide="ignore"):
            # Summed as differences from the group's least value: repeats that printed the
            # same number average to that very number (a plain sum of 40 copies of 71.515
            # does not).
            base = np.fmin.reduceat(x, starts)
            mean = base + np.add.reduceat(np.where(present, x - np.repeat(base, sizes), 0.0),
                                          starts) / counts
            deviation = np.where(present, x - np.repeat(mean, sizes), 0.0)
            spread = np.sqrt(np.add.reduceat(deviation * deviation, starts) / (counts - 1))
        means[:, j] = np.where(counts == 0, np.nan, mean)
        spreads[:, j] = np.where(counts < 2, np.nan, spread)
    return (pd.DataFrame(means, index=index, columns=values.columns),
            pd.DataFrame(spreads, index=index, columns=values.columns))


# --- what varies, what is shared ---------------------------------------------------------------

def with_texts(frame: pd.DataFrame, fields: tuple[str, ...]) -> pd.DataFrame:
    """The frame with each field's values as compared (`_text_<field>`), made once for all
    the group tables cut from it."""
    return frame.assign(**{f"_text_{f}": frame[f].map(field_text) for f in fields if f in frame})


def _texts_of(frame: pd.DataFrame, field: str) -> list[str]:
    # As a list: a group's table has tens of rows, where each pandas call on arrow strings
    # costs more than the Python loop (41 group tables: 0.5 s).
    column = f"_text_{field}"
    return frame[column].tolist() if column in frame else \
        [field_text(v) for v in frame[field].tolist()]


def _values(frame: pd.DataFrame, field: str) -> set[str]:
    texts = set(_texts_of(frame, field))
    return texts - {""} if field in BLANK_IS_UNKNOWN else texts


def varying(frame: pd.DataFrame, fields: tuple[str, ...]) -> list[str]:
    """The fields whose value is not the same in every row."""
    return [f for f in fields if f in frame and len(_values(frame, f)) > 1]


def shared(frame: pd.DataFrame, fields: tuple[str, ...]) -> dict[str, Any]:
    """The fields every row has the same value of, as far as the rows say (trivial ones and
    blanks left out)."""
    out = {}
    for f in fields:
        if f not in frame or frame.empty:
            continue
        values = _values(frame, f)
        known = sum(1 for text in _texts_of(frame, f) if text != "")
        # A field some rows do not know is shared only when most of them say it.
        if len(values) == 1 and values != {""} and 2 * known > len(frame):
            value = next(v for v in frame[f] if field_text(v) in values)
            if TRIVIAL.get(f) != value:
                out[f] = value
    return out


def gpu_names(value: Any) -> Any:
    """`NVIDIA H100 80GB HBM3, NVIDIA H100 80GB HBM3` → `2x NVIDIA H100 80GB HBM3`, as
    compare-llama-bench.py shows a machine."""
    if not isinstance(value, str) or ", " not in value:
        return value
    names = value.split(", ")
    return f"{len(names)}x {names[0]}" if len(set(names)) == 1 else value


def split(frame: pd.DataFrame, key: str | None) -> list[tuple[Any, pd.DataFrame]]:
    """Rows by comparable group, groups in the order their first row came."""
    if key is None or key not in frame or frame.empty:
        return [(None, frame)]
    # Text columns as Python objects and the columns in a few blocks (copy() joins them):
    # cutting a group out then takes a few arrays, not one per column, and every pandas call
    # on a small group's arrow strings cost ~50 µs.  A sweep's 41 group tables: 2.1 → 1.3 s.
    frame = frame.astype({c: object for c, t in frame.dtypes.items() if t == "str"}).copy()
    frame.columns = frame.columns.astype(object)   # names too: every frame[c] looks one up
    keys = frame[key].map(field_text)
    positions = pd.Series(range(len(frame)), index=frame.index).groupby(keys.values,
                                                                        sort=False).indices
    return [(k, frame.iloc[positions[k]]) for k in dict.fromkeys(keys)]


# Load: what a sweep varies along its x axis, not what tells its lines apart.
LOAD = ("max_concurrency", "request_rate")
# Columns shown with a display value instead of the stored one.
DISPLAY = {"model": "_model_display", "engine": "_engine_display"}


def group_key(frame: pd.DataFrame, layout: Layout | None = SERVING) -> list[tuple]:
    """One chart line / one sweep per configuration but its load: the configuration fields
    that vary between the rows (engine, model, TP, ...); without configurations (a --sql), per
    engine, model and innermost heading."""
    fields = [f for f in varying(frame, layout.fields) if f not in LOAD] if layout else []
    if layout is not None and layout.repeat_key in frame:
        shown = [DISPLAY.get(f, f) if DISPLAY.get(f) in frame else f for f in fields]
        # NaN is not equal to itself: a blank key is None, so that blanks group together.
        return list(zip(*(frame[c].astype(object).where(frame[c].notna(), None)
                          for c in shown))) if shown else [()] * len(frame)
    parts = []
    for _, row in frame.iterrows():
        section = row.get("section")
        parts.append((row.get("_engine_display") or row.get("engine") or "",
                      row.get("_model_display") or "",
                      section.split(" > ")[-1] if isinstance(section, str) else ""))
    return parts
