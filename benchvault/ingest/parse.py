"""Parse: each piece of a file built into validated rows by its format's grammar.

Every problem becomes a warning at its file line, with the text it concerns; one piece that
cannot be built costs that piece only.  A whole-file format reads its file itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator

from pydantic import ValidationError

from ..parsers.base import Block, BlockParseError, Context, Facts, FileFormat, Parsed, Problem
from ..reading.lines import ReadReport
from ..schemas import store
from ..schemas.models import INCOMPLETE, fields_of
from .outcome import IngestWarning
from .read import head_of, pieces, whole_format
from .tablejoin import joined


@dataclass
class Parsing:
    """One file read and parsed (in this process or a worker): its items in file order and
    what reading it found (encoding, lines not UTF-8)."""

    items: list
    report: ReadReport


def parse_file(path: Path, tags: dict[str, str] | None = None,
               report: ReadReport | None = None,
               defer: Callable[[], bool] | None = None) -> Iterator[Parsed | IngestWarning]:
    """Every row (with children), fact and warning in ``path``, in file order.  ``defer``:
    asked before each complete block is built; True gives the Block itself, for the caller
    to build (build_deferred) -- a big file's worker handing some of its work to the writer."""
    report = report if report is not None else ReadReport()
    head = head_of(path)
    whole = whole_format(path, head)
    if whole is not None:
        yield from _read_whole(whole, path, tags, report.on_bytes)
        return
    yield from _built(pieces(path, head, tags, report), defer)


def parse_whole(path: str | Path, tags: dict[str, str] | None) -> Parsing:
    """``path`` read and parsed at once (a worker's reading of a small file)."""
    report = ReadReport()
    return Parsing(list(parse_file(Path(path), tags, report)), report)


def build_deferred(items: Iterable[Parsed | IngestWarning | Block]
                   ) -> Iterator[Parsed | IngestWarning]:
    """``items`` with each Block that parse_file's ``defer`` gave back built in its place."""
    for item in items:
        if type(item) is Block:
            yield from _build_block(item)
        else:
            yield item


def _built(items: Iterable, defer: Callable[[], bool] | None = None
           ) -> Iterator[Parsed | IngestWarning | Block]:
    # (runs a comparison split over tables are joined as the tables come: tablejoin)
    return joined(_groups(items, defer))


def _groups(items: Iterable, defer: Callable[[], bool] | None = None
            ) -> Iterator[list[Parsed | IngestWarning | Block]]:
    """What each item gives: a block's rows and warnings together, any other one alone."""
    from ..reading.embedded import Embedded
    from ..reading.segmenter import LineHit, Truncated, Unclosed, WrapCut

    for item in items:
        if isinstance(item, (Parsed, IngestWarning)):   # a row the fast lane read; a warning
            yield [item]
        elif isinstance(item, Embedded):
            yield list(_read_embedded(item))
        elif isinstance(item, WrapCut):
            yield [IngestWarning(item.line_start, f"a wrapped line (lines {item.line_start}-"
                                 f"{item.line_end}) reads neither alone nor joined: kept raw",
                                 None, item.text)]
        elif isinstance(item, Truncated):
            yield [IngestWarning(item.line_start, f"{item.format.name}: block starts here but "
                                 f"never ends (cut off at line {item.line_end}?)",
                                 item.format.name, "\n".join(item.lines))]
        elif isinstance(item, Unclosed):
            yield list(_build_unclosed(item))
        elif isinstance(item, Block):
            if defer is not None and defer():
                yield [item]
            else:
                yield list(_build_block(item))
        elif isinstance(item, LineHit):
            yield list(_build_line(item))


def _read_whole(fmt: FileFormat, path: Path, tags: dict[str, str] | None,
                on_bytes: Callable[[int], None] | None = None
                ) -> Iterator[Parsed | IngestWarning]:
    from ..reading.progress import reporting

    items = iter(fmt.read(path, Context(path=str(path), tags=dict(tags or {}))))
    while True:
        # The bar moves as a 500 MB result JSON is read; asked only while the format reads,
        # not while this waits on the writer (nothing else is counted if it never resumes).
        with reporting(on_bytes):
            item = next(items, _DONE)
        if item is _DONE:
            return
        if isinstance(item, Problem):
            yield IngestWarning(item.line, f"{fmt.name}: {item.reason}", fmt.name, item.raw_text)
        else:
            yield item


_DONE = object()


def _read_embedded(item) -> Iterator[Parsed | IngestWarning]:
    """A pasted output file read by its format exactly as the file itself (from a scratch copy:
    the readers stream files), its lines and the note's context put back on every row."""
    import tempfile

    fmt = item.format
    note = fmt.note_context(item.context) if fmt.note_context is not None else {}

    def line(k: int) -> int:
        return item.lines[min(max(k, 1), len(item.lines)) - 1]

    with tempfile.TemporaryDirectory(prefix="benchvault-pasted-") as scratch:
        copy = Path(scratch) / "pasted"
        copy.write_text(item.text, encoding="utf-8")
        got = list(fmt.read(copy, item.context))
    for number, text in item.skipped:
        yield IngestWarning(number, f"{fmt.name} (pasted, lines {item.line_start}-"
                            f"{item.line_end}): not a line of the pasted output: skipped",
                            fmt.name, text)
    starts = [g.row.line_start or 1 for g in got if not isinstance(g, Problem)]
    # A record read from one line (a JSON value's first) spans to the next record's start.
    ends = [max(a, b - 1) for a, b in zip(starts, starts[1:])] + [len(item.lines)]
    rows = iter(zip(starts, ends))
    for parsed in got:
        if isinstance(parsed, Problem):
            yield IngestWarning(line(parsed.line), f"{fmt.name} (pasted, lines "
                                f"{item.line_start}-{item.line_end}): {parsed.reason}",
                                fmt.name, parsed.raw_text)
            continue
        start, end = next(rows)
        row = parsed.row
        if (row.line_end or start) > start:
            end = row.line_end
        store.assign(row, line_start=line(start), line_end=line(end), **{
            k: v for k, v in note.items()
            if k in fields_of(type(row)) and v is not None and getattr(row, k) is None})
        yield parsed


