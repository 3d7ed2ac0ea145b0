"""`benchvault record -- COMMAND`: stand-in commands that print real captures (the contract's
`vllm bench serve` and `vllm serve` output, tests/standins/standin.py) and a stand-in
`nvidia-smi` for a machine with two H100s, put on PATH.  No GPU is needed.

The values asserted come from the captures: c2.txt is a `vllm bench serve` run of 8 requests
at concurrency 2 against the server on port 53045 serving `tiny-llama-cc9952da`
(server.log, vLLM 0.32.0).
"""

from __future__ import annotations

import json
import os
import select
import shlex
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, rows

ROOT = Path(__file__).resolve().parent.parent
STANDINS = Path(__file__).resolve().parent / "standins"
VERSION = FIXTURES / "contract" / "vllm-0.32.0"
SERVER_LOG = VERSION / "server.log"
CLIENT_LOG = VERSION / "c2.txt"
WAIT = 60       # seconds a step may take on a loaded machine before the test gives up


def _command_of(capture: Path) -> list[str]:
    """The command line a contract capture starts with (`$ ...`), its port filled in."""
    first = capture.read_text(encoding="utf-8").splitlines()[0]
    return shlex.split(first[2:].replace(":PORT", ":53045"))


def _program(bin_dir: Path, name: str, script: Path) -> None:
    path = bin_dir / name
    path.write_text(f"#!{sys.executable}\nimport runpy, sys\nsys.argv[0] = {name!r}\n"
                    f"runpy.run_path({str(script)!r}, run_name='__main__')\n")
    path.chmod(0o755)


@pytest.fixture
def machine(tmp_path):
    """A PATH with the stand-in `vllm` (and `nvidia-smi` when gpu=True) first."""

    def make(gpu: bool = True) -> dict[str, str]:
        bin_dir = tmp_path / ("bin-gpu" if gpu else "bin")
        bin_dir.mkdir(exist_ok=True)
        _program(bin_dir, "vllm", STANDINS / "standin.py")
        if gpu:
            _program(bin_dir, "nvidia-smi", STANDINS / "nvidia_smi.py")
        # Only the system's own directories after it: no real nvidia-smi or rocm-smi.
        path = os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent), "/usr/bin",
                                "/bin"])
        env = {k: v for k, v in os.environ.items() if not k.startswith(("STANDIN_", "HF_",
                                                                         "VLLM_"))}
        env.update(PATH=path, PYTHONPATH=str(ROOT), COLUMNS="100")
        return env

    return make


def _record(tmp_path: Path, env: dict[str, str], argv: list[str], **standin
            ) -> tuple[list[str], dict[str, str]]:
    """`benchvault record -- argv`, and its environment with the stand-in's settings."""
    return ([sys.executable, "-m", "benchvault", "record", "--db", str(tmp_path / "w.db"),
             "--out", str(tmp_path / "records"), "--", *argv],
            {**env, **{f"STANDIN_{k.upper()}": str(v) for k, v in standin.items()}})


def _read_line(stream, deadline: float = WAIT) -> bytes:
    """One line of a child's output, or fail when none comes (the output is held back)."""
    ready, _, _ = select.select([stream], [], [], deadline)
    assert ready, "no output from the recorded command while it runs"
    return stream.readline()


def _captures(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "records").glob("*.log"))


def test_a_client_run_is_shown_live_kept_and_stored_with_its_machine(tmp_path, machine):
    env = machine()
    go = tmp_path / "go"
    argv = _command_of(CLIENT_LOG)
    command, env = _record(tmp_path, env, argv, capture=CLIENT_LOG, after=3, go=go)
    child = subprocess.Popen(command, env=env, cwd=tmp_path, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    try:
        # The command waits before its 4th line until `go` exists: its first line is on the
        # terminal, and in the capture, while it runs.
        first = _read_line(child.stdout)
        assert first.startswith(b"Namespace(subparser='bench'")
        assert child.poll() is None
        (capture,) = _captures(tmp_path)
        assert capture.name.endswith("-vllm-bench-serve.log")
        assert capture.read_bytes().splitlines()[1] == first.rstrip(b"\n")
        go.touch()
        out, err = child.communicate(timeout=WAIT)
    finally:
        child.kill()
    assert child.returncode == 0, err
    assert out.count(b"Serving Benchmark Result") == 1       # shown once, unchanged
    assert capture.read_bytes().startswith(f"$ {shlex.join(argv)}\n".encode())
    db = tmp_path / "w.db"
    (run,) = rows(db, "SELECT r.completed, r.max_concurrency, r.output_throughput, "
                      "c.hardware FROM serving_runs r JOIN configurations c ON c.id = r.config_id")
    assert run == {"completed": 8, "max_concurrency": 2, "output_throughput": 65.70,
                   "hardware": "H100"}
    (facts,) = rows(db, "SELECT e.* FROM environments e JOIN sources s ON s.id = e.source_id "
                        "WHERE s.name = ?", [capture.name])
    assert facts["report"] == "record"
    assert facts["host_name"] == socket.gethostname()
    assert (facts["gpu_name"], facts["gpu_count"], facts["gpu_memory_mib"]) == \
        ("NVIDIA H100 80GB HBM3", 2, 81559)
    assert (facts["driver_version"], facts["cuda_version"]) == ("550.54.15", "12.4")
    assert facts["command"] == shlex.join(argv)
    assert facts["cwd"] == str(tmp_path)
    assert (facts["exit_status"], facts["interrupted"]) == (0, 0)
    assert facts["started_at"] <= facts["ended_at"]


def test_the_exit_status_is_the_commands(tmp_path, machine):
    env = machine()
    command, env = _record(tmp_path, env, _command_of(CLIENT_LOG), capture=CLIENT_LOG, exit=3)
    done = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, timeout=WAIT)
    assert done.returncode == 3, done.stderr
    # What it printed is stored all the same, with the status among its facts.
    assert rows(tmp_path / "w.db", "SELECT exit_status FROM environments") == \
        [{"exit_status": 3}]
    assert rows(tmp_path / "w.db", "SELECT completed FROM serving_runs") == [{"completed": 8}]


