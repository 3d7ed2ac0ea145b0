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
    context: tuple[str, ...] = ()        # shown, by default, when they differ between rows
    context_before: str = ""             # ... just before this column (else first)
    best_within: tuple[str, ...] = ()    # bold the best of each group of rows sharing these
    headers: tuple[tuple[str, str], ...] = ()   # column → header, where the schema has none
    analysis: str = ""                   # an analysis module (slo, pareto, trend) builds it


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
        "llama-bench results in llama-bench's own column layout (settings that differ between "
        "rows get a column, as llama-bench does).",
        ("model_type", "size_gib", "params_b", "backends", "n_gpu_layers", "test", "ts"),
        charts=("llamabench",), match=("model_type", "test"), metric="avg_ts",
        context=("n_threads", "n_batch", "n_ubatch", "type_k", "type_v", "flash_attn",
                 "split_mode", "env_text"), context_before="test", best_within=("test",),
        headers=(("backends", "backend"),)),
    ReportKind(
        "llama-bench-compare", "llama_bench_results", "llama-bench across builds",
        "llama-bench results of each model and test across builds, environments and flags "
        "(only what differs gets a column).",
        ("model_type", "test", "ts"),
        sort=("model_type", "test"), match=("model_type", "test"), metric="avg_ts",
        context=("build_commit", "backends", "gpu_info", "n_gpu_layers", "n_threads", "n_batch",
                 "n_ubatch", "type_k", "type_v", "flash_attn", "split_mode", "env_text"),
        context_before="ts", best_within=("model_type", "test"),
        headers=(("backends", "backend"), ("build_commit", "build"))),
    ReportKind(
        "spec-decode", "spec_decode_metrics", "Speculative decoding",
        "Speculative-decoding acceptance and efficiency, with the serving run each belongs to.",
        ("speculative_model", "num_speculative_tokens", "draft_acceptance_rate",
         "system_efficiency", "mean_acceptance_length", "run_max_concurrency",
         "run_output_throughput", "run_mean_tpot_ms"),
        match=("speculative_model", "num_speculative_tokens"), metric="draft_acceptance_rate",
        where=("kind!=stage_times",), context=("config",)),
    ReportKind(
        "capacity", "server_launches", "Server capacity",
        "How each server was launched and what it could hold: KV cache, max concurrency, "
        "load time.",
        ("engine", "model", "tensor_parallel_size", "pipeline_parallel_size",
         "gpu_memory_utilization", "max_model_len", "max_num_seqs", "gpu_blocks",
         "kv_cache_tokens", "max_concurrency_x", "weights_gib", "load_minutes"),
        match=("model",), metric="kv_cache_tokens", context=("config",)),
    ReportKind(
        "slo", "serving_runs", "Service-level objectives",
        "Each run checked against the SLOs (--slo p99_ttft_ms<=500 ...) from its stored "
        "statistics, and per series (a configuration but its load) the highest load that "
        "met every one.", (), charts=("analysis",), formats=(("max_concurrency", "c={}"),),
        analysis="slo"),
    ReportKind(
        "pareto", "serving_runs", "Throughput/latency frontier",
        "Per-user throughput (output tokens/s of one request: 1000 / mean TPOT) against "
        "throughput per GPU; the configurations no other beats on both are the frontier.",
        (), charts=("analysis",), analysis="pareto"),
    ReportKind(
        "offline", "offline_runs", "Offline sweep",
        "Offline benchmarks (vllm bench latency / throughput, SGLang bench_one_batch, "
        "bench_one_batch_server, bench_offline_throughput, llama.cpp llama-batched-bench and "
        "llama-sweep-bench): one table per model, hardware and lengths, rows by batch size, prefill and decode throughput side by side; warm-up "
        "cases left out.", ("engine", "tool", "model", "batch_size", "prefill_throughput",
                            "median_decode_throughput", "total_latency"),
        charts=("analysis",), match=("engine", "tool", "model", "batch_size", "input_len",
                                     "output_len"),
        metric="median_decode_throughput", where=("phase=benchmark",), analysis="offline"),
    ReportKind(
        "trend", "serving_runs", "Trend",
        "A metric of each configuration over builds, versions or dates, with the change from "
        "the previous point; falls worse than --threshold are flagged.", (),
        charts=("analysis",), analysis="trend"),
)}


def kind(name: str) -> ReportKind:
    try:
        return KINDS[name]
    except KeyError:
        from .query import ReportError

        raise ReportError(f"unknown report {name!r}; reports: {', '.join(KINDS)}") from None
