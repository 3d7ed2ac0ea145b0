"""vLLM's benchmark clients before the result block: `Label: value unit` lines → ``serving_runs``
(``benchmark_throughput.py``'s → ``offline_runs``).

Upstream printers: vLLM ``benchmarks/benchmark_serving.py`` from 2023 to early 2024 (before the
``Serving Benchmark Result`` block of ``vllm_serving``) and ``benchmarks/benchmark_throughput.py``.
Three shapes, each a run:

    Total time: 166.88 s                       2023 serving client: duration, request
    Throughput: 5.99 requests/s                throughput; the three average latencies (in
    Average latency: 67.59 s                   seconds, per request / per token / per output
    Average latency per token: 0.21 s          token) have no column and go to ``extra`` by
    Average latency per output token: 1.10 s   name (`average_latency_s`)

    Successful requests: 100                   early-2024 serving client: the columns of the
    Benchmark duration: 29.060651 s            later result block they match (completed,
    Request throughput: 3.44 requests/s        duration, token counts and throughputs,
    Mean TTFT: 1274.09 ms                      `Mean TTFT`/`P99 TPOT` ... with latency_stats)

    Throughput: 16.90 requests/s, 4326.03 tokens/s      benchmark_throughput.py / `vllm bench
                                                        throughput`: an offline run, its
                                                        figures named as its --output-json
                                                        names them (requests_per_second,
                                                        tokens_per_second; the later `output
                                                        tokens/s` output_tokens_per_second)

A paste that lost its line breaks holds a run on one line, or several runs one after another
(`1 GPU Total time: ... 2 GPU Total time: ...`): a label printed again starts the next run, and
the words before a run's first value name it (its ``label``).  A value that is not a number is
a warning about that value; the run keeps the rest.
"""

from __future__ import annotations

import re
from typing import Any

from lark import Lark, Token, v_args

from ..schemas.models import LatencyStat, ServingRun, fields_of
from ..schemas.offline import OfflineRun
from . import grammar
from .base import Block, BlockFormat, BlockParseError, Context, Parsed, Problem, half_unit
from .grammar import ColumnTransformer, flatten, snake_name
from .offlinecontext import offline_context
from .runcontext import BENCH_COMMANDS, CLIENT_BACKEND_ENGINES, RUN_KEYS, serving_context
from .vllm_serving import metric_key, to_number

THROUGHPUT_COMMANDS = {"throughput_bench": re.compile(
    r"\bbenchmark_throughput(?:\.py)?\b|\bvllm\s+bench\s+throughput\b")}
THROUGHPUT_TOOL = "vllm bench throughput"

# The labels a block's lines start with (after a comment prefix or indentation), each followed
# by a value: a line that starts with none of them ends the block.
_LABELS = (r"Total time|Throughput|Average latency(?:\s+per(?:\s+output)?\s+token)?"
           r"|Successful requests|Benchmark duration|Total input tokens|Total generated tokens"
           r"|Re(?:qu|uq)est throughput|Input token throughput|Output token throughput"
           r"|(?:Overall|Total) token throughput|Total num (?:prompt|output) tokens"
           r"|(?:Mean|Median|Std|Min|Max|P\d+(?:\.\d+)?)\s+[A-Za-z][A-Za-z0-9 \-]{0,60}?")
_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?inf|nan"
_UNIT = r"requests/s|(?:total\s+|output\s+)?tokens/s|ms|s"
# One `Label: value [unit]` (`, value unit` more for the throughput line); a value that is not
# a number is one word.  Atomic: a long line that is not one fails fast.
# (A value that is no number -- `n/a`, a garbled `9!.12` -- is one word: the line is still the
# block's, and build warns about that value only.)
_PAIR = (rf"(?>(?:{_LABELS}):\s*(?:(?:{_NUMBER})(?![^\s,])|[^\s,]+)"
         rf"(?:\s*(?:{_UNIT})(?![^\s,]))?(?:\s*,\s*[^\s,]+\s*(?:{_UNIT})(?![^\s,]))*)")
# A line of a block: label-value pairs and nothing else (prose after a value ends the block).
CONTINUES = re.compile(rf"^\s*{_PAIR}(?:\s+{_PAIR})*\s*$", re.I)
# Where a block starts: the 2023 client's first line (alone, or with the rest after it on
# the same line), the early-2024 duration line (`Benchmark duration (s):` is the later block's),
# or benchmark_throughput.py's one line.
# (A number there may be garbled in the paste, `9!.12`: a stray symbol for a digit.)
_FIGURE = r"[\d!?*~^$&@][\d.!?*~^$&@]*"
START = re.compile(
    rf"(?:^|\s)Total time:\s*{_FIGURE}\s*s(?:\s*$|\s+Throughput:)"
    rf"|^\s*Benchmark duration:\s*{_FIGURE}\s*s\s*$"
    rf"|(?:^|\s)Throughput:\s*{_FIGURE}\s*requests/s,\s*{_FIGURE}\s*(?:total\s+)?tokens/s")
