"""The prefix of a vLLM server log line: who logged it and when; the message after it.

Shapes seen across versions and launchers (the message is what the format grammars read)::

    INFO 01-05 12:04:53 distributed_gpu_executor.py:57] # GPU blocks: 2889, ...      (V0)
    INFO 08-31 14:22:17 [__init__.py:242] Automatically detected platform rocm.     (0.8+)
    (APIServer pid=1) INFO 08-04 20:51:08 [loggers.py:310] Engine 000: ...           (V1)
    (VllmWorkerProcess pid=42) INFO 12-16 16:46:04 metrics.py:482] ...              (V0 TP)
    vllm-1  | INFO 01-05 12:04:53 api_server.py:712] ...                            (compose)
    [2025-01-05 11:32:46] vllm serve deepseek-ai/DeepSeek-V3 ...                    (a script)
    [2025-03-01 12:00:05 DP0 TP0] Decode batch. #running-req: 12, ...                (SGLang)
    [2026-11-20 10:00:05 PP0 ATTN_CP0 MOE_DP0 TP0 EP0] Load weight end. ...         (SGLang 0.5.2x)

vLLM prints no year; a timestamp without one keeps ``year=None`` and takes its year from a
dated line of the same launch when it has one.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from dataclasses import dataclass
from typing import Any

from .base import Context
from ..schemas.models import fields_of
from .grammar import whole_number

LOG_PREFIX = re.compile(
    r"(?:^|[\s)\"'`])(?:INFO|WARNING|WARN|DEBUG|ERROR|CRITICAL)\s+"
    r"(?P<month>\d\d)-(?P<day>\d\d)\s+(?P<time>\d\d:\d\d:\d\d)(?:[.,]\d+)?\s+"
    r"(?:\[[^\]\s]+:\d+\]|[\w.\-]+:\d+\])\s?")
# SGLang's `[2025-10-16 09:12:03 DP1 TP8] `, at the start or after what a writer or a collector
# put before it (`[Bug] `, `Server log: `): the message starts after it.
DATED_PREFIX = re.compile(
    r"(?:^|(?<=[\s)\]|:>]))\s*\[(?P<year>\d{4})-(?P<month>\d\d)-(?P<day>\d\d)[ T]"
    r"(?P<time>\d\d:\d\d:\d\d)(?:[.,]\d+)?(?:\s+[A-Z]{2,4}(?:_[A-Z]{2,4})?\d+)*\]\s?")
# (SGLang's rank tags: `[... DP1 TP8]`, 0.5.2x's `[... DP0 PP1 ATTN_CP0 MOE_DP0 TP3 EP3]`)
# ... and uvicorn's own `INFO:     ` (no timestamp; vLLM >= 0.31 prints it without the pid tag).
UVICORN_LEVEL = re.compile(r"\s*(?:(?:INFO|WARNING|ERROR):[ \t]+)?")
PROCESS_PREFIX = re.compile(r"^\s*(?:[\w.\-]+\s+\|\s*)?(?:\([\w .\-]+pid=\d+\)\s*)?"
                            r"(?:(?:INFO|WARNING|ERROR):[ \t]+)?")
# Any other prefix is a run of these parts, in any order: what a logger, a launcher or a
# collector put before the message, one part trimmed or another added.  A logger tag alone
# (`[loggers.py:248] `), a level (`INFO`, `[INFO]`, `INFO:`), a date of any form (with or
# without a year, `T`, fraction or zone), a clock alone, a process tag (`(EngineCore_DP0
# pid=12)`), rank tags (`[TP0]`, `[DP0 TP1]`), a compose service (`vllm-1  | `), a pod
# (`[pod/x/y]`).  The first part with a date gives the line its time.
_LEVEL = r"(?:INFO|WARNING|WARN|DEBUG|ERROR|CRITICAL|NOTICE|FATAL)"
PREFIX_PART = re.compile(
    r"[ \t]*(?:"
    r"\((?:[\w .:\-]+\s)?pid=\d+\)"
    r"|\[" + _LEVEL + r"\]|" + _LEVEL + r"(?::|(?=[ \t]))"
    r"|(?:[\w.\-]+[ \t]+-[ \t]+)?" + _LEVEL + r"[ \t]+-(?=[ \t])"      # logging's ` - x - INFO - `
    r"|\[?(?:(?P<year>\d{4})[-/])?(?P<month>\d\d)[-/](?P<day>\d\d)[ T]+(?P<time>\d\d:\d\d:\d\d)"
    r"(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?(?:\s+[A-Z]{2,4}(?:_[A-Z]{2,4})?\d+)*\]?(?:\s*-)?"
    r"|\[?\d\d:\d\d:\d\d(?:[.,]\d+)?\]?(?=[ \t])"
    r"|\[[\w.\-/]+\.py:\d+(?::[\w<>]+)?\]|[\w.\-/]+\.py:\d+\]"
    r"|\[(?:[A-Z]{2,4}(?:_[A-Z]{2,4})?\d+[ \t]*)+\]"
    r"|\[pod/[^\]\s]+\]|[\w.\-]+[ \t]+\|"
    r")")


def strip_prefix(text: str) -> tuple["LogTime | None", str]:
    """(time, message) of a line behind any run of PREFIX_PART parts; (None, text) when
    nothing prefixes it."""
    pos, stamp = 0, None
    while True:
        match = PREFIX_PART.match(text, pos)
        if match is None or match.end() == pos:
            break
        if stamp is None and match["time"]:
            stamp = LogTime(int(match["month"]), int(match["day"]), match["time"],
                            int(match["year"]) if match["year"] else None)
        pos = match.end()
    return stamp, text[pos:].strip()


@dataclass(frozen=True)
class LogTime:
    month: int
    day: int
    time: str
    year: int | None = None

    def text(self, year: int | None = None) -> str:
        year = self.year or year
        stamp = f"{self.month:02d}-{self.day:02d} {self.time}"
        return f"{year:04d}-{stamp}" if year else stamp

    def moment(self, year: int | None = None) -> dt.datetime:
        # 2000 is a leap year, so a yearless 02-29 still has a moment.
        hour, minute, second = (int(x) for x in self.time.split(":"))
        return dt.datetime(self.year or year or 2000, self.month, self.day, hour, minute, second)


@dataclass(frozen=True)
class LogLine:
    time: LogTime | None
    message: str


def split_log_line(text: str) -> LogLine:
    """Timestamp and message of a log line; a line without a known prefix is all message."""
    match = LOG_PREFIX.search(text)
    if match:
        stamp = LogTime(int(match["month"]), int(match["day"]), match["time"])
        return LogLine(stamp, text[match.end():].strip())
    match = DATED_PREFIX.search(text)
    if match:
        stamp = LogTime(int(match["month"]), int(match["day"]), match["time"], int(match["year"]))
        # (uvicorn's own `INFO:     ` may follow: `[2026-05-17 09:34:36] INFO:     Uvicorn ...`)
        rest = text[match.end():]
        return LogLine(stamp, rest[UVICORN_LEVEL.match(rest).end():].strip())
    stamp, message = strip_prefix(text)
    return LogLine(stamp, message)


def seconds_between(first: LogTime, last: LogTime, year: int | None = None) -> float:
    """Seconds from ``first`` to ``last``; a yearless pair across New Year is one year apart."""
    start, end = first.moment(year), last.moment(year)
    if end < start and last.year is None:
        end = end.replace(year=end.year + 1)
    return (end - start).total_seconds()


@functools.lru_cache(maxsize=None)
def int_columns(model: type) -> frozenset[str]:
    """The columns of ``model`` that hold whole numbers (counts, sizes in tokens)."""
    return frozenset(column for column, field in fields_of(model).items()
                     if "int" in str(field.annotation))


def row_from_log_line(model: type, log: LogLine, context: Context, columns: dict[str, Any],
                      extra: dict[str, Any], **fields: Any) -> Any:
    """A ``model`` row from a parsed log message: counts made whole numbers (the model's int
    columns), with the line's time and the context every such row carries."""
    for column in int_columns(model).intersection(columns):
        columns[column] = whole_number(columns[column], column)
    return model(logged_at=log.time.text() if log.time else None, section=context.section_text,
                 label=context.label_or_heading, tags=context.tags or None,
                 extra=extra or None, **fields, **columns)
