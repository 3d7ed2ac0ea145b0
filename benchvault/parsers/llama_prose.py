"""llama.cpp speeds stated in a note's words → ``llama_bench_results`` rows.

People who ran llama-bench, llama-cli or llama-server often write the speeds down rather than
paste the table: a test's kind or name, its rate and its unit, a line each or a few on one
line::

    Prompt processing: 11.9 t/s            pp512: 1234.5 ± 3.2 t/s, tg128: 45.6 t/s
    Generation: 1.26 t/s                   PP 1201.04 --> 1091.76 tok/s

Each rate is one result: its test as llama-bench names it (`pp512`, `tg128`; a kind alone,
`Prompt processing`, `Generation`, is `pp` / `tg`, sized by a llama-bench command's `-p` /
`-n` when one is quoted before it), `avg_ts` and the spread after `±` (`stddev_ts`).  Two
rates around an arrow are the runs before and after a change, labelled so.  Lines of the
generic words alone (`Prefill`, `Decode`, `Generation`, `Eval`: a vLLM note's words too) are
read only beside a word that is llama.cpp's own (`pp`, `tg`, `Prompt processing`, `Prompt
eval`, `Token generation`, `Text generation`).  What the note around says (its heading and
label, the command quoted in it, its GPU, build, model and flags) fills the rest, as for a
table retyped by hand; every block carries one warning that it was read from prose.
"""

from __future__ import annotations

import re
from typing import Any

from lark import Token, v_args

from . import grammar
from .base import Block, BlockFormat, Parsed, Problem, own_lines
from .grammar import ColumnTransformer, figure, flatten
from .llama_bench import QUANT_WORD, run_context
from .llama_retyped import add_result, bare_kind, bare_test, merged, test_of
from .runcontext import models_named

_KIND = (r"(?:(?:pp|tg)(?:\d+|\s\d+(?=\s*[:=]))(?:\s?\+\s?tg\d+)?(?:\s*@?\s*d\d+)?|pp|tg"
         r"|prompt\s+processing|prompt\s+eval(?:uation)?|token\s+generation|text\s+generation"
         r"|generation|prefill|decode|eval)(?:\s+(?:speed|rate|throughput))?")
# (a figure's digit may be garbled in the paste, `!55.10`: the line is still one of speeds)
_NUMBER = r"[~≈]?[\d!?*^$&@][\d,!?*^$&@]*(?:\.[\d!?*^$&@]+)?"
_ITEM = (rf"{_KIND}\s*[:=]?\s*{_NUMBER}(?:\s*(?:±|\+/-)\s*{_NUMBER})?"
         rf"(?:\s*(?:-->|->|→|=>|⇒)\s*{_NUMBER})?\s*(?:t/s|tok/s(?:ec)?|tokens?/s(?:ec)?"
         rf"|tokens?\s+per\s+second)(?:\s*\([^()]*\))?")
# ...or, named by a sized test, without its unit (`pp2048 2130.79, tg32 62.68`)
_SIZED = (rf"(?:pp|tg)\d+(?:\s?\+\s?tg\d+)?(?:\s*@?\s*d\d+)?\s*[:=]?\s*{_NUMBER}"
          rf"(?:\s*(?:±|\+/-)\s*{_NUMBER})?(?:\s*(?:-->|->|→|=>|⇒)\s*{_NUMBER})?"
          rf"(?:\s*\([^()]*\))?")
# ...or the rate first, then what it is of (`12.39 tok/sec TG`, `592 t/s for prompt processing`)
_RATE_FIRST = (rf"{_NUMBER}(?:\s*(?:±|\+/-)\s*{_NUMBER})?\s*(?:t/s|tok/s(?:ec)?|tokens?/s(?:ec)?"
               rf"|tokens?\s+per\s+second)\s*(?:(?:for|of)\s+)?{_KIND}(?:\s*\([^()]*\))?")
_ITEM = rf"(?:{_ITEM}|{_SIZED}|{_RATE_FIRST})"
# A line of the block: speeds and nothing else (prose around a speed is no such line).
LINE = re.compile(rf"^\s*{_ITEM}(?:\s*[,;|]\s*{_ITEM})*\s*$", re.I)
# ...after what they are of (`Qwen3-8B Q4_K_M: pp512 1200 t/s, tg128 45 t/s`).
LEAD = re.compile(rf"^\s*(?P<lead>[^:\n|]{{1,60}}?)\s*:\s+(?={_KIND}\s*[:=]?\s*{_NUMBER}|{_NUMBER})",
                  re.I)
LED_LINE = re.compile(rf"^\s*(?:[^:\n|]{{1,60}}?\s*:\s+)?{_ITEM}(?:\s*[,;|]\s*{_ITEM})*\s*$",
                      re.I)
PROMPT_EVALUATION = re.compile(r"^prompt\s+evaluation", re.I)
# The kinds only llama.cpp's people write: a block needs one of them.
LLAMA_KIND = re.compile(r"^(?:pp|tg|prompt\s+processing|prompt\s+eval|token\s+generation"
                        r"|text\s+generation)", re.I)


