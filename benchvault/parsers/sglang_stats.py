"""SGLang's scheduler log lines (prefill and periodic decode batches) → ``engine_stats`` rows.

Upstream printer: ``python/sglang/srt/managers/scheduler.py`` ``log_prefill_stats`` /
``log_decode_stats`` (later ``scheduler_metrics_mixin.py``, ``metrics_reporter.py``), 2024 →
current.  The same columns as vLLM's stats line where the meaning is the same::

    [2025-03-01 12:00:05 TP0] Decode batch. #running-req: 12, #token: 3400, token usage: 0.05,
    gen throughput (token/s): 812.30, #queue-req: 0

gives ``running=12, gpu_kv_cache_usage_pct=5.0, generation_throughput=812.3, waiting=0`` and
``extra={"batch": "decode", "num_token": 3400}``.  ``token usage`` is a fraction of the KV pool,
stored as a percentage like vLLM's `GPU KV cache usage`; the data-parallel rank of the
prefix (`DP1 TP8`) is the ``engine_index``.

Every version adds or moves fields, and people paste these lines into anything, so the line is
read from its `Decode batch` on as `label: value` pairs: a label no column knows goes to
``extra`` as printed, and what cannot be read costs only itself -- a garbled number is null
with a warning, an unknown prefix (a diff's `+`, Ray's `(pid=1, ip=...)`, Python logging's
`2026-06-07 10:59:31,659 [INFO] ...:`) only what it would have said.
"""

from __future__ import annotations

import math
import re
from typing import Any

from lark import Lark, v_args

from ..schemas.server import EngineStat
from . import grammar
from .base import STRAY, BlockParseError, Context, LineFormat, Parsed
from .grammar import ColumnTransformer, snake_name
from .vllm_server_log import LogLine, LogTime, int_columns, row_from_log_line, split_log_line

# label (without its colon) → (column, factor to the column's unit)
COLUMNS = {
    "#running-req": ("running", 1.0),
    "#queue-req": ("waiting", 1.0),
    "token usage": ("gpu_kv_cache_usage_pct", 100.0),
    "full token usage": ("gpu_kv_cache_usage_pct", 100.0),
    "gen throughput (token/s)": ("generation_throughput", 1.0),
    "input throughput (token/s)": ("prompt_throughput", 1.0),
    "cache hit rate": ("prefix_cache_hit_rate_pct", 1.0),     # printed with its `%`
    "#token": ("num_used_tokens", 1.0),
    # Hybrid models' pools (SchedulerStats' names): `#full token` is the figure `#token` prints
    # (the full-attention pool), beside the sliding-window pool's and the Mamba state pool's.
    "#full token": ("num_used_tokens", 1.0),
    "#swa token": ("swa_used_tokens", 1.0),
    "swa token usage": ("swa_token_usage", 1.0),
    "mamba num": ("mamba_used_tokens", 1.0),
    "mamba usage": ("mamba_usage", 1.0),
    # (PrefillStats' and SchedulerStats' names)
    "#pending-token": ("num_pending_tokens", 1.0),
    "cap len": ("spec_cap_length", 1.0),
    "block accept len": ("spec_block_accept_length", 1.0),
    "pre-allocated usage": ("pending_prealloc_token_usage", 1.0),
    "#new-seq": ("num_new_seqs", 1.0),
    "#new-token": ("num_new_tokens", 1.0),
    "#cached-token": ("num_cached_tokens", 1.0),
    "accept len": ("spec_accept_length", 1.0),
    "accept rate": ("spec_accept_rate", 1.0),
    "#retracted-req": ("num_retracted_reqs", 1.0),
    "cuda graph": ("cuda_graph", 1.0),
    # 0.5.2x names the graph by its device (metrics_reporter's _graph_backend_label)
    "cpu graph": ("cuda_graph", 1.0),
    "npu graph": ("cuda_graph", 1.0),
    "musa graph": ("cuda_graph", 1.0),
    # PD disaggregation's queues, named as its metrics name them (the line's kind says whether
    # the prefill or the decode server printed it): `#unbootstrapped-req` was the prefill's
    # `#prealloc-req`, `#transferring-req` its `#inflight-req`.
    "#prealloc-req": ("num_prealloc_queue_reqs", 1.0),
    "#unbootstrapped-req": ("num_prealloc_queue_reqs", 1.0),
    "#transfer-req": ("num_transfer_queue_reqs", 1.0),
    "#inflight-req": ("num_inflight_queue_reqs", 1.0),
    "#transferring-req": ("num_inflight_queue_reqs", 1.0),
}
FLAGS = {"cuda_graph"}          # True / False

# Where the message starts: the batch word after a blank, a bracket or a diff's `+`/`-` (not
# inside quotes: `f"Decode batch. "` in quoted source is no log line).
BATCH_AT = re.compile(r"(?:^|(?<=[\s\]>+-]))(?:Decode|Prefill?|Extend|Mixed) batch"
                      r"(?: \[\d+\])?[.,]")
