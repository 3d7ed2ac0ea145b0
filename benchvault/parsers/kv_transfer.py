"""A KV connector's `KV Transfer metrics:` log line → one ``kv_transfer_metrics`` row.

Upstream printer: vLLM V1 ``distributed/kv_transfer/kv_connector/v1/metrics.py``
(``KVConnectorLogging.log``, beside the engine's stats line), its figures the connector's own:
NixlConnector's ``nixl/stats.py`` (``NixlKVConnectorStats.reduce``) prints::

    (APIServer pid=7) INFO 11-23 09:33:16 [loggers.py:335] KV Transfer metrics: Num successful
    transfers=12, Avg xfer time (ms)=3.512, P90 xfer time (ms)=5.1, Avg post time (ms)=0.21, ...

Each label is a column by its snake_case name (``Avg xfer time (ms)`` → ``avg_xfer_time_ms``,
``Throughput (MB/s)`` → ``throughput_mb_per_s``); a label no column knows (another connector's)
goes to ``extra`` by the same name.  A figure that is no number is null, with a warning.
"""

from __future__ import annotations

import re
from typing import Any

from lark import Lark, v_args

from ..schemas.models import fields_of
from ..schemas.server import KVTransferMetric
from . import grammar
from .base import Context, LineFormat, Parsed
from .grammar import ColumnTransformer, figure, snake_name
from .vllm_server_log import row_from_log_line, split_log_line


@v_args(inline=True)
class LineToItems(ColumnTransformer):
    """Tree → [(label, value text)]."""

    def start(self, _head, *items):
        return list(items)

    def item(self, label, value):
        return " ".join(str(label).split()), str(value)

    def column(self, name, children):      # pragma: no cover - every rule has its method
        raise NotImplementedError(name)


def _parser() -> Lark:
    return grammar.in_parser("kv_transfer.lark", __file__, LineToItems)


def build(line: int, text: str, context: Context) -> Parsed:
    log = split_log_line(text)
    items = grammar.parse(_parser(), log.message, "KV transfer metrics line")
    known = fields_of(KVTransferMetric)
    columns: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    warnings = []
    for label, printed in items:
        name = snake_name(label)       # `Throughput (MB/s)` → throughput_mb_per_s
        value = figure(printed)
        if value is None:
            warnings.append((line, f"{label}: cannot read {printed!r}, stored as null"))
        target = columns if name in known and name not in ("extra", "id") else extra
        target[name] = value
    return Parsed(row=row_from_log_line(KVTransferMetric, log, context, columns, extra),
                  warnings=warnings)


FORMAT = LineFormat(
    name="kv_transfer",
    table="kv_transfer_metrics",
    description="A KV connector's `KV Transfer metrics:` stats line (vLLM V1, prefill/decode "
                "disaggregation: NixlConnector's transfers, times, throughput, failures).",
    upstream=("vllm 0.11 – 0.33 V1 kv_connector/v1/metrics.py",),
    markers=("KV Transfer metrics:",),
    pattern=re.compile(r"(?:^|[\s\]|])KV Transfer metrics: [A-Za-z]"),
    build=build,
)
