"""SGLang's ``bench_one_batch_server --show-report`` table → one ``offline_runs`` row per case.

Upstream printer: ``get_report_summary`` (``python/sglang/bench_one_batch_server.py`` by 0.5.2,
not in 0.4.10, then ``sglang/test/bench_one_batch_server_internal.py`` and
``sglang/benchmark/one_batch_server.py``).  After the cases' own lines it prints their lengths
and a GitHub table by ``tabulate``, one row per case (sorted by input length)::

    Input lens: [1024]. Output lens: [8].
    |   batch size |   input len |   latency (s) |   input throughput (tok/s) |   output ...
    |-------------:|------------:|--------------:|---------------------------:|----------...
    |           16 |        1024 |          0.52 |                   63015.85 |       1103...

0.5.2 and before print no ``input len`` and no ``cache hit rate`` column; ``--profile`` adds
``profile``; the current code without ``--ignore-eos`` adds ``steady output throughput
(tok/s)``, ``steady ITL (ms)`` and ``early stops``.  A row is the case its own lines printed
(``sglang_one_batch_server``), named as they name it: ``latency (s)`` is ``total_latency``,
the throughputs their columns, ``acc length`` and ``cache hit rate`` ``extra`` as the lines'
``acc_length`` and ``cache_hit_rate``.  What only the table prints goes to ``extra`` by its
header in snake case with its unit (``itl_ms``, ``input_cost_usd_per_1m``).  The output
length, which no column shows, comes from the command.  A table is this report when its
header is the program's: ``batch size`` first, every column one of these.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from ..reading.tablecells import Table, table
from .base import Block, Parsed, Problem, claimed_table
from .offlinecontext import Case, case_rows, offline_context, sweep
from .sglang_one_batch_server import COMMANDS, TOOL

# header → offline_runs column, ``extra.<key>``, or None (a link, not a figure)
HEADERS = {
    "batch size": "batch_size", "input len": "input_len", "latency (s)": "total_latency",
    "input throughput (tok/s)": "input_throughput",
    "output throughput (tok/s)": "output_throughput",
    "acc length": "extra.acc_length", "itl (ms)": "extra.itl_ms",
    "input cost ($/1m)": "extra.input_cost_usd_per_1m",
    "output cost ($/1m)": "extra.output_cost_usd_per_1m",
    "cache hit rate": "extra.cache_hit_rate",
    "steady output throughput (tok/s)": "extra.steady_state_output_throughput",
    "steady itl (ms)": "extra.steady_itl_ms", "early stops": "extra.num_early_stopped",
    "profile": None, "profile (extend)": None, "profile (decode)": None,
}
NO_VALUE = re.compile(r"n/?a|-*")
# The line before the table: `Input lens: [1024]. Output lens: [8].` (the program's own
# lengths: a command seen earlier in the note may be another run's).
LENS_LINE = re.compile(r"^(Input lens):[ \t]*(\[[\d, ]*\]\.[ \t]*Output lens:[ \t]*\[[\d, ]*\].*)$")
LENS = re.compile(r"^\[([\d, ]*)\]\.[ \t]*Output lens:[ \t]*\[([\d, ]*)\]")


def _lengths(printed: str | None) -> dict[str, list[int]]:
    """input_len / output_len: the lists the `Input lens` line printed."""
    match = LENS.match(printed or "")
    return {column: [int(n) for n in re.findall(r"\d+", values)]
            for column, values in zip(("input_len", "output_len"),
                                      match.groups() if match else ())}


CONTEXT_COLUMNS = ("section", "label", "tags", "tool", "engine")
REQUIRED = ("batch size", "latency (s)", "input throughput (tok/s)")


def _header(t: Table | None) -> list[str] | None:
    """The report's header (lower case), None when ``t`` is no such table."""
    if t is None:
        return None
    header = [" ".join(cell.lower().split()) for cell in t.header]
    if not header or header[0] != "batch size" or not all(h in HEADERS for h in header) \
            or not all(h in header for h in REQUIRED):
        return None
    return header


def claims(lines: list[str], context: Any = None) -> bool:
    """The table is the program's report: its header names its columns, `batch size` first."""
    return _header(table(lines)) is not None


def build(block: Block) -> list[Parsed | Problem]:
    t = table(block.lines)
    header = _header(t)
    if header is None:
        return []
    cases: list[Case] = []
    for index, row in t.body:
        at = block.line_start + index
        case = Case(at)
        for name, text in zip(header, row):
            target = HEADERS[name]
            if target is None or NO_VALUE.fullmatch(text.strip().lower()):
                continue
            if name == "early stops":       # `3/16`: 3 of the batch's 16
                text = text.split("/", 1)[0]
            if target.startswith("extra."):
                value = case.number(name, text, at)
                if value is not None:
                    key = target[len("extra."):]
                    case.extra[key] = int(value) if key == "num_early_stopped" else value
            else:
                case.put(target, text, at, name)
        if "total_latency" in case.fields:
            cases.append(case)
    if not cases:
        return []
    row0, command = offline_context(block, "sglang_one_batch_server",
                                    COMMANDS["sglang_one_batch_server"], TOOL, "sglang")
    lengths = _lengths(block.context.printed.get("Input lens"))
    if command is not None and any(sweep(command.text, k) not in (None, v)
                                   for k, v in lengths.items()):
        # the command seen before is another run's: only the note's own context is this one's
        row0 = {k: v for k, v in row0.items() if k in CONTEXT_COLUMNS}
        command = None
    row0.update({k: v[0] for k, v in lengths.items() if len(v) == 1})
    return case_rows(block, cases, row0, command, FORMAT.name)


FORMAT = replace(claimed_table(
    name="sglang_one_batch_report",
    table="offline_runs",
    description="SGLang bench_one_batch_server's report table (`--show-report`): `| batch size "
                "| input len | latency (s) | input throughput (tok/s) | ...`, one offline run "
                "per row.",
    upstream=("sglang python/sglang/bench_one_batch_server.py 0.5.2 – (get_report_summary)",),
    build=build,
    claims=claims,
    by_own_header=True,
), preamble=LENS_LINE, preamble_markers=("input lens",))
