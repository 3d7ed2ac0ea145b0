"""Bad input never crashes an ingest: it becomes a warning with file:line, and nothing is lost."""

from __future__ import annotations

from typer.testing import CliRunner

from benchvault.cli import app
from conftest import SEEDS, ingest_into, rows

MI300X = (SEEDS / "mi300x_llama70b_tp-pp_specdecode.md").read_text()
BLOCK_START = MI300X.index("============ Serving Benchmark Result")
BLOCK_END = MI300X.index("==================================================", BLOCK_START) + 50
ONE_BLOCK = MI300X[BLOCK_START:BLOCK_END] + "\n"


def line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def test_truncated_block_is_a_warning_and_the_rest_still_lands(tmp_path):
    cut = ONE_BLOCK[: ONE_BLOCK.index("Mean TPOT")]
    note = tmp_path / "cut.md"
    text = "# run a\n```\n" + cut + "```\n\n# run b\n```\n" + ONE_BLOCK + "```\n"
    note.write_text(text)
    db = tmp_path / "w.db"
    (result,) = ingest_into(db, note)
    assert result.runs == 1
    (warning,) = result.warnings
    assert warning.line == 3
    assert "never ends" in warning.reason
    (unparsed,) = rows(db, "SELECT line, reason, raw_text FROM unparsed_blocks")
    assert unparsed["line"] == 3
    assert unparsed["raw_text"].startswith("============ Serving Benchmark Result")
    assert "Median TTFT (ms):" in unparsed["raw_text"]
    (run,) = rows(db, "SELECT duration, label FROM serving_runs")
    assert run == {"duration": 63.81, "label": "run b"}


def test_value_that_is_not_a_number(tmp_path):
    bad = ONE_BLOCK.replace("63.81", "sixty")
    note = tmp_path / "bad.txt"
    note.write_text("prose\n" + bad + "\n" + ONE_BLOCK)
    db = tmp_path / "w.db"
    (result,) = ingest_into(db, note)
    assert result.runs == 1
    (warning,) = result.warnings
    assert warning.line == 1 + line_of(bad, "sixty")
    assert "'sixty' is not a number" in warning.reason
    assert rows(db, "SELECT count(*) AS n FROM unparsed_blocks")[0]["n"] == 1


def test_unknown_label_goes_to_extra(tmp_path):
    odd = ONE_BLOCK.replace("Total input tokens:", "Total input tokens (cached):       17\n"
                                                   "Total input tokens:")
    note = tmp_path / "odd.txt"
    note.write_text(odd)
    db = tmp_path / "w.db"
    ingest_into(db, note)
    (run,) = rows(db, "SELECT total_input_tokens, extra FROM serving_runs")
    assert run["total_input_tokens"] == 220902
    assert run["extra"] == '{"Total input tokens (cached)": 17.0}'


def test_empty_binary_and_latin1_files(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    binary = tmp_path / "blob.log"
    binary.write_bytes(b"\x00\x01\x02PK\x03\x04" * 100)
    latin = tmp_path / "latin.txt"
    latin.write_bytes("caf\xe9 notes\n".encode("latin-1") + ONE_BLOCK.encode())
    db = tmp_path / "w.db"
    results = {r.path.rsplit("/", 1)[-1]: r for r in ingest_into(db, empty, binary, latin)}
    assert [w.reason for w in results["empty.txt"].warnings] == ["empty file"]
    assert "binary file" in results["blob.log"].warnings[0].reason
    assert results["latin.txt"].runs == 1
    assert results["latin.txt"].warnings[0].line == 1
    assert "Latin-1" in results["latin.txt"].warnings[0].reason


def test_terminal_noise_gives_the_same_values(tmp_path):
    noisy = "\r\n".join("\x1b[1;32m" + line + "\x1b[0m   " for line in ONE_BLOCK.splitlines())
    note = tmp_path / "noisy.log"
    note.write_bytes(noisy.encode())
    utf16 = tmp_path / "utf16.txt"
    utf16.write_bytes(ONE_BLOCK.encode("utf-16"))
    db = tmp_path / "w.db"
    ingest_into(db, note, utf16)
    got = rows(db, "SELECT duration, p99_itl_ms, completed, sightings FROM serving_runs")
    # the same block read through both: one run, seen in both files
    assert got == [{"duration": 63.81, "p99_itl_ms": 276.44, "completed": 1024, "sightings": 2}]
    assert [r["format"] for r in rows(db, "SELECT format FROM sightings")] == ["vllm_serving"] * 2


def test_unreadable_file_exits_1_and_keeps_the_rest(tmp_path):
    good = tmp_path / "good.txt"
    good.write_text(ONE_BLOCK)
    db = tmp_path / "w.db"
    result = CliRunner().invoke(app, ["ingest", str(tmp_path / "missing.txt"), str(good),
                                      "--db", str(db), "--json"])
    assert result.exit_code == 1
    assert rows(db, "SELECT count(*) AS n FROM serving_runs")[0]["n"] == 1
    assert '"status": "error"' in result.stdout
