"""A vLLM / SGLang serving result retyped by hand as a table → one ``serving_runs`` row per run.

People paste ``vllm bench serve`` / ``sglang.bench_serving`` results into issues and notes as
markdown tables they make themselves, in one of two orientations::

    | Metric                     | main  | this PR |      | Concurrency | Req/s | TTFT p99 (ms) |
    |----------------------------|-------|---------|      |-------------|-------|---------------|
    | Request throughput (req/s) | 11.72 | 12.90   |      | 1           | 0.52  | 60.2          |
    | Mean TTFT (ms)             | 120.4 | 101.2   |      | 32          | 11.2  | 300.1         |

Metrics as row labels (left): every other column with numbers is one run, its header the run's
label (``Value`` names none); a column of differences (``Delta``, ``Improvement``) is no run.
Metrics as column headers (right): every body row is one run, a first text column its label.
A header of statistics (``| Metric | Mean | P99 |``) over metric rows is one run.

Each label is read by its words: a printed label of the result block itself (the vLLM serving
vocabulary, ``vllm_serving.vocab.toml``: ``Successful requests``, ``Benchmark duration (s)``),
else the metric (TTFT, TPOT, ITL, E2EL), its statistic (mean/avg, median/p50/mdn, pNN, std,
min, max) and unit (ms, s), a throughput (requests or input/output/total tokens per second) or a
setting (concurrency, request rate, prompts).  A number no word names goes to ``extra`` by its
snake name.  A table is read this way when at least two of its labels name a latency or a
throughput and numbers stand under them; a GuideLLM-shaped one stays ``guidellm_retyped``'s
(formats are asked in name order), any other a published table.  Every run says, in a warning,
that it was matched by its header words.  A table in a file that also holds printed serving
results is their summary: the printed blocks are the runs, the table stays a published table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import os

from ..reading.tablecells import (ARROW_NAMES, CELL_REMARK, DIFFERENCE, SLASH, Table, arrow_cell,
                                  arrow_names, arrow_side, cell_number, cell_text, cells,
                                  table)
from ..schemas.models import LatencyStat, ServingRun, fields_of
from . import published_markdown
from .base import Block, Parsed, Problem, claimed_table, half_unit, label_and_heading
from .grammar import snake_name
from .runcontext import engine_named_in, infer_engine, serving_context, workload_in_prose
from .vocabulary import load

PAREN = re.compile(r"\(([^()]*)\)")

METRICS = (
    (re.compile(r"\bttft\b|time to first token|first.?token"), "ttft"),
    (re.compile(r"\btpot\b|time\s*(?:per|/)\s*(?:output\s*)?token|per[\s-]*(?:output[\s-]*)?token[\s-]*lat"
                r"|^(?:decode\s+)?token[\s-]*lat(?:ency)?\b|lat(?:ency)?\s+per\s+(?:output\s+)?token"),
     "tpot"),
    (re.compile(r"\bitl\b|inter.?token"), "itl"),
    (re.compile(r"\be2el?\b|\be2e\b|end.?to.?end|\b(?:req(?:uest)?\s*)?lat(?:ency)?\b"), "e2el"),
)
STAT = re.compile(r"(?<![a-z0-9])(?:(?P<mean>mean|avg|average)|(?P<median>median|mdn|p50)"
                  r"|p(?P<pct>\d+(?:\.\d+)?)|(?P<std>std|stdev|stddev)|(?P<min>min)"
                  r"|(?P<max>max))(?![a-z])")
STAT_ONLY = re.compile(r"^(?:mean|avg|average|median|mdn|std|stdev|stddev|min|max"
                       r"|p\d+(?:\.\d+)?)$")
PER_SECOND = re.compile(r"(?:/|\bper\s+)s(?:ec(?:ond)?)?\b|\b(?:rps|qps|tps|tput)\b|throughput"
                        r"|goodput")
# A figure per GPU (`tok/s/GPU`, `Total Tput / GPU`): no column of a run's whole throughput.
PER_DEVICE = re.compile(r"(?:/|\bper\s*)\s*(?:gpu|card|device|chip|node|rank)s?\b")
# A throughput of tokens that does not say which (`Tok/s`, `tok/s`): vLLM's headline figure,
# the output tokens', unless the table names its output throughput elsewhere.
BARE_TOKENS = re.compile(r"^(?:tok(?:en)?s?\s*/\s*s(?:ec)?|tps|(?:token\s*)?throughput"
                         r"\s*\(\s*tok(?:en)?s?\s*/\s*s(?:ec)?\s*\))$")
# Settings and counts a hand-made table names in its own words (before the vocabulary's
# `Concurrency:`, which is SGLang's measured concurrency, not the setting a table's column is).
SETTINGS = (
    # (LLMPerf's and trtllm-bench's sweeps name the concurrency a client batch: `Batch Size`)
    (re.compile(r"^(?:max(?:imum)?\s*)?(?:request\s*)?conc(?:urr?(?:ency)?)?\b|^c$|^bs$|^mc$"
                r"|^batch(?:\s*size)?$"),
     "max_concurrency"),
    (re.compile(r"^(?:traffic\s*)?request\s*rate\b|^rate\b|^qps$"), "request_rate"),
    (re.compile(r"^(?:num(?:ber of)?[\s_]*)?prompts\b|^n$|^n\s*req(?:uests)?$|^total\s*requests$"
                r"|^(?:(?:measured|num(?:ber of)?)\s*)?req(?:uest)?s$"),
     "num_prompts"),
    # the concurrency a run reached (SGLang's printed `Concurrency:`), not the one it was given
    (re.compile(r"^(?:achieved|actual|measured|avg|average|mean)\s*concurrency\b"), "concurrency"),
    # the random dataset's lengths, as sweeps name them
    # (a column of `Input` / `Output` beside a run's figures: each request's; `Input tokens`
    # may be the run's total as well)
    (re.compile(r"^(?:isl|(?:random\s*)?(?:input|prompt)\s*len(?:gth)?|input(?:\s*size)?)"
                r"(?:\s*\((?:tokens?|tok)\))?$"),
     "random_input_len"),
    (re.compile(r"^(?:osl|(?:random\s*)?(?:output|gen(?:eration)?)\s*len(?:gth)?"
                r"|output(?:\s*size)?)(?:\s*\((?:tokens?|tok)\))?$"),
     "random_output_len"),
    (re.compile(r"^(?:successful|completed|success|succeeded)(?:\s*requests)?\b(?!\s*(?:rate|%|\())"),
     "completed"),
    (re.compile(r"^failed(?:\s*requests)?\b"), "failed"),
    (re.compile(r"^(?:benchmark\s*)?duration\b|^(?:(?:total|wall(?:\s*clock)?)\s*time"
                r"|elapsed(?:\s*time)?)\b(?!\s*(?:per|/)\s*req)"), "duration"),
    # speculative decoding's figures, as SGLang (`Accept length`) and vLLM print them
    (re.compile(r"^(?:mean\s+|avg\s+|average\s+)?(?:accept(?:ed)?(?:\s*len(?:gth)?)?|al)$"),
     "accept_length"),
    (re.compile(r"^(?:mean\s+|avg\s+|average\s+)?acceptance\s*len(?:gth)?$"),
     "spec_decode_acceptance_length"),
    (re.compile(r"^(?:mean\s+|avg\s+|average\s+)?(?:draft\s+)?acceptance\s*rate\b"),
     "spec_decode_acceptance_rate"),
    (re.compile(r"^total\s*(?:input|prompt)\s*tokens\b"), "total_input_tokens"),
    (re.compile(r"^total\s*(?:generated|output)\s*tokens\s*\(retokenized\)"),
     "total_output_tokens_retokenized"),
    (re.compile(r"^total\s*(?:generated|output)\s*tokens\b"), "total_output_tokens"),
)
# Columns whose cells are words, not figures: a run's model, its dataset.
TEXT_VALUES = {"model", "dataset_name"}
TEXT_COLUMNS = {"model": "model", "model/quant": "model", "model name": "model",
                "dataset": "dataset_name", "dataset name": "dataset_name"}
# A setting's cell may name itself: `c=16`, `bs = 8`.
NAMED_CELL = re.compile(r"^[A-Za-z_]+\s*[=:]\s*(?=[\d.])")
# A cell that says "no value" on purpose.
NO_VALUE = re.compile(r"[-–—?.…/\s]*|n/?a|none|null|not set|oom|timeout|failed|err(?:or)?|tbd",
                      re.I)
NO_LABEL = re.compile(r"^(?:value|values|result|results|数值|值|结果|結果|値|)$", re.I)
TO_MS = {"ms": 1.0, "s": 1000.0, "sec": 1000.0, "secs": 1000.0, "seconds": 1000.0,
         "us": 0.001, "µs": 0.001, "μs": 0.001}


@lru_cache(maxsize=None)
def _vocabulary() -> dict[str, str]:
    """The serving result block's own labels, lower case without the colon, → column; each
    also without its `(unit)` when that names no other column."""
    out: dict[str, str] = {}
    columns = fields_of(ServingRun)
    for label in load():
        if label.format != "vllm_serving" or label.column not in columns \
                or label.kind == "str":
            continue
        text = label.label.rstrip(":").strip().lower()
        out.setdefault(text, label.column)
        out.setdefault(" ".join(PAREN.sub(" ", text).split()), label.column)
    return out


@dataclass(frozen=True)
class Meaning:
    """What a label names: a ``serving_runs`` column (None: ``extra`` under ``name``), the
    factor from the label's unit to the column's, and for a latency its metric and stat."""

    column: str | None
    name: str
    factor: float = 1.0
    metric: str | None = None
    stat: str | None = None
    percentile: float | None = None
    bare: bool = False       # BARE_TOKENS: the output throughput, unless a column says so

    @property
    def measured(self) -> bool:
        """A latency or a throughput (what makes a table a serving result)."""
        return self.metric is not None or self.column in (
            "request_throughput", "request_goodput", "input_throughput", "output_throughput",
            "total_token_throughput", "max_output_tokens_per_s")


def _unit(words: str) -> str | None:
    for inside in PAREN.findall(words):
        if inside.strip() in TO_MS:
            return inside.strip()
    # (not the `s` of a name: `k8s`, `h100s`)
    match = re.search(r"(?<![a-z0-9/])(ms|s|sec|secs|seconds|us|µs)\b(?!\s*/)", PAREN.sub(" ", words))
    return match.group(1) if match else None


def _latency(words: str) -> Meaning | None:
    metric = next((name for pattern, name in METRICS if pattern.search(words)), None)
    if metric is None or PER_SECOND.search(words) or NORMALIZED.search(words) \
            or PERCENT.search(words):
        return None
    match = STAT.search(words)
    pct = None
    if match is None or match.group("mean"):
        stat = "mean"                    # a bare `TTFT` is the figure the tools print first
    elif match.group("median"):
        stat = "median"
    elif match.group("pct"):
        pct = float(match.group("pct"))
        stat = "p" + (str(int(pct)) if pct == int(pct) else str(pct))
    else:
        stat = next(k for k in ("std", "min", "max") if match.group(k))
    column = f"{stat}_{metric}_ms"
    factor = TO_MS.get(_unit(words) or "ms", 1.0)
    return Meaning(column if column in fields_of(ServingRun) else None, column, factor,
                   metric, stat, pct)


# The old client's `Normalized latency (s/token)`: a request's latency over its output length,
# no statistic of any one metric.
NORMALIZED = re.compile(r"\bnormali[sz]ed\b")
# A share, not a time (`tpot_uplift_pct`, `TTFT change (%)`)
PERCENT = re.compile(r"%|\bpct\b|\bpercent(?:age)?\b")
# A rate per minute (`Throughput (req/min)`)
PER_MINUTE = re.compile(r"(?:/|\bper\s+)min(?:ute)?\b")


# `Peak output`: the peak output throughput, its unit left to the cells (`1344 tok/s`).
PEAK_OUTPUT = re.compile(r"^peak\s+(?:output|gen(?:eration)?)(?:\s+tokens?)?$")


def _throughput(words: str) -> str | None:
    if not PER_SECOND.search(words) and not PEAK_OUTPUT.search(words):
        return None
    if "goodput" in words:
        return "request_goodput"
    if re.search(r"\breq(?:uest)?s?\b|\brps\b|\bqps\b", words):
        return "request_throughput"
    if re.search(r"\bpeak\b", words):
        return "max_output_tokens_per_s"
    if re.search(r"\b(?:input|prompt|prefill)\b", words):
        return "input_throughput"
    if re.search(r"\btotal\b", words):
        return "total_token_throughput"
    if re.search(r"\b(?:output|out|gen|generated|generation|decode)\b", words):
        return "output_throughput"
    return None                          # a bare `tok/s`: BARE_TOKENS


# Chinese and Japanese headers, in the words the patterns above know (`首字延迟` TTFT, `平均`
# mean, `并发` concurrency, `吞吐量` throughput, `毫秒` ms).
CJK_WORDS = tuple((re.compile(pattern), words) for pattern, words in (
    (r"首(?:字|词|包|个?\s*token|\s*トークン)\s*(?:延迟|时延|延時|時間|レイテンシ)?", "ttft"),
    (r"(?:每|单)(?:个)?(?:输出)?\s*token\s*(?:延迟|时延|时间|耗时)|トークンあたり(?:の)?(?:時間|レイテンシ)?",
     "tpot"),
    (r"token\s*间(?:隔)?(?:延迟|时延)?|トークン間(?:レイテンシ)?", "itl"),
    (r"端到端(?:延迟|时延)?|请求(?:延迟|时延)|总(?:延迟|时延)|エンドツーエンド(?:レイテンシ)?", "e2el"),
    (r"平均(?:値)?|均值", "mean"), (r"中位数?|中央値", "median"), (r"最大", "max"), (r"最小", "min"),
    (r"输出\s*(?:token\s*)?吞吐(?:量|率)?|出力スループット", "output throughput"),
    (r"输入\s*(?:token\s*)?吞吐(?:量|率)?|入力スループット", "input throughput"),
    (r"总\s*(?:token\s*)?吞吐(?:量|率)?|合計スループット", "total throughput"),
    (r"请求吞吐(?:量|率)?", "request throughput"),
    (r"吞吐(?:量|率)?|スループット", "throughput"),
    (r"(?:最大)?并发(?:数|度|量)?|同時実行数|並列数|同時リクエスト数", "concurrency"),
    (r"成功(?:请求)?数", "successful requests"), (r"失败(?:请求)?数", "failed requests"),
    (r"(?:总)?请求数(?:量)?|リクエスト数|プロンプト数", "prompts"),
    (r"输入(?:长度|token数)|入力(?:長|トークン数)", "input len"),
    (r"输出(?:长度|token数)|出力(?:長|トークン数)", "output len"),
    (r"毫秒", "ms"), (r"秒", "s"), (r"^\s*(?:模型(?:名称)?|モデル(?:名)?)\s*$", "model"),
))
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")


def _in_english(words: str) -> str:
    """A header's words with its Chinese or Japanese terms in English, each apart."""
    if not CJK.search(words):
        return words
    for pattern, english in CJK_WORDS:
        words = pattern.sub(f" {english} ", words)
    # (a term written against the words around it, `请求耗时Latency`, `速度TPOT`, stands apart)
    return CJK_LATIN.sub(" ", words)


