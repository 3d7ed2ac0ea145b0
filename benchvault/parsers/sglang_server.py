"""SGLang server start-up lines → facts about one ``server_launches`` row (engine ``sglang``).

Upstream printers (2024 → 2026): ``server_args=ServerArgs(...)`` (the launcher, every
argument), ``model_executor/model_runner.py`` (``Load weight end. ...``, ``KV Cache is
allocated. #tokens: N, K size: .., V size: ..``, before 0.4.5 without ``#tokens``,
``Memory pool end``, ``Capture cuda graph
end. ...``), ``managers/scheduler.py`` (``max_total_num_tokens=N, ..., max_running_requests=M,
context_len=L``), ``entrypoints/http_server.py`` (``The server is fired up and ready to
roll!``).  Example (derived from sgl-project/sglang#29575)::

    [2026-05-17 09:31:02] server_args=ServerArgs(model_path='zai-org/GLM-4.6-FP8', tp_size=8, ...)
    [2026-05-17 09:33:40 TP0] Load weight end. type=Glm4MoeForCausalLM, dtype=torch.bfloat16, avail mem=42.18 GB, mem usage=40.77 GB.
    [2026-05-17 09:33:44 TP0] KV Cache is allocated. #tokens: 1203518, K size: 13.10 GB, V size: 13.10 GB
    [2026-05-17 09:34:33 TP0] max_total_num_tokens=1203518, chunked_prefill_size=8192, ..., max_running_requests=48, context_len=202752, available_gpu_mem=13.15 GB

give ``model='zai-org/GLM-4.6-FP8', tensor_parallel_size=8, weights_gib=40.77,
kv_cache_tokens=1203518, chunked_prefill_size=8192, max_num_seqs=48, max_model_len=202752``
and, in ``extra``, the figures no column names (memory in GiB: SGLang's `GB` is bytes /
2**30).  The lines are assembled into one launch by ingest's Linker with vllm_server's :class:`~benchvault.parsers.vllm_server.Assembly`, like
vLLM's start-up lines (a ``python -m sglang.launch_server`` command before them begins it).

Only rank 0 is read: every tensor-parallel rank prints its own ``Load weight end`` and pool
lines, the same figures again; a data-parallel replica or pipeline stage other than the first
(``DP1``, ``PP1`` in the prefix) prints its own, and the launch keeps the first's.
"""

from __future__ import annotations

import re
from typing import Any

from lark import Token, Transformer, v_args

from . import grammar
from .base import BlockParseError, Context, Facts, LineFormat
from ..reading.pyliteral import ReprParseError, parse_namespace, parse_value
from ..schemas.models import json_safe
from ..schemas.server import ServerLaunch
from .vllm_server import DEFAULT_PORTS, TABLE, columns_from_args
from .vllm_server_log import int_columns, split_log_line

ENGINE = "sglang"
ONCE = {"server_args"}
WEAK = {"ready"}
TO_GIB = {"gib": 1.0, "gb": 1.0, "mib": 1 / 1024, "mb": 1 / 1024, "kib": 1 / 1024 ** 2,
          "kb": 1 / 1024 ** 2}
HEADS = {"load weight begin": "weights_begin", "load weight end": "weights_end",
         "kv cache is allocated": "kv_allocated", "memory pool end": "memory_pool",
         "init torch distributed begin": "distributed_begin",
         "init torch distributed end": "distributed_end",
         "init torch distributed ends": "distributed_end",
         "init parallel begin": "distributed_begin", "init parallel ends": "distributed_end",
         "memory baseline taken": "memory_baseline",
         "post-capture kv sizing:": "post_capture_sizes",
         "mamba cache is allocated": "mamba_pool",
         "use sliding window memory pool": "swa_sizes",
         "use sliding window memory pool (all swa)": "swa_sizes",
         "post-capture kv sizing: kv cache allocated": "kv_resized",
         "post-capture kv sizing: draft kv cache allocated": "kv_allocated:draft"}
