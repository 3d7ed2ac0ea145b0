"""Output files pasted inside notes: a `--save-result` JSON and llama-bench's
`-o json/jsonl/csv/sql`, fenced or bare or `# `-commented, are read as the file itself is, with
the note's lines and context; text no format knows is read as ordinary lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import FIXTURES, ingest_into, rows

from benchvault.reading import prefilter

LLAMA = FIXTURES / "contract" / "llama.cpp-0.3.16"
VLLM = FIXTURES / "contract" / "vllm-0.11.0"
# Where a pasted copy and the file differ by design: where it was seen, and what the note says.
PROVENANCE = {"id", "source_id", "line_start", "line_end", "raw_text", "section", "label",
              "command", "namespace", "tags", "config_id", "group_id"}
OUTPUTS = {"out_json.json": "json", "out_jsonl.jsonl": "jsonl", "out_csv.csv": "csv",
           "out_sql.sql": "sql"}
SAVED = VLLM / "c2.truth.json"      # the file vLLM 0.11's --save-result wrote for c2.txt


def table_rows(db: Path, table: str) -> list[dict]:
    return [{k: v for k, v in r.items() if k not in PROVENANCE}
            for r in rows(db, f"SELECT * FROM {table} ORDER BY rowid")]


def whole_file_rows(tmp_path: Path, raw: Path, table: str) -> list[dict]:
    db = tmp_path / f"whole-{raw.stem}.db"
    ingest_into(db, raw)
    got = table_rows(db, table)
    assert got, f"{raw.name} gave no {table} rows"
    return got


def fenced(text: str, command: str) -> str:
    return f"# Bench on the CPU box\n\nRan:\n\n```\n$ {command}\n{text}```\n\nThat's all.\n"


def bare(text: str, command: str) -> str:
    return f"Notes from the run.\n$ {command}\n{text}\nThe end of it.\n"


def commented(text: str, command: str) -> str:
    lines = [f"# {line}".rstrip() for line in [f"$ {command}", *text.splitlines()]]
    return "#!/bin/sh\n# what the last run printed:\n" + "\n".join(lines) + "\necho done\n"


@pytest.mark.parametrize("shape,suffix", [(fenced, ".md"), (bare, ".txt"), (bare, ".log"),
                                          (commented, ".sh")],
                         ids=["fenced-md", "bare-txt", "bare-log", "commented-sh"])
@pytest.mark.parametrize("name", sorted(OUTPUTS))
def test_llama_bench_output_pasted_reads_as_the_file(tmp_path, name, shape, suffix):
    raw = LLAMA / name
    want = whole_file_rows(tmp_path, raw, "llama_bench_results")
    note = tmp_path / f"note{suffix}"
    command = f"./llama-bench -m tiny-llama-F16.gguf -p 32 -n 8 -o {OUTPUTS[name]}"
    note.write_text(shape(raw.read_text(), command))
    db = tmp_path / "note.db"
    ingest_into(db, note)
    assert table_rows(db, "llama_bench_results") == want
    got = rows(db, "SELECT line_start, line_end, raw_text, command FROM llama_bench_results")
    lines = note.read_text().splitlines()
    for row in got:
        # The row points at its own record in the note (a JSON value starts with `{`).
        first = lines[row["line_start"] - 1].lstrip("# ").strip()
        assert first.startswith(("{", "\"", "INSERT")), first
        assert row["command"].endswith(f"-o {OUTPUTS[name]}")
    assert rows(db, "SELECT count(*) n FROM unparsed_blocks")[0]["n"] == 0


@pytest.mark.parametrize("shape,suffix", [(fenced, ".md"), (bare, ".txt"), (commented, ".sh")],
                         ids=["fenced-md", "bare-txt", "commented-sh"])
def test_save_result_json_pasted_reads_as_the_file(tmp_path, shape, suffix):
    want = whole_file_rows(tmp_path, SAVED, "serving_runs")
    note = tmp_path / f"note{suffix}"
    note.write_text(shape(SAVED.read_text(), "cat results/c2.json"))
    db = tmp_path / "note.db"
    ingest_into(db, note)
    got = table_rows(db, "serving_runs")
    assert got == want
    assert got[0]["duration"] == 0.16981681699871842        # the JSON's precision
    [run] = rows(db, "SELECT line_start, line_end, label FROM serving_runs")
    text = note.read_text().splitlines()
    assert text[run["line_start"] - 1].lstrip("# ") == "{"
    assert text[run["line_end"] - 1].lstrip("# ") == "}"
    if shape is fenced:
        assert run["label"] == "Bench on the CPU box"
    assert rows(db, "SELECT count(*) n FROM latency_stats")[0]["n"] == \
        rows(tmp_path / f"whole-{SAVED.stem}.db", "SELECT count(*) n FROM latency_stats")[0]["n"]


def test_printed_block_and_its_pasted_json_are_one_run(tmp_path):
    """The fixture note: the block vLLM printed and the JSON it saved, pasted one after the
    other: one run, two sightings, the JSON's values, the note's heading as its label."""
    db = tmp_path / "w.db"
    ingest_into(db, FIXTURES / "notes" / "derived-pasted-save-result.md")
    [run] = rows(db, "SELECT * FROM serving_runs")
    saved = json.loads(SAVED.read_text())
    assert run["duration"] == saved["duration"] and run["mean_ttft_ms"] == saved["mean_ttft_ms"]
    assert run["label"] == "vLLM 0.11, concurrency 2"
    assert (run["dataset_name"], run["random_input_len"], run["max_concurrency"]) == \
        ("random", 48, 2)
    seen = rows(db, "SELECT format, line_start, line_end, is_primary FROM sightings "
                    "WHERE run_id = ? ORDER BY line_start", (run["id"],))
    assert [(s["format"], s["is_primary"]) for s in seen] == [
        ("vllm_serving", 0), ("vllm_result_json", 1)]
    assert seen[0]["line_end"] < seen[1]["line_start"]


def test_json_no_format_knows_is_read_as_lines(tmp_path):
    """A config pasted as JSON and a brace that never closes are not output files: the label
    and the result block after them are read as if they were not there."""
    block = (VLLM / "c2.txt").read_text()
    start = block.index("============ Serving Benchmark Result")
    note = tmp_path / "run.log"
    note.write_text('{"model": "tiny", "lr": 0.1}\n{ this brace is prose and never closes\n'
                    "# c=2 after the warm-up\n" + block[start:])
    db = tmp_path / "w.db"
    ingest_into(db, note)
    [run] = rows(db, "SELECT label, completed, line_start FROM serving_runs")
    assert (run["label"], run["completed"], run["line_start"]) == ("c=2 after the warm-up", 8, 4)


def test_pasted_json_cut_short_warns_at_its_line(tmp_path):
    """A save-result JSON whose paste ends mid-object: a warning at the note's line, no row."""
    text = SAVED.read_text()
    note = tmp_path / "cut.md"
    note.write_text("# run\n\n```json\n" + text[: text.index('"mean_ttft_ms"')] + "```\n")
    db = tmp_path / "w.db"
    ingest_into(db, note)
    assert rows(db, "SELECT count(*) n FROM serving_runs")[0]["n"] == 0
    [warning] = rows(db, "SELECT line, reason FROM unparsed_blocks")
    assert warning["line"] == 4 and "pasted, lines 4-" in warning["reason"], warning


