"""Find result blocks in a stream of lines and give each the context that explains it.

The segmenter reads a note or log once, top to bottom, keeping what a reader keeps in mind:
the markdown heading path (outside code fences), the `# c=16` comment just before a block
(inside fences, or anywhere in a plain log), the last benchmark command and server launch
in scope, the printed ``Namespace(...)``.  Terminal-wrapped lines (a command cut at the
terminal width, a ``Namespace(`` spread over several lines) are joined first.
"""

from __future__ import annotations

import bisect
import json
import re
from collections import deque
from dataclasses import dataclass, replace
from typing import Callable, Iterable, Iterator, Sequence

from ..parsers import block_formats, file_formats, line_formats
from ..parsers.base import Block, BlockFormat, Context, Facts, LineFormat, Seen
from .brackets import nesting
from .cmdline import invoked_at
from .doctype import by_suffix, is_capture_line
from .embedded import Embedded, Openers, Region
from .fastlane import FastLane
from .glyphs import split_joined
from .inlinecode import code_spans
from .literals import any_of
from .wrap import (WRAP_BREAK, Pane, at_edge, cut_in_token, joined, parted_flag, printed_widths,
                   ragged_joined, ragged_readings, readings)
from ..parsers.runcontext import LAUNCH_COMMANDS

# (a line of backticks with more backticks after them is code in one line, ```cmd```, no fence)
FENCE_RE = re.compile(r"^\s*(?:`{3,}(?!.*`)|~{3,})")
HEADING_RE = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")     # (CommonMark: up to three blanks before)
COMMENT_RE = re.compile(r"^\s*#+\s+(.*\S)\s*$")  # `#Input tokens: N` (SGLang) is output, not a comment
HTML_TAG_RE = re.compile(r"<[^>]+>")
MARKDOWN_EMPHASIS_RE = re.compile(r"(\*\*|__|`)")
ENTITY_RE = re.compile(r"&#x?[0-9a-fA-F]+;|&nbsp;")
# A paragraph that is one bold phrase (`**4.1.1 Qwen-1.5B - 2048 context ...**&#x20;`): a title.
BOLD_LINE_RE = re.compile(r"^\s*(\*\*|__)(?P<text>(?:(?!\1).)+)\1[\s:.]*(?:&#x20;|&nbsp;)?\s*$")
# Lines that start something new, so they never continue a wrapped command.
NOT_CONTINUATION_RE = re.compile(
    r"^(?:Namespace\(|=|-{3,}|#|INFO|WARNING|DEBUG|ERROR|\(|\[|\||`{3}|~{3}|\d+%\||Running\b"
    r"|(?:--|//|;|>)[ \t])")
BLOCKQUOTE_RE = re.compile(r"^[ \t]{0,3}(?:>[ \t]?)+")
DIFF_FENCE_RE = re.compile(r"^\s*(?:`{3,}|~{3,})\s*(?:diff|patch)\b", re.I)
DIFF_HEADER_RE = re.compile(r"^(?:(?:---|\+\+\+) (?:[ab]/|/dev/null)|@@ )")


def _undiffed(text: str) -> str:
    """A ```diff fence's line as the file has it, before or after the change: an added, kept
    or removed line without its `+` / space / `-` (what it held was measured either way); a
    file header (`--- a/README.md`), a hunk header (`@@ -1,4 +1,5 @@`) and a fence the change
    adds (it would close the diff's own) are blank."""
    if DIFF_HEADER_RE.match(text):
        return ""
    if text[:1] in "+- ":
        text = text[1:]
        return "" if FENCE_RE.match(text) else text
    return text


# What people put before every line of pasted output: shell/Python/TOML comments, C and SQL
# comments, ini comments, quoted replies (nested too).  A run of lines that share one is read
# as if it were not there; a lone `# c=16` stays a comment.
LINE_PREFIX_RE = re.compile(r"^[ \t]{0,3}(?:>[ \t]?|(?:#|//|--|;)[ \t])+")
PREFIX_INITIALS = "#/-;> \t"
# A rendered table's separator row (`-- | -- | --`) starts like a `-- ` comment.
# A log record's prefix with nothing after it (its message went to the next line).
BARE_LOG_PREFIX = re.compile(
    r"^\s*(?:\(\w+ pid=\d+\)\s*)?(?:(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL)\s+\d\d-\d\d\s+"
    r"\d\d:\d\d:\d\d(?:\.\d+)?(?:\s+\[[^\]]*\])?|\[\d{4}-\d\d-\d\d[ T][\d:.,]+(?:\s+\w+)?\])\s*$")
TABLE_RULE_RE = re.compile(r"^[-:|+ \t]+$")
# A note's list item: a log line pasted as one (`- INFO 03-14 ...`) is still a log line.
LIST_MARKER_RE = re.compile(r"^[ \t]{0,3}(?:[*+-]|\d+[.)])[ \t]+")
# A note's remark after a printed figure, shell-style (`Mean acceptance length: 3.32   # MTP3`):
# the writer's, not the program's.  Only after a `label: number` and two blanks or more, so
# SGLang's `#running-req:` and a table's `| # |` stay.
REMARK_START_RE = re.compile(r"[ \t]{2,}#[ \t]")
FIGURE_AFTER_LABEL_RE = re.compile(r":[ \t]*[-+]?\d")
# A shell variable set on its own line of a note or script (`MODEL=Qwen/Qwen3-8B`, `export
# TP=2`, fish's `set -x MODEL_NAME "..."`): a command written later with `$MODEL` or
# `${MODEL}` ran with its value.
SHELL_ASSIGN_RE = re.compile(
    r"^\s*(?:(?:export|declare|local|readonly)\s+(?:-\w+\s+)*)?(?P<name>[A-Za-z_]\w*)="
    r"(?P<value>\"[^\"]*\"|'[^']*'|[^\s\"'`$;&|]*)\s*(?:#.*)?$"
    r"|^\s*set\s+(?:-\w+\s+)*(?P<fish>[A-Za-z_]\w*)\s+(?P<fish_value>\"[^\"]*\"|'[^']*'|[^\s\"'`$;&|]+)\s*$")
SHELL_VAR_RE = re.compile(r"\$\{(\w+)\}|\$(\w+)")
MAX_SHELL_VARS = 256
MAX_FENCED_WORD_LABEL = 32
CONTINUATION_REMARK_RE = re.compile(r"\\[ \t]+#[^'\"`]*$")


def shell_assignment(text: str) -> tuple[str, str] | None:
    """(name, value) of a line that only sets a shell variable, or None."""
    match = SHELL_ASSIGN_RE.match(text)
    if match is None:
        return None
    name = match.group("name") or match.group("fish")
    value = match.group("value") if match.group("name") else match.group("fish_value")
    if value[:1] in "\"'" and value[-1:] == value[:1] and len(value) > 1:
        value = value[1:-1]
    return name, value


# A tag a program or a tool put before every line of an output (grep's `file:` on the line it
# matched and `file-` on the lines around it, `-n`'s `file:12:`, mpirun's `[1,0]<stdout>:`): a
# run of such lines is read without it, from the line where a result starts after the tag.
MAX_TAG_CHARS = 80
TAG_END_RE = re.compile(r"[:-]")
TAG_INSIDE = set("0123456789])")
TAG_PARTS_RE = re.compile(r"(\d+|[:-])")
FIRST_TOKEN_RE = re.compile(r"\S+")


def tag_pattern(tag: str) -> re.Pattern[str]:
    """The tag as every line of its run carries it: grep writes `:` or `-` after the file (and
    after a line number) by whether the line matched, and numbers count on."""
    parts = TAG_PARTS_RE.split(tag)
    return re.compile("".join(
        r"\d+" if part.isdigit() else "[:-]" if part in (":", "-") else re.escape(part)
        for part in parts if part))


# What a line that names the result right below it may not hold: a table, a heading, markup,
# or a `label: value` pair.
NOT_IN_LABEL = set(":|#<>[]{}`")
MAX_LABEL_CHARS = 40
MAX_LABEL_WORDS = 5
LABEL_QUOTES = "\"'\u201c\u201d"


def label_line(text: str, item: bool = False, fenced: bool = False) -> str | None:
    """The name a short line gives the result right under it (`helion:`, `* bs 32, origin`,
    `**Before**`, `"after":`), or None.  It ends with a colon, or (in a note's prose) is bold
    or a list item (``item``: its marker was taken off): a plain sentence is prose."""
    name = text.strip()
    colon = name.endswith(":")
    name = name.rstrip(":").rstrip()
    bold = not fenced and len(name) > 4 and name[:2] in ("**", "__") and name.endswith(name[:2])
    if bold:
        name = name[2:-2].strip()
        colon = colon or name.endswith(":")
        name = name.rstrip(":").rstrip()
    name = name.strip(LABEL_QUOTES).strip()
    if not (colon or bold or item and not fenced) or not name or len(name) > MAX_LABEL_CHARS \
            or len(name.split()) > MAX_LABEL_WORDS or name[-1] in ".?!,;" \
            or not any(c.isalpha() for c in name) or not NOT_IN_LABEL.isdisjoint(name):
        return None
    return name


