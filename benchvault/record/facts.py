"""The facts of the machine and of a recorded run, gathered without network and without root.

Each fact comes from one place (docs/recording.md lists them) and is skipped when that place
is absent: a machine without ``nvidia-smi`` or ``rocm-smi`` has no GPU facts, a directory
outside git no commit.  :func:`render` writes them as the facts block ``benchvault record``
appends to its capture: the sectioned layout of vLLM's ``collect_env``, with a section of its
own first, so the ``collect_env`` format reads a record's facts and a pasted report alike.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shlex
import shutil
import socket
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ..parsers.collect_env import secret
from ..parsers.runcontext import LAUNCH_COMMANDS

# Environment variables that change results, by prefix; a secret among them is never kept.
ENV_PREFIXES = ("VLLM_", "SGLANG_", "CUDA_", "NCCL_", "HF_")
ENV_NAMES = ("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")
PACKAGES = ("vllm", "sglang", "guidellm", "torch", "transformers")
TIMEOUT = 15.0      # seconds any one probe may take
RULE = "=" * 30

# The engine's version as its output prints it.
_VERSIONS = (
    ("vllm", re.compile(r"vLLM API server version (\d[\w.+-]*)")),
    ("vllm", re.compile(r"█.*\bversion (\d[\w.+-]*)")),                 # the banner (2025 on)
    ("vllm", re.compile(r"Initializing a V\d LLM engine \(v(\d[\w.+-]*)\)")),
    ("vllm", re.compile(r"\bvLLM version (\d[\w.+-]*)")),
    ("llama.cpp", re.compile(r"^(?:main: )?build: (\d+ \([0-9a-f]+\))", re.M)),
    ("sglang", re.compile(r"\bsglang(?: version|==)\s*(\d[\w.+-]*)", re.I)),
)
_CLIENTS = {"vllm": re.compile(r"\bvllm\s+bench\s+(?:latency|throughput)\b")}


@dataclass
class Facts:
    """What is known of one recorded run; a field left None was not found."""

    command: str = ""
    cwd: str = ""
    started_at: str = ""
    ended_at: str | None = None
    exit_status: int | None = None
    interrupted: bool = False
    host_name: str | None = None
    os: str | None = None
    kernel: str | None = None
    cpu_model: str | None = None
    cpu_count: int | None = None
    gpus: list[str] | None = None           # None: no GPU tool answered; []: none
    gpu_memory_mib: int | None = None
    driver_version: str | None = None
    cuda_version: str | None = None
    rocm_version: str | None = None
    engine: str | None = None
    engine_version: str | None = None
    packages: dict[str, str] = field(default_factory=dict)
    git_commit: str | None = None
    git_dirty: bool | None = None
    env: dict[str, str] = field(default_factory=dict)


def _run(argv: list[str], cwd: str | None = None) -> str | None:
    """A probe's standard output, or None when it is absent, fails or takes too long."""
    try:
        done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return done.stdout if done.returncode == 0 else None


def engine_of(argv: list[str]) -> str | None:
    """The engine a command runs: a server launch (`vllm serve`, `python -m
    sglang.launch_server`, `llama-server`) or an offline benchmark (`vllm bench latency`);
    a client of a server names none (its launch says)."""
    text = shlex.join(argv)
    for engine, pattern in (*LAUNCH_COMMANDS.items(), *_CLIENTS.items()):
        if pattern.search(text):
            return engine
    return None


def is_server(argv: list[str]) -> bool:
    text = shlex.join(argv)
    return any(pattern.search(text) for pattern in LAUNCH_COMMANDS.values())


def printed_version(text: str, engine: str | None) -> str | None:
    """The engine's version as the captured output printed it (of ``engine`` when known)."""
    for name, pattern in _VERSIONS:
        if engine not in (None, name):
            continue
        match = pattern.search(text)
        if match:
            return match.group(1)
    return None


def machine(facts: Facts) -> None:
    """The host, OS, CPU and GPUs into ``facts``."""
    facts.host_name = socket.gethostname() or None
    facts.os = _os_name()
    facts.kernel = platform.release() or None
    facts.cpu_model = _cpu_model()
    facts.cpu_count = os.cpu_count()
    _nvidia(facts) or _rocm(facts)


def _os_name() -> str | None:
    try:
        text = Path("/etc/os-release").read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    match = re.search(r'^PRETTY_NAME="?([^"\n]+)"?', text, re.M)
    name = match.group(1) if match else platform.system() or None
    return f"{name} ({platform.machine()})" if name and platform.machine() else name


def _cpu_model() -> str | None:
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    match = re.search(r"^model name\s*:\s*(.+)$", text, re.M)
    return match.group(1).strip() if match else (platform.processor() or None)


def _nvidia(facts: Facts) -> bool:
    if shutil.which("nvidia-smi") is None:
        return False
    out = _run(["nvidia-smi", "--query-gpu=name,memory.total,driver_version",
                "--format=csv,noheader"])
    if out is None:
        return False
    gpus = []
    for line in out.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if not parts or not parts[0]:
            continue
        gpus.append(parts[0])
        if len(parts) > 1 and facts.gpu_memory_mib is None:
            memory = re.match(r"(\d+)\s*MiB", parts[1])
            facts.gpu_memory_mib = int(memory.group(1)) if memory else None
        if len(parts) > 2 and facts.driver_version is None:
            facts.driver_version = parts[2] or None
    facts.gpus = gpus
    header = _run(["nvidia-smi"]) or ""
    match = re.search(r"CUDA Version:\s*([\d.]+)", header)
    facts.cuda_version = match.group(1) if match else None
    return True


