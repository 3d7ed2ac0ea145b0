"""Every table the warehouse holds: its pydantic model, found among ``Row``'s subclasses."""

from __future__ import annotations

from functools import lru_cache

from .models import Row


def row_models() -> list[type[Row]]:
    """Every concrete table model, parents before children (sources first)."""
    return list(_row_models())


@lru_cache(maxsize=None)
def _row_models() -> tuple[type[Row], ...]:
    # Every model is defined by now: the package imports all its modules (schemas/__init__).
    found: list[type[Row]] = []

    def walk(cls: type[Row]) -> None:
        for sub in cls.__subclasses__():
            if "__table__" in sub.__dict__ and sub not in found:
                found.append(sub)
            walk(sub)

    walk(Row)
    return _parents_first(tuple(found))


def _parents_first(models: tuple[type[Row], ...]) -> tuple[type[Row], ...]:
    """Tables a foreign key points to come first."""
    found = list(models)
    ordered: list[type[Row]] = []
    while found:
        for cls in list(found):
            targets = {t for _, t, _ in cls.__foreign_keys__}
            if targets <= {m.__table__ for m in ordered} | {cls.__table__}:
                ordered.append(cls)
                found.remove(cls)
                break
        else:
            ordered.extend(found)
            break
    return tuple(ordered)


# Where a row was read, last in its table: the file, its lines, the text itself.  (A
# configuration's and a group's key, JSON, too: their title says the same.)
TRAILING = ("section", "tags", "format", "key", "source_id", "line_start", "line_end",
            "raw_text")


def stored_order(model: type[Row]) -> list[str]:
    """The model's columns in the order its table stores them: the id, the columns a reader
    compares first (``__leading__``), the rest in the model's order, where it was read last.
    Datasette and a CSV export show them so."""
    names = list(model.model_fields)
    lead = [n for n in ("id", *model.__leading__) if n in names]
    tail = [n for n in TRAILING if n in names and n not in lead]
    return lead + [n for n in names if n not in lead and n not in tail] + tail


@lru_cache(maxsize=None)
def model_for(table: str) -> type[Row]:
    return next(m for m in _row_models() if m.__table__ == table)