# `<summary>CUDA Kernel</summary>`: a collapsed section's title names what it holds.
SUMMARY_RE = re.compile(r"^\s*(?:<details[^>]*>\s*)?<summary>\s*(?P<name>[^<>]+?)\s*</summary>\s*$",
                        re.I)


def summary_label(text: str) -> str | None:
    """The name an HTML ``<summary>`` line gives the result folded under it."""
    match = SUMMARY_RE.match(text)
    return label_line(match.group("name") + ":") if match else None


def fenced_word_label(text: str) -> str | None:
    """The name a line of one to three words gives the result that starts right under it in
    a capture (`qps1`, `baseline tp2`): what a script echoed before each run."""
    name = text.strip()
    if len(name) > MAX_FENCED_WORD_LABEL or not 1 <= len(name.split()) <= 3 \
            or name[:1] in "#$>[(" or is_capture_line(name):
        return None
    return plain_label(name)


def plain_label(text: str) -> str | None:
    """The name a short plain line gives a fenced result right under it (`upstream tp1`,
    `kimi2.7`): a few words, no sentence's end, no command."""
    name = text.strip()
    if not name or name.lower().startswith(("python", "$", "cd ", "export ")) \
            or any(hint in name.lower() for hint in COMMAND_HINTS):
        return None
    return label_line(name + ":")


# A line that is one JSON string (an output kept as a JSON list of its lines:
# `"Successful requests:                     256",`).
JSON_STRING_LINE_RE = re.compile(r'^\s*("(?:[^"\\]|\\.)*")\s*,?\s*$')


def _json_string_line(text: str) -> str:
    """The line a JSON string literal holds, else ``text``."""
    match = JSON_STRING_LINE_RE.match(text)
    if match is None:
        return text
    try:
        inner = json.loads(match.group(1))
    except ValueError:
        return text
    return inner if isinstance(inner, str) and "\n" not in inner else text


def without_remark(text: str) -> str:
    """``text`` without a writer's remark after its figures; each test a linear scan (a
    pasted line may be a megabyte long)."""
    marker = REMARK_START_RE.search(text)
    if marker is None:
        return text
    head, remark = text[:marker.start()], text[marker.end():]
    if "#" in head or "|" in head or "|" in remark:
        return text
    figure = FIGURE_AFTER_LABEL_RE.search(head)
    if figure is None or not any(c.isalpha() for c in head[:figure.start()]):
        return text
    return head


# Every command pattern names one of these words; a line without them skips the regexes.
COMMAND_HINTS = ("bench", "serve", "llama", "sglang", "guidellm")
# A line the context rules below act on holds one of these (fences, headings and `#`
# comments, bold captions, commands, printed Namespace/args reprs, ANSI codes that could hide
# any of them): the prefilter lets the segmenter skip the lines that hold none.
CONTEXT_MARKERS = ("```", "~~~", "#", "**", "__", "Namespace(", "args: {", "\x1b",
                   *COMMAND_HINTS)
MAX_JOINED_LINES = 200
HELD_PIECES = 256          # a note's pieces held for a command written after them, at most
MAX_PARAGRAPH = 1200       # a paragraph's characters read as one prose line, at most
MAX_PROSE_LINES = 24        # a note's prose lines a block's context keeps (the last ones)
# A note's `Label: value` line (`- CPU: Intel Core i9`, `**Backend:** Vulkan`, `GPU：...`).
LABELLED_LINE_RE = re.compile(r"^\s*(?:[-*+]\s+)?\**\s*([A-Za-z][\w ./()-]{0,30}?)\s*\**\s*[:：]"
                              r"\s*\**\s*(?![/\s])\S")
# ...and a row of a setup table saying the same (`| GPU | NVIDIA RTX PRO 6000, 96 GB |`, under
# `| Component | Detail |`): two cells, a setup word, then words.
SETUP_ROW_RE = re.compile(
    r"^\s*\|\s*\**\s*((?:gpus?|cpu|hardware|devices?|accelerators?|models?|engine|backends?"
    r"|build|(?:vllm|sglang|llama\.cpp|engine)\s+version|version|driver|rocm|cuda|os|quant"
    r"|quantization|precision|dtype|framework|runtime|image|platform|system|machine)"
    r")\s*\**\s*\|\s*([^|]*[A-Za-z][^|]*?)\s*\|\s*$", re.I)
WRAP_MIN_WIDTH = 80
# A word wrap's first piece is the pane's width less the word that did not fit: a record this
# much shorter than the widest line read whole may still be one.
WRAP_WORD_SLACK = 20
MAX_WRAPPED_PIECES = 12
MAX_BLANKS_IN_RECORD = 2       # blank lines held between the pieces of a record cut mid-way
# An end=None block with ``resumes`` holds at most this many lines not its own (a line typed
# into the paste, a shell's job notice, blank lines) to see whether the block goes on after them.
HELD_LINES = 3
MAX_HELD = 20     # ...and its own lines among them (backend messages)


@dataclass
class LineHit:
    """A single-line record found by a :class:`LineFormat`."""

    format: LineFormat
    line: int
    text: str
    context: Context
    line_end: int = 0      # its last line, when a wrap joined it from several


@dataclass
class WrapCut:
    """A record that looks wrapped but reads neither alone nor joined: kept raw."""

    line_start: int
    line_end: int
    text: str


@dataclass
class Unclosed:
    """A block that lost its closing rule: ``block`` holds its lines up to its last body line
    (``closing`` added last), to be read with a warning.  ``cut_short``: the paste ended (or
    something else began) before the block printed everything; what it printed is kept."""

    block: Block
    cut_at: int        # the line where the rule was missing
    cut_short: bool = False


@dataclass
class Truncated:
    """A block that started but did not end: it becomes a warning and an unparsed row."""

    format: BlockFormat
    lines: list[str]
    line_start: int
    line_end: int


def _body_end(fmt: BlockFormat, lines: list[str]) -> int:
    """Where the body lines after a block's start end: one line that is not a body line (a
    line typed into the paste, a value garbled) between two that are does not end them."""
    body, passed = 1, False
    while body < len(lines):
        if fmt.body_line.match(lines[body]):
            body += 1
        elif not passed and lines[body].strip() and body + 1 < len(lines) \
                and fmt.body_line.match(lines[body + 1]):
            passed = True
            body += 2
        else:
            break
    return body


def _unclosed(block: Block) -> "Unclosed | None":
    """``block`` as one that lost only its closing rule, if its lines say so: every line after
    the start is a body line up to the last one, and what follows (if anything) is not."""
    fmt = block.format
    if fmt.body_line is None or fmt.closing is None:
        return None
    body = _body_end(fmt, block.lines)
    # Nothing left but prose or blank lines after the body (a cut in the middle of a line or
    # a garbled line inside the body leaves a non-body line followed by body lines).
    if body < 3 or any(fmt.body_line.match(line) for line in block.lines[body:]) \
            or block.lines[body - 1].lstrip().startswith("-"):
        return None
    # A line cut short (a label without its value) right after the body: not complete.
    if body < len(block.lines) and ":" in block.lines[body] \
            and block.lines[body].rstrip().endswith(":"):
        return None
    lines = block.lines[:body]
    if fmt.body_complete is not None and not any(fmt.body_complete.match(x) for x in lines):
        return None
    return Unclosed(Block(fmt, [*lines, fmt.closing], block.line_start,
                          block.line_start + body - 1, True, block.context),
                    block.line_start + body)


def _cut_short(block: Block) -> "Unclosed | None":
    """``block`` as one cut short after some of its body lines (a message cut at a size
    limit, a copy that missed its last lines): those lines, its closing rule added, to be read
    for what they print.  None when not one value line follows its start."""
    fmt = block.format
    if fmt.body_line is None or fmt.closing is None:
        return None
    body = _body_end(fmt, block.lines)
    if body < 2 or not any(":" in line for line in block.lines[1:body]):
        return None
    return Unclosed(Block(fmt, [*block.lines[:body], fmt.closing], block.line_start,
                          block.line_start + body - 1, True, block.context),
                    block.line_start + body, cut_short=True)


def _continued(text: str) -> bool:
    """A command line that goes on on the next: a shell's `\\`, PowerShell's `` ` ``, cmd's
    `^` at its end."""
    return text.endswith(("\\", " `", " ^"))


def _opens_repr(text: str) -> bool:
    return ("Namespace(" in text or "args: {" in text) and nesting(text) > 0


def _undecorated(text: str) -> str:
    """A note's line outside code without the markdown that only dresses it: a list item's
    marker and bold (`- **Mean TTFT (ms):** 120.40` is `Mean TTFT (ms): 120.40`).  A line that
    is one bold phrase stays: it is a title."""
    if "**" in text and not BOLD_LINE_RE.match(text):
        text = text.replace("**", "")
    if text[:1] in "-*+ 0123456789" and not TABLE_RULE_RE.match(text):
        text = LIST_MARKER_RE.sub("", text, count=1)
    return text


