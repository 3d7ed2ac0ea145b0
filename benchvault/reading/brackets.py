"""How many brackets a line leaves open: a Python repr wrapped over lines, a JSON value pasted
over many lines."""

from __future__ import annotations


def nesting(text: str, quotes: str = "'\"", opens: str = "([{", closes: str = ")]}") -> int:
    """Open brackets minus closed ones, outside quoted strings (backslash escapes)."""
    depth, quote, escaped = 0, None, False
    for ch in text:
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = None
        elif ch in quotes:
            quote = ch
        elif ch in opens:
            depth += 1
        elif ch in closes:
            depth -= 1
    return depth


def json_nesting(text: str) -> int:
    """JSON's brackets only: `'` and `(` are text there."""
    return nesting(text, quotes='"', opens="[{", closes="]}")