# Printed just before the early-2024 duration line.
PREAMBLE = re.compile(r"^(Successful requests):[ \t]?(\d+)[ \t]*$")

# The printed unit a column's value must carry (None: a count, no unit).
_UNITS = {"duration": ("s",), "request_throughput": ("requests/s",),
          "input_throughput": ("tokens/s",), "output_throughput": ("tokens/s",),
          "total_token_throughput": ("tokens/s",), "completed": (None,),
          "total_input_tokens": (None,), "total_output_tokens": (None,)}
_LATENCY_RE = re.compile(r"^\s*(Mean|Median|Std|Min|Max|P\d+(?:\.\d+)?)\s+(.*?)\s*:$", re.I)
# Printed latency names → vLLM's save-result metric keys.  The first early-2024 client printed
# its TPOT as `latency per output token`; forks printed the end-to-end latency as
# `request latency`.
_METRICS = {"latency_per_output_token": "tpot", "request_latency": "e2el"}
# The five lines of the 2023 serving client, by the keys they set (see _key).
_CLIENT_2023_ORDER = ("duration", "request_throughput", "average latency",
                      "average latency per token", "average latency per output token")
_CLIENT_2023 = set(_CLIENT_2023_ORDER)


@v_args(inline=True)
class BlockToItems(ColumnTransformer):
    """Tree → ("item", column, label, [(number text, unit, qualifier)], line) and ("word",
    text, line) tuples in order; numbers are read by ``build``.  (No character offsets: a
    shape of text is parsed once for any numbers, see reading/memo.py.)"""

    def start(self, *items):
        out = []
        for item in flatten(items):
            if isinstance(item, Token):
                if item.type == "WORD":
                    out.append(("word", str(item), item.line))
            elif isinstance(item, tuple):
                out.append(item)
        return out

    def value(self, first: Token, unit: Token | None = None):
        if first.type == "WORD":
            return (None, str(first), str(unit).split()[-1] if unit is not None else None)
        return (str(first), str(unit).split()[-1] if unit is not None else None,
                str(unit).split()[0] if unit is not None and " " in str(unit).strip() else None)

    def column(self, name, children):
        label = children[0]
        values = [c for c in children[1:] if isinstance(c, tuple)]
        return ("item", name, str(label).rstrip(":").strip(), values, label.line)


def _parser() -> Lark:
    return grammar.in_parser("vllm_client_summary.lark", __file__, BlockToItems)


def parse_block(text: str) -> list[tuple]:
    return grammar.parse(_parser(), text if text.endswith("\n") else text + "\n",
                         "benchmark client summary")


class _Run:
    """One run's values as they are read."""

    def __init__(self, lead: list[str], line: int):
        self.lead = lead
        self.labels: list[str] = []           # as printed, lower case, in order
        self.fields: dict[str, Any] = {}
        self.tolerance: dict[str, float] = {}
        self.extra: dict[str, Any] = {}
        self.stats: list[dict[str, Any]] = []
        self.keys: set[str] = set()
        self.warnings: list[tuple[int, str]] = []
        self.warnings_pending: list[str] = []      # of the item being read, its line not known
        self.throughput_client = False
        self.read = 0                 # values read (a run needs two: one is prose)
        self.first_line = self.last_line = line

    def put(self, column: str, printed: str) -> None:
        value = to_number(printed, int if column in ("completed", "total_input_tokens",
                                                     "total_output_tokens") else float)
        if value is None:
            return
        self.fields[column] = value
        self.read += 1
        unit = half_unit(printed)
        if unit is not None:
            self.tolerance[column] = unit


def _key(name: str, label: str, values: list[tuple]) -> str:
    """What a printed item sets (a label printed again starts another run)."""
    if name in ("average_latency", "latency"):
        return label.lower()
    if name == "throughput" and len(values) > 1:
        return "throughput_line"
    return "request_throughput" if name == "throughput" else name


