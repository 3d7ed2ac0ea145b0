"""Server-side rows: the launch a serving run ran against, what its log said while it ran.

``server_launches`` is assembled from many lines (the ``vllm serve`` command, the version
banner, ``args: Namespace(...)``, the KV-cache capacity, load times); ``spec_decode_metrics``
and ``engine_stats`` are one row per periodic log line.  Column names follow vLLM's own
argument names (``tensor_parallel_size``, ``max_model_len``) so a launch reads like its flags.
"""

from __future__ import annotations

from typing import Any

from .models import Provenance, col


class ServerLaunch(Provenance):
    __table__ = "server_launches"
    __description__ = ("One row per inference-server launch: the command or printed arguments, "
                       "the version, KV-cache capacity and how long it took to load.")
    __foreign_keys__ = (("source_id", "sources", "id"),)

    __leading__ = ("label", "engine", "version", "model", "served_model_name", "port",
                   "tensor_parallel_size",
                   "pipeline_parallel_size", "data_parallel_size", "max_model_len",
                   "max_num_seqs", "kv_cache_tokens", "max_concurrency_x", "quantization",
                   "dtype", "kv_cache_dtype", "speculative_model", "num_speculative_tokens",
                   "gpu_memory_utilization", "load_seconds", "started_at")
    id: int | None = None
    engine: str | None = col("Serving engine: vllm, sglang or llama.cpp.", facet=True)
    version: str | None = col("Engine version the log printed (`vLLM API server version ...`).",
                              facet=True)
    model: str | None = col("Model the server loaded.", facet=True)
    served_model_name: str | None = col(
        "Name clients ask for (`--served-model-name`, the first when several; llama-server's "
        "`--alias`); null when it is the model itself.", facet=True)
    port: int | None = col(
        "Port the server listened on: `--port`, the printed arguments, `Starting vLLM API "
        "server on http://...:N`, uvicorn's `Uvicorn running on`; the engine's default (vLLM "
        "8000, SGLang 30000, llama-server 8080) when its arguments name none.")
    command: str | None = col("Launch command line as pasted (env prefix included).")
    args: dict[str, Any] | None = col(
        "Every launch argument: the command-line flags, overridden by the printed "
        "`args: Namespace(...)` / `non-default args: {...}` when the log has them.")
    args_from: str | None = col("Where `args` came from: command, namespace, non-default args "
                                "or server_args (SGLang's `server_args=ServerArgs(...)`).",
                                facet=True)
    tensor_parallel_size: int | None = col("Tensor-parallel size (`-tp`).", "GPUs", facet=True,
                                           label="TP")
    pipeline_parallel_size: int | None = col("Pipeline-parallel size (`-pp`).", "GPUs", facet=True,
                                             label="PP")
    data_parallel_size: int | None = col("Data-parallel size (`-dp`).", "replicas", facet=True,
                                         label="DP")
    gpu_memory_utilization: float | None = col("Fraction of GPU memory the server may use.",
                                                 "fraction")
    max_model_len: int | None = col("Longest sequence (prompt + output) the server accepts.",
                                    "tokens")
    max_num_seqs: int | None = col("Most sequences scheduled at once.", "sequences")
    max_num_batched_tokens: int | None = col(
        "vLLM: most tokens the scheduler takes in one step (`Chunked prefill is enabled with "
        "max_num_batched_tokens=N`, else `--max-num-batched-tokens`).", "tokens")
    chunked_prefill_size: int | None = col(
        "SGLang: most tokens of one prefill chunk (`chunked_prefill_size=` of the scheduler's "
        "start-up line, else `--chunked-prefill-size`); -1 when chunked prefill is off.",
        "tokens")
    max_prefill_tokens: int | None = col(
        "SGLang: most tokens one prefill batch takes (`max_prefill_tokens=` of the scheduler's "
        "start-up line, else `--max-prefill-tokens`).", "tokens")
    num_scheduler_steps: int | None = col("Multi-step scheduling steps (vLLM V0).", "steps")
    quantization: str | None = col("Quantization method (`--quantization`).", facet=True)
    dtype: str | None = col("Model weights/activations dtype (`--dtype`).", facet=True)
    kv_cache_dtype: str | None = col("KV-cache dtype (`--kv-cache-dtype`).", facet=True)
    enforce_eager: bool | None = col("CUDA graphs disabled (`--enforce-eager`).")
    speculative_model: str | None = col(
        "Draft model or method for speculative decoding (`--speculative-model`, or the "
        "`model`/`method` of `--speculative-config`).", facet=True)
    num_speculative_tokens: int | None = col("Speculative tokens per step the launch asked for.",
                                              "tokens")
    gpu_blocks: int | None = col(
        "KV-cache blocks on the accelerator the model runs on: `# GPU blocks: N`, `# cuda "
        "blocks: N`, Ascend's `# NPU blocks: N` (vllm-ascend; kv_device says which), V1's "
        "`num_gpu_blocks is: N`.", "blocks")
    cpu_blocks: int | None = col(
        "CPU blocks (`# CPU blocks: N`): the swap space beside an accelerator's KV cache; on "
        "vLLM's CPU backend (a lone `# CPU blocks: N`, kv_device cpu) the KV cache itself.",
        "blocks")
    kv_device: str | None = col(
        "Device the block counts were printed for, as the log names it (gpu, cuda, npu, hpu, "
        "xpu; cpu for the CPU backend).", facet=True)
    kv_cache_tokens: int | None = col("KV-cache capacity (`GPU KV cache size: N tokens`).",
                                      "tokens")
    max_concurrency_x: float | None = col(
        "Requests of max_concurrency_tokens tokens that fit in the KV cache at once "
        "(`Maximum concurrency for N tokens per request: X`).", "x", better="higher")
    max_concurrency_tokens: int | None = col("Request length the max_concurrency_x figure is for.",
                                             "tokens")
    weights_gib: float | None = col("Memory the model weights took (`Model loading took X GiB`).",
                                    "GiB")
    weights_load_s: float | None = col(
        "Time to load the weights (vLLM's `Loading weights took X seconds`, SGLang's `Load weight "
        "end. elapsed=`).", "s", better="lower")
    model_load_s: float | None = col(
        "vLLM: time load_model took, the weights and the rest (`Model loading took X GiB memory "
        "and Y seconds`).", "s", better="lower")
    engine_init_s: float | None = col(
        "Engine initialisation (profile, create KV cache, warm up) as printed.", "s",
        better="lower")
    available_kv_cache_memory_gib: float | None = col(
        "Memory given to the KV cache: vLLM V1's `Available KV cache memory: X GiB` (V0: `the "
        "rest of the memory reserved for KV Cache is X`), SGLang's `K size` + `V size` (or "
        "`KV size`) of `KV Cache is allocated`.", "GiB")
    kv_cache_k_size_gib: float | None = col("SGLang: memory of the K cache (`KV Cache is "
                                            "allocated. ... K size: X GB`).", "GiB")
    kv_cache_v_size_gib: float | None = col("SGLang: memory of the V cache (`V size: X GB`).",
                                            "GiB")
    num_gpu_blocks_override: int | None = col(
        "KV-cache blocks forced by `--num-gpu-blocks-override` (`Overriding num_gpu_blocks=N "
        "with num_gpu_blocks_override=M`).", "blocks")
    torch_compile_s: float | None = col("vLLM: torch.compile time (`torch.compile takes X s in "
                                        "total`).", "s", better="lower")
    cuda_graph_capture_s: float | None = col(
        "CUDA-graph capture time: vLLM's `Graph capturing finished in N secs`, SGLang's "
        "`Capture cuda graph end. Time elapsed: X s`.", "s", better="lower")
    cuda_graph_memory_gib: float | None = col(
        "Memory the CUDA graphs took: vLLM's `Graph capturing finished ..., took X GiB`, "
        "SGLang's `Capture cuda graph end. ... mem usage=X GB`.", "GiB")
    avail_mem_after_kv_cache_gib: float | None = col(
        "SGLang: free GPU memory once the KV pool was allocated (`Memory pool end. avail "
        "mem=X GB`).", "GiB")
    model_class: str | None = col("The model's class as the engine resolved it: vLLM's "
                                  "`Resolved architecture: X`, SGLang's `Load weight end. "
                                  "type=X`.")
    avail_mem_before_weights_gib: float | None = col(
        "SGLang: free GPU memory before the weights loaded (`Load weight begin. avail "
        "mem=X GB`).", "GiB")
    avail_mem_after_weights_gib: float | None = col(
        "SGLang: free GPU memory once the weights loaded (`Load weight end. ... avail "
        "mem=X GB`).", "GiB")
    avail_mem_before_graph_capture_gib: float | None = col(
        "SGLang: free GPU memory before the CUDA graphs were captured (`Capture cuda graph "
        "begin. ... avail mem=X GB`).", "GiB")
    avail_mem_after_graph_capture_gib: float | None = col(
        "SGLang: free GPU memory once the CUDA graphs were captured (`Capture cuda graph end. "
        "... avail mem=X GB`).", "GiB")
    available_gpu_mem_gib: float | None = col(
        "SGLang: free GPU memory when the scheduler started (`available_gpu_mem=X GB` of the "
        "`max_total_num_tokens=` line).", "GiB")
    started_at: str | None = col("First timestamp of the launch (`YYYY-MM-DD HH:MM:SS`, or "
                                 "`MM-DD HH:MM:SS` when the log printed no year).")
    ready_at: str | None = col("Last timestamp of the launch's start-up lines.")
    load_seconds: float | None = col("Start-up time: first to last timestamp of the launch.", "s",
                                     better="lower", label="Load (s)")
    extra: dict[str, Any] | None = col(
        "Start-up figures no column holds, name → {value, unit} (memory in GiB, times in s): "
        "memory profiling (memory_profiling_time, total_gpu_memory, requested_memory, "
        "non_torch_memory, torch_peak_memory, non_kv_cache_memory, free_memory_on_startup, "
        "consumed_memory, cuda_graph_memory[_estimated], kv_cache_memory_to_fit/_to_fill/"
        "_in_use), torch.compile times (dynamo_transform_time, graph_compile_time, "
        "compiled_graph_load_time, compilation_time), model_init_time, warmup_run_time, "
        "max_num_scheduled_tokens, num_gpu_blocks_computed; SGLang's "
        "free memory around other steps (avail_mem_before_distributed_init, ...).")


