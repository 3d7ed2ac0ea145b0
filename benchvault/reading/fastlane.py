"""The segmenter's fast lane: single-line records of a plain log, read once per shape.

A server log prints the same engine-stats line every few seconds for days.  The segmenter's
full pass asks of each such line a dozen questions (does it start a block, a pasted file, a
command, a comment; does it wrap; which line format reads it) and the grammar reads it; the
answers depend only on the line's *shape* (see memo.py) and on the context the line is in
(section, label, tags), which such a line never changes.  So the first line of each shape in
a context goes through exactly those questions and the line format's own ``build``; the
answer -- "not a lone record" or the row it gave -- is kept as a memo template, and later lines
of that shape get their row from the template, validated by the row's model as any row is.

The lane runs only where it cannot change what the segmenter would have done: a plain log
(not a markdown note), nothing open (block, pasted file, joined or wrapped line, comment-prefix
run), the line no context line, block start, pasted-file opener or command, exactly one line
format reading it, and -- when the line is as wide as a terminal -- the next line no end of it.
Anything else goes back to the full pass at that very line.  Rows, context and links come out
the same either way (tests/test_fastlane.py compares both on whole files).
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from pydantic import BaseModel

from ..parsers.base import Parsed
from .memo import Memo

STAMPED = ("line_start", "line_end", "raw_text")
MAX_CONTEXTS = 16


def _checks_only_types(model: type[BaseModel]) -> bool:
    """Does validating a ``model`` row only check each value's type (no validators, no
    constraints)?  Then a row a template built is valid as it stands: the template gives each
    column the very type the validated row of its shape had (memo.py checks that), so
    validating again would change nothing."""
    found = model.__pydantic_decorators__
    if found.validators or found.field_validators or found.root_validators \
            or found.model_validators:
        return False
    return not any(field.metadata for field in model.model_fields.values())


def _built(model: type[BaseModel], values: dict[str, Any]) -> BaseModel:
    """A ``model`` row of ``values`` as they are (what model_construct does, at a sixth of
    its cost: every field is given)."""
    row = model.__new__(model)
    setattr_ = object.__setattr__
    setattr_(row, "__dict__", values)
    # Every field is set: one set per model serves every row (pydantic only adds to it, the
    # names of fields already in it).
    setattr_(row, "__pydantic_fields_set__", _all_fields(model))
    setattr_(row, "__pydantic_extra__", None)
    setattr_(row, "__pydantic_private__", None)
    return row


@functools.lru_cache(maxsize=None)
def _all_fields(model: type[BaseModel]) -> set[str]:
    return set(model.model_fields)


# What the lanes have learnt, shared by every file this process reads (a many-file ingest
# would otherwise learn each shape again per file): a memo per context, the few last used
# kept, each within its own budget; the row models by number; the verdicts on line pairs.
MEMO_BUDGET = 1 << 20
_MEMOS: dict[tuple, Memo] = {}
# "module:qualname" → (model, validating it checks types only): a name, not the class, in the
# memo's plain data.
_MODELS: dict[str, tuple[type[BaseModel], bool]] = {}
_PAIRS = Memo(lambda pair: None, MEMO_BUDGET)   # its parse set by each lane


class FastLane:
    """The lane of one file's segmenter (reading/segmenter.py, which makes it and hands it
    itself: the lane asks it the questions its full pass asks)."""

    def __init__(self, segmenter: Any):
        self.seg = segmenter
        self.formats = segmenter.line_formats
        self.context: tuple | None = None
        self.memo: Memo | None = None
        self.alone = _PAIRS
        self.alone.parse = self._ends_alone
        self.taken = 0
        # Rows read here, given out by the segmenter before the line that stopped the lane.
        self.out: list[Parsed] = []

    def enter(self) -> None:
        """Called before the lane takes lines: the memo of the context they are in (a log's
        `# c=16` label comes and goes with each run, so a few contexts are kept).  A memo
        learns by asking this file's segmenter: any file's, in that context, answers alike."""
        ctx = self.seg.ctx
        key = (ctx.section_text, ctx.label_or_heading, tuple(sorted(ctx.tags.items())))
        if key == self.context and self.memo.parse == self._judge:
            return
        memo = _MEMOS.pop(key, None) or Memo(self._judge, MEMO_BUDGET)
        _MEMOS[key] = memo        # most recent last
        if len(_MEMOS) > MAX_CONTEXTS:
            del _MEMOS[next(iter(_MEMOS))]
        memo.parse = self._judge
        self.context, self.memo = key, memo

    def __call__(self, lineno: int, text: str, peek: Callable[[], str | None]) -> bool:
        """Take the line (its row goes to ``out``) or leave it to the full pass (False)."""
        seg = self.seg
        if lineno <= seg.refused_until:
            return False
        answer = self.memo(text)     # (_judge refuses by None, never by raising)
        if answer is None:
            return False
        width = len(text)
        if width >= seg._wrap_width() and not self._stands_whole(text, peek()):
            return False
        model, values, tolerance = answer        # (a new dict each, see memo._compile)
        model, trusted = _MODELS.get(model) or _model_named(model)
        values["line_start"] = values["line_end"] = lineno
        values["raw_text"] = text
        row = _built(model, values) if trusted else model.model_validate(values)
        self.out.append(Parsed(row=row, tolerance=tolerance))
        self.taken += 1
        return True

    def _stands_whole(self, text: str, nxt: str | None) -> bool:
        """A line as wide as the terminal that the next line does not go on with (what the
        full pass finds with Segmenter._may_wrap and _goes_on): the widest line read whole."""
        if nxt is None or self.seg._unprefixed(nxt)[1]:
            return False      # not in this chunk, or opens a prefixed run: the full pass
        if self.seg._goes_on([text], nxt) and not (len(nxt) < len(text) - 1
                                                   and self.alone(text + "\n" + nxt)):
            return False      # maybe its wrapped end: the full pass joins it or not
        self.seg.widest_whole = max(self.seg.widest_whole, len(text))
        return True

    def _ends_alone(self, pair: str) -> bool:
        """Do these two lines not read as one record?  (Then the second, shorter than the
        first, is no wrapped end of it.)  Memoised by shape like the rows: a log prints the
        same prose after its stats lines again and again."""
        text, nxt = pair.split("\n", 1)
        return self.seg._best_reading([text, nxt]) is None

    def _judge(self, text: str) -> Any:
        """(the row model's number, the row's values, tolerance) when ``text`` is a lone
        record the full pass would read with no other effect; else None.  Plain data, for
        the memo."""
        seg = self.seg
        if seg._unprefixed(text)[1] or seg._still_open(text) or seg._starts_something(text) \
                or seg._touches_context(text):
            return None
        found = [i for i, fmt in enumerate(self.formats) if fmt.matches(text)]
        if len(found) != 1:
            return None
        fmt = self.formats[found[0]]
        try:
            parsed = fmt.build(0, text, seg.ctx.snapshot())
        except Exception:
            return None
        if not isinstance(parsed, Parsed) or parsed.children or parsed.warnings:
            return None
        row = parsed.row
        if any(getattr(row, name, None) is not None for name in STAMPED) \
                or not all(name in row.__dict__ for name in STAMPED):
            return None
        model = type(row)
        name = f"{model.__module__}:{model.__qualname__}"
        if name not in _MODELS:
            _MODELS[name] = (model, _checks_only_types(model))
        return name, dict(row.__dict__), parsed.tolerance


def _model_named(name: str) -> tuple[type[BaseModel], bool]:
    """The row model a template learnt in another process names (see _judge)."""
    import importlib

    module, _, qualname = name.partition(":")
    model = functools.reduce(getattr, qualname.split("."), importlib.import_module(module))
    _MODELS[name] = (model, _checks_only_types(model))
    return _MODELS[name]
