"""Parse each *shape* of text once: a cache keyed by the text with its numbers taken out.

A sweep prints the same result block twenty times with different numbers; a server log prints
the same stats line every ten seconds.  The grammar decides what a shape means the first time
it is seen; after that the numbers of a new text are put where the grammar put the first one's.

How the mapping is learnt, and why it is safe:

* A *slot* is a plain decimal number standing alone (`39.09`, `64`, not `P99`, `v0.6.6`,
  `1e5`, `007`, `127.0.0.1`).  The key is the text around the slots plus each slot's shape
  (whole or decimal).
* On a miss the grammar parses the text, and parses it again with every slot replaced by a
  distinct sentinel number.  Where the sentinel's result holds a sentinel (as text inside a
  string, or as the number itself) the template puts that slot.
* The template is kept only if filling it with the first text's own numbers gives exactly what
  the grammar gave for that text (same values, same types).  A grammar that computes with a
  number (`MiB → GiB`), re-formats it, or lets it change the parse fails that check and its
  shape is simply parsed every time.
* Only plain data (str, int, float, bool, None in lists, tuples and dicts) is templated; a
  result holding anything else (a lark Token with its line) is always parsed.
"""

from __future__ import annotations

import re
from typing import Any, Callable

# A standalone number: not part of a word, a version, an address, an exponent or `1,024`.
SLOT_RE = re.compile(r"(?<![\w.])(?<!\d,)((?:0|[1-9]\d*)(?:\.\d+)?)(?![\w.]|,\d)")
# What a parser's cache may hold: shapes are a block or a line (a few hundred bytes to a few
# KB); past the budget new shapes are parsed every time, so memory stays flat on any file.
MAX_CACHED_CHARS = 8 << 20
MAX_TEXT = 16 << 10        # a longer text (a pasted 1 MB line) is parsed, never cached
_PLAIN = (str, int, float, bool, type(None))
_UNCACHEABLE = object()


class _Refused:
    """A shape the grammar refuses whatever its numbers (the text and its sentinel probe both
    failed): the refusal is given again without parsing -- e.g. a log line joined with the
    prose after it, tried as a wrapped record on every repeat."""

    __slots__ = ("error",)

    def __init__(self, error: Exception):
        self.error = error


_NONZERO_DIGITS = str.maketrans("23456789", "11111111")
_NONZERO_DIGIT = re.compile("[1-9]")


def _spans(pieces: list[str]) -> tuple[list[tuple[int, int]], list[tuple[int, int, str]]]:
    """Where the slots of a ``SLOT_RE.split`` are in the text it split, and where its literal
    parts holding digits are (with those parts)."""
    spans, literals, pos = [], [], 0
    for i, piece in enumerate(pieces):
        if i % 2:
            spans.append((pos, pos + len(piece)))
        elif _NONZERO_DIGIT.search(piece):
            literals.append((pos, pos + len(piece), piece))
        pos += len(piece)
    return spans, literals


def _sentinel(index: int, text: str) -> str:
    # Decimals end in 0, so a grammar that re-renders the number (str(float(x))) loses it.
    whole = 8_000_000 + 7 * index
    return f"{whole}.250" if "." in text else str(whole)


class _Slot:
    """A leaf that was the number of slot ``index``, converted as ``kind`` (str, int, float)."""

    __slots__ = ("index", "kind")

    def __init__(self, index: int, kind: type):
        self.index, self.kind = index, kind


class _Spliced:
    """A string leaf with slots inside it: literal parts around slot indexes."""

    __slots__ = ("parts",)

    def __init__(self, parts: list[str | int]):
        self.parts = parts


def _learn(probe_out: Any, sentinels: dict[str, int], finder: re.Pattern[str]) -> Any:
    """``probe_out`` with every sentinel replaced by a reference to its slot."""
    kind = type(probe_out)
    if kind is str:
        if probe_out in sentinels:
            return _Slot(sentinels[probe_out], str)
        pieces = finder.split(probe_out)
        if len(pieces) == 1:
            return probe_out
        return _Spliced([sentinels[p] if i % 2 else p for i, p in enumerate(pieces)])
    if kind is float or kind is int:
        for text, index in sentinels.items():
            if float(text) == probe_out:
                return _Slot(index, kind)
        return probe_out
    if kind is bool or probe_out is None:
        return probe_out
    if kind is list or kind is tuple:
        return kind(_learn(item, sentinels, finder) for item in probe_out)
    if kind is dict:
        return {_learn(k, sentinels, finder): _learn(v, sentinels, finder)
                for k, v in probe_out.items()}
    raise TypeError(kind)