# The periodic log lines a server launch printed, each row linked to its launch (launch_id).
LOGGED_BY_LAUNCH = ("spec_decode_metrics", "engine_stats", "kv_transfer_metrics")


class SpecDecodeMetric(Provenance):
    __table__ = "spec_decode_metrics"
    __description__ = ("Speculative-decoding log lines (vLLM V0 `Speculative metrics:` and "
                       "`SpecDecodeWorker stage times:`, V1 `SpecDecoding metrics:`), each linked "
                       "to the run printed after it and to its launch.")
    __foreign_keys__ = (("source_id", "sources", "id"), ("launch_id", "server_launches", "id"),
                        ("run_id", "serving_runs", "id"))

    __leading__ = ("label", "logged_at", "kind", "draft_acceptance_rate",
                   "mean_acceptance_length", "accepted_tokens", "draft_tokens",
                   "num_speculative_tokens", "accepted_throughput", "draft_throughput",
                   "launch_id", "run_id")
    id: int | None = None
    launch_id: int | None = col("Server launch the line was logged by (server_launches.id).")
    run_id: int | None = col("Serving run the line reports on: the result block after it in the "
                             "same section (serving_runs.id).")
    kind: str | None = col("Which line: speculative_metrics (V0), stage_times (V0) or "
                           "spec_decoding_metrics (V1).", facet=True)
    logged_at: str | None = col("Log timestamp (`MM-DD HH:MM:SS` when the log printed no year).")
    draft_acceptance_rate: float | None = col(
        "Accepted draft tokens / draft tokens, as a fraction (V1 prints a percentage).",
        "fraction", better="higher", label="Acceptance")
    system_efficiency: float | None = col("V0: emitted tokens / the most that could be emitted.",
                                          "fraction", better="higher")
    num_speculative_tokens: int | None = col("Speculative tokens per step the engine reported.",
                                              "tokens")
    accepted_tokens: int | None = col("Accepted draft tokens (V0 cumulative, V1 per interval).",
                                      "tokens")
    draft_tokens: int | None = col("Draft tokens proposed (V0 cumulative, V1 per interval).",
                                   "tokens")
    emitted_tokens: int | None = col("V0: tokens emitted by speculative steps.", "tokens")
    mean_acceptance_length: float | None = col(
        "V1: tokens emitted per draft, bonus token included.", "tokens", better="higher")
    accepted_throughput: float | None = col("V1: accepted draft tokens per second.", "tok/s")
    draft_throughput: float | None = col("V1: drafted tokens per second.", "tok/s")
    per_position_acceptance: list[float] | None = col(
        "V1: acceptance rate at each draft position, first position first.")
    proposal_time_per_token_ms: float | None = col(
        "V0 stage times: average_time_per_proposal_tok_ms.", "ms")
    scoring_time_ms: float | None = col("V0 stage times: scoring_time_ms.", "ms")
    verification_time_ms: float | None = col("V0 stage times: verification_time_ms.", "ms")
    extra: dict[str, Any] | None = col("Printed fields no column knows, kept as-is.")


