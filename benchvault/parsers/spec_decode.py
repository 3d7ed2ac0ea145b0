"""Speculative-decoding log lines → one ``spec_decode_metrics`` row each.

Upstream printers: V0 ``vllm/engine/metrics.py`` (``Speculative metrics: ...``, 0.4 – 0.10) and
``vllm/spec_decode/spec_decode_worker.py`` (``SpecDecodeWorker stage times: ...``); V1
``vllm/v1/spec_decode/metrics.py`` (``SpecDecoding metrics: ...``, 0.8 → current).

Example (seed ``mi300x``, ``# num_speculative_tokens 5``)::

    INFO 12-16 16:46:04 metrics.py:482] Speculative metrics: Draft acceptance rate: 0.797,
    System efficiency: 0.640, Number of speculative tokens: 5, Number of accepted tokens:
    197711, Number of draft tokens: 248165, Number of emitted tokens: 190541.

gives ``draft_acceptance_rate=0.797, system_efficiency=0.64, num_speculative_tokens=5,
accepted_tokens=197711, draft_tokens=248165, emitted_tokens=190541``.  Ingest links the row to
its launch and to the serving run printed after it in the same section.
"""

from __future__ import annotations

import re
from typing import Any

from lark import Lark, v_args

from ..schemas.server import SpecDecodeMetric
from . import grammar
from .base import Context, LineFormat, Parsed
from .grammar import ColumnTransformer, figure, flatten, line_values
from .vllm_server_log import row_from_log_line, split_log_line

STAGE_COLUMNS = {"average_time_per_proposal_tok_ms": "proposal_time_per_token_ms",
                 "scoring_time_ms": "scoring_time_ms",
                 "verification_time_ms": "verification_time_ms"}


def _label(label) -> str:
    return " ".join(str(label).rstrip(":").split())


@v_args(inline=True)
class LineToColumns(ColumnTransformer):
    """Tree → (kind, {column: value}, {unknown label: value}, [(label, unreadable text)]).

    An item is (column, value) or, when its value cannot be read, (column, None, label, text).
    Plain data only, so the parse memo keeps it per shape (see reading/memo.py)."""

    def start(self, line):
        return line

    @staticmethod
    def _line(kind, items):
        return (kind, *line_values(_stage_as_column(item) for item in flatten(items)))

    @staticmethod
    def _entry(name, label, text, number):
        return (name, number) if number is not None else (name, None, _label(label), str(text))

    def speculative_metrics(self, *items):
        return self._line("speculative_metrics", items)

    def spec_decoding_metrics(self, *items):
        return self._line("spec_decoding_metrics", items)

    def stage_times(self, *items):
        return self._line("stage_times", items)

    def stage_time(self, name, value):
        number = figure(value)
        item = ("stage", (str(name), number))
        return item if number is not None else (*item, str(name), str(value))

    def draft_acceptance_rate(self, label, value, percent=None):
        # V0 prints a fraction, V1 a percentage: store the fraction.
        number = figure(value)
        if number is not None and percent:
            number = round(number / 100, 6)
        return self._entry("draft_acceptance_rate", label, value, number)

    def per_position_acceptance(self, label, rates):
        # A rate that cannot be read makes the list null (its column holds floats only, and a
        # list without it would move the positions after it), with a warning naming it.
        texts = re.findall(r"[^\s,\[\]]+", str(rates))
        values = [figure(t) for t in texts]
        bad = [t for t, v in zip(texts, values) if v is None]
        if bad:
            return "per_position_acceptance", None, _label(label), ", ".join(bad)
        return "per_position_acceptance", values

    def other(self, label, value, *_unit):
        number = figure(value)
        item = ("other", (_label(label), number))
        return item if number is not None else (*item, _label(label), str(value))

    def column(self, name, children):
        # Every other rule is named after its column: LABEL VALUE [unit].
        return self._entry(name, children[0], children[1], figure(children[1]))


def _stage_as_column(item: tuple) -> tuple:
    """A stage time (`("stage", (label, ms), ...)`) as the column its label names, else as
    an extra figure under its label; any other item as it is."""
    if item[0] != "stage":
        return item
    (label, number), rest = item[1], item[2:]
    if label in STAGE_COLUMNS:
        return (STAGE_COLUMNS[label], number, *rest)
    return ("other", (label, number), *rest)


def _parser() -> Lark:
    return grammar.in_parser("spec_decode.lark", __file__, LineToColumns)


def parse_message(message: str) -> tuple[str, dict[str, Any], dict[str, Any], list[list[str]]]:
    return grammar.parse(_parser(), message, "speculative-decoding line")


def build(line: int, text: str, context: Context) -> Parsed:
    log = split_log_line(text)
    kind, columns, extra, unread = parse_message(log.message)
    warnings = [(line, f"{label}: cannot read {value!r}, stored as null")
                for label, value in unread]
    return Parsed(row=row_from_log_line(SpecDecodeMetric, log, context, columns, extra,
                                        kind=kind), warnings=warnings)


FORMAT = LineFormat(
    name="spec_decode",
    table="spec_decode_metrics",
    description="Speculative-decoding metrics lines (vLLM V0 `Speculative metrics:` and "
                "`SpecDecodeWorker stage times:`, V1 `SpecDecoding metrics:`).",
    upstream=("vllm 0.4 – 0.10 V0 spec_decode", "vllm 0.8+ V1 spec_decode"),
    markers=("Speculative metrics:", "SpecDecodeWorker stage times:", "SpecDecoding metrics:"),
    pattern=re.compile(r"(?:^|[\s\]|])(?:Speculative metrics:|SpecDecodeWorker stage times:"
                       r"|SpecDecoding metrics:)"),
    build=build,
)
