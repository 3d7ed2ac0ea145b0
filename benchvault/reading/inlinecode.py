"""Inline code spans of a markdown line: what a note quotes in backticks.

A note's prose quotes the log lines it talks about (``- vLLM printed `GPU KV cache size:
75,776 tokens`, so c=8 fits``); the segmenter reads such a span as the line it quotes when a
line format reads it whole (see Segmenter._quoted_records).  CommonMark's rule: a run of N
backticks opens a span that the next run of exactly N closes; the blanks at either end of the
content are not part of the quoted line.
"""

from __future__ import annotations

import re

# A backtick run, then the shortest content up to a run of the same length (no longer run).
CODE_SPAN_RE = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")


def code_spans(text: str) -> list[str]:
    """The contents of the inline code spans of ``text``, in order ("" spans left out)."""
    if "`" not in text:
        return []
    spans = []
    for match in CODE_SPAN_RE.finditer(text):
        content = match.group(2).strip()     # (more than CommonMark's one space: a line)
        if content:
            spans.append(content)
    return spans
