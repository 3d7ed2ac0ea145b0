"""An environment report → ``environments``: the GPUs, driver, CUDA/ROCm, PyTorch, engine
versions, CPU and environment variables a run's machine had.

Upstream printers, by label (``pretty_str`` of each, across versions):

- vLLM ``collect_env.py`` / ``vllm collect-env`` up to mid-2025: PyTorch's layout, `Label:
  value` lines (`GPU models and configuration: GPU 0: NVIDIA A100-SXM4-40GB`, or the label
  alone and one `GPU N: name` line per GPU after it; `Nvidia driver version: ...`, `CUDA
  runtime version: ...`, `CPU:` then lscpu's lines, `Versions of relevant libraries:` then
  `[pip3] name==version` / `[conda] name version ...`, `ROCM Version: ...`, `vLLM Version:
  ...`, `vLLM Build Flags:`, `GPU Topology:`, then `NAME=value` environment variables).
- vLLM from mid-2025: the same values in sections (a title between two rules of `=`: System
  Info, PyTorch Info, Python Environment, CUDA / GPU Info, Intel XPU / GPU Info, CPU Info,
  Versions of relevant libraries, vLLM Info, Environment Variables), labels padded to a
  column (`Nvidia driver version        : 575.51.03`).
- PyTorch ``torch.utils.collect_env``: the older layout without the vLLM lines.
- SGLang ``python -m sglang.check_env``: `Python: ...`, `CUDA available: True`, `GPU 0,1:
  NVIDIA H100 80GB HBM3` (GPUs of one name grouped), `GPU 0,1 Compute Capability: 9.0`,
  `CUDA_HOME`, `NVCC: Cuda compilation tools, release 12.4, V12.4.131`, `CUDA Driver
  Version: ...` (ROCm: `ROCM available`, `HIPCC`, `ROCM Driver Version`), `PyTorch: ...`, then
  `package: version` per package (`Module Not Found` when absent), `NVIDIA Topology:`,
  `Hypervisor vendor`, `ulimit soft`.
- ``benchvault record``'s facts block: a section titled `benchvault record` in the sectioned
  layout (command, working directory, times, exit status, host, git), then the sections above.

Values a report prints for nothing (`Could not collect`, `N/A`, `No CUDA`, `Module Not
Found`) are none.  An environment variable whose name holds TOKEN, KEY, SECRET, PASSWORD or
CREDENTIAL is never stored, nor its line in ``raw_text``.
"""

from __future__ import annotations

import re
from typing import Any

from lark import Transformer, v_args

from ..experiments.configs import hardware_in
from ..schemas.environment import Environment
from . import grammar
from .base import Block, BlockFormat, Parsed

START = re.compile(
    r"^\s*(?:Collecting environment information\.\.\.\s*$"
    r"|PyTorch version: \S"
    r"|System Info\s*$"
    r"|Python: \d+\.\d+\.\d+\S* \("
    r"|benchvault record\s*$)")
