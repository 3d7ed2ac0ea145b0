"""A team's year of runs, ingested as a user would: how ingest cost grows, then reports, compare,
export and a Datasette page on the 100k-run warehouse.

The notes are the shared generator's (../shared/bench/team_notes.py: 500 markdown notes of 200
`vllm bench serve` blocks each, 50 models x 8 concurrencies, about one block in ten pasted twice
and one note in twenty copied under another name).  Each size is ingested from nothing with
`benchvault ingest` (the default -j), one process each:

  the first 50 notes (~10k runs), the first 250 (~50k), all 500 (~100k), then one more note of
  200 new runs into the 100k warehouse.

Then, on that warehouse, one process each (wall time and peak RSS): report sweep, report sweep
--where (one model), report all, compare --by max_concurrency for one model, compare against a
baseline no run has (an error), export to Parquet, and the Datasette `serving_runs` page.

    python bench/scale.py                # 500 notes
    python bench/scale.py --notes 100    # quicker: 10k, 50k runs... scaled down
Goals: 100k runs ingested in <= 90 s, at most 2.3x the time of 50k, one more note <= 1 s, no
contradiction warned; reports and compare < 2 s and < 200 MB (an unknown baseline an error in
< 1 s), Parquet export < 5 s and < 200 MB, the Datasette page < 200 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / "data"
SHARED = Path(os.environ.get("BENCHVAULT_SHARED_BENCH", ROOT.parent / "shared" / "bench"))
BENCHVAULT = [sys.executable, "-m", "benchvault"]


def notes(count: int) -> Path:
    """The shared generator's ``count`` notes (made once, kept under bench/data)."""
    folder = DATA / f"team-notes-{count}"
    if not (folder.is_dir() and len(list(folder.glob("*.md"))) == count):
        shutil.rmtree(folder, ignore_errors=True)
        subprocess.run([sys.executable, str(SHARED / "team_notes.py"), str(folder), str(count)],
                       check=True, capture_output=True)
    return folder


def first(folder: Path, count: int) -> Path:
    """A folder holding links to the first ``count`` notes of ``folder``."""
    subset = DATA / f"{folder.name}-first-{count}"
    shutil.rmtree(subset, ignore_errors=True)
    subset.mkdir(parents=True)
    for note in sorted(folder.glob("*.md"))[:count]:
        (subset / note.name).symlink_to(note)
    return subset


def fresh(db: Path) -> Path:
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    return db


def ingest(paths: Path, db: Path) -> tuple[float, list[dict]]:
    """Seconds of one `benchvault ingest` and what it said of each file."""
    start = time.perf_counter()
    done = subprocess.run([*BENCHVAULT, "ingest", str(paths), "--db", str(db), "--json"],
                          capture_output=True, text=True, check=True)
    return time.perf_counter() - start, json.loads(done.stdout)


def runs_in(db: Path) -> int:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT count(*) FROM serving_runs").fetchone()[0]
    finally:
        conn.close()


def timed(args: list[str], expect: int = 0) -> tuple[float, float]:
    """(seconds, peak RSS in MB) of one command in a process of its own."""
    probe = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
             "code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, "
             "stderr=subprocess.DEVNULL).returncode; "
             "print(time.perf_counter() - t, "
             "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, code)")
    out = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True,
                         check=True).stdout.split()
    if int(out[2]) != expect:
        raise SystemExit(f"{' '.join(args)} exited {out[2]}, not {expect}")
    return float(out[0]), float(out[1])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def datasette_page(db: Path) -> list[float]:
    """Seconds for the serving_runs page (facets and all): the first load, then five more."""
    port = free_port()
    proc = subprocess.Popen([*BENCHVAULT, "serve", "--db", str(db), "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    url = f"http://127.0.0.1:{port}/{db.stem}/serving_runs"
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/-/versions.json", timeout=1)
                break
            except OSError:
                time.sleep(0.5)
        times = []
        for _ in range(6):
            start = time.perf_counter()
            urllib.request.urlopen(url, timeout=120).read()
            times.append(time.perf_counter() - start)
        return times
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=int, default=500, help="notes of 200 runs (500: ~100k)")
    args = ap.parse_args()
    if not (SHARED / "team_notes.py").exists():
        sys.exit(f"{SHARED}/team_notes.py not found: set BENCHVAULT_SHARED_BENCH")
    DATA.mkdir(parents=True, exist_ok=True)
    folder = notes(args.notes)
    sizes = [args.notes // 10, args.notes // 2, args.notes]
    print(f"{'ingest from nothing':32} {'notes':>6} {'runs':>8} {'seconds':>8} {'runs/s':>8}")
    seconds: dict[int, float] = {}
    warned = 0
    for count in sizes:
        db = fresh(DATA / f"scale-{count}.db")
        spent, said = ingest(first(folder, count) if count < args.notes else folder, db)
        seconds[count] = spent
        runs = runs_in(db)
        warned = sum("contradicts" in w["reason"] for f in said for w in f["warnings"])
        print(f"{'':32} {count:6} {runs:8} {spent:8.2f} {runs / spent:8.0f}")
    db = DATA / f"scale-{args.notes}.db"
    middle = sizes[1]
    print(f"the whole set against half of it: {seconds[args.notes] / seconds[middle]:.2f}x the "
          f"time (goal <= 2.3x); contradictions warned in the whole set: {warned} (goal 0)")
    one = DATA / "one-more-note"
    shutil.rmtree(one, ignore_errors=True)
    subprocess.run([sys.executable, str(SHARED / "team_notes.py"), str(one), "1", "200", "99"],
                   check=True, capture_output=True)
    before = runs_in(db)
    spent, said = ingest(one, db)
    print(f"one more note ({runs_in(db) - before} new runs) into {before} runs: {spent:.2f} s "
          f"(goal <= 1 s)")
    out = Path(tempfile.mkdtemp(prefix="scale-", dir=DATA))
    commands = {
        "report sweep": (["report", "sweep", "--db", str(db)], 0),
        "report sweep --where (one model)": (["report", "sweep", "--db", str(db), "--where",
                                              "model=org/model-7"], 0),
        "report all": (["report", "all", "--db", str(db)], 0),
        "compare --by concurrency (1 model)": (["compare", "--db", str(db), "--by",
                                                "max_concurrency", "--baseline", "1",
                                                "--where", "model=org/model-7"], 0),
        "compare, unknown baseline": (["compare", "--db", str(db), "--by", "engine",
                                       "--baseline", "vllm"], 2),
        "export parquet": (["export", "--db", str(db), "--format", "parquet", "--out",
                            str(out / "parquet")], 0),
    }
    print(f"{'command':36} {'seconds':>8} {'peak MB':>8}")
    for name, (argv, code) in commands.items():
        spent, rss = timed([*BENCHVAULT, *argv], code)
        print(f"{name:36} {spent:8.2f} {rss:8.0f}")
    start, *page = datasette_page(db)
    print(f"{'datasette serving_runs page':36} {min(page):8.3f} (median "
          f"{sorted(page)[len(page) // 2]:.3f} s over {len(page)} loads; the first "
          f"{start:.3f} s)")
    shutil.rmtree(out)


if __name__ == "__main__":
    os.chdir(ROOT)
    main()
