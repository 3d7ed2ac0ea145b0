"""SGLang's ``bench_one_batch_server``: one case per batch → ``offline_runs``.

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
``======== Warmup Begin ========`` and ``Warmup End``.  2024's client printed its warmup case
unmarked, first (16 prompts of 1024 tokens, 16 out: its total throughput is 65 times its
output throughput): without ``--skip-warmup`` a block's first case of that shape is a warmup
too.

A case is an ``offline_runs`` row, named as the program's result JSONL names it: ``latency``
(the batch's wall time) is ``total_latency``, ``output throughput`` ``output_throughput``
(from 2025 SGLang counts it after the first token: ``batch × output_len / (latency − ttft)``),
``(input + output) throughput`` ``overall_throughput``, ``last generation throughput``
``last_gen_throughput``, ``ttft`` and ``input throughput`` their own columns; every other
figure goes to ``extra`` by its label in snake case (``cache_hit_rate``).  The warmup cases
are rows of phase ``warmup``.  Batch size and lengths the case did not print come from the
command line (one value each, or the sweep's order: batch size × input length × output
length).  A case starts at its exact `batch size: N` line, and a lone one is no run (prose)
unless the command was seen and the paste ends there (cut, with a warning).
"""

from __future__ import annotations

import re

from lark import v_args

from . import grammar
from .base import Block, BlockFormat, BlockParseError, Parsed, Problem, own_lines
from .grammar import ColumnTransformer, flatten
from .offlinecontext import Case, case_rows, offline_context

TOOL = "sglang.bench_one_batch_server"

COMMANDS = {"sglang_one_batch_server": re.compile(r"\bbench_one_batch_server\b")}

_LABELS = (r"batch size|input_len|output_len|latency|ttft|last_ttft|first_ttft"
           r"|first-token spread|last generation throughput|input throughput|output throughput"
           r"|\(input \+ output\) throughput|(?:client-observed |steady )?decode-only throughput"
           r"|acc_length|spec_accept_rate|cache hit rate|total output tokens"
           r"|early-stopped requests|steady-state output throughput")
_VALUE = r"[-+]?[\d!?*~^$&@][\w.!?*~^$&@+-]*(?:/\d+)?|[-+]?inf|nan"
_OWN = re.compile(rf"(?:{_LABELS}):[ \t]*(?:{_VALUE})(?:[ \t]*(?:s|ms|tok/s|token/s|tokens/s))?"
                  r"(?:[ \t]*\([^\n]*\)|[ \t]+over a [^\n]*window)?[ \t]*$"
                  r"|=+[ \t]*Warmup (?:Begin|End)[ \t]*=+[ \t]*$|Warmup with batch_size=.*$")
_PREFIX = r"^[\s>#*/-]*"
CONTINUES = re.compile(_PREFIX + rf"(?:{_OWN.pattern})")
START = re.compile(_PREFIX + r"(?:batch size:[ \t]*[\d!?*~^$&@][\d!?*~^$&@]*[ \t]*$"
                   r"|=+[ \t]*Warmup Begin[ \t]*=+[ \t]*$)")
# label → its column of offline_runs (named as the program's result JSONL names it; `ttft`
# in s, as printed)
_COLUMNS = {"latency": "total_latency", "output throughput": "output_throughput",
            "(input + output) throughput": "overall_throughput", "ttft": "ttft",
            "input throughput": "input_throughput", "batch size": "batch_size",
            "last generation throughput": "last_gen_throughput",
            "input_len": "input_len", "output_len": "output_len"}
_MEASURED = {"latency", "output throughput", "(input + output) throughput", "ttft",
             "last_ttft", "input throughput", "last generation throughput"}


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
                rest.get("NOTE") or rest.get("WINDOW"), first.line)


def parse_lines(text: str) -> list[tuple]:
    parser = grammar.in_parser("sglang_one_batch_server.lark", __file__, LinesToItems)
    return grammar.parse(parser, text + "\n", "bench_one_batch_server result")


def _own(line: str) -> str | None:
    """A line of the result without its comment or quote prefix, None for a foreign one."""
    return re.sub(_PREFIX, "", line, count=1).rstrip() if CONTINUES.match(line) else None


