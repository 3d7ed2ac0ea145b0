"""vLLM server start-up lines → facts about one ``server_launches`` row.

Upstream printers: ``vllm/entrypoints/openai/api_server.py`` (version banner, ``args:
Namespace(...)``; ``non-default args: {...}`` from 0.9), ``llm_engine.py`` / V1 ``core.py``
(``Initializing ... LLM engine (vX) with config:``, ``init engine ... took``), the V0 executors
(``# GPU blocks: N, # CPU blocks: M``, ``Maximum concurrency for N tokens per request: Xx``),
V1 ``kv_cache_utils.py`` (``GPU KV cache size: N tokens``), the model runners (``Loading model
weights took``, ``Model loading took X GiB and Y seconds``, ``Graph capturing finished``).

Example (seed ``deepseek-v3``)::

    INFO 01-05 11:33:24 api_server.py:712] vLLM API server version 0.6.6.post2.dev5+g5ce4627a
    INFO 01-05 12:04:53 distributed_gpu_executor.py:57] # GPU blocks: 2889, # CPU blocks: 528
    INFO 01-05 12:04:53 distributed_gpu_executor.py:61] Maximum concurrency for 8192 tokens ...

give ``version='0.6.6.post2.dev5+g5ce4627a'``, ``gpu_blocks=2889, cpu_blocks=528``,
``max_concurrency_x=5.64, max_concurrency_tokens=8192``: one launch, assembled by ingest with
the ``vllm serve`` command before them (see ``vllm_server_command``) and :class:`Assembly`.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlsplit

from lark import Lark, Token, Transformer, Tree, v_args

from . import grammar
from .grammar import finite
from .base import STRAY, BlockParseError, Context, Facts, LineFormat
from ..schemas.models import json_safe
from ..reading.pyliteral import ReprParseError, parse_namespace, parse_value
from .runcontext import model_in_prose
from .vllm_server_log import LogTime, seconds_between, split_log_line

TABLE = "server_launches"
ONCE = {"version_banner", "namespace_args", "nondefault_args"}
# The weights line is printed once per start-up by each worker (several with tensor
# parallelism, all before the KV cache is sized): printed again after the launch sized its KV
# cache, it is the server started again (a note pasting three start-ups with three
# --max-model-len values).  See Assembly.add: these kinds count as seen once the launch printed
# a weights line and sized its KV cache.
RESTARTS = {"weights_memory", "model_loading"}
SIZED = {"kv_blocks", "kv_cache_size", "max_concurrency", "num_gpu_blocks"}
WEAK = {"server_ready"}
MEMORY_TO_GIB = {"gib": 1.0, "gb": 1.0, "mib": 1 / 1024, "mb": 1 / 1024}  # vLLM's "GB" is GiB


# A figure the grammar's NUMBER/COUNT took but that is no number (a garbled `12.!0`): read as
# None and named in a warning.  The null is the line's figure: like any later line it takes
# the column's place (a second source of the figure, printed elsewhere, does not stand in).
GOOD_NUMBER = re.compile(r"\d+(?:\.\d+)?")
GOOD_COUNT = re.compile(r"\d{1,3}(?:,\d{3})+|\d+")
GARBLED = re.compile(rf"(?<![\w.])[\d{STRAY}][\d.,{STRAY}]*[{STRAY}][\d.,{STRAY}]*"
                     rf"|(?<![\w.])[{STRAY}][\d.,{STRAY}]*")


def _float(tok: Any) -> float | None:
    if tok is None:
        return None
    text = str(tok)
    return float(text) if GOOD_NUMBER.fullmatch(text) else None


def _whole(value: float | None) -> int | None:
    return None if value is None else int(value)


def _count(tok: Token) -> int | None:
    text = str(tok)
    return int(text.replace(",", "")) if GOOD_COUNT.fullmatch(text) else None


def _gib(number: Token, unit: Token) -> float | None:
    value = _float(number)
    return None if value is None else round(value * MEMORY_TO_GIB[str(unit).lower()], 4)


@v_args(inline=True)
class LineToFacts(Transformer):
    """Tree → (kind, values); values are column values or ``args``/``config`` dicts."""

    def start(self, *items):
        return items[-1]        # (a `[backbone]` component before it names no column)

    def version_banner(self, *tokens):
        return "version_banner", {"version": str(tokens[-1])}

    def namespace_args(self, text):
        return "namespace_args", {"args": _printed_args(str(text), namespace=True)}

    def nondefault_args(self, text):
        return "nondefault_args", {"args": _printed_args(str(text), namespace=False)}

    def engine_config(self, _head, version, config):
        return "engine_config", {"version": str(version).lstrip("v"),
                                 "config": engine_config_values(str(config))}

    def kv_blocks(self, *devices):
        # `# {device} blocks: N, # CPU blocks: M` (V0 executors): the first count is the KV cache
        # of the device the model runs on (GPU, cuda, npu, hpu, xpu), the second the CPU swap
        # space; vllm-ascend 0.7.1 mislabelled the first `# CPU blocks` too.  A lone `# CPU
        # blocks: N` is vLLM's CPU backend, whose KV cache lives in CPU memory.
        devices = tuple(_items(devices))
        names = [device for device, _ in devices]
        if len(devices) == 1:
            device, count = devices[0]
            column = "cpu_blocks" if device == "cpu" else "gpu_blocks"
            return "kv_blocks", {column: count, "kv_device": device}
        values = {"gpu_blocks": devices[0][1], "cpu_blocks": devices[-1][1]}
        if names[0] != "cpu":
            values["kv_device"] = names[0]
        return "kv_blocks", values

    def device_blocks(self, label, count):
        device = str(label).lstrip("#").split()[0].lower()
        return device, _count(count)

    def kv_cache_size(self, _label, tokens, concurrency=None):
        values = {"kv_cache_tokens": _count(tokens)}
        if concurrency is not None:
            values.update(concurrency[1])
        return "kv_cache_size", values

    def max_concurrency(self, tokens, times):
        return "max_concurrency", {"max_concurrency_tokens": _count(tokens),
                                   "max_concurrency_x": _float(times)}

    def weights_memory(self, number, unit):
        return "weights_memory", {"weights_gib": _gib(number, unit)}

    def model_loading(self, number, unit, seconds=None, _unit=None):
        values = {"weights_gib": _gib(number, unit)}
        if seconds is not None:
            values["model_load_s"] = _float(seconds)
        return "model_loading", values

    def weights_time(self, seconds, _unit):
        return "weights_time", {"weights_load_s": _float(seconds)}

    def engine_init(self, _label, seconds, _unit, *compilation):
        values: dict[str, Any] = {"engine_init_s": _float(seconds)}
        if compilation:
            parts = compilation[2] if len(compilation) > 2 else {}
            if parts:   # the language model's and the encoder's: extra, as their total
                values["extra"] = _extra(compilation_time=_seconds(compilation[0]), **parts)
            else:       # torch.compile's total (compilation_config.compilation_time)
                values["torch_compile_s"] = _float(compilation[0])
        return "engine_init", values

    def compile_parts(self, _dash, *parts):
        return dict(parts)

    def compile_part(self, name, seconds, _unit):
        return f"compilation_time_{name}", _seconds(seconds)

    def graph_capture(self, seconds, _unit, *memory):
        values: dict[str, Any] = {"cuda_graph_capture_s": _float(seconds)}
        if memory:
            values["cuda_graph_memory_gib"] = _gib(*memory)
        return "graph_capture", values

    # -- memory profiling ----------------------------------------------------------------------
    def profiling_time(self, seconds, _unit, *profiled):
        profiled = tuple(_items(profiled))
        extra = {"memory_profiling_time": _seconds(seconds)}
        fallback: dict[str, Any] = {}
        for name, figure in profiled:
            _file_memory(name, figure, extra, fallback)
        return "profiling_time", _with(extra, fallback)

    def profiled(self, label, number, unit):
        return _slug(str(label)), _memory(number, unit)

    def memory_budget(self, total, total_unit, fraction, requested, requested_unit):
        return "memory_budget", _with(
            {"total_gpu_memory": _memory(total, total_unit),
             "requested_memory": _memory(requested, requested_unit)},
            config={"gpu_memory_utilization": _float(fraction)})

    def memory_breakdown(self, *items):
        items = tuple(_items(items))
        extra: dict[str, Any] = {}
        fallback: dict[str, Any] = {}
        for name, figure in items:
            _file_memory(name, figure, extra, fallback)
        return "memory_breakdown", _with(extra, fallback)

    def breakdown(self, label, number, unit):
        return BREAKDOWN_NAMES[str(label).split(" take")[0].split(" is")[0]], _memory(number, unit)

    def profiling_results(self, *items):
        items = tuple(_items(items))
        extra: dict[str, Any] = {}
        fallback: dict[str, Any] = {}
        config: dict[str, Any] = {}
        for name, number, unit in items:
            name = PROFILED_NAMES.get(name, name)
            if unit is None:
                if name == "gpu_memory_utilization":
                    config[name] = _float(number)
                else:
                    extra[name] = {"value": _float(number), "unit": None}
            else:
                _file_memory(name, _memory(number, unit), extra, fallback)
        return "profiling_results", _with(extra, fallback, config)

    def result_item(self, name, number, unit=None):
        return str(name), number, unit

    def kv_cache_memory(self, number, unit):
        return "kv_cache_memory", {"available_kv_cache_memory_gib": _gib(number, unit)}

    def free_memory(self, free, total, unit, fraction, requested, requested_unit, *rest):
        rest = tuple(_items(rest))
        extra = {"free_memory_on_startup": _memory(free, unit),
                 "total_gpu_memory": _memory(total, unit),
                 "requested_memory": _memory(requested, requested_unit)}
        fallback: dict[str, Any] = {}
        for item in rest:
            if isinstance(item, dict):
                extra.update(item)
            else:
                _file_memory(*item, extra, fallback)
        return "free_memory", _with(extra, fallback, {"gpu_memory_utilization": _float(fraction)})

    def usage(self, *tokens):
        number, unit, what = (t for t in tokens if t.type in ("NUMBER", "MEMORY_UNIT", "USAGE_WHAT"))
        return USAGE_NAMES.get(str(what).strip(), _slug(str(what))), _memory(number, unit)

    def suggestion(self, *tokens):
        fit, fill = (t for t in tokens if t.type == "COUNT")
        return {"kv_cache_memory_to_fit": {"value": _count(fit), "unit": "bytes"},
                "kv_cache_memory_to_fill": {"value": _count(fill), "unit": "bytes"}}

    def kv_in_use(self, _label, number, unit=None):
        figure = (_memory(number, unit) if unit is not None
                  else {"value": _whole(_float(number)), "unit": "bytes"})
        return {"kv_cache_memory_in_use": figure}

    def graph_memory_estimate(self, number, unit):
        return "graph_memory_estimate", _with({"cuda_graph_memory_estimated": _memory(number, unit)})

    def graph_pool_memory(self, actual, actual_unit, estimated, estimated_unit, difference,
                          difference_unit, percent):
        return "graph_pool_memory", _with({
            "cuda_graph_memory": _memory(actual, actual_unit),
            "cuda_graph_memory_estimated": _memory(estimated, estimated_unit),
            "cuda_graph_memory_difference": _memory(difference, difference_unit),
            "cuda_graph_memory_difference_pct": {"value": _float(percent), "unit": "%"}})

    # -- torch.compile and start-up times -------------------------------------------------------
    def dynamo_time(self, seconds, _unit):
        return "dynamo_time", _with({"dynamo_transform_time": _seconds(seconds)})

    def graph_compile(self, _label, seconds, _unit):
        return "graph_compile", _with({"graph_compile_time": _seconds(seconds)})

    def graph_cache_load(self, _label, seconds, _unit):
        return "graph_cache_load", _with({"compiled_graph_load_time": _seconds(seconds)})

    def torch_compile(self, _label, seconds, _unit):
        return "torch_compile", {"torch_compile_s": _float(seconds)}

    def model_init(self, seconds, _unit):
        return "model_init", _with({"model_init_time": _seconds(seconds)})

    def warmup_run(self, _label, seconds, _unit):
        return "warmup_run", _with({"warmup_run_time": _seconds(seconds)})

    # -- scheduler sizes ------------------------------------------------------------------------
    def max_model_len_used(self, count):
        return "max_model_len_used", {"fallback": {"max_model_len": _count(count)}}

    def chunked_prefill(self, count):
        return "chunked_prefill", {"max_num_batched_tokens": _count(count)}

    def scheduled_tokens(self, count, _rest):
        return "scheduled_tokens", _with({"max_num_scheduled_tokens": _tokens(count)})

    def blocks_override(self, computed, override):
        return "blocks_override", {"num_gpu_blocks_override": _count(override),
                                   "extra": {"num_gpu_blocks_computed": {
                                       "value": _count(computed), "unit": "blocks"}}}

    def resolved_architecture(self, name):
        return "resolved_architecture", {"model_class": str(name)}

    def num_gpu_blocks(self, _engine, count):
        return "num_gpu_blocks", {"gpu_blocks": _count(count)}

    def server_ready(self, *tokens):
        # The address it listens on (`http://0.0.0.0:8000`, uvicorn's `socket ('0.0.0.0',
        # 8000)`): its port is what a benchmark client names.
        address = next((t for t in tokens if t.type in ("URL", "SOCKET")), None)
        port = listen_port(str(address)) if address is not None else None
        return "server_ready", ({"port": port} if port is not None else {})


# Start-up figures no column holds go to the launch's ``extra`` as name → {value, unit}; memory
# in GiB (vLLM's `GB` is GiB), times in s.  A figure that is a column's second source (the
# profiler's `weights memory` after `Model loading took`) fills the column only when nothing
# else did (``fallback``).
BREAKDOWN_NAMES = {"model weights": "weights", "non_torch_memory": "non_torch_memory",
                   "PyTorch activation peak memory": "torch_peak_memory",
                   "the rest of the memory reserved for KV Cache": "kv_cache_memory"}
PROFILED_NAMES = {"total_non_kv_cache_memory": "non_kv_cache_memory",
                  "torch_peak_memory_increase": "torch_peak_memory",
                  "non_torch_forward_increase_memory": "non_torch_memory",
                  "weights_memory": "weights", "peak_torch_memory": "torch_peak_memory",
                  "kv_cache_size": "kv_cache_memory"}
USAGE_NAMES = {"consumed memory (weights + non-torch)": "consumed_memory",
               "peak activation": "torch_peak_memory", "non-torch memory": "non_torch_memory",
               "CUDAGraph memory": "cuda_graph_memory", "weight": "weights",
               "weights": "weights"}


_SOCKET_PORT = re.compile(r",\s*(\d+)\s*\)$")


def listen_port(address: str) -> int | None:
    """The port of a listening address as a server prints it: `http://0.0.0.0:8000`,
    `http://[::]:8000`, `socket ('0.0.0.0', 8000)`; None for a unix socket or no port."""
    match = _SOCKET_PORT.search(address)
    if match:
        return int(match[1])
    try:
        return urlsplit(address).port
    except ValueError:
        return None


def _items(items) -> list[Any]:
    """Results with lark's helper-rule Trees (`(";" item)*`) opened up, in order."""
    out: list[Any] = []
    for item in items:
        if isinstance(item, Tree):
            out.extend(_items(item.children))
        else:
            out.append(item)
    return out


