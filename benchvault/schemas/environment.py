"""The machine a run ran on: a pasted environment report, or the facts `benchvault record` kept.

``environments`` has one row per report (vLLM's ``collect_env.py`` / ``vllm collect-env``,
SGLang's ``python -m sglang.check_env``, PyTorch's ``torch.utils.collect_env``) and per
recorded command (the facts block ``benchvault record`` appends to its capture).  The runs of
the same file take their ``hardware`` from it (experiments/refresh.py).
"""

from __future__ import annotations

from typing import Any

from .models import Provenance, col


class Environment(Provenance):
    __table__ = "environments"
    __description__ = ("The machine and software a file's runs ran on: a pasted environment "
                       "report (vLLM collect_env, SGLang check_env, PyTorch collect_env) or the "
                       "facts `benchvault record` kept. The runs of the same file take their "
                       "hardware from it.")
    __foreign_keys__ = (("source_id", "sources", "id"),)
    __leading__ = ("report", "hardware", "gpu_name", "gpu_count", "host_name", "command",
                   "exit_status", "engine", "engine_version", "vllm_version", "sglang_version",
                   "torch_version", "driver_version", "cuda_version")

    id: int | None = None
    report: str | None = col("What printed it: record (benchvault record's facts), "
                             "vllm collect_env, sglang check_env or torch collect_env.",
                             facet=True)
    hardware: str | None = col("Accelerator named by the first GPU (`NVIDIA H100 80GB HBM3` → "
                               "H100); null when the report lists no GPU.", facet=True)
    gpu_name: str | None = col("First GPU's name as printed (nvidia-smi, rocm-smi, torch).",
                               facet=True)
    gpu_count: int | None = col("GPUs listed (0: the report says there is none).", "GPUs")
    gpus: list[str] | None = col("Every GPU as listed, in order.")
    gpu_memory_mib: int | None = col("First GPU's memory (nvidia-smi memory.total).", "MiB")
    driver_version: str | None = col("GPU driver version (Nvidia driver, ROCm driver).",
                                     facet=True)
    cuda_version: str | None = col("CUDA version: nvidia-smi's `CUDA Version`, the report's "
                                   "CUDA runtime or NVCC release.", facet=True)
    rocm_version: str | None = col("ROCm / HIP version.", facet=True)
    visible_devices: str | None = col("CUDA_VISIBLE_DEVICES or HIP_VISIBLE_DEVICES when set.")
    host_name: str | None = col("Host name (record only: reports do not print it).", facet=True)
    os: str | None = col("Operating system (`Ubuntu 22.04.4 LTS (x86_64)`).", facet=True)
    kernel: str | None = col("Kernel release (`6.8.0-45-generic`), or the Python platform "
                             "string a report prints.")
    cpu_model: str | None = col("CPU model name.", facet=True)
    cpu_count: int | None = col("Logical CPUs.", "CPUs")
    python_version: str | None = col("Python version (first word as printed).")
    engine: str | None = col("Engine the recorded command runs or talks to (vllm, sglang, "
                             "llama.cpp), from its command line.", facet=True)
    engine_version: str | None = col("Engine version as the recorded output printed it (vLLM's "
                                     "banner, llama.cpp's `build:`).", facet=True)
    vllm_version: str | None = col("vllm package version.", facet=True)
    sglang_version: str | None = col("sglang package version.", facet=True)
    guidellm_version: str | None = col("guidellm package version.", facet=True)
    torch_version: str | None = col("PyTorch version.", facet=True)
    transformers_version: str | None = col("transformers package version.", facet=True)
    packages: dict[str, str] | None = col("Every package version listed (pip, conda, "
                                          "importlib.metadata), name → version.")
    command: str | None = col("The recorded command line (record only).")
    cwd: str | None = col("Working directory the command ran in (record only).")
    started_at: str | None = col("When the recorded command started (UTC, ISO 8601).")
    ended_at: str | None = col("When it ended (UTC, ISO 8601).")
    exit_status: int | None = col("The command's exit status (130: interrupted by Ctrl-C).",
                                  facet=True)
    interrupted: bool | None = col("The record was stopped by Ctrl-C: what was printed is "
                                   "incomplete.")
    git_commit: str | None = col("Git commit of the working directory.")
    git_dirty: bool | None = col("The working directory had uncommitted changes.")
    env: dict[str, str] | None = col(
        "Environment variables that change results (VLLM_*, SGLANG_*, CUDA_*, NCCL_*, HF_* ... "
        "as listed); a name holding TOKEN, KEY, SECRET, PASSWORD or CREDENTIAL is never stored.")
    extra: dict[str, Any] | None = col("Other labelled lines of the report, label → value.")
