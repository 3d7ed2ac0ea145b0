"""vLLM's latency benchmark: `Avg latency: ... seconds` and its percentiles → ``offline_runs``.

Upstream printers: ``benchmarks/benchmark_latency.py`` (2023 on) and ``vllm bench latency``
(``vllm/benchmarks/latency.py``, 2025 on).  One batch of ``--batch-size`` prompts of
``--input-len`` tokens, generating ``--output-len`` each, is run ``--num-iters`` times (after
``--num-iters-warmup`` untimed ones); what the block prints is the latency of the whole batch,
in seconds:

    Avg latency: 1.6434567379951477 seconds       2023: this line alone
    Std latency: 0.0123 seconds                   later forks and versions
    10% percentile latency: 1.62 seconds          2024 on: 10, 25, 50, 75, 90, 99
    ...
    99% percentile latency: 1.71 seconds

Each block is a row of phase ``benchmark``, named as ``--output-json`` names its keys:
``avg_latency`` and ``p10_latency`` ... ``p99_latency`` (the JSON's ``percentiles`` {"10":
...}), in seconds; a percentile no column holds stays in ``extra["percentiles"]``.  The command
line above the block gives the model, batch size, lengths, iterations, dtype and parallelism.
Only the printer's exact lines start or continue a block: prose saying `latency: 3 s` is no
run.
"""

from __future__ import annotations

import re
from typing import Any

from lark import v_args

from ..schemas.models import fields_of
from ..schemas.offline import OfflineRun
from . import grammar
from .base import Block, BlockFormat, BlockParseError, Parsed, Problem
from .grammar import ColumnTransformer, flatten
from .offlinecontext import Case, offline_context

TOOL = "vllm bench latency"

LATENCY_COMMANDS = {"latency_bench": re.compile(
    r"\bbenchmark_latency(?:\.py)?\b|\bvllm\s+bench\s+latency\b")}

# A value as printed (`1.6434567379951477`), or garbled in the paste (`1.6!3`): the line is
# still the block's, and build warns about that value only.
_VALUE = r"[-+]?[\d!?*~^$&@][\w.!?*~^$&@+-]*|[-+]?inf|nan"
_OWN = re.compile(
    rf"(?:Avg|Std) latency:[ \t]*(?:{_VALUE})[ \t]*seconds?"
    rf"|[\d!?*~^$&@][\d.!?*~^$&@]*%[ \t]+percentile latency:[ \t]*(?:{_VALUE})[ \t]*seconds?")
# A block's line: one of the printer's, alone on its line (after a comment or quote prefix),
# or after the run's own label when a sweep's results are typed up a line each
# (`Batch size 8: Avg latency: 1.45 seconds`).
_LABEL = r"(?:(?P<label>[^\s:][^:\n]{0,59}?):[ \t]+)?"
CONTINUES = re.compile(rf"^[\s>#*/-]*{_LABEL}(?:{_OWN.pattern})\s*$", re.I)
START = re.compile(rf"^[\s>#*/-]*{_LABEL}Avg latency:[ \t]*(?:{_VALUE})[ \t]*seconds?\s*$")
# What a run's label says it ran with: `bs=8`, `batch size 8`, `input len 128`, `out=256`.
LABEL_SETTINGS = {
    "batch_size": re.compile(r"\b(?:batch(?:[ _-]?size)?|bs)[ \t]*[=:]?[ \t]*(\d+)\b", re.I),
    "input_len": re.compile(r"\b(?:(?:input[ _-]?len(?:gth)?|isl)[ \t]*[=:]?|in[ \t]*=)[ \t]*(\d+)\b",
                            re.I),
    "output_len": re.compile(r"\b(?:(?:output[ _-]?len(?:gth)?|osl)[ \t]*[=:]?|out[ \t]*=)[ \t]*"
                             r"(\d+)\b", re.I),
}
_PCT = re.compile(r"^([^\s%]+)%")
@v_args(inline=True)
class LinesToItems(ColumnTransformer):
    """Tree → (kind, label, value text, line) tuples, in order."""

    def start(self, *items):
        return [i for i in flatten(items) if isinstance(i, tuple)]

    def column(self, name, children):
        label, value = children[0], children[1]
        return (name, str(label).rstrip(":").strip(), str(value), label.line)


