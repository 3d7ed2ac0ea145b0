"""GuideLLM's console report read into the same rows as its benchmarks.json."""

from __future__ import annotations

from conftest import FIXTURES, ingest_into, rows

from benchvault.parsers.guidellm_console import header_keys, parse_report

CONSOLE = FIXTURES / "guidellm_console"
JSON = FIXTURES / "guidellm_report" / "derived-guidellm-0.2-sweep.json"


def test_console_and_json_of_one_run_are_one_run_each(tmp_path):
    db = tmp_path / "w.db"
    ingest_into(db, JSON)
    ingest_into(db, CONSOLE / "derived-guidellm-0.2-sweep-same-run-as-json.txt")
    runs = rows(db, "SELECT label, model, max_concurrency, completed, sightings, mean_ttft_ms "
                    "FROM serving_runs ORDER BY id")
    # Both benchmarks seen twice: the printed table agrees with the JSON at its precision.
    assert [(r["label"], r["max_concurrency"], r["completed"], r["sightings"]) for r in runs] == \
        [("synchronous", 1, 26, 2), ("concurrent 16", 16, 282, 2)]
    assert runs[0]["mean_ttft_ms"] == 48.31        # the JSON's precision wins
    formats = {r["format"] for r in rows(db, "SELECT format FROM sightings")}
    assert formats == {"guidellm_report", "guidellm_console"}


def test_console_run_has_the_json_configuration(tmp_path):
    columns = "label, model, backend, max_concurrency, request_rate, completed, failed"
    got = {}
    for name, path in (("json", JSON),
                       ("console", CONSOLE / "derived-guidellm-0.2-sweep-same-run-as-json.txt")):
        db = tmp_path / f"{name}.db"
        ingest_into(db, path)
        got[name] = rows(db, f"SELECT {columns} FROM serving_runs ORDER BY id")
    assert got["json"] == got["console"]


def test_header_spans_fill_their_columns():
    # 0.4+: a group name then a zero-width cell per further column; a cell of spaces is empty
    keys = header_keys([[" Benchmark ", " TTFT ", "", " ITL "],
                        [" Strategy  ", " ms ", "", " ms "],
                        ["           ", " Mdn ", " p95 ", " Mdn "]])
    assert keys == [("Benchmark", "Strategy"), ("TTFT", "ms", "Mdn"), ("TTFT", "ms", "p95"),
                    ("ITL", "ms", "Mdn")]


def test_prose_between_tables_is_read_past():
    text = ("Benchmarks Stats:\n=====\nMetadata | Request Stats\n Benchmark| Per Second\n"
            "----------|-----------\nsynchronous|       0.45\n=====\n"
            "Saved to benchmarks.json\n")
    sections = parse_report(text)
    assert [s[0] for s in sections] == ["table"]
    headers, values = sections[0][3][0]
    assert values[0][1] == ["synchronous", "       0.45"]
