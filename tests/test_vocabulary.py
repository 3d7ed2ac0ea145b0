"""Upstream's vocabulary (benchvault/parsers/*.vocab.toml): every label, printed by upstream's
own format string with a made-up number in the smallest text its format reads, lands in its
column; docs/vocabulary.md is the generator's output."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from benchvault.ingest.parse import parse_file
from benchvault.parsers import all_formats
from benchvault.parsers.base import Facts, Parsed
from benchvault.parsers.vocabulary import Label, load, markdown, summary
from benchvault.schemas.models import fields_of
from benchvault.schemas.tables import row_models

from conftest import ROOT

LABELS = load()
TABLES = {fmt.name: fmt.table for fmt in all_formats()}
VALUE_SPEC = re.compile(r"\{value(?::([^}]*))?\}")
MISSING = object()


def test_docs_vocabulary_is_current():
    assert (ROOT / "docs" / "vocabulary.md").read_text(encoding="utf-8") == markdown(), (
        "docs/vocabulary.md is stale: python -m benchvault.parsers.vocabulary --write")


def test_readme_says_how_much_is_read():
    assert summary() in (ROOT / "README.md").read_text(encoding="utf-8").splitlines(), (
        "README's vocabulary line is stale: python -m benchvault.parsers.vocabulary --write")


def test_enough_of_upstream_is_listed():
    assert len(LABELS) >= 150
    # one entry per printed label of a format
    keys = [(x.format, x.label, x.column, x.printer) for x in LABELS]
    assert len(keys) == len(set(keys))
    assert all(x.format in TABLES for x in LABELS)
    assert all(x.table in {m.__table__ for m in row_models()} for x in LABELS if x.table)


def _table(label: Label) -> str:
    """The table the label's column is in: its own ``table``, else its format's."""
    return label.table or TABLES[label.format]


def _model(table: str):
    return next(m for m in row_models() if m.__table__ == table)


def _is_int(label: Label) -> bool:
    if label.kind:
        return label.kind == "int"
    spec = (VALUE_SPEC.search(label.printer).group(1) or "").strip()
    if spec.endswith("d"):
        return True
    if spec[-1:] in ("f", "e", "g", "%"):
        return False
    if label.column.startswith("extra."):
        return False
    annotation = fields_of(_model(_table(label)))[label.column].annotation
    return annotation in (int, int | None)


def synthetic(label: Label, index: int) -> int | float | str:
    """A number no other label of the format prints, exact in any printed precision (a word
    for a label whose value is text)."""
    base = 37 + 3 * index
    if label.kind == "str":
        return f"text{base}"
    if label.kind == "time":       # a time of day as printed (`%H:%M:%S`)
        return f"{base // 60 % 24:02d}:{base % 60:02d}:{index % 60:02d}"
    if label.kind == "bool":
        return index % 2 == 0      # printed `True` or `False`
    return base if _is_int(label) else base + 0.5


def _found(values: dict, column: str):
    if column.startswith("extra."):
        extra = values.get("extra") or {}
        value = extra.get(column[len("extra."):], MISSING)
        return value.get("value", MISSING) if isinstance(value, dict) else value
    for where in (values, values.get("fallback") or {}, values.get("config") or {}):
        if where.get(column) is not None:
            return where[column]
    return MISSING


# child tables whose rows name what they hold (a metrics sample its metric)
NAMED_ROWS = {"metrics_samples"}


def landed(path: Path, label: Label) -> list:
    """Every value the column got from reading ``path``.  A column `<table>.<name>` is a child
    row's: in a metrics sample, the child row that names the label; in an offline step (a
    printed step line, no label in the row), any child row of that table."""
    got = []
    table, _, name = label.column.rpartition(".")
    for item in parse_file(path):
        if isinstance(item, Parsed) and table and table != "extra":
            rows = [child.model_dump() for child in item.children if child.__table__ == table]
            got += [row[name] for row in rows
                    if table not in NAMED_ROWS or label.label in row.values()]
            continue
        elif isinstance(item, Parsed):
            if item.row.__table__ != _table(label):
                continue
            value = _found(item.row.model_dump(), label.column)
        elif isinstance(item, Facts):
            if item.table != _table(label):
                continue
            value = _found(item.values, label.column)
        else:
            continue
        if value is not MISSING:
            got.append(value)
    return got


_INDEX = {}
for _label in LABELS:
    _INDEX.setdefault(_label.format, []).append(_label)


@pytest.mark.parametrize("label", LABELS, ids=lambda x: f"{x.format}:{x.label}->{x.column}")
def test_label_lands_in_its_column(label, tmp_path):
    number = synthetic(label, _INDEX[label.format].index(label))
    text = label.render(number)
    # a table column's label is its header path: the context prints each of its cells
    assert all(part in text for part in label.header_path), (
        f"{label.label!r}: its header cells are not all in its context:\n{text}")
    suffix = ".json" if text.lstrip().startswith(("{", "[")) else ".log"
    path = tmp_path / f"{label.format}{suffix}"
    path.write_text(text, encoding="utf-8")
    got = landed(path, label)
    assert got, f"{label.label!r} did not land in {label.column}:\n{text}"
    if isinstance(number, (str, bool)):
        assert number in got and all(type(v) is type(number) for v in got), (
            f"{label.label!r}: {label.column} is {got}, not {number}")
        return
    want = number * label.scale
    assert any(isinstance(v, (int, float)) and not isinstance(v, bool)
               and math.isclose(v, want, rel_tol=1e-9, abs_tol=1e-9) for v in got), (
        f"{label.label!r}: {label.column} is {got}, not {want}:\n{text}")


def _field_of(label: Label):
    table, _, name = label.column.rpartition(".")
    return fields_of(_model(table or _table(label)))[name]


@pytest.mark.parametrize("label", [x for x in LABELS if "." not in x.column],
                         ids=lambda x: f"{x.format}:{x.label}->{x.column}")
def test_every_column_says_what_it_is_and_its_unit(label):
    """A Datasette column description for every column upstream's labels land in, with the
    unit the label prints (a count's unit too).  A metrics sample's unit is its name's."""
    field = _field_of(label)
    assert field.description, f"{label.column} has no description"
    if label.unit:
        unit = (field.json_schema_extra or {}).get("unit")
        assert unit, f"{label.column} has no unit (upstream prints {label.unit})"
