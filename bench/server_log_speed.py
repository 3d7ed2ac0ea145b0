"""Ingest speed on a server log as users have them, beside grep and the naive loop, in one run.

The log and the loop are the shared ones:
  ../shared/bench/server_log.py OUT MB   a vLLM server log (access and request lines, ~2%
                                         engine-stats lines, prose, a result block every 4,000
                                         lines)
  ../shared/bench/naive_loop.py FILE     the line loop people write today (4 fields per block)
Prints size, seconds and MB/s of `grep -c`, the naive loop and `benchvault ingest`, the ingest's
share of the naive loop's speed, its peak RSS and the unchanged re-ingest.

    python bench/server_log_speed.py                 # 1 GB, what make bench measures
    python bench/server_log_speed.py --size-mb 100   # quicker
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ingest_speed import DATA, ROOT, timed  # noqa: E402

SHARED = Path(os.environ.get("BENCHVAULT_SHARED_BENCH", ROOT.parent / "shared" / "bench"))


def build(size_mb: int) -> tuple[Path, int]:
    path = DATA / f"server-{size_mb}mb.log"
    blocks_file = path.with_suffix(".blocks")
    if not (path.exists() and blocks_file.exists()):
        out = subprocess.run([sys.executable, str(SHARED / "server_log.py"), str(path),
                              str(size_mb)], capture_output=True, text=True, check=True).stdout
        blocks_file.write_text(out.strip())
    return path, int(blocks_file.read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=int, default=1000)
    args = ap.parse_args()
    if not (SHARED / "server_log.py").exists():
        sys.exit(f"{SHARED}/server_log.py not found: set BENCHVAULT_SHARED_BENCH")
    DATA.mkdir(parents=True, exist_ok=True)
    path, blocks = build(args.size_mb)
    mb = path.stat().st_size / 1e6
    grep_s, _, _ = timed(["grep", "-c", "Serving Benchmark Result", str(path)], path)
    naive_s, _, naive_out = timed([sys.executable, str(SHARED / "naive_loop.py"), str(path)], path)
    db = path.with_suffix(".db")
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    bv = [sys.executable, "-m", "benchvault", "ingest", str(path), "--db", str(db), "--json"]
    ingest_s, rss_mb, out = timed(bv, path)
    counts = json.loads(out)[0]["counts"]
    again_s, _, _ = timed(bv, path)
    rows = [("grep -c", grep_s, ""), ("naive loop", naive_s, f"{naive_out.strip()} blocks"),
            ("benchvault ingest", ingest_s,
             f"{blocks} blocks -> {counts.get('serving_runs', 0)} runs read "
             f"(a block repeated is one run seen again), {counts.get('engine_stats', 0)} "
             f"engine-stats rows; peak RSS {rss_mb} MB"),
            ("re-ingest unchanged", again_s, f"{100 * again_s / ingest_s:.1f}% of the first")]
    print(f"server log {mb:.0f} MB ({path.name})")
    for name, seconds, note in rows:
        print(f"  {name:<20} {seconds:7.2f} s  {mb / seconds:8.1f} MB/s  {note}")
    print(f"  ingest / naive loop speed: {naive_s / ingest_s:.2f}  (goal >= 0.25); "
          f"ingest / grep: {grep_s / ingest_s:.3f}")


if __name__ == "__main__":
    os.chdir(ROOT)
    main()
