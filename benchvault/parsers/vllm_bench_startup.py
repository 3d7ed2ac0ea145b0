"""vLLM's start-up benchmark (`vllm bench startup`) → one ``offline_runs`` row.

Upstream printer: ``vllm/benchmarks/startup.py`` (2025 on).  It starts an ``LLM`` in a fresh
process ``--num-iters-cold`` times with empty caches and ``--num-iters-warm`` times with warm
ones, and prints each phase's mean and percentiles (10, 25, 50, 75, 90, 99), in seconds::

    STARTUP TIME BENCHMARK RESULTS
    ============================================================

    COLD STARTUP:
    Avg total startup time: 45.23 seconds       (later `Avg startup time:`)
    Avg compilation time:   12.34 seconds
    Startup time percentiles:
      10%: 44.10 seconds
    ...

The block is one row, named as its ``--output-json`` names its keys: ``avg_cold_startup_time``,
``avg_cold_compilation_time``, ``avg_warm_startup_time``, ``avg_warm_compilation_time`` (and
the later printer's ``avg_cold_encoder_compilation_time`` ...); each percentile list goes to
``extra`` under its key (``cold_startup_percentiles``: {"10": 44.1, ...}).  The command line
above gives the model and the engine's settings.
"""

from __future__ import annotations

import re

from lark import v_args

from . import grammar
from .base import Block, BlockFormat, BlockParseError, Parsed, Problem, own_lines
from .grammar import ColumnTransformer, flatten
from .offlinecontext import Case, case_rows, offline_context

TOOL = "vllm bench startup"
COMMANDS = {"vllm_bench_startup": re.compile(r"\bvllm\s+bench\s+startup\b|\bbenchmark_startup"
                                             r"(?:\.py)?\b")}
# the metric a printed name measures (`total startup`, `startup`, `compilation`, ...)
METRICS = {"total startup": "startup", "startup": "startup", "compilation": "compilation",
           "encoder compilation": "encoder_compilation"}
LINE = re.compile(r"^\s*(?:={10,}|STARTUP TIME BENCHMARK RESULTS|(?:COLD|WARM) STARTUP:"
                  r"|Avg [A-Za-z ]*?time:\s*\S+\s*seconds?|[A-Z][A-Za-z ]*? time percentiles:"
                  r"|\d+(?:\.\d+)?%:\s*\S+\s*seconds?)\s*$")


@v_args(inline=True)
class LinesToItems(ColumnTransformer):
    """Tree → (kind, words, value text, line), in order."""

    def start(self, *items):
        return [i for i in flatten(items) if isinstance(i, tuple)]

    def column(self, name, children):
        first = children[0]
        value = str(children[1]) if len(children) > 2 else None
        return (name, str(first), value, first.line)


def parse_lines(text: str) -> list[tuple]:
    parser = grammar.in_parser("vllm_bench_startup.lark", __file__, LinesToItems)
    return grammar.parse(parser, text + "\n", "startup benchmark result")


def _metric(words: str) -> str | None:
    words = re.sub(r"^Avg\s+|\s*time(?: percentiles)?$", "", words.strip()).lower()
    return METRICS.get(words)


def continues_as(line: str) -> str | None:
    """A line of the block as its grammar reads it (a blank one too), None for a foreign one."""
    return line.strip() if LINE.match(line) or not line.strip() else None


def build(block: Block) -> list[Parsed | Problem]:
    kept, skipped = own_lines(block.lines, block.line_start, continues_as,
                              "line of the startup benchmark result")
    out: list[Parsed | Problem] = list(skipped)
    items = parse_lines("\n".join(kept))
    case = Case(block.line_start)
    case.last = block.line_start + max(i for i, t in enumerate(kept) if t)
    phase = metric = None
    for kind, words, printed, line in items:
        at = block.line_start + line - 1
        if kind == "phase":
            phase, metric = words.split()[0].lower(), None
        elif kind == "average" and phase:
            name = _metric(words)
            if name is None:
                case.warnings.append((at, f"{words}: not a metric vllm bench startup prints"))
                continue
            case.put(f"avg_{phase}_{name}_time", printed, at, words)
        elif kind == "percentiles":
            metric = _metric(words)
        elif kind == "percentile" and phase and metric:
            value = case.number(words, printed, at)
            if value is not None:
                pct = words.rstrip("%")
                case.extra.setdefault(f"{phase}_{metric}_percentiles", {})[pct] = value
    if not case.fields:
        raise BlockParseError("no average in the startup benchmark result", 1)
    if items[-1][0] != "rule" or sum(1 for i in items if i[0] == "phase") < 2:
        case.warnings.append((case.last, "the startup benchmark result is cut short here"))
    row0, command = offline_context(block, "vllm_bench_startup",
                                    COMMANDS["vllm_bench_startup"], TOOL, "vllm")
    return out + case_rows(block, [case], row0, command, FORMAT.name)


def continues(line: str) -> bool:
    return continues_as(line) is not None


FORMAT = BlockFormat(
    name="vllm_bench_startup",
    table="offline_runs",
    description="vLLM `vllm bench startup`'s `STARTUP TIME BENCHMARK RESULTS` block (cold and "
                "warm start-up and compilation times, their percentiles): one offline run.",
    upstream=("vllm vllm/benchmarks/startup.py 2025 –",),
    markers=("STARTUP TIME BENCHMARK RESULTS",),
    start=re.compile(r"^\s*STARTUP TIME BENCHMARK RESULTS\s*$"),
    end=None,
    max_lines=80,
    build=build,
    commands=COMMANDS,
    continues=continues,
)
