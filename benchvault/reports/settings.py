"""What each row's settings are, for pairing rows that compare: printed, defaulted or unknown.

- *printed*: the row states it (a table cell, a record's field, the command line above it);
- *defaulted*: the row leaves it out because the tool hides it at its default; the value is
  that tool version's default (``parsers/llama_bench.defaults.toml``,
  ``parsers/vllm_serving.defaults.toml``);
- *unknown*: a blank nothing fills.  A blank is never a value of its own.

A printed or defaulted value pairs only with an equal one; an unknown one pairs with any value
(except under ``--strict``), and the pair is said.
"""

from __future__ import annotations

import functools
import math
import tomllib
from pathlib import Path
from typing import Any

import pandas as pd

PARSERS = Path(__file__).resolve().parent.parent / "parsers"
UNKNOWN = None
# Structured llama-bench output (every field of the build is printed).
RECORD_FORMATS = ("llama_bench_output", "llama_bench_json", "llama_bench_jsonl",
                  "llama_bench_csv", "llama_bench_sql")
# Settings shown by a word rather than a number.
WORDS = {"flash_attn": {"1": "on", "0": "off", "-1": "auto"}}
# Serving fields a blank leaves unknown (no launch log, no command pasted).
SERVING_UNKNOWN = {"hardware", "model", "dtype", "kv_cache_dtype", "max_model_len",
                   "dataset_name", "input_len", "output_len", "num_prompts",
                   "data_parallel_size", "tensor_parallel_size", "pipeline_parallel_size",
                   "replicas", "quantization", "engine"}


@functools.lru_cache(maxsize=None)
def llama_bench_defaults() -> dict[str, Any]:
    return tomllib.loads((PARSERS / "llama_bench.defaults.toml").read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=None)
def serving_defaults() -> dict[str, str]:
    data = tomllib.loads((PARSERS / "vllm_serving.defaults.toml").read_text(encoding="utf-8"))
    return dict(data.get("defaults", {}))


def text(value: Any) -> str | None:
    """A value as compared and shown; None for a blank (unknown)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return UNKNOWN
    if value is pd.NA or value is pd.NaT:
        return UNKNOWN
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    out = str(value).strip()
    return out if out else UNKNOWN


def shown(field: str, value: str | None) -> str:
    """A setting's value as a note or a cell says it (`fa: off vs auto`)."""
    if value is None:
        return "unknown"
    return WORDS.get(field, {}).get(value, value)


def _known_build(commit: Any, number: Any) -> tuple[str | None, int | None]:
    """The build a row names, as the defaults data knows builds: a commit it read, or a number
    from llama-bench's first build on (a shallow clone's `(1)` is no build number)."""
    data = llama_bench_defaults()
    name = text(commit)
    known = None
    if name:
        for key in data.get("builds", {}):
            if name.startswith(key) or (key.startswith(name) and len(name) >= 7):
                known = key
                break
    try:
        build = int(float(number)) if text(number) else None
    except (TypeError, ValueError):
        build = None
    if build is not None and build < data.get("first_build", 0):
        build = None
    return known, build


def llama_bench_default(field: str, commit: Any, number: Any) -> str | None:
    """The build's default of ``field`` when its markdown table hides it; None when unknown."""
    spec = llama_bench_defaults().get("hidden", {}).get(field)
    if spec is None:
        return UNKNOWN
    known, build = _known_build(commit, number)
    for entry in spec.get("defaults", []):
        if known is not None:
            if known in entry.get("commits", []):
                return str(entry["value"])
            continue
        first, last = entry.get("builds", [None, None])
        if build is not None and first is not None and first <= build <= last:
            return str(entry["value"])
    return UNKNOWN


def llama_bench_settings(frame: pd.DataFrame, fields: list[str]) -> pd.DataFrame:
    """Each row's value of each field (text, None for unknown); their kinds (`printed`,
    `defaulted`, `unknown`) in ``.attrs['kinds']``."""
    hidden = llama_bench_defaults().get("hidden", {})
    blank = pd.Series(None, index=frame.index, dtype=object)
    record = frame.get("format", blank).isin(RECORD_FORMATS)
    builds = list(zip(frame.get("build_commit", blank), frame.get("build_number", blank)))
    values, kinds = {}, {}
    for field in fields:
        column = frame[field].map(text) if field in frame else blank.copy()
        kind = column.map(lambda v: "unknown" if v is None else "printed")
        if field in hidden and column.isna().any():
            introduced = hidden[field].get("introduced")
            filled = [v if v is not None else (introduced if rec else
                                               llama_bench_default(field, *build))
                      for v, rec, build in zip(column, record, builds)]
            filled = pd.Series(filled, index=frame.index, dtype=object)
            kind = kind.where(column.notna() | filled.isna(), "defaulted")
            column = filled
        values[field], kinds[field] = column.astype(object), kind
    return _frame(frame.index, fields, values, kinds)


def serving_settings(frame: pd.DataFrame, fields: list[str]) -> pd.DataFrame:
    """As llama_bench_settings for serving runs: a blank is the default of the benchmark client
    where it has one (no --max-concurrency is no limit), else unknown."""
    defaults = serving_defaults()
    blank = pd.Series(None, index=frame.index, dtype=object)
    values, kinds = {}, {}
    for field in fields:
        column = frame[field].map(text) if field in frame else blank.copy()
        kind = column.map(lambda v: "unknown" if v is None else "printed")
        if field not in SERVING_UNKNOWN and field in defaults:
            kind = kind.where(column.notna(), "defaulted")
            column = column.where(column.notna(), defaults[field])
        values[field], kinds[field] = column.astype(object), kind
    return _frame(frame.index, fields, values, kinds)


def _frame(index: pd.Index, fields: list[str], values: dict, kinds: dict) -> pd.DataFrame:
    out = pd.DataFrame({f: values[f] for f in fields}, index=index, columns=fields, dtype=object)
    out = out.astype(object).where(out.notna(), None)
    out.attrs["kinds"] = pd.DataFrame({f: kinds[f] for f in fields}, index=index,
                                      columns=fields, dtype=object)
    return out


def settings_of(frame: pd.DataFrame, fields: list[str], table: str) -> pd.DataFrame:
    if table == "llama_bench_results":
        return llama_bench_settings(frame, fields)
    return serving_settings(frame, fields)