def test_a_command_that_cannot_start_is_one_line_and_127(tmp_path, machine):
    env = machine()
    command, env = _record(tmp_path, env, ["no-such-benchmark-tool", "--x"])
    done = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, timeout=WAIT)
    assert done.returncode == 127
    assert done.stdout == b""
    lines = done.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and "no-such-benchmark-tool: command not found" in lines[0]
    assert "Traceback" not in done.stderr.decode()
    assert _captures(tmp_path) == []


def test_ctrl_c_ends_the_command_keeps_the_capture_and_stores_it(tmp_path, machine):
    env = machine()
    go = tmp_path / "go"        # never made: the command waits inside its result block
    command, env = _record(tmp_path, env, _command_of(CLIENT_LOG), capture=CLIENT_LOG,
                           after=16, go=go)
    child = subprocess.Popen(command, env=env, cwd=tmp_path, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    try:
        while b"Benchmark duration" not in _read_line(child.stdout):
            pass
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=WAIT)
    finally:
        child.kill()
    assert child.returncode == 130, err
    assert "Traceback" not in err.decode()
    (capture,) = _captures(tmp_path)
    text = capture.read_text(encoding="utf-8")
    assert "Shutting down after Ctrl-C" in text            # the command got the Ctrl-C
    # The partial capture, kept: the result block up to `Benchmark duration`, no further.
    assert "Benchmark duration (s):                  1.95" in text
    assert "Total input tokens" not in text
    assert rows(tmp_path / "w.db", "SELECT exit_status, interrupted FROM environments") == \
        [{"exit_status": 130, "interrupted": 1}]
    # ...and stored: what the block printed, marked incomplete.
    (run,) = rows(tmp_path / "w.db", "SELECT completed, duration, output_throughput, extra "
                                     "FROM serving_runs")
    assert (run["completed"], run["duration"], run["output_throughput"]) == (8, 1.95, None)
    assert json.loads(run["extra"]) == {"incomplete": True}


def _stored_launches(db: Path) -> list[dict]:
    if not db.exists():
        return []
    try:
        return rows(db, "SELECT id, port, version FROM server_launches")
    except sqlite3.OperationalError:      # the warehouse is still being made
        return []