def _rocm(facts: Facts) -> bool:
    if shutil.which("rocm-smi") is None:
        return False
    out = _run(["rocm-smi", "--showproductname"])
    if out is None:
        return False
    names: dict[str, str] = {}
    for gpu, key, value in re.findall(r"GPU\[(\d+)\]\s*:\s*(Card [Ss]eries|Card SKU|"
                                      r"Marketing Name)\s*:\s*(.+)", out):
        if key.lower() == "card series" or gpu not in names:
            names[gpu] = value.strip()
    facts.gpus = [names[k] for k in sorted(names, key=int)]
    driver = _run(["rocm-smi", "--showdriverversion"]) or ""
    match = re.search(r"Driver version:\s*(\S+)", driver)
    facts.driver_version = match.group(1) if match else None
    try:
        facts.rocm_version = Path("/opt/rocm/.info/version").read_text().strip() or None
    except OSError:
        pass
    return True


def command_python(argv: list[str]) -> str | None:
    """The Python a command runs in: the interpreter itself (`python -m ...`), or a console
    script's (`vllm`, `guidellm`: its `#!` line); None for any other program."""
    found = shutil.which(argv[0]) if os.sep not in argv[0] else argv[0]
    if not found:
        return None
    if re.fullmatch(r"python[\d.]*", Path(found).name):
        return found
    try:
        with open(found, "rb") as fh:
            first = fh.readline(512).decode("utf-8", "replace").strip()
    except OSError:
        return None
    if not first.startswith("#!") or "python" not in first:
        return None
    words = first[2:].split()
    if words and Path(words[0]).name == "env":
        words = [w for w in words[1:] if not w.startswith("-")]
        return shutil.which(words[0]) if words else None
    return words[0] if words else None


_VERSION_CODE = (
    "import json, importlib.metadata as m\n"
    "out = {}\n"
    "for name in %r:\n"
    "    try:\n"
    "        out[name] = m.version(name)\n"
    "    except Exception:\n"
    "        pass\n"
    "print(json.dumps(out))\n")


def package_versions(python: str | None) -> dict[str, str]:
    """vllm, sglang, guidellm, torch and transformers as that Python's importlib.metadata
    knows them (nothing is imported)."""
    if python is None:
        return {}
    out = _run([python, "-c", _VERSION_CODE % (PACKAGES,)])
    try:
        found = json.loads(out) if out else {}
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}


def git(cwd: str) -> tuple[str | None, bool | None]:
    """The working directory's commit and whether it has uncommitted changes."""
    if shutil.which("git") is None:
        return None, None
    commit = _run(["git", "rev-parse", "HEAD"], cwd=cwd)
    if not commit:
        return None, None
    status = _run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=cwd)
    return commit.strip(), (bool(status.strip()) if status is not None else None)


def environment(environ: dict[str, str] | os._Environ) -> dict[str, str]:
    """The variables that change results (ENV_PREFIXES, ENV_NAMES); no secret among them."""
    return {k: v for k, v in sorted(environ.items())
            if (k.startswith(ENV_PREFIXES) or k in ENV_NAMES) and not secret(k)}


def gather(argv: list[str], cwd: str, started_at: str) -> Facts:
    """Every fact known before the command ends (the machine, its software, git, env)."""
    facts = Facts(command=shlex.join(argv), cwd=cwd, started_at=started_at,
                  engine=engine_of(argv))
    machine(facts)
    facts.packages = package_versions(command_python(argv))
    facts.git_commit, facts.git_dirty = git(cwd)
    facts.env = environment(os.environ)
    return facts


def _line(label: str, value: object) -> str:
    return f"{label:<29}: {value}"


def render(facts: Facts) -> str:
    """The facts block (see the module), ending with a newline."""
    # Its title first: a result block cut short just before it (Ctrl-C) ends there, cut short,
    # instead of taking the rule below for its own closing rule.
    out = ["      benchvault record", RULE]
    for label, value in (
            ("Command", facts.command), ("Working directory", facts.cwd),
            ("Started (UTC)", facts.started_at), ("Ended (UTC)", facts.ended_at),
            ("Exit status", facts.exit_status),
            ("Interrupted", "Yes" if facts.interrupted else "No"),
            ("Host name", facts.host_name), ("OS", facts.os), ("Kernel", facts.kernel),
            ("CPU model", facts.cpu_model), ("CPU count", facts.cpu_count),
            ("Engine", facts.engine), ("Engine version", facts.engine_version),
            ("Git commit", facts.git_commit),
            ("Git working tree", None if facts.git_dirty is None
             else "dirty" if facts.git_dirty else "clean")):
        if value is not None and value != "":
            out.append(_line(label, value))
    out += ["", RULE, "       CUDA / GPU Info", RULE]
    if facts.gpus:
        out.append(_line("GPU models and configuration", ""))
        out += [f"GPU {i}: {name}" for i, name in enumerate(facts.gpus)]
    else:
        out.append(_line("GPU models and configuration", "none"))
    for label, value in (("GPU memory", f"{facts.gpu_memory_mib} MiB"
                          if facts.gpu_memory_mib else None),
                         ("Nvidia driver version" if facts.rocm_version is None
                          else "ROCm driver version", facts.driver_version),
                         ("CUDA version", facts.cuda_version),
                         ("ROCM Version", facts.rocm_version)):
        if value:
            out.append(_line(label, value))
    if facts.packages:
        out += ["", RULE, "Versions of relevant libraries", RULE]
        out += [f"[pip3] {name}=={version}" for name, version in sorted(facts.packages.items())]
    if facts.env:
        out += ["", RULE, "     Environment Variables", RULE]
        out += [f"{name}={' '.join(value.split())}" for name, value in facts.env.items()]
    return "\n".join(out) + "\n"
