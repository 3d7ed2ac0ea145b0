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
LINE_RE = re.compile(
    r"^\s*(?:#\s+(?:HELP|TYPE|EOF)\b|[a-zA-Z_:][a-zA-Z0-9_:.]*(?:\{[^}]*\})?\s+"
    r"(?:[-+]?(?:\d|\.\d)|[-+]?[Ii]nf|NaN|nan))")
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
        value = float(str(tokens[0]).replace("Inf", "inf").replace("NaN", "nan"))
        stamp = int(float(str(tokens[1]))) if len(tokens) > 1 else None
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
    try:
        items = _parser().parse(block.text + "\n")
    except UnexpectedInput as exc:
        line = block.line_start + (getattr(exc, "line", 1) or 1) - 1
        return [Problem(line, "unexpected line in /metrics output", block.text[:4000])]
    except LarkError as exc:
        return [Problem(block.line_start, f"cannot read /metrics output: {exc}")]
    scrapes: list[list[tuple]] = [[]]
    described: set[tuple[str, str]] = set()
    series: set[tuple[str, tuple]] = set()
    for item in items:
        kind, name, payload, _line = item
        key = (kind, name) if kind != "sample" else None
        series_key = (name, tuple(sorted(payload[0].items()))) if kind == "sample" else None
        if (key in described) or (series_key in series):
            scrapes.append([])            # the same family or series again: a new scrape
            described, series = set(), set()
        if key:
            described.add(key)
        else:
            series.add(series_key)
        scrapes[-1].append(item)
    out: list[Parsed | Problem] = []
    context = block.context
    for scrape in scrapes:
        types = {name: kind for k, name, kind, _ in scrape if k == "type"}
        samples = []
        for kind, name, payload, _line in scrape:
            if kind != "sample":
                continue
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
            samples=len(samples), families=len(types)), children=samples))
    return out


def continues(line: str) -> bool:
    return LINE_RE.match(line) is not None


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
    restarts=False,
    consumes=False,
)
