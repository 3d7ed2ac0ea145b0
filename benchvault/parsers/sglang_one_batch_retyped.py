"""SGLang ``bench_one_batch`` results retyped by hand as tables → ``offline_runs`` rows.

Upstream printer: ``latency_test_run_once`` (``python/sglang/bench_one_batch.py``, formerly
``bench_latency.py``) prints a case's phases on lines of their own::

    Prefill. latency: 0.01670 s, throughput:   7656.28 token/s
    Decode.  median latency: 0.00295 s, median throughput:    339.00 token/s
    Total. latency:  0.202 s, throughput:    952.07 token/s

People copy them into tables of their own, a row per batch size: one table per phase under a
heading that names it, or one table with the phase in each header::

    ### Decode Performance (Median)              | Batch | Prefill latency (s) | Decode tok/s |
    | Batch Size | Latency (ms) | Throughput |     |     1 |              0.0167 |          339 |
    |          1 |         2.95 |        339 |

A column's phase is the one its header names (prefill, decode, total), else the one the
heading or label over the table names; its quantity is a latency (seconds; ``(ms)`` is
converted) or a throughput (tokens/s).  The columns are the ones the program's result JSONL
names (``prefill_latency``, ``median_decode_throughput``, ``total_latency``,
``overall_throughput``...); any other column goes to ``extra`` by its snake name.  A table is
claimed only when the note shows it is this program's: its command before it, or its name in
the heading or section.  A table per phase gives a row per phase and batch size; the tables of
one sweep are joined into a run per batch size by their place (``ingest.tablejoin``).  Every
table says, in a warning, that it was read by its header words.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from ..reading.tablecells import Table, cell_number, cell_text, printed_number, table
from .base import Block, Parsed, Problem, claimed_table
from .grammar import snake_name
from .offlinecontext import Case, case_rows, offline_context
from .sglang_one_batch import COMMANDS, TOOL

BATCH = re.compile(r"^(?:batch(?:[ _]?size)?|bs)\b", re.I)
LENGTHS = {"input_len": re.compile(r"^(?:input|isl|prompt)(?:[ _]?(?:len|length|tokens))?\b", re.I),
           "output_len": re.compile(r"^(?:output|osl|gen)(?:[ _]?(?:len|length|tokens))?$", re.I)}
# A phase the program prints, in a header's or a heading's words.
PHASES = (("prefill", re.compile(r"\b(?:prefill|extend)\b", re.I)),
          ("decode", re.compile(r"\bdecode\b", re.I)),
          ("total", re.compile(r"\b(?:total|overall|end[- ]to[- ]end|e2e)\b", re.I)))
LATENCY = re.compile(r"\b(?:latency|time)\b", re.I)
THROUGHPUT = re.compile(r"\b(?:throughput|tok(?:en)?s?/s|tps)\b|tok(?:en)?s?/s", re.I)
IN_MS = re.compile(r"\(\s*ms\s*\)|\bms\b", re.I)
COLUMNS = {("prefill", "latency"): "prefill_latency",
           ("prefill", "throughput"): "prefill_throughput",
           ("decode", "latency"): "median_decode_latency",
           ("decode", "throughput"): "median_decode_throughput",
           ("total", "latency"): "total_latency",
           ("total", "throughput"): "overall_throughput"}
# The program named where the note is (its heading or section): `SGLang bench_one_batch`.
NAMED = re.compile(r"\bbench[_ -]?one[_ -]?batch\b(?!_server)|\bone[- ]batch\b", re.I)


def _phase(words: str) -> str | None:
    """The phase ``words`` name first (`Total Throughput (Prefill + Decode)`: total), None
    for none."""
    named = [(m.start(), phase) for phase, pattern in PHASES if (m := pattern.search(words))]
    return min(named)[1] if named else None


def _quantity(header: str) -> str | None:
    if THROUGHPUT.search(header):
        return "throughput"
    return "latency" if LATENCY.search(header) else None


def _columns(t: Table, heading: str) -> dict[int, tuple[str, bool]] | None:
    """Column index → (offline_runs column, printed in ms), with ``batch_size`` and the
    lengths; None unless a batch-size column and a phase's column are there."""
    header = [cell_text(h) for h in t.header]
    batch = next((i for i, h in enumerate(header) if BATCH.match(h)), None)
    if batch is None:
        return None
    shared = _phase(heading)
    out: dict[int, tuple[str, bool]] = {batch: ("batch_size", False)}
    for i, name in enumerate(header):
        if i == batch:
            continue
        length = next((c for c, pattern in LENGTHS.items() if pattern.match(name)), None)
        quantity = _quantity(name)
        if length is not None and quantity is None:
            out[i] = (length, False)
            continue
        phase = _phase(name) or shared
        column = COLUMNS.get((phase, quantity)) if phase and quantity else None
        if column is not None:
            out[i] = (column, quantity == "latency" and IN_MS.search(name) is not None)
    return out if any(c in COLUMNS.values() for c, _ in out.values()) else None


def _heading(context: Any) -> str:
    return cell_text(getattr(context, "label_or_heading", None) or "")


def _ours(context: Any) -> bool:
    """The note shows the table is this program's: its command, or its name over the table."""
    if context is None:
        return False
    if any(kind in context.commands for kind in COMMANDS):
        return True
    return NAMED.search(" ".join([*context.section, context.label or ""])) is not None


def claims(lines: list[str], context: Any = None) -> bool:
    t = table(lines)
    return t is not None and _ours(context) and _columns(t, _heading(context)) is not None


def build(block: Block) -> list[Parsed | Problem]:
    t = table(block.lines)
    columns = _columns(t, _heading(block.context)) if t is not None else None
    if columns is None:
        return []
    header = [cell_text(h) for h in t.header]
    cases: list[Case] = []
    for index, row in t.body:
        at = block.line_start + index
        case = Case(at)
        for i, text in enumerate(row[:len(header)]):
            if i in columns:
                column, in_ms = columns[i]
                printed, _ = printed_number(cell_text(text))
                if printed is not None and in_ms:       # (in seconds, as printed: 7.02 → 0.00702)
                    printed = str(Decimal(printed).scaleb(-3))
                if printed is not None:
                    case.put(column, printed, at, header[i])
            elif header[i] and (value := cell_number(cell_text(text))[0]) is not None:
                case.extra[snake_name(header[i])] = value
        if "batch_size" in case.fields and len(case.fields) > 1:
            cases.append(case)
    if not cases:
        return []
    cases[0].warnings.append((cases[0].first, "a table retyped by hand, read as "
                              "bench_one_batch results by its header words"))
    row0, command = offline_context(block, "sglang_one_batch", COMMANDS["sglang_one_batch"],
                                    TOOL, "sglang")
    return case_rows(block, cases, row0, command, FORMAT.name)


FORMAT = claimed_table(
    name="sglang_one_batch_retyped",
    table="offline_runs",
    description="SGLang bench_one_batch results retyped by hand as tables: a row per batch "
                "size, a phase's latency and throughput per column (or per table, under a "
                "heading naming the phase); claimed when the note shows the program.",
    upstream=("sglang python/sglang/bench_one_batch.py (latency_test_run_once), retyped",),
    build=build,
    claims=claims,
    by_own_header=True,     # (the note names the program: before serving_retyped's words)
)
