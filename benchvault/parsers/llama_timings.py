"""The timings llama.cpp prints after a generation → ``llama_bench_results`` rows.

Upstream printers: ``llama_perf_context_print`` (src/llama-context.cpp; before 2024-09
``llama_print_timings`` in llama.cpp), which llama-cli, llama-simple and every program built on
the library print at exit, and llama-server's ``print_timings`` after each request
(tools/server, prefixed by its slot and task; from 2025 with the draft model's acceptance)::

    llama_perf_context_print:        load time =    1234.56 ms
    llama_perf_context_print: prompt eval time =     300.11 ms /    20 tokens (   15.01 ms per token,    66.64 tokens per second)
    llama_perf_context_print:        eval time =    2296.72 ms /   255 runs   (    9.01 ms per token,   111.03 tokens per second)
    llama_perf_context_print:       total time =    2596.83 ms /   275 tokens

One print is one generation: its prompt's rate is a ``pp<N>`` result (``n_prompt`` the prompt's
tokens, ``avg_ts`` its tokens per second) and its generation's a ``tg<N>`` one (``n_gen`` the
tokens generated), as llama-bench names the tests of those sizes.  The times keep upstream's
labels in ``extra`` (``prompt_eval_time_ms``, ``eval_time_ms``, ``total_time_ms``,
``load_time_ms``, ``sampling_time_ms``, before 2024-09 ``sample_time_ms``), and so does a
speculative draft's acceptance (``draft_acceptance``, ``draft_accepted``, ``draft_generated``,
``mean_acceptance_length``, ``acceptance_rate_per_position``).  What the note around says
(model, GPU, build, the command quoted) fills the rest, as for llama-bench's own table.
"""

from __future__ import annotations

import re
from typing import Any

from lark import Token, Tree, v_args

from . import grammar
from .base import Block, BlockFormat, BlockParseError, Parsed, Problem
from .grammar import ColumnTransformer, figure, flatten
from .llama_bench import run_context, test_name
from .llama_retyped import add_result
from ..schemas.models import INCOMPLETE

# A line of the print, after whatever printed it.
LINE = re.compile(r"(?:(?:prompt eval|eval|total|load|sampling|sample) time\s*=\s*-?[\d.!?*^$&@]+\s*ms"
                  r"|draft acceptance(?: rate)?\s*=\s*[\d.!?*^$&@]+\s*\(|graphs reused\s*=\s*\S+"
                  r"|Prompt:\s*[\d.!?*^$&@]+\s*t/s\s*\|\s*Generation:)")
READ_AS = "llama.cpp's timings of a generation, read as llama-bench results (its prompt and " \
          "its generation rate)"


@v_args(inline=True)
class LinesToTimings(ColumnTransformer):
    """Tree → [(what, {figure: printed text})], in order."""

    def start(self, *items):
        return [i for i in flatten(items) if isinstance(i, tuple)]

    def timing(self, what: Token, ms: Token, *rest):
        figures: dict[str, Any] = {"ms": str(ms)}
        numbers = [r for r in rest if isinstance(r, Token) and r.type == "NUMBER"]
        if numbers:
            figures["count"] = str(numbers[0])
        for r in rest:
            if isinstance(r, dict):
                figures.update(r)
        return (" ".join(str(what).split()[:-1]), figures)

    def rates(self, _per_token, per_second):
        return {"per_second": str(per_second)}

    def draft(self, rate: Token, accepted: Token, generated: Token, *rest):
        figures = {"draft_acceptance": str(rate), "draft_accepted": str(accepted),
                   "draft_generated": str(generated)}
        for r in rest:
            figures.update(r)
        return ("draft", figures)

    def length(self, value):
        return {"mean_acceptance_length": str(value)}

    def positions(self, *values):
        return {"acceptance_rate_per_position": [str(v) for v in values]}

    def reused(self, value):
        return ("graphs reused", {"count": str(value)})

    def chat(self, prompt: Token, generation: Token):
        # (llama-cli's rates alone: a print of its own, ended by them as others by their total)
        return Tree("_chat", [("prompt eval", {"per_second": str(prompt)}),
                              ("eval", {"per_second": str(generation)}), ("chat", {})])

    def column(self, name, children):  # pragma: no cover - every rule has its method
        raise NotImplementedError(name)


def parse_lines(text: str) -> list[tuple]:
    parser = grammar.in_parser("llama_timings.lark", __file__, LinesToTimings)
    return grammar.parse(parser, text + "\n", "llama.cpp timings")