def _read_item(run: _Run, name: str, label: str, values: list[tuple]) -> None:
    if name == "throughput" and len(values) > 1:
        # Each value of the throughput line is its own: one that is no number costs itself.
        bad = [v[1] for v in values if v[0] is None]
        values = [v for v in values if v[0] is not None]
        if bad:
            run.warnings_pending.append(f"{label}: {bad[0]!r} is not a number")
            run.read += len(bad)      # printed all the same: the line is a run's
    if not values or any(number is None for number, *_ in values):
        bad = next((v[1] for v in values if v[0] is None), None)
        if bad is None:
            return
        raise ValueError(f"{label}: {bad!r} is not a number")
    if name == "throughput":
        # `X requests/s[, Y [total] tokens/s][, Z output tokens/s]`
        for number, unit, qualifier in values:
            if unit == "requests/s":
                run.put("request_throughput", number)
            elif unit == "tokens/s":
                run.put("output_throughput" if qualifier == "output"
                        else "total_token_throughput", number)
                run.throughput_client = True
            else:
                raise ValueError(f"{label}: {number} {unit or ''} is not a throughput".strip())
        return
    number, unit, _ = values[0]
    if name == "average_latency":
        run.extra[snake_name(f"{label} ({unit})" if unit else label)] = to_number(number, float)
        run.read += 1
        return
    if name == "latency":
        match = _LATENCY_RE.match(label + ":")
        stat, printed_metric = match.group(1).lower(), match.group(2)
        key = metric_key(printed_metric)
        metric = _METRICS.get(key, key)
        value = to_number(number, float)
        if unit != "ms" or value is None:
            run.extra[snake_name(f"{label} ({unit})" if unit else label)] = value
            run.read += 1
            return
        pct = float(stat[1:]) if stat.startswith("p") else None
        if pct is not None:
            stat = "p" + (str(int(pct)) if pct == int(pct) else str(pct))
        run.stats.append({"metric": metric, "stat": stat, "percentile": pct, "value_ms": value})
        column = f"{stat}_{metric}_ms"
        if column in fields_of(ServingRun):
            run.put(column, number)
        else:                     # kept in latency_stats only, as the result block's are
            run.read += 1
        return
    if name in ("total_input_tokens", "total_output_tokens") and label.lower().startswith(
            "total num"):
        run.throughput_client = True
    if unit is not None and unit not in _UNITS[name]:
        raise ValueError(f"{label}: {number} {unit or ''} is not in {_UNITS[name][0]}".strip())
    run.put(name, number)


def _runs(items: list[tuple], line_start: int) -> list[_Run]:
    runs: list[_Run] = []
    words: list[str] = []
    run: _Run | None = None
    for item in items:
        if item[0] == "word":
            words.append(item[1])
            continue
        _, name, label, values, line = item
        key = _key(name, label, values)
        if run is None or key in run.keys:
            run = _Run(words, line)
            runs.append(run)
        words = []
        run.keys.add(key)
        run.labels.append(label.lower())
        run.last_line = line
        try:
            _read_item(run, name, label, values)
        except ValueError as exc:
            run.warnings.append((line_start + line - 1, str(exc)))
        run.warnings += [(line_start + line - 1, w) for w in run.warnings_pending]
        run.warnings_pending = []
    return runs


def _lead_label(words: list[str]) -> str | None:
    """The words before a run's first value, after the last colon among them (`result: 1 L4
    GPU` → `1 L4 GPU`): the run's name, when the paste printed one there."""
    text = " ".join(words)
    text = text.rpartition(":")[2] if ":" in text else text
    text = text.strip(" -–—,;.|*`")
    return text[:120] or None


# benchmark_throughput.py's figures → offline_runs' columns (its --output-json keys).
_OFFLINE = {"request_throughput": "requests_per_second",
            "total_token_throughput": "tokens_per_second",
            "output_throughput": "output_tokens_per_second",
            "total_input_tokens": "total_input_tokens",
            "total_output_tokens": "total_output_tokens"}
# Its --backend → the engine measured.
_THROUGHPUT_ENGINES = {"vllm": "vllm", "vllm-chat": "vllm", "hf": "hf",
                       "mii": "deepspeed-mii"}


def _throughput_row(block: Block, run: _Run) -> tuple[dict[str, Any], dict[str, float]]:
    """benchmark_throughput.py's run: an offline run, with what its command line says."""
    row, command = offline_context(block, "throughput_bench",
                                   THROUGHPUT_COMMANDS["throughput_bench"], THROUGHPUT_TOOL,
                                   "vllm")
    backend = str(row.get("backend") or "vllm").lower()
    row["engine"] = _THROUGHPUT_ENGINES.get(backend, CLIENT_BACKEND_ENGINES.get(backend,
                                                                                backend))
    row["phase"] = "benchmark"
    row.update({_OFFLINE[k]: v for k, v in run.fields.items() if k in _OFFLINE})
    extra = dict(run.extra)
    extra.update({k: v for k, v in run.fields.items() if k not in _OFFLINE})
    row["extra"] = extra or None
    tolerance = {_OFFLINE.get(k, k): v for k, v in run.tolerance.items() if k in _OFFLINE}
    return row, tolerance


def _engine(row: dict[str, Any]) -> str:
    """The engine measured: what the context said; else the client's backend (`vllm` was vLLM's
    own `/generate` API then, or, for benchmark_throughput.py, the vLLM engine in process)."""
    if row.get("engine") not in (None, "unknown"):
        return row["engine"]
    backend = str(row.get("backend") or "").lower()
    return "vllm" if backend == "vllm" else CLIENT_BACKEND_ENGINES.get(backend, "unknown")