def parse_lines(text: str) -> list[tuple]:
    parser = grammar.in_parser("vllm_bench_latency.lark", __file__, LinesToItems)
    return grammar.parse(parser, text + "\n", "latency benchmark result")


def build(block: Block) -> list[Parsed | Problem]:
    out: list[Parsed | Problem] = []
    kept: list[str] = []
    run_label = None        # the run's own label, typed before its first line
    for i, line in enumerate(block.lines):
        own = CONTINUES.match(line)
        run_label = run_label or (own.group("label") if own else None)
        match = _OWN.search(line) if own else None
        if match is None:
            kept.append("")
            if line.strip():
                out.append(Problem(block.line_start + i, "not a line of the latency "
                                   f"benchmark result, skipped: {line.strip()[:80]!r}", line))
        else:
            kept.append(match.group(0))
    items = parse_lines("\n".join(kept))
    if not items:
        raise BlockParseError("no value in the latency benchmark result", 1)
    row, command = offline_context(block, "latency_bench", LATENCY_COMMANDS["latency_bench"],
                                   TOOL, "vllm")
    case = Case(block.line_start)
    columns = fields_of(OfflineRun)
    extra: dict[str, Any] = {}
    read = 0
    for kind, label, printed, line in items:
        at = block.line_start + line - 1
        if kind == "pct":
            match = _PCT.match(label)
            try:
                pct = float(match.group(1)) if match else None
            except ValueError:
                pct = None
            read += 1
            if pct is None:
                case.warnings.append((at, f"{label}: the percentile is not a number"))
                continue
            column = "p" + (str(int(pct)) if pct == int(pct) else str(pct)) + "_latency"
        else:
            read += 1
            column = "avg_latency" if kind == "avg" else "std_latency"
        if column in columns:
            case.put(column, printed, at, label)
        else:               # a percentile no column holds, kept by the JSON's own key
            value = case.number(label, printed, at)
            if value is not None:
                extra.setdefault("percentiles", {})[f"{pct:g}"] = value
    if not read:
        raise BlockParseError("no value in the latency benchmark result", 1)
    if items[0][0] != "avg":
        case.warnings.append((block.line_start, "the latency result's `Avg latency` line is "
                              "missing: the block starts later"))
    row.update(case.fields)
    if run_label:
        # it names the run and what it ran with
        row["label"] = run_label.strip(" *_`")
        for column, pattern in LABEL_SETTINGS.items():
            setting = pattern.search(run_label)
            if setting:
                row[column] = int(setting.group(1))
    row["phase"] = "benchmark"
    row["extra"] = extra or None
    row["format"] = FORMAT.name
    row["line_start"] = block.line_start
    row["line_end"] = block.line_start + max(i for i, t in enumerate(kept) if t)
    out.append(Parsed(row=OfflineRun(**row), warnings=case.warnings, tolerance=case.tolerance))
    return out


def continues(line: str) -> bool:
    return CONTINUES.match(line) is not None


def resumes(lines: list[str], line: str) -> bool:
    """After a line typed into the paste, the result goes on at one of its lines."""
    return continues(line) and START.match(line) is None


FORMAT = BlockFormat(
    name="vllm_bench_latency",
    table="offline_runs",
    description="vLLM's latency benchmark (benchmarks/benchmark_latency.py, `vllm bench "
                "latency`): `Avg latency: ... seconds`, `Std latency:`, `NN% percentile "
                "latency: ... seconds`; one run per block, the batch's end-to-end latency.",
    upstream=("vllm benchmarks/benchmark_latency.py 2023 – 2025",
              "vllm vllm/benchmarks/latency.py (`vllm bench latency`) 2025 –"),
    markers=("Avg latency:",),
    start=START,
    end=None,
    max_lines=40,
    build=build,
    commands=LATENCY_COMMANDS,
    continues=continues,
    resumes=resumes,
)
