"""SGLang server start-up lines (`sglang_server`) → one ``server_launches`` row.

Shapes from SGLang's model_runner.py / scheduler.py / server_args printers, 2024 → 2026
(see the grammar's header); the first test is the start-up summary pasted in
sgl-project/sglang#29575.
"""

from __future__ import annotations

import json

import pytest

from benchvault.parsers.base import Context
from benchvault.parsers.sglang_server import FORMAT, build
from conftest import ingest_into, rows

ISSUE_LOG = """\
[2026-05-17 09:31:02] server_args=ServerArgs(model_path='zai-org/GLM-4.6-FP8', tokenizer_path='zai-org/GLM-4.6-FP8', host='0.0.0.0', port=30000, mem_fraction_static=0.88, max_running_requests=None, context_length=None, tp_size=8, dp_size=1, chunked_prefill_size=8192)
[2026-05-17 09:33:40 TP0] Load weight end. type=Glm4MoeForCausalLM, dtype=torch.bfloat16, avail mem=42.18 GB, mem usage=40.77 GB.
[2026-05-17 09:33:44 TP0] KV Cache is allocated. #tokens: 1203518, K size: 13.10 GB, V size: 13.10 GB
[2026-05-17 09:33:44 TP0] Memory pool end. avail mem=14.92 GB
[2026-05-17 09:34:31 TP0] Capture cuda graph end. Time elapsed: 46.28 s. mem usage=1.77 GB. avail mem=13.15 GB.
[2026-05-17 09:34:33 TP0] max_total_num_tokens=1203518, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=48, context_len=202752, available_gpu_mem=13.15 GB
[2026-05-17 09:34:35] INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)
[2026-05-17 09:34:36] The server is fired up and ready to roll!
"""


def _launches(tmp_path, text: str, name: str = "server.log") -> list[dict]:
    path = tmp_path / name
    path.write_text(text)
    ingest_into(tmp_path / "w.db", path)
    out = rows(tmp_path / "w.db", "SELECT * FROM server_launches ORDER BY id")
    for row in out:
        row["extra"] = json.loads(row["extra"]) if row["extra"] else None
    return out


def _facts(line: str):
    return build(1, line, Context())


def test_issue_startup_summary_is_one_launch(tmp_path):
    [launch] = _launches(tmp_path, ISSUE_LOG)
    assert launch["model"] == "zai-org/GLM-4.6-FP8"
    assert launch["tensor_parallel_size"] == 8
    assert launch["port"] == 30000
    assert launch["gpu_memory_utilization"] == 0.88
    assert launch["kv_cache_tokens"] == 1203518
    assert launch["max_num_seqs"] == 48              # max_running_requests, as the scheduler chose
    assert launch["max_model_len"] == 202752         # context_len
    assert launch["weights_gib"] == 40.77
    assert launch["cuda_graph_capture_s"] == 46.28
    assert launch["dtype"] == "bfloat16"
    assert (launch["kv_cache_k_size_gib"], launch["kv_cache_v_size_gib"],
            launch["available_kv_cache_memory_gib"]) == (13.1, 13.1, 26.2)
    assert (launch["chunked_prefill_size"], launch["max_prefill_tokens"]) == (8192, 16384)
    assert launch["extra"] is None          # every figure of these lines has its column
    assert launch["available_gpu_mem_gib"] == 13.15
    assert launch["started_at"] == "2026-05-17 09:31:02"
    assert launch["ready_at"] == "2026-05-17 09:34:36"


def test_issue_startup_summary_engine_without_command(tmp_path):
    [launch] = _launches(tmp_path, ISSUE_LOG)
    assert launch["engine"] == "sglang"


def test_with_launch_command_engine_is_sglang(tmp_path):
    text = ("python -m sglang.launch_server --model-path zai-org/GLM-4.6-FP8 --tp 8 "
            "--mem-fraction-static 0.88\n" + ISSUE_LOG)
    [launch] = _launches(tmp_path, text)
    assert launch["engine"] == "sglang"
    assert launch["command"].startswith("python -m sglang.launch_server")
    assert launch["kv_cache_tokens"] == 1203518 and launch["max_num_seqs"] == 48


