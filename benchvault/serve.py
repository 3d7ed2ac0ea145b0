"""Datasette over the warehouse: metadata derived from the pydantic models, served read-only.

``metadata(db)`` looks at what the database holds (tables, views, columns) and describes it from
the row models: a title and description per table, a description and unit per column, facets,
sortable columns, the label shown for a foreign key (a row's ``source_id`` shows its file name),
the views of ``schemas.views`` and the canned queries of ``browse.queries`` that the database
can answer.  ``run_datasette`` serves the file read-only on 127.0.0.1 with that metadata, the
``browse`` plugin (units in cells, chart presets) and datasette-vega for charts (its JavaScript
ships inside the package: nothing is fetched from the internet): immutable (a snapshot, its
facet counts kept), or live, as an ``ingest --watch`` writes it (each page reads what is
committed then).
"""

from __future__ import annotations

import functools
import json
import signal
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from .browse import queries as canned
from .dbfile import readonly_uri
from .schemas import views as schema_views
from .schemas.models import Row
from .schemas.store import row_models
from .schemas.tables import stored_order

BROWSE = Path(__file__).parent / "browse"
STATIC_MOUNT = "benchvault-static"
# Units the warehouse uses that Pint does not define, registered with Datasette's Pint.
CUSTOM_UNITS = ("token = [token] = tok", "request = [request] = req")
# Facets every table with these columns gets, unless its model names its own (a few: the rows
# start on the first screen): the file a row came from, and its --tag pairs.
COMMON_FACETS = ("source_id", "tags")
# Columns not worth a sort link: JSON blobs and the raw block text.
UNSORTABLE = ("raw_text", "namespace", "extra", "command")
# The column Datasette shows in place of a foreign key pointing at a table, first one present.
LABEL_COLUMNS = ("name", "title", "label")


def read_schema(db: Path, live: bool = False) -> dict[str, list[str]]:
    """Table and view names → column names, read without opening the file for writing
    (``live``: with what a writer committed to its write-ahead log)."""
    conn = sqlite3.connect(readonly_uri(db, immutable=not live), uri=True)
    try:
        names = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') "
            "AND name NOT LIKE 'sqlite_%' ORDER BY name")]
        return {n: [r[1] for r in conn.execute(f"PRAGMA table_xinfo([{n}])")] for n in names}
    finally:
        conn.close()


@functools.lru_cache(maxsize=None)
def pint_parses(unit: str) -> bool:
    """Whether Datasette's Pint (with ``CUSTOM_UNITS``) understands ``unit``."""
    try:
        from datasette.vendored import pint
    except ImportError:  # pragma: no cover - every supported Datasette vendors Pint
        return False
    registry = _pint_registry(pint)
    try:
        registry(unit)
    except Exception:  # noqa: BLE001 - Pint raises many kinds of error for an unknown unit
        return False
    return True


@functools.lru_cache(maxsize=1)
def _pint_registry(pint):
    registry = pint.UnitRegistry()
    for definition in CUSTOM_UNITS:
        registry.define(definition)
    return registry


def _extra(model: type[Row], name: str) -> dict[str, Any]:
    extra = model.model_fields[name].json_schema_extra
    return extra if isinstance(extra, dict) else {}


def describe(text: str, unit: str | None) -> str:
    return f"{text} ({unit})" if unit else text


def _is_json(model: type[Row], name: str) -> bool:
    annotation = str(model.model_fields[name].annotation)
    return "dict" in annotation or "list" in annotation


def _is_numeric(model: type[Row], name: str) -> bool:
    from .schemas.store import columns

    return columns(model).get(name) in (int, float)


def _title(table: str) -> str:
    return table.replace("_", " ").capitalize()


def table_metadata(model: type[Row], columns: list[str], tables: set[str]) -> dict[str, Any]:
    """Datasette metadata for one model's table, limited to the columns it really has (in the
    order the table stores them: what it is for first)."""
    fields = [n for n in stored_order(model) if n in columns]
    units = {n: _extra(model, n)["unit"] for n in fields if _extra(model, n).get("unit")}
    numeric = {n for n in fields if _is_numeric(model, n)}
    if model.__facets__:
        facets = [n for n in model.__facets__ if n in fields]
    else:
        facets = [n for n in fields if _extra(model, n).get("facet")]
        facets += [n for n in COMMON_FACETS if n in fields and n not in facets]
    meta: dict[str, Any] = {
        "title": getattr(model, "__title__", None) or _title(model.__table__),
        "description": model.__description__,
        "columns": {n: describe(model.model_fields[n].description
                                or ("Row id (primary key)." if n == "id" else ""), units.get(n))
                    for n in fields},
        # Datasette multiplies a cell by its Pint unit: numbers only, units Pint knows only.
        "units": {n: u for n, u in units.items() if n in numeric and pint_parses(u)},
        "facets": facets,
        "sortable_columns": [n for n in fields
                             if n not in UNSORTABLE and not _is_json(model, n)],
    }
    label = next((c for c in LABEL_COLUMNS if c in fields), None)
    if label:
        meta["label_column"] = label
    return meta


def view_metadata(view: schema_views.View, columns: list[str]) -> dict[str, Any]:
    docs = view.columns()
    present = {n: docs[n] for n in columns if n in docs}
    units = {n: d.unit for n, d in present.items() if d.unit}
    return {
        "title": _title(view.name),
        "description": view.description,
        "columns": {n: describe(d.description, d.unit) for n, d in present.items()},
        "units": {n: u for n, u in units.items() if pint_parses(u)},
        "facets": [n for n in ("engine", "model", "max_concurrency", "section", "label",
                               "source_id") if n in columns],
    }


