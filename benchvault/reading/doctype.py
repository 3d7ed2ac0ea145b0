"""Is a text file a markdown document, whatever its name says?

People save notes as `.txt`, `.log` or with no suffix at all; a note is read as markdown when
its text is one: front matter, `#` headings set off by blank lines, pipe tables with their
separator row, HTML tables, fenced code, links and lists.  Three or more `#` lines in a row are
comments (a script's, or output pasted commented), not headings.  A terminal capture has none of that
outside its own lines: log records, shell prompts, tool tables (a llama-bench table has a
separator row too, so a separator alone never decides).

Within a markdown document a terminal capture pasted without a fence is still a capture: the
segmenter asks :func:`is_capture_line` for each unfenced line (see Segmenter.capture).
"""

from __future__ import annotations

import re
from itertools import islice
from typing import Iterable

MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx", ".mkd")
HEAD_LINES = 2000
COMMENT_RUN = 3      # consecutive `#` lines that are comments, not headings

FENCE = re.compile(r"^\s{0,3}(?:`{3,}|~{3,})")
ATX_HEADING = re.compile(r"^#{1,6}[ \t]+\S")
# No two adjacent optional-whitespace runs: a long blank run must not backtrack quadratically.
TABLE_SEPARATOR = re.compile(r"^\s*(?:\|\s*)?:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)+(?:\|\s*)?$")
HTML_TABLE = re.compile(r"<table\b", re.IGNORECASE)
LINK = re.compile(r"\[[^\[\]\n]+\]\([^)\s]+\)")
LIST_ITEM = re.compile(r"^\s{0,3}(?:[*+-]|\d+[.)])[ \t]+\S")
EMPHASIS = re.compile(r"\*\*[^*\n]+\*\*")
# What only a program writes: log records (`INFO 01-05 11:32:46 [...]`, `[2025-01-05 ...]`,
# `2025-01-05 11:32:46,123 INFO`), process tags (`(APIServer pid=1)`), prompts, progress bars.
CAPTURE = re.compile(
    r"^\s*(?:(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL)\b"
    r"|\[?\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}"
    r"|\[\d{2}:\d{2}:\d{2}\]"
    r"|\(\w+ pid=\d+\)"
    r"|[\w@.:~/-]+[$#%] \S|\$ \S"
    r"|\d+%\|"
    r"|(?:llama|ggml|load|print_info|main|system_info|build)[\w.]*: )")


def by_suffix(path: str) -> bool:
    return path.lower().endswith(MARKDOWN_SUFFIXES)


def is_capture_line(text: str) -> bool:
    """A line only a program prints (a log record, a prompt, a progress bar)."""
    return CAPTURE.match(text) is not None


def _in_comment_runs(lines: list[str]) -> set[int]:
    """The lines of runs of COMMENT_RUN or more consecutive `#` lines: commented text (a
    script's, a log's pasted output), where a heading is one line."""
    inside: set[int] = set()
    start = 0
    for number in range(len(lines) + 1):
        if number < len(lines) and lines[number].startswith("#"):
            continue
        if number - start >= COMMENT_RUN:
            inside.update(range(start, number))
        start = number + 1
    return inside


def looks_like_markdown(lines: Iterable[str]) -> bool:
    """Weigh markdown structure outside fences against program output outside fences."""
    markdown = capture = 0
    fenced = False
    previous = ""
    fences = 0
    lines = list(islice(lines, HEAD_LINES))
    commented = _in_comment_runs(lines)
    for number, line in enumerate(lines):
        if number == 0 and line.strip() == "---":
            markdown += 5                                   # YAML front matter
        if number == 0 and line.startswith("#!"):
            capture += 5                                    # a script
        if FENCE.match(line):
            fenced, fences = not fenced, fences + 1
            previous = line
            continue
        if fenced:
            continue
        if number in commented:
            capture += 1
        elif ATX_HEADING.match(line) and not previous.strip():
            markdown += 2
        elif TABLE_SEPARATOR.match(line):
            markdown += 1
        elif HTML_TABLE.search(line):
            markdown += 3
        elif LIST_ITEM.match(line) or LINK.search(line) or EMPHASIS.search(line):
            markdown += 1
        elif is_capture_line(line):
            capture += 1
        previous = line
    markdown += 2 * (fences // 2)
    return markdown >= 4 and markdown > capture


def sniff_markdown(path: str, head: bytes) -> bool:
    """Markdown by name, else by the text of the file's first lines."""
    if by_suffix(path):
        return True
    text = head.decode("utf-8", errors="replace")
    lines = text.splitlines()
    if len(head) >= 1 << 16 and lines:
        lines.pop()                                         # cut mid-line
    return looks_like_markdown(lines)
