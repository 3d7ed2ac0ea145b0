"""vLLM's latency benchmark: `Avg latency: ... seconds` and its percentiles → ``serving_runs``.

Upstream printers: ``benchmarks/benchmark_latency.py`` (2023 on) and ``vllm bench latency``
(``vllm/benchmarks/latency.py``, 2025 on).  One batch of ``--batch-size`` prompts of
``--input-len`` tokens, generating ``--output-len`` each, is run ``--num-iters`` times; what
the block prints is the latency of the whole batch, in seconds:

    Avg latency: 1.6434567379951477 seconds       2023: this line alone
    Std latency: 0.0123 seconds                   2025 on
    10% percentile latency: 1.62 seconds          2024 on: 10, 25, 50, 75, 90, 99
    ...
    99% percentile latency: 1.71 seconds

Each block is a run: ``mean_e2el_ms`` is the average × 1000, each percentile a
``latency_stats`` row (metric ``e2el``, stat ``pNN``; ``p50``/``p90``/``p99`` also fill their
columns, ``p50`` the median too), the standard deviation ``std_e2el_ms``.  The command line above the block gives the
model, and batch size, lengths and iterations (``extra``, with ``benchmark: latency``); the
batch's prompts are all in flight at once and random token ids, so the batch size is
``max_concurrency`` and the lengths ``random_input_len``/``random_output_len`` (``dataset_name``
``random``), as for SGLang's one-batch benchmarks.  Only
the printer's exact lines start or continue a block: prose saying `latency: 3 s` is no run.
"""

from __future__ import annotations

import re
from dataclasses import replace
from decimal import Decimal, InvalidOperation
from typing import Any

from lark import v_args

from ..reading.cmdline import parse_command
from ..schemas.models import LatencyStat, ServingRun, fields_of
from . import grammar
from .base import Block, BlockFormat, BlockParseError, Parsed, Problem, half_unit
from .grammar import ColumnTransformer, flatten
from .runcontext import serving_context
from .sglang_one_batch_server import workload
from .vllm_serving import to_number

LATENCY_COMMANDS = {"latency_bench": re.compile(
    r"\bbenchmark_latency(?:\.py)?\b|\bvllm\s+bench\s+latency\b")}

# A value as printed (`1.6434567379951477`), or garbled in the paste (`1.6!3`): the line is
# still the block's, and build warns about that value only.
_VALUE = r"[-+]?[\d!?*~^$&@][\w.!?*~^$&@+-]*|[-+]?inf|nan"
_OWN = re.compile(
    rf"(?:Avg|Std) latency:[ \t]*(?:{_VALUE})[ \t]*seconds?"
    rf"|[\d!?*~^$&@][\d.!?*~^$&@]*%[ \t]+percentile latency:[ \t]*(?:{_VALUE})[ \t]*seconds?")
# A block's line: one of the printer's, alone on its line (after a comment or quote prefix).
CONTINUES = re.compile(rf"^[\s>#*/-]*(?:{_OWN.pattern})\s*$", re.I)
START = re.compile(rf"^[\s>#*/-]*Avg latency:[ \t]*(?:{_VALUE})[ \t]*seconds?\s*$")
_PCT = re.compile(r"^([^\s%]+)%")
# Command-line arguments kept in `extra` (no column holds them).
_ARGS = {"batch_size": int, "input_len": int, "output_len": int, "num_iters": int,
         "num_iters_warmup": int, "n": int, "tensor_parallel_size": int, "dtype": str,
         "quantization": str, "max_model_len": int, "use_beam_search": bool}


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


def _milliseconds(printed: str, seconds: float) -> float:
    """The printed seconds in ms, shifted in decimal (`1.6454567890123456` → 1645.4567890123456,
    not the float product's 1645.4567890123458)."""
    try:
        return float(Decimal(printed.strip()) * 1000)
    except (InvalidOperation, ValueError):
        return seconds * 1000.0


