"""`vllm bench startup`: its printed block and its --output-json are the same offline run.

Own text; the numbers are read off the lines by eye.
"""

from __future__ import annotations

import json

from conftest import FIXTURES, ingest_into, rows

PRINTED = FIXTURES / "vllm_bench_startup" / "derived-startup-printers-2025-and-later.md"
SAVED = FIXTURES / "vllm_bench_startup" / "derived-startup-output-json.json"


def test_percentiles_are_kept_under_their_json_keys(tmp_path):
    db = tmp_path / "w.db"
    ingest_into(db, PRINTED)
    extras = [json.loads(r["extra"]) for r in rows(db, "SELECT extra FROM offline_runs "
                                                       "ORDER BY line_start")]
    assert extras[0]["cold_startup_percentiles"] == {"10": 44.1, "25": 44.5, "50": 45.0,
                                                      "75": 45.8, "90": 46.2, "99": 46.5}
    assert extras[0]["warm_compilation_percentiles"] == {"10": 3.0, "99": 3.2}
    assert extras[1]["warm_encoder_compilation_percentiles"]["99"] == 0.9
    assert sorted(extras[1]) == sorted(
        f"{phase}_{metric}_percentiles" for phase in ("cold", "warm")
        for metric in ("startup", "compilation", "encoder_compilation"))


def test_the_printed_block_and_its_json_are_one_run(tmp_path):
    """The block prints two decimals; its JSON keeps every digit (here the same numbers)."""
    db = tmp_path / "w.db"
    printed = tmp_path / "startup.md"
    printed.write_text("\n".join(PRINTED.read_text().splitlines()[:42]) + "\n")
    ingest_into(db, printed, SAVED)
    assert rows(db, "SELECT count(*) AS n FROM offline_runs") == [{"n": 1}]
    assert rows(db, "SELECT avg_cold_startup_time, sightings FROM offline_runs") == [
        {"avg_cold_startup_time": 45.23, "sightings": 2}]


def test_a_block_cut_before_its_warm_phase_keeps_its_cold_phase(tmp_path):
    cut = tmp_path / "cut.log"
    cut.write_text("\n".join(PRINTED.read_text().splitlines()[8:24]) + "\n")
    db = tmp_path / "w.db"
    ingest_into(db, cut)
    assert rows(db, "SELECT avg_cold_startup_time, avg_warm_startup_time FROM offline_runs") \
        == [{"avg_cold_startup_time": 45.23, "avg_warm_startup_time": None}]
