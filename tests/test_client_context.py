"""What a serving run's context says: the engine from the client's printed backend, and
commands run through a wrapper (`docker exec NAME`, `kubectl exec POD --`, `srun`, ...)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchvault.parsers.base import Context
from benchvault.parsers.runcontext import BENCH_COMMANDS, infer_engine
from benchvault.reading.cmdline import invoked_at, parse_command
from conftest import ingest_into, rows

BENCH = BENCH_COMMANDS["serving_bench"]


# -- 2. the engine a client's backend names -------------------------------------------------
@pytest.mark.parametrize("backend, engine", [
    # SGLang bench_serving's ASYNC_REQUEST_FUNCS
    ("sglang", "sglang"), ("sglang-native", "sglang"), ("sglang-oai", "sglang"),
    ("sglang-oai-chat", "sglang"), ("vllm", "vllm"), ("vllm-chat", "vllm"),
    ("lmdeploy", "lmdeploy"), ("lmdeploy-chat", "lmdeploy"), ("trt", "tensorrt-llm"),
    # vLLM benchmark_serving's
    ("tgi", "tgi"), ("tensorrt-llm", "tensorrt-llm"), ("deepspeed-mii", "deepspeed-mii"),
    ("llama.cpp", "llama.cpp"), ("SGLang-OAI-Chat", "sglang"),
    # generic OpenAI clients say nothing of the server
    ("openai", "unknown"), ("openai-chat", "unknown"), ("openai-audio", "unknown"),
])
def test_printed_backend_names_the_engine(backend, engine):
    assert infer_engine(Context(), None, backend, None) == engine
    if backend.lower() not in ("vllm", "vllm-chat"):
        assert infer_engine(Context(), None, None, backend) == engine


@pytest.mark.parametrize("backend", ["vllm", "vllm-chat"])
def test_vllm_clients_own_backend_argument_says_nothing(backend):
    """`vllm bench serve --backend vllm` (its default) talks to any OpenAI server
    (tests/test_cross_file_links.py pins this); SGLang's client printing it chose it."""
    assert infer_engine(Context(), None, None, backend) == "unknown"
    assert infer_engine(Context(), None, backend, None) == "vllm"


def test_a_launch_command_outranks_the_client_backend_argument():
    from benchvault.parsers.base import Seen
    ctx = Context(commands={"launch": Seen("launch", "python -m sglang.launch_server "
                                           "--model-path m", 1, 0)})
    assert infer_engine(ctx, None, None, "vllm") == "sglang"


SGLANG_RESULT = """\
============ Serving Benchmark Result ============
Backend:                                 sglang-oai-chat
Traffic request rate:                    inf
Max request concurrency:                 8
Successful requests:                     64
Benchmark duration (s):                  21.37
Total input tokens:                      65536
Total generated tokens:                  8192
Request throughput (req/s):              2.99
Input token throughput (tok/s):          3066.73
Output token throughput (tok/s):         383.34
Total token throughput (tok/s):          3450.07
Concurrency:                             7.91
----------------End-to-End Latency----------------
Mean E2E Latency (ms):                   2640.15
Median E2E Latency (ms):                 2611.02
---------------Time to First Token----------------
Mean TTFT (ms):                          181.44
Median TTFT (ms):                        152.90
P99 TTFT (ms):                           512.08
---------------Inter-Token Latency----------------
Mean ITL (ms):                           19.36
Median ITL (ms):                         18.71
P95 ITL (ms):                            22.40
P99 ITL (ms):                            41.07
Max ITL (ms):                            298.11
==================================================
"""


def test_sglang_oai_chat_result_block_is_sglang(tmp_path):
    path = tmp_path / "bench.txt"
    path.write_text(SGLANG_RESULT)
    ingest_into(tmp_path / "w.db", path)
    [run] = rows(tmp_path / "w.db", "SELECT engine, completed FROM serving_runs")
    assert run == {"engine": "sglang", "completed": 64}