def _compile(template: Any) -> Callable[[list[str]], Any]:
    """``template`` as a function of the slots; parts no slot reaches are built once."""
    kind = type(template)
    if kind is _Slot:
        index, convert = template.index, template.kind
        return (lambda s: s[index]) if convert is str else (lambda s: convert(s[index]))
    if kind is _Spliced:
        parts = template.parts
        return lambda s: "".join([s[p] if type(p) is int else p for p in parts])
    if kind is list or kind is tuple:
        items = [_compile(item) for item in template]
        if kind is tuple and all(type(i) is _Constant for i in items):
            return _Constant(tuple(i.value for i in items))
        # (0, constant) | (1, index of a slot kept as text) | (2, builder): only builders
        # cost a call per use.
        parts = [(0, i.value) if type(i) is _Constant else
                 (1, t.index) if type(t) is _Slot and t.kind is str else (2, i)
                 for i, t in zip(items, template)]
        return lambda s: kind([v if c == 0 else s[v] if c == 1 else v(s) for c, v in parts])
    if kind is dict:
        pairs = [(_compile(k), _compile(v)) for k, v in template.items()]
        return lambda s: {k(s): v(s) for k, v in pairs}
    return _Constant(template)


class _Constant:
    """A part of the result no slot reaches: the same (immutable) value every time."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value

    def __call__(self, _slots: list[str]) -> Any:
        return self.value


def _probe(pieces: list[str], slots: list[str]) -> str:
    """The text with every slot replaced by its sentinel."""
    return "".join(p if i % 2 == 0 else _sentinel(i // 2, slots[i // 2])
                   for i, p in enumerate(pieces))


def _same(a: Any, b: Any) -> bool:
    """Equal values of the same types all the way down (1 == 1.0 == True is not enough)."""
    if type(a) is not type(b):
        return False
    if type(a) in (list, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if type(a) is dict:
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if type(a) is float and a != a:
        return b != b
    return a == b


def _plain(value: Any) -> bool:
    if type(value) in (list, tuple):
        return all(_plain(v) for v in value)
    if type(value) is dict:
        return all(_plain(k) and _plain(v) for k, v in value.items())
    return type(value) in _PLAIN


class Memo:
    """``Memo(parse)(text)`` is ``parse(text)``, with each shape of ``text`` parsed once."""

    def __init__(self, parse: Callable[[str], Any]):
        self.parse = parse
        self.shapes: dict[str, Any] = {}
        # Text with digits 1-9 as `1` (0 kept: `05` is no slot, `15` is) → (template, where
        # its slots are, the literal parts that hold digits): the same layout has its slots in
        # the same places, so a text seen before in that layout needs no regex -- once the
        # digits that are text, not numbers (`P99`, `v0.6.6`), are checked to be the same.
        self.layouts: dict[str, Any] = {}
        self.cached_chars = 0
        self.hits = self.misses = 0

    def _room(self, chars: int) -> bool:
        if self.cached_chars + chars > MAX_CACHED_CHARS:
            return False
        self.cached_chars += chars
        return True

    def __call__(self, text: str) -> Any:
        if len(text) > MAX_TEXT:
            return self.parse(text)
        layout = text.translate(_NONZERO_DIGITS)
        known = self.layouts.get(layout)
        if known is not None:
            template, spans, literals = known
            if all(text[a:b] == part for a, b, part in literals):
                self.hits += 1
                return template([text[a:b] for a, b in spans])
        pieces = SLOT_RE.split(text)
        slots = pieces[1::2]
        if not slots:
            return self.parse(text)
        key = "\x00".join(pieces[0::2]) + "\x00" + "".join("f" if "." in s else "i" for s in slots)
        template = self.shapes.get(key)
        if template is None:
            self.misses += 1
            try:
                result = self.parse(text)
            except Exception as error:
                if self._refused_whatever_numbers(pieces, slots) and self._room(len(key)):
                    self.shapes[key] = _Refused(error)
                raise
            if self._room(len(key)):
                self.shapes[key] = template = self._template(pieces, slots, result)
        elif type(template) is _Refused:
            self.hits += 1
            raise template.error.with_traceback(None)
        elif template is not _UNCACHEABLE:
            self.hits += 1
            result = template(slots)
        else:
            result = self.parse(text)
        if template is not None and template is not _UNCACHEABLE and self._room(len(layout)):
            self.layouts[layout] = (template, *_spans(pieces))
        return result

    def _refused_whatever_numbers(self, pieces: list[str], slots: list[str]) -> bool:
        try:
            self.parse(_probe(pieces, slots))
        except Exception:
            return True
        return False

    def _template(self, pieces: list[str], slots: list[str], result: Any) -> Any:
        if not _plain(result):
            return _UNCACHEABLE
        probe_slots = [_sentinel(i, s) for i, s in enumerate(slots)]
        try:
            probe_out = self.parse(_probe(pieces, slots))
        except Exception:  # the sentinels do not parse: this shape is parsed every time
            return _UNCACHEABLE
        if not _plain(probe_out):
            return _UNCACHEABLE
        sentinels = {text: i for i, text in enumerate(probe_slots)}
        finder = re.compile("(" + "|".join(re.escape(s) for s in
                                          sorted(sentinels, key=len, reverse=True)) + ")")
        built = _compile(_learn(probe_out, sentinels, finder))
        return built if _same(built(slots), result) else _UNCACHEABLE
