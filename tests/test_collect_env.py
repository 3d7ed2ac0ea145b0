"""The `collect_env` format beyond its fixture pairs: a record's facts block read back as
written, a report after the result it describes, secrets kept out of `raw_text`, and the
hardware a tag names winning over a report's."""

from __future__ import annotations

import json

from benchvault.record.facts import Facts, render
from conftest import FIXTURES, ingest_into, rows

OLDER = FIXTURES / "collect_env" / "derived-vllm-older-layout-a100-beside-result.md"


def _report_and_result(text: str) -> tuple[str, str]:
    """The older-layout fixture's report fence and its result fence."""
    report = text[text.index("```text"):text.index("## Serving")]
    result = text[text.index("```\n$ vllm bench serve"):]
    return report, result


def test_a_record_facts_block_reads_back_as_written(tmp_path):
    facts = Facts(command="vllm serve Qwen/Qwen2.5-7B-Instruct -tp 2 --port 8000",
                  cwd="/home/me/bench", started_at="2026-11-27T22:57:00Z",
                  ended_at="2026-11-27T23:10:04Z", exit_status=130, interrupted=True,
                  host_name="gpu-node-7", os="Ubuntu 22.04.4 LTS (x86_64)",
                  kernel="6.8.0-45-generic", cpu_model="AMD EPYC 9454 48-Core Processor",
                  cpu_count=192, gpus=["NVIDIA H100 80GB HBM3"] * 2, gpu_memory_mib=81559,
                  driver_version="550.54.15", cuda_version="12.4", engine="vllm",
                  engine_version="0.11.0", packages={"torch": "2.8.0", "vllm": "0.11.0"},
                  git_commit="3f2a9c1d0e", git_dirty=True,
                  env={"CUDA_VISIBLE_DEVICES": "0,1", "VLLM_USE_V1": "1"})
    note = tmp_path / "capture.log"
    note.write_text("$ vllm serve Qwen/Qwen2.5-7B-Instruct -tp 2 --port 8000\n\n"
                    + render(facts), encoding="utf-8")
    ingest_into(tmp_path / "w.db", note)
    (row,) = rows(tmp_path / "w.db", "SELECT * FROM environments")
    assert {k: row[k] for k in (
        "report", "command", "cwd", "started_at", "ended_at", "exit_status", "interrupted",
        "host_name", "os", "kernel", "cpu_model", "cpu_count", "gpu_name", "gpu_count",
        "gpu_memory_mib", "driver_version", "cuda_version", "hardware", "engine",
        "engine_version", "vllm_version", "torch_version", "git_commit", "git_dirty",
        "visible_devices")} == {
        "report": "record", "command": facts.command, "cwd": "/home/me/bench",
        "started_at": "2026-11-27T22:57:00Z", "ended_at": "2026-11-27T23:10:04Z",
        "exit_status": 130, "interrupted": 1, "host_name": "gpu-node-7",
        "os": "Ubuntu 22.04.4 LTS (x86_64)", "kernel": "6.8.0-45-generic",
        "cpu_model": "AMD EPYC 9454 48-Core Processor", "cpu_count": 192,
        "gpu_name": "NVIDIA H100 80GB HBM3", "gpu_count": 2, "gpu_memory_mib": 81559,
        "driver_version": "550.54.15", "cuda_version": "12.4", "hardware": "H100",
        "engine": "vllm", "engine_version": "0.11.0", "vllm_version": "0.11.0",
        "torch_version": "2.8.0", "git_commit": "3f2a9c1d0e", "git_dirty": 1,
        "visible_devices": "0,1"}
    assert json.loads(row["env"]) == {"CUDA_VISIBLE_DEVICES": "0,1", "VLLM_USE_V1": "1"}
    # The launch its command line gives is stored beside it, read by its own format.
    assert rows(tmp_path / "w.db", "SELECT tensor_parallel_size, port FROM server_launches") \
        == [{"tensor_parallel_size": 2, "port": 8000}]


def test_a_report_after_the_result_it_describes(tmp_path):
    report, result = _report_and_result(OLDER.read_text(encoding="utf-8"))
    note = tmp_path / "result-then-env.md"
    note.write_text("# Llama-3.1-8B\n\n" + result + "\nThe machine:\n\n" + report,
                    encoding="utf-8")
    ingest_into(tmp_path / "w.db", note)
    assert rows(tmp_path / "w.db", "SELECT hardware FROM configurations") == \
        [{"hardware": "A100"}]


def test_a_hardware_tag_wins_over_the_report(tmp_path):
    ingest_into(tmp_path / "w.db", OLDER, tags={"gpu": "A100-PCIe-card-7"})
    assert rows(tmp_path / "w.db", "SELECT hardware FROM configurations") == \
        [{"hardware": "A100-PCIe-card-7"}]


def test_a_secret_in_a_pasted_report_is_not_stored(tmp_path):
    ingest_into(tmp_path / "w.db", OLDER)
    (row,) = rows(tmp_path / "w.db", "SELECT env, raw_text FROM environments")
    assert "HF_TOKEN" not in json.loads(row["env"])
    assert "hf_notarealtoken" not in row["raw_text"]
    assert "HF_TOKEN=<not stored>" in row["raw_text"]
    # A package whose name holds TOKEN is no secret.
    sglang = FIXTURES / "collect_env" / "derived-sglang-check-env-grouped-gpus.txt"
    ingest_into(tmp_path / "s.db", sglang)
    (row,) = rows(tmp_path / "s.db", "SELECT packages, raw_text FROM environments")
    assert json.loads(row["packages"])["tiktoken"] == "0.11.0"
    assert "tiktoken: 0.11.0" in row["raw_text"]