def test_other_tensor_parallel_ranks_are_skipped():
    assert _facts("[2025-11-03 14:02:58 TP1] Load weight end. type=Qwen3ForCausalLM, "
                  "dtype=torch.bfloat16, avail mem=47.63 GB, mem usage=30.80 GB.") is None
    assert _facts("[2025-01-22 10:00:01 DP1 TP9 EP9] KV Cache is allocated. #tokens: 524288, "
                  "KV size: 17.16 GB") is None
    facts = _facts("[2025-01-22 10:00:01 DP0 TP0 EP0] KV Cache is allocated. #tokens: 524288, "
                   "KV size: 17.16 GB")
    assert facts.values["kv_cache_tokens"] == 524288           # MLA: one pool, `KV size`
    assert facts.values["available_kv_cache_memory_gib"] == 17.16
    assert "extra" not in facts.values


def test_2024_scheduler_line_with_gpu_id():
    facts = _facts("[2024-08-01 10:00:02 TP0] [gpu_id=0] max_total_num_tokens=524288, "
                   "max_prefill_tokens=16384, max_running_requests=4097, context_len=131072")
    assert facts.kind == "sizes"
    assert (facts.values["kv_cache_tokens"], facts.values["max_num_seqs"],
            facts.values["max_model_len"]) == (524288, 4097, 131072)
    assert facts.values["max_prefill_tokens"] == 16384
    assert "chunked_prefill_size" not in facts.values and "extra" not in facts.values


def test_2026_load_weight_end_with_elapsed_and_quant():
    facts = _facts("[2026-02-26 13:55:38 TP0] Load weight end. elapsed=367.51 s, "
                   "type=DeepseekV3ForCausalLM, quant=fp8, avail mem=75.11 GB, "
                   "mem usage=107.07 GB.")
    assert facts.values["weights_load_s"] == 367.51
    assert facts.values["weights_gib"] == 107.07
    assert facts.values["extra"]["weights_quantization"] == {"value": "fp8", "unit": None}
    assert facts.values["avail_mem_after_weights_gib"] == 75.11
    assert facts.values["model_class"] == "DeepseekV3ForCausalLM"


def test_2026_graph_capture_end():
    facts = _facts("[2026-02-26 13:57:38 TP0] Capture cuda graph end. elapsed=12.40 s, "
                   "mem usage=0.52 GB, avail mem=20.11 GB")
    assert facts.values["cuda_graph_capture_s"] == 12.4
    assert facts.values["cuda_graph_memory_gib"] == 0.52


def test_draft_model_weights_do_not_replace_the_target():
    facts = _facts("[2025-12-02 12:01:21 TP0] Load weight end. type=LlamaForCausalLMEagle3, "
                   "dtype=torch.float16, avail mem=76.50 GB, mem usage=0.89 GB.")
    assert "weights_gib" not in facts.values and "dtype" not in facts.values
    assert facts.values["extra"]["draft_weights_memory"] == {"value": 0.89, "unit": "GiB"}


def test_server_args_with_an_enum_repr_keeps_its_plain_values():
    facts = _facts("[2025-01-22 10:00:00] server_args=ServerArgs(model_path='Qwen/Qwen3-8B', "
                   "load_format=<LoadFormat.AUTO: 'auto'>, tp_size=2, port=30001)")
    assert facts.once
    assert (facts.values["model"], facts.values["tensor_parallel_size"],
            facts.values["port"]) == ("Qwen/Qwen3-8B", 2, 30001)


def test_ready_line_only_adds_to_an_open_launch():
    facts = _facts("[2025-11-03 14:03:21] The server is fired up and ready to roll!")
    assert facts.kind == "ready" and facts.weak


@pytest.mark.parametrize("line", [
    "The log then prints `Load weight end. ... quant=fp8 ...` once the weights are in.",
    "grep for max_total_num_tokens in the server log",
    "KV Cache is allocated before the graphs are captured.",
])
def test_prose_naming_a_line_is_not_one(line):
    assert not FORMAT.matches(line)


@pytest.mark.parametrize("line, column, value", [
    # 0.5.2 -> 0.5.6 on the CPU device: the model's decode graph is a `cpu graph`
    ("Capture cpu graph end. Time elapsed: 22.40 s. mem usage=0.85 GB. avail mem=11.85 GB.",
     "cuda_graph_capture_s", 22.4),
    ("Capture cpu graph begin. This can take up to several minutes. avail mem=12.70 GB",
     "avail_mem_before_graph_capture_gib", 12.7),
])
def test_the_cpu_devices_decode_graph_fills_the_graph_columns(line, column, value):
    assert _facts("[2025-10-16 09:12:08 TP0] " + line).values[column] == value