def _context_row(block: Block) -> dict[str, Any]:
    context = block.context
    without = replace(context, commands={k: v for k, v in context.commands.items()
                                         if k != "serving_bench"})
    row = serving_context(without)
    for key in ("backend", "endpoint", "base_url", "host", "port", "dataset_name",
                "dataset_path", "num_prompts", "max_concurrency", "request_rate"):
        row.pop(key, None)          # a serving client's arguments: not this program's
    extra: dict[str, Any] = {"benchmark": "latency"}
    seen = context.commands.get("latency_bench")
    command = parse_command(seen.text, LATENCY_COMMANDS["latency_bench"]) \
        if seen is not None else None
    if command is not None:
        row["command"] = command.text
        if isinstance(command.args.get("model"), str):
            row["model"] = command.args["model"]
        for key, kind in _ARGS.items():
            value = command.args.get(key)
            if value is None or (value is True) != (kind is bool):
                continue
            if kind is int:
                try:
                    value = int(value)
                except ValueError:
                    continue
            extra[key] = value
    row["_extra"] = extra
    return row


def build(block: Block) -> list[Parsed | Problem]:
    out: list[Parsed | Problem] = []
    kept: list[str] = []
    for i, line in enumerate(block.lines):
        match = _OWN.search(line) if CONTINUES.match(line) else None
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
    row = _context_row(block)
    extra = row.pop("_extra")
    fields: dict[str, Any] = {}
    tolerance: dict[str, float] = {}
    stats: list[LatencyStat] = []
    warnings: list[tuple[int, str]] = []
    columns = fields_of(ServingRun)
    read = 0
    for kind, label, printed, line in items:
        at = block.line_start + line - 1
        try:
            seconds = to_number(printed, float)
        except ValueError:
            seconds = None
            warnings.append((at, f"{label}: {printed!r} is not a number"))
        if kind == "pct":
            match = _PCT.match(label)
            try:
                pct = float(match.group(1)) if match else None
            except ValueError:
                pct = None
            if pct is None:
                warnings.append((at, f"{label}: the percentile is not a number"))
                read += 1
                continue
            stat = "p" + (str(int(pct)) if pct == int(pct) else str(pct))
        else:
            pct, stat = None, "mean" if kind == "avg" else "std"
        read += 1
        if seconds is None:
            continue
        value_ms = _milliseconds(printed, seconds)
        stats.append(LatencyStat(metric="e2el", stat=stat, percentile=pct, value_ms=value_ms))
        # the 50th percentile is the median (numpy's percentile of the batch latencies)
        for column in (f"{stat}_e2el_ms", "median_e2el_ms" if stat == "p50" else ""):
            if column in columns:
                fields[column] = value_ms
                unit = half_unit(printed)
                if unit is not None:
                    tolerance[column] = unit * 1000.0
    if not read:
        raise BlockParseError("no value in the latency benchmark result", 1)
    if items[0][0] != "avg":
        warnings.append((block.line_start, "the latency result's `Avg latency` line is "
                         "missing: the block starts later"))
    row.update(fields)
    workload(row, extra)
    row["engine"] = row.get("engine") if row.get("engine") not in (None, "unknown") else "vllm"
    row["extra"] = extra
    row["format"] = FORMAT.name
    row["line_start"] = block.line_start
    row["line_end"] = block.line_start + max(i for i, t in enumerate(kept) if t)
    out.append(Parsed(row=ServingRun(**row), children=stats, warnings=warnings,
                      tolerance=tolerance))
    return out


def continues(line: str) -> bool:
    return CONTINUES.match(line) is not None


def resumes(lines: list[str], line: str) -> bool:
    """After a line typed into the paste, the result goes on at one of its lines."""
    return continues(line) and START.match(line) is None


FORMAT = BlockFormat(
    name="vllm_bench_latency",
    table="serving_runs",
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
