"""What upstream prints, as data: every ``<format>.vocab.toml`` beside a format's grammar.

Each file lists the labels (or keys, or metric names) upstream's printers have written for that
format, across their released versions, and the column each one lands in::

    format = "vllm_serving"
    context = '''
    ============ Serving Benchmark Result ============
    {line}
    ==================================================
    '''

    [[labels]]
    label = "Mean TTFT (ms):"
    column = "mean_ttft_ms"              # a column of the format's table, or extra.<name>
    unit = "ms"
    versions = "vllm 0.4.0–0.33.0; sglang 0.2–0.5.23"
    printer = "{label:<40} {value:<10.2f}"   # upstream's own format string for the line

``context`` is the smallest text the format reads the line in (``{line}`` marks where, and
``{label}`` the label again: a table's header cell over the value's cell); a label may carry
its own.  In a table whose columns upstream pads, ``{line:<12}`` (``{line:>12}``) pads the
printed cell to its column's width as upstream does, and a label ``Title | Group | Name |
Stat`` is the path of a column's header cells, the table's title first (its context prints
them).  ``scale`` (optional) turns the printed number into the column's
unit (a printed percentage into a fraction: 0.01).  ``table`` (optional, per file or per
label) names the table the column is in when it is not the format's own (a format that reads
serving and offline runs alike).

``python -m benchvault.parsers.vocabulary`` prints ``docs/vocabulary.md``; with ``--write`` it
writes it and sets the README's `N labels across M formats` line.
"""

from __future__ import annotations

import re
import sys
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

HERE = Path(__file__).resolve().parent
SUFFIX = ".vocab.toml"
# Where a context takes the printed line: `{line}`, or `{line:<12}` padded to a column's width
LINE = re.compile(r"\{line(?::([<>^]\d+))?\}")


@dataclass(frozen=True)
class Label:
    """One printed label: where it lands and who prints it."""

    format: str
    label: str
    column: str
    unit: str
    versions: str
    printer: str
    context: str
    scale: float = 1.0
    kind: str | None = None          # "int", "float", "str" or "bool": how a value is written
    table: str | None = None         # the table it lands in, when not the format's own

    def render(self, value) -> str:
        """The label printed by upstream's format string with ``value``, in its context."""
        line = self.printer.format(label=self.label, value=value)
        return LINE.sub(lambda m: format(line, m.group(1) or ""),
                        self.context.replace("{label}", self.label))

    @property
    def header_path(self) -> list[str]:
        """A table column's header cells, title first (`Title | Group | Name`), else []."""
        return self.label.split(" | ") if " | " in self.label else []


def vocab_files() -> list[Path]:
    return sorted(HERE.glob(f"*{SUFFIX}"))


@lru_cache(maxsize=None)
def load() -> tuple[Label, ...]:
    """Every label of every vocabulary file, in file then listed order."""
    out: list[Label] = []
    for path in vocab_files():
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        fmt = data.get("format") or path.name[: -len(SUFFIX)]
        for entry in data.get("labels", []):
            out.append(Label(
                format=fmt, label=entry["label"], column=entry["column"],
                unit=entry.get("unit", ""), versions=entry["versions"],
                printer=entry["printer"],
                context=entry.get("context", data.get("context", "{line}\n")),
                scale=float(entry.get("scale", 1.0)), kind=entry.get("kind"),
                table=entry.get("table", data.get("table"))))
    return tuple(out)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(labels: tuple[Label, ...] | None = None) -> str:
    """docs/vocabulary.md: one row per label, by format, then label, then column."""
    labels = load() if labels is None else labels
    formats = sorted({label.format for label in labels})
    lines = [
        "# Upstream's vocabulary",
        "",
        "Every label, key or metric name the upstream programs print that benchvault reads, "
        "the column it lands in, its unit, and the upstream versions that print it. Generated "
        "from `benchvault/parsers/*.vocab.toml` by "
        "`python -m benchvault.parsers.vocabulary --write`; a test renders each label "
        "through upstream's own format string and checks that it lands in its column. "
        "Versions were read in the released code of vLLM 0.8.5, 0.10.2 and 0.11.0 (wheels), "
        "SGLang 0.3.0, 0.4.3, 0.4.9, 0.5.4 and 0.5.10.post1 (wheels), GuideLLM 0.1.0 - 0.8.1 "
        "(every release's wheel) and the llama.cpp that llama-cpp-python 0.3.16 vendors; "
        "vLLM's benchmarks/ before 0.8 and its releases "
        "after 0.11 in the repository's code where it was at hand (`current`: the newest "
        "code read there).",
        "",
        summary(labels),
        "",
        "| Format | Labels |",
        "| --- | ---: |",
    ]
    lines += [f"| {fmt} | {sum(1 for x in labels if x.format == fmt)} |" for fmt in formats]
    lines += ["", "| Label | Format | Column | Unit | Versions |",
              "| --- | --- | --- | --- | --- |"]
    for label in sorted(labels, key=lambda x: (x.format, x.label.lower(), x.label, x.column,
                                               x.versions, x.printer)):
        column = f"{label.table}.{label.column}" if label.table else label.column
        lines.append(f"| `{_cell(label.label)}` | {label.format} | `{column}` | "
                     f"{_cell(label.unit)} | {_cell(label.versions)} |")
    return "\n".join(lines) + "\n"


def summary(labels: tuple[Label, ...] | None = None) -> str:
    """`N labels across M formats`: how much of upstream's vocabulary is read."""
    labels = load() if labels is None else labels
    return (f"{len(labels)} labels across {len({x.format for x in labels})} formats "
            f"(docs/vocabulary.md).")


SUMMARY_LINE = re.compile(r"^\d+ labels across \d+ formats \(docs/vocabulary\.md\)\.$", re.M)


def write(root: Path) -> None:
    """docs/vocabulary.md written, and the README's summary line set to :func:`summary`."""
    (root / "docs" / "vocabulary.md").write_text(markdown(), encoding="utf-8")
    readme = root / "README.md"
    text = readme.read_text(encoding="utf-8")
    readme.write_text(SUMMARY_LINE.sub(summary(), text), encoding="utf-8")


if __name__ == "__main__":
    # `--write`: docs/vocabulary.md and the README line in the checkout this module is in;
    # else the markdown to stdout.
    if sys.argv[1:] == ["--write"]:
        write(HERE.parent.parent)
    else:
        sys.stdout.write(markdown())
