"""SGLang's ``bench_one_batch_server``: one case per batch → ``serving_runs``.

Upstream printer: ``python/sglang/bench_one_batch_server.py`` (2024 on).  Each case sends one
batch of ``batch size`` prompts to a server and prints, line by line:

    batch size: 16                                  2024: these four
    latency: 3.21 s
    output throughput: 637.45 token/s
    (input + output) throughput: 5737.02 token/s

later versions also ``input_len:``/``output_len:``, ``ttft:`` (then ``last_ttft:``,
``first-token spread:``), ``last generation throughput:``, ``input throughput:``, units in
``tok/s``, ``acc_length:``, ``spec_accept_rate:``, ``cache hit rate:`` and decode-only
throughputs with a note in brackets; and they mark the warmup case(s) between
``======== Warmup Begin ========`` and ``Warmup End`` (those are not runs).  2024's client
printed its warmup case unmarked, first (16 prompts of 1024 tokens, 16 out: its total
throughput is 65 times its output throughput): without ``--skip-warmup`` a block's first case
of that shape is skipped too.

A case is a run (``extra["benchmark"] = "one_batch_server"``): ``latency`` (the batch's wall
time) is ``mean_e2el_ms``, ``output throughput`` ``output_throughput`` (from 2025 SGLang
counts it after the first token: ``batch × output_len / (latency − ttft)``), ``(input + output)
throughput`` ``total_token_throughput``; the batch size, lengths and every other figure go to
``extra`` (by label, with their unit).  The batch is static: all its prompts are in flight
at once, so the batch size is ``max_concurrency``, and its random prompts' lengths are
``random_input_len``/``random_output_len`` (``dataset_name`` ``random``), which tell the
cases of a sweep apart as configurations (they stay in ``extra`` by their own names too).
Lengths the case did not print come from the command line (one value each, or the sweep's order: batch size × input
length × output length).  A case starts at its exact `batch size: N` line, and a lone one is
no run (prose) unless the command was seen and the paste ends there (cut, with a warning).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import replace
from typing import Any

from lark import v_args

from ..reading.cmdline import parse_command
from ..schemas.models import ServingRun
from . import grammar
from .base import Block, BlockFormat, BlockParseError, Parsed, Problem, half_unit
from .grammar import ColumnTransformer, flatten
from .runcontext import CLIENT_BACKEND_ENGINES, serving_context
from .vllm_serving import to_number

COMMANDS = {"sglang_one_batch_server": re.compile(r"\bbench_one_batch_server\b")}

_LABELS = (r"batch size|input_len|output_len|latency|ttft|last_ttft|first_ttft"
           r"|first-token spread|last generation throughput|input throughput|output throughput"
           r"|\(input \+ output\) throughput|(?:client-observed |steady )?decode-only throughput"
           r"|acc_length|spec_accept_rate|cache hit rate")
_VALUE = r"[-+]?[\d!?*~^$&@][\w.!?*~^$&@+-]*|[-+]?inf|nan"
_OWN = re.compile(rf"(?:{_LABELS}):[ \t]*(?:{_VALUE})(?:[ \t]*(?:s|ms|tok/s|token/s|tokens/s))?"
                  r"(?:[ \t]*\([^\n]*\))?[ \t]*$"
                  r"|=+[ \t]*Warmup (?:Begin|End)[ \t]*=+[ \t]*$|Warmup with batch_size=.*$")
_PREFIX = r"^[\s>#*/-]*"
CONTINUES = re.compile(_PREFIX + rf"(?:{_OWN.pattern})")
START = re.compile(_PREFIX + r"(?:batch size:[ \t]*[\d!?*~^$&@][\d!?*~^$&@]*[ \t]*$"
                   r"|=+[ \t]*Warmup Begin[ \t]*=+[ \t]*$)")
# label → (column, factor to the column's unit)
_COLUMNS = {"latency": ("mean_e2el_ms", 1000.0), "output throughput": ("output_throughput", 1.0),
            "(input + output) throughput": ("total_token_throughput", 1.0)}
_MEASURED = set(_COLUMNS) | {"ttft", "last_ttft", "input throughput",
                             "last generation throughput"}
_INTS = {"batch size": "batch_size", "input_len": "input_len", "output_len": "output_len"}


@v_args(inline=True)
class LinesToItems(ColumnTransformer):
    """Tree → (kind, label, value, unit, note, line) tuples, in order."""

    def start(self, *items):
        return [i for i in flatten(items) if isinstance(i, tuple)]

    def column(self, name, children):
        first = children[0]
        if name != "pair":
            return (name, str(first), None, None, None, first.line)
        rest = {t.type: str(t) for t in children[1:]}
        return ("pair", str(first).rstrip(":").strip(), rest.get("VALUE"), rest.get("UNIT"),
                rest.get("NOTE"), first.line)


def parse_lines(text: str) -> list[tuple]:
    parser = grammar.in_parser("sglang_one_batch_server.lark", __file__, LinesToItems)
    return grammar.parse(parser, text + "\n", "bench_one_batch_server result")


def own_lines(block: Block, what: str) -> tuple[list[str], list[Problem]]:
    """The block's lines with those not its own blanked (each a warning)."""
    kept, skipped = [], []
    for i, line in enumerate(block.lines):
        match = CONTINUES.match(line)
        if match is None:
            kept.append("")
            if line.strip():
                skipped.append(Problem(block.line_start + i, f"not a line of the {what}, "
                                       f"skipped: {line.strip()[:80]!r}", line))
        else:
            kept.append(re.sub(_PREFIX, "", line, count=1).rstrip())
    return kept, skipped


