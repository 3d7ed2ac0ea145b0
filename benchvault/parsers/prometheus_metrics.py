"""Pasted ``/metrics`` output (Prometheus text format) → ``metrics_scrapes`` + ``metrics_samples``.

vLLM exposes ``vllm:prompt_tokens_total`` and ``vllm:generation_tokens_total`` (counters),
``vllm:num_requests_running`` / ``_waiting``, ``vllm:gpu_cache_usage_perc`` (V0; newer
``vllm:kv_cache_usage_perc``), histograms such as ``vllm:time_to_first_token_seconds``
(``_bucket{le=...}``, ``_sum``, ``_count``); SGLang the same shape under ``sglang:``.  People
save ``curl localhost:8000/metrics`` output, once or in a polling loop.  A scrape is a
contiguous run of ``# HELP`` / ``# TYPE`` / sample lines; a family's ``# HELP`` coming again, or
a series repeating, starts the next scrape even without a blank line between.  Example::

    # HELP vllm:prompt_tokens_total Number of prefill tokens processed.
    # TYPE vllm:prompt_tokens_total counter
    vllm:prompt_tokens_total{model_name="bigscience/bloom-560m"} 1196.0

gives sample (vllm:prompt_tokens_total, family vllm:prompt_tokens_total, counter,
{"model_name": "bigscience/bloom-560m"}, 1196.0).  Consecutive scrapes give rates in the
``metrics_rates`` view.
"""

from __future__ import annotations

import re
from functools import lru_cache

from lark import Lark, Transformer, v_args
from lark.exceptions import LarkError, UnexpectedInput

from ..schemas.metrics import MetricsSample, MetricsScrape
from .base import Block, BlockFormat, Parsed, Problem

SUFFIXES = ("_bucket", "_sum", "_count", "_created", "_total", "_info")
# A sample's value starts with a digit (or a digit garbled in the paste into a stray symbol:
# that sample is a warning, the line still the scrape's own).
LINE_RE = re.compile(
    r"^\s*(?:#\s+(?:HELP|TYPE|EOF)\b|[a-zA-Z_:][a-zA-Z0-9_:.]*(?:\{[^}]*\})?\s+"
    r"(?:[-+]?(?:[\d!?*~^$&@]|\.\d)|[-+]?[Ii]nf|NaN|nan))")
VALUE_RE = re.compile(r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|[Ii]nf|NaN|nan)")
STAMP_RE = re.compile(r"-?\d+(?:\.\d+)?")
ESCAPES = {"\\\\": "\\", '\\"': '"', "\\n": "\n"}


def _unescape(value: str) -> str:
    return re.sub(r'\\[\\"n]', lambda m: ESCAPES[m.group(0)], value[1:-1])


@v_args(inline=True)
class LinesToItems(Transformer):
    def start(self, *items):
        return [i for i in items if i is not None]

    def help(self, tok, name, _doc=None):
        return ("help", str(name), None, tok.line)

    def type(self, tok, name, kind):
        return ("type", str(name), str(kind), tok.line)

    def eof(self, _tok):
        return None

    def comment(self, _tok):
        return None

    def label(self, name, value):
        return str(name), _unescape(str(value))

    def labels(self, *pairs):
        return dict(p for p in pairs if p is not None)

    def sample(self, name, *rest):
        labels = next((r for r in rest if isinstance(r, dict)), {})
        tokens = [r for r in rest if not isinstance(r, dict)]
        text = str(tokens[0])
        stamp_text = str(tokens[1]) if len(tokens) > 1 else None
        if not VALUE_RE.fullmatch(text):
            return ("unreadable", str(name), (labels, text), name.line)
        value = float(text.replace("Inf", "inf").replace("NaN", "nan"))
        if stamp_text is not None and not STAMP_RE.fullmatch(stamp_text):
            return ("unreadable", str(name), (labels, stamp_text), name.line)
        stamp = int(float(stamp_text)) if stamp_text is not None else None
        return ("sample", str(name), (labels, value, stamp), name.line)


@lru_cache(maxsize=None)
def _parser() -> Lark:
    return Lark.open("prometheus_metrics.lark", rel_to=__file__, parser="lalr",
                     transformer=LinesToItems(), cache=True)