# -- 3. commands behind a wrapper -----------------------------------------------------------
@pytest.mark.parametrize("line, args", [
    ("docker exec vllm-gemma vllm bench serve --backend openai-chat --port 8100",
     {"backend": "openai-chat", "port": "8100"}),
    ("$ docker exec -it vllm-gemma vllm bench serve --num-prompts 800",
     {"num_prompts": "800"}),
    ("sudo docker exec -it -e HF_TOKEN=x sgl python3 -m sglang.bench_serving --backend sglang",
     {"backend": "sglang"}),
    ("docker run --rm --gpus all -v /models:/models --ipc=host -p 8000:8000 "
     "vllm/vllm-openai:v0.11.0 vllm bench serve --dataset-name random",
     {"dataset_name": "random"}),
    ("docker compose exec vllm vllm bench serve --max-concurrency 16",
     {"max_concurrency": "16"}),
    ("kubectl exec -it vllm-0 -n llm -- vllm bench serve --num-prompts 10",
     {"num_prompts": "10"}),
    ("srun -N 1 -p gpu --gres=gpu:8 vllm bench serve --num-prompts 5", {"num_prompts": "5"}),
    ("nohup time vllm bench serve --num-prompts 5", {"num_prompts": "5"}),
    ("CUDA_VISIBLE_DEVICES=0 vllm bench serve --num-prompts 5", {"num_prompts": "5"}),
    ("ssh gpu-node-3 vllm bench serve --request-rate 4", {"request_rate": "4"}),
    ("docker exec vllm bash -c \"vllm bench serve --num-prompts 3\"", {"num_prompts": "3"}),
])
def test_a_wrapper_does_not_hide_the_command(line, args):
    match = BENCH.search(line)
    assert invoked_at(line, match.start())
    command = parse_command(line, BENCH)
    assert command is not None
    # the wrapper is not part of the command (an env prefix or interpreter is)
    assert not command.text.startswith(("docker", "sudo", "kubectl", "srun", "ssh"))
    assert {k: command.args.get(k) for k in args} == args


@pytest.mark.parametrize("line", [
    "`VLLM_USE_V1=1 vllm bench serve --num-prompts 7`",
    "`python3 -m sglang.bench_serving --backend sglang-oai-chat --num-prompt 128`",
    "λ vllm bench serve --num-prompts 7",        # (λ: cmder's prompt on Windows)
])
def test_a_code_span_with_an_env_prefix_or_interpreter_runs_its_command(line):
    # (a note quotes the command as a code span: the segmenter reads the span's text)
    assert invoked_at(line, BENCH.search(line).start())


@pytest.mark.parametrize("line", [
    "Run docker exec vllm-gemma vllm bench serve --port 8100 to measure it",
    "INFO 03-02 09:17:21 [x.py:1] docker exec c vllm bench serve --port 8100",
    "docker exec vllm-gemma extra-word vllm bench serve --port 8100",   # not a whole wrapper
    "WARNING: vllm bench serve no longer sets --port",
])
def test_a_mention_is_still_not_a_command(line):
    assert not invoked_at(line, BENCH.search(line).start())


DOCKER_EXEC_NOTE = """\
# bench in the container

```
docker exec vllm-gemma vllm bench serve \\
  --backend openai-chat \\
  --host 127.0.0.1 \\
  --port 8100 \\
  --endpoint /v1/chat/completions \\
  --dataset-name random \\
  --num-prompts 200

============ Serving Benchmark Result ============
Successful requests:                     200
Failed requests:                         0
Benchmark duration (s):                  30.12
Total input tokens:                      204800
Total generated tokens:                  25600
Request throughput (req/s):              6.64
Output token throughput (tok/s):         849.93
Total token throughput (tok/s):          7649.40
---------------Time to First Token----------------
Mean TTFT (ms):                          9876.54
Median TTFT (ms):                        9012.34
P99 TTFT (ms):                           20123.45
-----Time per Output Token (excl. 1st token)------
Mean TPOT (ms):                          40.12
Median TPOT (ms):                        39.87
P99 TPOT (ms):                           55.01
---------------Inter-token Latency----------------
Mean ITL (ms):                           39.90
Median ITL (ms):                         35.10
P99 ITL (ms):                            120.33
==================================================
```
"""