SECRET = re.compile(r"TOKEN|KEY|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.I)
NOTHING = {"", "could not collect", "n/a", "na", "none", "no cuda", "no xpu",
           "module not found", "not available", "not set"}
_OWN = re.compile(
    r"^\s*$"                                   # blank
    r"|^\s*={5,}\s*$"                          # a rule
    r"|^[ \t]+\S"                               # indented: a title, lscpu, topology, legend
    r"|^\s*[^\s:\[=$#][^:]{0,80}?:(?:\s|$)"    # Label: value
    r"|^\s*\[(?:pip3?|conda|uv)\] "            # a package
    r"|^[A-Za-z_][A-Za-z0-9_]*=\S*"            # NAME=value
    r"|^/\S+$"                                 # a cuDNN library path
    r"|^(?:GPU|NIC|mlx)\S*\s"                  # a topology row
    r"|^(?:Versions of relevant libraries|uv is set|--Compile time--|--Runtime--)\s*$"
    r"|^Collecting environment information")
# A prompt, a heading, a quote, a fence: never the report's.
_FOREIGN = re.compile(r"^\s*(?:\$ |# |#{2,}|> |```|~~~)")
_GPU_LABEL = re.compile(r"^GPU ([\d, ]+)$")
_GPU_LINE = re.compile(r"^GPU (\d+): (.+?)(?: \(UUID: [^)]*\))?$")
_PIP = re.compile(r"^\[(?:pip3?|uv)\]\s+([A-Za-z0-9_.\-]+)\s*==\s*(\S+)")
_CONDA = re.compile(r"^\[conda\]\s+([A-Za-z0-9_.\-]+)\s+(\d\S*)")
_NVCC = re.compile(r"release [\d.]+, V(\d[\d.]*)")
_HIP = re.compile(r"HIP version: (\S+)")
PACKAGES = {"vllm": "vllm_version", "sglang": "sglang_version", "guidellm": "guidellm_version",
            "torch": "torch_version", "transformers": "transformers_version"}


@v_args(inline=True)
class LinesToItems(Transformer):
    """Tree → (kind, text, line) tuples, in order."""

    def start(self, *items):
        return [i for i in items if isinstance(i, tuple)]

    def _item(kind):  # noqa: N805 - a rule's method, made per kind
        def method(self, token):
            return (kind, str(token), token.line)
        return method

    rule = _item("rule")
    package = _item("package")
    envvar = _item("envvar")
    pair = _item("pair")
    other = _item("other")
    del _item


def parse_lines(text: str) -> list[tuple[str, str, int]]:
    parser = grammar.in_parser("collect_env.lark", __file__, LinesToItems)
    return grammar.parse(parser, text + "\n", "environment report")


_ENV_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")


def secret(name: str) -> bool:
    """Does an environment variable's name say it holds a secret?"""
    return SECRET.search(name) is not None


def secret_label(label: str) -> bool:
    """A labelled line that is an environment variable holding a secret (`HF_TOKEN: ...`);
    a package's name (`tiktoken: 0.11.0`) is not one."""
    return _ENV_NAME.match(label) is not None and secret(label)


def value_of(text: str | None) -> str | None:
    """A printed value, none when it says there is nothing."""
    if text is None:
        return None
    text = text.strip()
    return None if text.lower() in NOTHING else text


def _label(text: str) -> tuple[str, str]:
    label, _, value = text.partition(":")
    return " ".join(label.split()), value.strip()


def _int(text: str | None) -> int | None:
    match = re.match(r"\s*(\d+)", text or "")
    return int(match.group(1)) if match else None


class Reading:
    """What the report's lines say, assembled label by label."""

    def __init__(self) -> None:
        self.row: dict[str, Any] = {}
        self.gpus: list[str] = []
        self.gpu_none = False
        self.packages: dict[str, str] = {}
        self.env: dict[str, str] = {}
        self.extra: dict[str, str] = {}
        self.report: str | None = None
        self.labels: list[str] = []

    def set(self, column: str, value: str | int | bool | None) -> None:
        if value is not None and self.row.get(column) is None:
            self.row[column] = value

    def add_gpu(self, name: str) -> None:
        name = re.sub(r" \(UUID: [^)]*\)$", "", name.strip())
        if value_of(name) is not None:
            self.gpus.append(name)

    def line(self, kind: str, text: str) -> None:
        stripped = text.strip()
        if kind == "package":
            match = _PIP.match(stripped) or _CONDA.match(stripped)
            if match:
                self.packages.setdefault(match.group(1).lower().replace("_", "-"),
                                         match.group(2))
        elif kind == "envvar":
            name, _, value = stripped.partition("=")
            if not secret(name):
                self.env.setdefault(name, value)
        elif kind == "other":
            if stripped.lower() == "benchvault record":
                self.report = "record"
            elif stripped.lower() == "vllm info":
                self.report = self.report or "vllm collect_env"
        elif kind == "pair":
            label, value = _label(text)
            self.labels.append(label)
            self.pair(label, value)

    def pair(self, label: str, value: str) -> None:
        key = label.lower()
        if secret_label(label):
            return
        if key == "gpu models and configuration":
            # Its value, or one `GPU N: name` line per GPU after it (the grouped label below).
            shown = value_of(value)
            if shown is None:
                self.gpu_none = self.gpu_none or value.strip().lower() in ("no cuda", "none")
            else:
                gpu = _GPU_LINE.match(shown)
                self.add_gpu(gpu.group(2) if gpu else shown)
            return
        grouped = _GPU_LABEL.match(label)
        if grouped:                       # SGLang: `GPU 0,1,2,3: NVIDIA H100 80GB HBM3`
            ids = [i for i in re.split(r"[,\s]+", grouped.group(1)) if i]
            for _ in ids:
                self.add_gpu(value)
            return
        shown = value_of(value)
        column = LABELS.get(key)
        if column == "python_version":
            self.set(column, shown.split()[0] if shown else None)
        elif column in ("cpu_count", "exit_status", "gpu_memory_mib"):
            self.set(column, _int(shown))
        elif column in ("git_dirty", "interrupted"):
            if shown is not None:
                self.set(column, shown.lower() in ("yes", "true", "dirty"))
        elif column == "cuda_version" and key == "nvcc":
            match = _NVCC.search(value)
            self.set(column, match.group(1) if match else None)
        elif column == "rocm_version" and key == "hipcc":
            match = _HIP.search(value)
            self.set(column, match.group(1) if match else None)
        elif column == "version_word":
            self.set("vllm_version", shown.split()[0] if shown else None)
        elif column is not None:
            self.set(column, shown)
        elif key in PACKAGES or key in SGLANG_PACKAGES:
            if shown is not None:
                self.packages.setdefault(key.replace("_", "-"), shown)
        elif key == "cuda available" or key == "rocm available":
            self.report = self.report or "sglang check_env"
        elif shown is not None and key not in ("flags", "bogomips") and len(self.extra) < 200:
            self.extra.setdefault(label, shown)

    def build(self) -> dict[str, Any]:
        row = dict(self.row)
        if self.gpus:
            row["gpus"] = self.gpus
            row["gpu_name"] = self.gpus[0]
            row["gpu_count"] = len(self.gpus)
            row["hardware"] = hardware_in([self.gpus[0]])
        elif self.gpu_none:
            row["gpu_count"] = 0
        for name, column in PACKAGES.items():
            if row.get(column) is None and self.packages.get(name):
                row[column] = self.packages[name]
        for name, column in PACKAGES.items():
            if row.get(column) is not None:
                self.packages.setdefault(name, row[column])
        if "rocm_version" not in row and row.get("hip_compiled"):
            row["rocm_version"] = row["hip_compiled"]
        row.pop("hip_compiled", None)
        visible = self.env.get("CUDA_VISIBLE_DEVICES") or self.env.get("HIP_VISIBLE_DEVICES")
        if visible:
            row["visible_devices"] = visible
        row["packages"] = dict(sorted(self.packages.items())) or None
        row["env"] = dict(sorted(self.env.items())) or None
        row["extra"] = self.extra or None
        row["report"] = self.report or ("sglang check_env" if "Python" in self.labels[:1]
                                        else "vllm collect_env" if row.get("vllm_version")
                                        or "vLLM Version" in self.labels
                                        else "torch collect_env")
        return row


# Label (as printed, lower case, spaces collapsed) → column.
LABELS = {
    # record's own section
    "command": "command", "working directory": "cwd", "started (utc)": "started_at",
    "ended (utc)": "ended_at", "exit status": "exit_status", "interrupted": "interrupted",
    "host name": "host_name", "kernel": "kernel", "cpu model": "cpu_model",
    "cpu count": "cpu_count", "gpu memory": "gpu_memory_mib", "cuda version": "cuda_version",
    "git commit": "git_commit", "git working tree": "git_dirty", "engine": "engine",
    "engine version": "engine_version",
    # vLLM / PyTorch collect_env
    "os": "os", "python version": "python_version", "python platform": "kernel",
    "pytorch version": "torch_version", "cuda runtime version": "cuda_version",
    "nvidia driver version": "driver_version", "rocm version": "rocm_version",
    "hip runtime version": "rocm_version", "rocm used to build pytorch": "hip_compiled",
    "vllm version": "version_word", "model name": "cpu_model", "cpu(s)": "cpu_count",
    # SGLang check_env
    "python": "python_version", "pytorch": "torch_version", "nvcc": "cuda_version",
    "hipcc": "rocm_version", "cuda driver version": "driver_version",
    "cuda driver versions": "driver_version", "rocm driver version": "driver_version",
}
# The packages SGLang's check_env lists (PACKAGE_LIST, across versions): kept in `packages`.
SGLANG_PACKAGES = frozenset({
    "sgl_kernel", "flashinfer", "flashinfer_python", "flashinfer_cubin", "flashinfer_jit_cache",
    "triton", "torchao", "numpy", "aiohttp", "fastapi", "hf_transfer", "huggingface_hub",
    "interegular", "modelscope", "orjson", "outlines", "packaging", "psutil", "pydantic",
    "multipart", "python-multipart", "zmq", "pyzmq", "uvicorn", "uvloop", "xgrammar", "openai",
    "tiktoken", "anthropic", "litellm", "decord", "decord2", "requests", "tqdm", "pil",
    "pillow", "rpyc"})


def _redacted(lines: list[str]) -> str:
    out = []
    for line in lines:
        name, equals, _ = line.strip().partition("=")
        label = line.partition(":")[0].strip()
        if equals and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) and secret(name):
            line = f"{name}=<not stored>"
        elif ":" in line and secret_label(label):
            line = f"{label}: <not stored>"
        out.append(line)
    return "\n".join(out)


