"""Small units: the Python-repr grammar and the command-line splitter."""

from __future__ import annotations

import math

import pytest

from benchvault.reading.cmdline import invoked_at, parse_command
from benchvault.reading.pyliteral import ReprParseError, parse_namespace, parse_value
from benchvault.parsers.runcontext import BENCH_COMMANDS, LAUNCH_COMMANDS


def test_namespace_values():
    ns = parse_namespace("Namespace(a='x', b=8000, c=inf, d=None, e=True, f=[1, 'y'], "
                         "g=<function serve at 0x7f3cdb0c6520>, h=<ConfigFormat.AUTO: 'auto'>, "
                         "i={(256, 256, 1): 0.5}, j=-1.5e-3, k=\"it's\")")
    assert ns["a"] == "x" and ns["b"] == 8000 and math.isinf(ns["c"]) and ns["d"] is None
    assert ns["e"] is True and ns["f"] == [1, "y"]
    assert ns["g"] == "<function serve at 0x7f3cdb0c6520>"
    assert ns["h"] == "auto"
    assert ns["i"] == {"256,256,1": 0.5}
    assert ns["j"] == -0.0015 and ns["k"] == "it's"


def test_a_dict_as_a_key_is_a_key_of_text():
    # Not Python, but a garbled Namespace can hold one; JSON keys are text.
    assert parse_namespace("Namespace(a={{1: 2}: 3})") == {"a": {'{"1": 2}': 3}}


def test_non_default_args_dict():
    args = parse_value("{'model_tag': 'm', 'tensor_parallel_size': 2, 'enforce_eager': True}")
    assert args == {"model_tag": "m", "tensor_parallel_size": 2, "enforce_eager": True}


def test_bad_repr_raises_with_column():
    with pytest.raises(ReprParseError, match="column"):
        parse_namespace("Namespace(a=1, b=")


def test_command_with_env_prefix_short_flags_and_equals():
    cmd = parse_command("VLLM_USE_TRITON_FLASH_ATTN=0 vllm serve -tp 2 -pp 4 meta-llama/L "
                        "--gpu_memory_utilization=0.96 --max-num-seqs 2048 --trust-remote-code",
                        LAUNCH_COMMANDS["vllm"])
    assert cmd.env == {"VLLM_USE_TRITON_FLASH_ATTN": "0"}
    assert cmd.args == {"tp": "2", "pp": "4", "gpu_memory_utilization": "0.96",
                        "max_num_seqs": "2048", "trust_remote_code": True}
    assert cmd.positionals == ["meta-llama/L"]


def test_command_in_a_shell_loop_drops_shell_variables():
    cmd = parse_command('for c in 1 2; do echo "c=$c" && python b/benchmark_serving.py '
                        '--max-concurrency $c --num-prompts 10; done',
                        BENCH_COMMANDS["serving_bench"])
    assert cmd.text.startswith("python b/benchmark_serving.py")
    assert cmd.args == {"num_prompts": "10"}


def test_command_after_prompt_decoration():
    cmd = parse_command("(vllm) user@host:~/b$ python3 -m sglang.bench_serving --backend sglang "
                        "--num-prompts 5", BENCH_COMMANDS["serving_bench"])
    assert cmd.args == {"backend": "sglang", "num_prompts": "5"}


@pytest.mark.parametrize("line, runs", [
    # vLLM >= 0.2x prints this after the Namespace; it runs nothing (found by make contract).
    ("WARNING: vllm bench serve no longer sets temperature==0 by default", False),
    # vLLM 0.32's start-up log names the command in a sentence (found by make contract).
    ("(APIServer pid=7) INFO 11-23 09:00:01 [api_server.py:1] Scale-out endpoints are disabled. "
     "Restart vllm serve with --enable-scale-out to enable them.", False),
    ("We then ran vllm serve with tp=8", False),
    ("[2025-01-05 11:32:46] vllm serve deepseek-ai/DeepSeek-V3 --tensor-parallel-size 8", True),
    ("(vllm) ubuntu@ip-10-1-1-135:~/b$ python ~/vllm/benchmarks/benchmark_serving.py --seed 1", True),
    ("\U0001f7e0\u2be0ROCBLAS_USE_HIPBLASLT=1 vllm serve m", True),
    ('for c in 1 2; do echo "c=$c" && python b/benchmark_serving.py --max-concurrency $c; done',
     True),
    ("Run `vllm serve -tp 8 model` first", True),
])
def test_a_command_is_run_not_mentioned(line, runs):
    patterns = [*BENCH_COMMANDS.values(), *LAUNCH_COMMANDS.values()]
    matches = [m for p in patterns for m in p.finditer(line)]
    assert matches
    assert any(invoked_at(line, m.start()) for m in matches) is runs


@pytest.mark.parametrize("line", [
    # Found by bench/fuzz_campaign.py: `inf` where a count belongs raised OverflowError.
    "INFO 08-05 11:33:17 [metrics.py:417] Avg prompt throughput: 1239.8 tokens/s, Avg generation "
    "throughput: 25.9 tokens/s, Running: 5 reqs, Swapped: 0 reqs, Pending: inf reqs, GPU KV "
    "cache usage: 35.1%, CPU KV cache usage: 0.0%.",
    "INFO 08-05 11:34:35 [metrics.py:439] Speculative metrics: Draft acceptance rate: 0.675, "
    "System efficiency: 0.531, Number of speculative tokens: inf, Number of accepted tokens: "
    "8485, Number of draft tokens: 12568, Number of emitted tokens: 10004.",
])
def test_a_count_that_is_not_whole_is_a_warning(tmp_path, line):
    from benchvault.ingest.pipeline import ingest_file
    from benchvault.schemas.store import connect

    log = tmp_path / "server.log"
    log.write_text(line + "\n")
    db = connect(tmp_path / "w.db")
    result = ingest_file(db, log)
    db.close()
    (warning,) = result.warnings
    assert warning.line == 1 and "inf is not a whole number" in warning.reason


@pytest.mark.parametrize("raw, shown", [
    ("2024-08-01T12:00:00.1234567Z Successful requests: 10", "Successful requests: 10"),
    ("vllm-bench-1  | Successful requests: 10", "Successful requests: 10"),
    ("[pod/bench-7c9/bench] Successful requests: 10", "Successful requests: 10"),
    # Left alone: prose that starts with a date, table rows, vLLM's own bracketed time.
    ("2025-01-05 11:32:46 we started the sweep", "2025-01-05 11:32:46 we started the sweep"),
    ("CPU | 8 | x", "CPU | 8 | x"),
    ("[2025-01-05 11:32:46] vllm serve m", "[2025-01-05 11:32:46] vllm serve m"),
])
def test_log_collector_prefixes_are_removed(raw, shown):
    from benchvault.reading.lines import clean_line

    assert clean_line(raw) == shown
