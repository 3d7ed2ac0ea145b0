"""A vLLM / SGLang serving result block pasted without its banner line.

People copy the figures out of the terminal and leave the ``==== Serving Benchmark Result ====``
line behind (a recipe's README, an issue): the block then starts at ``Successful requests:``.
It is read as the block it is (parsers/vllm_serving.py, the banner put back) when enough of the
block's own labels follow one another: the request count, the duration and a throughput line.
One such label in prose is nothing.
"""

from __future__ import annotations

import re

from . import vllm_serving
from ..schemas.models import INCOMPLETE
from .base import Block, BlockFormat, Parsed

# Where a paste of the block may start: its first figure, or the rule of one of its sections
# (`-----Time per Output Token (excl. 1st token)------`), the figures above it left behind.
SECTION_TITLES = (r"Time to First Token|Time per Output Token[^-]*|Inter-?[Tt]oken Latency"
                  r"|End-to-[Ee]nd Latency|Speculative Decoding|Request Latency")
FIRST_FIGURE = re.compile(r"^\s*Successful requests:[ \t]{2,}\d+\s*$")   # its padded layout
# A note that retyped the block as a list, one space after each label: it starts at the
# duration, which carries the block's unit (the early-2024 client printed `Benchmark duration:
# 41.49 s`); its `Successful requests: N` before it is what the segmenter saw printed.
RETYPED_START = re.compile(r"^\s*Benchmark duration \(s\):[ \t]+\d[\d.]*\s*$")
SECTION_START = re.compile(r"^\s*-{3,}\s*(?:" + SECTION_TITLES + r")\s*-{3,}\s*$", re.I)
# ...or one of a section's statistics, its rule left behind too (`Median ITL (ms):   22.52`).
STATISTIC_START = re.compile(r"^\s*(?:Mean|Median|P\d+(?:\.\d+)?)\s+(?:TTFT|TPOT|ITL|E2EL)"
                             r" \(ms\):[ \t]{2,}\d[\d.]*\s*$")
START = re.compile(FIRST_FIGURE.pattern + "|" + SECTION_START.pattern + "|"
                   + RETYPED_START.pattern + "|" + STATISTIC_START.pattern, re.I)
BANNER = "============ Serving Benchmark Result ============"
CLOSING = re.compile(r"^\s*={10,}\s*$")
# A label the block prints with no value after it (`Per-position acceptance (%):`).
HEADING = re.compile(r"^\s*[A-Za-z][\w ()%/-]{0,60}:\s*$")
NEEDED = (re.compile(r"^\s*Benchmark duration \(s\):", re.I),
          re.compile(r"^\s*(?:Request|Output token|Total token|Input token) throughput", re.I))
# A paste from a section on: two of the section's own statistics after its rule.
STATISTIC = re.compile(r"^\s*(?:Mean|Median|Std|P\d+(?:\.\d+)?)\s+[A-Za-z][A-Za-z0-9]* \(ms\):[ \t]+\S")


# A label padded to the value column, whatever the value (one garbled, `not set`)...
PADDED = re.compile(r"^\s*[A-Za-z][^:]{0,80}:[ \t]{2,}\S[^:]{0,30}$")
# ...or retyped with one space: a label with the block's unit (`Mean TTFT (ms): 84.31`) or one
# of its counts (the early-2024 client's `Benchmark duration: 166.88 s` is not the block's).
RETYPED = re.compile(r"^\s*(?:[A-Za-z][^:()]{0,80}\((?:s|ms|req/s|tok/s|%|x)\)|Successful "
                     r"requests|Failed requests|Total (?:input|generated|output) tokens|Total "
                     r"input (?:text|vision) tokens|Maximum request concurrency|Peak concurrent "
                     r"requests)[ \t]*:[ \t]\S[^:]{0,30}$")


SECTION = re.compile(r"^\s*-{2,}[^\n]{0,80}?-{2,}\s*$")


def continues(line: str) -> bool:
    """The block's own lines: labels padded to its value column, section rules, the closing
    rule (a summary of `Label: value` lines with one space is another format's)."""
    return PADDED.match(line) is not None or RETYPED.match(line) is not None \
        or SECTION.match(line) is not None \
        or CLOSING.match(line) is not None or HEADING.match(line) is not None


def resumes(lines: list[str], line: str) -> bool:
    """After a line typed into the paste, the block goes on at a line of its own (not after
    its closing rule)."""
    last = next((ln for ln in reversed(lines) if ln.strip()), "")
    return bool(line.strip()) and not CLOSING.match(last) and continues(line)


def build(block: Block) -> list[Parsed]:
    lines = [ln for ln in block.lines]
    while lines and not lines[-1].strip():
        lines.pop()
    from_section = SECTION_START.match(lines[0]) is not None if lines else False
    from_statistic = STATISTIC_START.match(lines[0]) is not None if lines else False
    start = block.line_start - 1            # the banner put back stands before the block
    completed = (block.context.printed or {}).get("Successful requests")
    if lines and RETYPED_START.match(lines[0]) and completed is not None:
        lines.insert(0, f"Successful requests: {completed}")
        start -= 1
    # Enough of its own labels, one after another: not one label quoted in prose.
    if from_section:
        if sum(1 for ln in lines[1:8] if STATISTIC.match(ln)) < 2:
            return []
    elif from_statistic:
        if sum(1 for ln in lines[:8] if STATISTIC.match(ln)) < 3:
            return []                       # (a statistic or two quoted in a note)
    elif len(lines) < 4 or not all(any(p.match(ln) for ln in lines[:8]) for p in NEEDED):
        return []
    if not CLOSING.match(lines[-1]):
        lines.append("=" * 50)
    inner = Block(vllm_serving.FORMAT, [BANNER, *lines], start, block.line_end,
                  True, block.context)
    built = vllm_serving.build(inner)
    built = built if isinstance(built, list) else [built]
    if from_section or from_statistic:
        # The figures above the section were not pasted: what is here is kept, marked so.
        where = f"its section {lines[0].strip(' -')!r}" if from_section \
            else f"the line {lines[0].strip()!r}"
        for parsed in built:
            parsed.row.extra = {**(parsed.row.extra or {}), INCOMPLETE: True}
            parsed.warnings.append((block.line_start, f"a result block pasted from {where} "
                                    "on: the figures above it are not in the paste; kept, "
                                    "marked incomplete"))
    return built


FORMAT = BlockFormat(
    name="vllm_serving_headless",
    table="serving_runs",
    description="vLLM / SGLang serving result block pasted without its banner line, from "
                "`Successful requests:` on (read as vllm_serving).",
    upstream=("vllm bench serve / benchmark_serving.py result block, banner left out",),
    markers=("Successful requests:", "---", "Benchmark duration (s):", " (ms):"),
    start=START,
    end=None,
    max_lines=120,
    build=build,
    continues=continues,
    resumes=resumes,
    restarts_at=FIRST_FIGURE,
    # Its first line is a line of a whole block too: it never cuts one.
    cuts=False,
)
