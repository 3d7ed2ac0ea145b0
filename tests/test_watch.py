"""`benchvault ingest --watch`: files written in pieces land as they are written, each run
within seconds of its last line, and the warehouse ends as an ingest of the final files
leaves it; a growing log is read on, never again from its start; Ctrl-C ends it cleanly;
`serve --live` pages show what it stored.  (Speed and idle CPU: bench/watch.py.)"""

from __future__ import annotations

import json
import random
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from conftest import FIXTURES, ROOT, ingest_into

from benchvault.export import export
from benchvault.ingest import watch as watch_module
from benchvault.ingest.watch import Watch
from benchvault.schemas.store import connect

VLLM = FIXTURES / "contract" / "vllm-0.32.0"
CLIENT = b"".join((VLLM / name).read_bytes() for name in
                  ("c2.txt", "goodput.txt", "openai_chat.txt", "rate4_percentiles.txt"))
SERVER = (VLLM / "server.log").read_bytes()
PASTED = (FIXTURES / "vllm_serving" / "real-vllm-0.7-issue12845.txt").read_bytes()
CLOSING = re.compile(rb"^=+\n", re.M)
LANDED_WITHIN = 2.0


def complete_blocks(written: bytes) -> int:
    """Result blocks whose closing rule (and its newline) is written."""
    return len(CLOSING.findall(written))


def pieces(data: bytes, rnd: random.Random, low: int = 40, high: int = 900) -> list[bytes]:
    """``data`` cut at random places: inside lines and inside blocks."""
    out, at = [], 0
    while at < len(data):
        size = rnd.randint(low, high)
        out.append(data[at:at + size])
        at += size
    return out


def query(db: Path, sql: str, params=()) -> list[tuple]:
    """Read the warehouse as another process would, while the watch writes it."""
    if not db.exists():
        return []
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    try:
        return conn.execute(sql, params).fetchall()
    except sqlite3.OperationalError:          # no tables yet
        return []
    finally:
        conn.close()


def until(condition, timeout: float, step: float = 0.01) -> float:
    """Seconds until ``condition()`` held; fails after ``timeout``."""
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < timeout, "not within the deadline"
        time.sleep(step)
    return time.monotonic() - started


def same_as_one_ingest(db: Path, folder: Path, tmp_path: Path) -> None:
    """The warehouse holds what one ingest of ``folder`` as it is now stores, table by table
    (exports number rows by what they are and leave ingest times out)."""
    once = tmp_path / "once.db"
    ingest_into(once, folder)
    names = sorted(p.name for p in export(db, "csv", tmp_path / "watched"))
    assert names == sorted(p.name for p in export(once, "csv", tmp_path / "once"))
    for name in names:
        assert (tmp_path / "watched" / name).read_bytes() == \
            (tmp_path / "once" / name).read_bytes(), name


def runs_of(db: Path, name: str) -> list[tuple]:
    """(line, extra) of each serving run seen in the file ``name``, by the line it is there."""
    return query(db, "SELECT g.line_start, r.extra FROM serving_runs r JOIN sightings g ON "
                     "g.run_id = r.id JOIN sources s ON s.id = g.source_id WHERE s.name = ? "
                     "ORDER BY g.line_start", [name])


def test_a_sweep_written_in_pieces_lands_run_by_run_and_ends_as_one_ingest(tmp_path):
    """A server log and two client captures appended in pieces cut mid-line and mid-block
    while `ingest --watch` runs: each run is stored within LANDED_WITHIN seconds of its
    closing line, none before (no block stored cut short), and after Ctrl-C the warehouse is
    what one ingest of the final files stores."""
    sweep = tmp_path / "sweep"
    sweep.mkdir()
    db, said = tmp_path / "w.db", tmp_path / "stderr.txt"
    with open(said, "w") as stderr:
        watcher = subprocess.Popen([sys.executable, "-m", "benchvault", "ingest", "--watch",
                                    str(sweep), "--db", str(db)], stdout=subprocess.PIPE,
                                   stderr=stderr, text=True, cwd=ROOT)
    try:
        until(lambda: "Ctrl-C stops" in said.read_text(), 60)
        rnd = random.Random(20261125)
        # The server printed three launches: past 64 KiB, its reader is kept as it grows.
        files = {"server.log": pieces(SERVER * 3, rnd, 200, 3000),
                 "bench-c2-to-rate4.txt": pieces(CLIENT, rnd),
                 "pasted.txt": pieces(PASTED, rnd, 20, 200)}
        written = {name: b"" for name in files}
        waits = []
        while any(files.values()):
            name = rnd.choice([n for n, left in files.items() if left])
            piece = files[name].pop(0)
            with open(sweep / name, "ab") as fh:
                fh.write(piece)
            written[name] += piece
            if name == "server.log":
                continue
            want = complete_blocks(written[name])
            waits.append(until(lambda: len(runs_of(db, name)) >= want, LANDED_WITHIN + 5))
            stored = runs_of(db, name)
            assert len(stored) == want, (name, stored)
            assert not any(extra and "incomplete" in extra for _, extra in stored)
        assert max(waits) < LANDED_WITHIN, waits
        assert complete_blocks(written["bench-c2-to-rate4.txt"]) == 4
    finally:
        watcher.send_signal(signal.SIGINT)
        watcher.communicate(timeout=60)
    err = said.read_text()
    assert watcher.returncode in (0, 130), err
    assert "Traceback" not in err
    assert err.count("\nrun ") + err.startswith("run ") >= 5     # a line per run as it landed
    same_as_one_ingest(db, sweep, tmp_path)
    again = subprocess.run([sys.executable, "-m", "benchvault", "ingest", str(sweep), "--db",
                            str(db), "--json"], capture_output=True, text=True, cwd=ROOT)
    assert {r["status"] for r in json.loads(again.stdout)} == {"unchanged"}