# The fields of a line hand-wrapped after its `Decode batch,`, alone on the next line.
CONTINUED = re.compile(r"^[\s+>-]*(?=#(?:running-req|new-seq): )")
# In the text before the message: a date and time anywhere (`[2025-03-01 12:00:05 TP0]`,
# `2026-06-07 10:59:31,659 [INFO]`, `2026-09-27T00:15:25.500Z pod INFO TP0]`), else a time
# of day alone (`[04:40:55 TP0]`, SGLang 0.2-0.3); the DP rank of a `[... DP1 TP8]`.
DATED = re.compile(r"(?<!\d)(\d{4})-(\d\d)-(\d\d)[ T](\d\d:\d\d:\d\d)")
TIME_ONLY = re.compile(r"\[(\d\d:\d\d:\d\d)(?:[.,]\d+)?(?:\s+[A-Z]{2,4}\d+)*\]")
DP_RANK = re.compile(r"\[[^\]]*\bDP(\d+)\b[^\]]*\]")

NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf)")
STAMP = re.compile(r"\d+-\d+-\d+T\d+:\d+:\d+(?:\.\d+)?")      # 0.4.9's `timestamp:`
# A date or a time of day with a digit garbled in the paste (a stray symbol for it).
GARBLED_TIME = re.compile(rf"\d{{4}}-[\d{STRAY}]{{2}}-[\d{STRAY}]{{2}}"
                          rf"|[\d{STRAY}]{{2}}:[\d{STRAY}]{{2}}:[\d{STRAY}]{{2}}")
KEYED = re.compile(r"([A-Za-z_]\w*)=(\S+)")                     # `full=1200`
# Labels whose value is a number: counts (`#token`), usages, throughputs, rates, lengths.
NUMERIC_LABEL = re.compile(r"^#|usage|throughput|rate\b|\blen\b|\bnum\b|TFLOPS|\bBW\b")


def _number(text: str) -> int | float | None:
    if text.endswith("%"):
        text = text[:-1]
    if not NUMBER.fullmatch(text):
        return None
    return int(text) if text.lstrip("+-").isdigit() else float(text)


def _value(label: str | None, text: str) -> tuple[Any, bool]:
    """(the value ``text`` prints, whether it could be read)."""
    number = _number(text)
    if number is not None:
        return number, True
    if text in ("True", "False"):
        return text == "True", True
    if STAMP.fullmatch(text):
        return text, True
    # A word where a word may be (`mode: overlap`); a number with a stray letter (`8l2.30`),
    # a blank inside or a word where a number belongs cannot be read.
    numeric = label is not None and NUMERIC_LABEL.search(label) is not None
    if numeric or text[:1] in "0123456789+-." or any(c.isspace() for c in text):
        return None, False
    return text, True


@v_args(inline=True)
class LineToFields(ColumnTransformer):
    """Tree → (batch, iteration, [(label, value)], [(label, unreadable text)], junk at the end).

    Plain data only, so the parse memo keeps it per shape (see reading/memo.py)."""

    def start(self, head, fields=None):
        return (*head, *(fields or ([], [], False)))

    def headless(self, fields):
        return (None, None, *fields)

    def head(self, batch, iteration=None):
        kind = str(batch).split()[0].lower()
        return ("prefill" if kind == "prefil" else kind,
                int(str(iteration)[1:-1]) if iteration is not None else None)

    def fields(self, *pieces):
        read: list[list[Any]] = []
        unread: list[list[Any]] = []
        junk = False
        for i, (label, value) in enumerate(pieces):
            keyed = KEYED.fullmatch(value) if isinstance(value, str) else None
            if label is None:
                # `swa=310` goes on with the keyed value before it (`#token: full=1200, ...`).
                if keyed and read and isinstance(read[-1][1], dict):
                    read[-1][1].update(self._keyed(read[-1][0], keyed, unread))
                else:
                    # Not a field: a cut-off line's last word, or prose a wrap glued on.
                    unread.append([None, value])
                    junk = junk or i == len(pieces) - 1 and any(c.isspace() for c in value)
                continue
            if isinstance(value, list):
                items = [_value(label, v) for v in value]
                unread += [[label, v] for v, (_, ok) in zip(value, items) if not ok]
                read.append([label, [x for x, _ in items]])
            elif keyed:
                read.append([label, self._keyed(label, keyed, unread)])
            else:
                parsed, ok = _value(label, value or "")
                if not ok:
                    unread.append([label, value or ""])
                    junk = junk or i == len(pieces) - 1 and any(c.isspace() for c in value or "")
                read.append([label, parsed])
        return read, unread, junk

    @staticmethod
    def _keyed(label: str, keyed: re.Match, unread: list) -> dict[str, Any]:
        key, text = keyed.groups()
        value, ok = _value(label, text)
        if not ok:
            unread.append([f"{label} {key}", text])
        return {key: value}

    def field(self, label, value=None):
        if value is not None and not isinstance(value, list):
            value = str(value)
        return " ".join(str(label)[:-1].split()), value

    def loose(self, text):
        return None, str(text)

    def listed(self, *texts):
        return [str(t) for t in texts if t is not None]


