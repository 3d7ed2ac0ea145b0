"""Saved result files (vLLM/SGLang JSON, GuideLLM) and /metrics snapshots: values and equality
with the printed result block of the same run."""

from __future__ import annotations

import json
import math

import pytest

from conftest import FIXTURES, ingest_into, rows

PAIR = FIXTURES / "serving_result_json"
STDOUT = PAIR / "derived-vllm-0.13-detailed-metadata-stdout.txt"
SAVED = PAIR / "derived-vllm-0.13-detailed-metadata.json"
# Columns that say where a row came from, not what the run measured.
PROVENANCE = {"id", "source_id", "line_start", "line_end", "raw_text", "section", "label",
              "tags", "format", "extra", "command", "namespace", "launch_id"}


def only_run(db, name):
    found = rows(db, "SELECT r.* FROM serving_runs r JOIN sources s ON s.id = r.source_id "
                     "WHERE s.name = ?", (name,))
    assert len(found) == 1
    return found[0]


def test_stdout_and_saved_json_of_one_run_give_equal_rows(tmp_path):
    # Apart, each gives its own row (together they are one run: tests/test_experiments.py).
    printed_db, saved_db = tmp_path / "printed.db", tmp_path / "saved.db"
    ingest_into(printed_db, STDOUT)
    ingest_into(saved_db, SAVED)
    printed, saved = only_run(printed_db, STDOUT.name), only_run(saved_db, SAVED.name)
    compared = 0
    # what only the printed run has: its command line's dataset and lengths (vLLM does not
    # save them)
    workload = {"dataset_name", "random_input_len", "random_output_len"}
    assert {c for c, v in printed.items() if v is not None and saved[c] is None
            and c not in PROVENANCE} == workload
    for column, value in printed.items():
        if column in PROVENANCE or value is None or column in workload:
            continue
        compared += 1
        other = saved[column]
        if isinstance(value, float):
            # vLLM prints `{:.2f}` of the value it saves
            assert round(other, 2) == pytest.approx(value), column
        else:
            assert other == value, column
    assert compared >= 25
    # what only the file has: std (never printed), the tokenizer, the --metadata tags
    extra_columns = {c for c, v in saved.items()
                     if v is not None and printed[c] is None and c not in PROVENANCE}
    assert extra_columns == {"std_ttft_ms", "std_tpot_ms", "std_itl_ms", "std_e2el_ms",
                             "tokenizer"}
    assert json.loads(saved["tags"]) == {"gpu": "MI300X", "tp": "1"}
    # latency_stats: the same rows, plus the std rows only the file has
    def stats(db, name):
        return {(r["metric"], r["stat"]): r["value_ms"] for r in rows(
            db, "SELECT l.* FROM latency_stats l JOIN serving_runs r ON r.id = l.run_id "
                "JOIN sources s ON s.id = r.source_id WHERE s.name = ?", (name,))}
    from_stdout, from_file = stats(printed_db, STDOUT.name), stats(saved_db, SAVED.name)
    assert set(from_file) - set(from_stdout) == {(m, "std") for m in ("ttft", "tpot", "itl", "e2el")}
    assert len(from_stdout) == 16
    for key, value in from_stdout.items():
        assert round(from_file[key], 2) == pytest.approx(value), key


def test_per_request_rows(tmp_path):
    db = tmp_path / "req.db"
    ingest_into(db, SAVED)
    got = rows(db, "SELECT * FROM serving_requests ORDER BY request_index")
    saved = json.loads(SAVED.read_text())
    assert len(got) == 8
    assert [r["input_len"] for r in got] == saved["input_lens"]
    assert [r["output_len"] for r in got] == saved["output_lens"]
    assert got[3]["ttft_ms"] == pytest.approx(saved["ttfts"][3] * 1000)
    assert got[3]["itl_count"] == len(saved["itls"][3]) == saved["output_lens"][3] - 1
    assert json.loads(got[0]["itls_ms"])[:2] == pytest.approx([x * 1000 for x in saved["itls"][0][:2]])
    assert all(r["status"] == "successful" and r["error"] is None for r in got)


