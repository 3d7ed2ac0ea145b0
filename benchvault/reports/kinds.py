"""The built-in reports: which table each reads, its default columns, order and charts.

Adding a report is adding a :class:`ReportKind` to ``KINDS``; a user overrides any of it with
``--columns``, ``--sort``, ``--where`` or their own ``--template``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ReportKind:
    name: str
    table: str
    title: str
    description: str
    columns: tuple[str, ...]
    sort: tuple[str, ...] = ()           # empty: the order the rows were written in the notes
    charts: tuple[str, ...] = ()
    match: tuple[str, ...] = ()          # what `compare` pairs baseline and candidate rows on
    metric: str = ""                     # the metric `compare` judges by default
    formats: tuple[tuple[str, str], ...] = ()   # column → str.format template
    sweep: bool = False                  # rows grouped by config, then by max_concurrency
    where: tuple[str, ...] = ()          # always applied (before the user's --where)
    context: tuple[str, ...] = ()        # shown first, by default, when they differ between rows


SERVING_METRICS = ("duration", "request_throughput", "output_throughput",
                   "total_token_throughput", "mean_ttft_ms", "mean_tpot_ms")

KINDS: dict[str, ReportKind] = {k.name: k for k in (
    ReportKind(
        "sweep", "serving_runs", "Concurrency sweep",
        "Serving results of one model/engine/config by max_concurrency.",
        ("model", "max_concurrency") + SERVING_METRICS,
        charts=("throughput", "ttft"), match=("engine", "model", "max_concurrency"),
        metric="output_throughput", formats=(("max_concurrency", "c={}"),), sweep=True,
        context=("engine", "config")),
    ReportKind(
        "engines", "serving_runs", "Engine / quantization comparison",
        "Serving results of several engines, models or quantizations side by side "
        "(filter on one max_concurrency).",
        ("engine", "model") + SERVING_METRICS,
        match=("max_concurrency",), metric="output_throughput",
        formats=(("max_concurrency", "c={}"),)),
    ReportKind(
        "llama-bench", "llama_bench_results", "llama-bench",
        "llama-bench results in llama-bench's own column layout.",
        ("model_type", "model_size", "model_params", "backend", "n_gpu_layers", "test", "avg_ts"),
        charts=("llamabench",), match=("model_type", "test"), metric="avg_ts"),
    ReportKind(
        "llama-bench-compare", "llama_bench_results", "llama-bench across builds",
        "llama-bench results of one model and test across builds, environments and flags.",
        ("model_type", "test", "build_commit", "backend", "n_gpu_layers", "flash_attn",
         "n_threads", "label", "avg_ts"),
        match=("model_type", "test"), metric="avg_ts"),
    ReportKind(
        "spec-decode", "spec_decode_metrics", "Speculative decoding",
        "Speculative-decoding acceptance and efficiency, with the serving run each belongs to.",
        ("label", "speculative_model", "num_speculative_tokens", "draft_acceptance_rate",
         "system_efficiency", "mean_acceptance_length", "run_output_throughput",
         "run_mean_tpot_ms"),
        match=("num_speculative_tokens",), metric="draft_acceptance_rate",
        where=("kind!=stage_times",)),
    ReportKind(
        "capacity", "server_launches", "Server capacity",
        "How each server was launched and what it could hold: KV cache, max concurrency, "
        "load time.",
        ("engine", "model", "tensor_parallel_size", "pipeline_parallel_size",
         "gpu_memory_utilization", "max_model_len", "gpu_blocks", "kv_cache_tokens",
         "max_concurrency_x", "weights_gib", "load_minutes"),
        match=("model",), metric="kv_cache_tokens"),
)}


def kind(name: str) -> ReportKind:
    try:
        return KINDS[name]
    except KeyError:
        from .query import ReportError

        raise ReportError(f"unknown report {name!r}; reports: {', '.join(KINDS)}") from None
