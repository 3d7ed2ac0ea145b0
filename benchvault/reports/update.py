"""Regenerate report regions of a Markdown file in place.

A region is::

    <!-- benchvault:begin NAME key=value key="value with spaces" ... -->
    (generated; replaced on every run)
    <!-- benchvault:end NAME -->

``NAME`` names the region; the report is ``report=KIND`` or, without it, ``NAME`` itself.
Keys are the ``benchvault report`` options: ``where`` (repeatable), ``sql``, ``columns``,
``sort``, ``header`` (``col=Text``, repeatable), ``fmt``, ``name`` (``model=Shown``,
repeatable), ``name-from``, ``models`` (a file, relative to the Markdown file), ``charts``
(comma-separated chart names), ``chart-dir`` (relative to the Markdown file), ``repeats``
(mean, best, last, all), ``group`` (``on``: one table per comparable group; off by
default, a region being one table), and the analyses' ``slo`` (repeatable), ``metric``,
``over``, ``threshold`` and ``order``.

Text outside the markers is never touched, a second run writes the same bytes, and a marker
without its partner is an error naming its line - the file is then left as it was.
"""

from __future__ import annotations

import os
import re
import shlex
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from .query import ReportError, connect_readonly
from .report import ReportOptions
from .render import make_reports, render_region
from .table import escape_cell

BEGIN = re.compile(r"^\s*<!--\s*benchvault:begin\s+(?P<name>[\w.-]+)(?P<args>.*?)\s*-->\s*$")
END = re.compile(r"^\s*<!--\s*benchvault:end\s+(?P<name>[\w.-]+)\s*-->\s*$")
ANY_MARKER = re.compile(r"^\s*<!--\s*benchvault:")
FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")


@dataclass
class Region:
    name: str
    begin: int            # 0-based index of the begin line
    end: int              # 0-based index of the end line
    args: dict[str, list[str]] = field(default_factory=dict)
    path: str = ""

    @property
    def where(self) -> str:
        return f"{self.path}:{self.begin + 1}" if self.path else f"line {self.begin + 1}"

    @property
    def kind(self) -> str:
        return (self.args.get("report") or [self.name])[-1]


def _parse_args(text: str, line_no: str) -> dict[str, list[str]]:
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise ReportError(f"{line_no}: cannot read the marker's options: {exc}") from None
    args: dict[str, list[str]] = {}
    for word in words:
        key, sep, value = word.partition("=")
        if not sep:
            raise ReportError(f"{line_no}: marker option {word!r} is not key=value")
        args.setdefault(key.strip().replace("_", "-"), []).append(value)
    return args


def find_regions(lines: list[str], path: str = "") -> list[Region]:
    where = f"{path}:" if path else "line "
    regions: list[Region] = []
    open_: tuple[str, int, dict[str, list[str]]] | None = None
    fence: str | None = None
    for i, line in enumerate(lines):
        opener = FENCE.match(line)
        if opener:      # markers shown inside code fences are examples, not regions
            mark = opener[1]
            if fence is None:
                fence = mark
            elif mark[0] == fence[0] and len(mark) >= len(fence):
                fence = None
            continue
        if fence is not None or not ANY_MARKER.match(line):
            continue
        begin, end = BEGIN.match(line), END.match(line)
        if begin:
            if open_:
                raise ReportError(f"{where}{open_[1] + 1}: region {open_[0]!r} has no "
                                  f"`<!-- benchvault:end {open_[0]} -->` before the next begin "
                                  f"marker at line {i + 1}")
            open_ = (begin["name"], i, _parse_args(begin["args"], f"{where}{i + 1}"))
        elif end:
            if not open_:
                raise ReportError(f"{where}{i + 1}: `benchvault:end {end['name']}` without a "
                                  f"begin marker")
            if end["name"] != open_[0]:
                raise ReportError(f"{where}{i + 1}: `benchvault:end {end['name']}` closes region "
                                  f"{open_[0]!r} opened at line {open_[1] + 1}")
            regions.append(Region(open_[0], open_[1], i, open_[2], path))
            open_ = None
        else:
            raise ReportError(f"{where}{i + 1}: malformed benchvault marker: {line.strip()!r}")
    if open_:
        raise ReportError(f"{where}{open_[1] + 1}: region {open_[0]!r} has no "
                          f"`<!-- benchvault:end {open_[0]} -->`")
    return regions