def test_docker_exec_command_gives_the_run_its_arguments(tmp_path):
    path = tmp_path / "note.md"
    path.write_text(DOCKER_EXEC_NOTE)
    ingest_into(tmp_path / "w.db", path)
    [run] = rows(tmp_path / "w.db", "SELECT backend, endpoint, port, num_prompts, dataset_name, "
                                    "command, completed FROM serving_runs")
    assert run["command"].startswith("vllm bench serve --backend openai-chat")
    assert (run["backend"], run["endpoint"], run["port"], run["num_prompts"],
            run["dataset_name"], run["completed"]) == (
        "openai-chat", "/v1/chat/completions", 8100, 200, "random", 200)


# -- 3. a plan's command: the run command of a section with no result of its own ------------
PR_NOTE = (Path(__file__).parent.parent / "fixtures" / "vllm_serving"
           / "real-pr26478-test-plan-then-test-result.md").read_text()
RESULT = PR_NOTE[PR_NOTE.index("```shell\n====="):]


def result(duration: str) -> str:
    """The PR's result block, as another run (one run seen twice is one run)."""
    return RESULT.replace("23.73", duration)


def _commands(tmp_path, note: str) -> list[tuple[str | None, str | None]]:
    path = tmp_path / "note.md"
    path.write_text(note)
    ingest_into(tmp_path / "w.db", path)
    return [(r["label"], r["dataset_path"]) for r in rows(
        tmp_path / "w.db", "SELECT label, dataset_path FROM serving_runs ORDER BY line_start")]


def test_a_plan_sections_command_reaches_the_results_beside_it_until_their_parent_ends(tmp_path):
    note = PR_NOTE.replace("## Test Result", "## Test Result\n### first") \
        + "\n### second\n" + result("24.10") + "\n## Later\n" + result("25.20") \
        + "\n# Another note\n" + result("26.30")
    assert _commands(tmp_path, note) == [
        ("first", "philschmid/mt-bench"), ("second", "philschmid/mt-bench"),
        ("Later", "philschmid/mt-bench"), ("Another note", None)]


def test_a_command_its_own_section_ran_is_not_the_next_sections(tmp_path):
    ran = PR_NOTE.replace("## Test Result\n", "")
    assert _commands(tmp_path, ran + "\n## Other run\n" + result("24.10")) == [
        ("Test Plan", "philschmid/mt-bench"), ("Other run", None)]


# -- 4. the workload lengths of vLLM's newer datasets -------------------------------------------
@pytest.mark.parametrize("flags, want", [
    ("--dataset-name spec_bench --spec-bench-output-len {n}", [(None, 512), (None, 1024)]),
    ("--dataset-name speed_bench --speed-bench-output-len {n}", [(None, 512), (None, 1024)]),
    ("--dataset-name custom --dataset-path d.jsonl --custom-output-len {n}",
     [(None, 512), (None, 1024)]),
    # a prompt is the shared prefix and its own suffix
    ("--dataset-name prefix_repetition --prefix-repetition-prefix-len {n} "
     "--prefix-repetition-suffix-len 256 --prefix-repetition-output-len 128",
     [(768, 128), (1280, 128)]),
])
def test_a_newer_datasets_lengths_tell_its_configurations_apart(tmp_path, flags, want):
    note = "".join(
        f"## Run {n}\n```\nvllm bench serve --model Qwen/Qwen3-0.6B {flags.format(n=n)}\n"
        + result(duration).removeprefix("```shell\n") for n, duration in ((512, "24.10"),
                                                                            (1024, "25.20")))
    path = tmp_path / "note.md"
    path.write_text(note)
    ingest_into(tmp_path / "w.db", path)
    got = rows(tmp_path / "w.db", "SELECT c.input_len, c.output_len FROM serving_runs r "
                                  "JOIN configurations c ON c.id = r.config_id ORDER BY r.duration")
    assert [(g["input_len"], g["output_len"]) for g in got] == want