def _slug(label: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_")
    return PROFILED_NAMES.get(slug, slug)


def _memory(number: Token, unit: Token) -> dict[str, Any]:
    return {"value": _gib(number, unit), "unit": "GiB"}


def _seconds(number: Token) -> dict[str, Any]:
    return {"value": _float(number), "unit": "s"}


def _tokens(count: Token) -> dict[str, Any]:
    return {"value": _count(count), "unit": "tokens"}


def _extra(**figures: dict[str, Any]) -> dict[str, Any]:
    return figures


def _file_memory(name: str, figure: dict[str, Any], extra: dict[str, Any],
                 fallback: dict[str, Any]) -> None:
    if name == "weights":
        fallback["weights_gib"] = figure["value"]
    elif name == "kv_cache_memory":
        # V0's `the rest of the memory reserved for KV Cache is X` (0.6.4's kv_cache_size=)
        fallback["available_kv_cache_memory_gib"] = figure["value"]
    else:
        extra[name] = figure


def _with(extra: dict[str, Any], fallback: dict[str, Any] | None = None,
          config: dict[str, Any] | None = None) -> dict[str, Any]:
    values: dict[str, Any] = {"extra": extra}
    if fallback:
        values["fallback"] = fallback
    if config:
        values["config"] = config
    return values


def _printed_args(text: str, namespace: bool) -> dict[str, Any]:
    try:
        value = parse_namespace(text) if namespace else parse_value(text)
    except ReprParseError as exc:
        raise BlockParseError(f"printed arguments: {exc}") from None
    if not isinstance(value, dict):
        raise BlockParseError("printed arguments are not a dict")
    return json_safe(value)


# `Initializing ... LLM engine (v0.6.6) with config: model='x', tensor_parallel_size=8, ...`:
# vLLM formats this by hand (values unquoted, commas sometimes missing), so no repr grammar
# reads all of it; these keys are read by name.
CONFIG_KEYS = {"model": "model", "tensor_parallel_size": "tensor_parallel_size",
               "pipeline_parallel_size": "pipeline_parallel_size",
               "data_parallel_size": "data_parallel_size", "max_seq_len": "max_model_len",
               "quantization": "quantization", "dtype": "dtype",
               "kv_cache_dtype": "kv_cache_dtype", "enforce_eager": "enforce_eager",
               "num_scheduler_steps": "num_scheduler_steps",
               "served_model_name": "served_model_name"}
CONFIG_VALUE = re.compile(r"(?:^|[\s,])(?P<key>" + "|".join(CONFIG_KEYS) +
                          r")=(?P<value>'[^']*'|\"[^\"]*\"|[^,\s]+)")


def engine_config_values(text: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for match in CONFIG_VALUE.finditer(text):
        value = match["value"].strip("'\"")
        if value != "None":
            out.setdefault(CONFIG_KEYS[match["key"]], value.removeprefix("torch."))
    return out


def _parser() -> Lark:
    return grammar.in_parser("vllm_server.lark", __file__, LineToFacts)


def parse_message(message: str) -> tuple[str, dict[str, Any]]:
    return grammar.parse(_parser(), message, "server start-up line")


# The process tag before a line: `(Worker_TP1 pid=202)`, `(Worker_DP0_PP1_TP0 pid=9)` (0.10+),
# `(VllmWorker rank=1 pid=7)` (0.8-0.9), `(EngineCore_DP1 pid=3)`; V0's `(VllmWorkerProcess
# pid=42)` is always a worker beside the driver, rank 0, which prints in its own process.
PROCESS_TAG = re.compile(r"^\s*(?:[\w.\-]+\s+\|\s*)?\((?P<name>[^()]*?)\s*pid=\d+\)")
PROCESS_RANK = re.compile(r"(?:\brank=|(?<![A-Za-z])(?:DP|PP|TP))(\d+)")


def other_rank(text: str) -> bool:
    """The line is printed by a process other than rank 0: another tensor-parallel worker,
    pipeline stage or data-parallel engine.  Each prints its own start-up figures (each
    worker its own weights, compile and graph times); the launch keeps rank 0's."""
    tag = PROCESS_TAG.match(text)
    if tag is None:
        return False
    name = tag["name"]
    return name.startswith("VllmWorkerProcess") or any(
        int(rank) != 0 for rank in PROCESS_RANK.findall(name))


def build(line: int, text: str, context: Context) -> Facts | None:
    if other_rank(text):
        return None
    log = split_log_line(text)
    kind, values = parse_message(log.message)
    if kind in ("engine_config", "namespace_args", "nondefault_args"):
        # Printed settings: a number the launch's columns need that is none.
        printed = values.get("config") or values.get("args") or {}
        warnings = [(line, f"{key}: cannot read {value!r}, not stored")
                    for key, value in unreadable_args(printed, "vllm")]
    else:
        warnings = [(line, f"cannot read {bad!r} in {log.message[:120]!r}, stored as null")
                    for bad in GARBLED.findall(log.message)]
    return Facts(TABLE, kind, values, context, log.time, once=kind in ONCE | RESTARTS,
                 weak=kind in WEAK, warnings=warnings,
                 printer=None if kind in WEAK or kind == "command" else "vllm")


def unreadable_args(args: dict[str, Any], engine: str | None) -> list[tuple[str, Any]]:
    """Arguments naming a numeric column whose value is no number (`--max-model-len !096`):
    the column stays empty, and ingest says why."""
    aliases = ALIASES.get(engine or "vllm", {})
    out = []
    for key, value in args.items():
        column = aliases.get(key, key)
        if value is None or isinstance(value, bool):
            continue
        if column in INT_COLUMNS and _as_int(value) is None or (
                column == "gpu_memory_utilization" and _as_float(value) is None):
            out.append((key, value))
    return out


# -- assembling one launch from its facts ------------------------------------------------------
SHORT_FLAGS = {
    "vllm": {"tp": "tensor_parallel_size", "pp": "pipeline_parallel_size",
             "dp": "data_parallel_size", "q": "quantization", "O": "compilation_config"},
    "sglang": {}, "llama.cpp": {},
}
# Other engines' flag names for the same columns.
ALIASES = {
    "sglang": {"tp_size": "tensor_parallel_size", "tp": "tensor_parallel_size",
               "dp_size": "data_parallel_size", "dp": "data_parallel_size",
               "pp_size": "pipeline_parallel_size", "model_path": "model",
               "mem_fraction_static": "gpu_memory_utilization", "context_length": "max_model_len",
               "max_running_requests": "max_num_seqs", "speculative_draft_model_path":
               "speculative_model", "speculative_num_draft_tokens": "num_speculative_tokens",
               "disable_cuda_graph": "enforce_eager"},
    "llama.cpp": {"m": "model", "c": "max_model_len", "ctx_size": "max_model_len",
                  "np": "max_num_seqs", "parallel": "max_num_seqs",
                  "alias": "served_model_name", "a": "served_model_name"},
    "vllm": {"model_tag": "model"},
}
INT_COLUMNS = ("tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size",
               "max_model_len", "max_num_seqs", "num_scheduler_steps", "num_speculative_tokens",
               "port", "num_gpu_blocks_override", "chunked_prefill_size", "max_prefill_tokens",
               "max_num_batched_tokens")
TEXT_COLUMNS = ("model", "quantization", "dtype", "kv_cache_dtype", "speculative_model")
SIZE_SUFFIX = {"k": 1_000, "m": 1_000_000, "g": 1_000_000_000}
# The port a server listens on when its arguments name none (vLLM and SGLang print no port
# in `non-default args` when it is the default).
DEFAULT_PORTS = {"vllm": 8000, "sglang": 30000, "llama.cpp": 8080}


def _as_int(value: Any) -> int | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return int(value) if finite(value) and abs(value) < 2 ** 63 else None
    text = str(value).strip().replace("_", "")
    match = re.fullmatch(r"(\d+(?:\.\d+)?)([kKmMgG]?)", text)
    if not match:
        return None
    # vLLM reads `32k` as 32000 and `32K` as 32768.
    suffix = match[2]
    scale = 1 if not suffix else (1024 ** " kmg".index(suffix.lower()) if suffix.isupper()
                                  else SIZE_SUFFIX[suffix])
    number = float(match[1]) * scale
    return int(number) if finite(number) and abs(number) < 2 ** 63 else None


def _as_float(value: Any) -> float | None:
    try:
        return float(value) if value is not None and not isinstance(value, bool) else None
    except (TypeError, ValueError):
        return None


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false", "1", "0"):
        return value.lower() in ("true", "1")
    return None


def columns_from_args(args: dict[str, Any], engine: str | None) -> dict[str, Any]:
    """First-class launch columns from an argument dict (any engine's flag names)."""
    named: dict[str, Any] = {}
    aliases = ALIASES.get(engine or "vllm", {})
    for key, value in args.items():
        if value is None:
            continue
        named.setdefault(aliases.get(key, key), value)
    spec = named.get("speculative_config")
    if isinstance(spec, str):
        try:
            spec = json.loads(spec)
        except ValueError:
            spec = None
    if isinstance(spec, dict):
        named.setdefault("speculative_model", spec.get("model") or spec.get("method"))
        named.setdefault("num_speculative_tokens", spec.get("num_speculative_tokens"))
    out: dict[str, Any] = {}
    for column in INT_COLUMNS:
        out[column] = _as_int(named.get(column))
    for column in TEXT_COLUMNS:
        value = named.get(column)
        out[column] = str(value) if value is not None and not isinstance(value, bool) else None
    names = named.get("served_model_name")
    if isinstance(names, list):       # `--served-model-name a b`: the first is the model's id
        names = names[0] if names else None
    if isinstance(names, str) and names:
        out["served_model_name"] = names
    out["gpu_memory_utilization"] = _as_float(named.get("gpu_memory_utilization"))
    out["enforce_eager"] = _as_bool(named.get("enforce_eager"))
    return {k: v for k, v in out.items() if v is not None}


# A launch's raw_text keeps its first start-up lines; a log that repeats them for hours (a
# monitoring loop) would otherwise hold them all in memory.
MAX_RAW_LINES = 500


class Assembly:
    """One launch being read: facts merge in as they arrive; :meth:`row` is its current row.

    Column precedence: the printed arguments (what the server ran with) over the command line
    over the engine-config line; facts the log printed (blocks, times) as they come.
    """

    def __init__(self, engine: str | None, section: str | None, label: str | None,
                 tags: dict[str, str] | None):
        self.engine = engine
        self.section, self.label, self.tags = section, label, tags
        self.command: str | None = None
        self.command_args: dict[str, Any] = {}
        self.positionals: list[str] = []
        self.printed_args: dict[str, Any] | None = None
        self.args_from: str | None = None
        self.config: dict[str, Any] = {}
        self.values: dict[str, Any] = {}
        self.fallback: dict[str, Any] = {}
        self.prose_model: str | None = None
        self.extra: dict[str, Any] = {}
        self.kinds: set[str] = set()
        self.printer: str | None = None     # the engine whose own lines it holds (Facts)
        self.first: LogTime | None = None
        self.last: LogTime | None = None
        self.year: int | None = None
        self.line_start: int | None = None
        self.line_end: int | None = None
        self.lines: list[str] = []
        self.lines_left_out = 0

    @property
    def printed_anything(self) -> bool:
        """The server itself printed something (not only a pasted command)."""
        return bool(self.kinds - {"command"})

    def add(self, facts: Facts) -> None:
        # A kind in ``kinds`` with ``once`` set starts another launch when it comes again
        # (ingest/link.py): the weights lines only once the KV cache was sized (RESTARTS).
        # (A note may quote the lines out of order -- the blocks, then the weights -- so only a
        # second weights line, after the launch printed both, starts another.)
        self.printer = self.printer or facts.printer
        if not self.kinds and facts.context is not None:
            # (lowest of all: the one hub model id the note's prose names, for a log pasted
            # with no command and no printed arguments, `vLLM 0.6.6 on A100,
            # meta-llama/Llama-3.1-8B`; not a bare name, which a compose service's may look like)
            self.prose_model = model_in_prose((*facts.context.section, *facts.context.prose),
                                              hub_only=True)
        self.kinds.add(facts.kind if facts.kind not in RESTARTS else "weights")
        if facts.kind in SIZED:
            self.kinds.add("sized")
        if {"weights", "sized"} <= self.kinds:
            self.kinds |= RESTARTS
        values = dict(facts.values)
        if facts.kind == "command":
            self.command = values.pop("command")
            self.command_args = values.pop("args")
            self.positionals = values.pop("positionals", [])
            self.engine = values.pop("engine", None) or self.engine
        else:
            # A line only one engine prints says which (SGLang's start-up lines); a command
            # that names one says it first.
            self.engine = self.engine or values.pop("engine", None)
            values.pop("engine", None)
        if facts.kind != "command" and "args" in values:
            self.printed_args = values.pop("args")
            self.args_from = {"namespace_args": "namespace", "server_args": "server_args"}.get(
                facts.kind, "non-default args")
        if "config" in values:
            self.config.update(values.pop("config"))
        if "fallback" in values:
            self.fallback.update(values.pop("fallback"))
        if "extra" in values:
            self.extra.update(values.pop("extra"))
        self.values.update(values)
        if facts.time is not None:
            if facts.time.year:
                self.year = self.year or facts.time.year
            self.first = self.first or facts.time
            self.last = facts.time
        if self.line_start is None:
            self.line_start = facts.line
        self.line_end = facts.line
        if len(self.lines) < MAX_RAW_LINES:
            self.lines.append(facts.text)
        else:
            self.lines_left_out += 1

    def restart_command(self) -> None:
        """A second command before the server printed anything replaces the first."""
        self.command, self.command_args, self.positionals = None, {}, []
        self.lines = []
        self.lines_left_out = 0
        self.line_start = None
        self.first = self.last = None

    def row(self) -> dict[str, Any]:
        engine = self.engine or "vllm"
        args: dict[str, Any] = dict(self.command_args)
        if self.positionals and "model" not in args:
            args["model"] = self.positionals[0]
        # Lowest first: a figure the log printed twice over (the profiler's weights after
        # `Model loading took`, `Using max model len` after the arguments) only fills a gap.
        row: dict[str, Any] = dict(self.fallback)
        row.update(columns_from_args(self.config, "vllm"))
        row.update(columns_from_args(args, engine))
        if self.printed_args is not None:
            args.update(self.printed_args)
            row.update(columns_from_args(self.printed_args, engine))
        row.update(self.values)
        if not row.get("model") and self.prose_model is not None:
            row["model"] = self.prose_model
        if row.get("port") is None and (self.command or self.printed_args is not None) \
                and "port" not in {**self.command_args, **(self.printed_args or {})}:
            row["port"] = DEFAULT_PORTS.get(engine)     # (not for a port it names unreadably)
        row.update(engine=engine, command=self.command, args=args or None,
                   extra=dict(self.extra) or None,
                   args_from=self.args_from or ("command" if self.command else None),
                   section=self.section, label=self.label, tags=self.tags,
                   line_start=self.line_start, line_end=self.line_end,
                   raw_text="\n".join(self.lines + ([f"... {self.lines_left_out} more start-up "
                                                     "lines, see the source file"]
                                                    if self.lines_left_out else [])) or None)
        if self.first is not None and self.last is not None:
            row["started_at"] = self.first.text(self.year)
            row["ready_at"] = self.last.text(self.year)
            row["load_seconds"] = seconds_between(self.first, self.last, self.year)
        return row


FORMAT = LineFormat(
    name="vllm_server",
    table=TABLE,
    description="vLLM server start-up lines: version, printed arguments, KV-cache capacity, "
                "load times (assembled with the launch command into one launch).",
    upstream=("vllm 0.4 – 0.11 (V0 and V1 engines)",),
    markers=("vLLM API server", "█  version", "args: ", "LLM engine", "blocks:", "KV cache size:",
             "Maximum concurrency for", "took", "Graph capturing", "startup complete",
             # each new line's first words: a hard-wrapped line keeps only its start on the
             # line the prefilter sees
             "Memory profiling", "vLLM instance can use", "model weights take",
             "KV cache memory:", "Free memory on device", "CUDA graph", "Dynamo bytecode",
             "Compiling a graph", "compiled graph", "torch.compile", "Initializing model",
             "warmup run", "max model len", "Chunked prefill", "max_num_scheduled_tokens",
             "cache_config_info", "Starting vLLM", "Uvicorn running on", "Resolved architecture",
             "Overriding num_gpu_blocks"),
    # Each phrase with the start of its value, so prose that names a line is not read as one
    # (a value's first digit may be garbled: `took !5.18` is still that line, its figure null).
    pattern=re.compile(
        r"vLLM API server version \S|[\u2580-\u259f] +version [\d!?*~^$&@v]|\bargs: (?:Namespace\(|\{)"
        r"|Initializing an?(?: V[\d!?*~^$&@])? LLM engine \(|#\s*\w+ blocks: [\d!?*~^$&@]|\b\w+ KV cache size: [\d!?*~^$&@]"
        r"|^(?:.*\]\s*)?Maximum concurrency for [\d!?*~^$&@]"
        r"|(?:Loading model weights|Model loading|Loading weights) took [\d!?*~^$&@]"
        # anchored, so a line repeating `init engine` is scanned once, not once per repeat
        r"|^(?:(?!init engine\b).)*+init engine\b.*took [\d!?*~^$&@]"
        r"|Graph capturing finished in [\d!?*~^$&@]|Starting vLLM (?:API )?server (?:[\d!?*~^$&@]+ )?on \w+://"
        r"|Uvicorn running on (?:\w+://|socket \()"
        r"|Application startup complete"
        r"|Memory profiling (?:takes [\d!?*~^$&@]|results: \w+=)|can use total_gpu_memory \([\d!?*~^$&@]"
        r"|^(?:.*\]\s*)?model weights take [\d!?*~^$&@]|Available KV cache memory: [\d!?*~^$&@]"
        r"|Free memory on device \([\d!?*~^$&@]|Estimated CUDA graph memory: [\d!?*~^$&@]"
        r"|CUDA graph pool memory: [\d!?*~^$&@]|Dynamo bytecode transform time: [\d!?*~^$&@]"
        r"|Compiling a graph for [^\n]{1,100}? takes [\d!?*~^$&@]"
        r"|Directly load the compiled graph\(s\) for [^\n]{1,100}? from the cache, took [\d!?*~^$&@]"
        r"|torch\.compile (?:takes|took|and initial profiling/warmup run together took) [\d!?*~^$&@]"
        r"|Initializing model took [\d!?*~^$&@]"
        r"|Initial profiling/warmup run took [\d!?*~^$&@]|Using max model len [\d!?*~^$&@]"
        # (short: a wrapped line must match on its first piece to be joined again)
        r"|Chunked prefill is enabled with max_num"
        r"|max_num_scheduled_tokens is set to [\d!?*~^$&@]|num_gpu_blocks is: [\d!?*~^$&@]"
        r"|Overriding num_gpu_blocks=[\d!?*~^$&@]|Resolved architecture: \w"),
    build=build,
)
