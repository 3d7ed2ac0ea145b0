"""`make demo` shows the product's own inputs: the seed notes and the real-tool captures, not
the test fixtures (hostile labels, truth files, malformed blocks)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _demo_commands(db: Path, out: Path) -> list[str]:
    if not shutil.which("make"):
        pytest.skip("make is not installed")
    dry = subprocess.run(["make", "-s", "-n", "demo", f"DEMO_DB={db}", f"VENV={Path(sys.prefix)}"],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [line for line in dry.splitlines() if " ingest " in line or " report " in line]


def test_demo_ingests_seeds_and_captures_only(tmp_path):
    db = tmp_path / "demo.db"
    commands = _demo_commands(db, tmp_path)
    ingest = next(c for c in commands if " ingest " in c)
    assert "fixtures/seeds" in ingest and "fixtures/contract/vllm-0.32.0/c2.txt" in ingest
    assert ".truth." not in ingest and "ABOUT.json" not in ingest
    assert "fixtures/vllm_serving" not in ingest and "hostile" not in ingest
    for command in commands:
        subprocess.run(command.replace("--out report", f"--out {tmp_path / 'report'}"),
                       shell=True, cwd=ROOT, check=True, capture_output=True)
    report = (tmp_path / "report" / "report.md").read_text()
    # A seed note's model and a contract capture's tiny local model both reach the report.
    assert "DeepSeek-V3" in report and "Llama-2-7b-chat-hf" in report and "tiny" in report
    assert "<img" not in report