@contextmanager
def watching(db: Path, *paths: Path):
    """A Watch in a thread of this process (quick polls) until the block ends."""
    stop, box = threading.Event(), {}

    def run() -> None:
        conn = connect(db)
        try:
            box["watch"] = Watch(conn, paths, stop=stop, poll=0.02)
            box["results"] = box["watch"].run()
        except BaseException as exc:  # noqa: BLE001 - raised in the test's thread
            box["error"] = exc
        finally:
            conn.close()

    thread = threading.Thread(target=run)
    thread.start()
    try:
        until(lambda: "watch" in box and box["watch"].summed_up or "error" in box, 60)
        yield box
    finally:
        stop.set()
        thread.join(60)
    if "error" in box:
        raise box["error"]


def read_up_to(db: Path, path: Path) -> None:
    """Wait until the watch has stored ``path`` as far as it is written now."""
    size = path.stat().st_size
    until(lambda: query(db, "SELECT size FROM sources WHERE name = ?", [path.name])
          in ([(size,)],), 10)


def test_a_block_being_written_waits_and_is_read_as_ingest_reads_it_when_the_watch_ends(
        tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    capture = folder / "c2.txt"
    text = (VLLM / "c2.txt").read_bytes()
    cut = text.index(b"Mean TPOT")          # inside the block, after some of its values
    db = tmp_path / "w.db"
    capture.write_bytes(text[:cut])
    with watching(db, folder):
        read_up_to(db, capture)
        assert runs_of(db, "c2.txt") == []           # not stored cut short while watched
    (incomplete,) = runs_of(db, "c2.txt")            # the end: read as one ingest reads it
    assert "incomplete" in json.loads(incomplete[1])
    same_as_one_ingest(db, folder, tmp_path)


def test_a_growing_log_is_read_on_from_where_it_stopped(tmp_path, monkeypatch):
    """Past its first 64 KiB (what decides how a file is read), a log keeps its reader: the
    lines appended are read from where it stopped, never from the start again."""
    started: list[Path] = []

    class Counted(watch_module.Tail):
        def __init__(self, path, tags=None):
            started.append(path)
            super().__init__(path, tags)

    monkeypatch.setattr(watch_module, "Tail", Counted)
    folder = tmp_path / "logs"
    folder.mkdir()
    log = folder / "server.log"
    log.write_bytes(SERVER * 4)
    blocks = CLIENT.split(b"\n$ ")
    db = tmp_path / "w.db"
    with watching(db, folder):
        for at, block in enumerate(blocks):
            with open(log, "ab") as fh:
                fh.write((b"$ " if at else b"") + block + b"\n")
            until(lambda: len(runs_of(db, "server.log")) == at + 1, 10)
    assert started == [log]
    same_as_one_ingest(db, folder, tmp_path)


def test_a_file_rewritten_truncated_or_deleted_is_read_anew_or_forgotten(tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    capture, other = folder / "bench.txt", folder / "other.txt"
    first, second = (VLLM / "c2.txt").read_bytes(), (VLLM / "goodput.txt").read_bytes()
    capture.write_bytes(first)
    other.write_bytes(second)
    db = tmp_path / "w.db"

    def lines(name):
        return [line for line, _ in runs_of(db, name)]

    with watching(db, folder):
        until(lambda: len(lines("bench.txt")) == 1 and len(lines("other.txt")) == 1, 10)
        replacement = folder / "new.tmp"
        replacement.write_bytes(b"# rerun\n" + second)          # another inode, as editors save
        replacement.replace(capture)
        until(lambda: lines("bench.txt") == [lines("other.txt")[0] + 1], 10)
        capture.write_bytes(first[:200])                        # truncated in place
        until(lambda: lines("bench.txt") == [], 10)
        capture.write_bytes(first)
        until(lambda: len(lines("bench.txt")) == 1, 10)
        other.unlink()
        until(lambda: query(db, "SELECT count(*) FROM sources WHERE name = 'other.txt'")
              == [(0,)], 10)
    same_as_one_ingest(db, folder, tmp_path)


def test_serve_live_pages_show_what_the_watch_stores(tmp_path):
    """`serve --live` gives Datasette the file as mutable (read-only connections, not
    immutable): a page loaded again shows the run the watch stored since."""
    import asyncio

    from datasette.app import Datasette

    from benchvault.serve import BROWSE, datasette_command, metadata

    folder = tmp_path / "logs"
    folder.mkdir()
    capture = folder / "bench.txt"
    capture.write_bytes((VLLM / "c2.txt").read_bytes())
    db = tmp_path / "w.db"
    assert "-i" not in datasette_command(db, tmp_path / "m.json", live=True)
    assert "-i" in datasette_command(db, tmp_path / "m.json")

    async def count(ds) -> int:
        response = await ds.client.get(f"/{db.stem}/serving_runs.json?_shape=array")
        assert response.status_code == 200
        return len(response.json())

    with watching(db, folder):
        read_up_to(db, capture)
        ds = Datasette(files=[str(db)], metadata=metadata(db, live=True),
                       plugins_dir=str(BROWSE / "plugins"))

        async def pages() -> tuple[int, int]:
            await ds.invoke_startup()
            before = await count(ds)
            with open(capture, "ab") as fh:
                fh.write((VLLM / "goodput.txt").read_bytes())
            started = time.monotonic()
            while await count(ds) == before and time.monotonic() - started < 10:
                await asyncio.sleep(0.02)
            return before, await count(ds)

        assert asyncio.run(pages()) == (1, 2)
