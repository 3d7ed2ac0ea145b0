"""Re-running an ingest: an unchanged file is recognised by its size and modification time
(no hashing, no parsing), a touched one by its hash, a changed one is read again."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import SEEDS, ingest_into, rows

from benchvault.ingest.pipeline import ingest_file
from benchvault.schemas.store import connect

NOTE = SEEDS / "mi300x_llama70b_tp-pp_specdecode.md"


def copy_note(tmp_path):
    note = tmp_path / "note.md"
    note.write_bytes(NOTE.read_bytes())
    return note


def test_touched_file_is_unchanged_and_its_new_time_is_kept(tmp_path):
    note, db = copy_note(tmp_path), tmp_path / "w.db"
    ingest_into(db, note)
    os.utime(note, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
    (again,) = ingest_into(db, note)
    assert again.status == "unchanged"
    assert rows(db, "SELECT mtime_ns FROM sources")[0]["mtime_ns"] == 1_700_000_000_000_000_000
    assert rows(db, "SELECT count(*) AS n FROM serving_runs")[0]["n"] == 6


def test_same_length_rewrite_is_read_again(tmp_path):
    note, db = copy_note(tmp_path), tmp_path / "w.db"
    ingest_into(db, note)
    stat = note.stat()
    note.write_text(note.read_text().replace("tp2 pp4", "tp2 pp5"))   # same size ...
    os.utime(note, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))   # ... new time
    (again,) = ingest_into(db, note)
    assert again.status == "replaced"
    labels = [r["label"] for r in rows(db, "SELECT label FROM serving_runs")]
    assert "tp2 pp5" in labels and "tp2 pp4" not in labels


def test_force_reads_a_file_whose_size_and_time_were_kept(tmp_path):
    """Like make, a rewrite that keeps size and time is not noticed -- unless --force."""
    note, db = copy_note(tmp_path), tmp_path / "w.db"
    ingest_into(db, note)
    stat = note.stat()
    note.write_text(note.read_text().replace("tp2 pp4", "tp2 pp5"))
    os.utime(note, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    (quiet,) = ingest_into(db, note)
    assert quiet.status == "unchanged"
    conn = connect(db)
    try:
        forced = ingest_file(conn, note, force=True)
    finally:
        conn.close()
    assert forced.status == "replaced"
    assert rows(db, "SELECT sha256 FROM sources")[0]["sha256"] != ""


def test_unchanged_rerun_answers_before_the_parsers_load(tmp_path):
    note, db = copy_note(tmp_path), tmp_path / "w.db"
    ingest_into(db, note)
    probe = ("import sys\nfrom benchvault.cli import app\n"
             "try:\n    app()\nexcept SystemExit:\n    pass\n"
             "print([m for m in ('benchvault.reading.segmenter', 'lark', 'sqlite_utils',"
             " 'benchvault.schemas.models') if m in sys.modules], file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", probe, "ingest", str(note), "--db", str(db),
                          "--json"], capture_output=True, text=True, check=True)
    assert '"status": "unchanged"' in out.stdout
    assert out.stderr.strip().splitlines()[-1] == "[]"