# A code span's backtick opening or closing a line, alone on that line (a paste written as
# one code span over many lines: `` `====== Serving Benchmark Result ====== ``).
LONE_BACKTICK_RE = re.compile(r"^(\s*)`(?!`)|(?<!`)`(\s*)$")

# The heading of a section that sets up the benchmark the sections after it report.
SETUP_HEADING = re.compile(r"^(?:[\d.]+\s+)?(?:(?:benchmark|test|experiment(?:al)?|hardware|"
                           r"software)\s+)?(?:setup|set-up|workload|workloads|configuration|config|"
                           r"environment|methodology|method|conditions|parameters|settings)"
                           r"(?:\s+(?:and|&)\s+\w+)?\s*:?$", re.I)

# The delimiter row of a GFM table written without its outer pipes (`---|:---:|---`).
# (GitHub's copy of a rendered table writes its delimiter row `-- | -- | --`; GFM asks for one
# dash a cell, `:-|:-`)
BARE_DELIMITER_RE = re.compile(r"^[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)+\|?[ \t]*$")


class _Peeking:
    """A note's (line, text) pairs, able to show the next line's text before giving it;
    ``cut``: what the last given line's collector prefix took (LineSource.cut).

    A GFM table written without its outer pipes (`Engine | Time (s)` over `---|---`) is given
    them, so that the table formats see the table they read; not where ``may_border(text)``
    says no (a program's own table of that shape, GuideLLM 0.2's, inside its block)."""

    def __init__(self, lines: Iterable[tuple[int, str]],
                 may_border: Callable[[str], bool] = lambda text: True):
        self._source = lines
        self._lines = iter(lines)
        self._held: list[tuple[int, str, int]] = []
        self.cut = 0
        self._may_border = may_border
        self._borderless = False            # inside a table written without outer pipes

    def __iter__(self) -> "_Peeking":
        return self

    def __next__(self) -> tuple[int, str]:
        lineno, text, self.cut = self._held.pop() if self._held else self._pulled()
        if "|" not in text or text.lstrip().startswith("|"):
            self._borderless = False
        elif self._borderless or BARE_DELIMITER_RE.match(self.peek()) and self._may_border(text):
            self._borderless = True
            text = f"| {text.strip()}" + ("" if text.rstrip().endswith("|") else " |")
        return lineno, text

    def _pulled(self) -> tuple[int, str, int]:
        lineno, text = next(self._lines)
        return lineno, text, getattr(self._source, "cut", 0)

    def peek(self) -> str:
        """The next line's text ("" at the end), still to be given."""
        if not self._held:
            try:
                self._held.append(self._pulled())
            except StopIteration:
                return ""
        return self._held[0][1]

    def take_plain(self, *args) -> tuple[list[tuple[int, str]], bool]:
        """LineSource.take_plain, once the line shown is given."""
        take = getattr(self._source, "take_plain", None)
        return ([], False) if self._held or take is None else take(*args)


def _last_line(piece: Block | LineHit) -> int:
    return piece.line_end or getattr(piece, "line", 0)    # (a LineHit's end: 0 when one line)


def _give_trailing_commands(pieces: list, seen: list[tuple[Seen, tuple[str, ...]]]) -> None:
    """A note's run command that no result after it took (`Client:` and the command, under the
    table it made) is the command of the results before it in its own section that have none
    of its kind: a writer shows the figures first and how to get them second."""
    results = sorted((p for p in pieces if isinstance(p, (Block, LineHit))), key=_last_line)
    taken = {(c.kind, c.line) for p in results for c in p.context.commands.values()}
    ends = [_last_line(p) for p in results]
    for command, section in seen:
        if (command.kind, command.line) in taken:
            continue
        # (back from the command, over its section's results, to one that has such a command:
        # each result is given one at most once, so the walk is short)
        at = bisect.bisect_left(ends, command.line) - 1
        while at >= 0 and command.kind not in results[at].context.commands \
                and tuple(results[at].context.section) == section:
            results[at].context.commands[command.kind] = command
            at -= 1