def build(block: Block) -> list[Parsed]:
    lines = list(block.lines)
    while lines and not lines[-1].strip():
        lines.pop()
    reading = Reading()
    for kind, text, _ in parse_lines("\n".join(lines)):
        reading.line(kind, text)
    if not reading.labels:
        return []           # the first line alone (a warning printed after it cut it)
    row = reading.build()
    context = block.context
    row.update(section=context.section_text, label=context.label_or_heading,
               tags=context.tags or None, line_start=block.line_start,
               line_end=block.line_start + max(len(lines) - 1, 0), raw_text=_redacted(lines))
    return [Parsed(row=Environment(**{k: v for k, v in row.items() if v is not None}))]


def continues(line: str) -> bool:
    return _FOREIGN.match(line) is None and _OWN.match(line) is not None


FORMAT = BlockFormat(
    name="collect_env",
    table="environments",
    description="An environment report: vLLM's collect_env.py / `vllm collect-env` (the "
                "older `Label: value` layout and the sectioned one), SGLang's `python -m "
                "sglang.check_env`, PyTorch's `torch.utils.collect_env`, and the facts block "
                "`benchvault record` appends to its capture. GPUs, driver, CUDA/ROCm, PyTorch "
                "and engine versions, CPU, environment variables (secrets never stored); the "
                "runs of the same file take their hardware from it.",
    upstream=("vllm collect_env.py 2023 – 2025 (`Label: value`)",
              "vllm vllm/collect_env.py, `vllm collect-env` 2025 – (sectioned)",
              "sglang python/sglang/check_env.py 2024 –",
              "pytorch torch/utils/collect_env.py"),
    markers=("Collecting environment information", "PyTorch version:", "System Info",
             "Python: ", "benchvault record"),
    start=START,
    end=None,
    max_lines=600,
    build=build,
    continues=continues,
    # `Collecting environment information...` then `PyTorch version: ...`: one report.
    restarts=False,
)
