"""How fast ingest could be at best: the passes over the bytes it cannot skip, timed against
`grep -c` on the same file, in one run.

    python bench/floor.py bench/data/prose-1024mb.md

Every pass reads the file in the same 1 MB chunks ingest uses (from the page cache, warmed
first).  Prints each pass's time and its multiple of grep's: SHA-256 (provenance), the
prefilter's marker scan, counting lines (provenance: line numbers), and what those imply for
ingest's best throughput ratio with the hash on a second core.
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import time
from pathlib import Path

from benchvault.reading import prefilter
from benchvault.reading.lines import LineSource

CHUNK = LineSource.CHUNK


def timed_pass(path: Path, work) -> float:
    start = time.perf_counter()
    with open(path, "rb", buffering=0) as fh:
        while chunk := fh.read(CHUNK):
            work(chunk)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path)
    path = parser.parse_args().path
    timed_pass(path, lambda chunk: None)  # warm the page cache
    start = time.perf_counter()
    subprocess.run(["grep", "-c", "Serving Benchmark Result", str(path)], capture_output=True)
    grep = time.perf_counter() - start
    digest = hashlib.sha256()
    scan = prefilter.for_formats()
    passes = {
        "read 1 MB chunks": timed_pass(path, lambda chunk: None),
        "sha256": timed_pass(path, digest.update),
        "prefilter scan": timed_pass(path, scan.candidates),
        "count lines": timed_pass(path, lambda chunk: chunk.count(b"\n")),
    }
    print(f"grep -c (one literal): {grep:.3f}s")
    for name, seconds in passes.items():
        print(f"{name:18} {seconds:.3f}s  {seconds / grep:.1f}x grep")
    main_thread = passes["prefilter scan"] + passes["count lines"]
    hash_thread = passes["sha256"]
    best = max(main_thread, hash_thread)
    print(f"best case, hash on the second core, no parsing at all: {best:.3f}s "
          f"-> {100 * grep / best:.0f}% of grep's throughput")


if __name__ == "__main__":
    main()