def test_flags_abbreviated_as_argparse_allows_are_read_by_their_whole_name(tmp_path):
    note = tmp_path / "abbrev.md"
    note.write_text("```\npython benchmarks/benchmark_serving.py --backend vllm --model m/x "
                    "--dataset-name random --random-input 2048 --random-output 1024 "
                    "--max-concurrency 10 --num-prompt 100\n```\n\n```\n"
                    "============ Serving Benchmark Result ============\n"
                    "Successful requests:                     100\n"
                    "Benchmark duration (s):                  137.30\n"
                    "Request throughput (req/s):              0.73\n"
                    "Output token throughput (tok/s):         739.79\n"
                    "==================================================\n```\n")
    db = tmp_path / "a.db"
    ingest_into(db, note)
    assert rows(db, "SELECT random_input_len, random_output_len, num_prompts, max_concurrency "
                    "FROM serving_runs") == [{"random_input_len": 2048, "random_output_len": 1024,
                                              "num_prompts": 100, "max_concurrency": 10}]


def test_unabbreviated_keeps_what_no_known_name_or_several_start():
    from benchvault.reading.cmdline import unabbreviated
    known = ("random_input_len", "random_output_len", "num_prompts", "model")
    assert unabbreviated({"random_input": "1", "random": "2", "num_prompt": "3", "mod": "4",
                          "seed": "5"}, known) == {"random_input_len": "1", "random": "2",
                                                   "num_prompts": "3", "model": "4", "seed": "5"}


LAUNCH_SCRIPT = """\
```bash
MODEL_ID="Org/Model-8B"

exec /opt/venv/bin/python -m vllm.entrypoints.openai.api_server \\
    --model "$MODEL_ID" \\
    --served-model-name "$MODEL_ID" \\
    --gpu-memory-utilization 0.85 \\           # 85% of the card
    --dtype auto \\                             # bfloat16 here
    --max-model-len 16384
```
"""


def test_a_launch_scripts_variables_and_remarks_after_continuations(tmp_path):
    """A script's `--model "$MODEL_ID"` is the variable's value, and a remark after a line's
    `\\` does not end the command."""
    note = tmp_path / "start.md"
    note.write_text(LAUNCH_SCRIPT, encoding="utf-8")
    db = tmp_path / "w.db"
    ingest_into(db, note)
    assert rows(db, "SELECT model, served_model_name, gpu_memory_utilization, dtype, "
                    "max_model_len FROM server_launches") == [
        {"model": "Org/Model-8B", "served_model_name": "Org/Model-8B",
         "gpu_memory_utilization": 0.85, "dtype": "auto", "max_model_len": 16384}]


@pytest.mark.parametrize("line, launch", [
    ("sudo docker run --runtime nvidia --gpus all -p 8000:8000 --ipc=host "
     "-e VLLM_WORKER_MULTIPROC_METHOD=spawn vllm/vllm-openai:v0.8.3 "
     "--model meta-llama/Llama-3.1-8B-Instruct --gpu-memory-utilization 0.95",
     {"model": "meta-llama/Llama-3.1-8B-Instruct", "version": "0.8.3",
      "gpu_memory_utilization": 0.95, "port": 8000}),
    ("docker run --gpus all acme/vllm-gh200:latest --model Qwen/Qwen3-8B --max-model-len 8192",
     {"model": "Qwen/Qwen3-8B", "version": None, "gpu_memory_utilization": None, "port": 8000}),
])
def test_an_image_that_runs_the_server_as_its_entrypoint_is_a_launch(tmp_path, line, launch):
    note = tmp_path / "run.md"
    note.write_text(f"```\n{line}\n```\n", encoding="utf-8")
    db = tmp_path / "w.db"
    ingest_into(db, note)
    assert rows(db, "SELECT model, version, gpu_memory_utilization, port FROM server_launches") \
        == [launch]