def test_version_keys_goodput_typo_inf_and_append(tmp_path):
    # vLLM 0.6.4-0.9.1 saved "request_goodput:" (colon in the key); --append-result adds lines
    old = {"date": "20250301-101010", "backend": "vllm", "model_id": "m", "tokenizer_id": "m",
           "best_of": 1, "use_beam_search": False, "num_prompts": 100, "request_rate": "inf",
           "burstiness": 1.0, "max_concurrency": None, "duration": 12.5, "completed": 100,
           "total_input_tokens": 1000, "total_output_tokens": 2000, "request_throughput": 8.0,
           "request_goodput:": 7.5, "output_throughput": 160.0, "total_token_throughput": 240.0,
           "mean_ttft_ms": 20.0, "p99.9_itl_ms": 44.4, "std_ttft_ms": 1.5, "env": "prod"}
    newer = dict(old, **{"request_goodput": 6.0, "request_rate": 4.0, "completed": 99})
    del newer["request_goodput:"]
    path = tmp_path / "results.json"
    path.write_text(json.dumps(old) + "\n" + json.dumps(newer))
    db = tmp_path / "v.db"
    ingest_into(db, path)
    got = rows(db, "SELECT * FROM serving_runs ORDER BY line_start")
    assert [r["request_goodput"] for r in got] == [7.5, 6.0]
    assert got[0]["request_rate"] == math.inf and got[1]["request_rate"] == 4.0
    assert [r["line_start"] for r in got] == [1, 2]
    assert json.loads(got[0]["tags"]) == {"env": "prod"}
    pct = rows(db, "SELECT percentile, value_ms FROM latency_stats WHERE stat = 'p99.9'")
    assert pct[0] == {"percentile": 99.9, "value_ms": 44.4}


def test_detected_by_content_not_name(tmp_path):
    renamed = tmp_path / "run-7.txt"
    renamed.write_bytes(SAVED.read_bytes())
    db = tmp_path / "r.db"
    ingest_into(db, renamed)
    assert only_run(db, "run-7.txt")["format"] == "vllm_result_json"


def test_metrics_rates_between_scrapes(tmp_path):
    db = tmp_path / "m.db"
    ingest_into(db, FIXTURES / "prometheus_metrics" / "derived-vllm-v0-two-scrapes.log")
    got = {r["metric"] + (r["labels"] or ""): r for r in rows(db, "SELECT * FROM metrics_rates")}
    prompt = got['vllm:prompt_tokens_total{"model_name": "bigscience/bloom-560m"}']
    assert (prompt["previous_value"], prompt["value"], prompt["delta"]) == (1196.0, 1404.0, 208.0)
    assert prompt["rate_per_s"] is None            # vLLM prints no sample timestamps
    gen = got['vllm:generation_tokens_total{"model_name": "bigscience/bloom-560m"}']
    assert gen["delta"] == 13288.0
    assert not any("num_requests_running" in k for k in got)      # a gauge has no rate
    assert len(got) == 6


def test_metrics_rates_per_second_with_timestamps(tmp_path):
    polls = tmp_path / "polls.txt"
    polls.write_text(
        "$ curl -s localhost:8000/metrics\n"
        "# TYPE vllm:generation_tokens_total counter\n"
        'vllm:generation_tokens_total{model_name="m"} 1000.0 1700000000000\n'
        "\n$ curl -s localhost:8000/metrics\n"
        "# TYPE vllm:generation_tokens_total counter\n"
        'vllm:generation_tokens_total{model_name="m"} 1600.0 1700000002000\n')
    db = tmp_path / "t.db"
    ingest_into(db, polls)
    got = rows(db, "SELECT scrape_index, delta, seconds, rate_per_s FROM metrics_rates")
    assert got == [{"scrape_index": 1, "delta": 600.0, "seconds": 2.0, "rate_per_s": 300.0}]


def test_scrapes_without_blank_line_split_on_repeated_family(tmp_path):
    text = (FIXTURES / "prometheus_metrics" / "real-vllm-v0-ibm-vllm-pr18.txt").read_text()
    body = "".join(l for l in text.splitlines(True) if not l.startswith("# source")
                   and "search excerpt" not in l)
    path = tmp_path / "twice.txt"
    path.write_text(body + body)
    db = tmp_path / "s.db"
    ingest_into(db, path)
    assert [r["samples"] for r in rows(db, "SELECT samples FROM metrics_scrapes")] == [10, 10]


