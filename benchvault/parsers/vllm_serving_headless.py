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
from .base import Block, BlockFormat, Parsed

START = re.compile(r"^\s*Successful requests:[ \t]{2,}\d+\s*$")   # the block's padded layout
BANNER = "============ Serving Benchmark Result ============"
CLOSING = re.compile(r"^\s*={10,}\s*$")
# A label the block prints with no value after it (`Per-position acceptance (%):`).
HEADING = re.compile(r"^\s*[A-Za-z][\w ()%/-]{0,60}:\s*$")
NEEDED = (re.compile(r"^\s*Benchmark duration \(s\):", re.I),
          re.compile(r"^\s*(?:Request|Output token|Total token|Input token) throughput", re.I))


# A label padded to the value column, whatever the value (one garbled, `not set`).
PADDED = re.compile(r"^\s*[A-Za-z][^:]{0,80}:[ \t]{2,}\S[^:]{0,30}$")


SECTION = re.compile(r"^\s*-{2,}[^\n]{0,80}?-{2,}\s*$")


def continues(line: str) -> bool:
    """The block's own lines: labels padded to its value column, section rules, the closing
    rule (a summary of `Label: value` lines with one space is another format's)."""
    return PADDED.match(line) is not None or SECTION.match(line) is not None \
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
    # Enough of its own labels, one after another: not one label quoted in prose.
    if len(lines) < 4 or not all(any(p.match(ln) for ln in lines[1:8]) for p in NEEDED):
        return []
    if not CLOSING.match(lines[-1]):
        lines.append("=" * 50)
    inner = Block(vllm_serving.FORMAT, [BANNER, *lines], block.line_start - 1, block.line_end,
                  True, block.context)
    built = vllm_serving.build(inner)
    return built if isinstance(built, list) else [built]


FORMAT = BlockFormat(
    name="vllm_serving_headless",
    table="serving_runs",
    description="vLLM / SGLang serving result block pasted without its banner line, from "
                "`Successful requests:` on (read as vllm_serving).",
    upstream=("vllm bench serve / benchmark_serving.py result block, banner left out",),
    markers=("Successful requests:",),
    start=START,
    end=None,
    max_lines=120,
    build=build,
    continues=continues,
    resumes=resumes,
    # Its first line is a line of a whole block too: it never cuts one.
    cuts=False,
)
