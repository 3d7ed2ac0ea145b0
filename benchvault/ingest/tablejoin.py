"""Runs retyped over several tables, one after another, joined row by row.

People split one comparison over tables: throughput in one, latency in the next, the same runs
in the same order (`| Concurrency | vLLM Avg Lat(s) | sglang Avg Lat(s) |`, then the same
columns of `Gen. toks/s`), a table per phase of SGLang's one-batch results, or GuideLLM's
latency and throughput tables retyped in two fences.  Each table is
read on its own (a claimed table is its own block), so each run would be two half rows.

A table's runs join the runs of the table right before it (no other row between them) when:
they come from the same retyped-table format, there are as many, and run *i* of each agrees
with the other: the same label (or each labelled only by its own heading), and every setting
and figure both hold is the same; and the later table adds a figure.  The joined run keeps the
first table's place and context, and a warning at the later row says it was matched by its
place.
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator

from ..experiments.identity import CONTEXT, PROVENANCE
from ..parsers.base import Parsed
from .outcome import IngestWarning

# Formats whose runs a comparison may split over tables.
JOINED_FORMATS = frozenset({"serving_retyped", "sglang_one_batch_retyped", "guidellm_retyped"})
# Where a row was read and what was around it: never compared (as between sightings).
PLACE = frozenset(PROVENANCE + CONTEXT)


def joinable(item: Any) -> bool:
    """A row of a format whose runs may be split over tables."""
    # (the row's own attributes: a row without a `format` field makes getattr ask pydantic,
    # slow, and a server log has a row a line)
    return isinstance(item, Parsed) and item.row.__dict__.get("format") in JOINED_FORMATS


def _own_label(row: Any) -> str | None:
    """The run's label, None when it is only its table's heading."""
    heading = (row.section or "").split(" > ")[-1]
    return None if row.label == heading else row.label


def _agree(first: Any, later: Any) -> bool:
    if type(first) is not type(later) or first.format != later.format \
            or _own_label(first) != _own_label(later):
        return False
    adds = False
    for name in type(first).model_fields:
        if name in PLACE:
            continue
        a, b = getattr(first, name), getattr(later, name)
        if a is not None and b is not None and a != b:
            return False
        adds = adds or (a is None and b is not None)
    return adds


def join(first: list[Parsed], later: list[Parsed]) -> list[Parsed] | None:
    """The rows of ``first``'s table with ``later``'s joined into them, row by row; None when
    the two tables are not one comparison."""
    if len(first) != len(later) or not all(_agree(a.row, b.row) for a, b in zip(first, later)):
        return None
    out = []
    for a, b in zip(first, later):
        filled = {n: getattr(b.row, n) for n in type(b.row).model_fields
                  if n not in PLACE and getattr(a.row, n) is None
                  and getattr(b.row, n) is not None}
        extra = {**(b.row.extra or {}), **(a.row.extra or {})} or None
        if _own_label(a.row) is None and a.row.section != b.row.section:
            # (each labelled by its own heading, `Prefill` and `Decode`: the run is the
            # section both stand in)
            shared = _common(a.row.section, b.row.section)
            filled.update(section=" > ".join(shared) or None,
                          label=shared[-1] if shared else None)
        row = a.row.model_copy(update={**filled, "extra": extra,
                                       "line_end": max(a.row.line_end, b.row.line_end),
                                       "raw_text": f"{a.row.raw_text}\n{b.row.raw_text}"})
        tolerance = None if a.tolerance is None and b.tolerance is None else \
            {**(b.tolerance or {}), **(a.tolerance or {})}
        out.append(Parsed(row=row, children=[*a.children, *b.children], tolerance=tolerance))
    return out


def _common(a: str | None, b: str | None) -> list[str]:
    """The headings two sections share, from the top."""
    out = []
    for x, y in zip((a or "").split(" > "), (b or "").split(" > ")):
        if x != y or not x:
            break
        out.append(x)
    return out


def joined(groups: Iterable[list]) -> Iterator[Any]:
    """The items of each group (a block's rows and warnings, or one item), in order, with the
    runs of a table joined into the table's right before it where they are one comparison
    (``join``): the joined rows take the first table's place, after both tables' warnings."""
    held: list | None = None        # the last table's items, while the next may join them
    for items in groups:
        rows = [i for i in items if joinable(i)]
        if held is not None and rows:
            merged = join([i for i in held if joinable(i)], rows)
            if merged is not None:
                notes = [IngestWarning(b.row.line_start, f"{b.row.format}: the same run as "
                                       f"the one at line {a.row.line_start} of the table "
                                       f"before, by its place: joined", b.row.format)
                         for a, b in zip(merged, rows)]
                held = [*(i for i in held if not joinable(i)),
                        *(i for i in items if not joinable(i)), *notes, *merged]
                continue
        if held is not None:
            yield from held
            held = None
        if rows and all(joinable(i) or isinstance(i, IngestWarning) for i in items):
            held = list(items)
        else:
            yield from items
    if held is not None:
        yield from held
