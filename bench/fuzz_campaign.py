"""A long fuzz campaign: mutated fixtures through the whole read → segment → parse → validate
path (and, every 50th input, the SQLite store), counting inputs tried and crashes found.

    python bench/fuzz_campaign.py --inputs 100000

A crash is any exception escaping ingest; each is saved under bench/data/crashes/ to replay.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from hypothesis import HealthCheck, given, settings  # noqa: E402

from benchvault.ingest.parse import parse_file  # noqa: E402
from benchvault.ingest.pipeline import ingest_file  # noqa: E402
from benchvault.schemas.store import connect  # noqa: E402
from fuzzing import mutated, mutated_excerpt  # noqa: E402

CRASHES = ROOT / "bench" / "data" / "crashes"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=100_000)
    parser.add_argument("--whole-files", action="store_true",
                        help="mutate whole fixtures (slower) instead of windows of them")
    args = parser.parse_args()
    tried = crashes = rows = warnings = 0
    start = time.time()
    workdir = Path(tempfile.mkdtemp(prefix="bv-fuzz-", dir="/dev/shm" if Path("/dev/shm").is_dir()
                                    else None))
    note = workdir / "fuzzed.md"
    db = connect(":memory:")

    @settings(max_examples=args.inputs, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(data=mutated() if args.whole_files else mutated_excerpt())
    def one(data: bytes) -> None:
        nonlocal tried, crashes, rows, warnings
        tried += 1
        note.write_bytes(data)
        try:
            if tried % 50 == 0:
                result = ingest_file(db, note, force=True)
                rows += sum(result.counts.values())
                warnings += len(result.warnings)
            else:
                for item in parse_file(note):
                    if hasattr(item, "row"):
                        rows += 1
                    else:
                        warnings += 1
        except Exception:  # the campaign counts crashes instead of stopping at the first
            crashes += 1
            CRASHES.mkdir(parents=True, exist_ok=True)
            name = hashlib.sha256(data).hexdigest()[:16]
            (CRASHES / f"{name}.bin").write_bytes(data)
            (CRASHES / f"{name}.txt").write_text(traceback.format_exc())
        if tried % 5000 == 0:
            print(f"{tried} inputs, {crashes} crashes, {rows} rows, {warnings} warnings, "
                  f"{time.time() - start:.0f}s", flush=True)

    one()
    print(f"inputs tried: {tried}  crashes found: {crashes}  rows stored/parsed: {rows}  "
          f"warnings: {warnings}  time: {time.time() - start:.0f}s")
    sys.exit(1 if crashes else 0)


if __name__ == "__main__":
    main()
