"""`benchvault ingest --watch` on a 1 GB server log: a block appended is stored in how long,
and what the watch costs when nothing is written.

Copies the shared 1 GB server log (../shared/bench/server_log.py, as bench/server_log_speed.py
builds it) and starts `benchvault ingest --watch` on the copy.  Once the copy is read, it
measures:
  * idle CPU: the watch process's CPU time (/proc/PID/stat) over IDLE seconds of no writes;
  * a block appended: a new result block (its numbers moved, so it is a run of its own)
    written at the end of the log, and the time until a reader of the warehouse sees the run,
    BLOCKS times (the median and the slowest), beside the time the first reading of the whole
    log took (what reading it again from the start would cost);
then stops the watch with Ctrl-C (SIGINT) and checks it ended cleanly.

    python bench/watch.py                 # 1 GB, what make bench measures
    python bench/watch.py --size-mb 100   # quicker
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ingest_speed import DATA, ROOT  # noqa: E402
from server_log_speed import SHARED, build  # noqa: E402

BLOCK = (ROOT / "fixtures" / "contract" / "vllm-0.32.0" / "c2.txt").read_text()
BLOCK = BLOCK[BLOCK.index("============ Serving Benchmark Result"):]
DURATION = "Benchmark duration (s):"
IDLE = 10.0
BLOCKS = 5
GOAL_STORED_S = 1.0
GOAL_IDLE_CPU = 0.01


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def runs(db: Path) -> int:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return conn.execute("SELECT count(*) FROM serving_runs").fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    finally:
        conn.close()


def new_block(at: int) -> str:
    """The vLLM 0.32 block with its duration moved: a run no log holds."""
    lines = BLOCK.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.startswith(DURATION):
            lines[i] = f"{DURATION:<41}{1000 + at + 0.37:.2f}\n"
    return f"# c=2 watched {at}\n" + "".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=int, default=1000)
    args = ap.parse_args()
    if not (SHARED / "server_log.py").exists():
        sys.exit(f"{SHARED}/server_log.py not found: set BENCHVAULT_SHARED_BENCH")
    DATA.mkdir(parents=True, exist_ok=True)
    source, _ = build(args.size_mb)
    log, db, said = DATA / f"watch-{args.size_mb}mb.log", DATA / "watch.db", DATA / "watch.err"
    shutil.copyfile(source, log)           # appended to: the shared log stays as it is
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    started = time.monotonic()
    with open(said, "w") as stderr:
        watcher = subprocess.Popen([sys.executable, "-m", "benchvault", "ingest", "--watch",
                                    str(log), "--db", str(db)], stdout=subprocess.DEVNULL,
                                   stderr=stderr, cwd=ROOT)
    try:
        while "Ctrl-C stops" not in said.read_text():
            if watcher.poll() is not None:
                sys.exit(f"the watch ended: {said.read_text()}")
            time.sleep(0.05)
        first_read = time.monotonic() - started
        time.sleep(1.0)                    # the first pass's last commit settles
        cpu = cpu_seconds(watcher.pid)
        time.sleep(IDLE)
        idle = (cpu_seconds(watcher.pid) - cpu) / IDLE
        stored = []
        for at in range(BLOCKS):
            before = runs(db)
            with open(log, "a") as fh:
                fh.write(new_block(at))
            written = time.monotonic()
            while runs(db) == before:
                if time.monotonic() - written > 60:
                    sys.exit("a block appended was not stored within 60 s")
                time.sleep(0.005)
            stored.append(time.monotonic() - written)
            time.sleep(0.3)
    finally:
        watcher.send_signal(signal.SIGINT)
        code = watcher.wait(timeout=300)
    clean = code in (0, 130) and "Traceback" not in said.read_text()
    mb = log.stat().st_size / 1e6
    print(f"ingest --watch on a {mb:.0f} MB server log ({log.name}), "
          f"{os.cpu_count()} cores")
    print(f"  first reading (the whole log)    {first_read:7.2f} s")
    print(f"  a block appended, stored within  {statistics.median(stored):7.3f} s median, "
          f"{max(stored):.3f} s slowest of {BLOCKS}  (goal < {GOAL_STORED_S:g} s); "
          f"{first_read / max(stored):.0f}x quicker than reading the log again")
    print(f"  idle CPU over {IDLE:g} s               {100 * idle:7.2f} %  "
          f"(goal < {100 * GOAL_IDLE_CPU:g} %)")
    print(f"  Ctrl-C: exit {code}{'' if clean else ' NOT CLEAN: see ' + str(said)}")


if __name__ == "__main__":
    os.chdir(ROOT)
    main()
