"""What a published result table's cells and headers mean: numbers, units, long-form rows.

Shared by the markdown and HTML table formats (``published_markdown``, ``published_html``): both
grammars give a header and body rows of cell texts; this module turns them into one
``published_tables`` row and one ``published_results`` row per cell.

    | Preset | Prompt TPS | Avg Latency (s) | Errors |     →  (H100X1, Prompt TPS, 45.74, tok/s)
    | H100X1 | 45.74      | 6.95            | 0      |        (H100X1, Avg Latency (s), 6.95, s)
                                                               (H100X1, Errors, 0, None)
"""

from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass
from typing import Iterable

from ..schemas.published import PublishedResult, PublishedTable
from ..parsers.base import Block, Parsed

LINE_BREAK_RE = re.compile(r"\s*<br\s*/?>\s*", re.I)
# (`__` inside a word is no emphasis: `mean_tpot_ms__triton`)
MARKUP_RE = re.compile(r"<[^>]+>|\*\*|(?<!\w)__|__(?!\w)|(?<!\w)[*_](?=\S)|(?<=\S)[*_](?!\w)|`")
# `45.74`, `-0.6%`, `63.0 GB`, `13.5GB`, `1,234.5`, `~25.9%`, `878.31 ± 4.11`, `16.4¹`
# A number in a cell: `1,234.5` (commas or spaces group thousands: `336 827`), `12.3`, `1e-3`, or a decimal comma
# (`199,8`, `13,26`: a comma followed by other than three digits).  (Each run of digits is
# read one way only: `\d*\.?\d+` took quadratic time on a long run of digits that was no number.)
NUMBER_CELL_RE = re.compile(
    r"^[~≈]?\s*(?P<number>[-+−]?(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d{1,3}(?:[ \u2009\u202f]\d{3})+(?:\.\d+)?"
    r"|\d+,(?!\d{3}(?!\d))\d+"
    r"|(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?))"
    r"\s*(?P<unit>%|[A-Za-zµ]{1,6}(?:/[A-Za-z]{1,4})?)?"
    r"\s*(?:(?:±|\+/-|\+-)\s*(?:\d+(?:[.,]\d+)?|[.,]\d+)\s*%?)?"
    r"(?:\s*[\u00b9\u00b2\u00b3\u2070\u2074-\u2079†‡§]{1,3})?$")     # (a footnote's mark: `16.4¹`)
DECIMAL_COMMA = re.compile(r"^[-+−]?\d+,(?!\d{3}(?!\d))\d+$")
# A writer's remark in brackets after a cell's value (`101.2 (-16%)`, `0 (all GPU)`).
CELL_REMARK = re.compile(r"\s*[(\[][^()\[\]]*[)\]]\s*$")
UNIT_WORD_RE = re.compile(r"^(?:%|[A-Za-zµ]{1,5}(?:/[A-Za-z]{1,4})?)$")
PAREN_RE = re.compile(r"\(([^()]*)\)\s*$")
# Header words that name a unit when the header has no `(unit)`.
HEADER_UNITS = (
    (re.compile(r"\bTPS\b|\btok(?:en)?s?\s*/\s*s(?:ec)?\b|\bt/s\b", re.I), "tok/s"),
    (re.compile(r"\breq(?:uest)?s?\s*/\s*s(?:ec)?\b|\bRPS\b|\bQPS\b", re.I), "req/s"),
    (re.compile(r"%|\bpercent\b", re.I), "%"),
)
SPACES_RE = re.compile(r"\s+")
# A column of differences between runs (`Δ`, `Speedup`, `vs main`, `提升绝对值`): no run, nor a label
# of one.
DIFFERENCE = re.compile(r"\b(?:delta|diff|difference|change|improvement|impr|speedup|gain|uplift"
                        r"|ratio|regression|vs\.?)\b|Δ|^%$"
                        r"|提升|提高|差值|差异|变化|增幅|降幅|百分比|对比|改善|差分|変化|向上", re.I)
# A delimiter row (`|---|:--:|`) or a line of only borders.
SEPARATOR = re.compile(r"^[\s|:+=-]*$")


# A cell of two runs' figures, the first's before an arrow (`8054 -> 8024 +0%`, `12.1 → 10.3`);
# a change after the second (`+0%`, `(-16%)`) is the writer's.
ARROWS = r"(?:->|=>|→|⇒|➜|➡)"
# A unit written once after both (`3388 → 3265 ms`) is both's.
ARROW_CELL = re.compile(r"^(?P<before>[^>→⇒➜➡]*?\d[^>→⇒➜➡]*?)\s*" + ARROWS + r"\s*"
                        r"(?P<after>[-+−]?[\d.,]+[^\s(]*)"
                        r"(?:\s+(?P<unit>ms|s|secs?|seconds|us|µs|tok/s|t/s|tokens?/s|req/s|rps|qps|tps))?"
                        r"(?:\s*\(?[-+−±]?\s*\d[\d.]*\s*[%x×]\)?)?$")
