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
from .grammar import ColumnTransformer, flatten
from .vllm_server_log import row_from_log_line, split_log_line

STAGE_COLUMNS = {"average_time_per_proposal_tok_ms": "proposal_time_per_token_ms",
                 "scoring_time_ms": "scoring_time_ms",
                 "verification_time_ms": "verification_time_ms"}


def _number(text: str) -> float:
    return float(text)


@v_args(inline=True)
class LineToColumns(ColumnTransformer):
    """Tree → (kind, {column: value}, {unknown label: value})."""

    def start(self, line):
        return line

    def _line(self, kind, items):
        items = list(flatten(items))
        columns = {k: v for k, v in items if k != "other"}
        extra = dict(v for k, v in items if k == "other")
        return kind, columns, extra

    def speculative_metrics(self, *items):
        return self._line("speculative_metrics", items)

    def spec_decoding_metrics(self, *items):
        return self._line("spec_decoding_metrics", items)

    def stage_times(self, *items):
        columns, extra = {}, {}
        for name, value in items:
            if name in STAGE_COLUMNS:
                columns[STAGE_COLUMNS[name]] = value
            else:
                extra[name] = value
        return "stage_times", columns, extra

    def stage_time(self, name, value):
        return str(name), _number(value)

    def draft_acceptance_rate(self, _label, value, percent=None):
        # V0 prints a fraction, V1 a percentage: store the fraction.
        number = _number(value)
        return "draft_acceptance_rate", round(number / 100, 6) if percent else number

    def per_position_acceptance(self, _label, rates):
        return "per_position_acceptance", [float(x) for x in re.findall(r"[\d.]+", str(rates))]

    def other(self, label, value, *_unit):
        return "other", (str(label).rstrip(":").strip(), _number(value))

    def column(self, name, children):
        # Every other rule is named after its column: LABEL NUMBER [unit].
        return name, _number(children[1])


def _parser() -> Lark:
    return grammar.in_parser("spec_decode.lark", __file__, LineToColumns)


def parse_message(message: str) -> tuple[str, dict[str, Any], dict[str, Any]]:
    return grammar.parse(_parser(), message, "speculative-decoding line")


def build(line: int, text: str, context: Context) -> Parsed:
    log = split_log_line(text)
    kind, columns, extra = parse_message(log.message)
    return Parsed(row=row_from_log_line(SpecDecodeMetric, log, context, columns, extra,
                                        kind=kind))


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
