"""What a format module declares, and what the segmenter hands it.

A format is one module in `benchvault/parsers/` with a `.lark` grammar beside it and a
module-level ``FORMAT`` (a :class:`BlockFormat` or :class:`LineFormat`).  The registry in
``benchvault.parsers`` finds every such module, so adding a format is adding files.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Iterable

from pydantic import BaseModel


class BlockParseError(ValueError):
    """A block was found but cannot be read; ``line`` is 1-based within the block."""

    def __init__(self, reason: str, line: int | None = None):
        super().__init__(reason)
        self.reason = reason
        self.line = line


@dataclass
class Seen:
    """A line of context the segmenter remembers (a command, a Namespace, a launch)."""

    kind: str
    text: str
    line: int
    section_depth: int
    consumed: bool = False      # a result followed it
    carried: bool = False       # seen in the section before this one


@dataclass
class Context:
    """Everything around a block that says what it measured."""

    path: str = ""
    section: list[str] = field(default_factory=list)
    label: str | None = None
    commands: dict[str, Seen] = field(default_factory=dict)
    namespace: Seen | None = None
    printed: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    caption: str | None = None       # last heading or bold-only paragraph line (a table's title)
    fenced: bool = False             # inside a ``` code fence
    # A note's prose lines in the sections the block is in (outside fences; the last few):
    # what a writer states about the run in words (`llama.cpp b10064 CUDA, -t 8`).
    prose: tuple[str, ...] = ()
    # The device lines a note printed last, in any section (`Device 0: Radeon 8060S Graphics,
    # gfx1151`; a format's ``lasting`` labels): the machine its later tables ran on, unless they
    # say another.
    devices: dict[str, str] = field(default_factory=dict)

    def snapshot(self) -> "Context":
        return Context(self.path, list(self.section), self.label, dict(self.commands),
                       self.namespace, dict(self.printed), self.tags, self.caption, self.fenced,
                       self.prose, dict(self.devices))

    @property
    def section_text(self) -> str | None:
        return " > ".join(self.section) or None

    @property
    def label_or_heading(self) -> str | None:
        # (a heading written as a label, `#### Baseline:`, names it without its colon)
        return self.label or (self.section[-1].rstrip(":").rstrip() or None
                              if self.section else None)


@dataclass
class Block:
    """Lines the segmenter cut out for one format, with where they came from."""

    format: "BlockFormat"
    lines: list[str]
    line_start: int
    line_end: int
    complete: bool
    context: Context

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


@dataclass
class Parsed:
    """What a format's ``build`` returns: one main row and the rows that hang off it."""

    row: BaseModel
    children: list[BaseModel] = field(default_factory=list)
    warnings: list[tuple[int, str]] = field(default_factory=list)
    # Printed numbers: column → half a unit of the last digit printed (`225.80` → 0.005), in
    # the column's unit.  None: every value is exact (a machine-written file).  Tells whether
    # this row and another sighting of it agree (benchvault.experiments.identity).
    tolerance: dict[str, float] | None = None


# The characters a paste puts in place of a digit it garbled (`6!.8`, `12.?0`, `1~3`): no
# printed figure holds one, so a figure with one is garbled, not another number.
STRAY = "!?*~^$&@"

_PRINTED_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")


@lru_cache(maxsize=65536)     # a table prints `0.00`, `64`, `1.00` again and again
def half_unit(printed: str | None) -> float | None:
    """Half a unit of the last digit of the number ``printed`` starts with (`225.80` → 0.005,
    `64` → 0.5, `1e-3` → 0.0005): how far the true value may be from what was printed.  None
    when it starts with no finite number."""
    match = _PRINTED_NUMBER.match(printed.strip()) if printed else None
    if not match:
        return None
    mantissa, _, exponent = match.group(0).lower().partition("e")
    decimals = len(mantissa.partition(".")[2]) - (int(exponent) if exponent else 0)
    try:
        return 0.5 * 10.0 ** -decimals
    except OverflowError:       # `91e30901`: no float is that coarse
        return None