def _is_warmup(case: "_Case") -> bool:
    """2024's client printed its warmup case first, as any other: 16 prompts of 1024 tokens,
    16 out, so (input + output) throughput is 65 times the output throughput."""
    out = case.fields.get("output_throughput")
    total = case.fields.get("overall_throughput")
    return (case.fields.get("batch_size") == 16 and case.fields.get("input_len", 1024) == 1024
            and case.fields.get("output_len", 16) == 16 and bool(out) and total is not None
            and abs(total / out - 65.0) < 0.05)


class _Case(Case):
    def __init__(self, line: int, phase: str):
        super().__init__(line, phase)
        self.labels: set[str] = set()
        self.measured = 0


# 0.5.2x's lines without --ignore-eos, by the result JSONL's keys
_EARLY_STOP = {"total output tokens": "total_output_tokens",
               "early-stopped requests": "num_early_stopped",
               "steady-state output throughput": "steady_state_output_throughput"}
_NUMBER_IN = re.compile(r"\d+(?:\.\d+)?")


def _read(case: _Case, label: str, printed: str | None, unit: str | None, note: str | None,
          at: int) -> None:
    if label in _MEASURED:
        case.measured += 1
    if label in _EARLY_STOP:
        key = _EARLY_STOP[label]
        if key == "num_early_stopped" and printed and "/" in printed:
            printed = printed.split("/", 1)[0]      # `3/16`: 3 of the batch's 16
        value = case.number(label, printed, at)
        if value is not None:
            if key == "total_output_tokens":
                case.put(key, printed, at, label)
            else:
                case.extra[key] = int(value) if key == "num_early_stopped" else value
        extra = _NUMBER_IN.search(note or "")
        if extra and key == "total_output_tokens":          # `(requested 4096)`
            case.extra["requested_output_tokens"] = int(float(extra.group(0)))
        elif extra and key == "steady_state_output_throughput":  # `over a 4.10 s ... window`
            case.extra["steady_state_window_s"] = float(extra.group(0))
        return
    if label in _COLUMNS:
        factor = 0.001 if unit == "ms" else 1.0
        case.put(_COLUMNS[label], printed, at, label, factor)
        return
    value = case.number(label, printed, at)
    if value is None:
        return
    key = re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_")     # `cache hit rate`
    case.extra[key] = value
    if note:
        case.extra[f"{key}_note"] = note.strip("() ")


def build(block: Block) -> list[Parsed | Problem]:
    kept, skipped = own_lines(block.lines, block.line_start, _own,
                              "line of the bench_one_batch_server result")
    out: list[Parsed | Problem] = list(skipped)
    items = parse_lines("\n".join(kept))
    if not items:
        raise BlockParseError("no value in the bench_one_batch_server result", 1)
    cases: list[_Case] = []
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
            case = _Case(at, "warmup" if warmup else "benchmark")
            cases.append(case)
        case.labels.add(label)
        case.last = at
        _read(case, label, printed, unit, note, at)
    row0, command = offline_context(block, "sglang_one_batch_server",
                                    COMMANDS["sglang_one_batch_server"], TOOL, "sglang")
    runs = [c for c in cases if c.phase == "benchmark"]
    last = runs[-1] if runs else None
    end = block.line_start + max(i for i, t in enumerate(kept) if t)
    keep = [c for c in cases if c.measured or c is last and command is not None
            and c.last == end]
    if command is not None and not any(c.phase == "warmup" for c in cases) and keep \
            and "--skip-warmup" not in command.text and keep[0] is cases[0] \
            and _is_warmup(keep[0]):
        keep[0].phase = "warmup"
    for c in keep:
        if not c.measured or "latency" not in c.labels:
            c.warnings.append((c.last, "the case is cut short here: no "
                               + ("values" if not c.measured else "latency") + " after it"))
    return out + case_rows(block, keep, row0, command, FORMAT.name)


def continues(line: str) -> bool:
    return CONTINUES.match(line) is not None


def resumes(lines: list[str], line: str) -> bool:
    return continues(line)


FORMAT = BlockFormat(
    name="sglang_one_batch_server",
    table="offline_runs",
    description="SGLang bench_one_batch_server: `batch size: N`, `latency: ... s`, `output "
                "throughput: ... token/s`, `(input + output) throughput:` and later lines, "
                "one offline run per case (warmup cases of phase warmup).",
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
