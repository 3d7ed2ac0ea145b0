"""Ingest speed and memory, measured against grep on the same files, in one run.

Builds three logs under bench/data/ from the fixtures:
  * prose-heavy: what a multi-GB log is made of -- a vLLM server's per-request chatter
    (uvicorn access lines, `Received request` lines with the prompt, `Added`/`Finished
    request`), an engine-stats line every ~100 requests, a few lines of notes, and after each
    run of 1,000 requests the `# c=N` label, the bench command and a seed's result block;
  * blocks-only: serving result blocks back to back (the seeds' 28 blocks repeated: after the
    first of each, every block is a run seen again);
  * distinct blocks: the same, each block's numbers moved a little, so that every block is a
    run of its own (what a long sweep is: new runs, most with the same request count);
  * chatter-heavy: the seeds' blocks every 40 lines, a third of those lines being parsed
    engine-stats and start-up lines (no server prints that; the old "prose" file, kept for
    comparison).
Then prints, for each: size, ingest MB/s and blocks/s, peak RSS of the ingest process, the time
to re-ingest the unchanged file, and two grep baselines with the ratio of throughputs:
  * `grep -c 'Serving Benchmark Result'`: one literal, grep's fastest case;
  * `grep -c -F -f markers` (+ `-i` for the caseless ones): grep finding the lines benchvault's
    prefilter finds (bench/data/markers*.txt), i.e. the same search without the parsing.

    python bench/ingest_speed.py --size-mb 1024        # 1 GB
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


# One sharegpt-like prompt; vLLM logs it with its token ids on every request (V0 and V1 with
# request logging on), which is what makes server logs gigabytes.
PROMPT = ("Summarise the differences between tensor parallelism and pipeline parallelism for "
          "serving a 70B model on eight GPUs connected over PCIe, and say which one you would "
          "pick for a latency-sensitive chat service and why.")
TOKEN_IDS = ", ".join(str(1000 + (i * 7919) % 30000) for i in range(48))
SAMPLING = ("SamplingParams(n=1, presence_penalty=0.0, frequency_penalty=0.0, "
            "repetition_penalty=1.0, temperature=0.0, top_p=1.0, top_k=-1, min_p=0.0, seed=None, "
            "stop=[], stop_token_ids=[], include_stop_str_in_output=False, ignore_eos=True, "
            "max_tokens=128, min_tokens=0, logprobs=None, prompt_logprobs=None, "
            "skip_special_tokens=True, spaces_between_special_tokens=True)")
NOTES = PROSE[:2] + PROSE[-1:]


def request_lines(i: int) -> str:
    """What a vLLM server logs for one benchmark request."""
    rid = f"cmpl-{i:032x}-0"
    stamp = f"01-05 11:{(i // 60) % 60:02d}:{i % 60:02d}"
    return (f"INFO {stamp} logger.py:37] Received request {rid}: prompt: {PROMPT!r}, params: "
            f"{SAMPLING}, prompt_token_ids: [{TOKEN_IDS}], lora_request: None, "
            f"prompt_adapter_request: None.\n"
            f"INFO {stamp} engine.py:267] Added request {rid}.\n"
            f"INFO:     127.0.0.1:{40000 + i % 20000} - \"POST /v1/completions HTTP/1.1\" 200 OK\n"
            f"INFO {stamp} engine.py:285] Finished request {rid}.\n")


def server_run(chunk: str, requests: int = 1000) -> str:
    """One benchmark run as a server log shows it, the client's result block at its end."""
    parts = [random.choice(NOTES) for _ in range(3)]
    for i in range(requests):
        parts.append(request_lines(i))
        if i % 100 == 99:
            parts.append(PROSE[2])  # the engine-stats line, every ~10 s
    parts.append("vllm bench serve --model meta-llama/Llama-3.1-8B-Instruct --dataset-name random "
                 "--num-prompts 1000 --max-concurrency 16\n")
    parts.append(chunk)
    return "".join(parts)


def seed_chunks() -> tuple[list[str], list[str]]:
    """(the seed notes split into labelled chunks each holding one block, the bare blocks)."""
    chunks, blocks = [], []
    for seed in sorted(SEEDS.glob("*.md")):
        text = seed.read_text()
        for match in BLOCK_RE.finditer(text):
            blocks.append(match.group(0))
            chunks.append(f"# c={random.choice([1, 8, 16, 64])}\n" + match.group(0))
    return chunks, blocks


# A block's `Label (unit):   123.45` lines: the number is moved, its width kept.
NUMBER_LINE = re.compile(r"(?<=:)(\s+)(\d+)(\.\d+)?$", re.M)


def moved(match: re.Match) -> str:
    space, whole, fraction = match.group(1), int(match.group(2)), match.group(3)
    if whole > 3:
        whole += random.randint(-3, 3)
    if fraction:
        fraction = "." + "".join(random.choice("0123456789") for _ in fraction[1:])
    return space + str(whole) + (fraction or "")


