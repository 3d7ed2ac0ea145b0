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
* Some numbers must keep their width for the text to parse (a log line's `11:40:26`): when the
  wide sentinels fail, each slot is probed alone with a wide sentinel while the others get
  sentinels as wide as their own numbers; the slots that cannot widen are *fixed*, and the
  template then holds for texts whose fixed slots have the widths it was learnt with (part of
  its key).
"""

from __future__ import annotations

import operator
import re
from typing import Any, Callable

# A standalone number: not part of a word, a version, an address, an exponent or `1,024`
# (a sentence's full stop after it, `run 41.`, leaves it standing alone; a zero-padded
# `05` of a timestamp is one too).
SLOT_RE = re.compile(r"(?<![\w.])(?<!\d,)(\d+(?:\.\d+)?)(?!\w|\.\d|,\d)")
# What a parser's cache may hold: shapes are a block or a line (a few hundred bytes to a few
# KB); past the budget new shapes are parsed every time, so memory stays flat on any file.
MAX_CACHED_CHARS = 8 << 20
MAX_TEXT = 16 << 10        # a longer text (a pasted 1 MB line) is parsed, never cached
MAX_WIDTH_PROBES = 32      # a shape with more slots is not probed slot by slot
_PLAIN = (str, int, float, bool, type(None))
_UNCACHEABLE = object()


class _Refused:
    """A shape the grammar refuses whatever its numbers (the text and its sentinel probe both
    failed): the refusal is given again without parsing -- e.g. a log line joined with the
    prose after it, tried as a wrapped record on every repeat."""

    __slots__ = ("error",)

    def __init__(self, error: Exception):
        self.error = error


# bytes.translate: ten times str.translate's speed on a 200-character line.
_DIGITS_AS_ONE = bytes.maketrans(b"0123456789", b"1111111111")
_DIGIT = re.compile("[0-9]")


def layout_of(text: str) -> bytes:
    """The text with every digit as `1`: the layout cache's key."""
    return text.encode("utf-8", "surrogatepass").translate(_DIGITS_AS_ONE)


def _getter(items: list) -> Callable[[Any], tuple]:
    """operator.itemgetter that always gives a tuple (also of one item or none)."""
    if len(items) == 1:
        item = items[0]
        return lambda x: (x[item],)
    return operator.itemgetter(*items) if items else (lambda _x: ())


class _Layout:
    """Where a layout's slots are and its literal parts holding digits (to be the same), each
    read off a text by one itemgetter."""

    __slots__ = ("template", "slots", "literals", "expected")

    def __init__(self, template: Callable[[Any], Any], pieces: list[str]):
        spans, literals, expected, pos = [], [], [], 0
        for i, piece in enumerate(pieces):
            if i % 2:
                spans.append(slice(pos, pos + len(piece)))
            elif _DIGIT.search(piece):
                literals.append(slice(pos, pos + len(piece)))
                expected.append(piece)
            pos += len(piece)
        self.template = template
        self.slots, self.literals = _getter(spans), _getter(literals)
        self.expected = tuple(expected)

    def read(self, text: str) -> Any:
        """The template's result for ``text``, or _MISMATCH when ``text`` is not of this
        layout after all."""
        if self.literals(text) != self.expected:
            return _MISMATCH
        return self.template(self.slots(text))


_MISMATCH = object()


def _sentinel(index: int, text: str) -> str:
    # Decimals end in 0, so a grammar that re-renders the number (str(float(x))) loses it.
    whole = 8_000_000 + 7 * index
    return f"{whole}.250" if "." in text else str(whole)


def _narrow_sentinels(slots: list[str]) -> list[str] | None:
    """A sentinel per slot as wide as its number (digits before and after the point), all
    distinct and none equal to a slot; None when there are not enough of some width."""
    taken = set(slots)
    out = []
    for slot in slots:
        whole, dot, frac = slot.partition(".")
        low = 10 ** (len(whole) - 1) if len(whole) > 1 else 1
        tail = dot + "7" * len(frac)
        found = next((f"{v}{tail}" for v in range(10 ** len(whole) - 1, low - 1, -1)
                      if f"{v}{tail}" not in taken), None)
        if found is None:
            return None
        taken.add(found)
        out.append(found)
    return out


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


_NUMBER_RUN = re.compile(r"(\d+(?:\.\d+)?)")


def _split_sentinels(text: str, sentinels: dict[str, int]) -> list[str]:
    """``text`` as literal parts around the sentinels in it (each a whole run of digits):
    [literal, sentinel, literal, ...]."""
    pieces = _NUMBER_RUN.split(text)
    out = [pieces[0]]
    for i in range(1, len(pieces), 2):
        if pieces[i] in sentinels:
            out += [pieces[i], pieces[i + 1]]
        else:
            out[-1] += pieces[i] + pieces[i + 1]
    return out


def _learn(probe_out: Any, sentinels: dict[str, int]) -> Any:
    """``probe_out`` with every sentinel replaced by a reference to its slot."""
    kind = type(probe_out)
    if kind is str:
        if probe_out in sentinels:
            return _Slot(sentinels[probe_out], str)
        pieces = _split_sentinels(probe_out, sentinels)
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
        return kind(_learn(item, sentinels) for item in probe_out)
    if kind is dict:
        return {_learn(k, sentinels): _learn(v, sentinels)
                for k, v in probe_out.items()}
    raise TypeError(kind)


def _compile(template: Any) -> Callable[[list[str]], Any]:
    """``template`` as a function of the slots, written as one Python expression (a
    200-character stats line's dict of 20 columns: ~1 µs, a fifth of walking the template):
    containers are built new on every call (a caller may change them), leaves no slot reaches
    are constants."""
    constants: list[Any] = []

    def constant(value: Any) -> str:
        constants.append(value)
        return f"K[{len(constants) - 1}]"

    def expression(part: Any) -> str:
        kind = type(part)
        if kind is _Slot:
            slot = f"s[{part.index}]"
            return slot if part.kind is str else f"{_CONVERSIONS[part.kind]}({slot})"
        if kind is _Spliced:
            return "(" + " + ".join(f"s[{p}]" if type(p) is int else constant(p)
                                    for p in part.parts if p != "") + ")"
        if kind is list:
            return "[" + ", ".join(expression(item) for item in part) + "]"
        if kind is tuple:
            return "(" + "".join(expression(item) + ", " for item in part) + ")"
        if kind is dict:
            return "{" + ", ".join(f"{expression(k)}: {expression(v)}"
                                   for k, v in part.items()) + "}"
        return constant(part)

    source = "lambda s: " + expression(template)
    built = eval(source, {"K": constants, "float": float, "int": int})  # noqa: S307 (our own)
    return built


_CONVERSIONS = {float: "float", int: "int"}


def _wide_sentinels(slots: list[str]) -> list[str]:
    return [_sentinel(i, s) for i, s in enumerate(slots)]


def _filled(pieces: list[str], values: list[str]) -> str:
    """The text with slot ``i`` replaced by ``values[i]``."""
    return "".join(p if i % 2 == 0 else values[i // 2] for i, p in enumerate(pieces))


class _Fixed:
    """A shape whose template holds only for the widths of these slots (see the module)."""

    __slots__ = ("slots",)

    def __init__(self, slots: tuple[int, ...]):
        self.slots = slots

    def key(self, key: str, slots: list[str]) -> str:
        return key + "\x00" + ",".join(str(len(slots[i])) for i in self.slots)


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

    def __init__(self, parse: Callable[[str], Any], budget: int | None = None):
        self.parse = parse
        self.budget = MAX_CACHED_CHARS if budget is None else budget
        self.shapes: dict[str, Any] = {}
        # Text with every digit as `1` → _Layout: the same layout has its slots in the same
        # places, so a text seen before in that layout needs no regex -- once the digits that
        # are text, not numbers (`P99`, `v0.6.6`), are checked to be the same.
        self.layouts: dict[str, Any] = {}
        self.cached_chars = 0
        self.hits = self.misses = 0

    def _room(self, chars: int) -> bool:
        if self.cached_chars + chars > self.budget:
            return False
        self.cached_chars += chars
        return True

    def __call__(self, text: str) -> Any:
        if len(text) > MAX_TEXT:
            return self.parse(text)
        layout = layout_of(text)
        known = self.layouts.get(layout)
        if known is not None:
            result = known.read(text)
            if result is not _MISMATCH:
                self.hits += 1
                return result
        pieces = SLOT_RE.split(text)
        slots = pieces[1::2]
        key = "\x00".join(pieces[0::2]) + "\x00" + "".join("f" if "." in s else "i" for s in slots)
        template = self.shapes.get(key)
        fixed = None
        if type(template) is _Fixed:
            fixed, key = template, template.key(key, slots)
            template = self.shapes.get(key)
        if template is None:
            self.misses += 1
            try:
                result = self.parse(text)
            except Exception as error:
                if self._refused_whatever_numbers(pieces, slots) and self._room(len(key)):
                    self.shapes[key] = _Refused(error)
                raise
            if self._room(2 * len(key)):
                template, needs = self._template(pieces, slots, result)
                if needs is None or fixed is not None and needs.slots == fixed.slots:
                    self._keep(key, template)
                elif fixed is None:
                    self._keep(key, needs)       # the shape's key: go on by widths
                    self._keep(needs.key(key, slots), template)
                # else: widths other than the shape's fixed ones matter here; only this
                # layout (exact widths) keeps the template.
        elif type(template) is _Refused:
            self.hits += 1
            raise template.error.with_traceback(None)
        elif template is not _UNCACHEABLE:
            self.hits += 1
            result = template(slots)
        else:
            result = self.parse(text)
        if template is not None and template is not _UNCACHEABLE and self._room(len(layout)):
            self.layouts[layout] = _Layout(template, pieces)
        return result

    def _keep(self, key: str, template: Any) -> None:
        self.shapes[key] = template

    def _refused_whatever_numbers(self, pieces: list[str], slots: list[str]) -> bool:
        try:
            self.parse(_filled(pieces, _wide_sentinels(slots)))
        except Exception:
            return True
        return False

    def _template(self, pieces: list[str], slots: list[str], result: Any
                  ) -> tuple[Any, _Fixed | None]:
        """The shape's template (or _UNCACHEABLE), and the slots whose widths it needs."""
        if not _plain(result):
            return _UNCACHEABLE, None
        wide = _wide_sentinels(slots)
        built = self._learnt(pieces, slots, result, wide)
        if built is not None:
            return built, None
        narrow = _narrow_sentinels(slots) if len(slots) <= MAX_WIDTH_PROBES else None
        if narrow is None:
            return _UNCACHEABLE, None
        fixed = tuple(i for i in range(len(slots)) if self._learnt(
            pieces, slots, result, [*narrow[:i], wide[i], *narrow[i + 1:]]) is None)
        if not fixed or len(fixed) == len(slots):
            return _UNCACHEABLE, None
        built = self._learnt(pieces, slots, result,
                             [narrow[i] if i in fixed else wide[i] for i in range(len(slots))])
        return (built, _Fixed(fixed)) if built is not None else (_UNCACHEABLE, None)

    def _learnt(self, pieces: list[str], slots: list[str], result: Any,
                sentinels: list[str]) -> Callable[[list[str]], Any] | None:
        """The template learnt from the text with ``sentinels`` in its slots, if it gives
        back ``result`` for the text's own numbers."""
        try:
            probe_out = self.parse(_filled(pieces, sentinels))
        except Exception:  # the sentinels do not parse
            return None
        if not _plain(probe_out):
            return None
        index = {text: i for i, text in enumerate(sentinels)}
        built = _compile(_learn(probe_out, index))
        return built if _same(built(slots), result) else None
