"""Rows in the order of what they are, numbered 1, 2, 3... in that order: what an export writes,
so that the same files give the same bytes whatever order they were ingested in.

A warehouse's ids follow the order its files were ingested in.  An export instead numbers each
table's rows by what they are: sources by path; a row read from a file by that file's path and
its lines; a row of a parent (latency statistics of a run) by its parent's new id; a
configuration or group by its key; ties by the row's other short columns.  References to a row
(foreign keys, a configuration's first and last run, the links a sighting's record keeps) get
the same new ids.  The numbering lives in temporary tables of the connection that reads
(``statements`` makes them, on the sqlite3 connection or the Arrow driver's alike).
"""

from __future__ import annotations

import typing
from typing import Any

from .schemas.models import Row
from .schemas.tables import row_models

# Columns holding the id of a row without being declared foreign keys (a declared one would be
# enforced, and these may point at a run an ingest is about to count again).
REFERENCES = {("configurations", "first_run_id"): "serving_runs",
              ("configurations", "last_run_id"): "serving_runs",
              ("offline_configurations", "first_run_id"): "offline_runs",
              ("offline_configurations", "last_run_id"): "offline_runs",
              # declared since schema 2; a warehouse made before has it undeclared
              ("llama_bench_results", "source_id"): "sources"}
# Ids kept inside a JSON column: a sighting's record says which launch and run its row was
# linked to in its file.
JSON_REFERENCES = {("sightings", "record"): (("launch_id", "server_launches"),
                                             ("run_id", "serving_runs"))}
# When a file was ingested: the warehouse's bookkeeping, not what the file says.
LEFT_OUT = {("sources", "ingested_at")}
# Columns too long or too nested to tell rows apart by (the lines and values before them do).
NOT_IN_ORDER = {"raw_text"}
# Short columns that break a tie of place and references, the first ones in the model's order
# (rows read at one place are rarely more than one; SQLite 3.40 also fails on an ORDER BY of
# 64 terms or more over joins).
TIE_BREAKERS = 32


def _map(table: str) -> str:
    return f"temp.bv_ids_{table}"


def _is_json(annotation: Any) -> bool:
    return any(typing.get_origin(a) in (dict, list) or a in (dict, list)
               for a in (annotation, *typing.get_args(annotation)))


def _references(model: type[Row]) -> dict[str, str]:
    """Column → the table whose ids it holds."""
    refs = {column: target for column, target, _ in model.__foreign_keys__}
    refs.update({column: target for (table, column), target in REFERENCES.items()
                 if table == model.__table__})
    return refs


def _keyed(model: type[Row]) -> bool:
    """Rows told apart by a column of their own (a file's path, a configuration's key)."""
    return model.__table__ == "sources" or "key" in model.model_fields


def _ordering_references(model: type[Row]) -> dict[str, str]:
    """The references a table's new order rests on: their tables are numbered first."""
    if _keyed(model):
        return {}
    return {c: t for c, t in _references(model).items() if c != "source_id"}


def _joins(model: type[Row], present: set[str], tables: set[str], numbered: set[str]
           ) -> tuple[list[str], dict]:
    """The joins that give each referenced row of a ``numbered`` table its new id
    (``new_of[column]``), and the source file's path for ordering (``new_of['_path']``)."""
    joins, new_of = [], {}
    for column, target in _references(model).items():
        if column not in present or target not in tables or target not in numbered:
            continue
        alias = f"r_{column}"
        joins.append(f"LEFT JOIN {_map(target)} {alias} ON {alias}.old = t.[{column}]")
        new_of[column] = f"{alias}.new"
    if "source_id" in present and "sources" in tables:
        joins.append("LEFT JOIN sources s ON s.id = t.source_id")
        new_of["_path"] = "s.path"
    return joins, new_of


def _order(model: type[Row], present: set[str], new_of: dict[str, str]) -> list[str]:
    table = model.__table__
    refs = _references(model)
    if table == "sources":
        return ["t.path", "t.id"]
    if "key" in present:                # unique: a configuration, a group
        return ["t.[key]", "t.id"]
    order: list[str] = []
    if "_path" in new_of:
        order.append(new_of["_path"])
    order += [f"t.[{c}]" for c in ("line_start", "line_end", "line") if c in present]
    order += [new_of[c] for c in refs if c in new_of and c != "source_id"]
    ties = [f"t.[{name}]" for name, field in model.model_fields.items()
            if name in present and name != "id" and name not in refs and name not in NOT_IN_ORDER
            and not _is_json(field.annotation) and (table, name) not in LEFT_OUT
            and f"t.[{name}]" not in order]
    return order + ties[:TIE_BREAKERS] + ["t.id"]