def build(path: Path, size_mb: int, kind: str) -> int:
    """Write ``path`` (``kind``: prose, blocks or chatter) up to ``size_mb``; return how many
    result blocks it holds."""
    if path.exists() and path.stat().st_size >= size_mb << 20:
        return int((path.with_suffix(".blocks")).read_text())
    random.seed(7)
    chunks, blocks = seed_chunks()
    target = size_mb << 20
    written = count = 0
    with open(path, "w") as out:
        out.write("# Benchmark notes\n\n```\n")
        while written < target:
            if kind == "prose":
                piece = server_run(random.choice(chunks))
            elif kind == "blocks":
                piece = random.choice(blocks)
            elif kind == "distinct":
                piece = NUMBER_LINE.sub(moved, random.choice(blocks))
            else:
                piece = "".join([random.choice(PROSE) for _ in range(40)] + [random.choice(chunks)])
            out.write(piece)
            written += len(piece)
            count += 1
        out.write("```\n")
    path.with_suffix(".blocks").write_text(str(count))
    return count


def warm(path: Path) -> None:
    """Read ``path`` into the page cache: this VM reclaims idle cache within minutes, and a
    grep reading from disk would make any ratio meaningless."""
    with open(path, "rb", buffering=0) as fh:
        while fh.read(8 << 20):
            pass


def timed(cmd: list[str], path: Path) -> tuple[float, int, str]:
    """(seconds, peak RSS in MB of the child, stdout), ``path`` read into the cache first."""
    warm(path)
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        sys.exit(f"{cmd} failed: {proc.stderr[-2000:]}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return seconds, max(peak, before) // 1024, proc.stdout


def marker_files() -> tuple[Path, Path, Path]:
    """benchvault's prefilter markers as grep pattern files: -F exact, -F caseless, and -P
    (the regexes for what no literal marks, e.g. a line opening a pasted JSON file)."""
    from benchvault.reading import prefilter

    exact, caseless, patterns = prefilter.for_formats().markers
    files = DATA / "markers.txt", DATA / "markers-caseless.txt", DATA / "markers-regex.txt"
    for file, markers in zip(files, (exact, caseless, patterns)):
        file.write_bytes(b"\n".join(markers) + b"\n")
    return files


def measure(name: str, path: Path, blocks: int) -> dict:
    size_mb = path.stat().st_size / (1 << 20)
    grep_s, _, _ = timed(["grep", "-c", "Serving Benchmark Result", str(path)], path)
    # grep doing the search benchvault does: every line holding one of its markers.
    exact, caseless, regexes = marker_files()
    grep_markers_s = (timed(["grep", "-c", "-F", "-f", str(exact), str(path)], path)[0]
                      + timed(["grep", "-c", "-i", "-F", "-f", str(caseless), str(path)], path)[0]
                      + sum(timed(["grep", "-c", "-P", "-e", pattern, str(path)], path)[0]
                            for pattern in regexes.read_text().split("\n") if pattern))
    db = path.with_suffix(".db")
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    bv = [sys.executable, "-m", "benchvault", "ingest", str(path), "--db", str(db), "--json"]
    # A fresh interpreter per measurement, so peak RSS is the ingest's own.
    first_s, rss_mb, out = timed(bv, path)
    runs = json.loads(out)[0]["counts"].get("serving_runs", 0)
    again_s, _, _ = timed(bv, path)
    return {
        "file": name, "size_mb": round(size_mb, 1), "blocks": blocks, "runs_stored": runs,
        "ingest_s": round(first_s, 2), "ingest_mb_s": round(size_mb / first_s, 1),
        "blocks_s": round(runs / first_s), "grep_s": round(grep_s, 3),
        "grep_mb_s": round(size_mb / grep_s, 1),
        "ingest_vs_grep": f"{100 * grep_s / first_s:.1f}%",
        "grep_markers_s": round(grep_markers_s, 3),
        "ingest_vs_grep_markers": f"{100 * grep_markers_s / first_s:.1f}%",
        "peak_rss_mb": rss_mb, "reingest_s": round(again_s, 2),
        "reingest_vs_first": f"{100 * again_s / first_s:.1f}%",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=200,
                        help="size of the prose-heavy and blocks-only logs")
    parser.add_argument("--chatter-mb", type=int, default=50,
                        help="size of the chatter-heavy log (0: leave it out)")
    parser.add_argument("--distinct-mb", type=int, default=20,
                        help="size of the distinct-blocks log (0: leave it out)")
    args = parser.parse_args()
    DATA.mkdir(parents=True, exist_ok=True)
    results = []
    for name, kind, size in (("prose-heavy", "prose", args.size_mb),
                             ("blocks-only", "blocks", args.size_mb),
                             ("distinct blocks", "distinct", args.distinct_mb),
                             ("chatter-heavy", "chatter", args.chatter_mb)):
        if size:
            path = DATA / f"{kind}-{size}mb.log"   # a server log: read with skips (see README)
            results.append(measure(name, path, build(path, size, kind)))
    keys = list(results[0])
    widths = {k: max(len(k), *(len(str(r[k])) for r in results)) for k in keys}
    print("  ".join(k.ljust(widths[k]) for k in keys))
    for r in results:
        print("  ".join(str(r[k]).ljust(widths[k]) for k in keys))


if __name__ == "__main__":
    os.chdir(ROOT)
    main()