def _pairs(values: list[str], key: str, line_no: str) -> dict[str, str]:
    out = {}
    for value in values:
        left, sep, right = value.partition("=")
        if not sep:
            raise ReportError(f"{line_no}: {key}= wants COLUMN=VALUE, got {value!r}")
        out[left] = right
    return out


def region_options(region: Region, base: Path) -> ReportOptions:
    a, line_no = region.args, region.where
    known = {"report", "where", "sql", "columns", "sort", "header", "fmt", "name", "name-from",
             "models", "charts", "chart-dir", "replicas", "repeats", "group", "slo", "metric",
             "over", "threshold", "order"}
    unknown = set(a) - known
    if unknown:
        raise ReportError(f"{line_no}: unknown marker option(s) {', '.join(sorted(unknown))}"
                          f"; known: {', '.join(sorted(known))}")

    def last(key: str) -> str | None:
        return a[key][-1] if key in a else None

    def listed(key: str) -> list[str]:
        return [x.strip() for v in a.get(key, []) for x in v.split(",") if x.strip()]

    models = last("models")
    return ReportOptions(
        where=a.get("where", []), sql=last("sql"), columns=listed("columns"),
        sort=listed("sort"), headers=_pairs(a.get("header", []), "header", line_no),
        formats=_pairs(a.get("fmt", []), "fmt", line_no),
        renames=_pairs(a.get("name", []), "name", line_no),
        name_from=last("name-from") or "model",
        models_file=str(base / models) if models else None,
        scale_replicas=(last("replicas") or "on") != "off",
        charts=listed("charts"), repeats=last("repeats") or "mean",
        group=(last("group") or "off") == "on", slos=a.get("slo", []), metric=last("metric"),
        over=last("over") or "build", threshold=float(last("threshold") or 5.0),
        order=listed("order"))


def update_text(text: str, db_path: str | Path, base: Path, path: str = "") -> str:
    """``text`` with every region regenerated from the warehouse at ``db_path``."""
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = text.splitlines(keepends=True)
    regions = find_regions([ln.rstrip("\r\n") for ln in lines], path)
    if not regions:
        return text
    conn = connect_readonly(db_path)
    try:
        bodies = []
        for region in regions:
            options = region_options(region, base)
            try:
                reports = make_reports(db_path, region.kind, options, conn=conn)
            except ReportError as exc:
                raise ReportError(f"{region.where}: region {region.name!r}: {exc}") from None
            parts = []
            for report in reports:
                if options.charts:
                    chart_dir = base / (region.args.get("chart-dir") or ["charts"])[-1]
                    name = "-".join(filter(None, (region.name, report.slug)))
                    from .charts import write_charts   # matplotlib: only when drawing

                    write_charts(report, chart_dir, name, options.charts, link_base=base)
                # One table per group, each under its own small heading.
                title = f"**{escape_cell(report.title)}**\n\n" \
                    if options.group or len(reports) > 1 else ""
                parts.append(title + render_region(report))
            bodies.append("\n\n".join(parts))
    finally:
        conn.close()
    out: list[str] = []
    cursor = 0
    for region, body in zip(regions, bodies):
        out.extend(lines[cursor:region.begin + 1])
        if not out[-1].endswith(("\n", "\r")):
            out[-1] += newline
        out.extend(line + newline for line in body.split("\n"))
        cursor = region.end
    out.extend(lines[cursor:])
    return "".join(out)


def update_file(path: str | Path, db_path: str | Path) -> bool:
    """Regenerate ``path``'s regions; True when the file changed. All or nothing."""
    path = Path(path)
    with open(path, encoding="utf-8", newline="") as fh:
        text = fh.read()
    new = update_text(text, db_path, path.parent, str(path))
    if new == text:
        return False
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(new)
        os.chmod(tmp, path.stat().st_mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return True