@pytest.mark.parametrize("line, key, value", [
    # 0.4.6 prints the draft's figures in another order than 0.4.10
    ("Capture draft cuda graph end. Time elapsed: 5.11 s. avail mem=10.52 GB. mem usage=0.48 GB.",
     "draft_graph_mem_usage", {"value": 0.48, "unit": "GiB"}),
    ("Capture draft extend cuda graph end. Time elapsed: 2.25 s. mem usage=0.21 GB. avail mem="
     "10.29 GB.", "draft_extend_graph_elapsed", {"value": 2.25, "unit": "s"}),
    ("Capture draft extend CUDA graph begin. step=2, avail mem=11.40 GB",
     "draft_extend_graph_avail_mem_before", {"value": 11.4, "unit": "GiB"}),
    ("Capture UNO tree draft CUDA graph end. elapsed=1.50 s, mem usage=0.12 GB, avail mem=9.00 GB.",
     "uno_tree_draft_graph_elapsed", {"value": 1.5, "unit": "s"}),
])
def test_other_graphs_keep_their_figures_by_their_names(line, key, value):
    facts = _facts("[2025-10-16 09:12:10 TP0] " + line)
    assert facts.values["extra"][key] == value
    assert "cuda_graph_capture_s" not in facts.values and "cuda_graph_memory_gib" not in facts.values


def test_post_capture_kv_sizing_is_the_pool_the_server_kept(tmp_path):
    # 0.5.2x resizes the pool once the graphs are captured (kv_pool_runtime.py); the line
    # before the capture printed `KV Cache VA upper bound`, not the pool
    [launch] = _launches(tmp_path, """\
[2026-11-20 10:00:05 TP1] Post-capture KV sizing: full_layer_tokens=310000, swa_layer_tokens=0
[2026-11-20 10:00:05 TP0] Post-capture KV sizing: full_layer_tokens=310000, swa_layer_tokens=0
[2026-11-20 10:00:05 TP0] Post-capture KV sizing: KV cache allocated. dtype: torch.float8_e4m3fn, #tokens: 310000, KV size: 38.20 GB, avail mem=5.10 GB
[2026-11-20 10:00:05 TP1] Post-capture KV sizing: KV cache allocated. dtype: torch.float8_e4m3fn, #tokens: 310001, KV size: 38.21 GB, avail mem=5.11 GB
[2026-11-20 10:00:05 TP0] Post-capture KV sizing: draft KV cache allocated. dtype: torch.bfloat16, #tokens: 310000, KV size: 1.20 GB
""")
    assert (launch["kv_cache_tokens"], launch["available_kv_cache_memory_gib"],
            launch["kv_cache_dtype"]) == (310000, 38.2, "float8_e4m3fn")
    assert launch["extra"] == {
        "full_layer_tokens": {"value": 310000, "unit": "tokens"},
        "swa_layer_tokens": {"value": 0, "unit": "tokens"},
        "avail_mem_after_kv_resize": {"value": 5.1, "unit": "GiB"},
        "draft_kv_cache_dtype": {"value": "bfloat16", "unit": None},
        "draft_kv_cache_tokens": {"value": 310000, "unit": "tokens"},
        "draft_kv_cache_kv_size": {"value": 1.2, "unit": "GiB"}}


def test_prefill_sizes_from_the_arguments_when_the_scheduler_line_is_missing(tmp_path):
    [launch] = _launches(tmp_path, """\
[2025-10-16 09:11:59] server_args=ServerArgs(model_path='Qwen/Qwen3-8B', tp_size=1, chunked_prefill_size=4096, max_prefill_tokens=32768, port=30000)
[2025-10-16 09:12:03 TP0] Load weight end. type=Qwen3ForCausalLM, dtype=torch.bfloat16, avail mem=62.10 GB, mem usage=16.42 GB.
""")
    assert (launch["chunked_prefill_size"], launch["max_prefill_tokens"]) == (4096, 32768)