def test_a_program_named_in_a_code_span_of_prose_is_no_launch(tmp_path):
    note = tmp_path / "note.md"
    note.write_text("I tested it using `llama-server`, Vulkan, and an AMD RX 570 8 GB.\n\n"
                    "Then I ran `llama-server -m x.gguf -ngl 99` again.\n", encoding="utf-8")
    db = tmp_path / "w.db"
    ingest_into(db, note)
    assert rows(db, "SELECT command FROM server_launches") == [
        {"command": "llama-server -m x.gguf -ngl 99"}]


@pytest.mark.parametrize("line, launch", [
    ('        command: ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", '
     '"--tensor-parallel-size", "2"]',
     {"engine": "vllm", "model": "meta-llama/Llama-3.1-8B-Instruct", "tensor_parallel_size": 2}),
    ('CMD ["python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B", "--tp", "4"]',
     {"engine": "sglang", "model": "Qwen/Qwen3-8B", "tensor_parallel_size": 4}),
])
def test_a_command_written_as_a_list_of_its_words_is_a_launch(tmp_path, line, launch):
    note = tmp_path / "deploy.md"
    note.write_text(f"```yaml\n{line}\n```\n", encoding="utf-8")
    db = tmp_path / "w.db"
    ingest_into(db, note)
    assert rows(db, "SELECT engine, model, tensor_parallel_size FROM server_launches") == [launch]


def test_an_image_before_a_command_is_no_launch_of_its_own(tmp_path):
    note = tmp_path / "run.md"
    note.write_text("```\ndocker run --gpus all vllm/vllm-openai:v0.11.0 vllm bench serve "
                    "--dataset-name random --model Qwen/Qwen3-8B\n```\n", encoding="utf-8")
    db = tmp_path / "w.db"
    ingest_into(db, note)
    assert rows(db, "SELECT count(*) AS n FROM server_launches") == [{"n": 0}]


@pytest.mark.parametrize("prose, model", [
    ("Qwen/Qwen3-32B sharegpt dataset test in different request rate:", "Qwen/Qwen3-32B"),
    ("A sweep of `amd/Llama-3.3-70B-Instruct-FP8-KV` at 8 GPUs.", "amd/Llama-3.3-70B-Instruct-FP8-KV"),
    ("see vllm/benchmarks/serve.py and https://hf.co/Qwen/Qwen3-8B", None),     # a path, a URL
    ("1000 tok/s at 5 req/s, input/output 1024/128", None),
    ("Qwen/Qwen3-8B against meta-llama/Llama-3.1-8B", None),                       # two named
    # (a line labelled `Model` says which of the models it names is the one)
    ("- Model / implementation: `gemma-4-26B-A4B-it` / `gemma4-autoport`", "gemma-4-26B-A4B-it"),
    ("**Model:** Qwen3-8B vs Llama-3.1-8B", None),
    ("### Gemma 4 26B A4B on an i5-14400T", "Gemma 4 26B A4B"),     # in words, with its size
    ("the Qwen 3 family on one GPU", None),
    ("### Qwen2.5:14B", "Qwen2.5:14B"),                             # an Ollama tag
    ("Qwen3-8B: pp512 1200 t/s", "Qwen3-8B"),                        # a colon, then words
])
def test_the_one_model_a_notes_prose_names(prose, model):
    from benchvault.parsers.runcontext import model_in_prose
    assert model_in_prose((prose,)) == model


