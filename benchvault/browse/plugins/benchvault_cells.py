"""Datasette plugin: numbers with their unit, and a chart preset on canned queries.

Loaded with ``datasette --plugins-dir``; everything it knows comes from the ``benchvault``
plugin configuration that ``benchvault.serve.metadata`` derives from the row models:

- ``units``: table → column → unit, ``query_units``: column → unit for query results.  A cell
  is shown as its exact value and unit (``849.46 s``, ``2,993.85 tok/s``) instead of Datasette's
  Pint rendering, which rescales (``1.2345 ks``, GiB shown as GB) and cannot print units Pint
  does not know.  Pint still converts filter values (``?duration__gt=10min``) for the units it
  parses.
- ``charts``: canned query → datasette-vega settings, applied when the page has no chart
  settings of its own in its URL fragment.

And it counts each facet once: ``benchvault serve`` serves the warehouse immutable, so the
counts a facet query gives never change while it runs (see ``startup``).
"""

from __future__ import annotations

import collections
import functools
import json
import re
import urllib.parse

import markupsafe
from datasette import hookimpl

_config_cache: dict[int, dict] = {}


def _config(datasette) -> dict:
    key = id(datasette)
    if key not in _config_cache:
        _config_cache[key] = datasette.plugin_config("benchvault") or {}
    return _config_cache[key]


def format_number(value: int | float) -> str:
    """The value as stored, with thousands separators (``2,993.85``; ``inf`` stays ``inf``)."""
    return f"{value:,}"


@functools.lru_cache(maxsize=4096)
def _unit_html(unit: str) -> str:
    return f'</span>&nbsp;<span class="bv-unit">{markupsafe.escape(unit)}</span>'


@hookimpl
def render_cell(value, column, table, database, datasette):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    config = _config(datasette)
    units = config.get("units", {}).get(table, {}) if table else config.get("query_units", {})
    unit = units.get(column)
    if not unit:
        return None
    # Joined, not Markup.format (a page of 50 runs renders ~2,000 numbers with units:
    # its formatter was a tenth of the page).  A formatted number holds no HTML character.
    return markupsafe.Markup('<span class="bv-number">' + format_number(value)
                             + _unit_html(unit))


def chart_fragment(settings: dict) -> str:
    """datasette-vega's URL fragment for these chart settings."""
    return "&".join(f"g.{key}={urllib.parse.quote(str(value))}"
                    for key, value in settings.items())


@hookimpl
def extra_body_script(database, request, datasette):
    if request is None or not database:
        return None
    name = urllib.parse.unquote(request.path.rstrip("/").rsplit("/", 1)[-1])
    settings = _config(datasette).get("charts", {}).get(name)
    if not settings:
        return None
    fragment = json.dumps("#" + chart_fragment(settings))
    return ("if (!window.location.hash) { history.replaceState(null, '', "
            f"window.location.pathname + window.location.search + {fragment}); }}")


# Datasette's facet queries (column and array facets): `select ... as value, count(*) as count
# from (<the table's query>) ...`.  Their answers are small (at most facet_size + 1 rows).
_FACET_SQL = re.compile(r"^\s*select\s.+?\sas value, count\(\*\) as count from \(", re.I | re.S)
FACET_CACHE_SIZE = 512


@hookimpl
def startup(datasette):
    """Answer a facet query seen before from memory when its database is immutable.

    A table page counts every facet of the rows it shows, one query after another: at 100k
    runs the serving_runs page's eight facets are ~150 ms of scanning indexes, on every load
    of the page.  An immutable database cannot change while served, so the same query with
    the same parameters has the same answer: the first load counts, later loads (the page
    again, a filter taken back) do not.  Other queries, and mutable databases, are left
    alone."""
    execute = datasette.execute
    answers: collections.OrderedDict = collections.OrderedDict()

    async def counted_once(db_name, sql, params=None, *args, **kwargs):
        database = datasette.databases.get(db_name)
        if database is None or database.is_mutable or not _FACET_SQL.match(sql):
            return await execute(db_name, sql, params, *args, **kwargs)
        key = (db_name, sql, json.dumps(params, sort_keys=True, default=repr))
        if key in answers:
            answers.move_to_end(key)
            return answers[key]
        result = await execute(db_name, sql, params, *args, **kwargs)
        answers[key] = result
        if len(answers) > FACET_CACHE_SIZE:
            answers.popitem(last=False)
        return result

    datasette.execute = counted_once
