"""Parse Python reprs (argparse `Namespace(...)`, `non-default args: {...}`) without eval.

>>> parse_namespace("Namespace(host='x', port=8000, request_rate=inf, seed=None)")
{'host': 'x', 'port': 8000, 'request_rate': inf, 'seed': None}
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

from lark import Lark, Transformer, v_args
from lark.exceptions import LarkError

from .memo import Memo

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "0": "\0"}
_ESCAPE_RE = re.compile(r"\\(.)")


class ReprParseError(ValueError):
    pass


def _unquote(token: str) -> str:
    body = token.lstrip("rbufRBUF")[1:-1]
    return _ESCAPE_RE.sub(lambda m: _ESCAPES.get(m.group(1), "\\" + m.group(1)), body)


def _number(text: str) -> int | float:
    lowered = text.lower()
    if "inf" in lowered or "nan" in lowered:
        return float(lowered)
    if re.fullmatch(r"[-+]?\d+", text):
        return int(text)
    return float(text)


@v_args(inline=True)
class ReprToPython(Transformer):
    def namespace(self, *kwargs):
        return dict(kw for kw in kwargs if kw is not None)

    def kwarg(self, name, value):
        return str(name), value

    def string(self, *parts):
        return "".join(_unquote(str(p)) for p in parts)

    def number(self, tok):
        return _number(str(tok))

    def const(self, tok):
        return {"None": None, "True": True, "False": False}[str(tok)]

    def list(self, *items):
        return list(items)

    # JSON has no tuples or sets: both become lists.
    tuple = list
    set = list

    def dict(self, *pairs):
        return {_key(k): v for k, v in pairs}

    def pair(self, key, value):
        return key, value

    def repr_obj(self, tok):
        # `<ConfigFormat.AUTO: 'auto'>` means 'auto'; `<function f at 0x..>` keeps its text.
        text = str(tok)
        enum_value = re.fullmatch(r"<[\w.]+:\s*(.+)>", text)
        if enum_value:
            inner = enum_value.group(1).strip()
            if inner[:1] in "'\"":
                return _unquote(inner)
            try:
                return _number(inner)
            except ValueError:
                return inner
        return text

    def call(self, name, *args):
        # A nested config repr such as `LLMConfig(x=1)`: keep its name and arguments.
        return {"__repr__": str(name), "args": [list(a) if isinstance(a, tuple) else a for a in args]}

    def bare_name(self, *names):
        text = ".".join(str(n) for n in names)
        return float(text) if text in ("inf", "nan") else text


def _key(key: Any) -> Any:
    # JSON object keys must be strings: tuples such as (256, 256, 1) become "256,256,1".
    if isinstance(key, list):
        return ",".join(str(k) for k in key)
    if isinstance(key, dict):       # (not Python, but a hand-edited or garbled Namespace)
        return json.dumps(key, sort_keys=True)
    return key


@lru_cache(maxsize=None)
def _parser(start: str) -> Lark:
    return Lark.open("pyliteral.lark", rel_to=__file__, parser="lalr", start=start,
                     transformer=ReprToPython(), maybe_placeholders=False, cache=True)


def parse_namespace(text: str) -> dict[str, Any]:
    """`Namespace(a=1, ...)` → dict; raises ReprParseError with the column on bad input."""
    return _parse(text.strip(), "namespace")


def parse_value(text: str) -> Any:
    """A single repr such as `{'model': 'x', 'tensor_parallel_size': 2}`."""
    return _parse(text.strip(), "value")


@lru_cache(maxsize=None)
def _memo(start: str) -> Memo:
    # A sweep prints one Namespace per run, the same but for a number or two.
    return Memo(_parser(start).parse)


def _parse(text: str, start: str) -> Any:
    try:
        return _memo(start)(text)
    except LarkError as exc:
        column = getattr(exc, "column", None)
        where = f" at column {column}" if column not in (None, -1) else ""
        raise ReprParseError(f"not a Python repr{where}: {str(exc).splitlines()[0]}") from None
