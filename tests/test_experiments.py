"""Run identity: one run however often it was seen, every sighting kept, files coming and going.

Values asserted here are read off the fixtures: the printed block of
fixtures/serving_result_json/derived-vllm-0.13-detailed-metadata-stdout.txt (two decimals) and
the --save-result JSON of that same run beside it (full precision).
"""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from benchvault.cli import app
from conftest import FIXTURES, SEEDS, ingest_into, rows

PAIR = FIXTURES / "serving_result_json"
STDOUT = PAIR / "derived-vllm-0.13-detailed-metadata-stdout.txt"
SAVED = PAIR / "derived-vllm-0.13-detailed-metadata.json"
STRIX = SEEDS / "strix-halo_vllm-vs-llamacpp.md"


def labelled_note(tmp_path, label="# MI300X, c=4, first try"):
    """The printed block of the pair, pasted into a note under a label."""
    note = tmp_path / "note.txt"
    note.write_text(f"{label}\n{STDOUT.read_text()}")
    return note


def the_runs(db):
    return rows(db, "SELECT * FROM serving_runs ORDER BY id")


def test_printed_block_and_its_saved_json_are_one_run(tmp_path):
    db = tmp_path / "w.db"
    ingest_into(db, labelled_note(tmp_path), SAVED)
    [run] = the_runs(db)
    saved = json.loads(SAVED.read_text())
    # the JSON's precision where the note printed two decimals
    assert run["duration"] == saved["duration"] == 15.410631
    assert run["output_throughput"] == pytest.approx(86.8880709686709)
    assert run["mean_ttft_ms"] == saved["mean_ttft_ms"]
    # the note's label and command (the JSON has neither), the JSON's std and tags
    assert run["label"] == "MI300X, c=4, first try"
    assert run["dataset_name"] == "random" and run["random_input_len"] == 512
    assert run["std_ttft_ms"] == saved["std_ttft_ms"]
    assert json.loads(run["tags"]) == {"gpu": "MI300X", "tp": "1"}
    assert run["format"] == "vllm_result_json" and run["sightings"] == 2
    seen = rows(db, "SELECT s.name, g.format, g.line_start, g.is_primary FROM sightings g "
                    "JOIN sources s ON s.id = g.source_id WHERE g.run_id = ? ORDER BY g.id",
                (run["id"],))
    assert seen == [
        {"name": "note.txt", "format": "vllm_serving", "line_start": 9, "is_primary": 0},
        {"name": SAVED.name, "format": "vllm_result_json", "line_start": 1, "is_primary": 1}]
    # every latency stat either printed, each at the JSON's precision
    stats = {(r["metric"], r["stat"]): r["value_ms"] for r in rows(db, "SELECT * FROM "
                                                                   "latency_stats")}
    assert len(stats) == 20
    assert stats[("ttft", "p99")] == saved["p99_ttft_ms"]
    assert stats[("ttft", "std")] == saved["std_ttft_ms"]
    # the per-request rows come with the JSON and belong to the one run
    assert rows(db, "SELECT count(*) AS n, min(run_id) AS run FROM serving_requests") == [
        {"n": 8, "run": run["id"]}]


def test_one_note_under_two_names_adds_no_run(tmp_path):
    first, second = tmp_path / "strix.md", tmp_path / "copy of strix.txt"
    shutil.copy(STRIX, first)
    shutil.copy(STRIX, second)
    db = tmp_path / "w.db"
    ingest_into(db, first)
    before = rows(db, "SELECT id, output_throughput FROM serving_runs ORDER BY id")
    results = ingest_into(db, second)
    assert len(before) == 11
    assert rows(db, "SELECT id, output_throughput FROM serving_runs ORDER BY id") == before
    assert results[0].runs == 11 and results[0].known >= 11
    assert rows(db, "SELECT count(*) AS n FROM sightings WHERE kind = 'serving_runs'"
                ) == [{"n": 22}]
    assert rows(db, "SELECT DISTINCT sightings FROM serving_runs") == [{"sightings": 2}]
    # llama-bench rows, too
    assert rows(db, "SELECT count(*) AS n, min(s) AS lo FROM (SELECT count(*) AS s FROM "
                    "sightings WHERE kind = 'llama_bench_results' GROUP BY llama_bench_id)"
                ) == [{"n": 16, "lo": 2}]


