"""SGLang's ``bench_one_batch`` (earlier ``bench_latency``): one static batch per case →
``offline_runs``, its step lines → ``offline_steps``.

Upstream printer: ``python/sglang/bench_one_batch.py`` (``bench_latency.py`` until late 2024).
It runs the model in process, no server: a warmup case, then each case of its sweep
(``--batch-size`` × ``--input-len`` × ``--output-len``), each printing

    Prefill. latency: 0.03012 s, throughput:  34000.12 token/s
    Decode.  latency: 0.01234 s, throughput:   1296.60 token/s        the first 5 decode steps
    Decode 0. Batch size: 16, latency: ...                            (later: with batch size)
    Decode.  median latency: 0.01230 s, median throughput:   1300.81 token/s
    Total. latency:  1.234 s, throughput:   2000.00 token/s

between ``Warmup ...`` and ``Benchmark ...`` lines.  A case from its ``Prefill.`` line to its
``Total.`` line is a row, its columns named as the program's result JSONL names them:
``prefill_latency``/``prefill_throughput``, ``median_decode_latency``/
``median_decode_throughput``, ``total_latency``/``overall_throughput`` (latencies in s,
throughputs in tok/s).  The cases after ``Warmup ...`` and before ``Benchmark ...`` are rows of
phase ``warmup`` (the sweep's first batch size and input length; its output length, 8 or at
most 32 tokens by version, is left unknown); the others
of phase ``benchmark``.  Every step line is an ``offline_steps`` row (``Decode N.`` numbered as
printed, unnumbered ones in order from 0).  The batch size comes from the decode step lines
when they print it, else (and the lengths) from the command line's sweep.  A case cut short
(the paste ends after its prefill) keeps what it printed, with a warning.
"""

from __future__ import annotations

import math
import re
from typing import Any

from lark import v_args

from . import grammar
from .base import Block, BlockFormat, BlockParseError, Parsed, Problem, own_lines
from .grammar import ColumnTransformer, flatten
from .offlinecontext import Case, case_rows, offline_context, warmup_case

TOOL = "sglang.bench_one_batch"

COMMANDS = {"sglang_one_batch": re.compile(
    r"\bsglang\.bench_one_batch\b(?!_server)|\bbench_one_batch\.py\b"
    r"|\bsglang\.bench_latency\b|\bbench_latency\.py\b(?<!benchmark_latency\.py)")}

_V = r"[-+]?[\d!?*~^$&@][\w.!?*~^$&@+-]*|[-+]?inf|nan"
_PAIR = rf"latency:[ \t]*(?:{_V})[ \t]*s,[ \t]*throughput:[ \t]*(?:{_V})[ \t]*(?:token|tok)/s"
_OWN = (rf"Prefill\.[ \t]+{_PAIR}|Total\.[ \t]+{_PAIR}"
        rf"|Decode(?:[ \t]+\d+)?\.[ \t]+(?:Batch size:[ \t]*(?:{_V}),[ \t]*)?{_PAIR}"
        rf"|Decode\.[ \t]+median latency:[ \t]*(?:{_V})[ \t]*s,[ \t]*median throughput:"
        rf"[ \t]*(?:{_V})[ \t]*(?:token|tok)/s"
        r"|Warmup \.\.\.|Benchmark \.\.\.|skipping \(\d+, \d+, \d+\) due to max batch size limit")
_PREFIX = r"^[\s>#*/-]*"
CONTINUES = re.compile(_PREFIX + rf"(?:{_OWN})[ \t]*$")
START = re.compile(_PREFIX + rf"(?:Prefill\.[ \t]+{_PAIR}|Warmup \.\.\.)[ \t]*$")


@v_args(inline=True)
class LinesToItems(ColumnTransformer):
    """Tree → (kind, [values], line) tuples, in order (values: the VALUE tokens as printed)."""

    def start(self, *items):
        return [i for i in flatten(items) if isinstance(i, tuple)]

    def column(self, name, children):
        values = [str(t) for t in children if getattr(t, "type", None) == "VALUE"]
        return (name, values, children[0].line)


def parse_lines(text: str) -> list[tuple]:
    parser = grammar.in_parser("sglang_one_batch.lark", __file__, LinesToItems)
    return grammar.parse(parser, text + "\n", "bench_one_batch result")