def _detailed(requests: int) -> dict:
    """The saved fixture's run with ``requests`` requests (vLLM --save-detailed's arrays)."""
    saved = json.loads(SAVED.read_text())
    for key in ("input_lens", "output_lens", "ttfts", "itls", "generated_texts", "errors"):
        saved[key] = [saved[key][i % len(saved[key])] for i in range(requests)]
    saved["completed"] = saved["num_prompts"] = requests
    return saved


def test_a_detailed_result_is_read_an_item_at_a_time(tmp_path, monkeypatch):
    """A --save-detailed result is one object whose per-request arrays are most of the file:
    it is read a member and an item at a time (the buffer stays a few chunks long on a
    ~10 MB object), ``generated_texts`` is not kept, and a value past the buffer is decoded
    a few times, not once per chunk (a 52 MB object took 347 s that way)."""
    from benchvault.reading import jsonstream

    saved = _detailed(6000)
    saved["generated_texts"] = ["lorem ipsum " * 60] * 6000
    path = tmp_path / "detailed.json"
    path.write_text(json.dumps(saved))
    assert path.stat().st_size > 8 << 20

    longest, decodes = [0], [0]
    fill, decoder = jsonstream.JsonStream._fill, json.JSONDecoder.raw_decode

    def watched_fill(self, *args):
        more = fill(self, *args)
        longest[0] = max(longest[0], len(self.buf))
        return more

    def counted(self, *args):
        decodes[0] += 1
        return decoder(self, *args)

    monkeypatch.setattr(jsonstream.JsonStream, "_fill", watched_fill)
    monkeypatch.setattr(json.JSONDecoder, "raw_decode", counted)
    with open(path) as fh:
        (record, line), = jsonstream.records(
            fh, arrays=frozenset({"ttfts", "itls"}), dropped=frozenset({"generated_texts"}))
    assert line == 1 and "generated_texts" not in record
    assert record["itls"] == saved["itls"] and record["ttfts"] == saved["ttfts"]
    assert longest[0] < 4 * jsonstream.CHUNK

    # The same object read whole as one value: a handful of decodes, not one per 64 KB.
    decodes[0] = 0
    with open(path) as fh:
        whole, _ = jsonstream.JsonStream(fh).value()
    assert whole == saved and decodes[0] < 20

    monkeypatch.undo()
    db = tmp_path / "w.db"
    ingest_into(db, path)
    got = rows(db, "SELECT request_index, ttft_ms, itl_count FROM serving_requests "
                   "ORDER BY request_index")
    assert len(got) == 6000
    assert got[5999]["ttft_ms"] == pytest.approx(saved["ttfts"][5999] * 1000)
    assert got[5999]["itl_count"] == len(saved["itls"][5999])


@pytest.mark.parametrize("text", [
    '{"a": 1 "b": 2}', '{"a": 1,, "b": 2}', '{"ttfts": [1, 2,]}', '{"ttfts": [1, 2',
    '{"a": 1', '{1: 2}'])
def test_a_result_object_read_by_members_is_as_strict_as_json(text):
    import io

    from benchvault.reading.jsonstream import records

    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        list(records(io.StringIO(text), arrays=frozenset({"ttfts"})))


def test_result_objects_read_by_members_equal_json_loads():
    import io

    from benchvault.reading.jsonstream import records

    for path in sorted(PAIR.glob("*.json*")):
        if path.name.endswith(".expected.json"):
            continue
        text = path.read_text()
        whole = [json.loads(line) for line in text.splitlines() if line.strip()] \
            if path.suffix == ".jsonl" else [json.loads(text)]
        read = list(records(io.StringIO(text), arrays=frozenset({"ttfts", "itls"})))
        assert [value for value, _ in read] == whole, path.name
        if path.suffix == ".jsonl":
            assert [line for _, line in read] == list(range(1, len(whole) + 1))