CJK_LATIN = re.compile(r"(?<=[\u3040-\u30ff\u3400-\u9fff])(?=[A-Za-z])"
                       r"|(?<=[A-Za-z])(?=[\u3040-\u30ff\u3400-\u9fff])")


SQUARE_UNIT = re.compile(r"\[([^\[\]]{1,12})\]")
LEADING_MARKS = re.compile(r"^[^\w(]+")
_WHICH_WAY = r"(?:higher|lower|less|more|smaller|bigger)\s*(?:=|is|are)?\s*(?:better|faster|good)"
BETTER = re.compile(rf"\s*\({_WHICH_WAY}\)|\s*[,;]?\s*{_WHICH_WAY}(?=\)|$)|\s*[↑↓⬆⬇]")


DASHED = re.compile(r"(?<=[a-z])-(?=[a-z])")


@lru_cache(maxsize=4096)
def meaning(label: str) -> Meaning | None:
    """What a row or column label names; None for no number (an empty label)."""
    text = cell_text(label)
    # (`max-concurrency`, `--num-prompts`: a flag's name, its words joined by dashes)
    words = " ".join(_in_english(DASHED.sub(" ", text.lower().replace("_", " ")).lstrip("-"))
                     .split())
    words = SQUARE_UNIT.sub(r"(\1)", words)      # (`Throughput [tok/s]`: a unit in brackets)
    words = BETTER.sub("", words)       # (`TPOT (ms, lower = faster)`: which way is better)
    words = LEADING_MARKS.sub("", words)    # (`📈 Throughput`: a heading's emoji)
    if not words:
        return None
    for pattern, column in SETTINGS:
        if pattern.search(words):
            factor = 1.0
            if column == "duration" and _unit(words) in ("ms",):
                factor = 0.001
            return Meaning(column, column, factor)
    known = _vocabulary().get(words.rstrip(":").strip())
    if known is not None and not known.endswith("_ms"):
        return Meaning(known, known)
    found = _latency(words)
    if found is not None:
        return found
    if PER_DEVICE.search(words):
        return Meaning(None, snake_name(text))
    column = _throughput(words)
    if column is not None:
        return Meaning(column, column, 1 / 60 if PER_MINUTE.search(words) else 1.0)
    # (`Tokens/s (streaming)`: a remark in brackets, no unit, after it)
    if BARE_TOKENS.match(words) or BARE_TOKENS.match(REMARK.sub("", words)):
        return Meaning("output_throughput", "output_throughput", bare=True)
    if words in TEXT_COLUMNS:
        return Meaning(TEXT_COLUMNS[words], TEXT_COLUMNS[words])
    return Meaning(None, snake_name(text))