def _prints(items: list[tuple]) -> list[list[tuple]]:
    """The lines cut into one print each: a print's first line (its load or sampling time, or
    its prompt's) after a line of rates starts the next."""
    out: list[list[tuple]] = [[]]
    for item in items:
        rated = any(what in ("prompt eval", "eval") for what, _, _ in out[-1])
        if rated and item[0] in ("prompt eval", "load", "sampling", "sample"):
            out.append([])
        out[-1].append(item)
    return [p for p in out if p]


COUNTS = ("count", "draft_accepted", "draft_generated")


def _figures(printed: dict[str, Any], at: int, problems: list[Problem], raw: str
             ) -> dict[str, Any]:
    """A line's printed figures as numbers (counts whole); a garbled one is left out, said."""
    out: dict[str, Any] = {}
    for key, text in printed.items():
        values = [figure(t) for t in (text if isinstance(text, list) else [text])]
        if None in values:
            problems.append(Problem(at, f"{key.replace('_', ' ')}: {text!r} is not a number: "
                                        "left empty", raw))
            continue
        if key in COUNTS:
            values = [int(v) for v in values]
        out[key] = values if isinstance(text, list) else values[0]
    return out


def build(block: Block) -> list[Parsed | Problem]:
    out: list[Parsed | Problem] = []
    items: list[tuple] = []
    for i, line in enumerate(block.lines):
        at = block.line_start + i
        if not LINE.search(line):      # (a line typed among them)
            if line.strip():
                out.append(Problem(at, "not a line of llama.cpp's timings, skipped", line))
            continue
        try:
            parsed = parse_lines(line)
        except BlockParseError as exc:
            out.append(Problem(at, exc.reason, line))
            continue
        items += [(what, i + 1, _figures(printed, at, out, line)) for what, printed in parsed]
    shared = {**run_context(block.context), "format": FORMAT.name}
    for lines in _prints(items):
        rated = [k for k, (what, _, _) in enumerate(lines) if what in ("prompt eval", "eval")]
        # (every print ends with its total time, llama-cli's rates with themselves: one
        # without it was cut short)
        cut = bool(rated) and not any(what in ("total", "chat") for what, _, _ in lines[rated[-1]:])
        if cut:
            out.append(Problem(block.line_start + lines[-1][1] - 1, "the timings stop before "
                               "their total time (cut short?): read as printed, marked "
                               "incomplete", block.lines[lines[-1][1] - 1]))
        for k in rated:
            what, at, figures = lines[k]
            # (the figures of the print's lines up to this one; the last rate's row also those
            # after it: the total, the graphs reused, the draft's acceptance)
            own = lines[:k + 1] if k != rated[-1] else lines
            count, rate = figures.get("count"), figures.get("per_second")
            sizes = (count, 0) if what == "prompt eval" else (0, count)
            test = test_name(*sizes, 0) if count else ("pp" if what == "prompt eval" else "tg")
            values = {**shared, "test": test, "n_prompt": sizes[0], "n_gen": sizes[1],
                      "n_depth": 0, "avg_ts": rate,
                      "extra": {**(shared.get("extra") or {}), **_extra(own),
                                **({INCOMPLETE: True} if cut and what == "eval" else {})}}
            # (the row spans the lines its figures come from)
            add_result(out, values, block.line_start + at - 1, block.lines[at - 1], [], READ_AS,
                       line_end=block.line_start + own[-1][1] - 1)
    return out


def _extra(lines: list[tuple]) -> dict[str, Any]:
    """The times, graphs reused and draft acceptance of ``lines``, by upstream's labels."""
    extra: dict[str, Any] = {}
    for what, _, figures in lines:
        if what == "draft":
            extra.update(figures)
        elif what == "graphs reused" and "count" in figures:
            extra["graphs_reused"] = figures["count"]
        elif "ms" in figures:
            extra[f"{what.replace(' ', '_')}_time_ms"] = figures["ms"]
    return extra


FORMAT = BlockFormat(
    name="llama_timings",
    table="llama_bench_results",
    description="llama.cpp's timings after a generation (llama_perf_context_print / "
                "llama_print_timings, llama-server's print_timings): its prompt's and its "
                "generation's rate, a result each.",
    upstream=("llama.cpp llama_print_timings (2023 – 2024-09)",
              "llama.cpp llama_perf_context_print (2024-09 –)",
              "llama.cpp llama-server print_timings (with draft acceptance from 2025)",
              "llama.cpp llama-cli chat's rates after each reply (tools/cli, late 2025 –)"),
    markers=("eval time =", "load time =", "sample time =", "sampling time =",
             "draft acceptance", "| Generation:"),
    start=re.compile(r"^.*?" + LINE.pattern),
    end=None,
    max_lines=200,
    build=build,
    continues=lambda line: LINE.search(line) is not None,
    resumes=lambda lines, line: LINE.search(line) is not None,
    restarts=False,
)