def build(block: Block) -> list[Parsed | Problem]:
    # A line inside the summary that is none of its lines (typed into the paste, a prompt, a
    # `Label: value` the client never printed; the block went on after it, see resumes) is
    # skipped with a warning: it neither ends the summary nor names the next run.
    lines = block.lines
    read = list(lines)
    skipped: list[Problem] = []
    for i in range(1, len(read)):
        if read[i].strip() and not continues(read[i]):
            skipped.append(Problem(block.line_start + i, "not a line of the benchmark client "
                                   f"summary, skipped: {read[i].strip()[:80]!r}", read[i]))
            read[i] = ""
    items = parse_block("\n".join(read))
    runs = _runs(items, block.line_start)
    if not runs:
        raise BlockParseError("no value in the benchmark client summary", 1)
    printed_completed = block.context.printed.get("Successful requests")
    out: list[Parsed | Problem] = list(skipped)
    for i, run in enumerate(runs):
        preamble = i == 0 and printed_completed is not None and "completed" not in run.fields
        last = i == len(runs) - 1
        if last and run.labels[:1] == ["total time"] and not run.keys >= _CLIENT_2023:
            # The 2023 client printed its five lines together: a run with fewer, the block's
            # last, was cut short (the paste ends, or prose follows): what it printed is kept.
            # (A lone first line stays prose: one value is no run, see below.)
            missing = [k for k in _CLIENT_2023_ORDER if k not in run.keys]
            run.warnings.append((block.line_start + run.last_line - 1,
                                 "the 2023 client's summary is cut short here: "
                                 f"no {', '.join(missing)}"))
        if run.read + preamble < 2:
            # One value (`Total time: 5 s` in prose) is no run; a block whose values could
            # not be read says so.
            if len(run.keys) > 2:
                out.extend(Problem(line, reason, lines[line - block.line_start])
                           for line, reason in run.warnings)
            continue
        if run.throughput_client:
            row, tolerance = _throughput_row(block, run)
        else:
            row, tolerance = serving_context(block.context), run.tolerance
            if preamble:
                run.put("completed", printed_completed)
            row.update(run.fields)
            row["engine"] = _engine(row)
            row["extra"] = run.extra or None
        label = _lead_label(run.lead)
        if label is not None:
            row["label"] = label
        row["format"] = FORMAT.name
        first, last = run.first_line - 1, run.last_line - 1
        row["line_start"] = block.line_start + first
        row["line_end"] = block.line_start + last
        if len(runs) > 1:
            row["raw_text"] = _run_text(lines, runs, i)
        if run.throughput_client:
            out.append(Parsed(row=OfflineRun(**row), warnings=run.warnings,
                              tolerance=tolerance))
            continue
        stats = [LatencyStat(**s) for s in run.stats]
        out.append(Parsed(row=ServingRun(**row), children=stats, warnings=run.warnings,
                          tolerance=tolerance))
    return out


def _run_text(lines: list[str], runs: list[_Run], i: int) -> str:
    """A run's own lines (several runs on one line: that line)."""
    return "\n".join(lines[runs[i].first_line - 1:runs[i].last_line])


def continues(line: str) -> bool:
    return CONTINUES.match(line) is not None


def resumes(lines: list[str], line: str) -> bool:
    """After a line that is not the summary's (typed into the paste, a prompt, an unknown
    `Label: value`), the summary goes on at one of its own lines -- not at a run's first line,
    which starts a block of its own as before (with the context printed before it)."""
    return continues(line) and START.search(line) is None


FORMAT = BlockFormat(
    name="vllm_client_summary",
    table="serving_runs",
    description="vLLM benchmark client summaries before the result block: benchmark_serving.py "
                "2023 (`Total time:`, `Throughput:`, `Average latency:`) and early 2024 "
                "(`Benchmark duration: ... s`, `Mean TTFT: ... ms`), and benchmark_throughput.py / "
                "`vllm bench throughput` (`Throughput: ... requests/s, ... tokens/s`: an "
                "offline run, to offline_runs).",
    upstream=("vllm benchmarks/benchmark_serving.py 2023 – Feb 2024",
              "vllm benchmarks/benchmark_throughput.py"),
    markers=("Total time:", "Benchmark duration:", "requests/s,"),
    start=START,
    end=None,
    max_lines=200,
    build=build,
    commands={**BENCH_COMMANDS, **THROUGHPUT_COMMANDS},
    preamble=PREAMBLE,
    preamble_markers=("successful requests",),
    continues=continues,
    resumes=resumes,
    # A run that follows another without a blank line goes on in the same block, whose build
    # starts a new run where a label is printed again.
    restarts=False,
)