def _sweep(text: str, flag: str) -> list[int] | None:
    """The values of a `--flag 1 16 64` argument (nargs='+')."""
    match = re.search(rf"--{flag}(?:=|\s+)((?:\d+\s*)+)(?=\s--|\s*$|\s*[|;&])", text + " ")
    return [int(v) for v in match.group(1).split()] if match else None


def context_row(block: Block, kind: str, pattern: re.Pattern[str]) -> tuple[dict, Any]:
    context = block.context
    without = replace(context, commands={k: v for k, v in context.commands.items()
                                         if k != "serving_bench"})
    row = serving_context(without)
    for key in ("backend", "endpoint", "dataset_name", "dataset_path", "num_prompts",
                "max_concurrency", "request_rate"):
        row.pop(key, None)          # a serving client's arguments: not this program's
    seen = context.commands.get(kind)
    command = parse_command(seen.text, pattern) if seen is not None else None
    if command is not None:
        row["command"] = command.text
        for flag in ("model", "model_path"):
            if isinstance(command.args.get(flag), str) and command.args[flag] != "None":
                row["model"] = command.args[flag]
        if isinstance(command.args.get("base_url"), str):
            row["base_url"] = command.args["base_url"]
        backend = str(command.args.get("backend") or "").lower()
        if backend in CLIENT_BACKEND_ENGINES:
            row["engine"] = CLIENT_BACKEND_ENGINES[backend]
    if row.get("engine") in (None, "unknown"):
        row["engine"] = "sglang"
    return row, command


def sweep_cases(command, count: int) -> list[dict[str, int]]:
    """What each of ``count`` cases ran with, by the command's sweep (batch size × input
    length × output length, in that order); nothing when the count does not match."""
    if command is None:
        return [{} for _ in range(count)]
    values = {key: _sweep(command.text, key.replace("_", "-"))
              for key in ("batch_size", "input_len", "output_len")}
    axes = [(k, v) for k, v in values.items() if v]
    product = list(itertools.product(*(v for _, v in axes)))
    if len(product) == count:
        return [{k: combo[i] for i, (k, _) in enumerate(axes)} for combo in product]
    return [{k: v[0] for k, v in axes if len(v) == 1} for _ in range(count)]


def _is_warmup(case: "_Case") -> bool:
    """2024's client printed its warmup case first, as any other: 16 prompts of 1024 tokens,
    16 out, so (input + output) throughput is 65 times the output throughput."""
    out = case.fields.get("output_throughput")
    total = case.fields.get("total_token_throughput")
    return (case.extra.get("batch_size") == 16 and case.extra.get("input_len", 1024) == 1024
            and case.extra.get("output_len", 16) == 16 and bool(out) and total is not None
            and abs(total / out - 65.0) < 0.05)


def workload(row: dict[str, Any], extra: dict[str, Any]) -> None:
    """A static batch's shape as the columns a serving run's configuration is told by: every
    prompt of the batch is in flight at once (``max_concurrency`` is the batch size), and the
    prompts are random token ids of ``input_len``, each generating ``output_len`` (the random
    dataset's lengths).  ``extra`` keeps them by the program's own names too."""
    if isinstance(extra.get("batch_size"), int):
        row["max_concurrency"] = extra["batch_size"]
    if isinstance(extra.get("input_len"), int) or isinstance(extra.get("output_len"), int):
        row["dataset_name"] = "random"
        for key in ("input_len", "output_len"):
            if isinstance(extra.get(key), int):
                row[f"random_{key}"] = extra[key]


class _Case:
    def __init__(self, line: int):
        self.first = self.last = line
        self.fields: dict[str, Any] = {}
        self.tolerance: dict[str, float] = {}
        self.extra: dict[str, Any] = {}
        self.labels: set[str] = set()
        self.measured = 0
        self.warnings: list[tuple[int, str]] = []


