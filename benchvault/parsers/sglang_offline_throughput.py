"""SGLang's ``bench_offline_throughput``: its result block → ``offline_runs``.

Upstream printer: ``python/sglang/bench_offline_throughput.py`` (late 2024 on).  It runs a
set of prompts through the engine in process (``--backend engine``) or a runtime it starts
(``runtime``), and prints

    ====== Offline Throughput Benchmark Result =======
    Backend:                                 engine
    Successful requests:                     1000
    Benchmark duration (s):                  41.53
    Total input tokens:                      302179
    Total generated tokens:                  195946
    Last generation throughput (tok/s):      5283.11       (from late 2024)
    Request throughput (req/s):              24.08
    Input token throughput (tok/s):          7276.16
    Output token throughput (tok/s):         4718.19
    Total token throughput (tok/s):          11994.35
    ==================================================

One block is one row of phase ``benchmark``, its figures in the columns `vllm bench
throughput` fills, so offline throughputs of both engines read side by side: the duration
(the result JSONL's ``total_latency``) is ``elapsed_time``, ``successful_requests``
``num_requests``, the request, total and output throughputs ``requests_per_second``,
``tokens_per_second``, ``output_tokens_per_second``; the input throughput, token totals and
``last_gen_throughput`` keep their own names.  A label the program never printed stays in
``extra``; the command line above gives the model, dataset, prompts and parallelism.
"""

from __future__ import annotations

import re
from typing import Any

from lark import v_args

from . import grammar
from .base import Block, BlockFormat, BlockParseError, Parsed, Problem, own_lines
from .grammar import ColumnTransformer, flatten
from .offlinecontext import Case, case_rows, offline_context

TOOL = "sglang.bench_offline_throughput"
COMMANDS = {"sglang_offline_throughput": re.compile(r"\bbench_offline_throughput\b")}

# printed label → column of offline_runs
LABELS = {"Successful requests": "num_requests", "Benchmark duration (s)": "elapsed_time",
          "Total input tokens": "total_input_tokens",
          "Total generated tokens": "total_output_tokens",
          "Last generation throughput (tok/s)": "last_gen_throughput",
          "Request throughput (req/s)": "requests_per_second",
          "Input token throughput (tok/s)": "input_throughput",
          "Output token throughput (tok/s)": "output_tokens_per_second",
          "Total token throughput (tok/s)": "tokens_per_second"}
_LINE = re.compile(r"^[\s>#*/-]*(?:=+[ \t]*Offline Throughput Benchmark Result[ \t]*=+"
                   r"|={10,}|[A-Za-z][A-Za-z ()/+-]*?:[ \t]*\S+)[ \t]*$")


@v_args(inline=True)
class LinesToItems(ColumnTransformer):
    """Tree → (kind, label, value text, line) tuples, in order."""

    def start(self, *items):
        return [i for i in flatten(items) if isinstance(i, tuple)]

    def column(self, name, children):
        first = children[0]
        if name != "pair":
            return (name, str(first), None, first.line)
        return ("pair", str(first).rstrip(":").strip(), str(children[1]), first.line)


def parse_lines(text: str) -> list[tuple]:
    parser = grammar.in_parser("sglang_offline_throughput.lark", __file__, LinesToItems)
    return grammar.parse(parser, text + "\n", "offline throughput result")


def _own(line: str) -> str | None:
    """A line of the block without its comment or quote prefix, None for a foreign one."""
    if _LINE.match(line) is None:
        return None
    return re.sub(r"^[\s>#*/-]*(?=[A-Za-z=])", "", line, count=1).rstrip()


def build(block: Block) -> list[Parsed | Problem]:
    kept, skipped = own_lines(block.lines, block.line_start, _own,
                              "line of the offline throughput result")
    out: list[Parsed | Problem] = list(skipped)
    items = parse_lines("\n".join(kept))
    pairs = [i for i in items if i[0] == "pair"]
    if not pairs:
        raise BlockParseError("no value in the offline throughput result", 1)
    case = Case(block.line_start)
    case.last = block.line_start + max(i for i, t in enumerate(kept) if t)
    backend: Any = None
    for _, label, printed, line in pairs:
        at = block.line_start + line - 1
        if label == "Backend":
            backend = printed
        elif label in LABELS:
            case.put(LABELS[label], printed, at, label)
        else:
            value = case.number(label, printed, at)
            if value is not None:
                case.extra[label] = value
    if items[-1][0] != "rule":
        case.warnings.append((case.last, "the offline throughput result is cut short here: "
                              "no closing rule"))
    row0, command = offline_context(block, "sglang_offline_throughput",
                                    COMMANDS["sglang_offline_throughput"], TOOL, "sglang")
    if backend is not None:
        row0["backend"] = backend
    return out + case_rows(block, [case], row0, command, FORMAT.name)


FORMAT = BlockFormat(
    name="sglang_offline_throughput",
    table="offline_runs",
    description="SGLang bench_offline_throughput's `Offline Throughput Benchmark Result` block "
                "(requests, duration, token totals and throughputs): one offline run.",
    upstream=("sglang python/sglang/bench_offline_throughput.py late 2024 –",),
    markers=("Offline Throughput Benchmark Result",),
    start=re.compile(r"^[\s>#*/-]*=+\s*Offline Throughput Benchmark Result\s*=+\s*$"),
    end=re.compile(r"^[\s>#*/-]*={10,}\s*$"),
    max_lines=40,
    build=build,
    commands=COMMANDS,
    body_line=re.compile(r"^[\s>#*/-]*[A-Za-z][A-Za-z ()/+-]*?:[ \t]*\S+\s*$"),
    closing="=" * 50,
)
