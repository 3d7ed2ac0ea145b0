"""vLLM start-up lines printed by another rank's process: each worker prints its own weights,
compile and graph figures; the launch keeps rank 0's whatever order the processes wrote in."""

from __future__ import annotations

import pytest

from benchvault.parsers.base import Context
from benchvault.parsers.vllm_server import build, other_rank

LINE = "INFO 10-06 16:59:31 [gpu_model_runner.py:2653] Model loading took 7.6313 GiB and 4.400000 seconds"


@pytest.mark.parametrize("tag", [
    "(Worker_TP1 pid=202) ",                    # 0.10+ multiproc_executor.py
    "(Worker_DP0_PP1_TP0 pid=9) ",
    "(Worker_DP1_TP0_EP0 pid=9) ",
    "(VllmWorker rank=1 pid=7) ",               # 0.8-0.9
    "(VllmWorker TP1 pid=1) ",
    "(EngineCore_DP1 pid=3) ",                  # a second data-parallel engine
    "(VllmWorkerProcess pid=42) ",              # V0: a worker beside the driver
    "vllm-1  | (Worker_TP3 pid=205) ",          # behind a compose service
])
def test_another_ranks_line_is_skipped(tag):
    assert other_rank(tag + LINE)
    assert build(1, tag + LINE, Context()) is None


@pytest.mark.parametrize("tag", [
    "", "(Worker_TP0 pid=201) ", "(Worker_DP0_PP0_TP0_EP0 pid=9) ", "(VllmWorker rank=0 pid=7) ",
    "(EngineCore_DP0 pid=123) ", "(APIServer pid=1) ", "vllm-1  | (Worker_TP0 pid=201) "])
def test_rank_zeros_line_is_read(tag):
    facts = build(1, tag + LINE, Context())
    assert facts.values["weights_gib"] == 7.6313
    assert facts.values["model_load_s"] == 4.4