def _build_block(block: Block, text: str | None = None) -> Iterator[Parsed | IngestWarning]:
    name = block.format.name
    try:
        parsed = block.format.build(block)
    except BlockParseError as exc:
        line = block.line_start + (exc.line - 1 if exc.line else 0)
        yield IngestWarning(line, f"{name}: {exc.reason}", name, block.text)
        return
    except OverflowError as exc:      # a number no column holds, where no format looked for one
        yield IngestWarning(block.line_start, f"{name}: a number out of range ({exc})", name,
                            block.text)
        return
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        yield IngestWarning(block.line_start, f"{name}: {where}: {first.get('msg')}", name,
                            block.text)
        return
    # A table block gives a row (or a problem) per line of the table.
    for item in parsed if isinstance(parsed, list) else [parsed]:
        if isinstance(item, Problem):
            yield IngestWarning(item.line, f"{name}: {item.reason}", name, item.raw_text)
            continue
        _stamp(item, block.line_start, block.line_end, block.text if text is None else text)
        # (a table another format claimed speaks as that format: its row says which)
        who = getattr(getattr(item, "row", None), "format", None) or name
        for line, reason in item.warnings:
            yield IngestWarning(line, f"{who}: {reason}", who)
        yield item


def _build_unclosed(item) -> Iterator[Parsed | IngestWarning]:
    """A block without its closing rule, read if the grammar takes it, with a warning: as
    complete when only the rule is missing, as what it printed when it was cut short (its
    rows marked ``extra.incomplete``); else the truncation warning."""
    block = item.block
    name = block.format.name
    lines = block.lines[:-1]            # without the closing rule put back for the grammar
    built = list(_build_block(block, text="\n".join(lines)))
    # Read when it gave its row: a warning beside it (a value it could not read) costs that
    # value only.
    if not any(isinstance(b, Parsed) for b in built):
        yield IngestWarning(block.line_start, f"{name}: block starts here but never ends "
                            f"(cut off at line {block.line_end}?)", name, "\n".join(lines))
        return
    if item.cut_short:
        yield IngestWarning(item.cut_at, f"{name}: the block of lines {block.line_start}-"
                            f"{block.line_end} is cut short here: the values it printed are "
                            f"kept, marked incomplete", name, "\n".join(lines))
        for parsed in built:
            if isinstance(parsed, Parsed) and "extra" in fields_of(type(parsed.row)):
                store.assign(parsed.row, extra={**(parsed.row.extra or {}), INCOMPLETE: True})
    else:
        yield IngestWarning(item.cut_at, f"{name}: the block of lines {block.line_start}-"
                            f"{block.line_end} has no closing rule here: read as complete", name)
    yield from built


def _build_line(hit) -> Iterator[Parsed | IngestWarning]:
    name = hit.format.name
    try:
        parsed = hit.format.build(hit.line, hit.text, hit.context)
    except (BlockParseError, ValidationError, ValueError, OverflowError) as exc:
        parsed = _cut_back(hit)
        if parsed is None:
            yield IngestWarning(hit.line, f"{name}: {exc}", name, hit.text)
            return
        yield IngestWarning(hit.line, f"{name}: the record stops in its last field (cut short?): "
                            f"read without it, marked incomplete", name, hit.text)
    if isinstance(parsed, Facts):
        # One line of a record many lines assemble (a server launch): the Linker merges it.
        parsed.line, parsed.text = hit.line, hit.text
        yield from (IngestWarning(line, f"{name}: {reason}", name)
                    for line, reason in parsed.warnings)
        yield parsed
    elif parsed is not None:
        _stamp(parsed, hit.line, max(hit.line_end, hit.line), hit.text)
        # What the line could not say (a garbled value, stored as null) with the line's text.
        yield from (IngestWarning(line, f"{name}: {reason}", name, hit.text)
                    for line, reason in parsed.warnings)
        yield parsed


def _cut_back(hit) -> Parsed | None:
    """A record that ends inside its last field (a paste cut between the pieces of a wrapped
    line, a label left without its value): read without that field, if the rest reads as a row
    of its own; None otherwise."""
    text = hit.text.rstrip()
    cut = text.rfind(", ")
    if cut <= 0:
        return None
    try:
        parsed = hit.format.build(hit.line, text[:cut], hit.context)
    except (BlockParseError, ValidationError, ValueError, OverflowError):
        return None
    if not isinstance(parsed, Parsed):
        return None
    if "extra" in fields_of(type(parsed.row)):
        store.assign(parsed.row, extra={**(parsed.row.extra or {}), INCOMPLETE: True})
    return parsed


def _stamp(parsed: Parsed, start: int, end: int, text: str) -> None:
    row = parsed.row
    fields = fields_of(type(row))
    store.assign(row, **{name: value for name, value in
                         (("line_start", start), ("line_end", end), ("raw_text", text))
                         if name in fields and getattr(row, name) is None})


