"""Markdown tables: headers from the schema, numbers as printed, best values in bold, escaping.

Headers, units and "which direction is better" come from the pydantic field metadata in
``benchvault.schemas`` (``col(..., better=, label=)``) or, for derived columns, from
``derive.DERIVED``: nothing here names a metric.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
import typing
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any, Sequence

import pandas as pd

from ..schemas.store import row_models
from .derive import DERIVED

DECIMALS = 2
MAX_DECIMALS = 4


@dataclass
class Column:
    name: str
    header: str
    better: str | None = None      # "higher" | "lower" | None
    kind: str = "float"            # float | int | text
    fmt: str | None = None         # a str.format template for the value, e.g. "c={}"
    decimals: int | None = None    # None: as printed (at least 2); computed columns use 2


def _kind(annotation: Any) -> str:
    args = [a for a in typing.get_args(annotation) if a is not type(None)] or [annotation]
    if int in args and float not in args:
        return "int"
    if float in args:
        return "float"
    return "text"


def _default_header(name: str) -> str:
    return name.replace("_", " ").strip().capitalize() if name.islower() else name


def column_info(table: str | None, name: str) -> Column:
    """Header, direction and kind of ``name``: schema first, then derived, then a default.
    A fresh Column each call (callers set its header and format)."""
    return dataclasses.replace(_column_info(table, name))


@functools.lru_cache(maxsize=4096)
def _column_info(table: str | None, name: str) -> Column:
    if name in DERIVED:
        d = DERIVED[name]
        return Column(name, d.header, d.better, d.kind, decimals=DECIMALS)
    # The table's own model first, then the configuration's (its fields carry short labels).
    first = (table, "configurations")
    models = [m for t in first for m in row_models() if m.__table__ == t] + \
             [m for m in row_models() if m.__table__ not in first]
    for model in models:
        field_ = model.model_fields.get(name)
        if field_ is None:
            continue
        extra = field_.json_schema_extra if isinstance(field_.json_schema_extra, dict) else {}
        header = extra.get("label") or _default_header(name)
        return Column(name, header, extra.get("better"), _kind(field_.annotation))
    return Column(name, _default_header(name), None, "auto")


# --- values ------------------------------------------------------------------------------------

def _missing(value: Any) -> bool:
    if value is None:
        return True
    kind = value.__class__
    if kind is str or kind is int or kind is bool:
        return False
    if kind is float:
        return value != value
    if isinstance(value, float) and math.isnan(value):
        return True
    try:
        return bool(pd.isna(value)) if not isinstance(value, (list, dict, tuple)) else False
    except (TypeError, ValueError):
        return False


def format_number(value: float, decimals: int | None = DECIMALS) -> str:
    """``value`` with ``decimals`` places, rounding half up on its decimal form (71.515 → 71.52).

    ``decimals=None`` prints the value as the log did: at least two places, more when it has
    them (an acceptance rate of 0.797 stays 0.797), at most ``MAX_DECIMALS``.
    """
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if math.isnan(value):
        return ""
    if decimals is None:
        fraction = repr(round(float(value), MAX_DECIMALS)).partition(".")[2]
        decimals = DECIMALS if "e" in fraction else min(max(DECIMALS, len(fraction)),
                                                          MAX_DECIMALS)
    shortest = repr(float(value))
    whole, _, fraction = shortest.partition(".")
    if "e" not in shortest and len(fraction) <= decimals:
        # Already within `decimals` places (most logged values): nothing to round.
        text = whole + "." + fraction.ljust(decimals, "0") if decimals else whole
        return "0.00" if text == "-0.00" else text
    try:
        quant = Decimal(shortest).quantize(Decimal(1).scaleb(-decimals),
                                           rounding=ROUND_HALF_UP)
    except InvalidOperation:
        return f"{value:.{decimals}f}"
    text = f"{quant:f}"
    return "0.00" if text in ("-0.00",) else text


def format_value(value: Any, column: Column) -> str:
    if _missing(value):
        return ""
    if isinstance(value, bool):
        text = "yes" if value else "no"
    elif column.kind == "int" and isinstance(value, (int, float)) and float(value).is_integer():
        text = str(int(value))
    elif column.kind in ("float", "int") and isinstance(value, (int, float)):
        text = format_number(float(value), column.decimals)
    elif column.kind == "auto" and isinstance(value, float):
        text = format_number(value, column.decimals)
    elif isinstance(value, float) and value.is_integer():
        text = str(int(value))
    else:
        text = str(value)
    return column.fmt.format(text) if column.fmt else text


# --- escaping ----------------------------------------------------------------------------------

_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?inf")
_ALWAYS = re.compile(r"([\\`*\[\]|~])")
# Any character escape_cell changes (a number never has one).
_SPECIAL = re.compile(r"[\\`*\[\]|~&<>_\r\n]")


def escape_cell(text: str) -> str:
    """Text safe inside a GFM table cell: no column break, no emphasis, code, link or HTML.

    ``|``, ``*``, backticks, brackets, ``~`` and ``\\`` are backslash-escaped; ``<``, ``>`` and
    ``&`` become entities; ``_`` is escaped unless it sits between two letters or digits
    (where GFM never reads it as emphasis, so ``Q4_K_M`` stays as it is); newlines become spaces.
    """
    text = str(text)
    if not _SPECIAL.search(text):
        return text
    text = re.sub(r"\s*[\r\n]+\s*", " ", text)
    text = _ALWAYS.sub(r"\\\1", text)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    out = []
    for i, ch in enumerate(text):
        if ch == "_":
            before = text[i - 1] if i else ""
            after = text[i + 1] if i + 1 < len(text) else ""
            if not (before.isalnum() and after.isalnum()):
                out.append("\\_")
                continue
        out.append(ch)
    return "".join(out)


def unescape_cell(text: str) -> str:
    """The text a reader sees for an escaped cell (used by tests and `compare`)."""
    text = re.sub(r"\\(.)", r"\1", text)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


# --- the table ---------------------------------------------------------------------------------

@dataclass
class Table:
    """A formatted table: headers, cell texts, and which cells are best in their column."""

    columns: list[Column]
    cells: list[list[str]]
    bold: list[list[bool]] = field(default_factory=list)

    @property
    def any_bold(self) -> bool:
        return any(any(r) for r in self.bold)

    def markdown(self) -> str:
        headers = [escape_cell(c.header) for c in self.columns]
        body = [[("**" + escape_cell(t) + "**") if (b and t) else escape_cell(t)
                 for t, b in zip(row, flags)] for row, flags in zip(self.cells, self.bold)]
        widths = [max([len(h), 3] + [len(r[i]) for r in body]) for i, h in enumerate(headers)]

        def line(values: Sequence[str]) -> str:
            return "| " + " | ".join(v.ljust(w) for v, w in zip(values, widths)) + " |"

        out = [line(headers), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
        out.extend(line(r) for r in body)
        return "\n".join(out)


def best_flags(texts: list[str], better: str | None) -> list[bool]:
    """Which printed values are the best of their column (all of them on a tie).

    Compared as printed, so two values that print the same are a tie.  A column with fewer
    than two numbers has no best.
    """
    if better not in ("higher", "lower"):
        return [False] * len(texts)
    numbers: list[float | None] = []
    for text in texts:
        try:
            match = _NUMBER.search(text) if text else None
            numbers.append(float(match[0]) if match else None)
        except ValueError:
            numbers.append(None)
    present = [n for n in numbers if n is not None and not math.isnan(n)]
    if len(present) < 2:
        return [False] * len(texts)
    best = max(present) if better == "higher" else min(present)
    return [n is not None and n == best for n in numbers]


def _column_texts(frame: pd.DataFrame, column: Column, display: dict[str, str]) -> list[str]:
    """A column's cells as printed; a mean of repeats with its spread (`829.88 ± 20.16`)."""
    source = display.get(column.name, column.name)
    values = frame[source] if source in frame else pd.Series([None] * len(frame),
                                                             index=frame.index)
    texts = [format_value(v, column) for v in values.tolist()]
    spread_column = f"_std_{column.name}"
    if spread_column in frame and column.kind in ("float", "int"):
        for i, (mean, spread) in enumerate(zip(frame[column.name].tolist(),
                                               frame[spread_column].tolist())):
            if not _missing(spread) and not _missing(mean):
                texts[i] = f"{format_number(float(mean))} ± {format_number(float(spread))}"
    return texts


def build_table(frame: pd.DataFrame, columns: list[Column], *,
                display: dict[str, str] | None = None, mark_best: bool = True,
                best_within: tuple[str, ...] = ()) -> Table:
    """Format ``frame``'s ``columns`` (showing ``display[col]`` values where given) and bold.

    With ``best_within``, the best value is picked among rows sharing those columns' values
    (llama-bench: per test, since pp512 and tg128 t/s are not comparable).
    """
    display = display or {}
    texts = [_column_texts(frame, c, display) for c in columns]
    cells = [list(row) for row in zip(*texts)] if texts else [[] for _ in range(len(frame))]
    keys = list(zip(*(frame[k].astype(str) for k in best_within))) if best_within else \
        [()] * len(frame)
    bold = [[False] * len(columns) for _ in cells]
    for group in dict.fromkeys(keys):
        members = [j for j, k in enumerate(keys) if k == group]
        for i, col in enumerate(columns):
            flags = best_flags([cells[j][i] for j in members], col.better if mark_best else None)
            for j, flag in zip(members, flags):
                bold[j][i] = flag
    return Table(columns, cells, bold)
