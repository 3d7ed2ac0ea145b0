"""Ingest speed and memory, measured against grep on the same files, in one run.

Builds two logs under bench/data/ from the fixtures:
  * prose-heavy: seed notes' result blocks interleaved with prose and vLLM server chatter;
  * blocks-only: serving result blocks back to back.
Then prints, for each: size, ingest MB/s and blocks/s, `grep -c` time and the ratio of the two
throughputs, peak RSS of the ingest process, and the time to re-ingest the unchanged file.

    python bench/ingest_speed.py --size-mb 1024        # the issue's 1 GB figure
    python bench/ingest_speed.py --size-mb 200         # quicker
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / "data"
SEEDS = ROOT / "fixtures" / "seeds"
BLOCK_RE = re.compile(r"^=+ Serving Benchmark Result =+\n.*?^={10,}\n", re.M | re.S)

PROSE = (
    "We re-ran the sweep after the driver update; numbers below are from the second pass.\n",
    "- note: the first request warms the prefix cache, so TTFT at c=1 is pessimistic\n",
    "INFO 01-05 11:40:12 metrics.py:467] Avg prompt throughput: 0.0 tokens/s, Avg generation "
    "throughput: 231.4 tokens/s, Running: 64 reqs, Swapped: 0 reqs, Pending: 0 reqs, "
    "GPU KV cache usage: 41.2%, CPU KV cache usage: 0.0%.\n",
    "INFO:     127.0.0.1:51234 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n",
    "(VllmWorker rank=0 pid=1234) INFO 05-12 10:00:01 [gpu_model_runner.py:1234] "
    "Graph capturing finished in 12 secs.\n",
    "Some prose about why pipeline parallelism is slower on PCIe boxes than tensor parallelism, "
    "with enough words to look like a real paragraph in somebody's notes.\n",
)


def seed_chunks() -> tuple[list[str], list[str]]:
    """(the seed notes split into labelled chunks each holding one block, the bare blocks)."""
    chunks, blocks = [], []
    for seed in sorted(SEEDS.glob("*.md")):
        text = seed.read_text()
        for match in BLOCK_RE.finditer(text):
            blocks.append(match.group(0))
            chunks.append(f"# c={random.choice([1, 8, 16, 64])}\n" + match.group(0))
    return chunks, blocks


def build(path: Path, size_mb: int, prose_lines_per_block: int) -> int:
    """Write ``path`` up to ``size_mb``; return how many result blocks it holds."""
    if path.exists() and path.stat().st_size >= size_mb << 20:
        return int((path.with_suffix(".blocks")).read_text())
    random.seed(7)
    chunks, blocks = seed_chunks()
    target = size_mb << 20
    written = count = 0
    with open(path, "w") as out:
        out.write("# Benchmark notes\n\n```\n")
        while written < target:
            parts = [random.choice(PROSE) for _ in range(prose_lines_per_block)]
            parts.append(random.choice(chunks) if prose_lines_per_block else random.choice(blocks))
            piece = "".join(parts)
            out.write(piece)
            written += len(piece)
            count += 1
        out.write("```\n")
    path.with_suffix(".blocks").write_text(str(count))
    return count


def timed(cmd: list[str]) -> tuple[float, int, str]:
    """(seconds, peak RSS in MB of the child, stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        sys.exit(f"{cmd} failed: {proc.stderr[-2000:]}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return seconds, max(peak, before) // 1024, proc.stdout


def measure(name: str, path: Path, blocks: int) -> dict:
    size_mb = path.stat().st_size / (1 << 20)
    grep_s, _, _ = timed(["grep", "-c", "Serving Benchmark Result", str(path)])
    db = path.with_suffix(".db")
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    bv = [sys.executable, "-m", "benchvault.cli", "ingest", str(path), "--db", str(db), "--json"]
    # A fresh interpreter per measurement, so peak RSS is the ingest's own.
    first_s, rss_mb, out = timed(bv)
    runs = json.loads(out)[0]["counts"].get("serving_runs", 0)
    again_s, _, _ = timed(bv)
    return {
        "file": name, "size_mb": round(size_mb, 1), "blocks": blocks, "runs_stored": runs,
        "ingest_s": round(first_s, 2), "ingest_mb_s": round(size_mb / first_s, 1),
        "blocks_s": round(runs / first_s), "grep_s": round(grep_s, 3),
        "grep_mb_s": round(size_mb / grep_s, 1),
        "ingest_vs_grep": f"{100 * grep_s / first_s:.1f}%",
        "peak_rss_mb": rss_mb, "reingest_s": round(again_s, 2),
        "reingest_vs_first": f"{100 * again_s / first_s:.1f}%",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=200, help="size of each generated log")
    args = parser.parse_args()
    DATA.mkdir(parents=True, exist_ok=True)
    prose = DATA / f"prose-{args.size_mb}mb.md"
    only = DATA / f"blocks-{args.size_mb}mb.md"
    results = [measure("prose-heavy", prose, build(prose, args.size_mb, 40)),
               measure("blocks-only", only, build(only, args.size_mb, 0))]
    keys = list(results[0])
    widths = {k: max(len(k), *(len(str(r[k])) for r in results)) for k in keys}
    print("  ".join(k.ljust(widths[k]) for k in keys))
    for r in results:
        print("  ".join(str(r[k]).ljust(widths[k]) for k in keys))


if __name__ == "__main__":
    os.chdir(ROOT)
    main()