def statements(columns_of: dict[str, list[str]], for_table: str | None = None,
               done: set[str] = frozenset()) -> list[str]:
    """The SQL that numbers every table of ``columns_of`` (table → its columns), parents
    first, into temporary tables (new id by old id); with ``for_table``, only the tables
    exporting that one needs (its own, those it refers to, and those their order rests on),
    less those ``done`` already on the connection."""
    tables = set(columns_of)
    wanted = (needed(for_table, tables) if for_table is not None else tables) - set(done)
    out: list[str] = []
    numbered: set[str] = set(done)
    waiting = [m for m in row_models() if m.__table__ in wanted and "id" in columns_of[m.__table__]]
    while waiting:
        model = next((m for m in waiting if set(_ordering_references(m).values()) & tables
                      <= numbered | {m.__table__}), waiting[0])
        waiting.remove(model)
        table = model.__table__
        present = set(columns_of[table])
        joins, new_of = _joins(model, present, tables, numbered)
        numbered.add(table)
        out += [f"DROP TABLE IF EXISTS {_map(table)}",
                f"CREATE TEMP TABLE {_map(table).split('.')[1]} (new INTEGER PRIMARY KEY, "
                "old INTEGER UNIQUE)",
                f"INSERT INTO {_map(table)} (old) SELECT t.id FROM [{table}] t "
                f"{' '.join(joins)} ORDER BY {', '.join(_order(model, present, new_of))}"]
    return out


def needed(table: str, tables: set[str]) -> set[str]:
    """The tables (of ``tables``) numbered for ``table`` to be read renumbered."""
    models = {m.__table__: m for m in row_models()}
    first = {t for (owner, _), refs in JSON_REFERENCES.items() if owner == table
             for _, t in refs} | set(_references(models[table]).values()) | {table}
    needed: set[str] = set()
    todo = [t for t in first if t in tables]
    while todo:
        current = todo.pop()
        if current in needed:
            continue
        needed.add(current)
        todo += [t for t in _ordering_references(models[current]).values() if t in tables]
    return needed


def select(table: str, columns: list[str], tables: set[str]) -> tuple[list[str], str]:
    """(the columns written, the query reading ``table`` renumbered, in its new order)."""
    model = next(m for m in row_models() if m.__table__ == table)
    present = set(columns)
    joins, new_of = _joins(model, present, tables, tables)
    written, shown = [], []
    for column in columns:
        if (table, column) in LEFT_OUT:
            continue
        written.append(column)
        if column == "id":
            shown.append("i.new AS [id]")
        elif column in new_of:
            shown.append(f"{new_of[column]} AS [{column}]")
        elif (table, column) in JSON_REFERENCES:
            shown.append(_json_renumbered(table, column, tables))
        else:
            shown.append(f"t.[{column}]")
    if "id" not in present:
        return written, f"SELECT {', '.join(shown)} FROM [{table}] t ORDER BY " + \
            ", ".join(f"t.[{c}]" for c in columns)
    # The numbering's own order: its rows are read by new id, each joined to its row.
    return written, (f"SELECT {', '.join(shown)} FROM {_map(table)} i CROSS JOIN [{table}] t "
                     f"ON t.id = i.old {' '.join(joins)} ORDER BY i.new")


def _json_renumbered(table: str, column: str, tables: set[str]) -> str:
    """``column`` with each id it keeps replaced by its new id (a JSON null for a row the
    export does not hold)."""
    expression = f"t.[{column}]"
    for key, target in JSON_REFERENCES[(table, column)]:
        if target not in tables:
            continue
        new = f"(SELECT new FROM {_map(target)} WHERE old = json_extract({expression}, '$.{key}'))"
        expression = (f"CASE WHEN json_type(t.[{column}], '$.{key}') = 'integer' THEN "
                      f"json_replace({expression}, '$.{key}', {new}) ELSE {expression} END")
    return f"{expression} AS [{column}]"
