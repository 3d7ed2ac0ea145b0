"""Derived values every report can show: display names, replicas, GPUs, per-GPU throughput.

A derived column is documented here once (header, unit, which direction is better), the same
way a stored column is documented in ``schemas``.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Derived:
    header: str
    description: str
    better: str | None = None
    kind: str = "float"            # float | int | text


DERIVED: dict[str, Derived] = {
    "source": Derived("Source", "File the row was read from.", kind="text"),
    "config": Derived("Config", "The innermost heading the row sits under (e.g. `TP16`).",
                      kind="text"),
    "replicas": Derived("Replicas", "Independent server copies the result stands for (`--tag "
                        "replicas=N` or a label like `tp2 x 4`); throughput is multiplied and "
                        "duration divided by it.", kind="int"),
    "gpus": Derived("GPUs", "GPUs the result used in total (`--tag gpus=N`, else tp × pp × "
                    "replicas from the launch or the label).", kind="int"),
    "output_throughput_per_gpu": Derived("Output Tok/s/GPU", "Output tokens per second per GPU.",
                                         better="higher"),
    "total_token_throughput_per_gpu": Derived("Total Tok/s/GPU",
                                              "Input plus output tokens per second per GPU.",
                                              better="higher"),
    "request_throughput_per_gpu": Derived("Req/s/GPU", "Requests per second per GPU.",
                                          better="higher"),
    "load_minutes": Derived("Load (min)", "Server start-up time in minutes.", better="lower"),
    "run_max_concurrency": Derived("Concurrency", "max_concurrency of the serving run.",
                                   kind="int"),
    "run_output_throughput": Derived("Output Tok/s", "Output throughput of the serving run.",
                                     better="higher"),
    "run_mean_tpot_ms": Derived("Mean TPOT (ms)", "Mean TPOT of the serving run.",
                                better="lower"),
    "size_gib": Derived("size", "Model size as llama-bench prints it (GiB).", kind="text"),
    "params_b": Derived("params", "Model parameters as llama-bench prints them (billions).",
                      kind="text"),
    "ts": Derived("t/s", "Mean tokens per second ± standard deviation, as llama-bench prints "
                  "it.", better="higher", kind="text"),
    "env_text": Derived("env", "Environment variables set on the command line.", kind="text"),
    "n": Derived("n", "Runs of the configuration the row stands for (repeats folded into it "
                 "per --repeats).", kind="int"),
    "group_title": Derived("Group", "The comparable group of the row (model family, hardware, "
                           "workload).", kind="text"),
    "speculative_model": Derived("Draft model", "Draft model of the launch.", kind="text"),
    # What the run's server logged in the run's window (view run_server_stats).
    "stats_lines": Derived("Stats lines", "Engine stats lines the server logged in the run's "
                           "window.", kind="int"),
    "max_running": Derived("Max running", "Most requests the server ran at once.", kind="int"),
    "max_waiting": Derived("Max waiting", "Most requests waiting at once.", kind="int"),
    "max_gpu_kv_cache_usage_pct": Derived("Max KV cache (%)", "Highest GPU KV-cache usage."),
    "max_cpu_kv_cache_usage_pct": Derived("Max CPU KV cache (%)", "Highest CPU KV-cache usage."),
    "mean_generation_throughput": Derived("Server gen Tok/s", "Mean of the server's "
                                          "generation throughput lines."),
    "mean_prompt_throughput": Derived("Server prompt Tok/s", "Mean of the server's prompt "
                                      "throughput lines."),
    "max_swapped": Derived("Max swapped", "Most requests swapped out to CPU (V0).", kind="int"),
    "preemptions": Derived("Preemptions", "Requests preempted (V1's counts, summed).",
                           kind="int"),
    "spec_decode_lines": Derived("Spec lines", "Speculative-decoding metrics lines logged.",
                                 kind="int"),
    "spec_accepted_tokens": Derived("Accepted", "Draft tokens accepted.", kind="int"),
    "spec_draft_tokens": Derived("Drafted", "Draft tokens proposed.", kind="int"),
    "spec_acceptance_rate": Derived("Acceptance", "Accepted / proposed draft tokens."),
    "spec_mean_acceptance_length": Derived("Acceptance length", "Tokens per draft, bonus "
                                           "included."),
}

ENGINE_NAMES = {"vllm": "vLLM", "llama.cpp": "llama.cpp", "sglang": "SGLang",
                "unknown": "unknown"}

# Throughput-like columns a replica count multiplies; duration-like ones it divides.
REPLICA_MULTIPLY = ("request_throughput", "request_goodput", "input_throughput",
                    "output_throughput", "total_token_throughput")
REPLICA_DIVIDE = ("duration",)
# Throughputs with a `<column>_per_gpu` twin, and the columns load_minutes is read from.
PER_GPU = ("output_throughput", "total_token_throughput", "request_throughput")
LOAD_SECONDS = ("load_seconds", "launch_load_seconds")

_REPLICAS = re.compile(r"\b(?:tp|pp|dp)\s*=?\s*\d+\s*[x×*]\s*(\d+)\b", re.I)
_TP = re.compile(r"\btp\s*=?\s*(\d+)\b", re.I)
_PP = re.compile(r"\bpp\s*=?\s*(\d+)\b", re.I)


def short_name(model: Any) -> Any:
    """A model path's file or directory name; a hub id (``org/name``) stays as it is.

    ``/models/gguf/llama-2-7b.Q8_0.gguf`` → ``llama-2-7b.Q8_0.gguf``;
    ``meta-llama/Llama-2-7b-chat-hf`` → unchanged.
    """
    if not isinstance(model, str) or not model:
        return model
    text = model.strip().rstrip("/\\")
    is_path = (text.startswith(("/", "./", "../", "~", "\\")) or re.match(r"^[A-Za-z]:[\\/]", text)
               or text.count("/") > 1 or "\\" in text
               or re.search(r"\.(gguf|bin|safetensors|pt|pth|onnx|ggml)$", text, re.I))
    if not is_path:
        return text
    path = PureWindowsPath(text) if "\\" in text else PurePosixPath(text)
    return path.name or text


@dataclass
class Naming:
    """How rows are named in a report: which field, renames, and per-model attributes.

    ``attributes`` maps a model (as stored or its short name) to extra values; the key
    ``name`` renames it and every other key (``size`` ...) becomes a column reports can show.
    """

    name_from: str = "model"       # model | label | section | source
    renames: dict[str, str] = field(default_factory=dict)
    attributes: dict[str, dict[str, Any]] = field(default_factory=dict)

    def lookup(self, model: Any) -> dict[str, Any]:
        if not isinstance(model, str):
            return {}
        return self.attributes.get(model) or self.attributes.get(short_name(model)) or {}

    def display(self, row: pd.Series) -> Any:
        model = row.get("model")
        if self.name_from == "model":
            shown = short_name(model) if isinstance(model, str) and model else None
        elif self.name_from == "section":
            section = row.get("section")
            shown = section.split(" > ")[-1] if isinstance(section, str) else None
        else:
            shown = row.get(self.name_from)
        if shown is None or (isinstance(shown, float) and math.isnan(shown)):
            shown = row.get("label") if isinstance(row.get("label"), str) else None
        for key in (model, short_name(model), shown):
            if isinstance(key, str) and key in self.renames:
                return self.renames[key]
        return self.lookup(model).get("name", shown)


def load_attributes(path: str) -> dict[str, dict[str, Any]]:
    """Per-model attributes from a JSON or TOML file: ``{model: {name: ..., size: ...}}``."""
    with open(path, "rb") as fh:
        data = fh.read()
    if path.endswith(".toml"):
        import tomllib

        parsed = tomllib.loads(data.decode("utf-8"))
    else:
        parsed = json.loads(data)
    models = parsed.get("models", parsed)
    return {str(k): dict(v) for k, v in models.items()}


def _tags(value: Any) -> dict[str, str]:
    if isinstance(value, dict):
        return value
    if isinstance(value, str) and value:
        try:
            loaded = json.loads(value)
        except ValueError:
            return {}
        return loaded if isinstance(loaded, dict) else {}
    return {}


def _shared_tags(series: pd.Series) -> pd.Series:
    """Decoded tags, one dict per distinct JSON text (read-only: rows share it), so that
    grouping by tags dumps each distinct dict once."""
    decoded: dict[str, dict[str, str]] = {}
    out = []
    for value in series.tolist():
        if isinstance(value, str):
            tags = decoded.get(value)
            if tags is None:
                tags = decoded[value] = _tags(value)
            out.append(tags)
        else:
            out.append(_tags(value))
    return pd.Series(out, index=series.index, dtype=object)


def _int_tag(tags: dict[str, str], *keys: str) -> int | None:
    for key in keys:
        try:
            return int(str(tags[key]).strip())
        except (KeyError, ValueError):
            continue
    return None


def _texts(row: pd.Series) -> list[str]:
    """The label, then the innermost heading: where a config like `tp2 x 4` is written."""
    out = []
    if isinstance(row.get("label"), str):
        out.append(row["label"])
    if isinstance(row.get("section"), str):
        out.append(row["section"].split(" > ")[-1])
    return out


def replicas_of(row: pd.Series) -> int:
    count = _int_tag(row.get("tags") or {}, "replicas")
    if count:
        return count
    for text in _texts(row):
        match = _REPLICAS.search(text)
        if match:
            return int(match[1])
    return 1


def gpus_of(row: pd.Series, replicas: int) -> int | None:
    count = _int_tag(row.get("tags") or {}, "gpus", "gpu_count", "num_gpus")
    if count:
        return count
    for key in ("tensor_parallel_size", "launch_tp"):
        tp = row.get(key)
        if isinstance(tp, (int, float)) and not pd.isna(tp) and tp > 0:
            others = 1
            for other in (("pipeline_parallel_size", "launch_pp"),
                          ("data_parallel_size", "launch_dp")):
                value = row.get(other[0], row.get(other[1]))
                if isinstance(value, (int, float)) and not pd.isna(value) and value > 0:
                    others *= int(value)
            return int(tp) * others * replicas
    for text in _texts(row):
        tp = _TP.search(text)
        if tp:
            pp = _PP.search(text)
            return int(tp[1]) * (int(pp[1]) if pp else 1) * replicas
    return None


def per_distinct(frame: pd.DataFrame, columns: list[str], function) -> pd.Series:
    """``function(row)`` for every row, computed once per distinct combination of ``columns``
    (a year of runs holds far fewer names and labels than rows).  The combinations are found
    by factorizing each column (vectorized), not by hashing 40k Python tuples."""
    present = [c for c in columns if c in frame]
    if frame.empty:
        return pd.Series([], index=frame.index, dtype=object)
    codes = np.zeros(len(frame), dtype=np.int64)
    for column in present:
        try:    # strings and numbers factorize as they are; dicts (tags) need their JSON
            column_codes, uniques = pd.factorize(frame[column])
        except TypeError:
            column_codes, uniques = pd.factorize(_keyable(frame[column]))
        codes = codes * (len(uniques) + 1) + (column_codes + 1)    # NULL is code -1 -> 0
        codes = pd.factorize(codes)[0]                              # keep the product small
    _, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
    rows = frame.iloc[first][present].to_dict("records")
    answers = np.empty(len(rows), dtype=object)
    for i, row in enumerate(rows):
        answers[i] = function(row)
    return pd.Series(answers[inverse.reshape(-1)], index=frame.index, dtype=object)


def _keyable(series: pd.Series) -> Any:
    """The column with dicts and lists (tags, env) as their JSON text, one dumps per object."""
    if series.dtype != object:
        return series
    memo: dict[int, str] = {}
    out = []
    for value in series.tolist():
        if isinstance(value, (dict, list)):
            key = memo.get(id(value))
            if key is None:
                key = memo[id(value)] = json.dumps(value, sort_keys=True)
            out.append(key)
        else:
            out.append(_hashable(value))
    return pd.Series(out, index=series.index, dtype=object)


def _hashable(value: Any) -> Any:
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


# The columns each per-row derivation reads.
NAME_INPUTS = ("model", "label", "section", "source")
REPLICA_INPUTS = ("tags", "label", "section")
GPU_INPUTS = ("tags", "label", "section", "tensor_parallel_size", "launch_tp",
              "pipeline_parallel_size", "launch_pp", "data_parallel_size", "launch_dp")


def derive(frame: pd.DataFrame, naming: Naming, *, scale_replicas: bool = True) -> pd.DataFrame:
    """Add display names, per-model attributes, replicas, GPUs and per-GPU throughput."""
    frame = frame.copy()
    if "tags" in frame:
        frame["tags"] = _shared_tags(frame["tags"])
    if "section" in frame:
        frame["config"] = frame["section"].map(
            lambda s: s.split(" > ")[-1] if isinstance(s, str) else None)
    if "engine" in frame:
        frame["_engine_display"] = frame["engine"].map(lambda e: ENGINE_NAMES.get(e, e))
    if "model" in frame or "label" in frame:
        frame["_model_display"] = per_distinct(frame, list(NAME_INPUTS), naming.display)
        keys = sorted({k for attrs in naming.attributes.values() for k in attrs if k != "name"})
        for key in keys:
            if key not in frame:
                frame[key] = frame.get("model", pd.Series(index=frame.index)).map(
                    lambda m, k=key: naming.lookup(m).get(k))
    if "output_throughput" in frame and len(frame):
        replicas = per_distinct(frame, list(REPLICA_INPUTS), replicas_of).astype(int)
        frame["replicas"] = replicas
        if scale_replicas:
            for column in REPLICA_MULTIPLY:
                if column in frame:
                    frame[column] = frame[column] * replicas
            for column in REPLICA_DIVIDE:
                if column in frame:
                    frame[column] = frame[column] / replicas
        frame["gpus"] = per_distinct(frame, [*GPU_INPUTS, "replicas"],
                                     lambda row: gpus_of(row, int(row["replicas"])))
        gpus = pd.to_numeric(frame["gpus"], errors="coerce")
        for column in PER_GPU:
            if column in frame:
                frame[f"{column}_per_gpu"] = frame[column] / gpus
    _llama_bench_columns(frame)
    for seconds in LOAD_SECONDS:
        if seconds in frame:
            frame["load_minutes"] = frame[seconds] / 60.0
            break
    return frame


def _llama_bench_columns(frame: pd.DataFrame) -> None:
    """llama-bench's printed forms: ``3.56 GiB``, ``6.74 B``, ``878.31 ± 4.11``."""
    def text(value: Any, fmt: str) -> Any:
        return None if value is None or pd.isna(value) else fmt.format(value)

    if "avg_ts" in frame:
        if "model_size" in frame:
            frame["size_gib"] = frame["model_size"].map(lambda v: text(v and v / 1024 ** 3,
                                                                   "{:.2f} GiB"))
        if "model_n_params" in frame:
            frame["params_b"] = frame["model_n_params"].map(lambda v: text(v and v / 1e9,
                                                                         "{:.2f} B"))
        std = frame["stddev_ts"] if "stddev_ts" in frame else pd.Series(index=frame.index)
        frame["ts"] = [None if pd.isna(a) else
                       f"{a:.2f} ± {s:.2f}" if s is not None and not pd.isna(s) else f"{a:.2f}"
                       for a, s in zip(frame["avg_ts"], std)]
    if "env" in frame:
        frame["env_text"] = frame["env"].map(
            lambda e: " ".join(f"{k}={v}" for k, v in sorted(_tags(e).items())) or None)
