"""Offline benchmarks: the engine run in process (or on one static batch), no serving load.

An offline benchmark measures the engine itself at a batch size and a sequence length:
prefill and decode speed, the latency of a whole batch, or how fast a fixed set of prompts
goes through.  Its rows never mix with ``serving_runs``, whose figures (TTFT, TPOT, a
concurrency) answer another question.

Columns are named after upstream's own JSON outputs: ``vllm bench latency --output-json``
(``avg_latency``, ``latencies``, ``percentiles``), ``vllm bench throughput --output-json``
(``elapsed_time``, ``num_requests``, ``total_num_tokens``, ``requests_per_second``,
``tokens_per_second``), SGLang ``bench_one_batch``'s result JSONL (``prefill_latency``,
``prefill_throughput``, ``median_decode_latency``, ``median_decode_throughput``,
``total_latency``, ``overall_throughput``) and ``bench_offline_throughput``'s
(``total_latency``, ``request_throughput``, ``input_throughput``, ``output_throughput``,
``total_throughput``).  Latencies are in seconds, as upstream prints them.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, create_model

from .models import Provenance, Row, col

# The percentiles `vllm bench latency` prints and saves (its `percentiles` keys).
LATENCY_PERCENTILES = (10, 25, 50, 75, 90, 99)
PHASES = ("warmup", "benchmark")


class OfflineRun(Provenance):
    __table__ = "offline_runs"
    __description__ = ("One row per offline benchmark case: vLLM `vllm bench latency` / "
                       "benchmark_latency.py and `vllm bench throughput` / "
                       "benchmark_throughput.py, SGLang bench_one_batch (bench_latency), "
                       "bench_one_batch_server and bench_offline_throughput, `vllm bench "
                       "startup`, llama.cpp llama-batched-bench and llama-sweep-bench.  "
                       "Latencies in seconds.")
    __facets__ = ("engine", "tool", "model", "batch_size", "phase", "source_id")
    __foreign_keys__ = (("source_id", "sources", "id"),
                        ("config_id", "offline_configurations", "id"),
                        ("group_id", "offline_groups", "id"))
    __leading__ = ("label", "engine", "tool", "phase", "model", "batch_size", "input_len",
                   "output_len", "prefill_throughput", "median_decode_throughput",
                   "total_latency", "overall_throughput", "avg_cold_startup_time",
                   "avg_warm_startup_time", "avg_latency", "requests_per_second",
                   "tokens_per_second", "config_id", "group_id")

    id: int | None = None
    format: str | None = col("Parser that read it (sglang_one_batch, vllm_bench_latency, ...).",
                             facet=True)
    engine: str | None = col("Engine measured: vllm, sglang or another.", facet=True,
                             label="Engine")
    tool: str | None = col("Benchmark program, by its current name (benchmark_latency.py "
                           "is `vllm bench latency`, SGLang's bench_latency "
                           "`sglang.bench_one_batch`): `vllm bench latency`, "
                           "`vllm bench throughput`, "
                           "`sglang.bench_one_batch`, `sglang.bench_one_batch_server`, "
                           "`sglang.bench_offline_throughput`.", facet=True, label="Tool")
    backend: str | None = col("The program's `--backend` (vllm, hf, mii; SGLang's engine or "
                              "runtime), as upstream's JSON names it.", facet=True)
    phase: str | None = col("warmup (the case a program runs first, to warm the engine up) or "
                            "benchmark.", facet=True, label="Phase")
    base_url: str | None = col("Server the program sent its batch to (bench_one_batch_server "
                               "`--base-url`).")
    run_name: str | None = col("SGLang's `--run-name` (its result JSONL's `run_name`).",
                               facet=True)
    # what ran
    model: str | None = col("Model name or path (`--model`, `--model-path`).", facet=True,
                            label="Model")
    tokenizer: str | None = col("Tokenizer, when not the model's.")
    dtype: str | None = col("Weights dtype (`--dtype`).", facet=True, label="dtype")
    quantization: str | None = col("Quantization (`--quantization`).", facet=True,
                                   label="Quant")
    kv_cache_dtype: str | None = col("KV-cache dtype (`--kv-cache-dtype`).")
    tensor_parallel_size: int | None = col("Tensor-parallel size (`--tensor-parallel-size`, "
                                           "SGLang `--tp-size`).", "GPUs", facet=True,
                                           label="TP")
    max_model_len: int | None = col("Longest sequence the engine accepted (`--max-model-len`).",
                                    "tokens")
    # the workload
    batch_size: int | None = col("Prompts in the batch (`--batch-size`; the printed `Batch "
                                 "size` / `batch size`).", "prompts", facet=True,
                                 label="Batch")
    input_len: int | None = col("Prompt length of every prompt (`--input-len`).", "tokens",
                                facet=True, label="Input len")
    output_len: int | None = col("Tokens generated per prompt (`--output-len`).", "tokens",
                                 facet=True, label="Output len")
    n_sequences: int | None = col("Sequences generated per prompt (vLLM `--n`).", "sequences")
    use_beam_search: bool | None = col("Beam search (vLLM `--use-beam-search`).")
    num_iters: int | None = col("Timed iterations of the batch (`--num-iters`).", "iterations")
    num_iters_warmup: int | None = col("Warm-up iterations before them (`--num-iters-warmup`).",
                                       "iterations")
    dataset_name: str | None = col("Dataset of an offline throughput run (`--dataset-name`).",
                                   facet=True)
    dataset_path: str | None = col("Dataset file (`--dataset-path`, `--dataset`).")
    num_prompts: int | None = col("Prompts the program was asked to run (`--num-prompts`).",
                                  "prompts")
    # static batch: SGLang bench_one_batch (result JSONL keys)
    prefill_latency: float | None = col("Time of the prefill of the whole batch.", "s",
                                        better="lower", label="Prefill (s)")
    prefill_throughput: float | None = col("Prompt tokens of the batch over the prefill "
                                           "latency.", "tok/s", better="higher",
                                           label="Prefill tok/s")
    median_decode_latency: float | None = col("Median time of one decode step of the batch.",
                                              "s", better="lower", label="Decode (s)")
    median_decode_throughput: float | None = col("Batch size over the median decode latency: "
                                                 "tokens generated per second.", "tok/s",
                                                 better="higher", label="Decode tok/s")
    total_latency: float | None = col("Time of the whole batch (prefill and every decode step; "
                                      "bench_one_batch_server's `latency`, "
                                      "bench_offline_throughput's duration).", "s",
                                      better="lower", label="Total (s)")
    overall_throughput: float | None = col("Prompt and output tokens of the batch over the "
                                           "total latency.", "tok/s", better="higher",
                                           label="Total tok/s")
    # llama.cpp llama-batched-bench / llama-sweep-bench (their JSONL keys where no column above
    # holds the quantity: pp, tg, pl, t_pp, speed_pp, t, speed are the columns above)
    decode_latency: float | None = col("Time of every decode step of the batch (llama "
                                       "`T_TG s`, JSONL `t_tg`).", "s", better="lower",
                                       label="Decode total (s)")
    decode_throughput: float | None = col("Tokens the batch generated over decode_latency "
                                          "(llama `S_TG t/s`, JSONL `speed_tg`).", "tok/s",
                                          better="higher", label="Decode total tok/s")
    n_kv: int | None = col("KV cache cells the case used (llama-batched-bench `N_KV`: B×(PP+TG), "
                           "PP+B×TG with a shared prompt); llama-sweep-bench: the context "
                           "already in the cache when the case ran.", "tokens", label="N_KV")
    n_kv_max: int | None = col("KV cache size the program had (llama `n_kv_max`, `-c`).",
                               "tokens")
    n_batch: int | None = col("Logical batch size (llama `-b`).", "tokens")
    n_ubatch: int | None = col("Physical batch size (llama `-ub`).", "tokens")
    n_gpu_layers: int | None = col("Layers offloaded to the GPU (llama `-ngl`).", "layers")
    n_threads: int | None = col("CPU threads for generation (llama `-t`).", "threads")
    n_threads_batch: int | None = col("CPU threads for prompt processing (llama `-tb`).",
                                      "threads")
    flash_attn: int | None = col("Flash attention (llama `-fa`): 1 on, 0 off, -1 auto.")
    is_pp_shared: bool | None = col("One prompt shared by the batch's sequences (llama `-pps`).")
    is_tg_separate: bool | None = col("Generation timed per sequence (llama-batched-bench "
                                      "`is_tg_separate`, 2026 builds).")
    # vllm bench startup (--output-json keys)
    avg_cold_startup_time: float | None = col("Mean time to start an LLM with empty caches "
                                              "(`vllm bench startup`).", "s", better="lower")
    avg_cold_compilation_time: float | None = col("Mean torch.compile time of those cold "
                                                  "starts.", "s", better="lower")
    avg_cold_encoder_compilation_time: float | None = col(
        "Mean compile time of a multimodal encoder in those cold starts.", "s", better="lower")
    avg_warm_startup_time: float | None = col("Mean time to start an LLM with warm caches.",
                                              "s", better="lower")
    avg_warm_compilation_time: float | None = col("Mean torch.compile time of those warm "
                                                  "starts.", "s", better="lower")
    avg_warm_encoder_compilation_time: float | None = col(
        "Mean compile time of a multimodal encoder in those warm starts.", "s", better="lower")
    # bench_one_batch_server
    ttft: float | None = col("Time to the batch's first token (bench_one_batch_server `ttft`).",
                             "s", better="lower", label="TTFT (s)")
    input_throughput: float | None = col("Prompt tokens per second.", "tok/s", better="higher",
                                         label="Input tok/s")
    output_throughput: float | None = col("Generated tokens per second.", "tok/s",
                                          better="higher", label="Output tok/s")
    # vllm bench latency (--output-json keys)
    avg_latency: float | None = col("Mean latency of one iteration (the whole batch).", "s",
                                    better="lower", label="Avg latency (s)")
    std_latency: float | None = col("Standard deviation of the iterations' latency.", "s")
    p10_latency: float | None = col("10th percentile of the iterations' latency.", "s",
                                    better="lower")
    p25_latency: float | None = col("25th percentile of the iterations' latency.", "s",
                                    better="lower")
    p50_latency: float | None = col("Median (50th percentile) of the iterations' latency.", "s",
                                    better="lower", label="P50 latency (s)")
    p75_latency: float | None = col("75th percentile of the iterations' latency.", "s",
                                    better="lower")
    p90_latency: float | None = col("90th percentile of the iterations' latency.", "s",
                                    better="lower", label="P90 latency (s)")
    p99_latency: float | None = col("99th percentile of the iterations' latency.", "s",
                                    better="lower", label="P99 latency (s)")
    latencies: list[float] | None = col("Every timed iteration's latency (its JSON's "
                                        "`latencies`).", "s")
    # vllm bench throughput (--output-json keys), SGLang bench_offline_throughput
    elapsed_time: float | None = col("Time to run every prompt.", "s", better="lower",
                                     label="Elapsed (s)")
    num_requests: int | None = col("Prompts run (SGLang `successful_requests`).", "requests",
                                   label="Requests")
    total_num_tokens: int | None = col("Prompt plus output tokens of all requests.", "tokens")
    total_input_tokens: int | None = col("Prompt tokens of all requests.", "tokens")
    total_output_tokens: int | None = col("Generated tokens of all requests.", "tokens")
    requests_per_second: float | None = col("Requests over the elapsed time.", "req/s",
                                            better="higher", label="Req/s")
    tokens_per_second: float | None = col("Prompt plus output tokens over the elapsed time.",
                                          "tok/s", better="higher", label="Tok/s")
    output_tokens_per_second: float | None = col("Output tokens over the elapsed time (printed "
                                                 "`output tokens/s`).", "tok/s",
                                                 better="higher", label="Output tok/s")
    last_gen_throughput: float | None = col("The engine's own last generation throughput "
                                            "(SGLang `last_gen_throughput`).", "tok/s")
    command: str | None = col("Benchmark command line that produced it, as pasted.")
    extra: dict[str, Any] | None = col("Printed values and arguments no column knows, kept "
                                       "as-is.")
    sightings: int | None = col("Places the run was seen (printed, saved as JSON, pasted "
                                "again).", "sightings")
    config_id: int | None = col("Its configuration (offline_configurations.id): runs sharing "
                                "one are repeats.")
    group_id: int | None = col("Its comparable group (offline_groups.id).", facet=True)


class OfflineStep(Row):
    __table__ = "offline_steps"
    __description__ = ("Every step line an offline case printed (SGLang bench_one_batch's "
                       "`Prefill.`, `Decode N. Batch size: B` and `Total.` lines), one per row, "
                       "in order.")
    __foreign_keys__ = (("offline_id", "offline_runs", "id"),)

    id: int | None = None
    offline_id: int | None = col("The case (offline_runs.id).")
    phase: str = Field(description="warmup or benchmark: the phase of its case.",
                       json_schema_extra={"facet": True})
    kind: str = Field(description="prefill, decode (one step), decode_median or total.",
                      json_schema_extra={"facet": True})
    step: int | None = col("Decode step number as printed (`Decode 3.`); its order among the "
                           "unnumbered `Decode.` lines of older versions, from 0.", "step")
    batch_size: int | None = col("Batch size the step line printed.", "prompts")
    latency_s: float | None = col("Latency the line printed.", "s")
    throughput: float | None = col("Throughput the line printed.", "tok/s")


class OfflineGroup(Row):
    __table__ = "offline_groups"
    __description__ = ("Offline configurations that compare: one model family on one hardware "
                       "at one input and output length.  `report offline` writes one table and "
                       "one chart per group, rows by batch size.")

    id: int | None = None
    key: str = Field(description="What the group's configurations share, as JSON (unique).")
    title: str | None = col("Short name of the group (model · hardware · lengths).", facet=True)
    model_family: str | None = col("Model without organisation, quantization or chat suffix.",
                                   facet=True)
    hardware: str | None = col("Accelerator from a `gpu=` tag, the headings or the file name.",
                               facet=True)
    input_len: int | None = col("Prompt length.", "tokens")
    output_len: int | None = col("Output length.", "tokens")
    engines: str | None = col("Engines measured in the group, comma-separated.", facet=True)
    configurations: int | None = col("Configurations in the group.", "configurations")
    runs: int | None = col("Runs in the group (repeats counted).", "runs")


# Metrics a configuration summarises over its repeats.
OFFLINE_METRICS = ("prefill_latency", "prefill_throughput", "median_decode_latency",
                   "median_decode_throughput", "decode_latency", "decode_throughput",
                   "total_latency", "overall_throughput",
                   "avg_latency", "requests_per_second", "tokens_per_second",
                   "output_tokens_per_second", "avg_cold_startup_time", "avg_warm_startup_time")


class OfflineConfigurationBase(Row):
    """What defines an offline case; cases that share all of it are repeats."""

    id: int | None = None
    key: str = Field(description="The configuration's fields as JSON (unique).")
    title: str | None = col("Short name: engine · tool · model · TP · batch size.")
    group_id: int | None = col("Comparable group (offline_groups.id).", facet=True)
    engine: str | None = col("Engine measured.", facet=True, label="Engine")
    tool: str | None = col("Benchmark program.", facet=True, label="Tool")
    hardware: str | None = col("Accelerator (`gpu=` tag, headings, file name).", facet=True,
                               label="Hardware")
    model: str | None = col("Model.", facet=True, label="Model")
    model_family: str | None = col("Model without organisation, quantization or chat suffix.",
                                   facet=True)
    tensor_parallel_size: int | None = col("Tensor-parallel size.", "GPUs", label="TP")
    quantization: str | None = col("Quantization.", facet=True, label="Quant")
    dtype: str | None = col("Weights dtype.", label="dtype")
    batch_size: int | None = col("Prompts in the batch.", "prompts", facet=True, label="Batch")
    input_len: int | None = col("Prompt length.", "tokens", label="Input len")
    output_len: int | None = col("Output length.", "tokens", label="Output len")
    num_prompts: int | None = col("Prompts of an offline throughput run.", "prompts")
    n_kv: int | None = col("llama-sweep-bench's context depth, llama-batched-bench's KV cells.",
                           "tokens")
    n_ubatch: int | None = col("Physical batch size (llama `-ub`).", "tokens")
    flash_attn: int | None = col("Flash attention (llama `-fa`).")
    is_pp_shared: bool | None = col("One prompt shared by the batch (llama `-pps`).")
    tags: dict[str, str] | None = col("`--tag` pairs of the runs.")
    n: int | None = col("Runs of this configuration (repeats); empty while an ingest has yet "
                        "to count them.", "runs", label="n")
    first_run_id: int | None = col("Its first run (offline_runs.id) in reading order.")
    last_run_id: int | None = col("Its last run (offline_runs.id) in reading order.")


def _metric_fields() -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for metric in OFFLINE_METRICS:
        source = OfflineRun.model_fields[metric]
        extra = source.json_schema_extra if isinstance(source.json_schema_extra, dict) else {}
        unit = extra.get("unit")
        fields[metric] = (float | None, col(f"Mean over the configuration's runs: "
                                            f"{source.description}", unit,
                                            better=extra.get("better"), label=extra.get("label")))
        for stat, word in (("std", "Sample standard deviation (n-1)"), ("min", "Lowest"),
                           ("max", "Highest")):
            fields[f"{metric}_{stat}"] = (float | None, col(
                f"{word} over the configuration's runs of {metric}.", unit))
    return fields


OfflineConfiguration = create_model("OfflineConfiguration", __base__=OfflineConfigurationBase,
                                    __module__=__name__, **_metric_fields())
OfflineConfiguration.__doc__ = "An offline configuration with the statistics of its repeats."
OfflineConfiguration.__table__ = "offline_configurations"
OfflineConfiguration.__description__ = (
    "What defines an offline case (engine, tool, model, parallelism, dtype, batch size, "
    "lengths, tags); cases sharing it are repeats.  Metric columns hold the mean over them, "
    "with _std (n-1), _min and _max beside them.")
OfflineConfiguration.__foreign_keys__ = (("group_id", "offline_groups", "id"),)
