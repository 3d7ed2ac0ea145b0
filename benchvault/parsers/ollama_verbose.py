"""The stats ``ollama run --verbose`` prints after a reply → ``llama_bench_results`` rows.

Upstream printer: ollama's ``api.Metrics.Summary()`` (``ollama run --verbose``, or ``/set
verbose`` in its chat), to stderr after each reply, each line only when its figure is above
zero::

    total duration:       5.123456789s
    load duration:        12.345ms
    prompt eval count:    26 token(s)
    prompt eval duration: 45.678ms
    prompt eval rate:     569.20 tokens/s
    eval count:           290 token(s)
    eval duration:        4.9876s
    eval rate:            58.14 tokens/s

Ollama runs llama.cpp's library, and one print is one generation, as llama.cpp's own timings
are: its prompt's rate is a ``pp<N>`` result (``n_prompt`` the prompt eval count, ``avg_ts`` the
rate) and its reply's a ``tg<N>`` one (``n_gen`` the eval count).  The durations keep the names
of ollama's API (``total_duration``, ``load_duration``, ``prompt_eval_duration``,
``eval_duration``), in milliseconds (``_ms``) in ``extra``.  What the note around says (the
model of ``ollama run MODEL``, the GPU) fills the rest, as for llama-bench's own table.
"""

from __future__ import annotations

import re
from typing import Any

from lark import Token, v_args

from . import grammar
from .base import Block, BlockFormat, BlockParseError, Parsed, Problem
from .grammar import ColumnTransformer, figure, flatten
from .llama_bench import run_context, test_name
from .llama_retyped import add_result

_WHAT = r"(?:(?:total|load|prompt eval|eval) duration|(?:prompt eval|eval) (?:count|rate))"
# A line of the print (what a log or a prompt put before it is no part of it).
LINE = re.compile(rf"^(?P<before>\W*){_WHAT}:\s+[\d!?*^$&@]", re.I)
# A short line ending in a colon among the prints names the one after it (`- 2nd run:`).
NAME = re.compile(r"^[\s*>#-]*\**([^:\n]{1,60}?)\**\s*:\s*$")
READ_AS = "ollama's stats of a reply (run --verbose), read as llama-bench results (its " \
          "prompt's and its reply's rate)"
# Go's time.Duration as printed: its parts and what each is in milliseconds.
DURATION_PART = re.compile(r"([\d.]+)(h|ms|m|s|µs|μs|us|ns)")
IN_MS = {"h": 3_600_000.0, "m": 60_000.0, "s": 1000.0, "ms": 1.0, "µs": 1e-3, "μs": 1e-3,
         "us": 1e-3, "ns": 1e-6}


def in_ms(text: str) -> float | None:
    """`1m2.5s` → 62500.0; None when a part is garbled."""
    parts = DURATION_PART.findall(text)
    if "".join(n + u for n, u in parts) != text:
        return None
    total = 0.0
    for number, unit in parts:
        value = figure(number)
        if value is None:
            return None
        total += value * IN_MS[unit]
    return round(total, 9)


@v_args(inline=True)
class LinesToStats(ColumnTransformer):
    """Tree → [(label, printed text)], in order."""

    def start(self, *items):
        return [i for i in flatten(items) if isinstance(i, tuple)]

    def duration(self, what: Token, value: Token):
        return (" ".join(str(what).lower().split()), str(value))

    count = rate = duration

    def column(self, name, children):  # pragma: no cover - every rule has its method
        raise NotImplementedError(name)


def parse_lines(text: str) -> list[tuple[str, str]]:
    parser = grammar.in_parser("ollama_verbose.lark", __file__, LinesToStats)
    return grammar.parse(parser, text + "\n", "ollama stats")


def _prints(items: list[tuple[str, int, str]]) -> list[list[tuple[str, int, str]]]:
    """The lines cut into one print each: a label seen again starts the next."""
    out: list[list[tuple[str, int, str]]] = [[]]
    for item in items:
        if any(what == item[0] for what, _, _ in out[-1]):
            out.append([])
        out[-1].append(item)
    return [p for p in out if p]


