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
from .llama_bench import BACKENDS, QUANT_WORD, run_context, test_name
from .llama_retyped import llama_note, add_result, bare_kind, bare_test, merged, test_of
from .runcontext import models_named

_KIND = (r"(?:(?:pp|tg)(?:\d+|\s\d+(?=\s*[:=]))(?:\s?\+\s?tg\d+)?(?:\s*@?\s*d\d+)?|pp|tg"
         r"|prompt\s+processing|prompt\s+eval(?:uation)?|prompt|token\s+generation"
         r"|text\s+generation|generation|gen|prefill|decode|eval)(?:\s+(?:speed|rate|throughput))?"
         r"(?:\s*\((?:pp|tg)\d+\))?")
# (a figure's digit may be garbled in the paste, `!55.10`: the line is still one of speeds)
_NUMBER = r"(?:[~≈]\s*)?[\d!?*^$&@][\d,!?*^$&@]*(?:\.[\d!?*^$&@]+)?"
_SPREAD = rf"(?:\s*(?:±|\+/-)\s*{_NUMBER})?"
_UNIT = r"(?:t/s|tok/s(?:ec)?|tokens?/s(?:ec)?|tokens?\s+per\s+second)"
_STAT = r"(?:\s+(?:median|mean|average|avg))?"
_REMARK = r"(?:\s*\([^()]*\))?"
_OVER = r"(?:\d[\d,]*\s+tokens?\s+at\s+)?"       # (`512 tokens at 845.2 t/s`)
_ITEM = (rf"{_KIND}\s*[:=]?\s*{_OVER}{_NUMBER}{_SPREAD}(?:\s*(?:-->|->|→|=>|⇒)\s*{_NUMBER})?"
         rf"\s*{_UNIT}{_STAT}{_REMARK}")
# ...or, named by a sized test, without its unit (`pp2048 2130.79, tg32 62.68`)
_SIZED = (rf"(?:pp|tg)\d+(?:\s?\+\s?tg\d+)?(?:\s*@?\s*d\d+)?\s*[:=]?\s*{_NUMBER}{_SPREAD}"
          rf"(?:\s*(?:-->|->|→|=>|⇒)\s*{_NUMBER})?{_REMARK}")
# ...or the rate first, then what it is of (`12.39 tok/sec TG`, `592 t/s for prompt processing`)
_RATE_FIRST = (rf"{_NUMBER}{_SPREAD}\s*{_UNIT}\s*(?:(?:for|of)\s+)?{_KIND}{_REMARK}")
# What a chat app prints after a reply's rate (`, 1514 tokens, 3.49s to first token, Stop
# reason: EOS Token Found`).
_AFTER = (r"(?:\s*[,;|•]\s*(?:\d+\s*tokens?|[\d.]+\s*s(?:ec(?:onds?)?)?\s+to\s+first\s+token"
          r"|stop\s+reason\s*:[^,;|•]*))*")
# ...or both kinds, then both rates (`PP/TG: 1234.5 / 56.7 t/s`)
_PAIR = (rf"(?:pp|prompt)\s*/\s*(?:tg|gen(?:eration)?)\s*[:=]?\s*{_NUMBER}{_SPREAD}\s*/\s*"
         rf"{_NUMBER}{_SPREAD}\s*{_UNIT}")
_ITEM = rf"(?:{_ITEM}|{_SIZED}|{_RATE_FIRST}|{_PAIR}){_AFTER}"
# A line of the block: speeds and nothing else (prose around a speed is no such line).
LINE = re.compile(rf"^\s*{_ITEM}(?:\s*[,;|•]\s*{_ITEM})*\s*$", re.I)
# ...after what they are of (`Qwen3-8B Q4_K_M: pp512 1200 t/s, tg128 45 t/s`).
LEAD = re.compile(rf"^\s*(?P<lead>[^:\n|]{{1,60}}?)\s*:\s+(?={_KIND}\s*[:=]?\s*{_NUMBER}|{_NUMBER})",
                  re.I)
LED_LINE = re.compile(rf"^\s*(?:[^:\n|]{{1,60}}?\s*:\s+)?{_ITEM}(?:\s*[,;|•]\s*{_ITEM})*\s*$",
                      re.I)
# A rate alone after what it is of (`Baseline: 14.8 tok/s median`, `ROCm : 16.91 tok/sec,
# 1514 tokens`): in a note about llama.cpp, its generation speed.  (Not after a serving
# figure's name: `Output token throughput: 1234 tok/s` is vLLM's.)
_SERVING_WORD = (r"(?:throughput|latency|ttft|tpot|itl|e2el?|output|input|total|request|peak"
                 r"|per\s+user|per\s+gpu|concurrency|qps)")
KINDLESS = rf"{_NUMBER}{_SPREAD}\s*{_UNIT}{_STAT}{_REMARK}{_AFTER}"
KINDLESS_LINE = re.compile(rf"^\s*(?P<lead>(?![^:\n|]*\b{_SERVING_WORD}\b)[^:\n|]{{1,60}}?)"
                           rf"\s*:\s+{KINDLESS}\s*$", re.I)