# The two runs a header's arrow names (`mean TTFT (Triton → cutlass)`, `tok/s OFF -> ON`).
ARROW_NAMES = re.compile(r"\s*\(\s*([^()]+?)\s*" + ARROWS + r"\s*([^()]+?)\s*\)"
                         r"|\s+([A-Za-z][\w.-]*)\s*" + ARROWS + r"\s*([A-Za-z][\w.-]*)\s*$")


LONGEST_ARROW_CELL = 120


def arrow_cell(text: str) -> re.Match[str] | None:
    """ARROW_CELL's match of a cell, None for a long one: two figures and an arrow are short,
    and the pattern's lazy runs take quadratic time on a cell thousands of characters long."""
    return ARROW_CELL.match(text) if len(text) <= LONGEST_ARROW_CELL else None


def arrow_names(header: str) -> tuple[str, str] | None:
    """The two runs a header's arrow names, None when it names none."""
    match = ARROW_NAMES.search(header)
    if match is None:
        return None
    return (match.group(1), match.group(2)) if match.group(1) else (match.group(3), match.group(4))


def arrow_side(match: re.Match[str], side: str) -> str:
    """One side of an ARROW_CELL match, with the unit written once after both."""
    text = match.group(side)
    unit = match.group("unit")
    return f"{text} {unit}" if unit and not re.search(r"[A-Za-zµ]", text) else text


# The `/` between figures written together in one cell (`120.5 / 301.2`) or names in a header.
SLASH = re.compile(r"\s*/\s*")


# A character markdown escaped so it is not markup (`IQ4\_NL`, `\|`, `\*`): the character.
MARKDOWN_ESCAPE_RE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|~<>])")


# A link (`[Gemma 3 1B](https://huggingface.co/...)`): its text; an image: nothing; an emoji or icon
# shortcode standing apart (`:material-open-in-new:`, `:fire:`): nothing.
LINK_RE = re.compile(r"\[([^\[\]]*)\]\([^()\s]*\)")
IMAGE_RE = re.compile(r"!\[[^\[\]]*\]\([^()\s]*\)")
SHORTCODE_RE = re.compile(r"(?<!\S):[a-z][a-z0-9_+-]*:(?!\S)")


def cell_text(raw: str) -> str:
    """A cell as a reader sees it: markup, links, entities and extra spaces removed, a line
    break (`<br>`) written `; `."""
    # (a unit broken onto its own line, `TTFT<br>(ms)`, is the name's)
    raw = LINE_BREAK_RE.sub(lambda m: " " if raw[m.end():m.end() + 1] in ("(", "[") else "; ",
                            raw) if "<" in raw else raw
    if "](" in raw:
        raw = LINK_RE.sub(r"\1", IMAGE_RE.sub("", raw))
    if ":" in raw:
        raw = SHORTCODE_RE.sub("", raw)
    text = html.unescape(MARKUP_RE.sub("", MARKDOWN_ESCAPE_RE.sub(r"\1", raw)))
    return SPACES_RE.sub(" ", text.replace("\u00a0", " ")).strip()


def printed_number(text: str) -> tuple[str | None, str | None]:
    """(the number a cell prints, as Python writes it: `7,656` → `7656`, `199,8` → `199.8`;
    the unit printed in the cell), or (None, None) when the cell is not a number."""
    match = NUMBER_CELL_RE.match(text)
    if match is None:
        return None, None
    number = match.group("number")
    number = number.replace(",", ".") if DECIMAL_COMMA.match(number) else \
        re.sub(r"[, \u2009\u202f]", "", number)
    return number.replace("−", "-"), match.group("unit")


def cell_number(text: str) -> tuple[float | None, str | None]:
    """(number, unit printed in the cell) or (None, None) when the cell is not a number."""
    number, unit = printed_number(text)
    if number is None or math.isinf(float(number)) and "inf" not in text.lower():
        return None, None       # (a commit such as `982e3472` overflows a float: no number)
    return float(number), unit


def header_unit(header: str) -> str | None:
    """`Avg Latency (s)` → s, `Gen TPS` → tok/s, `Prompt Speedup (%)` → %."""
    paren = PAREN_RE.search(header)
    if paren and UNIT_WORD_RE.match(paren.group(1).strip()):
        return paren.group(1).strip()
    for pattern, unit in HEADER_UNITS:
        if pattern.search(header):
            return unit
    return None