def _family(name: str, types: dict[str, str]) -> str:
    if name in types:
        return name
    for suffix in SUFFIXES:
        if name.endswith(suffix) and name[: -len(suffix)] in types:
            return name[: -len(suffix)]
    return name


def build(block: Block) -> list[Parsed | Problem]:
    # Lines of the paste that are not /metrics lines (a line typed into it, a prompt: the block
    # went on after them, see resumes) are skipped, each a warning; the scrape is one still.
    out: list[Parsed | Problem] = []
    lines = block.text.split("\n")
    for i, line in enumerate(lines):
        if line.strip() and not line.lstrip().startswith("#") and not continues(line):
            out.append(Problem(block.line_start + i, "not a /metrics line, skipped", line))
            lines[i] = ""
    try:
        items = _parser().parse("\n".join(lines) + "\n")
    except UnexpectedInput as exc:
        line = block.line_start + (getattr(exc, "line", 1) or 1) - 1
        return out + [Problem(line, "unexpected line in /metrics output", block.text[:4000])]
    except LarkError as exc:
        return out + [Problem(block.line_start, f"cannot read /metrics output: {exc}")]
    scrapes: list[list[tuple]] = [[]]
    described: set[tuple[str, str]] = set()
    series: set[tuple[str, tuple]] = set()
    for item in items:
        kind, name, payload, _line = item
        sampled = kind in ("sample", "unreadable")
        key = (kind, name) if not sampled else None
        series_key = (name, tuple(sorted(payload[0].items()))) if sampled else None
        if (key in described) or (series_key in series):
            scrapes.append([])            # the same family or series again: a new scrape
            described, series = set(), set()
        if key:
            described.add(key)
        else:
            series.add(series_key)
        scrapes[-1].append(item)
    context = block.context
    for scrape in scrapes:
        types = {name: kind for k, name, kind, _ in scrape if k == "type"}
        samples = []
        printed = 0         # samples the scrape printed, the unreadable ones too
        for kind, name, payload, line in scrape:
            if kind == "unreadable":
                printed += 1
                out.append(Problem(block.line_start + line - 1,
                                   f"{name}: cannot read {payload[1]!r}, sample skipped"))
                continue
            if kind != "sample":
                continue
            printed += 1
            labels, value, stamp = payload
            family = _family(name, types)
            samples.append(MetricsSample(
                metric=name, family=family, type=types.get(family, "untyped"),
                labels=labels or None, le=labels.get("le"), value=value, timestamp_ms=stamp))
        if not samples:
            continue
        lines = [line for *_, line in scrape]
        stamps = [s.timestamp_ms for s in samples if s.timestamp_ms is not None]
        out.append(Parsed(row=MetricsScrape(
            line_start=block.line_start + min(lines) - 1,
            line_end=block.line_start + max(lines) - 1,
            section=context.section_text, label=context.label_or_heading,
            tags=context.tags or None, timestamp_ms=max(stamps) if stamps else None,
            samples=printed, families=len(types)), children=samples))
    return out


def continues(line: str) -> bool:
    return LINE_RE.match(line) is not None


def resumes(lines: list[str], line: str) -> bool:
    """After a line that is not the paste's (typed into it, a prompt), the scrape goes on at a
    sample, `# HELP` or `# TYPE` line."""
    return continues(line)


FORMAT = BlockFormat(
    name="prometheus_metrics",
    table="metrics_samples",
    description="Prometheus /metrics snapshots (vLLM, SGLang): samples per scrape, rates "
                "between consecutive scrapes.",
    upstream=("vllm /metrics (prometheus_client), sglang /metrics",),
    markers=("HELP", "TYPE", "vllm:", "sglang:"),
    start=re.compile(r"^\s*(?:#\s+(?:HELP|TYPE)\s+[a-zA-Z_:]|(?:vllm|sglang):[a-zA-Z_]\w*[{\s])"),
    end=None,
    max_lines=200_000,
    build=build,
    continues=continues,
    resumes=resumes,
    restarts=False,
    consumes=False,
)