# `<label> KV Cache is allocated`: one of a hybrid model's pools (Full, SWA, ...).
KV_POOL_HEAD = re.compile(r"(?P<label>.+) kv cache is allocated$")
# `Capture [name] <device> graph begin|end`: the device's kind (cuda, CUDA, npu, cpu, XPU, ...)
# and, before it, the graph's name (`draft`, `draft extend`, `piecewise`, `target decode`, ...).
GRAPH_HEAD = re.compile(r"capture (?:(?P<name>.+?) )?[\w\-]+ graph (?P<phase>begin|end)$")
# The model's own decode graph: unnamed (`Capture cuda graph`), or `target decode` / `target
# verify` (speculative decoding's target) since the graphs were named.
MAIN_GRAPHS = {None, "target decode", "target verify"}
# (kind, printed name) → column; numbers only.
COLUMNS = {
    ("weights_end", "mem usage"): "weights_gib",
    ("weights_end", "elapsed"): "weights_load_s",
    ("kv_allocated", "#tokens"): "kv_cache_tokens",
    ("kv_allocated", "dtype"): "kv_cache_dtype",
    ("graph_end", "time elapsed"): "cuda_graph_capture_s",
    ("graph_end", "elapsed"): "cuda_graph_capture_s",
    ("graph_end", "mem usage"): "cuda_graph_memory_gib",
    ("kv_allocated", "k size"): "kv_cache_k_size_gib",
    ("kv_allocated", "v size"): "kv_cache_v_size_gib",
    ("kv_allocated", "kv size"): "available_kv_cache_memory_gib",
    ("memory_pool", "avail mem"): "avail_mem_after_kv_cache_gib",
    ("sizes", "available_gpu_mem"): "available_gpu_mem_gib",
    ("sizes", "max_total_num_tokens"): "kv_cache_tokens",
    ("sizes", "max_running_requests"): "max_num_seqs",
    ("sizes", "chunked_prefill_size"): "chunked_prefill_size",
    ("sizes", "max_prefill_tokens"): "max_prefill_tokens",
    ("sizes", "context_len"): "max_model_len",
    ("weights_begin", "avail mem"): "avail_mem_before_weights_gib",
    ("weights_end", "avail mem"): "avail_mem_after_weights_gib",
    ("weights_end", "type"): "model_class",
    ("graph_begin", "avail mem"): "avail_mem_before_graph_capture_gib",
    ("graph_end", "avail mem"): "avail_mem_after_graph_capture_gib",
    ("kv_resized", "#tokens"): "kv_cache_tokens",
    ("kv_resized", "kv size"): "available_kv_cache_memory_gib",
    ("kv_resized", "dtype"): "kv_cache_dtype",
    ("kv_dtype", "using kv cache dtype"): "kv_cache_dtype",
    # a sliding-window model's two pools together (0.5.x's SWAKVPool: K and V of both)
    ("swa_pool", "swakvpool mem usage"): "available_kv_cache_memory_gib",
}
# (kind, printed name) → name in ``extra``; any other figure keeps its printed name.
EXTRA_NAMES = {
    ("weights_begin", "avail mem"): "avail_mem_before_weights",
    ("weights_end", "avail mem"): "avail_mem_after_weights",
    ("weights_end", "type"): "model_class",
    ("weights_end", "quant"): "weights_quantization",
    ("distributed_end", "mem usage"): "distributed_init_memory",
    ("distributed_end", "elapsed"): "distributed_init_time",
    ("distributed_begin", "avail mem"): "avail_mem_before_distributed_init",
    ("memory_baseline", "mem usage"): "memory_baseline_mem_usage",
    ("graph_begin", "backend"): "cuda_graph_backend",
    ("graph_end", "bs"): "cuda_graph_bs",
    ("kv_resized", "avail mem"): "avail_mem_after_kv_resize",
    ("mamba_pool", "conv_state size"): "mamba_conv_state_size",
    ("mamba_pool", "ssm_state size"): "mamba_ssm_state_size",
    ("mamba_pool", "intermediate_ssm_state_cache size"): "mamba_intermediate_ssm_state_size",
    ("mamba_pool", "intermediate_conv_window_cache size"): "mamba_intermediate_conv_window_size",
    ("swa_pool", "swa size"): "swa_kv_cache_tokens",
    ("swa_pool", "full size"): "full_kv_cache_tokens",
}
TOKEN_FIGURES = {"chunked_prefill_size", "max_prefill_tokens", "max_total_num_tokens",
                 "max_req_input_len", "full_layer_tokens", "swa_layer_tokens",
                 "swa_kv_cache_tokens", "full_kv_cache_tokens"}