# A trailing remark in brackets that is no unit (`(streaming)`, `(avg over 3 runs)`).
REMARK = re.compile(r"\s*\((?![^()]*/)[^()]*[a-z][^()]*\)$")


def number(text: str) -> tuple[float | None, str | None]:
    """A cell's number and the unit printed in it: `1,234.5`, `**12.9**`, `120 ms`,
    `878.31 ± 4.11`, `101.2 (-16%)`."""
    value, unit = cell_number(text)
    if value is None and CELL_REMARK.search(text):
        value, unit = cell_number(CELL_REMARK.sub("", text))
    if value is None and (bare := MARKS.sub("", text)) != text:
        value, unit = number(bare)
    return value, unit


# A writer's mark before or after a cell's figure (`✅ 12.3`, `🔺 4.1`, `98.7 ↑`, `12.3 ⚠️`).
MARKS = re.compile(r"^[\s\u2190-\u21ff\u2600-\u27bf\U0001F300-\U0001FAFF\ufe0f*]+"
                   r"|[\s\u2190-\u21ff\u2600-\u27bf\U0001F300-\U0001FAFF\ufe0f*]+$")


@dataclass
class Run:
    label: str | None
    lines: list[int] = field(default_factory=list)
    cells: list[tuple[str, str, int]] = field(default_factory=list)   # (label, text, line)
    named: bool = False     # one of the runs a header names (`vLLM V0 Avg Lat(s)`)
    group: str | None = None    # the group a grouped table's row names (`c8 @1024/256`)
    seconds_assumed: bool = False   # its latencies said no unit and read as seconds


def _numeric(texts: list[str]) -> bool:
    """Some of ``texts`` are figures (or two, around an arrow: `2210 -> 2480`)."""
    return any(number(t)[0] is not None or arrow_cell(cell_text(t)) for t in texts if t)