@dataclass
class Problem:
    """Part of a block or file a format could not read: a file:line warning, kept as raw text.

    A format that yields several rows (a table, a structured file) reports its bad rows this
    way and still yields the good ones.
    """

    line: int
    reason: str
    raw_text: str | None = None


def own_lines(lines: list[str], first: int, own: Callable[[str], str | None], what: str
              ) -> tuple[list[str], list[Problem]]:
    """``lines`` (the first at line ``first``) as a format's grammar reads them: each of its own
    as ``own`` gives it (None: not its own), any other blanked, with a warning when it held
    text (`not a <what>, skipped: ...`)."""
    kept: list[str] = []
    skipped: list[Problem] = []
    for i, line in enumerate(lines):
        text = own(line)
        if text is None:
            kept.append("")
            if line.strip():
                skipped.append(Problem(first + i, f"not a {what}, skipped: "
                                       f"{line.strip()[:80]!r}", line))
        else:
            kept.append(text)
    return kept, skipped


@dataclass(frozen=True)
class BlockFormat:
    """A multi-line result block with a recognisable first and last line."""

    name: str
    table: str
    description: str
    upstream: tuple[str, ...]
    markers: tuple[str, ...]         # a start line holds one of these (cheap test first)
    start: re.Pattern[str]
    end: re.Pattern[str] | None      # None: the block ends at the first line that is not its own
    max_lines: int
    build: Callable[[Block], "Parsed | list[Parsed | Problem]"]
    commands: dict[str, re.Pattern[str]] = field(default_factory=dict)
    preamble: re.Pattern[str] | None = None    # `Label: value` lines printed just before
    # The preamble's labels a note's later sections inherit (a machine's device lines,
    # Context.devices); one whose group ``anew`` matched starts them over (a new device list).
    lasting: re.Pattern[str] | None = None
    continues: Callable[[str], bool] | None = None   # for end=None formats
    # A line printed just after the block (`build: b56f079e (4418)`), after at most
    # ``trailer_gap`` blank lines: it and the blanks join the block.
    trailer: re.Pattern[str] | None = None
    trailer_gap: int = 2
    # False: a line this format could start on continues an open block of it (a table's
    # rows all look like its first row) and never cuts another format's block that
    # continues with the line.
    restarts: bool = True
    # ...and when it does, only at the start lines this matches (None: at every one): a block
    # that may start at any of its sections is not cut by its own next section.
    restarts_at: re.Pattern[str] | None = None
    # False: the block is not the run the context (label, command, Namespace) was for,
    # so it leaves that context to the next block (a published table).
    consumes: bool = True
    # Every line ``preamble`` matches holds one of these, in any case (see prefilter.py).
    preamble_markers: tuple[str, ...] = ()
    # A block that lost only its closing rule (the paste ends after its last line, or prose
    # follows): its body lines all match ``body_line``, and with ``closing`` added the grammar
    # reads it whole.  Read then, with a warning; otherwise it is a truncated block.
    body_line: re.Pattern[str] | None = None
    closing: str | None = None
    # ...and one of its body lines matches this (a block cut before it is not complete).
    body_complete: re.Pattern[str] | None = None
    # For end=None formats: (the block's lines so far, a line) → does the block go on with
    # this line after one line that is not its own (a line a user typed, a prompt, and the
    # blank lines after it)?  Then that line joins the block (its build skips it, with a
    # warning) instead of ending it.  None: the first line not its own ends the block.
    resumes: Callable[[list[str], str], bool] | None = None
    # False: its start line never cuts another format's open block (a label line that a
    # result block of another format holds too).
    cuts: bool = True
    # For a format of tables another table format starts too: (the table's lines, the block's
    # Context or None) → does this format read it?  Then the other hands it the table
    # (published_markdown, a GuideLLM table retyped by hand); None: it reads every table its
    # start line starts.
    claims: Callable[[list[str], Any], bool] | None = None
    # It claims a table by its program (the header the program prints, or the program shown in
    # the note around it), not by header words alone: it is asked before the formats that
    # claim by header words.
    by_own_header: bool = False

    def starts(self, line: str) -> bool:
        for marker in self.markers:     # a loop, not any(): asked of every format per hint
            if marker in line:
                return self.start.search(line) is not None
        return False


