"""Shared pieces of the contract runs: paths, logged subprocesses, the loopback-only guard."""

from __future__ import annotations

import os
import shlex
import socket
import subprocess
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORK = ROOT / ".contract"                   # git-ignored: venvs, sdists, builds, models, logs
FIXTURES = ROOT / "fixtures" / "contract"
MATRIX = Path(__file__).with_name("matrix.toml")
LOGS = WORK / "logs"
TOOLS = WORK / "tools"                      # venv with torch/transformers/tokenizers
TINY = WORK / "models" / "tiny-llama"
LOOPBACK = "127.0.0.1"
NICE = ["nice", "-n", "10"]
JOBS = "2"


class ContractError(RuntimeError):
    """A step failed; the message names its log."""


def matrix() -> dict:
    return tomllib.loads(MATRIX.read_text())


def run(cmd: list[str], log: Path, *, cwd: Path | None = None, env: dict | None = None,
        stdout: Path | None = None, check: bool = True, timeout: float | None = None) -> int:
    """Run ``cmd`` niced; stderr (and stdout unless ``stdout`` is given) appended to ``log``."""
    log.parent.mkdir(parents=True, exist_ok=True)
    full_env = {**os.environ, **(env or {})}
    with open(log, "ab") as err:
        err.write(f"\n$ {shlex.join(cmd)}\n".encode())
        err.flush()
        out = open(stdout, "wb") if stdout else err
        try:
            code = subprocess.run(NICE + cmd, cwd=cwd, env=full_env, stdout=out, stderr=err,
                                  timeout=timeout).returncode
        finally:
            if stdout:
                out.close()
    if check and code != 0:
        raise ContractError(f"{cmd[0]} exited {code}; see {log}")
    return code


def loopback_only(host: str) -> str:
    """The one host the contract runs may bind or call; anything else is refused."""
    if host != LOOPBACK:
        raise ContractError(f"refusing to use host {host!r}: contract runs bind only {LOOPBACK}")
    return host


def free_port() -> int:
    """A port free on 127.0.0.1 right now (8000/8001 may belong to other programs)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((loopback_only(LOOPBACK), 0))
        return s.getsockname()[1]


def port_taken(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        return s.connect_ex((LOOPBACK, port)) == 0


def ensure_tools() -> Path:
    """The tools venv (torch CPU from this machine's wheel, transformers, tokenizers)."""
    py = TOOLS / "bin" / "python"
    if not py.exists():
        log = LOGS / "tools.log"
        run(["python3", "-m", "venv", str(TOOLS)], log)
        run([str(py), "-m", "pip", "install", "-q", "torch==2.13.0", "transformers",
             "tokenizers", "safetensors", "numpy", "sentencepiece", "protobuf", "pyyaml",
             "mistral-common"], log)    # 2025 trees' convert_hf_to_gguf.py imports it
    return py


def ensure_tiny_model() -> Path:
    if not (TINY / "model.safetensors").exists():
        run([str(ensure_tools()), str(Path(__file__).with_name("tiny_model.py")), str(TINY)],
            LOGS / "tiny_model.log")
    return TINY


def wait_for(predicate, timeout: float, every: float = 2.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(every)
    return False
