"""Plumbing every format's lark grammar shares: the in-parser transformer base and the one way
a parse failure becomes a :class:`BlockParseError` that names the line."""

from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import Any

from lark import Lark, Transformer, Tree
from lark.exceptions import LarkError, UnexpectedInput

from .base import BlockParseError
from ..reading.memo import Memo

_MEMOS: dict[int, Memo] = {}


class ColumnTransformer(Transformer):
    """Base for transformers that run inside the LALR parser (no parse tree is built).

    lark's own helper rules (``_item``, ``__start_star_0``) reach ``__default__`` there; they are
    handed back as Trees for lark to inline.  Every other rule without a method is named after
    its column and goes to :meth:`column`.
    """

    def __default__(self, data, children, meta):
        if data.startswith("_") or data == "item":
            return Tree(data, children)
        return self.column(str(data), children)

    def column(self, name: str, children: list[Any]) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError


def flatten(items):
    """Results with lark's helper-rule Trees (``_item``, ``_items``) opened up, in order."""
    for item in items:
        if isinstance(item, Tree):
            yield from flatten(item.children)
        else:
            yield item


# A printed figure: a number, `nan` or `inf`.
FIGURE_RE = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|nan|inf")


def figure(text: Any) -> float | None:
    """The printed value as a float; None when it is no number (a garbled `67!.0`)."""
    text = str(text)
    return float(text) if FIGURE_RE.fullmatch(text) else None


@lru_cache(maxsize=4096)
def snake_name(label: str) -> str:
    """The name a printed label is kept under in ``extra``: snake_case, its unit a word of
    it as upstream's keys carry it (`gen throughput (token/s)` → `gen_throughput_token_per_s`,
    `#new-seq` → `num_new_seq`, `SLO attainment (%)` → `slo_attainment_pct`), never the label
    with its blanks, colons and slashes."""
    text = label.strip().rstrip(":").strip()
    text = text.replace("#", " num ").replace("%", " pct ").replace("/", " per ")
    text = re.sub(r"(?<=[a-z0-9])(?=[A-Z][a-z])", " ", text)       # camelCase words
    return re.sub(r"[^0-9a-z]+", "_", text.lower()).strip("_") or "value"


def line_values(items) -> tuple[dict[str, Any], dict[str, Any], list[list[str]]]:
    """A log line's items as (columns, extra, unread): ``(column, value)`` items fill their
    column (a None value none), ``("other", (label, value))`` goes to extra by its label, and
    an item with more than two parts carries what could not be read (name, label, text)."""
    columns: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    unread: list[list[str]] = []
    for item in flatten(items):
        name, value = item[0], item[1]
        if len(item) > 2:
            unread.append(list(item[2:]))
        if name == "other":
            extra[snake_name(value[0])] = value[1]
        elif value is not None:
            columns[name] = value
    return columns, extra, unread


@lru_cache(maxsize=None)
def in_parser(grammar_file: str, module_file: str, transformer: type[Transformer]) -> Lark:
    """The LALR parser of ``grammar_file`` (beside ``module_file``) with ``transformer`` run
    inside it: no parse tree is built, about twice as fast.  Built once per process."""
    # cache=True: lark keeps the grammar's analysis in the temp dir (10x faster start-up).
    parser = Lark.open(grammar_file, rel_to=module_file, parser="lalr", maybe_placeholders=False,
                       transformer=transformer(), cache=True)
    return parser


FIELD_IN_REMARK = re.compile(r"[:=]\s*[-+]?\.?\d")


def _remark_at(text: str, column: int | None) -> int | None:
    """Where a writer's remark starts after a one-line record (`... available_gpu_mem=17.22 GB
    ⎵⎵means the KV cache is 2M?`): the grammar stopped at words two blanks or more after the
    record.  None: no such remark."""
    if not column or column < 3 or "\n" in text:
        return None
    at = column - 1
    # (words, not a field the grammar does not know: `Label: 3` or `key=3` is data)
    return at if text[at - 2:at].isspace() and not text[at].isdigit() \
        and not FIELD_IN_REMARK.search(text, at) else None


def parse(parser: Lark, text: str, what: str) -> Any:
    """``parser.parse(text)`` (each shape of text parsed once, see :mod:`.memo`), or a
    BlockParseError naming the line (within ``text``) and what was found there:
    ``unexpected line in <what>: '<that line>'``."""
    memo = _MEMOS.get(id(parser))
    if memo is None:
        memo = _MEMOS[id(parser)] = Memo(parser.parse)
    try:
        return memo(text)
    except UnexpectedInput as exc:
        remark = _remark_at(text, getattr(exc, "column", None))
        if remark is not None:
            try:
                return memo(text[:remark].rstrip())
            except LarkError:
                pass
        line = getattr(exc, "line", None)
        lines = text.splitlines()
        bad = lines[line - 1].strip() if line and 0 < line <= len(lines) else text[:120]
        column = getattr(exc, "column", None)
        where = f" (column {column})" if column and column > 0 and len(lines) <= 1 else ""
        raise BlockParseError(f"unexpected line in {what}{where}: {bad[:200]!r}", line) from None
    except LarkError as exc:
        raise BlockParseError(f"cannot read {what}: {exc}") from None


def finite(value: float) -> bool:
    """A number a float column holds: not inf or nan, nor an integer too large to be a float
    (a 400-digit count)."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def whole_number(value: float, what: str) -> int:
    """A count as an int; `inf`, `nan` or `2.5` where a count belongs is an error, not a crash."""
    if not finite(value) or value != int(value):
        raise BlockParseError(f"{what}: {value!r} is not a whole number")
    return int(value)