def label_and_heading(context: Any) -> tuple[str, str]:
    """The label and the heading right over a result ("" for either it has not): each may say
    what it is (a `<summary>Results</summary>` or a bold `**Results**` under `### Text
    Generation (tg128)` or `### Throughput (Concurrency=32)` leaves the heading saying it)."""
    label = getattr(context, "label", None) or ""
    section = getattr(context, "section", None)
    return label, section[-1].rstrip(":").rstrip() if section else ""


def claimed_table(name: str, table: str, description: str, upstream: tuple[str, ...],
                  build: Callable[[Block], "Parsed | list[Parsed | Problem]"],
                  claims: Callable[[list[str], Any], bool], by_own_header: bool = False
                  ) -> BlockFormat:
    """A format of pipe tables retyped by hand that starts no block itself: the table formats
    (``published_markdown``, ``llama_bench``, ``aligned_table``) hand it the tables it
    ``claims``, and it leaves the context around them to the next block."""
    return BlockFormat(name=name, table=table, description=description, upstream=upstream,
                       markers=("|",), start=re.compile(r"(?!)"), end=None, max_lines=2_000,
                       build=build, continues=lambda line: line.lstrip().startswith("|"),
                       restarts=False, consumes=False, cuts=False, claims=claims,
                       by_own_header=by_own_header)


@dataclass
class Facts:
    """Part of a record that many lines assemble (a server launch); ingest merges them.

    ``values`` are column values of ``table``'s row; ``kind`` names the line.  ``begins``: the
    line starts a new record (a launch command); ``once``: a record has this line once, so a
    second one starts another record; ``weak``: it may only add to a record already open;
    ``printer``: the one engine that prints such a line (a line of another engine's words is
    another record).
    """

    table: str
    kind: str
    values: dict[str, Any]
    context: Context
    time: Any = None                  # a vllm_server_log.LogTime, when the line had one
    begins: bool = False
    once: bool = False
    weak: bool = False
    line: int = 0
    text: str = ""
    warnings: list[tuple[int, str]] = field(default_factory=list)
    printer: str | None = None        # the engine only whose own words the line is


@dataclass(frozen=True)
class LineFormat:
    """A record that fits on one log line (a metrics line, a start-up fact)."""

    name: str
    table: str
    description: str
    upstream: tuple[str, ...]
    markers: tuple[str, ...]
    pattern: re.Pattern[str]
    build: Callable[[int, str, Context], "Parsed | Facts | None"]
    commands: dict[str, re.Pattern[str]] = field(default_factory=dict)

    def matches(self, line: str) -> bool:
        return any(m in line for m in self.markers) and self.pattern.search(line) is not None


@dataclass(frozen=True)
class FileFormat:
    """A whole file one program wrote (llama-bench ``-o json``): recognised by its content.

    ``sniff(head, path)`` looks at the file's first bytes; ``read(path, context)`` streams the
    file's rows (and :class:`Problem` for what it cannot read).  Ingest asks every FileFormat
    before cutting the file into lines.
    """

    name: str
    table: str
    description: str
    upstream: tuple[str, ...]
    sniff: Callable[[bytes, str], bool]
    read: Callable[[Any, Context], Iterable["Parsed | Problem"]]
    # Pasted inside a note (reading/embedded.py): words the first line of a copy that does not
    # start a JSON value holds (a CSV header, a SQL statement), in any case...
    embed_markers: tuple[str, ...] = ()
    # ...and keys (with their quotes) one of which a one-line JSON value of the format holds:
    # a `{` line in a log without any of them is not a copy of this format.
    json_keys: tuple[str, ...] = ()
    # ...and the row fields the note around the copy gives (heading, label, command), which
    # fill what the file itself did not say.
    note_context: Callable[[Context], dict[str, Any]] | None = None