def table_rows(block: Block, fmt: str, header: list[str], body: list[list[str]],
               caption: str | None = None) -> list[Parsed]:
    """One published table → its row and long-form cells; [] when no cell holds a number."""
    header = [cell_text(h) for h in header]
    units = [header_unit(h) for h in header]
    context = block.context
    caption = caption or context.caption or context.label_or_heading
    cells: list[PublishedResult] = []
    numeric = False
    for index, raw_row in enumerate(body):
        row = [cell_text(c) for c in raw_row]
        if not any(row):
            continue
        key = row[0] if row else None
        for column, text in enumerate(row[1:], start=1):
            if column >= len(header) or not text:
                continue
            value, cell_unit = cell_number(text)
            numeric = numeric or value is not None
            cells.append(PublishedResult(
                table_index=block.line_start, format=fmt, caption=caption, row_index=index,
                row_key=key, column_name=header[column] or f"column {column + 1}",
                value=value, value_text=text,
                unit=units[column] or (cell_unit if value is not None else None)))
    if not numeric:
        return []
    table = PublishedTable(format=fmt, caption=caption, columns=header, rows=len(body),
                           section=context.section_text, label=context.label_or_heading,
                           tags=context.tags or None)
    return [Parsed(row=table, children=cells)]


def claiming_format(lines: list[str], me: object, formats: Iterable[object], *,
                    or_starting: bool = False, context: object = None) -> object | None:
    """The format other than ``me`` that claims the table of ``lines`` by what it holds (a
    table retyped by hand), seen in ``context`` (the block's: its heading, the commands before
    it); with ``or_starting``, also one that claims nothing but starts at its first line (a
    llama-bench table).  None when none does.  A format that knows the table by its program's
    own header is asked first."""
    formats = sorted(formats, key=lambda f: not getattr(f, "by_own_header", False))
    return next((f for f in formats if f is not me and (
        f.claims(lines, context) if getattr(f, "claims", None) is not None
        else or_starting and f.starts(lines[0]))), None)


def cells(line: str) -> list[str]:
    """A table line's cells, its outer borders left off."""
    text = line.strip()
    if text.startswith("|"):
        text = text[1:]
    if text.endswith("|") and not text.endswith("\\|"):
        text = text[:-1]
    return [cell_text(c) for c in re.split(r"(?<!\\)\|", text)]


@dataclass
class Table:
    header: list[str]
    body: list[tuple[int, list[str]]]          # (line index in the block, cells)


def table(lines: list[str]) -> Table | None:
    """The table of ``lines``: its first line is the header, delimiter rows are skipped."""
    filled = [i for i, line in enumerate(lines) if line.strip()]
    if len(filled) < 3 or not (SEPARATOR.match(lines[filled[1]]) and "-" in lines[filled[1]]):
        return None                     # no delimiter row under the first: no header
    rows = [(i, cells(line)) for i, line in enumerate(lines)
            if "|" in line and not SEPARATOR.match(line)]
    if len(rows) < 2:
        return None
    header, body = rows[0][1], rows[1:]
    if len(body) > 1 and _sub_header(header, body[0][1]):
        header, body = _joined_header(header, body[0][1]), body[1:]
    elif len(body) > 1 and _units_row(body[0][1]):
        header = [f"{h} ({u.strip('()[]')})" if u else h
                  for h, u in zip(header, body[0][1] + [""] * (len(header) - len(body[0][1])))]
        body = body[1:]
    return Table(header, body)


# A unit a row under the header gives its column (`| | (ms) | tok/s | % |`).
UNIT_CELL = re.compile(r"^[(\[]?(?:ms|s|sec|µs|us|t/s|tok/s|tokens?/s|req/s|GB|GiB|MB|MiB|W|%"
                       r"|tokens?)[)\]]?$", re.I)


def _units_row(row: list[str]) -> bool:
    """``row`` names the unit of each column it is not blank in, and nothing else."""
    units = [c for c in row if c]
    return bool(units) and all(UNIT_CELL.match(c) for c in units)


def _sub_header(header: list[str], row: list[str]) -> bool:
    """``row`` is the second line of a header over two rows: the first names groups over
    blank cells (`| Req/s |  | TTFT (ms) |  |`), this one names the columns of each group
    (`|  | main | PR | main | PR |`, or `| Model | pp512 | tg128 | ...` under a blank top-left
    cell; or the first repeats a name, `| t/s | t/s |`, the second names each apart), with no
    number of a result in it."""
    return bool(row) and not (row[0] and header[0]) \
        and (any(not h for h in header[1:]) or _repeated(header, row)) \
        and sum(bool(c) for c in row) >= 2 and all(cell_number(c)[0] is None for c in row)


def _repeated(header: list[str], row: list[str]) -> bool:
    """A name the header repeats over columns the row below names apart (`| t/s | t/s |`
    over `| ROCm | Vulkan |`)."""
    named = [(h, row[c]) for c, h in enumerate(header) if c < len(row) and h]
    heads = [h for h, _ in named]
    twice = {h for h in heads if heads.count(h) > 1}
    return bool(twice) and all(sub for h, sub in named if h in twice)


def _joined_header(header: list[str], row: list[str]) -> list[str]:
    """Each column's name over two header rows: `main Req/s`, `PR Req/s` (the run first, as
    a header naming its runs writes them)."""
    out, group = [], ""
    for c in range(max(len(header), len(row))):
        group = header[c] if c < len(header) and header[c] else group
        sub = row[c] if c < len(row) else ""
        out.append(f"{sub} {group}".strip() if c else header[0] or sub)
    return out