def test_a_run_without_a_command_takes_the_model_its_prose_names(tmp_path):
    note = tmp_path / "rates.md"
    note.write_text("Qwen/Qwen3-32B on sharegpt, at two request rates:\n```\nqps1\n"
                    + result("262.49") + "```\n")
    db = tmp_path / "w.db"
    ingest_into(db, note)
    assert rows(db, "SELECT label, model, duration FROM serving_runs") == [
        {"label": "qps1", "model": "Qwen/Qwen3-32B", "duration": 262.49}]


@pytest.mark.parametrize("prose, stated", [
    ("Benchmark workload: agentic coding, SSP=57600 / ISL=6400 / OSL=400 (64K context).",
     {"random_input_len": 6400, "random_output_len": 400}),
    ("- 入力/出力:input_len=512 / output_len=256",
     {"random_input_len": 512, "random_output_len": 256}),
    ("ISL/OSL = 1024/8192", {"random_input_len": 1024, "random_output_len": 8192}),
    ("`vllm bench serve` random in2048/out128, warmup first",
     {"random_input_len": 2048, "random_output_len": 128}),
    ("Workload: 3000 input tokens, 30 output tokens.",
     {"random_input_len": 3000, "random_output_len": 30}),
    ("测试长度: 输入=200, 输出=100", {"random_input_len": 200, "random_output_len": 100}),
    ("100 requests at concurrency level 10, num_prompts=100",
     {"max_concurrency": 10, "num_prompts": 100}),
    ("Speed (`random 2048/256 @ conc 64`, tp8)",
     {"random_input_len": 2048, "random_output_len": 256, "max_concurrency": 64}),
    ("### Raw Test 1: 128 prompt / 128 output tokens",
     {"random_input_len": 128, "random_output_len": 128}),
    ("- **Requests per Level**: 50", {"num_prompts": 50}),
    ("### Reference Results (RTX 5090, 100 concurrent requests)", {"max_concurrency": 100}),
    ("Prompt 128 tokens, output 256 tokens.", {"random_input_len": 128, "random_output_len": 256}),
    ("- concurrency 8, infinite offered request rate, fixed seed `20260812`",
     {"max_concurrency": 8, "seed": 20260812}),
    ("seed-oss 36B on one GPU", {}),
    ("- 64 measured requests per run, exactly 128 input and 64 output tokens each",
     {"num_prompts": 64, "random_input_len": 128, "random_output_len": 64}),
    ("concurrency from 1 to 32, input: 8k", {}),             # a range, a rounded length
    ("ISL=1024 here, ISL=2048 there", {}),                    # stated twice differently
])
def test_the_workload_a_notes_prose_states_once(prose, stated):
    from benchvault.parsers.runcontext import workload_in_prose
    assert workload_in_prose((prose,)) == stated


def test_a_result_pasted_from_a_statistic_on_is_kept_marked_incomplete(tmp_path):
    note = tmp_path / "tail.md"
    note.write_text("```txt\nMedian ITL (ms):                         22.52\n"
                    "P99 ITL (ms):                            41.28\n"
                    "----------------End-to-end Latency----------------\n"
                    "Mean E2EL (ms):                          31805.05\n"
                    "P99 E2EL (ms):                           40164.55\n"
                    "==================================================\n```\n")
    db = tmp_path / "w.db"
    ingest_into(db, note)
    assert rows(db, "SELECT median_itl_ms, p99_itl_ms, mean_e2el_ms, extra FROM serving_runs") \
        == [{"median_itl_ms": 22.52, "p99_itl_ms": 41.28, "mean_e2el_ms": 31805.05,
             "extra": '{"incomplete": true}'}]
    [reason] = [r["reason"] for r in rows(db, "SELECT reason FROM unparsed_blocks")]
    assert "pasted from the line 'Median ITL (ms):" in reason