class KVTransferMetric(Provenance):
    __table__ = "kv_transfer_metrics"
    __description__ = ("A KV connector's periodic `KV Transfer metrics:` log line (vLLM V1, "
                       "prefill/decode disaggregation): how many KV-cache transfers, how long "
                       "and how fast, over the interval since the last line.")
    __foreign_keys__ = (("source_id", "sources", "id"), ("launch_id", "server_launches", "id"))

    __leading__ = ("label", "logged_at", "num_successful_transfers", "avg_xfer_time_ms",
                   "p90_xfer_time_ms", "throughput_mb_per_s", "num_failed_transfers",
                   "launch_id")
    id: int | None = None
    launch_id: int | None = col("Server launch that logged the line (server_launches.id).")
    logged_at: str | None = col("Log timestamp (`MM-DD HH:MM:SS` when the log printed no year).")
    # NixlConnector's figures (nixl/stats.py), named by their printed labels
    num_successful_transfers: int | None = col("Transfers that completed (`Num successful "
                                               "transfers`).", "transfers")
    avg_xfer_time_ms: float | None = col("Mean time of a transfer (`Avg xfer time (ms)`).",
                                         "ms", better="lower")
    p90_xfer_time_ms: float | None = col("90th percentile of a transfer's time.", "ms",
                                         better="lower")
    avg_post_time_ms: float | None = col("Mean time to post a transfer (`Avg post time (ms)`).",
                                         "ms")
    p90_post_time_ms: float | None = col("90th percentile of the time to post a transfer.", "ms")
    avg_mb_per_transfer: float | None = col("Mean size of a transfer (`Avg MB per transfer`, "
                                            "MiB).", "MB")
    throughput_mb_per_s: float | None = col("Bytes transferred over the time spent transferring "
                                            "(`Throughput (MB/s)`, MiB/s).", "MB/s",
                                            better="higher")
    avg_number_of_descriptors: float | None = col("Mean descriptors per transfer.",
                                                  "descriptors")
    num_failed_transfers: int | None = col("Transfers, handshakes and notifications that "
                                           "failed (`Num failed transfers`).", "transfers",
                                           better="lower")
    num_kv_expired_reqs: int | None = col("Requests whose KV blocks expired before the decoder "
                                          "read them (`Num KV expired reqs`).", "requests",
                                          better="lower")
    num_notifs_after_expiry: int | None = col("Notifications that came after their request's "
                                              "KV blocks expired.", "notifications")
    extra: dict[str, Any] | None = col("Figures another connector prints, by their label in "
                                       "snake_case.")


