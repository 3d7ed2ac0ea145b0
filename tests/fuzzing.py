"""Mutations of real fixtures, shared by the property tests and bench/fuzz_campaign.py.

Each mutation turns fixture bytes into what users really feed benchvault: half-copied
scrollback, odd encodings, binary junk, numbers that are not numbers.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
CORPUS = sorted(p for p in (ROOT / "fixtures").rglob("*")
                if p.is_file() and ".expected." not in p.name and p.stat().st_size < 200_000)
NUMBER_RE = re.compile(rb"\d+(?:\.\d+)?")
ODD_NUMBERS = [b"1e5", b"nan", b"inf", b"-", b"N/A", b"-0", b"1,024", b"12.3.4", b"", b"\xff"]


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


@st.composite
def mutated(draw) -> bytes:
    """Fixture bytes with one to four mutations applied."""
    path = draw(st.sampled_from(CORPUS))
    data = path.read_bytes()
    for _ in range(draw(st.integers(1, 4))):
        data = draw(st.sampled_from(MUTATIONS))(draw, data)
    return data


@st.composite
def mutated_excerpt(draw) -> bytes:
    """Like ``mutated`` but over a window of at most 150 lines: cheap enough for 100k inputs."""
    lines = _lines(draw(st.sampled_from(CORPUS)).read_bytes())
    start = draw(st.integers(0, max(len(lines) - 1, 0)))
    data = b"\n".join(lines[start:start + draw(st.integers(1, 150))])
    for _ in range(draw(st.integers(1, 4))):
        data = draw(st.sampled_from(MUTATIONS))(draw, data)
    return data


def drop_lines(draw, data):
    lines = _lines(data)
    i = draw(st.integers(0, max(len(lines) - 1, 0)))
    n = draw(st.integers(1, 30))
    return b"\n".join(lines[:i] + lines[i + n:])


def duplicate_lines(draw, data):
    lines = _lines(data)
    i = draw(st.integers(0, max(len(lines) - 1, 0)))
    n = draw(st.integers(1, 30))
    return b"\n".join(lines[:i + n] + lines[i:i + n] + lines[i + n:])


def swap_lines(draw, data):
    lines = _lines(data)
    if len(lines) < 2:
        return data
    i, j = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
    lines[i], lines[j] = lines[j], lines[i]
    return b"\n".join(lines)


def cut(draw, data):
    return data[: draw(st.integers(0, len(data)))]


def insert_binary(draw, data):
    i = draw(st.integers(0, len(data)))
    return data[:i] + draw(st.binary(min_size=1, max_size=64)) + data[i:]


def reencode(draw, data):
    text = data.decode("utf-8", errors="replace")
    encoding = draw(st.sampled_from(["latin-1", "utf-16", "utf-16-le", "cp1252", "utf-8-sig"]))
    return text.encode(encoding, errors="replace")


def crlf(draw, data):
    return data.replace(b"\n", b"\r\n")


def ansi(draw, data):
    lines = _lines(data)
    colour = draw(st.sampled_from([b"\x1b[1;32m", b"\x1b[0m", b"\x1b]0;title\x07", b"\x1b[2K\r"]))
    i = draw(st.integers(0, max(len(lines) - 1, 0)))
    lines[i] = colour + lines[i] + b"\x1b[0m"
    return b"\n".join(lines)


def odd_number(draw, data):
    matches = list(NUMBER_RE.finditer(data))
    if not matches:
        return data
    m = draw(st.sampled_from(matches))
    return data[: m.start()] + draw(st.sampled_from(ODD_NUMBERS)) + data[m.end():]


def long_line(draw, data):
    i = draw(st.integers(0, len(data)))
    return data[:i] + b"x" * draw(st.sampled_from([10_000, 1_000_000])) + data[i:]


LINE_PREFIXES = [b"# ", b"// ", b"-- ", b"; ", b"> ", b"> > ", b"[stdout] ", b"vllm-1  | ",
                 b"[pod/vllm-0/vllm] ", b"2025-03-01T12:00:00.1234567Z ",
                 b"Nov 22 12:00:01 gpu-3 python3[4242]: ",
                 # a logging setup's own fields between bars (loguru's, a fork's)
                 b"2025-01-05 10:00:00.123 | INFO     | bench:run:42 - ",
                 b"2026-03-30 13:11:55 | gpu_model_runner | 140661262452544 | INFO : "]


def prefix_lines(draw, data):
    """A run of lines commented, quoted or stamped by a log collector."""
    lines = _lines(data)
    i = draw(st.integers(0, max(len(lines) - 1, 0)))
    n = draw(st.integers(1, 60))
    prefix = draw(st.sampled_from(LINE_PREFIXES))
    return b"\n".join(lines[:i] + [prefix + line if line.strip() else prefix.rstrip()
                                   for line in lines[i:i + n]] + lines[i + n:])


def hard_wrap(draw, data):
    """A terminal's hard wrap at some width: every longer line cut into pieces."""
    width = draw(st.sampled_from([80, 100, 120, draw(st.integers(40, 200))]))
    out = []
    for line in _lines(data):
        while len(line) > width:
            out.append(line[:width].rstrip())
            line = line[width:]
        out.append(line)
    return b"\n".join(out)


MUTATIONS = [drop_lines, duplicate_lines, swap_lines, cut, insert_binary, reencode, crlf, ansi,
             odd_number, long_line, prefix_lines, hard_wrap]

# Columns a serving row takes from its block (not from the Namespace or command).
BLOCK_COLUMNS = ("completed", "duration", "total_input_tokens", "total_output_tokens",
                 "request_throughput", "output_throughput", "total_token_throughput",
                 "mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "p99_itl_ms")
TOKEN_RE = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?inf|nan", re.I)


def check_values_come_from_text(db: Path) -> None:
    """Every block-derived number stored is a number printed in that row's raw text, or in
    the text of another sighting of the same run (a block cut short, then printed whole
    again: one run seen twice, its columns completed by the second)."""
    conn = sqlite3.connect(db)
    try:
        # Printed result blocks (a saved-result JSON row keeps no raw copy of every number).
        others = ("(SELECT group_concat(s.raw_text, ' ') FROM sightings s "
                  "WHERE s.run_id = serving_runs.id)")
        for row in conn.execute(f"SELECT coalesce(raw_text, '') || ' ' || coalesce({others}, ''), "
                                f"{', '.join(BLOCK_COLUMNS)} FROM serving_runs "
                                "WHERE format = 'vllm_serving'"):
            printed = {float(t) for t in TOKEN_RE.findall(row[0] or "")}
            for column, value in zip(BLOCK_COLUMNS, row[1:]):
                assert value is None or float(value) in printed, (column, value)
    finally:
        conn.close()