def test_labels_a_plain_line_above_a_heading_with_a_colon_and_a_one_line_code_fence(tmp_path):
    bare = result("262.49").split("```shell\n", 1)[1].rsplit("```", 1)[0] + "=" * 50 + "\n"
    note = tmp_path / "labels.md"
    note.write_text("## Test Plan\n\n```VLLM_USE_DEEP_GEMM=1 vllm serve Qwen/Qwen3-30B-A3B```\n\n"
                    "## Results\n\n4 nodes (tp)\n\n" + bare + "\n"
                    "#### Baseline:\n" + bare.replace("262.49", "263.49") + "\n"
                    "WO tuned configs\n\n```text\n" + bare.replace("262.49", "264.49") + "```\n")
    db = tmp_path / "w.db"
    ingest_into(db, note)
    assert [(r["label"], r["duration"]) for r in rows(
        db, "SELECT label, duration FROM serving_runs ORDER BY line_start")] == [
        ("4 nodes (tp)", 262.49), ("Baseline", 263.49), ("WO tuned configs", 264.49)]


def test_a_template_command_in_setup_notes_leaves_the_results_under_their_own_heading(tmp_path):
    # (a `\` before the fence's end, a `<model>` slot, the release said in the setup prose)
    note = tmp_path / "note.md"
    note.write_text(
        "## VLLM Configuration\n* vLLM Version: 0.9.1.dev59+gb6a6e7a52 (commit b6a6e7a)\n\n"
        "```bash\nvllm serve <model> \\\n        --gpu-memory-utilization 0.98 \\\n"
        "        --tensor-parallel-size 4 \\\n```\n"
        "```bash\npython benchmarks/benchmark_serving.py --model <model> --max-concurrency "
        "<concurrency> --num-prompts 100\n```\n\n## Qwen3-32B-GPTQ\n\n### Mean TTFT (ms)\n"
        "| GPUs | 1 Concurrency | 8 Concurrency |\n|---|---|---|\n| 4 | 63 | 190.1 |\n",
        encoding="utf-8")
    db = tmp_path / "w.db"
    ingest_into(db, note)
    assert rows(db, "SELECT model, version, gpu_memory_utilization, tensor_parallel_size "
                    "FROM server_launches") == [
        {"model": None, "version": "0.9.1.dev59+gb6a6e7a52", "gpu_memory_utilization": 0.98,
         "tensor_parallel_size": 4}]
    assert rows(db, "SELECT model, section, max_concurrency, num_prompts, mean_ttft_ms "
                    "FROM serving_runs ORDER BY rowid") == [
        {"model": "Qwen3-32B-GPTQ", "section": "Qwen3-32B-GPTQ > Mean TTFT (ms)",
         "max_concurrency": 1, "num_prompts": 100, "mean_ttft_ms": 63.0},
        {"model": "Qwen3-32B-GPTQ", "section": "Qwen3-32B-GPTQ > Mean TTFT (ms)",
         "max_concurrency": 8, "num_prompts": 100, "mean_ttft_ms": 190.1}]


@pytest.mark.parametrize("said, version", [
    ("- SGLang version 0.4.6.post1", None), ("pip install vllm==0.10.1", "0.10.1"),
    ("**vLLM**: v0.11.0rc2", "0.11.0rc2"), ("vLLM 0.8.4 against vLLM 0.9.0", None)])
def test_the_release_the_setup_prose_names_is_the_launchs(tmp_path, said, version):
    note = tmp_path / "note.md"
    note.write_text(f"{said}\n\n```\nvllm serve Qwen/Qwen3-8B --port 8001\n```\n",
                    encoding="utf-8")
    db = tmp_path / "w.db"
    ingest_into(db, note)
    assert rows(db, "SELECT version FROM server_launches") == [{"version": version}]



@pytest.mark.parametrize("line, program", [
    ("llama-server with Qwen3-14B Q4_K_M on RTX 4080:", r"llama-server"),
    ("vllm bench serve with 500 prompts on Qwen2.5-7B-Instruct (A100 80GB):",
     r"vllm bench serve"),
])
def test_a_program_named_in_a_sentence_is_said_not_run(line, program):
    assert parse_command(line, re.compile(program)).in_prose


