"""What an offline benchmark's context says: its command line (and printed Namespace) and the
note around it, as the columns of ``offline_runs``.

The offline programs take their workload as arguments (`--batch-size 1 8 32 --input-len 512
--output-len 64`), so what their output does not print comes from here.  SGLang's one-batch
programs sweep a list of values per flag; :func:`sweep_cases` gives each printed case its
values in the program's own order (batch size × input length × output length).
"""

from __future__ import annotations

import itertools
import math
import re
from typing import Any

from ..reading.cmdline import parse_command, unabbreviated
from ..reading.pyliteral import ReprParseError, parse_namespace
from ..schemas.offline import OfflineRun, OfflineStep
from .base import Block, Parsed, half_unit
from .runcontext import model_in_prose, workload_in_prose
from .vllm_serving import to_number

# Arguments → columns, with their type (the spellings of vLLM and SGLang).
_ARGS: dict[str, tuple[str, type]] = {
    "model": ("model", str), "model_path": ("model", str), "tokenizer": ("tokenizer", str),
    "tokenizer_path": ("tokenizer", str), "dtype": ("dtype", str),
    "quantization": ("quantization", str), "kv_cache_dtype": ("kv_cache_dtype", str),
    "tensor_parallel_size": ("tensor_parallel_size", int), "tp_size": ("tensor_parallel_size", int),
    "tp": ("tensor_parallel_size", int), "max_model_len": ("max_model_len", int),
    "context_length": ("max_model_len", int),
    "batch_size": ("batch_size", int), "input_len": ("input_len", int),
    "output_len": ("output_len", int), "n": ("n_sequences", int), "use_beam_search": ("use_beam_search", bool),
    "num_iters": ("num_iters", int), "num_iters_warmup": ("num_iters_warmup", int),
    "dataset_name": ("dataset_name", str), "dataset_path": ("dataset_path", str),
    "dataset": ("dataset_path", str), "num_prompts": ("num_prompts", int),
    "backend": ("backend", str), "run_name": ("run_name", str), "base_url": ("base_url", str),
}
# Keys a Namespace of an offline program holds (a serving client's has none of them).
_OFFLINE_KEYS = ("input_len", "num_iters", "batch_size", "output_len")
# Flags a one-batch program sweeps (nargs='+').
SWEPT = ("batch_size", "input_len", "output_len")


def _typed(value: Any, kind: type) -> Any:
    if value is None or isinstance(value, (list, tuple, dict)):
        return None
    if kind is bool:
        return value if isinstance(value, bool) else \
            str(value).lower() in ("true", "1", "yes") if isinstance(value, str) else None
    if value is True:           # a value flag printed without its value says nothing
        return None
    if kind is int:
        try:
            number = float(value)
        except (TypeError, ValueError):
            return None
        return int(number) if math.isfinite(number) and number == int(number) else None
    return str(value) if str(value) not in ("None", "") else None


def arguments_row(args: dict[str, Any]) -> dict[str, Any]:
    """An offline program's arguments (a command's flags, a Namespace) as columns; a flag
    abbreviated as argparse allows (`--input 512`) under its whole name."""
    args = unabbreviated(args, _ARGS)
    row: dict[str, Any] = {}
    for key, (column, kind) in _ARGS.items():
        if key in args:
            value = _typed(args[key], kind)
            if value is not None:
                row.setdefault(column, value)
    return row


def offline_context(block: Block, kind: str, pattern: re.Pattern[str], tool: str,
                    engine: str) -> tuple[dict[str, Any], Any]:
    """Columns for an offline case from its context, and the command seen (or None)."""
    context = block.context
    row: dict[str, Any] = {"section": context.section_text, "label": context.label_or_heading,
                           "tags": context.tags or None, "tool": tool}
    seen = context.commands.get(kind)
    command = parse_command(seen.text, pattern) if seen is not None else None
    if command is not None:
        row["command"] = command.text
        row.update(arguments_row(command.args))
        for flag in SWEPT:
            values = sweep(command.text, flag)
            if values is not None and len(values) > 1:
                row.pop(flag, None)          # a sweep: each case has its own
    if context.namespace is not None:
        try:
            namespace = parse_namespace(context.namespace.text)
        except ReprParseError:
            namespace = None
        if isinstance(namespace, dict) and any(k in namespace for k in _OFFLINE_KEYS):
            for key, value in arguments_row(namespace).items():
                row.setdefault(key, value)
    if command is None and context.namespace is None:
        row.update(offline_in_prose((*context.section, *context.prose)))
    # The program runs its own engine in process (bench_one_batch_server: the server it
    # launched), whatever a heading names.
    row["engine"] = engine
    return row, command


# A batch size in words (`batch 8`, `batch size: 32`, `bs=16`, `8 batch`).
PROSE_BATCH = re.compile(r"(?<![\w-])(?:batch(?:[ _-]size)?|bs)\s*[=:]?\s*(\d{1,5})(?![\d.]|\s*(?:ms|s)\b)"
                         r"|(?<![\w.])(\d{1,5})\s+batch\b", re.I)
# The workload's names in a serving note, as an offline run's columns.
_AS_OFFLINE = {"random_input_len": "input_len", "random_output_len": "output_len",
               "num_prompts": "num_prompts"}


