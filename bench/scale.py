"""A year of runs: reports, compare, export and a Datasette page on a 100k-run warehouse.

Builds bench/data/scale.db from the real fixtures (the seed notes and the contract captures,
70 serving runs) copied to ~105k runs over synthetic configurations: each copy gets one of
4 model variants (another comparable group each) and one of 15 `batch` tags (another
configuration each), so the warehouse holds ~35 groups, ~21k configurations and five repeats
of each.  Copies keep every column, latency statistic and launch link of the real runs.

Then times, one process each (wall time and peak RSS):
  report sweep, report sweep --where (1/60 of the runs), report all, compare, export to
  Parquet, and the Datasette `serving_runs` page with its facets (served by `benchvault serve`).

    python bench/scale.py                # >= 100k runs
    python bench/scale.py --runs 20000   # quicker
Goals (issue 17): report < 2 s and < 200 MB, Datasette page < 200 ms, Parquet export < 5 s
and < 200 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / "data"
BENCHVAULT = [sys.executable, "-m", "benchvault"]
MODELS = 4
BATCHES = 15


def build(db: Path, target: int) -> int:
    sys.path.insert(0, str(ROOT))
    from benchvault.ingest.pipeline import expand_paths, ingest_paths
    from benchvault.schemas.store import connect

    db.unlink(missing_ok=True)
    warehouse = connect(db)
    ingest_paths(warehouse, expand_paths([ROOT / "fixtures" / "seeds",
                                          ROOT / "fixtures" / "contract"]))
    real = warehouse.execute("SELECT count(*) FROM serving_runs").fetchone()[0]
    copy_runs(warehouse, -(-target // real))     # at least ``target`` runs in all
    warehouse.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    count = warehouse.execute("SELECT count(*) FROM serving_runs").fetchone()[0]
    warehouse.close()
    return count


def copy_runs(warehouse, copies: int) -> None:
    """Every serving run copied ``copies - 1`` times, each copy under one of MODELS model
    variants and BATCHES `batch` tags (repeats of ~copies / 60 runs each), configurations
    and groups refreshed.  tests/test_report_fold.py builds its warehouse with it too."""
    from benchvault.experiments.refresh import refresh_configurations

    runs = [r[1] for r in warehouse.execute("PRAGMA table_info(serving_runs)")]
    stats = [r[1] for r in warehouse.execute("PRAGMA table_info(latency_stats)")]
    top = warehouse.execute("SELECT max(id) FROM serving_runs").fetchone()[0]
    stride = 10 ** len(str(top))
    copied = [c for c in runs if c not in ("id", "model", "tags", "config_id", "group_id")]
    warehouse.execute("BEGIN")
    for i in range(1, copies):
        warehouse.execute(
            f"INSERT INTO serving_runs (id, model, tags, {', '.join(copied)}) "
            f"SELECT id + ?, model || '-v{i % MODELS}', "
            f"json_object('batch', '{i % BATCHES}'), {', '.join(copied)} "
            f"FROM serving_runs WHERE id <= ?", [i * stride, top])
        warehouse.execute(
            f"INSERT INTO latency_stats ({', '.join(c for c in stats if c != 'id')}) "
            f"SELECT {', '.join('run_id + ?' if c == 'run_id' else c for c in stats if c != 'id')}"
            f" FROM latency_stats WHERE run_id <= ?", [i * stride, top])
    warehouse.execute("COMMIT")
    ids = [r[0] for r in warehouse.execute("SELECT id FROM serving_runs WHERE id > ?", [top])]
    warehouse.execute("BEGIN")
    refresh_configurations(warehouse, ids)
    warehouse.execute("COMMIT")


def timed(args: list[str]) -> tuple[float, float]:
    """(seconds, peak RSS in MB) of one command in a process of its own."""
    probe = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
             "code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode; "
             "print(time.perf_counter() - t, "
             "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, code)")
    out = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True,
                         check=True).stdout.split()
    if out[2] != "0":
        raise SystemExit(f"{' '.join(args)} exited {out[2]}")
    return float(out[0]), float(out[1])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def datasette_page(db: Path) -> list[float]:
    """Seconds for the serving_runs page (facets and all): the first load, then five more
    (the facets' counts are the first load's: the warehouse is served immutable)."""
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
    ap.add_argument("--runs", type=int, default=100_000,
                    help="runs in the warehouse at least (the real ones copied)")
    ap.add_argument("--keep", action="store_true", help="reuse bench/data/scale.db if there")
    args = ap.parse_args()
    DATA.mkdir(parents=True, exist_ok=True)
    db = DATA / "scale.db"
    start = time.perf_counter()
    if not (args.keep and db.exists()):
        runs = build(db, args.runs)
        print(f"built {db}: {runs} runs in {time.perf_counter() - start:.0f} s "
              f"({db.stat().st_size / 1e6:.0f} MB)")
    import sqlite3

    conn = sqlite3.connect(db)
    counts = {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
              for t in ("serving_runs", "configurations", "experiment_groups",
                        "latency_stats")}
    conn.close()
    print(json.dumps(counts))
    out = Path(tempfile.mkdtemp(prefix="scale-", dir=DATA))
    commands = {
        "report sweep": ["report", "sweep", "--db", str(db)],
        "report sweep --where (1/60)": ["report", "sweep", "--db", str(db), "--where",
                                        "tag.batch=3", "--where", "model~-v3"],
        "report all": ["report", "all", "--db", str(db)],
        "compare": ["compare", "--db", str(db), "--baseline", "engine=vllm", "--candidate",
                    "engine=llama.cpp", "--where", "model~Llama-2-7b-chat-hf-v3"],
        "export parquet": ["export", "--db", str(db), "--format", "parquet", "--out",
                           str(out / "parquet")],
    }
    print(f"{'command':32} {'seconds':>8} {'peak MB':>8}")
    for name, argv in commands.items():
        seconds, rss = timed([*BENCHVAULT, *argv])
        print(f"{name:32} {seconds:8.2f} {rss:8.0f}")
    first, *page = datasette_page(db)
    print(f"{'datasette serving_runs page':32} {min(page):8.3f} (median "
          f"{sorted(page)[len(page) // 2]:.3f} s over {len(page)} loads; the first "
          f"{first:.3f} s)")
    shutil.rmtree(out)


if __name__ == "__main__":
    main()
