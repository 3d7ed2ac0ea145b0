"""SGLang's ``bench_one_batch`` (earlier ``bench_latency``): one static batch per case →
``serving_runs``.

Upstream printer: ``python/sglang/bench_one_batch.py`` (``bench_latency.py`` until late 2024).
It runs the model in process, no server: a warmup case, then each case of its sweep
(``--batch-size`` × ``--input-len`` × ``--output-len``), each printing

    Prefill. latency: 0.03012 s, throughput:  34000.12 token/s
    Decode.  latency: 0.01234 s, throughput:   1296.60 token/s        the first 5 decode steps
    Decode 0. Batch size: 16, latency: ...                            (later: with batch size)
    Decode.  median latency: 0.01230 s, median throughput:   1300.81 token/s
    Total. latency:  1.234 s, throughput:   2000.00 token/s

between ``Warmup ...`` and ``Benchmark ...`` lines.  A case from its ``Prefill.`` line to its
``Total.`` line is a run (``extra["benchmark"] = "one_batch"``, engine ``sglang``): the total
latency (the batch's, prefill and every decode step) is ``mean_e2el_ms``, the total
throughput (prompt and output tokens of the batch over it) ``total_token_throughput``; the
prefill and median decode figures go to ``extra`` with their units (``prefill latency (s)``,
``median decode throughput (token/s)``...).  As for ``bench_one_batch_server``, the batch
size is ``max_concurrency`` (a static batch) and the lengths ``random_input_len``/
``random_output_len``.  The batch size comes from the decode step lines
when they print it, else (and the lengths) from the command line's sweep.  The cases after a
``Warmup ...`` line and before ``Benchmark ...`` are the warmup: not runs.  A case cut short
(the paste ends after its prefill) keeps what it printed, with a warning.
"""

from __future__ import annotations

import re
from typing import Any

from lark import v_args

from . import grammar
from .base import Block, BlockFormat, BlockParseError, Parsed, Problem, half_unit
from .grammar import ColumnTransformer, flatten
from .sglang_one_batch_server import case_rows, context_row
from .vllm_serving import to_number

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


class _Case:
    def __init__(self, line: int, warmup: bool):
        self.first = self.last = line
        self.warmup = warmup
        self.fields: dict[str, Any] = {}
        self.tolerance: dict[str, float] = {}
        self.extra: dict[str, Any] = {}
        self.total = False
        self.warnings: list[tuple[int, str]] = []

    def number(self, what: str, printed: str, at: int) -> float | None:
        try:
            return to_number(printed, float)
        except ValueError:
            self.warnings.append((at, f"{what}: {printed!r} is not a number"))
            return None

    def put(self, column: str, printed: str, factor: float, at: int, what: str) -> None:
        value = self.number(what, printed, at)
        if value is not None:
            self.fields[column] = value * factor
            half = half_unit(printed)
            if half is not None:
                self.tolerance[column] = half * factor


def build(block: Block) -> list[Parsed | Problem]:
    out: list[Parsed | Problem] = []
    kept: list[str] = []
    for i, line in enumerate(block.lines):
        if CONTINUES.match(line):
            kept.append(re.sub(_PREFIX, "", line, count=1).rstrip())
        else:
            kept.append("")
            if line.strip():
                out.append(Problem(block.line_start + i, "not a line of the bench_one_batch "
                                   f"result, skipped: {line.strip()[:80]!r}", line))
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
            case = _Case(at, warmup)
            cases.append(case)
        case.last = at
        if kind == "prefill":
            for key, printed in zip(("prefill latency (s)", "prefill throughput (token/s)"),
                                    values):
                value = case.number(key, printed, at)
                if value is not None:
                    case.extra[key] = value
        elif kind == "decode_step":
            if len(values) == 3 and "batch_size" not in case.extra:
                size = case.number("Batch size", values[0], at)
                if size is not None and size == int(size):
                    case.extra["batch_size"] = int(size)
        elif kind == "decode_median":
            for key, printed in zip(("median decode latency (s)",
                                     "median decode throughput (token/s)"), values):
                value = case.number(key, printed, at)
                if value is not None:
                    case.extra[key] = value
        elif kind == "total":
            case.total = True
            case.put("mean_e2el_ms", values[0], 1000.0, at, "Total latency")
            case.put("total_token_throughput", values[1], 1.0, at, "Total throughput")
    runs = [c for c in cases if not c.warmup]
    row0, command = context_row(block, "sglang_one_batch", COMMANDS["sglang_one_batch"])
    for c in runs:
        if not c.total:
            c.warnings.append((c.last, "the case is cut short here: no `Total.` line"))
    return out + case_rows(block, runs, row0, command, "one_batch", FORMAT.name)


def continues(line: str) -> bool:
    return CONTINUES.match(line) is not None


def resumes(lines: list[str], line: str) -> bool:
    return continues(line)


FORMAT = BlockFormat(
    name="sglang_one_batch",
    table="serving_runs",
    description="SGLang bench_one_batch / bench_latency (offline, one static batch): "
                "`Prefill. latency: ... s, throughput: ... token/s`, `Decode.  median latency:`, "
                "`Total. latency:`; one run per case, the warmup skipped.",
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
