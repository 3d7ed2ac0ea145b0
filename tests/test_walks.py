"""Files named on the command line are read whatever their suffix; a directory walk reads the
text-like ones and says which it skipped."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from typer.testing import CliRunner

from benchvault.cli import app
from conftest import FIXTURES


def test_walk_says_what_it_skipped_and_a_named_file_is_read(tmp_path):
    notes = tmp_path / "notes"
    (notes / "sub").mkdir(parents=True)
    (notes / ".git").mkdir()
    shutil.copy(FIXTURES / "seeds/strix-halo_vllm-vs-llamacpp.md", notes)
    script = notes / "sub" / "run.sh"
    shutil.copy(FIXTURES / "vllm_serving/real-vllm-0.7-issue12845.txt", script)
    (notes / "chart.png").write_bytes(b"\x89PNG\r\n")
    (notes / ".git" / "HEAD.txt").write_text("ref: main\n")
    db = tmp_path / "w.db"

    walked = CliRunner().invoke(app, ["ingest", str(notes), "--db", str(db)])
    assert walked.exit_code == 0, walked.output
    flat = " ".join(walked.output.split())
    assert "skipped 2 file(s)" in flat and "chart.png" in flat and "run.sh" in flat
    assert "HEAD.txt" not in flat          # hidden folders are not walked, nor listed

    named = CliRunner().invoke(app, ["ingest", str(script), "--db", str(db)])
    assert named.exit_code == 0, named.output
    conn = sqlite3.connect(db)
    try:
        got = conn.execute("SELECT completed, p99_itl_ms FROM serving_runs r JOIN sightings s "
                           "ON s.run_id = r.id JOIN sources f ON f.id = s.source_id "
                           "WHERE f.name = 'run.sh'").fetchall()
    finally:
        conn.close()
    assert got == [(772, 340.52)]


def test_a_file_is_stored_under_its_real_path_however_it_is_named(tmp_path, monkeypatch):
    from benchvault.ingest.find import real_path

    (tmp_path / "real" / "sub").mkdir(parents=True)
    (tmp_path / "real" / "sub" / "a.md").write_text("x")
    (tmp_path / "dirlink").symlink_to(tmp_path / "real")
    (tmp_path / "real" / "filelink.md").symlink_to(tmp_path / "real" / "sub" / "a.md")
    monkeypatch.chdir(tmp_path)
    for name in ["dirlink/sub/a.md", "dirlink/sub/", "dirlink", "dirlink/", "real/filelink.md",
                 "dirlink/filelink.md", "dirlink/sub/../filelink.md", ".", "real//sub/a.md",
                 str(tmp_path / "dirlink" / "sub" / "a.md")]:
        assert real_path(name) == str(Path(name).resolve()), name