class EngineStat(Provenance):
    __table__ = "engine_stats"
    __description__ = ("An engine's periodic stats log line (vLLM's stats line, SGLang's "
                       "prefill/decode batch line): throughput, queue lengths, KV-cache usage "
                       "and prefix-cache hit rate at one moment.")
    __foreign_keys__ = (("source_id", "sources", "id"), ("launch_id", "server_launches", "id"))

    __leading__ = ("label", "logged_at", "engine_index", "running", "waiting",
                   "gpu_kv_cache_usage_pct", "generation_throughput", "prompt_throughput",
                   "prefix_cache_hit_rate_pct", "swapped", "cpu_kv_cache_usage_pct",
                   "launch_id")
    id: int | None = None
    launch_id: int | None = col("Server launch that logged the line (server_launches.id).")
    logged_at: str | None = col("Log timestamp (`MM-DD HH:MM:SS` when the log printed no year).")
    engine_index: int | None = col("V1 data-parallel engine the line is about (`Engine 000:`).")
    prompt_throughput: float | None = col("Average prompt (prefill) throughput over the "
                                          "interval.", "tok/s")
    generation_throughput: float | None = col("Average generation throughput over the interval.",
                                              "tok/s", better="higher")
    running: int | None = col("Requests running.", "requests")
    swapped: int | None = col("V0: requests swapped out to CPU.", "requests")
    waiting: int | None = col("Requests waiting (V0 prints it as `Pending`).", "requests")
    gpu_kv_cache_usage_pct: float | None = col("GPU KV-cache usage.", "%")
    cpu_kv_cache_usage_pct: float | None = col("V0: CPU KV-cache (swap) usage.", "%")
    prefix_cache_hit_rate_pct: float | None = col("GPU prefix-cache hit rate.", "%")
    cpu_prefix_cache_hit_rate_pct: float | None = col("V0: CPU prefix-cache hit rate.", "%")
    external_prefix_cache_hit_rate_pct: float | None = col(
        "V1: prefix-cache hit rate of the KV connector's external cache (`External prefix "
        "cache hit rate`).", "%")
    mm_cache_hit_rate_pct: float | None = col(
        "V1: hit rate of the multi-modal processor cache (`MM cache hit rate`).", "%")
    preemptions: int | None = col("V1: requests preempted since the last stats line "
                                  "(`Preemptions`).", "requests")
    corrupted: int | None = col("V1: requests whose logits held NaNs (`Corrupted`, printed "
                                "with VLLM_COMPUTE_NANS_IN_LOGITS).", "requests")
    # SGLang's batch lines (named as its metrics name them: sglang:num_used_tokens ...)
    num_used_tokens: int | None = col("SGLang decode batch: KV-cache tokens in use (`#token`).",
                                      "tokens")
    swa_used_tokens: int | None = col("SGLang hybrid sliding-window model: tokens in use in "
                                      "the sliding-window KV pool (`#swa token`).", "tokens")
    swa_token_usage: float | None = col("SGLang hybrid sliding-window model: share of the "
                                        "sliding-window KV pool in use (`swa token usage`, 0 to "
                                        "1).", "fraction")
    mamba_used_tokens: int | None = col("SGLang hybrid Mamba model: Mamba state slots in use "
                                        "(`mamba num`).", "slots")
    mamba_usage: float | None = col("SGLang hybrid Mamba model: share of the Mamba state pool "
                                    "in use (`mamba usage`, 0 to 1).", "fraction")
    num_pending_tokens: int | None = col("SGLang prefill batch: prompt tokens still to prefill, "
                                         "in the waiting queue and the chunk in flight "
                                         "(`#pending-token`).", "tokens")
    spec_cap_length: float | None = col("SGLang speculative decoding: mean cap on the tokens "
                                        "accepted per step (`cap len`).", "tokens")
    spec_block_accept_length: float | None = col("SGLang block speculative decoding: mean "
                                                 "tokens accepted per block (`block accept "
                                                 "len`).", "tokens")
    pending_prealloc_token_usage: float | None = col(
        "SGLang PD decode server: share of the KV pool held for requests whose KV cache is "
        "still to arrive (`pre-allocated usage`, 0 to 1).", "fraction")
    num_new_seqs: int | None = col("SGLang prefill batch: requests it prefills (`#new-seq`).",
                                   "requests")
    num_new_tokens: int | None = col("SGLang prefill batch: prompt tokens it computes "
                                     "(`#new-token`).", "tokens")
    num_cached_tokens: int | None = col("SGLang prefill batch: prompt tokens found in the "
                                        "prefix cache (`#cached-token`).", "tokens")
    spec_accept_length: float | None = col("SGLang speculative decoding: mean tokens accepted "
                                           "per step (`accept len`).", "tokens")
    spec_accept_rate: float | None = col("SGLang speculative decoding: share of draft tokens "
                                         "accepted (`accept rate`, 0 to 1).", "fraction",
                                         better="higher")
    num_retracted_reqs: int | None = col("SGLang decode batch: requests retracted for want of "
                                         "KV cache (`#retracted-req`).", "requests")
    cuda_graph: bool | None = col("SGLang batch: run by a captured CUDA graph (`cuda graph: "
                                  "True`).")
    num_prealloc_queue_reqs: int | None = col(
        "SGLang PD disaggregation: requests waiting for KV-cache memory to be allocated "
        "(`#prealloc-req`; a prefill server's `#unbootstrapped-req` in 0.4.9).", "requests")
    num_transfer_queue_reqs: int | None = col(
        "SGLang PD decode server: requests whose KV cache is being received "
        "(`#transfer-req`).", "requests")
    num_inflight_queue_reqs: int | None = col(
        "SGLang PD prefill server: requests whose KV cache is being sent (`#inflight-req`; "
        "`#transferring-req` in 0.4.9).", "requests")
    extra: dict[str, Any] | None = col("Printed fields no column knows, by their label in "
                                       "snake_case (`cuda graph` → `cuda_graph`).")
