"""Do the regexes the segmenter runs on every line stay linear on long lines?

A pasted terminal line can be megabytes (a progress bar, a base64 blob). A pattern that
backtracks (`\\S*name`, `\\w+ suffix`) turns that line into minutes. For every per-line pattern
(line formats, block starts, command patterns, the segmenter's own) this times a search on
adversarial lines of n and 4n characters and prints the ratio: ~4 is linear, ~16 quadratic.
Exit status 1 when any ratio exceeds --max-ratio.

    python bench/pattern_scaling.py
"""

from __future__ import annotations

import argparse
import re
import sys
import time

from benchvault.parsers import block_formats, line_formats
from benchvault.reading import segmenter as segmenter_module
from benchvault.reading.segmenter import Segmenter

# Runs of one piece each: word characters, spaces, brackets, path separators, quotes, rules.
PIECES = ["x", "a ", "] ", "# ", "| ", "=", "-", "(", "/", "'", "KV", "serve ", "1.", " took",
          "Device 0: ", "init engine "]


def patterns() -> list[tuple[str, re.Pattern[str]]]:
    found = [(f.name, f.pattern) for f in line_formats()]
    found += [(f"{f.name} start", f.start) for f in block_formats()]
    segmenter = Segmenter("scaling.md")
    found += [(f"command {kind}", p) for kind, p in segmenter.commands.items()]
    found += [(name, value) for name, value in vars(segmenter_module).items()
              if name.endswith("_RE") and isinstance(value, re.Pattern)]
    return found


def worst_time(pattern: re.Pattern[str], length: int) -> float:
    worst = 0.0
    for piece in PIECES:
        line = piece * (length // len(piece))
        start = time.perf_counter()
        pattern.search(line)
        worst = max(worst, time.perf_counter() - start)
    return worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--length", type=int, default=20_000)
    parser.add_argument("--max-ratio", type=float, default=10.0)
    args = parser.parse_args()
    bad = 0
    print(f"{'pattern':40} {'n':>10} {'4n':>10} {'ratio':>7}")
    for name, pattern in patterns():
        short = worst_time(pattern, args.length)
        long = worst_time(pattern, 4 * args.length)
        ratio = long / short if short > 0 else 0.0
        flag = " SUPERLINEAR" if ratio > args.max_ratio and long > 0.005 else ""
        bad += bool(flag)
        print(f"{name[:40]:40} {short * 1e3:9.2f}ms {long * 1e3:9.2f}ms {ratio:7.1f}{flag}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