# A step line's kind → its columns (latency, throughput) in offline_runs, when it has them.
_COLUMNS = {"prefill": ("prefill_latency", "prefill_throughput"),
            "decode_median": ("median_decode_latency", "median_decode_throughput"),
            "total": ("total_latency", "overall_throughput")}
_STEP_KIND = {"prefill": "prefill", "decode_step": "decode", "decode_median": "decode_median",
              "total": "total"}


class _Case(Case):
    def __init__(self, line: int, phase: str):
        super().__init__(line, phase)
        self.total = False          # its `Total.` line was read: the next line starts a case
        self.decode_steps = 0


def _step(case: _Case, kind: str, values: list[str], at: int, printed: int | None) -> None:
    """The line's own step row, and its columns for the lines that have them."""
    step: dict[str, Any] = {"kind": _STEP_KIND[kind]}
    if kind == "decode_step":
        size, latency, throughput = values if len(values) == 3 else (None, *values[-2:])
        number = case.number("Batch size", size, at) if size is not None else None
        if number is not None and math.isfinite(number) and number == int(number):
            step["batch_size"] = int(number)
            if case.fields.get("batch_size") is None:
                case.fields["batch_size"] = int(number)
            elif case.fields["batch_size"] != int(number):
                case.warnings.append((at, f"Batch size: {size} here, "
                                      f"{case.fields['batch_size']} before in the case"))
        step["step"] = printed if printed is not None else case.decode_steps
        case.decode_steps += 1
    else:
        latency, throughput = values[:2]
        columns = _COLUMNS[kind]
        case.put(columns[0], latency, at, f"{kind} latency")
        case.put(columns[1], throughput, at, f"{kind} throughput")
    step["latency_s"] = case.number("latency", latency, at)
    step["throughput"] = case.number("throughput", throughput, at)
    case.steps.append(step)


def _own(line: str) -> str | None:
    """A line of the result without its comment or quote prefix, None for a foreign one."""
    return re.sub(_PREFIX, "", line, count=1).rstrip() if CONTINUES.match(line) else None


def build(block: Block) -> list[Parsed | Problem]:
    kept, skipped = own_lines(block.lines, block.line_start, _own,
                              "line of the bench_one_batch result")
    out: list[Parsed | Problem] = list(skipped)
    items = parse_lines("\n".join(kept))
    if not items:
        raise BlockParseError("no value in the bench_one_batch result", 1)
    cases: list[_Case] = []
    case: _Case | None = None
    warmup = False
    for kind, values, line in items:
        at = block.line_start + line - 1
        if kind in ("warmup", "benchmark"):
            warmup, case = kind == "warmup", None
            continue
        if kind == "skipping":
            case = None
            continue
        if kind == "prefill" or case is None or case.total:
            case = _Case(at, "warmup" if warmup else "benchmark")
            cases.append(case)
        case.last = at
        _step(case, kind, values, at,
              _printed_step(kept[line - 1]) if kind == "decode_step" else None)
        if kind == "total":
            case.total = True
    for c in cases:
        if not c.total:
            c.warnings.append((c.last, "the case is cut short here: no `Total.` line"))
    row0, command = offline_context(block, "sglang_one_batch", COMMANDS["sglang_one_batch"],
                                    TOOL, "sglang")
    return out + case_rows(block, cases, row0, command, FORMAT.name,
                           warmup_case(command))


_STEP_NUMBER = re.compile(r"^Decode[ \t]+(\d+)\.")


def _printed_step(line: str) -> int | None:
    match = _STEP_NUMBER.match(line)
    return int(match.group(1)) if match else None


def continues(line: str) -> bool:
    return CONTINUES.match(line) is not None


def resumes(lines: list[str], line: str) -> bool:
    return continues(line)


FORMAT = BlockFormat(
    name="sglang_one_batch",
    table="offline_runs",
    description="SGLang bench_one_batch / bench_latency (offline, one static batch): "
                "`Prefill. latency: ... s, throughput: ... token/s`, `Decode.  median latency:`, "
                "`Total. latency:`; one offline run per case (the warmup's of phase warmup), "
                "every step line an offline_steps row.",
    upstream=("sglang python/sglang/bench_latency.py 2024",
              "sglang python/sglang/bench_one_batch.py late 2024 –"),
    markers=("Prefill. latency:", "Warmup ..."),
    start=START,
    end=None,
    max_lines=2000,
    build=build,
    commands=COMMANDS,
    continues=continues,
    resumes=resumes,
    restarts=False,
)