@v_args(inline=True)
class LinesToSpeeds(ColumnTransformer):
    """Tree → [(kind, [(mean, spread)...], line)], in order."""

    def start(self, *items):
        return [i for i in flatten(items) if isinstance(i, tuple)]

    def figure(self, *tokens):
        numbers = [t.replace(",", "") for t in tokens if t.type == "NUMBER"]
        return ("figure", *(numbers + [None])[:2])

    def column(self, name, children):      # speed
        kind = next(c for c in children if isinstance(c, Token) and c.type == "KIND")
        figures = [(c[1], c[2]) for c in children if isinstance(c, tuple)]
        return (" ".join(str(kind).split()), figures, kind.line)


def parse_lines(text: str) -> list[tuple]:
    parser = grammar.in_parser("llama_prose.lark", __file__, LinesToSpeeds)
    return grammar.parse(parser, text + "\n", "llama.cpp speeds in words")


def _test(kind: str, command: str | None) -> dict[str, Any]:
    named = test_of(kind)
    if named is not None and re.search(r"\d", kind):
        return named
    found = bare_kind(PROMPT_EVALUATION.sub("prompt eval", kind))
    return bare_test(found[0] if found else "pp" if kind.lower().startswith("pp") else "tg",
                     command)


def _lead(line: str) -> tuple[str | None, str | None]:
    """(what a line's speeds are of, or None; the speeds, or None when it is no line of them)."""
    if LINE.match(line):
        return None, line
    led = LEAD.match(line)
    if led is not None and LINE.match(line[led.end():]):
        return led.group("lead").strip(), line[led.end():]
    return None, None


def _own(line: str) -> str | None:
    return line if not line.strip() else _lead(line)[1]


def resumes(lines: list[str], line: str) -> bool:
    """The speeds go on after a line a user typed among them (`$ nvidia-smi`)."""
    return LED_LINE.match(line) is not None


def _figure(printed: str | None, what: str, at: int, unread: list[tuple[int, str]]
            ) -> float | None:
    """A printed figure as a number; a garbled one (`!55.10`) is None, said in ``unread``."""
    if printed is None:
        return None
    value = figure(printed)
    if value is None:
        unread.append((at, f"{what}: {printed!r} is not a number: left empty"))
    return value


def build(block: Block) -> list[Parsed | Problem]:
    kept, skipped = own_lines(block.lines, block.line_start, _own, "llama.cpp speed")
    speeds = parse_lines("\n".join(kept))
    if not any(LLAMA_KIND.match(kind) for kind, _, _ in speeds):
        return []
    shared = run_context(block.context)
    shared["format"] = FORMAT.name
    # (the latest prose line that names one model names theirs: `Qwen3.6 35B: https://...`
    # above each pair of speeds; Context.prose holds a note's `Label: value` lines first)
    for line in reversed(block.context.prose):
        named = models_named(line)
        if named:
            if len(named) == 1:
                shared["model_type"] = model = named.pop()
                if model.lower() not in str(shared.get("model_filename", "")).lower():
                    # (another model than the file the note's command loaded)
                    shared.pop("model_filename", None)
                    shared.pop("model_ftype", None)
            break
    out: list[Parsed | Problem] = list(skipped)
    for kind, figures, line in speeds:
        test = _test(kind, shared.get("command"))
        lead, _ = _lead(block.lines[line - 1])
        at = block.line_start + line - 1
        raw = block.lines[line - 1]
        sides = ["before", "after"] if len(figures) == 2 else [None]
        for side, (mean, spread) in zip(sides, figures):
            unread: list[tuple[int, str]] = []
            rate = {"avg_ts": _figure(mean, kind, at, unread),
                    "stddev_ts": _figure(spread, f"{kind} ±", at, unread)}
            values = {**shared, **merged({}, test, rate)}
            values.pop("_unread")
            if lead:            # (a model's name before its speeds, or a run's)
                values["label"] = lead
                if models_named(re.sub(r"\s+", "-", lead)) or QUANT_WORD.search(lead):
                    values.update(model_type=lead, **({"model_ftype": q.group("quant")}
                                                      if (q := QUANT_WORD.search(lead)) else {}))
            if side is not None:
                values["label"] = f"{shared['label']} {side}" if shared.get("label") else side
            add_result(out, values, at, raw, unread,
                       "llama.cpp speeds written in words, read as llama-bench results")
    return out


FORMAT = BlockFormat(
    name="llama_prose",
    table="llama_bench_results",
    description="llama.cpp speeds a note states in words (`Prompt processing: 11.9 t/s`, "
                "`pp512: 1234 t/s, tg128: 45.6 t/s`, `PP 1201 --> 1091 tok/s`): a result per "
                "rate.",
    upstream=("llama.cpp llama-bench, llama-cli and llama-server speeds, written down",),
    # (not `tokens/s`: every vLLM stats line holds it; a sized test, for speeds without unit)
    markers=("t/s", "tok/s", "tokens per second",
             *(f"{kind}{digit}" for kind in ("pp", "tg", "PP", "TG") for digit in "123456789")),
    start=LED_LINE,
    end=None,
    max_lines=40,
    build=build,
    continues=lambda line: LED_LINE.match(line) is not None,
    restarts=False,         # (each of its lines could start it: the next one goes on)
    resumes=resumes,
)
