"""llama-batched-bench and llama-sweep-bench tables: the shapes their builds printed.

Own text; the numbers are read off the lines by eye.
"""

from __future__ import annotations

from benchvault.ingest.parse import parse_file
from benchvault.parsers.base import Parsed

HEADER = ("|    PP |     TG |    B |   N_KV |   T_PP s | S_PP t/s |   T_TG s | S_TG t/s |"
          "      T s |    S t/s |")
RULE = ("|-------|--------|------|--------|----------|----------|----------|----------|"
        "----------|----------|")
ROWS = ["|   512 |    128 |    1 |    640 |    0.212 |  2415.09 |    1.402 |    91.30 |"
        "    1.614 |   396.53 |",
        "|   512 |    128 |    4 |   2560 |    0.801 |  2556.80 |    2.113 |   242.31 |"
        "    2.914 |   878.52 |"]


def read(tmp_path, text: str, name: str = "run.log"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    items = list(parse_file(path))
    return ([i.row for i in items if isinstance(i, Parsed)],
            [(i.line, i.reason) for i in items if not isinstance(i, Parsed)])


def test_a_2023_build_settings_line_and_its_mmq(tmp_path):
    text = "\n".join(["main: n_kv_max = 4096, is_pp_shared = 1, n_gpu_layers = 35, mmq = 1", "",
                      HEADER, RULE, *ROWS]) + "\n"
    rows, problems = read(tmp_path, text)
    assert problems == []
    assert [(r.tool, r.engine, r.batch_size, r.input_len, r.output_len, r.n_kv) for r in rows] == [
        ("llama-batched-bench", "llama.cpp", 1, 512, 128, 640),
        ("llama-batched-bench", "llama.cpp", 4, 512, 128, 2560)]
    assert [(r.prefill_latency, r.prefill_throughput, r.decode_latency, r.decode_throughput,
             r.total_latency, r.overall_throughput) for r in rows][1] == (
        0.801, 2556.80, 2.113, 242.31, 2.914, 878.52)
    assert {(r.n_kv_max, r.is_pp_shared, r.n_gpu_layers, r.n_batch) for r in rows} == {
        (4096, True, 35, None)}
    assert all(r.extra == {"mmq": 1} for r in rows)


def test_a_2026_settings_line_under_its_function_name_with_a_log_prefix(tmp_path):
    settings = ("llama_batched_bench: n_kv_max = 65536, n_batch = 2048, n_ubatch = 512, "
                "flash_attn = -1, is_pp_shared = 0, is_tg_separate = 1, n_gpu_layers = 99, "
                "n_threads = 16, n_threads_batch = 16")
    text = "\n".join([settings, "", HEADER, RULE, *ROWS]) + "\n"
    rows, _ = read(tmp_path, text)
    assert {(r.n_kv_max, r.n_ubatch, r.flash_attn, r.is_tg_separate, r.n_threads_batch)
            for r in rows} == {(65536, 512, -1, True, 16)}


def test_sweep_bench_with_its_memory_columns_and_a_cut_last_row(tmp_path):
    text = "\n".join([
        "$ ./llama-sweep-bench -m /models/q8.gguf -c 4096 -ub 1024 -ngl 99 --sweep-memory",
        "|    PP |     TG |   N_KV |   T_PP s | S_PP t/s |   T_TG s | S_TG t/s |    RSS HWM | "
        "VRAM delta |",
        "|-------|--------|--------|----------|----------|----------|----------|------------|"
        "------------|",
        "|  1024 |    256 |      0 |    0.512 |  2000.00 |    3.200 |    80.00 |     1843.2 | "
        "       n/a |",
        "|  1024 |    256 |   1024 |    0.640 |  1600.00 |    3.413 |    75.01 |     1850.7 | "
        "       n/a |",
        "|  1024 |    256 |   2048 |    0.7"]) + "\n"
    rows, problems = read(tmp_path, text)
    assert [(r.tool, r.model, r.n_kv, r.input_len, r.output_len, r.prefill_throughput,
             r.decode_throughput, r.batch_size) for r in rows] == [
        ("llama-sweep-bench", "/models/q8.gguf", 0, 1024, 256, 2000.00, 80.00, None),
        ("llama-sweep-bench", "/models/q8.gguf", 1024, 1024, 256, 1600.00, 75.01, None)]
    assert {(r.n_kv_max, r.n_ubatch, r.n_gpu_layers) for r in rows} == {(4096, 1024, 99)}
    assert [r.extra for r in rows] == [{"rss_hwm_mib": 1843.2}, {"rss_hwm_mib": 1850.7}]
    assert [line for line, _ in problems] == [6]


def test_the_offline_report_shows_a_sweeps_depths_and_decode_speed(tmp_path):
    from conftest import ingest_into
    from benchvault.cli import app
    from typer.testing import CliRunner

    text = "\n".join([
        "$ ./llama-sweep-bench -m /models/q8.gguf -c 4096 -ub 1024",
        "|    PP |     TG |   N_KV |   T_PP s | S_PP t/s |   T_TG s | S_TG t/s |",
        "|-------|--------|--------|----------|----------|----------|----------|",
        "|  1024 |    256 |      0 |    0.512 |  2000.00 |    3.200 |    80.00 |",
        "|  1024 |    256 |   1024 |    0.640 |  1600.00 |    3.413 |    75.01 |"]) + "\n"
    log = tmp_path / "sweep.log"
    log.write_text(text, encoding="utf-8")
    db = tmp_path / "w.db"
    ingest_into(db, log)
    out = CliRunner().invoke(app, ["report", "offline", "--db", str(db), "--table-only"]).output
    rows = [line for line in out.splitlines() if line.startswith("| ")]
    assert rows[0].split("|")[1].strip() == "N_KV"
    assert "Decode total tok/s" in rows[0]
    assert [r.split("|")[1].strip() for r in rows[1:]] == ["0", "1024"]
    assert "80.00" in rows[1] and "75.01" in rows[2]