def _row_runs(t: Table, stated: bool = False) -> list[Run] | None:
    """Metrics as row labels: the runs, one per column of numbers (one in all when the
    columns are statistics); None when the first column names too few metrics (one is
    enough in a sweep, or when the heading ``stated`` a serving workload)."""
    names = [row[0] if row else "" for _, row in t.body]
    meanings = [meaning(name) for name in names]
    measured = {cell_text(n).lower() for n, m in zip(names, meanings) if m and m.measured}
    # (most rows name a figure or a setting: `Low-latency` twice among strategies is no metric)
    named = sum(bool(m and (m.measured or m.column is not None)) for m in meanings)
    if len(measured) < (1 if stated or _metric_rows(t) or _swept(t) else 2) \
            or 2 * named < len(names) and not _metric_rows(t):
        return None
    header = t.header
    width = max(len(header), *(len(row) for _, row in t.body))
    columns = [c for c in range(1, width)
               if not DIFFERENCE.search(header[c] if c < len(header) else "")
               and _numeric([row[c] if c < len(row) else "" for _, row in t.body])]
    if not columns:
        return None
    stats = all(STAT_ONLY.match((header[c] if c < len(header) else "").lower())
                for c in columns)
    runs = [Run(None)] if stats else [
        Run(None if NO_LABEL.match(header[c] if c < len(header) else "") else header[c])
        for c in columns]
    for index, row in t.body:
        for n, c in enumerate(columns):
            text = row[c] if c < len(row) else ""
            run = runs[0] if stats else runs[n]
            if index not in run.lines:
                run.lines.append(index)
            if text:
                name = f"{header[c]} {row[0]}" if stats else row[0]
                run.cells.append((name, text, index))
    return runs


def _run_names(header: list[str]) -> dict[int, tuple[str, str]]:
    """Columns named `<run> <metric>` for two runs or more (`k8s TTFT mean | llm-d TTFT
    mean`, `vLLM V0 Avg Lat(s) | sglang Avg Lat(s)`), or `<metric> <run>` (`mean_tpot_ms__triton
    | mean_tpot_ms__gluon`, `median_ttft (PR) [ms]`): column → (run name, the metric's label).
    Words are a run's name when another run's name stands beside the same measured label;
    a statistic or a metric's word is no name (`Mean TTFT | P99 TTFT`)."""
    splits: dict[int, list[tuple[str, str]]] = {}
    beside: dict[str, dict[int, str]] = {}      # a measured label → the columns naming a run
    for c, h in enumerate(header):
        for name, rest in _name_splits(cell_text(h)):
            if (m := meaning(rest)) is None or not m.measured or _names_a_figure(name):
                continue
            splits.setdefault(c, []).append((name, rest))
            beside.setdefault(rest.lower(), {}).setdefault(c, name)
    return {c: found[0] for c, options in splits.items()
            if (found := [o for o in options if len(set(beside[o[1].lower()].values())) >= 2])}


RUN_IN_BRACKETS = re.compile(r"\(([^()]+)\)")


def _name_splits(text: str) -> list[tuple[str, str]]:
    """(run name, the rest) for each way a header may hold a run's name: its first words, its
    last words (blanks or underscores before them), or a bracket that is no unit (`(PR)`)."""
    out = []
    for bracket in RUN_IN_BRACKETS.finditer(text):
        if bracket.group(1).strip().lower() not in TO_MS:
            out.append((bracket.group(1).strip(),
                        " ".join((text[:bracket.start()] + text[bracket.end():]).split())))
    # (a run's name is a few words: a header of thousands costs no more than one of ten; a
    # header of no blanks has its words between underscores: `k8s_TTFT_mean`)
    blanks = re.search(r"\s", text) is not None
    words = [w for w in (text.split() if blanks else text.split("_")) if w]
    out += [(" ".join(words[:k]), " ".join(words[k:])) for k in range(1, min(len(words), 9))]
    parts = [w for w in re.split(r"\s+|_{2,}" if blanks or "__" in text else "_+", text) if w]
    if len(parts) > 1:
        out += [(" ".join(parts[k:]), " ".join(parts[:k]))
                for k in range(max(1, len(parts) - 8), len(parts))]
    return out


def _names_a_figure(words: str) -> bool:
    """The words name a statistic, a metric or a throughput: they are no run's name."""
    text = words.lower()
    return STAT.search(text) is not None or PER_SECOND.search(text) is not None \
        or any(pattern.search(text) for pattern, _ in METRICS) \
        or THROUGHPUT_OF.fullmatch(text) is not None


# Words that say which throughput a bare `tok/s` is (`Output tok/s`, `Total tok/s`): no run's
# name.
THROUGHPUT_OF = re.compile(r"(?:input|in|prompt|prefill|output|out|gen|generated|generation"
                           r"|decode|total|request|req|peak)(?:\s+tokens?)?")


# The settings a sweep's rows vary (`| Concurrency | Output tok/s |`): with one of them, one
# measured figure makes a table of serving runs.
SWEPT = {"max_concurrency", "request_rate", "num_prompts"}


def _swept(t: Table) -> bool:
    """The table's first column is a serving sweep's setting, or a row names one."""
    firsts = [t.header[0] if t.header else "", *(row[0] for _, row in t.body if row)]
    return any(m is not None and m.column in SWEPT for m in map(meaning, firsts))


# A header only a serving result has (`Output throughput`, `TTFT`, `req/s`): one such column
# of figures over two runs or more makes a table of serving runs that compares them
# (`| SGLang source | Output throughput |`); one figure of one run stays a published table.
SERVING_ONLY = re.compile(r"\b(?:TTFT|TPOT|ITL|E2EL?|output\s+(?:token\s+)?throughput"
                          r"|request\s+throughput|req(?:uest)?s?\s*/\s*s)\b", re.I)


def _serving_header(t: Table) -> bool:
    return len([row for _, row in t.body if _numeric(row)]) >= 2 and any(
        SERVING_ONLY.search(cell_text(h)) for h in t.header)


def _models_as_rows(t: Table) -> bool:
    """The first column names each row's model (`| Model | H100 | H200 |`)."""
    return bool(t.header) and (m := meaning(t.header[0])) is not None and m.column == "model"


def _swept_columns(t: Table) -> bool:
    """Each column of figures after the first is a run of a sweep, named by its setting's
    value (`| GPUs | 1 Concurrency | 8 Concurrency |`, `| Model | c=1 | c=16 | Notes |`)."""
    numeric = [c for c in range(1, len(t.header))
               if _numeric([row[c] if c < len(row) else "" for _, row in t.body])]
    return len(numeric) > 1 and all(
        _label_settings(t.header[c])[0].keys() & SWEPT for c in numeric)


