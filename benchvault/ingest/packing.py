"""How a worker's items (rows, warnings, facts) reach the writer: packed lean.

A many-file ingest reads small files in a process pool (``workers``), and a big file is
parsed by a worker of its own (``stream``); this process stores the items (SQLite has one
writer).  Both sides' time counts, so the items cross as plain data: each :class:`Parsed` as
its rows' models and values, read back without validating again (the worker validated them
with the same models; ``fastlane._built``).  Pickle's own way for a pydantic model (its state,
fields set, private and extra attributes, then ``__setstate__``) took 29 µs an item to read
back against 19 µs so, on 20k result blocks; the collections the garbage collector ran
meanwhile took as long again (not run while a batch is read back: none of it is garbage).
"""

from __future__ import annotations

import functools
import gc
import pickle
from typing import Any

from ..parsers.base import Block, BlockFormat, Parsed
from ..reading.fastlane import _built


def pack(items: list[Any]) -> bytes:
    """A list of items pickled, each :class:`Parsed` as its rows' models and values and each
    :class:`Block` (left for the writer to build) with its format by name."""
    return pickle.dumps([_flat(item) if type(item) is Parsed
                         else _flat_block(item) if type(item) is Block else item
                         for item in items], protocol=pickle.HIGHEST_PROTOCOL)


def unpack(data: bytes) -> list[Any]:
    """The items :func:`pack` packed."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        return [(_block(item) if item[0] == _BLOCK else _parsed(item))
                if type(item) is tuple else item for item in pickle.loads(data)]
    finally:
        if collecting:
            gc.enable()


_BLOCK = "block"    # a packed Block's first field (a packed Parsed's is a model class)


def _flat_block(block: Block) -> tuple:
    return (_BLOCK, block.format.name, block.lines, block.line_start, block.line_end,
            block.complete, block.context)


def _block(flat: tuple) -> Block:
    _, name, lines, start, end, complete, context = flat
    return Block(_block_formats()[name], lines, start, end, complete, context)


@functools.cache
def _block_formats() -> dict[str, BlockFormat]:
    """The block formats by name (asked for every block the writer builds)."""
    from ..parsers import block_formats

    return {f.name: f for f in block_formats()}


def _flat(parsed: Parsed) -> tuple:
    children = parsed.children
    return (type(parsed.row), parsed.row.__dict__,
            [(type(c), c.__dict__) for c in children] if children else None,
            parsed.warnings or None, parsed.tolerance)


def _parsed(flat: tuple) -> Parsed:
    model, values, children, warnings, tolerance = flat
    return Parsed(_built(model, values),
                  [_built(kind, child) for kind, child in children] if children else [],
                  warnings or [], tolerance)
