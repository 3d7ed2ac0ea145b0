"""llama.cpp ``llama-bench`` results: one row per test (``pp512``, ``tg128``, ...).

Columns are named after llama-bench's own ``-o json`` fields (``tools/llama-bench/llama-bench.cpp``,
``test::get_fields``), so a markdown table and a ``-o json|jsonl|csv|sql`` file give the same
rows.  Fields an old or new build prints that no column knows are kept in ``extra``.
"""

from __future__ import annotations

from typing import Any

from .models import Provenance, col


class LlamaBenchResult(Provenance):
    __table__ = "llama_bench_results"
    __description__ = ("One row per llama.cpp llama-bench test (a markdown table row, or a record "
                       "of its -o json / jsonl / csv / sql output).")

    __facets__ = ("model_type", "backends", "test", "source_id")
    __foreign_keys__ = (("source_id", "sources", "id"),)

    __leading__ = ("label", "model_type", "model_size", "model_n_params", "backends",
                   "n_gpu_layers", "n_threads", "test", "avg_ts", "stddev_ts", "gpu_info",
                   "cpu_info", "build_commit", "build_number")
    id: int | None = None
    format: str | None = col("Parser that read it: llama_bench (markdown table) or "
                             "llama_bench_output (json / jsonl / csv / sql).", facet=True)
    # build and machine
    build_commit: str | None = col("llama.cpp commit llama-bench was built from.", facet=True)
    build_number: int | None = col("llama.cpp build number.", facet=True)
    cpu_info: str | None = col("CPU description(s) llama-bench reported.", facet=True,
                               label="CPU")
    gpu_info: str | None = col("GPU names, joined with ', ' as llama-bench does (from its JSON, "
                               "or from the `Device N:` / `ggml_vulkan: N =` lines).", facet=True,
                               label="GPU")
    gpu_count: int | None = col("GPUs listed in gpu_info / the device lines.", "GPUs", facet=True)
    gpu_arch: str | None = col("Compute capability (CUDA, `9.0`) or architecture (ROCm "
                               "`gfx1151`) of the first GPU, from the device lines.", facet=True)
    backends: str | None = col("ggml backends (`CUDA`, `ROCm`, `Vulkan`, `Metal,BLAS`, "
                               "`RPC,Vulkan`, `CPU`); the markdown `backend` column.", facet=True)
    # model
    model_filename: str | None = col("Model file (`-m`).", facet=True)
    model_type: str | None = col("Model description (`llama 7B Q4_0`); the markdown `model` "
                                 "column.", facet=True, label="Model")
    model_arch: str | None = col("Architecture, the first word of model_type (`llama`, "
                                 "`qwen35moe`).", facet=True)
    model_size_label: str | None = col("Size class llama.cpp names the model by, the second word "
                                       "of model_type (`7B`, `?B` unknown, `35B.A3B` MoE).",
                                       facet=True)
    model_ftype: str | None = col("Quantization (file type) from model_type (`Q4_0`, `Q4_K - "
                                  "Medium`), without 2023's `mostly `/`all ` prefix or a "
                                  "`(guessed)` mark, so builds compare.", facet=True,
                                  label="Quant")
    model_size: int | None = col("Model size (the markdown `3.56 GiB`, converted).", "bytes")
    model_n_params: int | None = col("Model parameters (the markdown `6.74 B`, converted).",
                                     "parameters")
    # test parameters
    n_batch: int | None = col("Logical batch size (`-b`).", "tokens", facet=True,
                              label="n_batch")
    n_ubatch: int | None = col("Physical batch size (`-ub`).", "tokens", facet=True,
                               label="n_ubatch")
    n_threads: int | None = col("CPU threads (`-t`).", "threads", facet=True,
                                label="threads")
    cpu_mask: str | None = col("CPU affinity mask (`-C`).")
    cpu_strict: bool | None = col("Strict CPU placement (`--cpu-strict`).")
    poll: int | None = col("Polling level (`--poll`).", "%")
    type_k: str | None = col("K cache type (`-ctk`).", facet=True, label="type_k")
    type_v: str | None = col("V cache type (`-ctv`).", facet=True, label="type_v")
    n_gpu_layers: int | None = col("Layers offloaded to the GPU (`-ngl`).", "layers", facet=True,
                                   label="ngl")
    n_cpu_moe: int | None = col("MoE expert layers kept on the CPU (`-ncmoe`).", "layers")
    split_mode: str | None = col("Multi-GPU split mode (`-sm`: none, layer, row).", facet=True)
    main_gpu: int | None = col("Main GPU (`-mg`).")
    no_kv_offload: bool | None = col("KV cache kept off the GPU (`-nkvo`).")
    flash_attn: int | None = col("Flash attention (`-fa`): 1 on, 0 off, -1 auto.", facet=True,
                                 label="fa")
    devices: str | None = col("Devices used (`-dev`), `/`-separated.")
    tensor_split: str | None = col("Tensor split between GPUs (`-ts`), `/`-separated.")
    tensor_buft_overrides: str | None = col("Tensor buffer-type overrides (`-ot`).")
    use_mmap: bool | None = col("Model memory-mapped (`-mmp`; older builds).")
    use_direct_io: bool | None = col("Model read with direct I/O (`-dio`; the markdown `dio`).")
    load_mode: str | None = col("How the model was loaded (`-lm`, markdown `lm`; 2026 builds: "
                                "auto, none, mmap, mlock, mmap+mlock, dio).")
    lazy_mode: str | None = col("Lazy loading (`lazy_mode`: on, auto, off; 2026 builds).")
    embeddings: bool | None = col("Embeddings mode (`-embd`).")
    no_op_offload: int | None = col("Op offload disabled (`-nopo`).")
    no_host: bool | None = col("Host buffer disabled (`--no-host`).")
    repack: bool | None = col("Weights repacked for the CPU (`repack`, markdown `rpk`).")
    fit_target: int | None = col("`-fitt` margin to leave free per device when fitting the model "
                                 "to device memory (markdown `fitt`).", "MiB")
    fit_min_ctx: int | None = col("`-fitc` smallest context fitting may choose (markdown "
                                  "`fitc`).", "tokens")
    n_prompt: int | None = col("Prompt tokens processed (`pp512` → 512).", "tokens", facet=True)
    n_gen: int | None = col("Tokens generated (`tg128` → 128).", "tokens", facet=True)
    n_depth: int | None = col("Context depth before the test (`@ d4096` → 4096).", "tokens",
                              facet=True)
    test: str | None = col("Test as llama-bench names it: pp512, tg128, pp512+tg128, "
                           "pp512 @ d4096.", facet=True, label="Test")
    test_time: str | None = col("When the test ran (RFC 3339, from structured output).")
    avg_ns: int | None = col("Mean time per repetition.", "ns", better="lower")
    stddev_ns: int | None = col("Standard deviation of the time per repetition.", "ns")
    avg_ts: float | None = col("Mean tokens per second over the repetitions (the `t/s` mean).",
                               "tok/s", better="higher", label="t/s")
    stddev_ts: float | None = col("Standard deviation of tokens per second (after `±`).",
                                  "tok/s", label="± t/s")
    samples_ns: list[int] | None = col("Time of every repetition (structured output).", "ns")
    samples_ts: list[float] | None = col("Tokens per second of every repetition.", "tok/s")
    # run context
    command: str | None = col("llama-bench command line that produced the row, as pasted.")
    env: dict[str, str] | None = col("Environment variables set on the command line "
                                     "(`ROCBLAS_USE_HIPBLASLT=1 llama-bench ...`).")
    extra: dict[str, Any] | None = col("Columns or fields no column knows (newer/older builds, "
                                       "forks), kept with their values.")