def _grouped_row_runs(t: Table) -> list[Run] | None:
    """Metric rows in groups (`| cell | metric | vLLM | PegaInfer |` over `| c8 @1024/256 |
    TPOT | ... |` and rows with the group left blank under it): one run per group and column,
    the column its label, the group its settings (_group_settings); None for any other table."""
    if len(t.header) < 3 or (m := meaning(t.header[1])) is not None and m.measured:
        return None
    metrics = [row[1] if len(row) > 1 else "" for _, row in t.body]
    if sum(bool(m and m.measured) for m in map(meaning, metrics)) < 2 \
            or not t.body or not t.body[0][1][0]:
        return None
    columns = [c for c in range(2, len(t.header)) if not DIFFERENCE.search(t.header[c])
               and _numeric([row[c] if c < len(row) else "" for _, row in t.body])]
    runs: dict[tuple[str, int], Run] = {}
    group = ""
    for index, row in t.body:
        group = row[0] or group
        for c in columns:
            text = row[c] if c < len(row) else ""
            run = runs.setdefault((group, c), Run(cell_text(t.header[c]) or None, group=group))
            run.lines.append(index)
            if text:
                run.cells.append((row[1], text, index))
    return list(runs.values()) or None


# A group's settings, each a word of it: `c8`, `bs1`, `qps16`, `@1024/256` (input/output).
GROUP_LENGTHS = re.compile(r"^@?(\d+)\s*/\s*(\d+)$")