# A sentence that states speeds among its words (`I got 171 t/s for generation and 592 t/s for
# prompt processing`): each is read where it stands.
# (never a table's line: `| pp512 t/s |` is a header)
# (a change said in words, `PP went from 4012 t/s to 4530 t/s`, is the arrow's two runs)
_FROM_TO = (rf"(?<![\w.])({_KIND})(?!\d)\s+(?:\w+\s+){{0,2}}?from\s+({_NUMBER})(?:\s*{_UNIT})?"
            rf"\s+to\s+({_NUMBER})\s*({_UNIT})(?!\w)")
FROM_TO = re.compile(_FROM_TO, re.I)
_SAID_ITEM = (rf"{_FROM_TO}|(?<![\w.]){_RATE_FIRST}(?!\w)|(?<![\w.]){_PAIR}(?!\w)"
              rf"|(?<![\w.]){_KIND}(?!\d)\s*[:=]?\s*{_NUMBER}{_SPREAD}\s*{_UNIT}{_STAT}{_REMARK}(?!\w)")
_SAID = re.compile(_SAID_ITEM, re.I)
IN_SENTENCE = re.compile(rf"^(?=[^|\n]*$).*?(?:{_SAID_ITEM})", re.I)
PROMPT_EVALUATION = re.compile(r"^prompt\s+evaluation", re.I)
# The kinds only llama.cpp's people write: a block needs one of them...
LLAMA_KIND = re.compile(r"^(?:pp|tg|prompt\s+processing|prompt\s+eval|token\s+generation"
                        r"|text\s+generation)", re.I)
# ...or, in a note that names llama.cpp and no other engine, one of the words its programs
# print too (`Generation: 72.4 t/s`, `Gen`, `eval`, `prompt`) or a rate alone after its run's name;
# not a serving engine's `prefill` / `decode` (a note's summary over llama-bench's table,
# `prefill 1490 t/s, decode 38.6 t/s`, would be its runs again, unsized).
LLAMA_NOTE_KIND = re.compile(r"^(?:generation|gen|prompt|eval|)(?:\s+(?:speed|rate|throughput))?$",
                             re.I)


@v_args(inline=True)
class LinesToSpeeds(ColumnTransformer):
    """Tree → [(kind, [(mean, spread)...], line, more)], in order; ``more`` holds what the line
    says after the rate (`tokens`, `samples`, `time_to_first_token`, `stop_reason`)."""

    def start(self, *items):
        speeds: list[tuple] = []
        for item in flatten(items):
            if isinstance(item, list):      # (a pair of kinds: two speeds)
                speeds.extend(item)
                continue
            if not isinstance(item, tuple):
                continue
            if item[0] == "more":       # (what a chat app prints after the rate before it)
                if speeds:
                    speeds[-1][3].update(item[1])
            else:
                speeds.append(item)
        return speeds

    def figure(self, *tokens):
        numbers = [t.replace(",", "") for t in tokens if t.type == "NUMBER"]
        return ("figure", *(numbers + [None])[:2])

    def count(self, number, _word):
        return ("more", {"tokens": number.replace(",", "")})

    def over(self, number, _word):
        return ("over", number.replace(",", ""))

    def first_token(self, number, _words):
        return ("more", {"time_to_first_token": number})

    def stop(self, text):
        return ("more", {"stop_reason": text.split(":", 1)[1].strip()})

    def pair(self, kinds, first, second, _unit):
        line = kinds.line
        return [("pp", [first[1:]], line, {}), ("tg", [second[1:]], line, {})]

    def column(self, name, children):      # speed
        tokens = [c for c in children if isinstance(c, Token)]
        kind = next((t for t in tokens if t.type == "KIND"), None)
        test = next((t for t in tokens if t.type == "TEST"), None)
        figures = [(c[1], c[2]) for c in children if isinstance(c, tuple) and c[0] == "figure"]
        more: dict[str, Any] = {"tokens": c[1] for c in children
                                if isinstance(c, tuple) and c[0] == "over"}
        for remark in (t for t in tokens if t.type == "REMARK"):
            more.update(_remarked(str(remark)))
        named = str(test).strip("()") if test is not None else \
            " ".join(str(kind).split()) if kind is not None else ""
        line = (kind or next(t for t in tokens if t.type == "UNIT")).line
        return (named, figures, line, more)


# A remark after a rate: the tokens it was over (`(18020 tokens)`) or every run's rate
# (`([15.3, 14.8, 14.0])`).
_REMARK_TOKENS = re.compile(r"^\(\s*~?(\d[\d,]*)\s+tokens?\s*\)$", re.I)
_REMARK_SAMPLES = re.compile(r"^\(\s*`?\[([\d.,\s!?*^$&@]+)\]`?\s*\)$")