def test_changing_or_deleting_one_file_keeps_the_other_files_runs(tmp_path):
    note, saved = labelled_note(tmp_path), tmp_path / "result.json"
    shutil.copy(SAVED, saved)
    db = tmp_path / "w.db"
    ingest_into(db, note, saved)
    [run] = the_runs(db)
    # The note changes (a new label): the run stays, with the JSON's numbers and the new label.
    note.write_text(note.read_text().replace("first try", "second look"))
    ingest_into(db, note)
    [again] = the_runs(db)
    assert again["id"] == run["id"] and again["duration"] == 15.410631
    assert again["label"] == "MI300X, c=4, second look" and again["sightings"] == 2
    # The JSON is deleted: the run is what the note printed, to its two decimals.
    saved.unlink()
    result = CliRunner().invoke(app, ["ingest", str(note), str(saved), "--db", str(db),
                                      "--json"])
    assert result.exit_code == 0, result.output
    assert {r["path"]: r["status"] for r in json.loads(result.stdout)}[str(saved.resolve())] \
        == "removed"
    [left] = the_runs(db)
    assert left["id"] == run["id"]
    assert (left["duration"], left["output_throughput"], left["std_ttft_ms"]) == (15.41, 86.89,
                                                                                  None)
    assert left["format"] == "vllm_serving" and left["sightings"] == 1 and left["tags"] is None
    assert rows(db, "SELECT count(*) AS n FROM serving_requests") == [{"n": 0}]
    assert rows(db, "SELECT count(*) AS n FROM latency_stats") == [{"n": 16}]
    # The note goes too: nothing is left of the run.
    note.unlink()
    CliRunner().invoke(app, ["ingest", str(tmp_path), "--db", str(db)])
    assert the_runs(db) == [] and rows(db, "SELECT count(*) AS n FROM sightings") == [{"n": 0}]
    assert rows(db, "SELECT count(*) AS n FROM configurations") == [{"n": 0}]


def test_two_notes_contradicting_each_other_keep_both_and_say_so(tmp_path):
    good = labelled_note(tmp_path)
    bad = tmp_path / "retyped.txt"
    # Same requests and duration, but the throughput retyped wrongly.
    bad.write_text(good.read_text().replace("86.89", "68.89"))
    db = tmp_path / "w.db"
    results = ingest_into(db, good, bad)
    assert [r["output_throughput"] for r in the_runs(db)] == [86.89, 68.89]
    [warning] = [w for w in results[1].warnings if "contradicts" in w.reason]
    assert str(good.resolve()) + ":9" in warning.reason
    assert "output_throughput 68.89 vs 86.89" in warning.reason
    assert warning.line == 9
    assert rows(db, "SELECT count(*) AS n FROM unparsed_blocks WHERE reason LIKE "
                    "'%contradicts%'") == [{"n": 1}]


def test_repeats_that_share_a_duration_are_two_runs_not_a_contradiction(tmp_path):
    """Three repeats printed with one duration to the digit (and the same request count), but
    every other figure their own: three runs, and no warning -- a contradiction is one run
    printed two ways, agreeing on nearly everything."""
    text = (FIXTURES / "experiments" / "derived-three-repeats.md").read_text()
    for other in ("31.62", "30.12"):
        text = text.replace(f"Benchmark duration (s):                  {other}",
                            "Benchmark duration (s):                  30.84")
    note = tmp_path / "same-duration.md"
    note.write_text(text)
    db = tmp_path / "w.db"
    [result] = ingest_into(db, note)
    runs = the_runs(db)
    assert [r["duration"] for r in runs] == [30.84, 30.84, 30.84]
    assert [r["mean_ttft_ms"] for r in runs] == [52.31, 55.87, 49.9]
    assert not [w for w in result.warnings if "contradicts" in w.reason]


def test_two_table_rows_that_share_one_rounded_figure_are_two_runs(tmp_path):
    # (each holds figures the other lacks; one throughput rounded alike is no evidence)
    note = tmp_path / "note.md"
    note.write_text("| Test | Tok/s | Time/Token (ms) |\n|---|---|---|\n| Code (500) | 6.41 | 155.99 |\n"
                    "\n### Latency\n\n| Test | TTFT (ms) | Tokens/s (streaming) |\n|---|---|---|\n"
                    "| Short | 171.38 | 6.41 |\n", encoding="utf-8")
    db = tmp_path / "w.db"
    ingest_into(db, note)
    assert rows(db, "SELECT label, output_throughput, mean_tpot_ms, mean_ttft_ms FROM serving_runs "
                    "ORDER BY line_start") == [
        {"label": "Code (500)", "output_throughput": 6.41, "mean_tpot_ms": 155.99,
         "mean_ttft_ms": None},
        {"label": "Short", "output_throughput": 6.41, "mean_tpot_ms": None,
         "mean_ttft_ms": 171.38}]


def test_repeats_that_differ_are_separate_runs(tmp_path):
    """Repeats of one configuration share their counts (same prompts) but not their numbers."""
    db = tmp_path / "w.db"
    ingest_into(db, FIXTURES / "experiments" / "derived-three-repeats.md")
    assert len(the_runs(db)) == 3
    assert rows(db, "SELECT count(*) AS n FROM unparsed_blocks") == [{"n": 0}]


# --- repeats and comparable groups in reports and Datasette ---------------------------------

def markdown_rows(text: str) -> list[list[str]]:
    import re
    out = [[c.strip() for c in re.split(r"(?<!\\)\|", ln)[1:-1]]
           for ln in text.splitlines() if ln.startswith("|")]
    return [r for r in out if not all(set(c) <= set("-: ") for c in r)]