class Segmenter:
    """One pass over a file's lines; yields Blocks, LineHits and Truncated blocks in order
    (and, from the fast lane, the rows of lone single-line records: see fastlane.py)."""

    fast_lane = True     # off: every line takes the full pass (the lane's tests compare both)

    def __init__(self, path: str, *, markdown: bool | None = None,
                 tags: dict[str, str] | None = None, pane: Pane | None = None):
        self.markdown = by_suffix(path) if markdown is None else markdown
        self.pane = pane        # how the capture's lines were wrapped, when they were
        self.formats = block_formats()
        self.line_formats = line_formats()
        self.commands: dict[str, re.Pattern[str]] = {"launch": re.compile(
            "|".join(p.pattern for p in LAUNCH_COMMANDS.values()))}
        for fmt in (*self.formats, *self.line_formats):
            self.commands.update(fmt.commands)
        # A block format's own command starts a new run: what was printed before it is stale.
        self.run_commands = {kind for fmt in self.formats for kind in fmt.commands}
        self.run_commands_seen: list[tuple[Seen, tuple[str, ...]]] = []   # (each, its section)
        self.preambles = [f.preamble for f in self.formats if f.preamble is not None]
        self.lasting = [f.lasting for f in self.formats if f.lasting is not None]
        # One search says whether any block format could start on a line (most lines: none).
        self.start_hint = any_of(m for f in self.formats for m in f.markers)
        # ...and whether one that may cut an open block could (most formats never cut one:
        # their markers, `(ms):` of every result line, would make each line of a block ask all)
        self.cutters = [f for f in self.formats if f.cuts]
        self.cut_hint = any_of(m for f in self.cutters for m in f.markers)
        self.ctx = Context(path=path, tags=dict(tags or {}))
        # A plain log is program output throughout: its tables are tool output, not published.
        self.ctx.fenced = not self.markdown
        self.heading_levels: list[int] = []
        self.prose_lines: list[tuple[int, str]] = []    # (section depth, line): ctx.prose
        self.line_at = self.prose_line_at = -1      # this line's number, the last prose line's
        self.prose_depth = 0        # the depth a prose line is kept to (see _heading)
        # The blank lines a wrapped record's piece came after, by the piece's line.
        self.blanks_before: dict[int, list[tuple[int, str]]] = {}
        # ...and its `Label: value` lines (`- CPU: ...`, `**Backend:** Vulkan`), the last of
        # each label, whatever section they are in: a note's `### System` holds for its
        # `### Results` beside it.
        self.labelled_lines: dict[str, str] = {}
        self.in_fence = False
        self.diff_fence = False     # the open fence is a ```diff: its lines carry +/-/space
        self.fence_indent = 0       # the blanks before the open fence's backticks
        # In a markdown note, unfenced lines only a program prints (a log record, a prompt)
        # open a pasted terminal capture that lasts to the next blank line: its tables are
        # tool output and its `# c=16` lines comments, as inside a fence.
        self.capture = False
        self.prefix = ""   # the comment/quote prefix of the run of lines being read
        self.tag: re.Pattern[str] | None = None   # ...or the tag every line of it carries
        self.shell_vars: dict[str, str] = {}       # SHELL_ASSIGN_RE: the note's variables
        self.run_broke = False   # the line just read ended such a run
        # One line without the prefix read inside a run while a block is open: the run goes
        # on when the line after it has the prefix again (a line typed into pasted output).
        self.lapsed = False
        self.block_open: Callable[[], bool] = lambda: False
        self.wrap_markers = tuple({m for f in self.line_formats for m in f.markers})
        # (one search in C, not a loop over every marker: asked of every short line of a note)
        self.wrap_marker_re = any_of(self.wrap_markers)
        self.wrap_cuts: list[tuple[int, int, str]] = []   # wraps no joining reads
        # The longest line-format line read whole since the last fence or heading: a terminal
        # that printed it unwrapped is wider than any shorter line, which was not cut then.
        self.widest_whole = 0
        # The widest record line (whole or a wrap's piece) of this paste: the pane is no
        # narrower, so a shorter piece was not cut at its edge.
        self.widest_record = 0
        # What a collector's prefix took off the lines being joined, by line (a wrap's first
        # piece was printed that much wider): kept while a record is open, then dropped.
        self.cuts: dict[int, int] = {}
        self.lookahead = False   # logical_lines holds a line read ahead of the one it gave
        self.file_formats = file_formats()
        self.openers = Openers(self.file_formats)
        # Lines of a pasted copy no file format knew, to be read again as ordinary lines.
        self.replay: deque[tuple[int, int, str]] = deque()
        # The last line of that copy: no line up to it starts another (a brace that never
        # closes would otherwise make every later brace gather the rest of the file again).
        self.refused_until = -1
        self.lane = FastLane(self) if self.fast_lane and not self.markdown else None
        self.peeking: _Peeking | None = None     # a note's lines, read by run()
        # Prose lines read as the log lines they quote in backticks: a quoted line is no
        # heading, comment or capture of the note (`# GPU blocks: N` is not a title).
        self.quoting: set[int] = set()
        # A note line naming the result right under it (blank lines and a fence between
        # them at most): the label of the block that starts next.
        self.pending_label: str | None = None
        self.fence_label: str | None = None      # a plain line's name, if a fence opens next
        self.list_items: set[int] = set()    # a note's lines that were list items

    def _fed(self, lines: Iterable[tuple[int, str]], idle: Callable[[], bool]
             ) -> Iterator[tuple[int, int, str] | None]:
        """logical_lines, with lines given back by a refused copy read again before the next
        one; None marks the end of the input (an open copy closes there)."""
        for item in self.logical_lines(lines, idle):
            yield item
            yield from self._drain()
        yield None
        while self.replay:
            yield from self._drain()
            yield None

    def _drain(self) -> Iterator[tuple[int, int, str]]:
        if not self.replay:
            return
        held = self.lookahead
        while self.replay:
            self.lookahead = True    # a block opened here must not pull lines past them
            yield self.replay.popleft()
        self.lookahead = held

    # -- joining wrapped lines -------------------------------------------------------------
    def logical_lines(self, lines: Iterable[tuple[int, str]],
                      idle: Callable[[], bool] = lambda: False) -> Iterator[tuple[int, int, str]]:
        """(first line, last line, text) with wrapped lines joined.  While ``idle()`` (no block
        open) and nothing is being joined, a LineSource skips the lines no rule could act on."""
        pending: tuple[int, int, str] | None = None   # a command or repr being joined
        piece = ""                                    # ...and its last line
        record: list | None = None     # [(line, text)...]: a record and what a wrap cut off it
        blanks: list[tuple[int, str]] = []    # blank lines after a record that stops mid-way
        again: deque[tuple[int, str]] = deque()   # pieces a record did not take, read again
        source = iter(lines)
        skip = getattr(lines, "skip_inert", None)
        take = getattr(lines, "take_records", None) if self.lane is not None else None
        while True:
            if again:
                lineno, text = again.popleft()
            else:
                if skip is not None and pending is None and record is None \
                        and not self.prefix and self.tag is None and not self.lapsed \
                        and idle():
                    skip()
                    if take is not None and not self.lookahead and not self.replay:
                        self.lane.enter()
                        take(self.lane)
                try:
                    lineno, text = next(source)
                except StopIteration:
                    if record is None:
                        break
                    yield from self._unwrap(record, again)
                    again.extend(blanks)
                    record, blanks = None, []
                    continue
                if self.cuts and record is None:
                    self.cuts.clear()
                cut = getattr(source, "cut", 0)
                if cut:
                    self.cuts[lineno] = cut
                if self.markdown:
                    text = self._unquote(text)
                    if not self.in_fence:
                        bare = _undecorated(text)
                        if LIST_MARKER_RE.match(text) and not LIST_MARKER_RE.match(bare):
                            self.list_items.add(lineno)
                        text = bare
                    if "#" in text:
                        text = without_remark(text)
                        # a script's remark after a line continuation (`--dtype auto \  # why`)
                        text = CONTINUATION_REMARK_RE.sub(r"\\", text)
                if self.prefix or text[:1] in PREFIX_INITIALS:
                    text = self._unprefix_run(text)
                text = self._untagged(text)
                if text.lstrip()[:1] == '"' and (self.in_fence or not self.markdown):
                    text = _json_string_line(text)
                pieces = split_joined(text, self._known)
                if pieces:          # read as the lines it joined, each at the joining line
                    again.extend((lineno, piece) for piece in pieces)
                    continue
                if self.markdown and "`" in text:
                    quoted = self._quoted_records(text)
                    if quoted:      # read as the lines it quotes, each at the quoting line
                        again.extend((lineno, span) for span in quoted)
                        self.quoting.add(lineno)
                        continue
            if record is not None:
                if not text.strip() and len(blanks) < MAX_BLANKS_IN_RECORD \
                        and self._may_go_on_after_blank([t for _, t in record]):
                    blanks.append((lineno, text))   # a web page's paragraph between pieces?
                    continue
                if self._ragged_goes_on([t for _, t in record], text) if blanks else \
                        self._goes_on([t for _, t in record], text,
                                      self._cuts_of([*record, (lineno, text)])):
                    record.append((lineno, text))
                    if blanks:      # (read again before it if the record does not take it)
                        self.blanks_before[lineno] = blanks
                    blanks = []
                    continue
                back: deque[tuple[int, str]] = deque()
                yield from self._unwrap(record, back)
                record = None
                if back or blanks:  # those first, then this line, then what was to be read again
                    again.extendleft(reversed([*back, *blanks, (lineno, text)]))
                    blanks = []
                    continue
            if pending is not None:
                start, end, joined = pending
                if self._continues(joined, text):
                    joined = joined[:-1].rstrip() + " " + text.strip() if _continued(joined) \
                        else joined + self._joint(piece, text) + text
                    piece = text
                    if end - start + 1 >= MAX_JOINED_LINES or not self._still_open(joined):
                        self.lookahead = False
                        yield start, lineno, joined
                        pending = None
                    else:
                        pending = (start, lineno, joined)
                    continue
                self.lookahead = True   # `text` is read and waits behind this line
                yield pending
                pending = None
            if self._still_open(text):
                pending, piece = (lineno, lineno, text), text
            elif self._may_wrap(text, self.cuts.get(lineno, 0)):
                record = [(lineno, text)]
                self.blanks_before = {}
            else:
                self.lookahead = bool(again)
                yield lineno, lineno, text
        if pending is not None:
            yield pending

    def _unwrap(self, pieces: list[tuple[int, str]], again: deque[tuple[int, str]]
                ) -> Iterator[tuple[int, int, str]]:
        """The record and as many of the pieces after it as its grammar reads joined (in a way
        one pane could have cut them: wrap.readings); the pieces it does not take go to
        ``again``, to be read once more (one may start the next record).  A record a line
        format knows that reads neither alone nor joined, though pieces follow it, is kept raw
        with a warning (a WrapCut)."""
        self.lookahead = True
        texts = [t for _, t in pieces]
        cuts = self._cuts_of(pieces)
        self.widest_record = max(self.widest_record, *printed_widths(texts, cuts))
        for take in range(len(pieces), 1, -1):
            best = self._best_reading(texts[:take], cuts)
            # A joined line may read with warnings (a wrapped record holding a garbled
            # value), but with no more than the record alone (a foreign line glued to one).
            if best is not None and (best[0] == 0 or best[0] <= self._warnings_alone(texts[0])):
                yield pieces[0][0], pieces[take - 1][0], best[1]
                break
        else:
            take = 1
            if len(pieces) > 1 and any(f.matches(texts[0]) for f in self.line_formats) \
                    and not self._reads(texts[0], cleanly=False) \
                    and not self._named_only(texts[0]):
                self.wrap_cuts.append((pieces[0][0], pieces[-1][0], "\n".join(texts)))
            else:
                self.widest_whole = max(self.widest_whole, len(texts[0]))
                yield pieces[0][0], pieces[0][0], texts[0]
        for piece in pieces[take:]:     # (a comment or heading keeps its effect)
            again.extend(self.blanks_before.pop(piece[0], ()))     # (a blank ends a capture)
            again.append(piece)
        self.lookahead = bool(again)

    def _cuts_of(self, pieces: list[tuple[int, str]]) -> list[int]:
        """What a collector's prefix took off each of ``pieces`` (its lines as printed)."""
        return [self.cuts.get(lineno, 0) for lineno, _ in pieces]

    def _may_wrap(self, text: str, cut: int = 0) -> bool:
        """A line about as long as a terminal is wide (as printed, with the ``cut`` its
        collector's prefix took) that one of the line formats reads, or a log record the wrap
        may have cut before the words a format knows it by: the next lines may be its end."""
        if _opens_repr(text):
            return False
        if len(text) + cut < self._wrap_width():
            # A word wrap leaves a record's log prefix alone when its first word is too long
            # to fit after it (`[2024-08-01 12:00:00] ` | `server_args=ServerArgs(...)`).
            if self.pane is not None and self.pane.kind == "word" \
                    and BARE_LOG_PREFIX.match(text) is not None:
                return True
            # A record that stops mid-way, or in a note (where a web page may have wrapped it
            # at any width) any record or a log line cut before its words: the next lines say.
            if self._known_line(text):      # (a command goes on only as commands do)
                return self.markdown and not self._is_command(text) or self._stops_mid_way(text)
            return self.markdown and self._cut_before_known(text)
        if self._known_line(text):
            return True
        return is_capture_line(LIST_MARKER_RE.sub("", text, count=1) if self.markdown else text)

    def _wrap_width(self) -> int:
        """Lines at least this long may have been cut by the terminal that printed them: as
        wide as the pane a wrapped capture shows (less a word, for a word wrap); in a note, a
        word less than the widest whole line of its paste; in a plain log, that widest line
        (where nothing showed a wrap, a line's end is looked for only after the widest)."""
        if self.pane is not None:
            return self.pane.width - (1 if self.pane.kind == "hard" else WRAP_WORD_SLACK)
        if self.markdown:
            return max(WRAP_MIN_WIDTH, self.widest_whole) - WRAP_WORD_SLACK
        return max(WRAP_MIN_WIDTH, self.widest_whole)

    def _warnings_alone(self, text: str) -> float:
        cost = self._reading_cost(text)
        return cost[0] if cost is not None else float("inf")

    def _best_reading(self, pieces: list[str], cuts: Sequence[int] = ()
                      ) -> tuple[int, str] | None:
        """(warnings, joined line) of the reading of ``pieces`` (printed ``cuts`` wider) its
        grammar reads with the fewest warnings, then the fewest labels it does not
        know (`Systemefficiency` of a wrong joint is one), the likelier reading on a tie; None
        when no reading reads."""
        best: tuple[int, int, int, str] | None = None
        # (then as no one pane cut them: a glitch may have spliced a wider line in before)
        by_pane = readings(pieces, self.widest_record, self.pane, cuts)
        ragged = [j for j in ragged_readings(pieces) if j not in by_pane]
        for rank, joints in enumerate(by_pane + ragged):
            line = joined(pieces, joints)
            cost = self._reading_cost(line)
            if cost is not None and (best is None or (*cost, rank) < best[:3]):
                best = (*cost, rank, line)
                if cost == (0, 0):
                    break                   # no reading does better
        return (best[0], best[3]) if best is not None else None

    def _reading_cost(self, text: str) -> tuple[int, int] | None:
        """(warnings, labels kept in ``extra`` as unknown) of the line format that reads
        ``text`` best; None when none reads it."""
        costs = []
        for fmt in self.line_formats:
            if fmt.matches(text):
                try:
                    built = fmt.build(0, text, self.ctx.snapshot())
                except Exception:   # a grammar's or a model's refusal: not one record
                    continue
                if built is not None:
                    values = built.values if isinstance(built, Facts) else built.row.__dict__
                    extra = values.get("extra")
                    costs.append((len(built.warnings),
                                  len(extra) if isinstance(extra, dict) else 0))
        return min(costs, default=None)

    def _named_only(self, text: str) -> bool:
        """Every line format that knows ``text`` by its words finds no record in it, and no
        garbled one: prose that names a program (`... (bin\\llama-server.exe, b10683)`),
        to be read as the prose it is, not kept raw as a record's cut piece."""
        for fmt in self.line_formats:
            if fmt.matches(text):
                try:
                    if fmt.build(0, text, self.ctx.snapshot()) is not None:
                        return False
                except Exception:       # a grammar's refusal: a record, garbled
                    return False
        return True

    def _known(self, text: str) -> bool:
        """A line format reads ``text``, or a block starts at it or at its settings line
        (``preamble``: `llama_batched_bench: n_kv_max = ...`)."""
        return any(f.matches(text) for f in self.line_formats) \
            or any(f.starts(text) or f.preamble is not None and f.preamble.match(text)
                   for f in self.formats)

    def _reads(self, text: str, cleanly: bool = True) -> bool:
        """A line format's grammar reads ``text`` whole (``cleanly``: with no warning, the
        test of a joined wrap)."""
        cost = self._reading_cost(text)
        return cost is not None and not (cleanly and cost[0])

    def _goes_on(self, pieces: list[str], text: str, cuts: Sequence[int] = ()) -> bool:
        """``text`` may be the next piece of the wrapped record ``pieces`` (printed ``cuts``
        wider; the cut of ``text``, the last): one pane could have cut them so, and it starts
        nothing of its own."""
        if len(pieces) >= MAX_WRAPPED_PIECES or not text.strip() or WRAP_BREAK.match(text) \
                or is_capture_line(text):
            return False
        if len(pieces) == 1 and len(pieces[0]) + (cuts[0] if cuts else 0) < self._wrap_width() \
                and self._known_line(pieces[0]) and not self._stops_mid_way(pieces[0]):
            # A short record that reads whole goes on only where it was cut inside a token
            # (`Draft acceptance rate: 1` | `00.0%`), or where it reads on with ``text``.
            return not self._reads(text, cleanly=False) and not self._is_command(text) and (
                cut_in_token(pieces[0], text) or self._reads_on(pieces, text))
        if not readings([*pieces, text], self.widest_record, self.pane, cuts):
            return self._ragged_goes_on(pieces, text)
        if self._known_line(text) and not self._at_edge(pieces, text, cuts):
            return False        # a record's own line, after one no pane cut
        return not (self.start_hint.search(text) and any(f.starts(text) for f in self.formats))

    def _stops_mid_way(self, text: str) -> bool:
        """A record (one a line format knows: the caller's test) that stops mid-way: on a
        separator (`Running: 3 reqs,`) or where its grammar cannot read it to its end
        (`GPU KV`)."""
        return text.rstrip().endswith((",", ":")) or not self._reads(text, cleanly=False)

    def _may_go_on_after_blank(self, pieces: list[str]) -> bool:
        """In a note, a blank line after the record ``pieces`` (one a line format knows, or a
        log line cut before its words) may part it from its next piece: each piece a paragraph
        of the web page it was copied from.  The next line then goes on with it only as a
        record cut at no one width does (_ragged_goes_on)."""
        if not self.markdown or len(pieces) >= MAX_WRAPPED_PIECES or self._is_command(pieces[0]):
            return False
        so_far = ragged_joined(pieces)
        return self._known_line(so_far) or self._cut_before_known(so_far)

    def _ragged_goes_on(self, pieces: list[str], text: str) -> bool:
        """``text`` may go on the record ``pieces`` that no one pane cut (a web page's
        wrap, a line broken after each field): the record stops mid-way (or ``text`` goes on
        its last token: `Running: 3` | `2 reqs`), and ``text`` is no record or block of its
        own."""
        if not text.strip() or WRAP_BREAK.match(text) or is_capture_line(text) \
                or self._is_command(text):
            return False
        so_far = ragged_joined(pieces)
        known = self._known_line(so_far)
        # (a piece that itself stops on a separator goes on, and the next one says more:
        # _unwrap keeps the longest run of pieces that reads)
        return (known and (self._stops_mid_way(so_far) or cut_in_token(so_far, text)
                           or text.rstrip().endswith((",", ":")) or self._reads_on(pieces, text))
                or self.markdown and self._cut_before_known(so_far)) \
            and not self._reads(text, cleanly=False) \
            and not any(f.starts(text) for f in self.formats)

    def _reads_on(self, pieces: list[str], text: str) -> bool:
        """The record ``pieces`` reads on with ``text`` as cleanly as without it, knowing no
        fewer labels (`... Waiting: 0` | `reqs, GPU KV cache usage: 15.3%`): a line of prose
        after it reads on with nothing."""
        before = self._reading_cost(ragged_joined(pieces))
        after = self._best_reading([*pieces, text])
        if before is None or after is None or after[0]:
            return False
        cost = self._reading_cost(after[1])
        return cost is not None and cost <= before

    def _known_line(self, text: str) -> bool:
        """A line format matches ``text`` (its markers first: the cheap test)."""
        return self.wrap_marker_re.search(text) is not None \
            and any(f.matches(text) for f in self.line_formats)

    def _cut_before_known(self, text: str) -> bool:
        """A log record, in a note, that may have been cut before the words a line format knows
        it by (`... Engine 000: Avg` | `prompt throughput: ...`)."""
        return is_capture_line(text) and not self._known(text)

    def _at_edge(self, pieces: list[str], text: str, cuts: Sequence[int]) -> bool:
        """Was the last of ``pieces`` cut at the pane's edge (``text`` after it)?  Without a
        pane the capture shows: a piece no format reads whole was cut, by a word wrap too;
        and before any record line showed the pane's width, the pieces and ``text`` show it."""
        widths = printed_widths(pieces, cuts)
        cut = widths[-1] - len(pieces[-1])
        if self.pane is not None:
            return at_edge(pieces[-1], text, self.pane, self.widest_record, cut)
        # (a piece that ends on a separator, `token usage: 0.02,`, stops mid-record)
        whole = not pieces[-1].endswith((",", ":")) and self._reads(pieces[-1], cleanly=False)
        widest = self.widest_record or (
            max(len(text), *widths) if len(pieces) > 1 or not whole else 0)
        return at_edge(pieces[-1], text, None, widest, cut) or not whole \
            and at_edge(pieces[-1], text, Pane("word", widest), widest, cut)

    def _command_kind(self, text: str) -> str | None:
        """Which command this line runs, if it runs one (a log line that merely names
        `vllm serve` runs nothing)."""
        if not any(hint in text for hint in COMMAND_HINTS):
            return None
        for kind, pattern in self.commands.items():
            if any(invoked_at(text, m.start()) for m in pattern.finditer(text)):
                return kind
        return None

    def _is_command(self, text: str) -> bool:
        return self._command_kind(text) is not None

    def _joint(self, piece: str, nxt: str) -> str:
        """What a wrap took from between the last ``piece`` of a command or repr and the
        ``nxt`` one: nothing when the piece filled the pane (a hard cut, as wide as the
        widest record line of the paste) or a blank is still there; else the space it cut at.
        With no other line to tell the pane's width, a flag starts a word of its own."""
        if piece[-1:].isspace() or nxt[:1].isspace():
            return ""
        if len(piece) < self.widest_record:
            return " "
        if len(piece) > self.widest_record:
            return " " if parted_flag(piece, nxt) else ""
        return ""

    def _still_open(self, text: str) -> bool:
        if _opens_repr(text):
            return True
        if _continued(text) and self._is_command(text):
            return True
        return len(text) >= WRAP_MIN_WIDTH and self._is_command(text)

    def _continues(self, joined: str, nxt: str) -> bool:
        if _opens_repr(joined):
            return bool(nxt.strip())
        if _continued(joined):      # (a fence's end after a last `\` ends the command too)
            return bool(nxt.strip()) and FENCE_RE.match(nxt) is None
        # A command put in the background or ended (`... &`, `;`) goes on on no other line, and
        # a line that runs a command of its own is that command, not a wrapped piece.
        if joined.rstrip().endswith(("&", ";")) or self._is_command(nxt):
            return False
        # A terminal wrap: the next line starts at column 0 (or on the blank the pane cut at,
        # before a flag) and carries on the flags.
        if nxt[:2] == " -" and parted_flag(joined, nxt[1:]):
            return True
        if not nxt or nxt[0].isspace() or NOT_CONTINUATION_RE.match(nxt):
            return False
        return joined.endswith(("-", "=")) or " -" in nxt or nxt.startswith("-")

    # -- context ---------------------------------------------------------------------------
    def _heading(self, level: int, text: str) -> None:
        text = ENTITY_RE.sub(" ", MARKDOWN_EMPHASIS_RE.sub("", HTML_TAG_RE.sub("", text)))
        text = re.sub(r"\s+", " ", text).strip()
        self.widest_whole = self.widest_record = 0
        while self.heading_levels and self.heading_levels[-1] >= level:
            self.heading_levels.pop()
            self.ctx.section.pop()
        if self.prose_lines:        # a section's prose ends with it
            depth = len(self.heading_levels)
            self.prose_lines = [(d, t) for d, t in self.prose_lines if d <= depth]
            self._set_prose()
        self.heading_levels.append(level)
        # A section that sets up the ones after it (`## Workload and controls`, `### Setup`):
        # its prose holds for its siblings too (`## Results`), as its parent's would.
        self.prose_depth = len(self.heading_levels) - (1 if SETUP_HEADING.match(text) else 0)
        self.ctx.section.append(text)
        self.ctx.caption = text
        # A section's commands end with it -- except a run command no result followed in its
        # own section: the plan of the sections beside it, until their parent ends (a PR's
        # `## Test Plan` runs what its `## Test Result` shows; a note's `## Benchmark` runs
        # every `## Results` section after it).
        self.ctx.commands = {
            k: s if s.section_depth < level or s.carried else replace(s, carried=True)
            for k, s in self.ctx.commands.items()
            if s.section_depth < level or s.section_depth == level and (
                s.carried or k in self.run_commands and not s.consumed)}
        self.ctx.label = None
        self.ctx.namespace = None
        self.ctx.printed = {}

    @property
    def _depth(self) -> int:
        return self.heading_levels[-1] if self.heading_levels else 0

    def _comment(self, text: str) -> None:
        bench = self.ctx.commands.get("serving_bench")
        if bench is not None and bench.consumed and not bench.carried:
            # A new label after a finished run starts a new experiment (a plan's runs are its).
            del self.ctx.commands["serving_bench"]
        self.ctx.label = text
        self.ctx.namespace = None

    def _track_capture(self, text: str) -> None:
        capture = self.capture
        if not text.strip():
            capture = False
        elif not capture and not self.in_fence and is_capture_line(text):
            capture = True
        if capture != self.capture:
            self.capture = capture
            self.ctx.fenced = self.in_fence or capture

    def _context_line(self, start: int, text: str) -> None:
        if FENCE_RE.match(text):
            self.diff_fence = not self.in_fence and DIFF_FENCE_RE.match(text) is not None
            self.fence_indent = len(text) - len(text.lstrip(" "))     # (in a list item)
            if not self.in_fence and self.fence_label is not None:
                self.pending_label = self.fence_label
            self.fence_label = None
            self.in_fence = not self.in_fence
            self.widest_whole = self.widest_record = 0   # another paste, another terminal
            self.capture = False
            self.ctx.fenced = self.in_fence or not self.markdown
            return
        if self.markdown:
            self._name_next_result(start, text)
            self.line_at = start
            if self._note_context(text):
                return
        act = self._context_action(start, text)
        if act is not None:
            act()

    def _name_next_result(self, start: int, text: str) -> None:
        item = start in self.list_items
        if self.list_items:
            self.list_items = {n for n in self.list_items if n > start}
        if text.strip():
            summary = summary_label(text) if not self.in_fence else None
            # (a label over a folded section names what it holds before the fold's own title:
            # `Throughput (tok/s, output):`, then `<details><summary>Results</summary>`)
            self.pending_label = label_line(text, item, self.in_fence) \
                or (summary and self.pending_label) or summary \
                or (fenced_word_label(text) if self.in_fence and not self._known(text) else None)
            # (a short plain line names the result only if a fence opens right after it)
            self.fence_label = None if self.in_fence or self.pending_label \
                else plain_label(text)

    def _note_context(self, text: str) -> bool:
        """A note's own context: whether a capture is pasted, its headings (True: the line
        is one) and bold caption lines."""
        self._track_capture(text)
        if self.in_fence or self.capture:
            return False
        heading = HEADING_RE.match(text)
        if heading:
            self._heading(len(heading.group(1)), heading.group(2))
            return True
        bold = BOLD_LINE_RE.match(text)
        if bold:
            self.ctx.caption = re.sub(r"\s+", " ", ENTITY_RE.sub(" ", bold.group("text"))).strip()
        if text.strip() and not text.lstrip().startswith("|"):
            labelled = LABELLED_LINE_RE.match(text)
            if not (labelled and self._keep_labelled(labelled.group(1), text.strip())):
                line = text.strip()
                if self.prose_line_at == self.line_at - 1 and self.prose_lines \
                        and not LIST_MARKER_RE.match(line) \
                        and len(self.prose_lines[-1][1]) + len(line) < MAX_PARAGRAPH:
                    # (a paragraph's next line, as markdown renders it: one sentence,
                    # `... 1024 input / 256 output tokens, 100` + `prompts, ...`)
                    depth, last = self.prose_lines[-1]
                    self.prose_lines[-1] = (depth, f"{last} {line}")
                else:
                    self.prose_lines.append((self.prose_depth, line))
                    del self.prose_lines[:-MAX_PROSE_LINES]
                self.prose_line_at = self.line_at
            self._set_prose()
        return False

    def _keep_labelled(self, label: str, line: str) -> bool:
        """Keep ``line`` as the note's `label: value` line (the latest of that label), unless
        the note already keeps as many labels as a context holds prose lines."""
        key = label.lower()
        if key not in self.labelled_lines and len(self.labelled_lines) >= MAX_PROSE_LINES:
            return False
        self.labelled_lines[key] = line
        return True

    def _setup_row(self, text: str) -> None:
        """A setup table's row (`| GPU | NVIDIA RTX PRO 6000 |`) says what a note's `GPU: ...`
        line says, for the results after it."""
        setup = SETUP_ROW_RE.match(text) if self.markdown and not self.in_fence else None
        if setup is not None and self._keep_labelled(setup.group(1),
                                                     f"{setup.group(1)}: {setup.group(2)}"):
            self._set_prose()

    def _set_prose(self) -> None:
        self.ctx.prose = (*self.labelled_lines.values(), *(t for _, t in self.prose_lines))

    def _context_action(self, start: int, text: str) -> Callable[[], None] | None:
        """What a command, a printed Namespace, a comment or a preamble line does to the
        context; None when the line is none of them.  The fast lane asks it too, so the lines
        it reads alone are those the full pass would find no context in."""
        kind = self._command_kind(text)
        if kind is not None:
            if self.markdown and not self.in_fence and "`" in text:
                # A command quoted in prose is its code span (`-fa 1`.` is no flag's value).
                text = next((span for span in code_spans(text)
                             if self._command_kind(span) == kind), text)
            return lambda: self._saw_command(kind, text, start)
        stripped = text.lstrip()
        if stripped.startswith("Namespace("):
            return lambda: setattr(self.ctx, "namespace",
                                   Seen("namespace", stripped, start, self._depth))
        if self.in_fence or not self.markdown or self.capture:
            comment = COMMENT_RE.match(text)
            if comment and not stripped.startswith("#!"):
                return lambda: self._comment(comment.group(1))
        for preamble in self.preambles:
            match = preamble.match(stripped)
            if match:
                return lambda: self._printed(match.group(1), match.group(2).strip())
        if "=" in text or stripped.startswith("set "):
            assigned = shell_assignment(text)
            if assigned is not None and (assigned[0] in self.shell_vars
                                         or len(self.shell_vars) < MAX_SHELL_VARS):
                return lambda: self.shell_vars.__setitem__(*assigned)
        return None

    def _printed(self, label: str, value: str) -> None:
        """A line a tool prints before its result (`Device 0: ...`, `Backend: vllm`); in a note,
        one a format's ``lasting`` names is remembered past its section too (Context.devices),
        a new list (`ggml_cuda_init: found 1 ROCm devices`) replacing the last."""
        self.ctx.printed[label] = value
        if not self.markdown:
            return
        lasting = next((m for p in self.lasting if (m := p.match(label))), None)
        if lasting is not None:
            if lasting.group("anew"):
                self.ctx.devices = {}
            self.ctx.devices[label] = value

    def _expanded(self, text: str) -> str:
        """``text`` with the note's shell variables put in (`$MODEL`, `${PORT}`)."""
        return SHELL_VAR_RE.sub(
            lambda m: self.shell_vars.get(m.group(1) or m.group(2), m.group(0)), text)

    def _saw_command(self, kind: str, text: str, start: int) -> None:
        if self.shell_vars and "$" in text:
            text = self._expanded(text)
        self.ctx.commands[kind] = Seen(kind, text, start, self._depth)
        if kind in self.run_commands:
            self.run_commands_seen.append((self.ctx.commands[kind], tuple(self.ctx.section)))
            self.ctx.namespace = None
            self.ctx.printed = {}

    def _touches_context(self, text: str) -> bool:
        """Would ``_context_line`` act on this line of a plain log?  (The fast lane's test.)"""
        return self.markdown or FENCE_RE.match(text) is not None \
            or self._context_action(0, text) is not None

    def _starts_something(self, text: str) -> bool:
        """A pasted output file or a result block could start on this line."""
        return self.openers(text) is not None or self.start_hint.search(text) is not None \
            and any(f.starts(text) for f in self.formats)

    def _consume(self, fmt: BlockFormat | None = None) -> None:
        if fmt is not None and not fmt.consumes:
            return          # a published table leaves the run's context to the run
        self.ctx.label = None
        self.ctx.namespace = None
        self.ctx.printed = {}
        for kind, seen in self.ctx.commands.items():
            if kind in self.run_commands:
                seen.consumed = True

    def _take_plain(self, block: Block, source) -> bool:
        """Give an open block with an end line the lines that follow it, straight from a
        LineSource, as long as no marker is on them: such a line can only end the block or be
        part of it (it starts nothing, cuts nothing, joins nothing).  True: the block ended."""
        take = getattr(source, "take_plain", None)
        if take is None or self.lookahead or self.prefix or self.tag is not None:
            return False
        fmt = block.format
        lines, ended = take(self._unquote if self.markdown else str, fmt.end.match,
                            fmt.max_lines - len(block.lines))
        if lines:
            block.lines.extend(text for _, text in lines)
            block.line_end = lines[-1][0]
        block.complete = ended
        return ended

    @staticmethod
    def _unprefixed(text: str) -> tuple[str, str]:
        """(the line without its comment/quote prefix, the prefix) or (line, "")."""
        match = LINE_PREFIX_RE.match(text)
        if match is None:
            return text, ""
        return text[match.end():], match.group(0)

    def _is_output(self, text: str) -> bool:
        """Program output: a log record, a device line, a command, a printed Namespace, a
        stats line, a line a result block's tool prints before it, the first line of a result
        block (a `c=16` is not)."""
        return (is_capture_line(text) or text.startswith("Namespace(")
                or self._command_kind(text) is not None
                or any(fmt.matches(text) for fmt in self.line_formats)
                or any(preamble.match(text.strip()) for preamble in self.preambles)
                or self._starts_something(text))

    def _unprefix_run(self, text: str) -> str:
        """Lines that share a comment or quote prefix are read without it: a run starts at a
        prefixed line that holds program output and lasts while the lines carry the prefix
        (a lone `# c=16` is a comment, not a run).  In a note, outside fences, a `#` line is
        a heading (one line) unless the line after it starts with `#` too: then it opens a
        run of commented output."""
        if self.prefix:
            if text.startswith(self.prefix.rstrip()):
                self.lapsed = False
                return self._strip_prefix(text, self.prefix)
            if not self.lapsed and text.strip() and self.block_open():
                self.lapsed = True      # one line typed into the output: see the next one
                return text
            self.prefix, self.run_broke, self.lapsed = "", True, False
        if text[:1] in PREFIX_INITIALS and not self._heading_line(text):
            bare, found = self._unprefixed(text)
            if found and not TABLE_RULE_RE.match(text) and self._is_output(bare):
                self.prefix = found
                return bare
        return text

    def _untagged(self, text: str) -> str:
        """``text`` without the tag of the run of tagged lines it is in (TAG_PARTS_RE); a run
        starts where a result starts after a tag, and ends at the first line without it."""
        if self.tag is not None:
            match = self.tag.match(text)
            if match is not None:
                self.lapsed = False
                return text[match.end():]
            if not self.lapsed and text.strip() and self.block_open():
                self.lapsed = True      # one line typed into the output: see the next one
                return text
            self.tag, self.run_broke, self.lapsed = None, True, False
        token = FIRST_TOKEN_RE.match(text)          # a tag is the line's first word
        if token is None or TAG_END_RE.search(text, 0, min(token.end(), MAX_TAG_CHARS)) is None \
                or self.block_open() or not self.start_hint.search(text, 0, MAX_TAG_CHARS + 80) \
                or any(f.starts(text) for f in self.formats):
            return text
        for end in TAG_END_RE.finditer(text, 0, min(token.end(), MAX_TAG_CHARS)):
            tag = text[:end.end()]
            if not any(c.isalnum() for c in tag) \
                    or text[end.end():end.end() + 1] in TAG_INSIDE:
                continue        # a rule, a table's border, or inside a time or a number
            if any(f.starts(text[end.end():]) for f in self.formats):
                self.tag = tag_pattern(tag)
                return text[end.end():]
        return text

    def _heading_line(self, text: str) -> bool:
        if not (self.markdown and not self.in_fence and text.lstrip().startswith("#")):
            return False
        following = self.peeking.peek() if self.peeking is not None else ""
        return not following.startswith("#")

    @staticmethod
    def _strip_prefix(text: str, prefix: str) -> str:
        """A line of a prefixed run without the prefix (`#` alone is an empty line)."""
        if text.startswith(prefix):
            return text[len(prefix):]
        return text[len(prefix.rstrip()):].lstrip(" \t")

    def _quoted_records(self, text: str) -> list[str]:
        """The inline code spans of a prose line of a note that a line format reads whole
        (`- vLLM printed `GPU KV cache size: 75,776 tokens`, so c=8 fits`): the log lines the
        line quotes.  None in a fence (a code line's backticks are its own), none when the line
        itself is a record (a log message that quotes a flag), and a span that merely names a
        label (`Maximum concurrency`) is no record: [] for such lines, and for a table's row
        (a cell's code is the table's)."""
        if self.in_fence or FENCE_RE.match(text) or text.lstrip().startswith("|"):
            return []
        spans = [span for span in code_spans(text)
                 if any(fmt.matches(span) for fmt in self.line_formats)]
        spans = [span for span in spans if self._reads(span, cleanly=False)]
        if not spans or self._reads(text, cleanly=False):
            return []
        return spans

    def _unquote(self, text: str) -> str:
        """Output quoted in a reply (`> ====== Serving Benchmark Result ======`) is output;
        `>` can only open a quote within a line's first four characters.  In a ```diff
        fence, a line is what it adds, keeps or removes (`+| 4 | 258 |`).  Output pasted as
        one code span over many lines has a lone backtick on its first and last lines."""
        if self.diff_fence and self.in_fence:
            # (a fence indented in a list item indents its lines as much: not the diff's mark)
            blanks = min(self.fence_indent, len(text) - len(text.lstrip(" ")))
            text = _undiffed(text[blanks:])
        if "`" in text and not self.in_fence and text.count("`") == 1:
            text = LONE_BACKTICK_RE.sub("", text, count=1)
        return BLOCKQUOTE_RE.sub("", text, count=1) if ">" in text[:4] else text

    def _close_region(self, region: Region, after: tuple[int, int, str] | None
                      ) -> Iterator[Embedded]:
        """The copy read as the file it is, or its lines (and ``after``) given back."""
        back = region.trailing_blanks()
        fmt = region.recognised_by()
        if fmt is None:
            given = region.given_back()
            self.refused_until = given[-1][0]
            back = [*given, *back]
        else:
            first, last = region.items[0], region.items[-1]
            yield Embedded(fmt, region.text, [s for s, _, _ in region.items], first[0],
                           last[1], self.ctx.snapshot(),
                           [(s, t) for s, _, t in region.skipped])
            self._consume()
        if back and after is not None:
            back.append(after)
        self.replay.extendleft(reversed(back))

    def _closed_early(self, block: Block
                      ) -> "tuple[Unclosed | Truncated, list[tuple[int, int, str]]]":
        """A block with an end line that something else cut, or the input ended: read as one
        that lost its closing rule, or cut short, or a Truncated warning; and the lines it took
        after its body (blank lines, a heading, prose), to be read again: a heading there
        names the next result."""
        closed = _unclosed(block) or _cut_short(block)
        if closed is None:
            return Truncated(block.format, block.lines, block.line_start, block.line_end), []
        body = closed.cut_at - block.line_start
        # (only where each line is one physical line: a joined wrap has no line of its own)
        if block.line_end - block.line_start + 1 != len(block.lines):
            return closed, []
        return closed, [(block.line_start + i, block.line_start + i, block.lines[i])
                        for i in range(body, len(block.lines))]

    # -- the pass --------------------------------------------------------------------------
    def run(self, lines: Iterable[tuple[int, str]]) -> Iterator[Block | LineHit | Truncated]:
        """The file's pieces, in order.  A note's are held to its end: a run command written
        after its results (`Client:` and the command under a table) is theirs too."""
        if not self.markdown:
            yield from self._pieces(lines)
            return
        # (held while the note stays in their section, and no longer than HELD_PIECES: a
        # command after its section's end is another section's, and a long note streams on)
        held: list = []
        section: list[str] = []
        for piece in self._pieces(lines):
            if held and (self.ctx.section != section or len(held) >= HELD_PIECES):
                yield from self._with_trailing_commands(held)
                held = []
            if not held:
                section = list(self.ctx.section)
            held.append(piece)
        yield from self._with_trailing_commands(held)

    def _with_trailing_commands(self, held: list) -> list:
        _give_trailing_commands(held, self.run_commands_seen)
        self.run_commands_seen = []
        return held

    def _pieces(self, lines: Iterable[tuple[int, str]]) -> Iterator[Block | LineHit | Truncated]:
        block: Block | None = None
        ended: Block | None = None         # an end=None block still looking for its trailer
        gap: list[tuple[int, int, str]] = []
        # Lines after an open end=None block that are not its own (one, and blank lines after
        # it), held to see whether the block goes on after them (BlockFormat.resumes).
        held: list[tuple[int, int, str]] = []
        foreign_gap = -1        # where such a line sits in ``gap``, waiting for the trailer
        self.block_open = lambda: block is not None
        region: Region | None = None      # a pasted output file being gathered
        if self.markdown:       # its `#` lines are headings or comments by the line after
            lines = self.peeking = _Peeking(lines, lambda text: not self.block_open() and not any(
                f.starts(text) for f in self.formats))
        # A markdown note is short and every line may open or close a pasted capture: no skips.
        idle = (lambda: False) if self.markdown else \
            (lambda: block is None and ended is None and region is None)
        lane = self.lane.out if self.lane is not None else []
        for item in self._fed(lines, idle):
            if lane:
                yield from lane
                lane.clear()
            if region is not None:
                if item is not None and region.take(*item):
                    continue
                yield from self._close_region(region, item)
                region = None
                if item is None or self.replay:
                    continue
            if item is None:
                if block is not None and block.format.end is not None and not held:
                    closed, after = self._closed_early(block)
                    yield closed
                    self._consume(block.format)
                    self.replay.extendleft(reversed(after))     # read again
                    block = None
                    continue
                if held and block is not None:      # the input ended after them
                    self.replay.extend(held)
                    held = []
                    block.complete = True
                    if block.format.trailer is not None:
                        ended, gap = block, []
                    else:
                        yield block
                        self._consume(block.format)
                    block = None
                elif foreign_gap >= 0 and ended is not None:
                    yield ended
                    self._consume(ended.format)
                    ended = None
                    self.replay.extend(gap[foreign_gap:])
                    foreign_gap = -1
                continue
            start, end, text = item
            run_ended, self.run_broke = self.run_broke, False
            while self.wrap_cuts:
                yield WrapCut(*self.wrap_cuts.pop(0))
            if block is not None:
                fmt = block.format
                if fmt.end is not None and fmt.end.match(text):
                    block.lines.append(text)
                    block.line_end = end
                    block.complete = True
                    yield block
                    block = None
                    self._consume(fmt)
                    continue
                # A format that does not restart itself (a generic `|` table) does not cut
                # another open block that continues with the line (a llama-bench table's rows).
                own = fmt.end is None and fmt.continues is not None and fmt.continues(text)
                cut = (FENCE_RE.match(text) or len(block.lines) >= fmt.max_lines
                       or fmt.restarts and (fmt.restarts_at is None
                                            or fmt.restarts_at.search(text)) and fmt.starts(text)
                       or self.cut_hint.search(text) is not None
                       and any(f.starts(text) for f in self.cutters
                               if f is not fmt and (f.restarts or not own)))
                # (a note's heading ends a block that ends at its first line not its own)
                cut = cut or run_ended or fmt.end is None and self._heading_line(text)
                if held:
                    if not cut and (fmt.resumes(block.lines, text) or fmt.trailer is not None
                                    and fmt.trailer.match(text) is not None):
                        block.lines.extend(t for _, _, t in held)
                        block.line_end = held[-1][1]
                        held = []
                    elif not cut and len(held) < MAX_HELD and (own and text.strip() or sum(
                            1 for h in held if not fmt.continues(h[2])) < HELD_LINES):
                        held.append(item)
                        continue
                    else:
                        # The block ended at its last own line: the held lines are read again,
                        # then this one.
                        self.replay.extendleft(reversed([*held, item]))
                        held = []
                        block.complete = True
                        if fmt.trailer is not None:
                            ended, gap = block, []
                        else:
                            yield block
                            self._consume(fmt)
                        block = None
                        continue
                if fmt.end is None and not cut and fmt.continues is not None and fmt.continues(text):
                    block.lines.append(text)
                    block.line_end = end
                    if "|" in text:
                        self._setup_row(text)
                    continue
                if fmt.end is None and not cut and fmt.resumes is not None and text.strip() \
                        and not (fmt.trailer is not None and fmt.trailer.match(text)):
                    held = [item]
                    continue
                if fmt.end is None and fmt.trailer is not None:
                    block.complete = True
                    ended, gap = block, []
                elif fmt.end is None:
                    block.complete = True
                    yield block
                    self._consume(fmt)
                elif cut:
                    closed, after = self._closed_early(block)
                    yield closed
                    self._consume(fmt)          # (a result cut short is still its command's)
                    if after:                   # its lines after the body, then this one
                        self.replay.extendleft(reversed([*after, item]))
                        block = None
                        continue
                else:
                    block.lines.append(text)
                    block.line_end = end
                    if self._take_plain(block, lines):
                        yield block
                        block = None
                        self._consume(fmt)
                    continue
                block = None
            if ended is not None:
                if not text.strip() and len(gap) < ended.format.trailer_gap + (foreign_gap >= 0):
                    gap.append(item)
                    continue
                trailer = ended.format.trailer.match(text) is not None
                if not trailer and foreign_gap < 0 and ended.format.resumes is not None \
                        and text.strip() and not run_ended and not FENCE_RE.match(text) \
                        and not self._starts_something(text):
                    foreign_gap = len(gap)      # a line typed before the trailer?
                    gap.append(item)
                    continue
                if trailer:
                    ended.lines.extend([*(t for _, _, t in gap), text])
                    ended.line_end = end
                yield ended
                self._consume(ended.format)
                ended = None
                if trailer:
                    foreign_gap = -1
                    continue
                if foreign_gap >= 0:        # no trailer after it: read it (and this) again
                    self.replay.extendleft(reversed([*gap[foreign_gap:], item]))
                    foreign_gap = -1
                    continue
            kind = self.openers(text) \
                if start > self.refused_until else None
            if kind is not None:
                region = Region(kind, self.file_formats)
                region.take(start, end, text)
                continue
            started = next((f for f in self.formats if f.starts(text)), None) \
                if self.start_hint.search(text) else None
            if started is not None:
                # (a short plain line right above it, blank lines between, names it too)
                named = self.pending_label or (self.fence_label if self.markdown else None)
                # (the line right above names it before a comment further up: `# Perf data`
                # in a pasted note, then `Throughput (tok/s, output):`)
                if named is not None and (self.ctx.label is None or self.pending_label):
                    self.ctx.label = named
                self.pending_label = self.fence_label = None
                block = Block(started, [text], start, end, False, self.ctx.snapshot())
                # Ended on its own line (an HTML <table>...</table>) or by the lines after it.
                if started.end is not None and (started.end.match(text)
                                                or self._take_plain(block, lines)):
                    block.complete = True
                    yield block
                    block = None
                    self._consume(started)
                continue
            if start not in self.quoting:
                self._context_line(start, text)
            if self.shell_vars and "$" in text and self._is_command(text):
                text = self._expanded(text)     # (a launch command's `--model "$MODEL"`)
            for fmt in self.line_formats:
                if fmt.matches(text):
                    yield LineHit(fmt, start, text, self.ctx.snapshot(), end)
        yield from (WrapCut(*cut) for cut in self.wrap_cuts)
        if ended is not None:
            yield ended
        if block is not None:       # (one with an end line was closed at the input's end)
            block.complete = True
            yield block