def _read(case: _Case, label: str, printed: str | None, unit: str | None, note: str | None,
          at: int) -> None:
    try:
        value = to_number(printed, float)
    except ValueError:
        value = None
        case.warnings.append((at, f"{label}: {printed!r} is not a number"))
    if label in _MEASURED:
        case.measured += 1
    if value is None:
        return
    if label in _COLUMNS:
        column, factor = _COLUMNS[label]
        case.fields[column] = value * factor
        half = half_unit(printed)
        if half is not None:
            case.tolerance[column] = half * factor
        return
    if label in _INTS and value == int(value):
        case.extra[_INTS[label]] = int(value)
        return
    key = f"{label} ({unit})" if unit else label
    case.extra[key] = value
    if note:
        case.extra[f"{label} note"] = note.strip("() ")


def build(block: Block) -> list[Parsed | Problem]:
    kept, out = own_lines(block, "bench_one_batch_server result")
    items = parse_lines("\n".join(kept))
    if not items:
        raise BlockParseError("no value in the bench_one_batch_server result", 1)
    cases: list[tuple[_Case, bool]] = []
    case: _Case | None = None
    warmup = False
    warmup_left: int | None = None
    for kind, label, printed, unit, note, line in items:
        at = block.line_start + line - 1
        if kind == "warmup_begin":
            warmup, case = True, None
            continue
        if kind == "warmup_end":
            warmup, case, warmup_left = False, None, None
            continue
        if kind == "warmup_with":
            sizes = re.findall(r"\d+", label)
            warmup_left = len(sizes) or None
            continue
        if case is None or label == "batch size" or label in case.labels:
            if label == "batch size" and warmup and warmup_left is not None and case:
                warmup_left -= 1
                if warmup_left <= 0:      # no `Warmup End` line in this version
                    warmup = False
            case = _Case(at)
            cases.append((case, warmup))
        case.labels.add(label)
        case.last = at
        _read(case, label, printed, unit, note, at)
    runs = [c for c, was_warmup in cases if not was_warmup]
    row0, command = context_row(block, "sglang_one_batch_server",
                                COMMANDS["sglang_one_batch_server"])
    last = runs[-1] if runs else None
    keep = [c for c in runs if c.measured or c is last and command is not None
            and c.last == block.line_start + max(i for i, t in enumerate(kept) if t)]
    if command is not None and not any(w for _, w in cases) and keep \
            and "--skip-warmup" not in command.text and keep[0] is cases[0][0] \
            and _is_warmup(keep[0]):
        keep = keep[1:]
    for c in keep:
        if not c.measured or "latency" not in c.labels:
            c.warnings.append((c.last, "the case is cut short here: no "
                               + ("values" if not c.measured else "latency") + " after it"))
    return out + case_rows(block, keep, row0, command, "one_batch_server", FORMAT.name)


def case_rows(block: Block, cases: list, row0: dict[str, Any], command: Any, benchmark: str,
              format_name: str) -> list[Parsed]:
    """One run per case of a static-batch benchmark (its values, warnings and lines), each
    with the block's context ``row0`` and the case's sizes from the command line."""
    out = []
    swept = sweep_cases(command, len(cases))
    for i, c in enumerate(cases):
        row = dict(row0)
        extra = {"benchmark": benchmark, **swept[i], **c.extra}
        row.update(c.fields)
        workload(row, extra)
        row["extra"] = extra
        row["format"] = format_name
        row["line_start"], row["line_end"] = c.first, c.last
        if len(cases) > 1:
            row["raw_text"] = "\n".join(block.lines[c.first - block.line_start:
                                                    c.last - block.line_start + 1])
        out.append(Parsed(row=ServingRun(**row), warnings=c.warnings, tolerance=c.tolerance))
    return out


def continues(line: str) -> bool:
    return CONTINUES.match(line) is not None


def resumes(lines: list[str], line: str) -> bool:
    return continues(line)


FORMAT = BlockFormat(
    name="sglang_one_batch_server",
    table="serving_runs",
    description="SGLang bench_one_batch_server: `batch size: N`, `latency: ... s`, `output "
                "throughput: ... token/s`, `(input + output) throughput:` and later lines, "
                "one run per case (warmup cases skipped).",
    upstream=("sglang python/sglang/bench_one_batch_server.py 2024 –",),
    markers=("batch size:", "Warmup Begin"),
    start=START,
    end=None,
    max_lines=400,
    build=build,
    commands=COMMANDS,
    continues=continues,
    resumes=resumes,
    restarts=False,
)