@pytest.mark.parametrize("line", ["vllm serve Qwen/Qwen3-8B", "vllm bench serve",
                                  "vllm serve Qwen/Qwen3-8B --port 8001 on the H100"])
def test_a_command_with_flags_or_one_model_is_run(line):
    assert not parse_command(line, re.compile(r"vllm (?:bench )?serve")).in_prose


def test_a_sentence_naming_llama_server_launches_nothing(tmp_path):
    note = tmp_path / "note.md"
    note.write_text(
        "llama-server with Qwen3-14B Q4_K_M on RTX 4080:\n\n"
        "prompt eval time =     245.31 ms /   512 tokens (    0.48 ms per token,  2087.19 tokens "
        "per second)\n       eval time =    4532.10 ms /   256 tokens (   17.70 ms per token,    "
        "56.49 tokens per second)\n      total time =    4777.41 ms /   768 tokens\n",
        encoding="utf-8")
    ingest_into(tmp_path / "w.db", note)
    assert rows(tmp_path / "w.db", "select count(*) n from server_launches") == [{"n": 0}]
    assert [(r["test"], r["avg_ts"]) for r in rows(
        tmp_path / "w.db", "select test, avg_ts from llama_bench_results order by test")] == [
        ("pp512", 2087.19), ("tg256", 56.49)]


# -- 4. a command written after its results --------------------------------------------------
TABLE = """\
| | Mean TTFT (ms) | Output throughput (tok/s) |
|---|---|---|
| main | {a} | {b} |
| PR | {c} | {d} |
"""
CLIENT = """\
```
vllm bench serve --model Qwen/Qwen3-8B --dataset-name random --random-input-len {n} \\
  --random-output-len 128 --num-prompts 200 --max-concurrency 16
```
"""


def test_a_command_under_its_results_is_theirs(tmp_path):
    """Figures first, `Client:` and the command second: the command no result follows is the
    one the results before it in its section ran."""
    note = tmp_path / "note.md"
    note.write_text("## Results\n\n" + TABLE.format(a=120.5, b=850.2, c=98.1, d=910.7)
                    + "\nClient:\n" + CLIENT.format(n=1024))
    ingest_into(tmp_path / "w.db", note)
    got = rows(tmp_path / "w.db", "SELECT label, mean_ttft_ms, random_input_len, num_prompts, "
               "max_concurrency FROM serving_runs ORDER BY label")
    assert got == [{"label": "PR", "mean_ttft_ms": 98.1, "random_input_len": 1024,
                    "num_prompts": 200, "max_concurrency": 16},
                   {"label": "main", "mean_ttft_ms": 120.5, "random_input_len": 1024,
                    "num_prompts": 200, "max_concurrency": 16}]


def test_a_command_a_later_result_took_stays_its_own(tmp_path):
    """A command between two tables is the second's (it ran it), not the first's; and a
    trailing command in another section is not a section's before it."""
    note = tmp_path / "note.md"
    note.write_text("## First\n\n" + TABLE.format(a=120.5, b=850.2, c=98.1, d=910.7)
                    + "\n" + CLIENT.format(n=2048) + "\n" + TABLE.format(a=220.5, b=650.2,
                                                                         c=198.1, d=710.7)
                    + "\n## Second\n\n" + CLIENT.format(n=4096))
    ingest_into(tmp_path / "w.db", note)
    got = rows(tmp_path / "w.db", "SELECT mean_ttft_ms, random_input_len FROM serving_runs "
               "ORDER BY mean_ttft_ms")
    assert got == [{"mean_ttft_ms": 98.1, "random_input_len": None},
                   {"mean_ttft_ms": 120.5, "random_input_len": None},
                   {"mean_ttft_ms": 198.1, "random_input_len": 2048},
                   {"mean_ttft_ms": 220.5, "random_input_len": 2048}]