def _value(what: str, text: str) -> float | int | None:
    if what.endswith("duration"):
        return in_ms(text)
    value = figure(text)
    return int(value) if value is not None and what.endswith("count") else value


def build(block: Block) -> list[Parsed | Problem]:
    out: list[Parsed | Problem] = []
    items: list[tuple[str, int, str]] = []
    named: dict[int, str] = {}      # the line that names the print after it: `- 2nd run:`
    for i, line in enumerate(block.lines):
        at = block.line_start + i
        found = LINE.search(line)
        if found is None:       # (a line typed among them)
            if (name := NAME.match(line)) is not None:
                named[i + 1] = name.group(1)
            elif line.strip():
                out.append(Problem(at, "not a line of ollama's stats, skipped", line))
            continue
        try:
            parsed = parse_lines(line[found.end("before"):])
        except BlockParseError as exc:
            out.append(Problem(at, exc.reason, line))
            continue
        items += [(what, i, text) for what, text in parsed]
    shared = {**run_context(block.context), "format": FORMAT.name}
    for lines in _prints(items):
        values: dict[str, Any] = {}
        printed = {what: text for what, _, text in lines}
        for what, i, text in lines:
            value = _value(what, text)
            if value is None:
                out.append(Problem(block.line_start + i, f"{what}: {text!r} is not a number: "
                                   "left empty", block.lines[i]))
                continue
            values[what] = value
        label = {"label": named[lines[0][1]]} if lines[0][1] in named else {}
        rated = [k for k, (what, _, _) in enumerate(lines) if what.endswith("rate")]
        for kind, whose in (("prompt eval", "prompt's"), ("eval", "reply's")):
            if f"{kind} rate" not in printed and any(w.startswith(f"{kind} ") for w in printed):
                # (a part's lines end with its rate: without it they were cut short)
                out.append(Problem(block.line_start + lines[-1][1], f"the stats stop before "
                                   f"the {whose} rate (cut short?): its rate not read",
                                   block.lines[lines[-1][1]]))
        for k in rated:
            what = lines[k][0]
            kind = what[:-len(" rate")]
            # (the figures of the print's lines up to this rate; the last rate's row all)
            own = lines[:k + 1] if k != rated[-1] else lines
            extra = {f"{w.replace(' ', '_')}_ms": values[w] for w, _, _ in own
                     if w.endswith("duration") and w in values}
            count = values.get(f"{kind} count")
            sizes = (count, 0) if kind == "prompt eval" else (0, count)
            test = test_name(*sizes, 0) if count else ("pp" if kind == "prompt eval" else "tg")
            if count is None and f"{kind} count" in printed:     # (garbled: kept as printed)
                test += printed[f"{kind} count"]
            row = {**shared, **label, "test": test, "n_prompt": sizes[0], "n_gen": sizes[1],
                   "n_depth": 0, "avg_ts": values.get(what),
                   "extra": {**(shared.get("extra") or {}), **extra}}
            # (the row spans its rate's line to its print's last figure it holds)
            at = lines[k][1]
            add_result(out, row, block.line_start + at, block.lines[at], [], READ_AS,
                       line_end=block.line_start + own[-1][1])
    return out


FORMAT = BlockFormat(
    name="ollama_verbose",
    table="llama_bench_results",
    description="ollama's stats after a reply (`ollama run --verbose`): its prompt's and its "
                "reply's rate, a result each, with their token counts and durations.",
    upstream=("ollama api.Metrics.Summary() (ollama run --verbose, /set verbose)",),
    # (a print starts with its total duration, or, cut, its counts; one that starts at a rate
    # is llama_prose's)
    markers=("duration:", "eval count:"),
    start=LINE,
    end=None,
    max_lines=200,
    build=build,
    continues=lambda line: LINE.search(line) is not None,
    resumes=lambda lines, line: LINE.search(line) is not None,
    restarts=False,
)
