"""Bad input never crashes an ingest: it becomes a warning with file:line, and nothing is lost.
Bad arguments never crash a command: one line naming the thing, a documented exit code
(benchvault/errors.py), the warehouse untouched."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchvault.ingest import find as files_module
from benchvault.cli import app
from benchvault.errors import ExitCode
from benchvault.reading.tablecells import arrow_cell
from conftest import SEEDS, ingest_into, rows

MI300X = (SEEDS / "mi300x_llama70b_tp-pp_specdecode.md").read_text()
BLOCK_START = MI300X.index("============ Serving Benchmark Result")
BLOCK_END = MI300X.index("==================================================", BLOCK_START) + 50
ONE_BLOCK = MI300X[BLOCK_START:BLOCK_END] + "\n"


def line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def test_block_cut_short_keeps_what_it_printed(tmp_path):
    cut = ONE_BLOCK[: ONE_BLOCK.index("Mean TPOT")]
    note = tmp_path / "cut.md"
    other = ONE_BLOCK.replace("63.81", "65.12").replace("564.63", "464.63") \
        .replace("363.05", "263.05").replace("2301.28", "2201.28")
    text = "# run a\n```\n" + cut + "```\n\n# run b\n```\n" + other + "```\n"
    note.write_text(text)
    db = tmp_path / "w.db"
    (result,) = ingest_into(db, note)
    assert result.runs == 2
    (warning,) = result.warnings
    assert warning.line == 3 + cut.count("\n")
    assert "is cut short here" in warning.reason and "marked incomplete" in warning.reason
    (unparsed,) = rows(db, "SELECT line, reason, raw_text FROM unparsed_blocks")
    assert unparsed["raw_text"].startswith("============ Serving Benchmark Result")
    assert "Median TTFT (ms):" in unparsed["raw_text"]
    a, b = rows(db, "SELECT label, duration, mean_ttft_ms, mean_tpot_ms, extra "
                    "FROM serving_runs ORDER BY label")
    assert (a["label"], a["duration"], a["mean_ttft_ms"]) == ("run a", 63.81, 564.63)
    assert a["mean_tpot_ms"] is None and '"incomplete": true' in a["extra"]
    assert (b["label"], b["duration"], b["mean_ttft_ms"]) == ("run b", 65.12, 464.63)
    assert b["mean_tpot_ms"] is not None and "incomplete" not in (b["extra"] or "")


def test_block_with_only_its_title_is_a_warning(tmp_path):
    title = ONE_BLOCK.splitlines()[0]
    note = tmp_path / "cut.md"
    note.write_text("# run a\n```\n" + title + "\n```\n\n# run b\n```\n" + ONE_BLOCK + "```\n")
    db = tmp_path / "w.db"
    (result,) = ingest_into(db, note)
    assert result.runs == 1
    (warning,) = result.warnings
    assert warning.line == 3 and "never ends" in warning.reason
    (run,) = rows(db, "SELECT duration, label FROM serving_runs")
    assert run == {"duration": 63.81, "label": "run b"}


def test_value_that_is_not_a_number(tmp_path):
    bad = ONE_BLOCK.replace("63.81", "sixty")
    note = tmp_path / "bad.txt"
    note.write_text("prose\n" + bad + "\n" + ONE_BLOCK)
    db = tmp_path / "w.db"
    (result,) = ingest_into(db, note)
    # The value costs itself only: null, with a warning; the rest of its run is stored.
    assert result.runs == 2
    (warning,) = result.warnings
    assert warning.line == 1 + line_of(bad, "sixty")
    assert "'sixty' is not a number" in warning.reason
    # ...and, all else equal, it is a sighting of the same run printed whole after it.
    assert rows(db, "SELECT duration FROM serving_runs") == [{"duration": 63.81}]
    assert rows(db, "SELECT count(*) AS n FROM sightings")[0]["n"] == 2
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
    assert run["extra"] == '{"total_input_tokens_cached": 17.0}'


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


# ---------------------------------------------------------------- file text is data

def hostile_note(path: Path) -> Path:
    """A llama-bench table whose cells hold rich markup and a 1 MB number."""
    head = ("# [link=http://x]evil[/link] run\n"
            "| model | size | params | backend | threads | test | t/s |\n"
            "| --- | ---: | ---: | --- | ---: | ---: | ---: |\n")
    rows_ = ["| llama 1B Q4_K | 636.18 MiB | 1.10 B | CPU | 12 | pp512 | 194.05 ± 0.65 |",
             "| llama 1B Q4_K | 636.18 MiB | 1.10 B | CPU | [/bold] oops | pp512 | 1.0 ± 0.1 |",
             "| llama 1B Q4_K | 636.18 MiB | 1.10 B | CPU | 12 | tg128 | [link=http://x]x |",
             "| llama 1B Q4_K | 636.18 MiB | 1.10 B | CPU | 12 | tg128 | " + "9" * 1_000_000
             + "x |"]
    path.write_text(head + "\n".join(rows_) + "\n")
    return path


def test_file_text_reaches_the_terminal_as_text_cut_short(tmp_path):
    note = hostile_note(tmp_path / "[bold]hostile.md")
    db = tmp_path / "w.db"
    result = CliRunner().invoke(app, ["ingest", str(note), "--db", str(db)])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "Traceback" not in out
    # the markup is printed as the characters it is, the file name too
    assert "n_threads: '[/bold] oops' is not a whole number" in out
    assert "t/s: '[link=http://x]x'" in out
    assert "[bold]hostile.md:" in out
    # the 1 MB cell: 200 characters and where the rest is
    long_line = next(line for line in out.splitlines() if "9999" in line)
    assert long_line.endswith("… (full text in unparsed_blocks)")
    assert len(long_line) < 400
    kept = rows(db, "SELECT line, reason, raw_text FROM unparsed_blocks ORDER BY line")
    assert [r["line"] for r in kept] == [5, 6, 7]
    assert "9" * 1_000_000 in kept[2]["reason"] + (kept[2]["raw_text"] or "")
    # An unreadable cell costs that cell (null); a t/s of words (no result) costs the row.
    assert rows(db, "SELECT n_threads, avg_ts FROM llama_bench_results ORDER BY line_start") \
        == [{"n_threads": 12, "avg_ts": 194.05}, {"n_threads": None, "avg_ts": 1.0},
            {"n_threads": 12, "avg_ts": None}]


def test_controls_in_file_text_are_shown_escaped():
    from benchvault.console import shown

    assert shown("a\x1b]0;title\x07b\nc\td") == "a\\x1b]0;title\\x07b\\nc d"
    assert shown("x" * 300, more=" (more)") == "x" * 200 + "… (more)"


# ---------------------------------------------------------------- bad arguments, every command

def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def listing(folder: Path) -> set[str]:
    """What is in ``folder`` (SQLite's own -wal/-shm aside)."""
    return {str(p.relative_to(folder)) for p in folder.rglob("*")
            if not p.name.endswith(("-wal", "-shm"))}


UNWRITABLE = Path("/proc/benchvault-nowhere")      # not writable, even by root


@pytest.fixture
def bench(tmp_path, seeds_db, monkeypatch):
    """A work folder with a copy of the seeds warehouse, a note and a markdown file."""
    db = tmp_path / "w.db"
    shutil.copy(seeds_db, db)
    note = tmp_path / "note.md"
    note.write_text(ONE_BLOCK)
    (tmp_path / "notes.md").write_text("# my notes\nnot a database\n")
    (tmp_path / "bad.j2").write_text("{% for r in reports %}{{ r.title \n")
    monkeypatch.chdir(tmp_path)
    # serve must stop at its checks: never start Datasette here
    monkeypatch.setattr("benchvault.serve.run_datasette",
                        lambda *a, **k: pytest.fail("serve started on bad input"))
    return tmp_path


def locked(folder: Path, monkeypatch):
    """The warehouse held by another connection (exclusive), with a short timeout."""
    monkeypatch.setenv("BENCHVAULT_BUSY_TIMEOUT", "0.2")
    holder = sqlite3.connect(folder / "w.db", isolation_level=None)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("UPDATE sources SET name = name WHERE 0")
    return holder


def future(folder: Path, monkeypatch):
    conn = sqlite3.connect(folder / "w.db")
    conn.execute("PRAGMA user_version = 999")
    conn.commit()
    conn.close()


def vanishing(folder: Path, monkeypatch):
    """A file that is listed by the walk and gone when it is read."""
    walk = files_module.expand_paths

    def listed_then_gone(paths, skipped=None):
        found = walk(paths, skipped)
        (folder / "note.md").unlink()
        return found

    monkeypatch.setattr(files_module, "expand_paths", listed_then_gone)


NOT_SQLITE = ["--db", "notes.md"]
# (bad input, command line, setup, exit code); DB marks where the warehouse's --db goes.
DB = ["--db", "w.db"]
CASES = [
    ("not-sqlite", ["ingest", "note.md", *NOT_SQLITE], None, ExitCode.BAD_DATABASE),
    ("not-sqlite", ["report", "sweep", *NOT_SQLITE], None, ExitCode.BAD_DATABASE),
    ("not-sqlite", ["compare", "--by", "engine", "--baseline", "vllm", *NOT_SQLITE], None,
     ExitCode.BAD_DATABASE),
    ("not-sqlite", ["export", "--out", "x", *NOT_SQLITE], None, ExitCode.BAD_DATABASE),
    ("not-sqlite", ["serve", *NOT_SQLITE], None, ExitCode.BAD_DATABASE),
    ("not-sqlite", ["report", "--update", "README.md", *NOT_SQLITE], None,
     ExitCode.BAD_DATABASE),
    ("no-database", ["serve", "--db", "nothing.db"], None, ExitCode.BAD_DATABASE),
    ("no-database", ["report", "--db", "nothing.db"], None, ExitCode.BAD_DATABASE),
    ("directory", ["ingest", "note.md", "--db", "."], None, ExitCode.BAD_DATABASE),
    ("unwritable", ["ingest", "note.md", "--db", str(UNWRITABLE / "w.db")], None,
     ExitCode.CANNOT_WRITE),
    ("unwritable", ["ingest", "note.md", "--db", "/proc/w.db"], None, ExitCode.CANNOT_WRITE),
    ("unwritable", ["report", "sweep", *DB, "--out", str(UNWRITABLE)], None,
     ExitCode.CANNOT_WRITE),
    ("unwritable", ["compare", "--by", "engine", "--baseline", "vllm", *DB, "--out",
                    str(UNWRITABLE)], None, ExitCode.CANNOT_WRITE),
    ("unwritable", ["export", *DB, "--out", str(UNWRITABLE)], None, ExitCode.CANNOT_WRITE),
    ("unwritable", ["export", *DB, "--out", "note.md"], None, ExitCode.CANNOT_WRITE),
    ("locked", ["ingest", "note.md", *DB], locked, ExitCode.BUSY),
    ("locked", ["ingest", "note.md", *DB, "--force"], locked, ExitCode.BUSY),
    ("locked", ["report", "sweep", *DB], locked, ExitCode.BUSY),
    ("locked", ["compare", "--by", "engine", "--baseline", "vllm", *DB], locked, ExitCode.BUSY),
    ("locked", ["export", *DB, "--out", "x"], locked, ExitCode.BUSY),
    ("locked", ["serve", *DB], locked, ExitCode.BUSY),
    ("future-schema", ["ingest", "note.md", *DB], future, ExitCode.BAD_DATABASE),
    ("future-schema", ["report", "sweep", *DB], future, ExitCode.BAD_DATABASE),
    ("future-schema", ["compare", "--by", "engine", "--baseline", "vllm", *DB], future,
     ExitCode.BAD_DATABASE),
    ("future-schema", ["export", *DB, "--out", "x"], future, ExitCode.BAD_DATABASE),
    ("future-schema", ["serve", *DB], future, ExitCode.BAD_DATABASE),
    ("unknown-column", ["report", "sweep", *DB, "--where", "nosuch=1"], None, ExitCode.USAGE),
    ("unknown-column", ["compare", "--by", "engine", "--baseline", "vllm", *DB, "--where",
                        "nosuch=1"], None, ExitCode.USAGE),
    ("unknown-column", ["compare", "--baseline", "nosuch=1", "--candidate", "engine=vllm",
                        *DB], None, ExitCode.USAGE),
    ("unknown-column", ["report", "sweep", *DB, "--sort", "nosuch"], None, ExitCode.USAGE),
    ("unknown-table", ["export", *DB, "--table", "nosuch", "--out", "x"], None, ExitCode.USAGE),
    ("bad-template", ["report", "sweep", *DB, "--template", "bad.j2"], None, ExitCode.USAGE),
    ("bad-template", ["report", "sweep", *DB, "--template", "missing.j2"], None,
     ExitCode.USAGE),
    ("bad-tag", ["ingest", "note.md", *DB, "--tag", "nokey"], None, ExitCode.USAGE),
    ("bad-header", ["report", "sweep", *DB, "--header", "nokey"], None, ExitCode.USAGE),
    ("bad-busy-timeout", ["ingest", "note.md", *DB], lambda f, mp: mp.setenv(
        "BENCHVAULT_BUSY_TIMEOUT", "soon"), ExitCode.USAGE),
    ("vanished", ["ingest", ".", *DB], vanishing, ExitCode.FINDINGS),
    ("vanished", ["report", *DB, "--update", "gone.md"], None, ExitCode.USAGE),
    ("vanished", ["report", "sweep", *DB, "--models", "gone.json"], None, ExitCode.USAGE),
]


@pytest.mark.parametrize("bad, args, setup, code", CASES,
                         ids=[f"{c[1][0]}-{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_bad_arguments_end_in_one_line_and_an_exit_code(bench, monkeypatch, bad, args, setup,
                                                         code):
    holder = setup(bench, monkeypatch) if setup else None
    before, files_before = digest(bench / "w.db"), listing(bench)
    notes_before = digest(bench / "notes.md")
    try:
        result = CliRunner().invoke(app, args)
    finally:
        if holder is not None:
            holder.execute("ROLLBACK")
            holder.close()
    out = result.output
    assert "Traceback" not in out
    assert result.exception is None or isinstance(result.exception, SystemExit), out
    assert result.exit_code == code, out
    errors = [line for line in out.splitlines() if line.startswith("error ")]
    assert len(errors) == 1, out
    if args[0] != "ingest" or bad != "vanished":
        assert out.strip() == errors[0]         # nothing but that one line
    else:
        assert errors == ["error note.md: no such file"]
    # nothing written, nothing lost
    gone = {"note.md"} if bad == "vanished" and args[0] == "ingest" else set()
    if gone:
        # The rest of the walk is still ingested (notes.md, a note with no result in it);
        # the vanished file leaves nothing.
        stored = {Path(r["path"]).name for r in rows(bench / "w.db", "SELECT path FROM sources")}
        assert "notes.md" in stored and "note.md" not in stored
    else:
        assert digest(bench / "w.db") == before
    assert digest(bench / "notes.md") == notes_before
    assert listing(bench) == files_before - gone


def test_exit_codes_are_in_the_help():
    result = CliRunner().invoke(app, ["ingest", "--help"], terminal_width=200)
    assert "Exit codes: 0 ok; 1 findings" in " ".join(result.output.split())


def test_help_paragraphs_wrap_at_the_terminals_width_not_the_sources():
    # (a paragraph whose source lines were broken at 95 columns reads as one at 80)
    result = CliRunner().invoke(app, ["ingest", "--help"], terminal_width=80)
    lines = [line.strip() for line in result.output.splitlines()]
    start = next(i for i, line in enumerate(lines) if line.startswith("Re-ingesting"))
    body = lines[start:lines.index("", start)]
    assert all(len(line) > 60 for line in body[:-1]), body


def test_a_new_warehouse_records_its_schema_version(tmp_path):
    from benchvault.dbfile import SCHEMA_VERSION

    db = tmp_path / "w.db"
    ingest_into(db, SEEDS / "mi300x_llama70b_tp-pp_specdecode.md")
    assert rows(db, "PRAGMA user_version") == [{"user_version": SCHEMA_VERSION}]


def test_ingest_s_summary_keeps_every_file_name_whole_at_80_columns(tmp_path):
    """Long paths at 80 columns: the directories give way (`…/`), never a file's name; names
    too long for a table's column get a line each, the path whole."""
    import os
    import subprocess
    import sys

    deep = tmp_path / "a-team-s-benchmark-notes" / "2026" / "november" / "h100-sxm-nodes"
    deep.mkdir(parents=True)
    seeds = sorted(SEEDS.glob("*.md"))
    names = ["strix.md", "deepseek-v3-h100-tensor-parallel-against-pipeline-parallel-sweep.md"]
    for name, seed in zip(names, seeds):
        (deep / name).write_text(seed.read_text())
    for shown in ([deep / names[0]], [deep]):
        done = subprocess.run([sys.executable, "-m", "benchvault", "ingest", *map(str, shown),
                               "--db", str(tmp_path / "w.db"), "--force"],
                              capture_output=True, text=True, cwd=tmp_path,
                              env={**os.environ, "COLUMNS": "80"})
        assert done.returncode == 0, done.stderr
        out = done.stdout + done.stderr
        for path in shown if shown[0].is_file() else sorted(deep.iterdir()):
            assert path.name in out, (path.name, out)
        assert "…" not in out.replace("…/", "")          # no name cut short


def test_a_run_cut_short_once_and_printed_whole_once_is_whole(tmp_path):
    cut = ONE_BLOCK[: ONE_BLOCK.index("Mean TPOT")]
    note = tmp_path / "twice.md"
    note.write_text("# a\n```\n" + cut + "```\n\n# b\n```\n" + ONE_BLOCK + "```\n")
    db = tmp_path / "w.db"
    ingest_into(db, note)
    (run,) = rows(db, "SELECT label, mean_ttft_ms, mean_tpot_ms, extra FROM serving_runs")
    assert run == {"label": "a", "mean_ttft_ms": 564.63, "mean_tpot_ms": 36.1, "extra": None}


def test_a_value_flag_without_its_value_is_no_value(tmp_path):
    # The paste lost the rest of the command after `--model`: no model, no crash.
    note = tmp_path / "cut-command.txt"
    note.write_text("vllm bench serve --backend vllm --model\nQwen/Qwen2.5-7B\n" + ONE_BLOCK)
    ingest_into(tmp_path / "w.db", note)
    (run,) = rows(tmp_path / "w.db", "SELECT model, backend, duration FROM serving_runs")
    assert run == {"model": None, "backend": "vllm", "duration": 63.81}


def test_a_command_of_a_million_characters_is_split_on_spaces(tmp_path):
    # A command line glued to a megabyte of junk (a binary pasted into the terminal): its
    # words are read by spaces, and the run keeps its flags.
    note = tmp_path / "glued-command.txt"
    note.write_text("vllm bench serve --backend vllm --max-concurrency 8 "
                    + "x" * 1_000_000 + "\n" + ONE_BLOCK)
    ingest_into(tmp_path / "w.db", note)
    (run,) = rows(tmp_path / "w.db", "SELECT backend, max_concurrency, duration FROM serving_runs")
    assert run == {"backend": "vllm", "max_concurrency": 8, "duration": 63.81}


def test_a_long_cell_is_no_pair_of_figures_around_an_arrow():
    assert arrow_cell("3388 → 3265 ms").group("before", "after", "unit") == ("3388", "3265", "ms")
    # thousands of digits and an arrow: text, not two runs' figures
    assert arrow_cell("1" * 5000 + " -> 2") is None
    assert arrow_cell("1 " * 3000) is None