def offline_in_prose(prose: tuple[str, ...]) -> dict[str, Any]:
    """What a note's prose states of an offline run no command or Namespace gave: its model,
    its lengths and prompt count (`input 128, output 256`, `1000 prompts`), its batch size."""
    row: dict[str, Any] = {}
    model = model_in_prose(prose)
    if model is not None:
        row["model"] = model
    for key, value in workload_in_prose(prose).items():
        if key in _AS_OFFLINE and isinstance(value, int):
            row[_AS_OFFLINE[key]] = value
    batches = {int(m.group(1) or m.group(2)) for line in prose for m in PROSE_BATCH.finditer(line)}
    if len(batches) == 1:
        row["batch_size"] = batches.pop()
    return row


def sweep(text: str, flag: str) -> list[int] | None:
    """The values of a `--flag 1 16 64` argument (nargs='+')."""
    # (a value of more than 9 digits is no size: a pasted number gone wrong)
    match = re.search(rf"--{flag.replace('_', '-')}(?:=|\s+)((?:\d{{1,9}}\s+)+)(?=--|$|[|;&])",
                      text + " ")
    return [int(v) for v in match.group(1).split()] if match else None


def sweep_cases(command: Any, count: int) -> list[dict[str, int]]:
    """What each of ``count`` cases ran with, by the command's sweep (batch size × input
    length × output length, in that order); only the single values when the count does not
    match."""
    if command is None:
        return [{} for _ in range(count)]
    values = {key: sweep(command.text, key) for key in SWEPT}
    axes = [(k, v) for k, v in values.items() if v]
    product = list(itertools.product(*(v for _, v in axes)))
    if len(product) == count:
        return [{k: combo[i] for i, (k, _) in enumerate(axes)} for combo in product]
    return [{k: v[0] for k, v in axes if len(v) == 1} for _ in range(count)]


def warmup_case(command: Any) -> dict[str, int]:
    """The case a one-batch program warms up with: the first batch size and input length of
    the sweep.  (Its output length is the program's own: 8 tokens in bench_one_batch 0.3.x,
    at most 32 in later versions; the output does not say which.)"""
    if command is None:
        return {}
    out: dict[str, int] = {}
    for key in ("batch_size", "input_len"):
        values = sweep(command.text, key)
        if values:
            out[key] = values[0]
    return out


class Case:
    """One case of an offline program's output as it is read: its columns, their printed
    precision, what no column holds, its step lines and warnings."""

    def __init__(self, line: int, phase: str = "benchmark"):
        self.first = self.last = line
        self.phase = phase
        self.fields: dict[str, Any] = {}
        self.tolerance: dict[str, float] = {}
        self.extra: dict[str, Any] = {}
        self.steps: list[dict[str, Any]] = []
        self.warnings: list[tuple[int, str]] = []

    def number(self, what: str, printed: str | None, at: int) -> float | None:
        try:
            return to_number(printed, float)
        except ValueError:
            self.warnings.append((at, f"{what}: {printed!r} is not a number"))
            return None

    def put(self, column: str, printed: str | None, at: int, what: str,
            factor: float = 1.0) -> float | None:
        """The printed number into ``column`` (times ``factor``), with its precision."""
        value = self.number(what, printed, at)
        if value is None:
            return None
        if column in _INT_COLUMNS:
            if not math.isfinite(value) or value != int(value):
                self.warnings.append((at, f"{what}: {printed!r} is not a whole number"))
                return None
            value = int(value)
        else:
            value = value * factor
        self.fields[column] = value
        half = half_unit(printed)
        if half is not None and column not in _INT_COLUMNS:
            self.tolerance[column] = half * factor
        return value


_INT_COLUMNS = frozenset({"batch_size", "input_len", "output_len", "num_requests",
                          "total_num_tokens", "total_input_tokens", "total_output_tokens"})


def case_rows(block: Block, cases: list[Case], row0: dict[str, Any], command: Any,
              format_name: str, warm: dict[str, int] | None = None) -> list[Parsed]:
    """One ``offline_runs`` row per case (its step lines its children), each with the
    block's context ``row0`` and, for what the case did not print, the command's sweep (a
    warm-up case: ``warm``, what the program warms up with)."""
    out = []
    runs = [c for c in cases if c.phase == "benchmark"]
    swept = dict(zip(map(id, runs), sweep_cases(command, len(runs))))
    warm = warm or {}
    for c in cases:
        row = dict(row0)
        if c.phase == "benchmark":
            row.update(swept[id(c)])
        else:
            for flag in SWEPT:
                row.pop(flag, None)         # not the case the command's single value sets
            row.update(warm)
        row.update(c.fields)
        row["phase"] = c.phase
        row["extra"] = c.extra or None
        row["format"] = format_name
        row["line_start"], row["line_end"] = c.first, c.last
        if len(cases) > 1:
            row["raw_text"] = "\n".join(block.lines[c.first - block.line_start:
                                                    c.last - block.line_start + 1])
        steps = [OfflineStep(phase=c.phase, **s) for s in c.steps]
        out.append(Parsed(row=OfflineRun(**row), children=steps, warnings=c.warnings,
                          tolerance=c.tolerance))
    return out