@pytest.mark.parametrize("prefix", [
    "[2026-11-20 10:00:05 DP1 TP0] ", "[2026-11-20 10:00:05 PP1 TP0 EP0] ",
    "[2026-11-20 10:00:05 DP0 PP0 ATTN_CP1 MOE_DP0 TP0 EP0] ",
    "[2026-11-20 10:00:05 PP0 ATTN_CP0 MOE_DP1 TP0 EP0] "])
def test_other_replicas_and_stages_are_skipped(prefix):
    assert build(1, prefix + "Memory pool end. avail mem=12.82 GB", Context()) is None


def test_rank_zero_under_every_tag_is_read():
    facts = _facts("[2026-11-20 10:00:05 DP0 PP0 ATTN_CP0 MOE_DP0 TP0 EP0] Memory pool end. "
                   "avail mem=12.82 GB")
    assert facts.values["avail_mem_after_kv_cache_gib"] == 12.82
    assert facts.time.text() == "2026-11-20 10:00:05"


def test_a_sliding_window_models_two_pools(tmp_path):
    # 0.5.6: each of SWAKVPool's pools prints its own `KV Cache is allocated`, then the pool
    # its total (memory_pool.py); 0.5.2x's pool_configurator.py names the tokens of each
    [launch] = _launches(tmp_path, """\
[2025-12-01 10:00:00] server_args=ServerArgs(model_path='openai/gpt-oss-120b', tp_size=2, port=30031)
[2025-12-01 10:00:05 TP0] KV Cache is allocated. #tokens: 300000, K size: 10.50 GB, V size: 10.50 GB
[2025-12-01 10:00:05 TP0] KV Cache is allocated. #tokens: 240000, K size: 8.40 GB, V size: 8.40 GB
[2025-12-01 10:00:05 TP1] KV Cache is allocated. #tokens: 240000, K size: 8.40 GB, V size: 8.40 GB
[2025-12-01 10:00:05 TP0] SWAKVPool mem usage: 37.80000305175781 GB, swa size: 240000, full size: 300000
[2025-12-01 10:00:06 TP0] Use sliding window memory pool. full_layer_tokens=300000, swa_layer_tokens=240000
[2025-12-01 10:00:09 TP0] max_total_num_tokens=300000, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=128, context_len=131072, available_gpu_mem=9.12 GB
""")
    assert launch["available_kv_cache_memory_gib"] == 37.8
    assert launch["kv_cache_tokens"] == 300000
    assert launch["kv_cache_k_size_gib"] is None and launch["kv_cache_v_size_gib"] is None
    assert launch["extra"] == {
        "swa_kv_cache_tokens": {"value": 240000, "unit": "tokens"},
        "full_kv_cache_tokens": {"value": 300000, "unit": "tokens"},
        "full_layer_tokens": {"value": 300000, "unit": "tokens"},
        "swa_layer_tokens": {"value": 240000, "unit": "tokens"}}


@pytest.mark.parametrize("line, extra", [
    # memory_pool.py 0.5.x: no comma after `ssm_state size: ...GB`
    ("Mamba Cache is allocated. max_mamba_cache_size: 512, conv_state size: 0.25GB, ssm_state "
     "size: 12.50GB intermediate_ssm_state_cache size: 3.10GB intermediate_conv_window_cache "
     "size: 0.12GB ",
     {"max_mamba_cache_size": {"value": 512, "unit": None},
      "mamba_conv_state_size": {"value": 0.25, "unit": "GiB"},
      "mamba_ssm_state_size": {"value": 12.5, "unit": "GiB"},
      "mamba_intermediate_ssm_state_size": {"value": 3.1, "unit": "GiB"},
      "mamba_intermediate_conv_window_size": {"value": 0.12, "unit": "GiB"}}),
    ("Mamba Cache is allocated. max_mamba_cache_size: 96, conv_state size: 0.05GB, ssm_state "
     "size: 2.25GB ",
     {"max_mamba_cache_size": {"value": 96, "unit": None},
      "mamba_conv_state_size": {"value": 0.05, "unit": "GiB"},
      "mamba_ssm_state_size": {"value": 2.25, "unit": "GiB"}}),
])
def test_the_mamba_state_pool(line, extra):
    facts = _facts("[2025-12-01 10:00:05 TP0] " + line)
    assert facts.values["extra"] == extra