def _group_settings(group: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for word in cell_text(group or "").split():
        if lengths := GROUP_LENGTHS.match(word):
            out.update(random_input_len=int(lengths.group(1)),
                       random_output_len=int(lengths.group(2)))
        elif match := LABEL_SETTING.match(word):
            out.update(_setting(match))
    if not out:             # (`in1024 / out1024`, written with blanks)
        out = {k: v for k, v in workload_in_prose((cell_text(group or ""),)).items()
               if k in LENGTHS}
    return out


def _stat_row_runs(t: Table) -> list[Run] | None:
    """Statistics as row labels under metric headers (`| Percentile | TTFT (ms) | TPOT (ms) |`
    over `| P50 | ... |`, `| P99 | ... |`): the table is one run, each cell its row's statistic
    of its column's metric; None for any other table."""
    names = [cell_text(row[0]).lower() if row else "" for _, row in t.body]
    if not names or not all(STAT_ONLY.match(n) for n in names):
        return None
    run = Run(None)
    for index, row in t.body:
        run.lines.append(index)
        for c, text in enumerate(row[1:], start=1):
            if text and c < len(t.header) and (m := meaning(t.header[c])) is not None \
                    and m.metric is not None:
                run.cells.append((f"{row[0]} {t.header[c]}", text, index))
    return [run] if run.cells else None


def _names_its_row(head: str, cell: str) -> bool:
    """A first cell with no number is its row's name, unless its column is a value's (`Model`,
    or a setting such as `Concurrency` whose cell was garbled: a warning, not a name); a cell
    that names its setting (`Concurrency 64`) is a name too."""
    m = meaning(head)
    return m is None or m.column is None or m.column not in TEXT_VALUES \
        and bool(_label_settings(cell)[0])


def _column_runs(t: Table, stated: bool = False) -> list[Run] | None:
    """Metrics as column headers: one run per body row (one per run name and row when the
    headers name runs, `k8s TTFT mean | llm-d TTFT mean`); None when the header names too
    few metrics."""
    header = t.header
    if sum(bool(m and m.measured) for m in map(meaning, header)) < (
            1 if stated or _swept(t) or _serving_header(t) else 2):
        return None
    named = _run_names(header)
    runs = []
    for index, row in t.body:
        if not _numeric(row):
            continue
        # (`1000/100` under `ISL/OSL`: the row's settings, not its name)
        label = row[0] if row and row[0] and number(row[0])[0] is None \
            and _names_its_row(header[0], row[0]) and len(_cells_of(header[0], row[0])) < 2 \
            else None
        shared: list[tuple[str, str, int]] = []
        own: dict[str, list[tuple[str, str, int]]] = {}
        for c, text in enumerate(row):
            if not text or c >= len(header) or (c == 0 and label is not None) \
                    or DIFFERENCE.search(header[c]):
                continue
            if c in named:
                own.setdefault(named[c][0], []).append((named[c][1], text, index))
            else:
                shared.append((header[c], text, index))
        if not own:
            runs.append(Run(label, [index], shared))
        for name, cells_of_run in own.items():
            runs.append(Run(f"{label} {name}" if label else name, [index],
                            [*shared, *cells_of_run], named=True))
    return runs or None


# A cell that holds labelled figures, one a line: `Total TPS: 9743.28<br>Mean TPOT(ms): 48.57`
# (cell_text writes the line breaks `; `).
# (The label's letter is looked for ahead: a run on each side of it was quadratic on a long cell.)
PAIR = re.compile(r"^(?P<label>(?=[^:;]*[A-Za-z])[^:;]*):\s*(?P<value>[^:;]+)$")


def _pairs(text: str) -> list[tuple[str, str]]:
    """The (label, figure) pairs of a cell of labelled figures; [] for any other cell."""
    pairs = [PAIR.match(part.strip()) for part in text.split(";") if part.strip()]
    return [(m.group("label"), m.group("value")) for m in pairs] if pairs and all(pairs) else []


def _cell_runs(t: Table) -> list[Run] | None:
    """Labelled figures in each cell: one run per cell (its row's and column's names its
    label); None when no cell holds two labelled figures."""
    runs = []
    for index, row in t.body:
        for c, text in enumerate(row[1:], start=1):
            pairs = _pairs(text)
            if not pairs:
                continue
            name = " ".join(n for n in (row[0], t.header[c] if c < len(t.header) else "") if n)
            runs.append(Run(name or None, [index], [(label, value, index)
                                                    for label, value in pairs]))
    return runs if any(len(run.cells) >= 2 for run in runs) else None


def _runs_under_metric(t: Table, heading: str) -> list[Run] | None:
    """A sweep whose columns are runs, the one figure they compare named over the table
    (`Throughput (tok/s, output):` over `| Concurrency | Baseline | Fused | Delta |`): a run
    per row and column; None when the heading names no measured figure, or a header does."""
    named = meaning(heading.strip().rstrip(":：").strip()) if heading else None
    if named is None or not named.measured or not t.header \
            or not (_swept(t) or _swept_columns(t) or _models_as_rows(t)) \
            or any((m := meaning(h)) is not None and m.measured for h in t.header[1:]):
        return None
    columns = [c for c in range(1, len(t.header)) if not DIFFERENCE.search(t.header[c])
               and _numeric([row[c] if c < len(row) else "" for _, row in t.body])]
    runs = []
    for index, row in t.body:
        for c in columns:
            if c < len(row) and row[c]:
                runs.append(Run(t.header[c], [index], [(t.header[0], row[0], index),
                                                       (heading, row[c], index)], named=True))
    return runs or None


def _before_after(found: list[Run], words: tuple[str, str] = ("before", "after")
                  ) -> list[Run]:
    """Each run whose cells hold an arrow (`34.1 -> 34.3`) as the two runs it compares,
    `before` and `after` or as the headers name them (``words``); a cell without one belongs
    to both."""
    out = []
    for run in found:
        sides = [arrow_cell(cell_text(text)) for _, text, _ in run.cells]
        if not any(sides):
            out.append(run)
            continue
        for side, word in zip(("before", "after"), words):
            out.append(Run(f"{run.label} {word}" if run.label else word, run.lines,
                           [(name, arrow_side(m, side), index) if m else (name, text, index)
                            for (name, text, index), m in zip(run.cells, sides)], run.named,
                           run.group))
    return out


def _arrow_header(t: Table) -> tuple[Table, tuple[str, str]]:
    """The table with the run names a header's arrow gives (`TTFT (Triton → cutlass)`, `tok/s
    OFF -> ON`) taken out of its headers, and those names (`before`, `after` when no header,
    or headers that disagree, name them)."""
    names = [arrow_names(cell_text(h)) for h in t.header]
    named = {n for n in names if n}
    if not named:
        return t, ("before", "after")
    header = [ARROW_NAMES.sub("", cell_text(h)) if n else h for h, n in zip(t.header, names)]
    return Table(header, t.body), (named.pop() if len(named) == 1 else ("before", "after"))


# A unit the prose gives a word of the headers where they give none (`Output tokens/sec —
# higher is better; TTFT in seconds`).
PROSE_UNIT = re.compile(r"\b(?P<word>[A-Za-z][\w-]*)\s+(?:(?:is|are)\s+)?(?:in\s+)?\(?"
                        r"(?P<unit>milliseconds|seconds|secs?|ms|tok(?:en)?s?\s*/\s*s(?:ec)?"
                        r"|req(?:uest)?s?\s*/\s*s(?:ec)?)(?![\w/])", re.I)


def _unit_name(said: str) -> str:
    said = said.lower().replace(" ", "")
    if said.startswith("tok"):
        return "tok/s"
    if said.startswith("req"):
        return "req/s"
    return "ms" if said in ("ms", "milliseconds") else "s"


def _prose_units(t: Table, prose: tuple[str, ...]) -> Table:
    """The table with the unit the prose gives a header's word written in that header, where
    it names a latency with no unit or no figure at all."""
    said: dict[str, set[str]] = {}
    for match in PROSE_UNIT.finditer(" ".join(prose)):
        said.setdefault(match.group("word").lower(), set()).add(_unit_name(match.group("unit")))
    units = {word: found.pop() for word, found in said.items() if len(found) == 1}
    if not units:
        return t
    header = []
    for head in t.header:
        text = cell_text(head)
        words = text.lower()
        known = meaning(text)
        if known is not None and (known.metric or known.column is None) \
                and _unit(words) is None and not PER_SECOND.search(words):
            given = {units[w] for w in re.findall(r"[a-z][a-z0-9-]*", words) if w in units}
            if len(given) == 1 and (known.metric is None) == given.issubset({"tok/s", "req/s"}):
                head = f"{text} ({given.pop()})"
        header.append(head)
    return Table(header, t.body)


def _cell_units(t: Table) -> Table:
    """The table with the rate most of a column's cells print (`850 tok/s`) written in a
    header that names a throughput and no unit (`Throughput`)."""
    header = []
    for c, head in enumerate(t.header):
        text = cell_text(head)
        known = meaning(text)
        if c and known is not None and known.column is None and THROUGHPUT_WORD.search(text) \
                and _unit(text.lower()) is None:
            units = [(number(row[c])[1] or "").lower() for _, row in t.body if c < len(row)]
            rates = {_unit_name(u) for u in units if RATE_UNIT.fullmatch(u)}
            if len(rates) == 1 and 2 * sum(bool(RATE_UNIT.fullmatch(u)) for u in units) > len(units):
                head = f"{text} ({rates.pop()})"
        header.append(head)
    return Table(header, t.body)


THROUGHPUT_WORD = re.compile(r"\b(?:throughput|tput|speed)\b", re.I)
RATE_UNIT = re.compile(r"tok(?:en)?s?/s(?:ec)?|t/s|req(?:uest)?s?/s(?:ec)?")


def runs(lines: list[str], heading: str = "", prose: tuple[str, ...] = (),
         over: tuple[str, ...] = ()) -> list[Run] | None:
    """The runs of a table of serving results, None when it is none.  ``heading``: the
    heading or label over it; ``prose``: the note's lines before it (units said in words);
    ``over``: the label and the heading over it, when both (a workload stated in either)."""
    t = table(lines)
    if t is None:
        return None
    stated = bool(workload_in_prose(tuple(filter(None, over or (heading,)))).keys() - {"seed"})
    t, words = _arrow_header(_cell_units(_prose_units(t, prose) if prose else t))
    found = _before_after(_grouped_row_runs(t) or _row_runs(t, stated) or _stat_row_runs(t)
                          or _column_runs(t, stated) or _cell_runs(t)
                          or _runs_under_metric(t, heading) or [], words)
    if not found:
        return None
    # numbers under the metrics: at least two measured cells of one run read as numbers (one,
    # when the headers name the runs beside the metric, the first column is headed `Metric`:
    # the table compares runs on it, or a sweep's setting names the rows, or the heading
    # over it states a serving workload: `### Throughput (Long Prompts, Concurrency=32)`)
    one_enough = _metric_rows(t) or _swept(t) or stated or _serving_header(t)
    for run in found:
        measured = [part for name, text, _ in run.cells for one, part in _cells_of(name, text)
                    if (m := meaning(one)) is not None and m.measured]
        if sum(number(text)[0] is not None for text in measured) >= (
                1 if run.named or one_enough else 2):
            return _in_seconds(found)
    return None


# A latency's unit said in its header or its cell (`TTFT (s)`, `TTFT ms`, `120 ms`, `首字延迟(秒)`).
SAID_UNIT = re.compile(r"(?<![a-z])(?:ms|s|sec|secs|seconds?|us|µs|msec)(?![a-z])|秒", re.I)


def _in_seconds(found: list[Run]) -> list[Run]:
    """The runs, their latencies that no header, cell or prose gives a unit read as seconds
    when one of them is under 1 (no request's time to first token, time per output token or
    latency is under a millisecond; `TTFT | 0.066`); ``Run.seconds_assumed`` says so."""
    latencies = [(run, k) for run in found for k, (name, _, _) in enumerate(run.cells)
                 if (m := meaning(name)) is not None and m.metric is not None]
    unitless = [(run, k) for run, k in latencies
                if not SAID_UNIT.search(cell_text(run.cells[k][0]))
                and not SAID_UNIT.search(run.cells[k][1])]
    if len(unitless) < len(latencies):      # (a unit said for some: `median TTFT (ms)`)
        return found
    # (a spread may be under 1 ms: `std TPOT | 0.84`)
    figures = [number(part)[0] for run, k in unitless
               for one, part in _cells_of(run.cells[k][0], run.cells[k][1])
               if (m := meaning(one)) is not None and m.stat not in ("std", "min")]
    if not any(f is not None and 0 < f < 1 for f in figures):
        return found
    for run, k in unitless:
        name, text, index = run.cells[k]
        run.cells[k] = (f"{name} (s)", text, index)
        run.seconds_assumed = True
    return found


METRIC_HEADER = re.compile(r"^(?:metrics?|指标|指標|项目|項目|メトリクス)$", re.I)


def _metric_rows(t: Table) -> bool:
    """The first column is headed `Metric`: its rows name metrics, its columns runs."""
    return bool(t.header) and METRIC_HEADER.match(cell_text(t.header[0])) is not None


def resembles(lines: list[str], context: Any = None) -> bool:
    """The lines are one table of serving results: two labels or more name a latency or a
    throughput, with numbers under them."""
    return runs(lines, getattr(context, "label_or_heading", None) or "",
                getattr(context, "prose", ()), label_and_heading(context)) is not None


# What the table's run takes from its own context, not the command's
OWN_CONTEXT = {"section", "label", "tags", "engine"}
# A count written as a part of a whole (`Successful requests | 520/520`).
OUT_OF = {"completed", "failed"}
OUT_OF_CELL = re.compile(r"^\s*(\d[\d,]*)\s*/\s*(\d[\d,]*)\s*$")


# A run's label that names its setting (`Concurrency 64`, `c=16`, `QPS: 2`, `bs 32`), or its
# value first (`8 Concurrency`, `100 prompts`).
LABEL_SETTING = re.compile(r"^(?P<name>[A-Za-z][A-Za-z _]*?)\s*[=:]?\s*(?P<value>\d+(?:\.\d+)?)$"
                           r"|^(?P<first>\d+(?:\.\d+)?)\s*(?P<after>[A-Za-z][A-Za-z _]*?)$")
# ...one of several in brackets (`c=16, isl=1024`)
IN_BRACKET = re.compile(r"(?P<name>[A-Za-z][A-Za-z _]*?)\s*[=:]\s*(?P<value>\d+(?:\.\d+)?)")
LABEL_SETTINGS = {"max_concurrency", "request_rate", "num_prompts", "random_input_len",
                  "random_output_len"}


def _label_settings(label: str | None) -> tuple[dict[str, Any], str | None]:
    """(the settings a run's label names, the label without a bracket of only settings):
    `Concurrency 64`, `c=16`, `Before (c=1)` → ({max_concurrency: 1}, `Before`)."""
    text = cell_text(label or "").strip()
    match = LABEL_SETTING.match(text)
    if match:
        return _setting(match), label
    bracket = BRACKETED_SETTINGS.search(text)
    if bracket is None:     # (`in1024 / out1024 baseline`: the lengths, the name kept whole)
        return {k: v for k, v in workload_in_prose((text,)).items() if k in LENGTHS}, label
    found = [_setting(m) for m in IN_BRACKET.finditer(bracket.group(1))]
    if not found or not all(found):
        return {}, label
    return {k: v for one in found for k, v in one.items()}, \
        (text[:bracket.start()] + text[bracket.end():]).strip() or label


# Settings in brackets after a run's name: `Before (c=16)`, `PR [c=8, isl=1024]`.
BRACKETED_SETTINGS = re.compile(r"\s*[(\[]((?:[A-Za-z][A-Za-z _]*?\s*[=:]\s*\d+(?:\.\d+)?"
                                r"[,;\s]*)+)[)\]]")


def _setting(match: re.Match) -> dict[str, Any]:
    named = match.groupdict()
    m = meaning(named.get("name") or named.get("after") or "")
    if m is None or m.column not in LABEL_SETTINGS:
        return {}
    value = float(named.get("value") or named.get("first"))
    return {m.column: int(value) if _int_column(m.column) else value}


# A header naming two latencies of one figure (`mean TPOT/ITL`: vLLM's mean TPOT and mean ITL
# agree when every request streams a token at a time).
TWO_METRICS = re.compile(r"\b(ttft|tpot|itl|e2el?)\s*/\s*(ttft|tpot|itl|e2el?)\b", re.I)


def _one_metric(name: str) -> list[str]:
    """``name``, or the two names a `TPOT/ITL` header stands for."""
    both = TWO_METRICS.search(name)
    if both is None:
        return [name]
    return [name[:both.start()] + metric + name[both.end():] for metric in both.groups()]


# Figures written together, one per word of the header's `a/b` (`TTFT mean/p99 (ms)` over
# `120.5 / 301.2`, `TTFT/TPOT (ms)` over `85 / 12.1`): each word a statistic or a metric.
ALTERNATIVES = re.compile(r"(?<![\w/])([A-Za-z][\w.]*(?:\s*/\s*[A-Za-z][\w.]*)+)(?![\w/])")


# The lengths a sweep's cell may write together (`1000/100` under `ISL/OSL`).
LENGTHS = {"random_input_len", "random_output_len"}


def _cells_of(name: str, text: str) -> list[tuple[str, str]]:
    """(label, text) for each figure of a cell: one per word of an `a/b` header when the cell
    holds as many figures parted by `/`, else the cell under each name the header stands for."""
    parts = SLASH.split(cell_text(text).strip())
    if len(parts) >= 2 and all(number(p)[0] is not None for p in parts):
        for group in ALTERNATIVES.finditer(name):
            words = SLASH.split(group.group(1))
            if len(words) == len(parts) and all(
                    STAT_ONLY.match(w.lower()) or any(p.fullmatch(w.lower()) for p, _ in METRICS)
                    or (m := meaning(w)) is not None and m.column in LENGTHS     # (`ISL/OSL`)
                    for w in words):
                return [(name[:group.start()] + w + name[group.end():], part)
                        for w, part in zip(words, parts)]
    return [(one, text) for one in _one_metric(name)]


def _int_column(column: str) -> bool:
    return fields_of(ServingRun)[column].annotation in (int, int | None)


def _read(run: Run, block: Block, problems: list[tuple[int, str]]
          ) -> tuple[dict[str, Any], dict[str, Any], list[LatencyStat], dict[str, float]]:
    values: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    stats: list[LatencyStat] = []
    tolerance: dict[str, float] = {}
    cells = [(one, part, index) for name, text, index in run.cells
             for one, part in _cells_of(name, text)]
    for name, text, index in cells:
        m = meaning(name)
        if m is None:
            continue
        line = block.line_start + index
        if m.column in TEXT_VALUES:
            values[m.column] = text
            continue
        if m.column in OUT_OF and (part := OUT_OF_CELL.match(cell_text(text))):
            text = part.group(1)                            # `520/520`: 520 of 520
            if m.column == "completed":
                values.setdefault("num_prompts", int(part.group(2).replace(",", "")))
        value, unit = number(NAMED_CELL.sub("", text) if m.column and not m.measured
                             else text)
        if value is None:
            # (a word of an unknown column is a label, `bf16` too, and so is a mark, `🥇`;
            # a garbled number is not)
            if m.column is None and (re.search(r"[A-Za-z]{2}", text) or not re.search(r"\d", text)):
                if not NO_VALUE.fullmatch(text):
                    extra.setdefault(m.name, text)
            elif not NO_VALUE.fullmatch(text):
                problems.append((line, f"{name}: {text!r} is not a number: left empty"))
            continue
        factor = m.factor
        if unit in ("k", "K"):                  # (`1.2k` tok/s: thousands)
            if m.column in ("random_input_len", "random_output_len"):
                problems.append((line, f"{name}: {text!r} is 1,000 or 1,024 times a number: "
                                       "left empty"))
                continue
            value, unit = value * 1000, None
        if unit and unit.lower() in TO_MS and (m.metric is not None or m.column == "duration"):
            factor = TO_MS[unit.lower()] / (1000.0 if m.column == "duration" else 1.0)
        elif unit == "%" and m.column is not None and m.metric is not None:
            problems.append((line, f"{name}: {text!r} is a percentage, not a time: left empty"))
            continue
        elif unit and m.metric is not None and RATE_UNIT.fullmatch(unit.lower()):
            # (`14tok/s` under `1000/tpot`: the rate the latency makes, not the latency)
            problems.append((line, f"{name}: {text!r} is a rate, not a time: left empty"))
            continue
        if factor != 1.0:       # (67.8649 s is 67864.9 ms, not 67864.90000000001)
            value = float(f"{value * factor:.12g}")
        if m.metric is not None:
            stats.append(LatencyStat(metric=m.metric, stat=m.stat, percentile=m.percentile,
                                     value_ms=value))
            if m.column is None:
                continue
        if m.column is None:
            extra[m.name] = value
            continue
        if _int_column(m.column):
            if value != int(value):
                problems.append((line, f"{name}: {text!r} is not a whole number: left empty"))
                continue
            value = int(value)
        if m.bare and m.column in values:
            continue                     # the table's own output column holds it
        values[m.column] = value
        unit_half = half_unit(re.sub(r"^[^\d.]*", "", text.replace(",", "")))
        if unit_half is not None:
            tolerance[m.column] = unit_half * factor
    return values, extra, stats, tolerance


def _engine(context, model: str | None, backend: Any, label: str | None) -> str:
    """The engine a `Backend` / `Engine` cell or the run's label names, else the context's."""
    return (engine_named_in(backend) if isinstance(backend, str) else None) \
        or engine_named_in(label) or infer_engine(context, model, None, None)


# What a serving result block prints: its banner, or a latency line of it.
PRINTED_RESULT = re.compile(r"Serving Benchmark Result|^\W{0,8}(?:Mean|Median|P\d+) "
                            r"(?:TTFT|TPOT|ITL|E2EL) \(ms\):[ \t]+\d", re.M)


@lru_cache(maxsize=64)
def _prints_results(path: str, size: int, mtime: int) -> bool:
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return False
    encoding = "utf-16" if data[:2] in (b"\xff\xfe", b"\xfe\xff") else "utf-8"
    return PRINTED_RESULT.search(data.decode(encoding, errors="ignore")) is not None


def prints_results(path: str) -> bool:
    """The file also holds printed serving results (a vLLM / SGLang result block)."""
    try:
        stat = os.stat(path)
    except (OSError, ValueError):
        return False
    return _prints_results(path, stat.st_size, stat.st_mtime_ns)


def build(block: Block) -> list[Parsed | Problem]:
    if block.context.path and prints_results(block.context.path):
        # A table beside the printed results is their summary: they are the runs, the table
        # stays a published table.
        return published_markdown.read_table(block)
    found = runs(block.lines, block.context.label_or_heading or "", block.context.prose,
                 label_and_heading(block.context)) or []
    out: list[Parsed | Problem] = []
    context = block.context
    # The benchmark command (and printed Namespace) the table's runs ran with
    shared = {k: v for k, v in serving_context(context).items()
              if k not in OWN_CONTEXT and v is not None}
    for run in found:
        problems: list[tuple[int, str]] = []
        values, extra, stats, tolerance = _read(run, block, problems)
        if run.seconds_assumed:
            problems.append((block.line_start + min(run.lines), "latencies without a unit, one "
                             "of them under 1: read as seconds (no request takes under a "
                             "millisecond)"))
        settings, run_label = _label_settings(run.label)
        for column, value in {**_group_settings(run.group), **settings}.items():
            values.setdefault(column, value)
        for column, value in shared.items():     # the table's own figures first
            values.setdefault(column, value)
        if not any(isinstance(v, (int, float)) for v in values.values()) and not stats:
            continue
        first, last = min(run.lines), max(run.lines)
        label = run_label or context.label_or_heading
        row = ServingRun(
            **values, extra=extra or None, tags=context.tags or None, format=FORMAT.name,
            section=context.section_text, label=label,
            engine=_engine(context, values.get("model"), extra.get("backend"), run.label),
            line_start=block.line_start + first, line_end=block.line_start + last,
            raw_text="\n".join([block.lines[0], *block.lines[first:last + 1]]))
        warnings = [*problems, (block.line_start + first,
                                "a table retyped by hand, read as a vLLM / SGLang serving "
                                "result by its header words: each value matched by the words "
                                "of its label, each run by its "
                                + ("row" if len(run.lines) == 1 else "column"))]
        out.append(Parsed(row=row, children=stats, warnings=warnings, tolerance=tolerance))
    return out


FORMAT = claimed_table(
    name="serving_retyped",
    table="serving_runs",
    description="A vLLM / SGLang serving result retyped by hand as a markdown table (metrics "
                "as rows or as columns): a serving run per run, matched by its header words.",
    upstream=("vllm bench serve / sglang.bench_serving results, retyped",),
    build=build,
    claims=resembles,
)