def _parser() -> Lark:
    return grammar.in_parser("sglang_stats.lark", __file__, LineToFields)


def _when(prefix: str) -> tuple[LogTime | None, str | None]:
    """The log time the text before the message gives, or its time of day alone."""
    dated = DATED.search(prefix)
    if dated:
        year, month, day, time = dated.groups()
        return LogTime(int(month), int(day), time, int(year)), None
    if prefix:
        stamp = split_log_line(prefix).time        # vLLM's `INFO 08-27 15:21:10 x.py:1]`
        if stamp is not None:
            return stamp, None
    clock = TIME_ONLY.search(prefix)
    return None, clock.group(1) if clock else None


def build(line: int, text: str, context: Context) -> Parsed:
    found = BATCH_AT.search(text)
    if found is not None:
        prefix, message = text[:found.start()], text[found.start():]
    else:
        alone = CONTINUED.match(text)
        if alone is None:
            raise BlockParseError(f"no SGLang batch line: {text.strip()[:120]!r}")
        prefix, message = "", text[alone.end():]
    batch, iteration, fields, unread, junk = grammar.parse(
        _parser(), message, "SGLang scheduler stats line")
    if junk:
        raise BlockParseError(f"not one SGLang scheduler line (text after its fields): "
                              f"{unread[-1][1][:80]!r}")
    if not fields:
        raise BlockParseError("SGLang batch line without a `label: value` field (wrapped onto "
                              f"the next line?): {text.strip()[:120]!r}")
    if batch is None:
        batch = "prefill" if fields[0][0] == "#new-seq" else "decode"
    columns: dict[str, Any] = {}
    extra: dict[str, Any] = {"batch": batch}
    warnings = [(line, f"{label or 'a field'}: cannot read {value!r}, stored as null")
                for label, value in unread]
    for label, value in fields:
        known = COLUMNS.get(label)
        number = value.get("full") if isinstance(value, dict) else value
        if known is None or value is not None and isinstance(number, (list, dict, type(None))):
            extra[snake_name(label)] = value     # no column's, or a shape none holds (`[5, 5]`)
            continue
        if value is None:
            continue                 # could not be read: warned above
        column, factor = known
        if column in FLAGS:
            if isinstance(number, bool):
                columns[column] = number
            else:
                warnings.append((line, f"{label}: {number!r} is not True or False, stored as "
                                       "null"))
            continue
        whole = column in int_columns(EngineStat)        # (a count: `#running-req`)
        if isinstance(number, bool) or not isinstance(number, (int, float)) \
                or whole and not (math.isfinite(number) and number == int(number)):
            warnings.append((line, f"{label}: {number!r} is not a "
                                   f"{'count' if whole else 'number'}, stored as null"))
            continue
        # `0.07` of the pool is 7 %, not 7.000000000000001
        columns[column] = round(number * factor, 9)
        if isinstance(value, dict):
            extra[snake_name(label)] = value   # `token usage: full=0.30, swa=0.20` keeps both
    if iteration is not None:
        extra["iter"] = iteration
    stamp, clock = _when(prefix)
    if stamp is None and clock is None and GARBLED_TIME.search(prefix):
        # A date or time printed but unreadable (`08:00:!0`): no time stored, and said so.
        warnings.append((line, f"cannot read the time in {prefix.strip()[:60]!r}: "
                               "logged_at stored as null"))
    if clock is not None:
        extra["logged_time"] = clock      # no date printed: not a `logged_at`
    rank = DP_RANK.search(prefix)
    if rank:
        columns["engine_index"] = int(rank.group(1))
    row = row_from_log_line(EngineStat, LogLine(stamp, message), context, columns, extra)
    return Parsed(row=row, warnings=warnings)


FORMAT = LineFormat(
    name="sglang_stats",
    table="engine_stats",
    description="SGLang scheduler log line (prefill batch, periodic decode batch): running and "
                "queued requests, KV-pool usage, generation throughput, every other field by "
                "its label.",
    upstream=("sglang srt/managers/scheduler.py log_prefill_stats / log_decode_stats",
              "sglang srt/managers/scheduler_metrics_mixin.py, metrics_reporter.py"),
    markers=("Decode batch", "Prefill batch", "Prefil batch", "Extend batch", "Mixed batch",
             "#running-req: ", "#new-seq: "),
    pattern=re.compile(BATCH_AT.pattern + "|" + CONTINUED.pattern),
    build=build,
)