def test_a_recorded_client_links_to_the_recorded_server(tmp_path, machine):
    env = machine()
    db = tmp_path / "w.db"
    command, server_env = _record(tmp_path, env, _command_of(SERVER_LOG), capture=SERVER_LOG,
                                  sleep=0.001, hold=1)
    shown = tmp_path / "server-terminal.txt"
    with open(shown, "wb") as terminal:
        server = subprocess.Popen(command, env=server_env, cwd=tmp_path, stdout=terminal,
                                  stderr=subprocess.PIPE)
    try:
        # Its launch is stored while it runs (followed as `ingest --watch` follows a file).
        launches = []
        for _ in range(WAIT * 10):
            assert server.poll() is None
            launches = _stored_launches(db)
            if launches:
                break
            select.select([], [], [], 0.1)
        assert launches[0]["port"] == 53045
        assert launches[0]["version"] == "0.32.0"
        command, client_env = _record(tmp_path, env, _command_of(CLIENT_LOG),
                                      capture=CLIENT_LOG)
        client = subprocess.run(command, env=client_env, cwd=tmp_path, capture_output=True,
                                timeout=WAIT)
        assert client.returncode == 0, client.stderr
        server.send_signal(signal.SIGINT)
        _, err = server.communicate(timeout=WAIT)
    finally:
        server.kill()
    assert server.returncode == 130, err
    (link,) = rows(db, "SELECT r.launch_matched_on, l.port, l.version, s.name AS server, "
                       "c.engine, c.hardware FROM serving_runs r "
                       "JOIN server_launches l ON l.id = r.launch_id "
                       "JOIN sources s ON s.id = l.source_id "
                       "JOIN configurations c ON c.id = r.config_id")
    assert link["launch_matched_on"] == "port 53045, model tiny-llama-cc9952da, time"
    assert link["server"].endswith("-vllm-serve.log")
    assert (link["port"], link["version"], link["engine"], link["hardware"]) == \
        (53045, "0.32.0", "vllm", "H100")
    # The server's side of the run: the stats line its log has in the run's window
    # (11-23 09:33:10 to 09:33:16 by the client's clock).
    assert rows(db, "SELECT window_start, window_end, stats_lines, mean_generation_throughput "
                    "FROM run_server_stats") == [
        {"window_start": "11-23 09:33:10", "window_end": "11-23 09:33:16", "stats_lines": 1,
         "mean_generation_throughput": 12.8}]
    server_facts = rows(db, "SELECT engine, engine_version, exit_status FROM environments e "
                            "JOIN sources s ON s.id = e.source_id WHERE s.name LIKE "
                            "'%-vllm-serve.log'")
    assert server_facts == [{"engine": "vllm", "engine_version": "0.32.0", "exit_status": 130}]


def test_facts_without_a_gpu(tmp_path, machine):
    env = machine(gpu=False)
    if shutil.which("nvidia-smi", path=env["PATH"]) or shutil.which("rocm-smi",
                                                                    path=env["PATH"]):
        pytest.skip("this machine has a GPU tool in /usr/bin")
    command, env = _record(tmp_path, env, _command_of(CLIENT_LOG), capture=CLIENT_LOG)
    done = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, timeout=WAIT)
    assert done.returncode == 0, done.stderr
    (facts,) = rows(tmp_path / "w.db", "SELECT hardware, gpu_name, gpu_count, driver_version, "
                                       "host_name, cpu_count FROM environments")
    assert facts == {"hardware": None, "gpu_name": None, "gpu_count": 0, "driver_version": None,
                     "host_name": socket.gethostname(), "cpu_count": os.cpu_count()}
    assert rows(tmp_path / "w.db", "SELECT hardware FROM configurations") == \
        [{"hardware": None}]


def test_secrets_are_never_stored(tmp_path, machine):
    env = machine()
    env.update(HF_TOKEN="hf_secretvalue1", VLLM_API_KEY="sk-secretvalue2",
               NCCL_SOCKET_PASSWORD="secretvalue3", VLLM_USE_V1="1", NCCL_DEBUG="INFO",
               CUDA_VISIBLE_DEVICES="0,1")
    command, env = _record(tmp_path, env, _command_of(CLIENT_LOG), capture=CLIENT_LOG)
    done = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, timeout=WAIT)
    assert done.returncode == 0, done.stderr
    (capture,) = _captures(tmp_path)
    assert "secretvalue" not in capture.read_text(encoding="utf-8")
    (facts,) = rows(tmp_path / "w.db", "SELECT env, visible_devices, raw_text FROM environments")
    assert json.loads(facts["env"]) == {"CUDA_VISIBLE_DEVICES": "0,1", "NCCL_DEBUG": "INFO",
                                        "VLLM_USE_V1": "1"}
    assert facts["visible_devices"] == "0,1"
    with open(tmp_path / "w.db", "rb") as fh:
        assert b"secretvalue" not in fh.read()


def test_on_a_terminal_the_command_writes_to_a_pseudo_terminal(tmp_path, machine):
    """Under a terminal the command sees one (its progress bars and colours stay), and the
    capture holds what it printed."""
    import pty

    env = machine()
    argv, env = _record(tmp_path, env, _command_of(CLIENT_LOG), capture=CLIENT_LOG)
    pid, fd = pty.fork()
    if pid == 0:        # the child: record, on the terminal
        os.chdir(tmp_path)
        os.execve(argv[0], argv, env)
    shown = b""
    while True:
        ready, _, _ = select.select([fd], [], [], WAIT)
        assert ready
        try:
            data = os.read(fd, 65536)
        except OSError:
            break
        if not data:
            break
        shown += data
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert b"Serving Benchmark Result" in shown
    (capture,) = _captures(tmp_path)
    # The terminal's line ends (\r\n): the bytes as printed on it.
    assert b"Successful requests:                     8         \r\n" in capture.read_bytes()
    assert rows(tmp_path / "w.db", "SELECT completed FROM serving_runs") == [{"completed": 8}]