# A speculative-decoding draft model prints its own `Load weight end` (type=Draft, or its
# class: `LlamaForCausalLMEagle3`, `...MTP`): its memory is not the target's weights.
DRAFT_TYPE = re.compile(r"draft|eagle|mtp|nextn|medusa", re.I)
# The rank tags of SGLang's prefix: `[2026-05-17 09:33:44 DP0 TP3 EP3]`, `[... PP1 ATTN_CP0
# MOE_DP0 TP0 EP0]` (0.5.2x): data-, pipeline-, context-, MoE-data- and tensor-parallel ranks.
PREFIX_TAGS = re.compile(r"^\s*\[([^\]]*)\]")
RANK_TAG = re.compile(r"(?<![A-Z_])(?:DP|PP|TP|ATTN_CP|MOE_DP)(\d+)\b")


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


@v_args(inline=True)
class LineToFacts(Transformer):
    """Tree → (kind, [(name, value, unit)]) or ("server_args", args)."""

    def start(self, *parts):
        first = parts[0]
        if isinstance(first, Token) and first.type == "SERVER_ARGS":
            return "server_args", str(first).split("=", 1)[1].strip()
        if isinstance(first, Token) and first.type == "READY":
            return "ready", []
        if isinstance(first, Token) and first.type == "HEAD":
            head = re.sub(r"\s+", " ", str(first).split(".")[0].strip().lower())
            head = head.replace(" this can take up to several minutes", "")
            graph = GRAPH_HEAD.match(head)
            if graph:
                # the model's decode graph (any device's: Ascend's npu graph, the CPU graph)
                # has the columns; any other keeps its figures under its name
                # (`draft_graph_elapsed`, `draft_extend_graph_mem_usage`)
                phase = "graph_" + graph["phase"]
                if graph["name"] not in MAIN_GRAPHS:
                    phase += ":" + graph["name"]
                return phase, (parts[1] if len(parts) > 1 else [])
            pool = KV_POOL_HEAD.match(head)
            if pool and head not in HEADS:
                return "kv_allocated:" + pool["label"], (parts[1] if len(parts) > 1 else [])
            return HEADS[head], (parts[1] if len(parts) > 1 else [])
        figures = parts[-1]
        if len(figures) == 1 and figures[0][0] == "using kv cache dtype":
            return "kv_dtype", figures
        if figures and figures[0][0] == "swakvpool mem usage":
            return "swa_pool", figures
        if not figures or figures[0][0] != "max_total_num_tokens":
            raise BlockParseError("not an SGLang start-up line")
        return "sizes", figures

    def figures(self, *items):
        return list(items)

    def figure(self, name, value):
        return (re.sub(r"\s+", " ", str(name).strip()).lower(), *value)

    def value(self, number, unit=None):
        if number.type == "GARBLED":
            return Garbled(str(number)), (str(unit) if unit is not None else None)
        if number.type == "LIST":
            return str(number), None
        if number.type == "WORD":
            text = str(number).rstrip(".")
            return (text.removeprefix("torch.") if text.startswith("torch.") else text), None
        figure = float(number)
        return (int(figure) if figure.is_integer() and "." not in str(number) else figure,
                str(unit) if unit is not None else None)


class Garbled(str):
    """A figure printed with a character no number has: read as null, with a warning."""


def server_args(text: str) -> tuple[dict[str, Any], list[str]]:
    """`ServerArgs(a=1, ...)` → (dict, what could not be read).  The repr grammar reads it
    whole; else it is read item by item (an enum's `<LoadFormat.AUTO: 'auto'>` is its value,
    an unreadable value is kept as printed and named).  A repr cut short (a wrapped line's
    first piece) is no line: BlockParseError."""
    try:
        return json_safe(parse_namespace("Namespace" + text[len("ServerArgs"):])), []
    except ReprParseError:
        pass
    items = _top_level_items(text[len("ServerArgs("):])
    if items is None:
        raise BlockParseError("server_args: ServerArgs(...) is cut short")
    out: dict[str, Any] = {}
    problems: list[str] = []
    for item in items:
        key, eq, raw = item.partition("=")
        key, raw = key.strip(), raw.strip()
        if not eq or not re.fullmatch(r"\w+", key):
            problems.append(f"server_args: cannot read {item.strip()[:60]!r}")
            continue
        enum = re.fullmatch(r"<[\w.]+: (.+)>", raw)
        try:
            out[key] = json_safe(parse_value(enum[1] if enum else raw))
        except ReprParseError:
            out[key] = raw
            problems.append(f"server_args: cannot read {key}={raw[:40]}, kept as printed")
    return out, problems


