"""A stand-in for a benchmark tool or a server: prints a real capture line by line.

Run as the program a test puts on PATH (`vllm`, `llama-server`, ...).  The capture is the file
named by STANDIN_CAPTURE (a contract capture: its own `$ command` first line is skipped, the
recorded command line takes its place).  STANDIN_SLEEP: seconds between lines (default 0.01);
STANDIN_AFTER / STANDIN_GO: after that many lines, wait until the file STANDIN_GO exists;
STANDIN_HOLD=1: then wait for Ctrl-C (a server); STANDIN_EXIT: the exit status.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path


def main() -> int:
    lines = Path(os.environ["STANDIN_CAPTURE"]).read_bytes().splitlines(keepends=True)
    if lines and lines[0].startswith(b"$ "):
        lines = lines[1:]
    pause = float(os.environ.get("STANDIN_SLEEP", "0.01"))
    after = int(os.environ.get("STANDIN_AFTER", "-1"))
    go = os.environ.get("STANDIN_GO")
    stopped = []
    signal.signal(signal.SIGINT, lambda signum, frame: stopped.append(signum))
    out = sys.stdout.buffer
    for n, line in enumerate(lines):
        if n == after and go:
            while not Path(go).exists() and not stopped:
                time.sleep(0.02)
        if stopped:
            break
        out.write(line)
        out.flush()
        time.sleep(pause)
    if os.environ.get("STANDIN_HOLD") == "1":
        while not stopped:
            time.sleep(0.02)
    if stopped:
        out.write(b"Shutting down after Ctrl-C\n")
        out.flush()
        return 0
    return int(os.environ.get("STANDIN_EXIT", "0"))


if __name__ == "__main__":
    sys.exit(main())