def test_three_repeats_render_as_mean_and_std_with_n(tmp_path):
    from benchvault.browse.queries import configurations
    from benchvault.serve import read_schema

    db = tmp_path / "w.db"
    ingest_into(db, FIXTURES / "experiments" / "derived-three-repeats.md")
    result = CliRunner().invoke(app, ["report", "sweep", "--db", str(db), "--table-only"])
    assert result.exit_code == 0, result.output
    [header, row] = markdown_rows(result.stdout)
    cell = dict(zip(header, row))
    # printed: 830.09, 809.61, 849.93 tok/s; TTFT 52.31, 55.87, 49.90 ms
    assert cell["Output Tok/s"] == "829.88 ± 20.16"
    assert cell["Mean TTFT (ms)"] == "52.69 ± 3.00"
    assert cell["n"] == "3"
    # the configuration is the caption: nothing varies within one configuration
    assert "Concurrency 16" in result.stdout and "Input len 1024" in result.stdout
    # best / last / all
    best = CliRunner().invoke(app, ["report", "sweep", "--db", str(db), "--table-only",
                                    "--repeats", "best"])
    assert dict(zip(*markdown_rows(best.stdout)))["Output Tok/s"] == "849.93"
    last = CliRunner().invoke(app, ["report", "sweep", "--db", str(db), "--table-only",
                                    "--repeats", "last"])
    assert dict(zip(*markdown_rows(last.stdout)))["Output Tok/s"] == "849.93"
    every = markdown_rows(CliRunner().invoke(app, ["report", "sweep", "--db", str(db),
                                                   "--table-only", "--repeats", "all"]).stdout)
    assert [r[header.index("Output Tok/s")] for r in every[1:]] == ["830.09", "809.61",
                                                                    "**849.93**"]
    # Datasette's configuration view: the same numbers
    sql = configurations(read_schema(db))
    [config] = rows(db, sql, {"group": ""})
    assert config["n"] == 3
    assert round(config["output_throughput"], 2) == 829.88
    assert round(config["output_throughput_std"], 2) == 20.16
    assert (config["output_throughput_min"], config["output_throughput_max"]) == (809.61,
                                                                                  849.93)
    assert round(config["mean_ttft_ms_std"], 2) == 3.00


def test_report_all_on_the_seed_notes_is_one_table_per_experiment(tmp_path):
    db = tmp_path / "seeds.db"
    ingest_into(db, SEEDS)
    result = CliRunner().invoke(app, ["report", "sweep", "--db", str(db)])
    assert result.exit_code == 0, result.output
    sections = result.stdout.split("\n## ")[1:]
    titles = [s.splitlines()[0] for s in sections]
    # Groups come in the order of their titles, whatever order the notes were ingested in.
    assert titles == ["Concurrency sweep: deepseek-v3 · H100 · sharegpt",
                      "Concurrency sweep: llama-2-7b · Strix Halo · sharegpt",
                      "Concurrency sweep: llama-3.1-70b · MI300X · sharegpt"]
    tables = {t.split(": ", 1)[1].split(" · ")[0]: markdown_rows(s)
              for t, s in zip(titles, sections)}
    # What varies leads each table; the rest is said once above it.
    assert tables["deepseek-v3"][0][:5] == ["Engine", "TP", "PP", "Num prompts", "Concurrency"]
    assert "Every row: Hardware H100 · Model deepseek-ai/DeepSeek-V3" in sections[0]
    assert tables["llama-3.1-70b"][0][:5] == ["TP", "PP", "Replicas", "Draft model",
                                             "Spec tokens"]
    assert [r[:3] for r in tables["llama-3.1-70b"][1:4]] == [["8", "1", "1"], ["2", "4", "1"],
                                                          ["2", "1", "4"]]
    assert tables["llama-2-7b"][0][:4] == ["Engine", "Model", "Quant", "Concurrency"]
    assert [r[2] for r in tables["llama-2-7b"][1:]] == ["", "", "", "w8a8", "GPTQ", "F16",
                                                       "F16", "Q8_0", "Q8_0", "Q4_K_M",
                                                       "Q4_K_M"]
    # Bold inside each table only: the best output throughput of each experiment.
    for name, best in (("deepseek-v3", "604.53"), ("llama-3.1-70b", "2993.85"),
                       ("llama-2-7b", "178.68")):
        column = tables[name][0].index("Output Tok/s")
        assert [r[column] for r in tables[name][1:] if r[column].startswith("**")] == [
            f"**{best}**"]


def test_a_source_filter_finds_a_run_in_every_file_it_was_seen_in(tmp_path):
    """A run printed in a note and saved as JSON takes its values (and its `source`) from the
    JSON, the more precise; `--where source=<the note>` still finds it there."""
    db = tmp_path / "w.db"
    ingest_into(db, STDOUT, SAVED)
    [run] = the_runs(db)
    assert run["sightings"] == 2
    assert rows(db, "SELECT name FROM sources WHERE id = ?", [run["source_id"]]) == \
        [{"name": SAVED.name}]
    for kind in ("sweep", "engines"):
        for name in (STDOUT.name, SAVED.name):
            result = CliRunner().invoke(app, ["report", kind, "--db", str(db), "--where",
                                              f"source={name}"])
            assert result.exit_code == 0, result.output
            assert "No rows match" not in result.stdout, (kind, name)
            assert str(run["output_throughput"])[:5] in result.stdout, (kind, name)