_OPENS, _CLOSES = "([{<", ")]}>"


def _top_level_items(body: str) -> list[str] | None:
    """The comma-separated items of ``body`` (the text after `ServerArgs(`, through its `)`);
    None when the parentheses or quotes never close."""
    items, depth, quote, start, i = [], 0, "", 0, 0
    while i < len(body):
        ch = body[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in _OPENS:
            depth += 1
        elif ch in _CLOSES:
            if depth == 0:
                if ch != ")":
                    return None
                items.append(body[start:i])
                return [item for item in items if item.strip()]
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(body[start:i])
            start = i + 1
        i += 1
    return None


def _figure(value: Any, unit: str | None) -> dict[str, Any]:
    if unit and unit.lower() in TO_GIB and isinstance(value, (int, float)):
        return {"value": round(value * TO_GIB[unit.lower()], 4), "unit": "GiB"}
    return {"value": value, "unit": unit}


def facts_values(kind: str, figures: Any, problems: list[str]) -> dict[str, Any]:
    """Column values and ``extra`` figures of one line (what it could not read, to
    ``problems``)."""
    if kind == "server_args":
        values: dict[str, Any] = {"args": figures}
        values.update(columns_from_args(figures, ENGINE))
        # `dtype='auto'`: the model's own, printed by `Load weight end` -- no dtype yet.
        for column in ("dtype", "kv_cache_dtype"):
            if str(figures.get(column)).lower() == "auto":
                values[column] = None
        if "port" not in figures:
            values["port"] = DEFAULT_PORTS[ENGINE]
        values["engine"] = ENGINE
        return values
    values = {"engine": ENGINE}
    extra: dict[str, Any] = {}
    kind, _, named = kind.partition(":")
    if named:
        # another graph's figures, or one of several KV pools': extra, under its name
        # (`draft_graph_elapsed`, `swa_kv_cache_tokens`); a pool's dtype is the KV cache's
        # (a draft model's pool keeps its own)
        noun = "kv cache" if kind == "kv_allocated" else "graph"
        for name, value, unit in figures:
            if isinstance(value, Garbled):
                problems.append(f"{name}: cannot read {str(value)!r}, not stored")
                value, unit = None, None
            if noun == "kv cache":
                if name == "dtype" and isinstance(value, str) and named != "draft":
                    values["kv_cache_dtype"] = value
                    continue
                if name == "#tokens":
                    name, unit = "tokens", unit or "tokens"
            elif name == "avail mem":
                name = "avail mem " + ("before" if kind == "graph_begin" else "after")
            elif name == "time elapsed":        # 0.4 -> 0.5.x's `Time elapsed: X s`
                name = "elapsed"
            extra[_slug(f"{named} {noun} {name}")] = _figure(value, unit)
        return {**values, "extra": extra} if extra else values
    draft = kind == "weights_end" and any(
        name == "type" and DRAFT_TYPE.search(str(value)) for name, value, _ in figures)
    for name, value, unit in figures:
        column = COLUMNS.get((kind, name))
        if isinstance(value, Garbled):
            problems.append(f"{name}: cannot read {str(value)!r}, not stored")
            if draft or not column:
                key = EXTRA_NAMES.get((kind, name), _slug(name))
                extra[("draft_" if draft else "") + key] = {"value": None, "unit": None}
            else:
                values[column] = None
        elif draft:
            name = "weights memory" if name == "mem usage" else \
                EXTRA_NAMES.get((kind, name), name)
            extra["draft_" + _slug(name)] = _figure(value, unit)
        elif column and isinstance(value, (int, float)):
            if column.endswith("_gib"):
                value = _figure(value, unit or "GB")["value"]
            values[column] = int(value) if column in int_columns(ServerLaunch) else value
        elif kind == "weights_end" and name == "dtype" and isinstance(value, str):
            values["dtype"] = value
        elif column and isinstance(value, str):
            values[column] = value
        elif isinstance(value, str) and value == "None":
            continue
        else:
            key = EXTRA_NAMES.get((kind, name), _slug(name))
            if key in TOKEN_FIGURES and unit is None:
                unit = "tokens"
            extra[key] = _figure(value, unit)
    if kind == "swa_pool":
        # the two pools' `KV Cache is allocated` lines before it printed one pool each: the
        # K and V sizes of the last are not the cache's
        values.update(kv_cache_k_size_gib=None, kv_cache_v_size_gib=None)
    k_size, v_size = values.get("kv_cache_k_size_gib"), values.get("kv_cache_v_size_gib")
    if k_size is not None and v_size is not None:
        # The KV pool's memory, as vLLM's `Available KV cache memory` says it: K and V together.
        values["available_kv_cache_memory_gib"] = round(k_size + v_size, 4)
    if extra:
        values["extra"] = extra
    return values


def _parser():
    return grammar.in_parser("sglang_server.lark", __file__, LineToFacts)


def build(line: int, text: str, context: Context) -> Facts | None:
    tags = PREFIX_TAGS.match(text)
    if tags and any(int(rank) != 0 for rank in RANK_TAG.findall(tags[1])):
        return None     # another rank: rank 0 printed its own (the launch keeps rank 0's)
    log = split_log_line(text)
    kind, figures = grammar.parse(_parser(), log.message, "SGLang start-up line")
    problems: list[str] = []
    if kind == "server_args":
        figures, problems = server_args(figures)
    values = facts_values(kind, figures, problems)
    return Facts(TABLE, kind, values, context, log.time, once=kind in ONCE, weak=kind in WEAK,
                 warnings=[(line, problem) for problem in problems],
                 printer=None if kind in WEAK else "sglang")


FORMAT = LineFormat(
    name="sglang_server",
    table=TABLE,
    description="SGLang server start-up lines: printed ServerArgs, weights, KV-cache pool, "
                "CUDA-graph capture, scheduler sizes (assembled into one launch).",
    upstream=("sglang 0.2 – 0.5 (2024 – 2026): model_runner.py, scheduler.py, server_args",),
    markers=("server_args=ServerArgs(", "Load weight", "KV Cache is allocated",
             "Post-capture KV sizing", "SWAKVPool mem usage", "Use sliding window memory pool",
             "Mamba Cache is allocated",
             "Memory pool end", " graph begin.", " graph end.",
             "max_total_num_tokens=", "fired up and ready", "Init torch distributed",
             "Init parallel", "Memory baseline taken", "Using KV cache dtype"),
    pattern=re.compile(
        # each head with the start of its figures, so prose naming a line is not read as one
        r"server_args=ServerArgs\(\w|Load weight (?:begin|end)\. [\w ]+=\w"
        r"|KV Cache is allocated\. (?:dtype: [\w.]+, )?(?:#tokens|K size|KV size): \d"
        r"|Memory pool end\. avail mem=\d|SWAKVPool mem usage: \d"
        r"|Mamba Cache is allocated\. (?:max_mamba_cache_size|conv_state size): \d"
        r"|Use sliding window memory pool(?: \(all SWA\))?\. \w+=\d"
        r"|Post-capture KV sizing: (?:\w+=\d|(?:draft )?KV cache allocated\. dtype: \w)"
        r"|Capture (?:[\w\-]+ ){1,5}?graph begin\.(?: This can|\s*$| [\w ]+=[\d\[\w])"
        r"|Capture (?:[\w\-]+ ){1,5}?graph end\.(?: Time elapsed: \d|\s*$| [\w ]+=[\d\[\w])"
        r"|(?:^|[\]\s])max_total_num_tokens=\d|The server is fired up and ready to roll"
        r"|Init (?:torch distributed|parallel) begin\.\s*$"
        r"|Init (?:torch distributed|parallel) ends?\. [\w ]+=\d"
        r"|Memory baseline taken\. mem usage=\d|^(?:.*\]\s*)?Using KV cache dtype: \w+\S*\s*$"),
    build=build,
)