def query_units() -> dict[str, str]:
    """Column name → unit for query results: names every model agrees on."""
    seen: dict[str, set[str]] = {}
    for model in row_models():
        for name in model.model_fields:
            seen.setdefault(name, set()).add(_extra(model, name).get("unit") or "")
    for view in schema_views.VIEWS:
        try:
            docs = view.columns()
        except (AttributeError, KeyError, TypeError):  # a model the view needs is missing
            continue
        for name, doc in docs.items():
            seen.setdefault(name, set()).add(doc.unit or "")
    return {n: next(iter(u)) for n, u in seen.items() if len(u) == 1 and next(iter(u))}


def _query_works(db: Path, sql: str, live: bool = False) -> bool:
    """Whether SQLite can prepare ``sql`` against ``db`` (read-only), parameters empty."""
    conn = sqlite3.connect(readonly_uri(db, immutable=not live), uri=True)
    try:
        names = {p for p in _named_parameters(sql)}
        conn.execute(f"EXPLAIN {sql}", {n: "" for n in names})
        return True
    except sqlite3.Error:
        return False
    finally:
        conn.close()


def _named_parameters(sql: str) -> list[str]:
    import re

    return re.findall(r"(?<!:):(\w+)", sql)


def metadata(db: Path, db_name: str | None = None, live: bool = False) -> dict[str, Any]:
    """Datasette metadata for the warehouse ``db``, derived from the models and its schema
    (``live``: as a writer has committed it so far)."""
    db = Path(db)
    db_name = db_name or db.stem
    present = read_schema(db, live)
    tables: dict[str, Any] = {}
    units: dict[str, dict[str, str]] = {}
    for model in row_models():
        if model.__table__ in present:
            tables[model.__table__] = table_metadata(model, present[model.__table__],
                                                     set(present))
            units[model.__table__] = _display_units(model, present[model.__table__])
    for view in schema_views.VIEWS:
        if view.name in present:
            try:
                tables[view.name] = view_metadata(view, present[view.name])
            except (AttributeError, KeyError, TypeError):  # its models are not registered
                continue
            units[view.name] = {n: d.unit for n, d in view.columns().items() if d.unit}
    queries, charts = {}, {}
    for query, sql in canned.canned_queries(present):
        if not _query_works(db, sql, live):
            continue
        queries[query.name] = {"title": query.title, "description": query.description,
                               "sql": sql, "hide_sql": True}
        if query.chart:
            charts[query.name] = query.chart
    return {
        "title": "benchvault",
        "description": "LLM-inference benchmark results read from pasted logs and notes. "
                       "Every row links to the file and line it was read from.",
        "custom_units": list(CUSTOM_UNITS),
        "extra_css_urls": [f"/{STATIC_MOUNT}/benchvault.css"],
        "plugins": {"benchvault": {"units": units, "query_units": query_units(),
                                   "charts": charts}},
        "databases": {db_name: {"tables": tables, "queries": queries}},
    }


def _display_units(model: type[Row], columns: list[str]) -> dict[str, str]:
    return {n: _extra(model, n)["unit"] for n in model.model_fields
            if n in columns and _extra(model, n).get("unit")}


def datasette_command(db: Path, meta_path: Path, host: str = "127.0.0.1",
                      port: int = 8001, live: bool = False) -> list[str]:
    """The ``datasette serve`` command line: the file immutable (or, ``live``, opened
    read-only by each query: Datasette's mutable mode), our metadata, plugin and CSS."""
    return [sys.executable, "-m", "datasette", "serve", *(["-i"] if not live else []), str(db),
            "--metadata", str(meta_path), "--host", host, "--port", str(port),
            "--plugins-dir", str(BROWSE / "plugins"),
            "--static", f"{STATIC_MOUNT}:{BROWSE / 'static'}",
            "--setting", "sql_time_limit_ms", "5000",
            # Suggesting facets runs a query per column on every table page: at 100k runs
            # it is most of the page's time, and the useful facets are already open.
            "--setting", "suggest_facets", "off",
            # A run is a hundred columns wide: fifty rows a page keep a page quick to render.
            "--setting", "default_page_size", "50",
            # Four values a facet (the rest one click away): the rows start on the first screen.
            "--setting", "default_facet_size", "4",
            "--setting", "truncate_cells_html", "90"]


def run_datasette(db: Path, host: str = "127.0.0.1", port: int = 8001,
                  open_browser: bool = False, live: bool = False) -> int:
    """Serve ``db`` read-only and block until Datasette exits: immutable, or ``live`` (a
    page refreshed shows what a running ingest committed since)."""
    wal = Path(f"{db}-wal")
    if not live and wal.exists() and wal.stat().st_size:
        # Immutable readers do not see a write-ahead log: an ingest is running or was killed.
        print(f"warning: {wal} holds writes not yet in {db.name} (an ingest is running or was "
              "interrupted); they will not show until it finishes or the next ingest "
              "checkpoints them (`benchvault serve --live` shows them).", file=sys.stderr)
    with tempfile.TemporaryDirectory() as tmp:
        meta_path = Path(tmp) / "metadata.json"
        meta_path.write_text(json.dumps(metadata(db, live=live), indent=2))
        command = datasette_command(db, meta_path, host, port, live)
        if open_browser:
            command.append("--open")
        child = subprocess.Popen(command)
        # Stopping `benchvault serve` stops Datasette too (Ctrl-C reaches both by itself).
        stopped = []

        def stop(*_):
            stopped.append(True)
            child.terminate()

        previous = signal.signal(signal.SIGTERM, stop)
        try:
            code = child.wait()
            return 0 if stopped else code
        except KeyboardInterrupt:
            child.wait()
            return 0
        finally:
            signal.signal(signal.SIGTERM, previous)