def _remarked(remark: str) -> dict[str, Any]:
    if (tokens := _REMARK_TOKENS.match(remark)) is not None:
        return {"tokens": tokens.group(1).replace(",", "")}
    if (samples := _REMARK_SAMPLES.match(remark)) is not None:
        return {"samples": [x for x in re.split(r"[,\s]+", samples.group(1)) if x]}
    return {}


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
    line = line.replace("`", "")        # (a figure quoted as code: `96.64`)
    if LINE.match(line):
        return None, line
    led = LEAD.match(line)
    if led is not None and LINE.match(line[led.end():]):
        return led.group("lead").strip(), line[led.end():]
    kindless = KINDLESS_LINE.match(line)
    if kindless is not None:
        return kindless.group("lead").strip(), line[kindless.end("lead"):].lstrip(" \t:")
    said = [FROM_TO.sub(r"\1 \2 -> \3 \4", m.group(0))
            for m in _SAID.finditer(line)] if IN_SENTENCE.match(line) else []
    if said:
        return None, ", ".join(said)
    return None, None


def _own(line: str) -> str | None:
    return line if not line.strip() else _lead(line)[1]


def _speeds_line(line: str) -> bool:
    """A line of speeds, or one that states some among its words."""
    return LED_LINE.match(line) is not None or KINDLESS_LINE.match(line) is not None \
        or IN_SENTENCE.match(line) is not None


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
    # (a note's generic words, `Generation`, `Prefill`: llama.cpp's when the block says so; a
    # rate alone after its run's name, when the note names llama.cpp and no other engine)
    if not any(LLAMA_KIND.match(kind) for kind, _, _, _ in speeds) \
            and not (any(LLAMA_NOTE_KIND.match(kind) for kind, _, _, _ in speeds)
                     and llama_note(block.context)):
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
    for kind, figures, line, more in speeds:
        test = _test(kind or "tg", shared.get("command"))
        lead, _ = _lead(block.lines[line - 1])
        at = block.line_start + line - 1
        raw = block.lines[line - 1]
        sides = ["before", "after"] if len(figures) == 2 else [None]
        for side, (mean, spread) in zip(sides, figures):
            unread: list[tuple[int, str]] = []
            rate = {"avg_ts": _figure(mean, kind, at, unread),
                    "stddev_ts": _figure(spread, f"{kind} ±", at, unread)}
            if more.get("samples"):
                samples = [figure(x) for x in more["samples"]]
                if None in samples:     # (a garbled one, `4!.9`: the list is not every run's)
                    unread.append((at, f"{kind}: a run's rate in {more['samples']} is not a "
                                       "number: the runs' rates left empty"))
                else:
                    rate["samples_ts"] = samples
            values = {**shared, **merged({}, test, rate)}
            values.pop("_unread")
            _counted(values, more)
            if lead:            # (a model's name before its speeds, or a run's)
                values["label"] = lead
                words = lead.split()
                backend = BACKENDS.get(words[0].lower()) if words else None
                if backend is not None and len(words) <= 2:     # (`ROCm : 16.91 tok/sec`)
                    values["backends"] = backend
                elif models_named(re.sub(r"\s+", "-", lead)) or QUANT_WORD.search(lead):
                    values.update(model_type=lead, **({"model_ftype": q.group("quant")}
                                                      if (q := QUANT_WORD.search(lead)) else {}))
            if side is not None:
                values["label"] = f"{shared['label']} {side}" if shared.get("label") else side
            add_result(out, values, at, raw, unread,
                       "llama.cpp speeds written in words, read as llama-bench results")
    return out


def _counted(values: dict[str, Any], more: dict[str, Any]) -> None:
    """The tokens a rate was over size its test when the note left it unsized (`PP: 100.03 T/s
    (18020 tokens)` is pp18020); a chat app's time to first token and stop reason are kept by
    its own names."""
    tokens = more.get("tokens")
    if tokens is not None:
        key = "n_prompt" if values["test"].startswith("pp") else "n_gen"
        if values["test"] in ("pp", "tg"):
            values[key] = int(tokens)
            values["test"] = test_name(values["n_prompt"] or 0, values["n_gen"] or 0,
                                       values.get("n_depth") or 0)
    extra = {k: (figure(v) if k == "time_to_first_token" else v) for k, v in more.items()
             if k in ("time_to_first_token", "stop_reason")}
    if extra:
        values["extra"] = {**(values.get("extra") or {}), **extra}


FORMAT = BlockFormat(
    name="llama_prose",
    table="llama_bench_results",
    description="llama.cpp speeds a note states in words (`Prompt processing: 11.9 t/s`, "
                "`pp512: 1234 t/s, tg128: 45.6 t/s`, `PP 1201 --> 1091 tok/s`): a result per "
                "rate.",
    upstream=("llama.cpp llama-bench, llama-cli and llama-server speeds, written down",),
    # (not `tokens/s`: every vLLM stats line holds it; a sized test, for speeds without unit)
    markers=("t/s", "T/s", "tok/s", "Tok/s", "TOK/S", "tokens/sec", "Tokens/sec",
             "tokens per second", "eval rate",
             *(f"{kind}{digit}" for kind in ("pp", "tg", "PP", "TG") for digit in "123456789")),
    start=re.compile(rf"{LED_LINE.pattern}|{KINDLESS_LINE.pattern}|{IN_SENTENCE.pattern}", re.I),
    end=None,
    max_lines=40,
    build=build,
    continues=_speeds_line,
    restarts=False,         # (each of its lines could start it: the next one goes on)
    resumes=resumes,
)