def test_a_structured_log_is_not_gathered_as_a_pasted_file(tmp_path):
    """JSON log lines (`{"level": ...}` each) are no output file: the prefilter passes over
    them, and in a note the engine-stats line right after one is still read at its line."""
    stats = ("INFO 01-05 11:40:26 metrics.py:467] Avg prompt throughput: 481.1 tokens/s, "
             "Avg generation throughput: 548.8 tokens/s, Running: 164 reqs, Swapped: 0 reqs, "
             "Pending: 16 reqs, GPU KV cache usage: 69.0%, CPU KV cache usage: 0.0%.")
    log_line = '{"time": "2025-03-01T12:00:01", "level": "INFO", "msg": "POST /v1/completions"}'
    chunk = f"{log_line}\n{stats}\n{log_line}\n".encode()
    found = [chunk[s:chunk.index(b"\n", s)].decode()
             for s in prefilter.for_formats().candidates(chunk)]
    assert found == [stats]
    saved_line = json.dumps({"completed": 8, "request_throughput": 1.5})
    assert prefilter.for_formats().candidates(saved_line.encode() + b"\n") == [0]
    for suffix in (".log", ".md"):
        note = tmp_path / f"server{suffix}"
        note.write_text("\n".join([log_line] * 3 + [stats] + [log_line] * 2) + "\n")
        db = tmp_path / f"w{suffix}.db"
        ingest_into(db, note)
        [row] = rows(db, "SELECT line_start, prompt_throughput FROM engine_stats")
        assert (row["line_start"], row["prompt_throughput"]) == (4, 481.1), suffix
        assert rows(db, "SELECT count(*) n FROM unparsed_blocks")[0]["n"] == 0


BLOCK = ("============ Serving Benchmark Result ============\n"
         "Successful requests:                     100\n"
         "Benchmark duration (s):                  {d}\n"
         "Request throughput (req/s):              0.73\n"
         "==================================================\n")


@pytest.mark.parametrize("before, label", [
    ("Perf is the same:\nupstream tp1\n", "upstream tp1"),       # a plain line, then the fence
    ("kimi2.7\n\n", "kimi2.7"),                                  # blank lines between
    ("<details>\n<summary>CUDA Kernel</summary>\n\n", "CUDA Kernel"),   # a folded section
    ("## Results\n\nThe numbers below were taken on a quiet machine\n\n", "Results"),  # prose
    ("## Results\n\npython3 -m sglang.bench_serving --port 30000\n\n", "Results"),   # a command
])
def test_a_short_line_right_above_a_fenced_result_names_it(tmp_path, before, label):
    note = tmp_path / "labels.md"
    note.write_text(before + "```\n" + BLOCK.format(d="137.30") + "```\n")
    db = tmp_path / "l.db"
    ingest_into(db, note)
    assert [r["label"] for r in rows(db, "SELECT label FROM serving_runs")] == [label]
