"""Reading the warehouse for reports: a read-only connection, `--where` filters, `--sql`.

Reports never write: the database is opened with SQLite's ``mode=ro`` URI and
``PRAGMA query_only``, so a ``--sql`` that tries to change anything fails.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from ..dbfile import readonly_uri
from ..schemas.views import SERVER_STATS_COLUMNS

# Columns a report never needs; they make a frame heavy.
HEAVY_COLUMNS = {"raw_text", "namespace", "command", "extra", "args"}
LAUNCH_COLUMNS = (("tensor_parallel_size", "launch_tp"), ("pipeline_parallel_size", "launch_pp"),
                  ("data_parallel_size", "launch_dp"), ("load_seconds", "launch_load_seconds"),
                  ("speculative_model", "speculative_model"))
# The sightings column pointing at a row of each table that keeps sightings.
SIGHTING_COLUMNS = {"serving_runs": "run_id", "llama_bench_results": "llama_bench_id",
                    "server_launches": "launch_id", "spec_decode_metrics": "spec_decode_id"}
# Configuration fields a run's row has not itself (benchvault.experiments.configs).
CONFIG_COLUMNS = ("hardware", "model_family", "tensor_parallel_size", "pipeline_parallel_size",
                  "data_parallel_size", "quantization", "dtype", "kv_cache_dtype",
                  "max_model_len", "speculative_model", "num_speculative_tokens", "input_len",
                  "output_len")
RUN_COLUMNS = (("max_concurrency", "run_max_concurrency"),
               ("output_throughput", "run_output_throughput"),
               ("mean_tpot_ms", "run_mean_tpot_ms"))


class ReportError(ValueError):
    """A report cannot be made as asked (bad filter, unknown column, unreadable database)."""


def connect_readonly(db_path: str | Path) -> sqlite3.Connection:
    path = Path(db_path)
    if not path.exists():
        raise ReportError(f"{path}: no such database - run `benchvault ingest FILES --db {path}`")
    conn = sqlite3.connect(readonly_uri(path), uri=True)
    conn.execute("PRAGMA query_only = ON")
    return conn


def has_table(conn: sqlite3.Connection, table: str) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type IN ('table', 'view') "
                        "AND name = ?", [table]).fetchone() is not None


def table_columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]


def load_table(conn: sqlite3.Connection, table: str,
               conditions: Iterable[Condition] = (),
               among: tuple[str, list[Any]] | None = None) -> pd.DataFrame:
    """Every row of ``table`` (without the heavy text columns), with its source file's name.

    ``conditions`` (the report's --where) narrow the rows in SQL where SQL can say the same
    (``prefilter``); the caller still applies them all.  ``among`` = (column, values) keeps
    the rows whose column holds one of the values (None: NULL), e.g. some groups' rows.
    """
    sql, params = select_sql(conn, table, conditions, among)
    return read_frame(conn, sql, params)


def select_sql(conn: sqlite3.Connection, table: str, conditions: Iterable[Condition] = (),
               among: tuple[str, list[Any]] | None = None,
               ordered: bool = True) -> tuple[str, list]:
    """The SELECT ``load_table`` reads (its rows in file order unless not ``ordered``)."""
    conditions = list(conditions)
    cols = [c for c in table_columns(conn, table) if c not in HEAVY_COLUMNS]
    select = [f't."{c}"' for c in cols]
    joins = []
    if "source_id" in cols and has_table(conn, "sources"):
        select += ["s.name AS source", f"s.path AS {PATH}"]
        joins.append("LEFT JOIN sources s ON s.id = t.source_id")
        seen = SIGHTING_COLUMNS.get(table)
        # Every file the row was seen in, which `source` filters match: asked for only then.
        if seen and has_table(conn, "sightings") and any(c.column == "source"
                                                         for c in conditions):
            # every file the row was seen in (`source` is the one it takes its values from)
            # ...each as `name<RS>path<RS>line`: where in that file it was seen
            select.append("(SELECT group_concat(x.place, char(31)) FROM (SELECT DISTINCT "
                          "so.name || char(30) || so.path || char(30) || "
                          "printf('%012d', coalesce(g.line_start, 0)) AS place "
                          "FROM sightings g JOIN sources so ON so.id = g.source_id "
                          f"WHERE g.{seen} = t.id) x) AS seen_in")
    # What the server launch knows (GPU count, load time), under launch_* names.
    for fk, target, names, alias in (("launch_id", "server_launches", LAUNCH_COLUMNS, "l"),
                                     ("run_id", "serving_runs", RUN_COLUMNS, "r")):
        if fk in cols and has_table(conn, target):
            present = set(table_columns(conn, target))
            select += [f'{alias}."{c}" AS {new}' for c, new in names if c in present]
            joins.append(f'LEFT JOIN "{target}" {alias} ON {alias}.id = t.{fk}')
    # What the run's server logged while it ran (view run_server_stats): columns to ask for
    # with --columns (max_running, mean_generation_throughput, spec_acceptance_rate ...).
    if table == "serving_runs" and has_table(conn, "run_server_stats"):
        present = set(table_columns(conn, "run_server_stats"))
        select += [f'v."{c}"' for c in SERVER_STATS_COLUMNS if c in present]
        joins.append("LEFT JOIN run_server_stats v ON v.run_id = t.id")
    # What the warehouse knows about each run: its configuration's fields and its group.
    if "config_id" in cols and has_table(conn, "configurations"):
        taken = set(cols) | {name for _, name in LAUNCH_COLUMNS}
        select += [f'c."{c}"' for c in table_columns(conn, "configurations")
                   if c in CONFIG_COLUMNS and c not in taken]
        joins.append('LEFT JOIN configurations c ON c.id = t.config_id')
        if "group_id" in cols and has_table(conn, "experiment_groups"):
            select.append("g.title AS group_title")
            joins.append("LEFT JOIN experiment_groups g ON g.id = t.group_id")
    sql = f'SELECT {", ".join(select)} FROM "{table}" t ' + " ".join(joins)
    where, params = prefilter(conditions, set(cols))
    if among is not None and among[0] in cols:
        column, values = among
        known = [v for v in values if v is not None]
        terms = ([f't."{column}" IN ({", ".join("?" * len(known))})'] if known else []) + \
            ([f't."{column}" IS NULL'] if len(known) < len(values) else [])
        term = "(" + " OR ".join(terms or ["0"]) + ")"
        where = f"{where} AND {term}" if where else term
        params = [*params, *known]
    if where:
        sql += f" WHERE {where}"
    order = file_order([*cols, *([PATH] if joins and "source_id" in cols else [])])
    if order and ordered:
        # ``_path`` is the joined file's (s.path).
        sql += " ORDER BY " + ", ".join("s.path" if c == PATH else f"t.{c}" for c in order)
    return sql, params


# The path of the file a row was read from, as load_table gives it (for the reading order).
PATH = "_path"


def file_order(columns: Iterable[str]) -> list[str]:
    """The columns that put a table's rows in reading order: by the path of the file they
    were read from, then their lines (for a run seen in several files, the file its values
    come from); the id only between rows read at one place, never across files."""
    present = set(columns)
    return [c for c in (PATH, "line_start", "line_end", "id") if c in present]


CHUNK_ROWS = 4000


def read_frame(conn: sqlite3.Connection, sql: str, params: list | tuple = ()) -> pd.DataFrame:
    """``pd.read_sql_query`` in chunks: a year of runs never sits in memory twice over (as
    the cursor's tuples and as the frame); peak RSS 310 -> 218 MB on 38k runs.  A chunk whose
    column is all NULL reads as object, so the dtypes are inferred again on the whole."""
    parts = list(pd.read_sql_query(sql, conn, params=params, chunksize=CHUNK_ROWS))
    if len(parts) == 1:
        return parts[0]
    if not parts:
        return pd.read_sql_query(sql, conn, params=params)
    return pd.concat(parts, ignore_index=True).infer_objects()


# Columns whose shown value is the stored one or a part of it: a substring of what is shown
# is a substring of what is stored (a model's file name is part of its path).
_SUBSTRING_SAFE = {"model", "label", "section", "dataset_name", "backend", "endpoint", "test",
                   "model_type", "build_commit", "backends", "gpu_info", "cpu_info"}


def prefilter(conditions: list[Condition], columns: set[str]) -> tuple[str, list]:
    """SQL that keeps every row the conditions keep (and fewer others): numeric comparisons,
    `~` on columns shown as stored, `tag.KEY=value`.  Alternatives (col= / col~ repeated) are
    ORed as apply_where ORs them."""
    terms, params = [], []
    alternatives: dict[str, list[tuple[str, list]]] = {}
    for cond in conditions:
        term = _sql_term(cond, columns)
        if cond.op in ("=", "~"):
            alternatives.setdefault(cond.column, []).append(term)
        elif term is not None:
            terms.append(term[0])
            params += term[1]
    for column, options in alternatives.items():
        if any(o is None for o in options):
            continue                      # one alternative SQL cannot say: keep them all
        terms.append("(" + " OR ".join(o[0] for o in options) + ")")
        params += [p for o in options for p in o[1]]
    return " AND ".join(terms), params


def _sql_term(cond: Condition, columns: set[str]) -> tuple[str, list] | None:
    if cond.column.startswith(("tag.", "tags.")) and "tags" in columns and cond.op == "=":
        key = cond.column.split(".", 1)[1]
        if re.fullmatch(r"\w+", key):
            return f"json_extract(t.tags, '$.{key}') = ?", [cond.value]
        return None
    if cond.column not in columns:
        return None
    number = _as_number(cond.value)
    if cond.op in ("<", "<=", ">", ">=") and number is not None:
        return f't."{cond.column}" {cond.op} ?', [number]
    if cond.op == "=" and number is not None and cond.column not in _SUBSTRING_SAFE:
        return f't."{cond.column}" = ?', [number]
    # Shown equal to a text, or holding it: the stored value holds it (see _SUBSTRING_SAFE).
    if cond.op in ("=", "~") and cond.column in _SUBSTRING_SAFE:
        escaped = cond.value.lower().replace("\\", "\\\\").replace("%", "\\%").replace(
            "_", "\\_")
        return f"lower(t.\"{cond.column}\") LIKE ? ESCAPE '\\'", [f"%{escaped}%"]
    return None


def run_sql(conn: sqlite3.Connection, sql: str) -> pd.DataFrame:
    try:
        return pd.read_sql_query(sql, conn)
    except Exception as exc:  # pandas wraps sqlite errors in its own class
        raise ReportError(f"--sql failed: {exc}") from exc


# --- filters -----------------------------------------------------------------------------------

_CONDITION = re.compile(r"^\s*(?P<column>[A-Za-z_][\w.]*)\s*(?P<op>!=|>=|<=|=|>|<|~)(?P<value>.*)$",
                        re.S)


@dataclass(frozen=True)
class Condition:
    """One ``--where`` term: ``column=value``, ``!=``, ``<``, ``<=``, ``>``, ``>=`` or ``~``.

    ``~`` is a case-insensitive substring match.  ``tag.KEY`` reads an ingest ``--tag``.
    """

    column: str
    op: str
    value: str

    @classmethod
    def parse(cls, text: str) -> "Condition":
        match = _CONDITION.match(text)
        if not match:
            raise ReportError(f"--where wants COLUMN=VALUE (or != < <= > >= ~), got {text!r}")
        return cls(match["column"], match["op"], match["value"].strip())

    def __str__(self) -> str:
        return f"{self.column}{self.op}{self.value}"


def parse_conditions(texts: Iterable[str]) -> list[Condition]:
    return [Condition.parse(t) for t in texts]


def _as_number(value: str) -> float | None:
    try:
        return float(value)
    except ValueError:
        return None


def _mask(frame: pd.DataFrame, cond: Condition, display: dict[str, str]) -> pd.Series:
    series = _column(frame, cond.column)
    if cond.column == "source" and "seen_in" in frame and cond.op in ("=", "~", "!="):
        # A row seen in several files is in each of them.
        hit = frame["seen_in"].fillna(series).astype("string").fillna("").map(
            lambda places: bool(_places_in(places, cond)))
        return ~hit if cond.op == "!=" else hit
    shown = frame[display[cond.column]] if cond.column in display else None
    if cond.op in ("=", "!="):
        number = _as_number(cond.value)
        if number is not None and pd.api.types.is_numeric_dtype(series):
            hit = series == number
        else:
            hit = series.astype("string") == cond.value
            if shown is not None:
                hit = hit | (shown.astype("string") == cond.value)
        hit = hit.fillna(False).astype(bool)
        return hit if cond.op == "=" else ~hit
    if cond.op == "~":
        needle = cond.value.lower()
        hit = series.astype("string").str.lower().str.contains(needle, regex=False)
        if shown is not None:
            hit = hit | shown.astype("string").str.lower().str.contains(needle, regex=False)
        return hit.fillna(False).astype(bool)
    number = _as_number(cond.value)
    if number is None:
        raise ReportError(f"--where {cond}: {cond.op} wants a number")
    values = pd.to_numeric(series, errors="coerce")
    hit = {"<": values < number, "<=": values <= number, ">": values > number,
           ">=": values >= number}[cond.op]
    return hit.fillna(False).astype(bool)


def _column(frame: pd.DataFrame, name: str) -> pd.Series:
    if name.startswith("tag.") or name.startswith("tags."):
        key = name.split(".", 1)[1]
        tags = frame["tags"] if "tags" in frame else pd.Series([None] * len(frame), frame.index)
        return tags.map(lambda t: (t or {}).get(key) if isinstance(t, dict) else None)
    if name not in frame.columns:
        known = ", ".join(sorted(c for c in frame.columns if not c.startswith("_")))
        raise ReportError(f"unknown column {name!r}; columns: {known}")
    return frame[name]


def _places_in(places: str, cond: Condition) -> list[str]:
    """The sightings (`path<RS>line`) of ``places`` (seen_in's) in a file ``cond`` names."""
    wanted = cond.value.lower()
    found = []
    for place in places.split("\x1f"):
        name, _, where = place.partition("\x1e")
        if (name.lower() == wanted) if cond.op != "~" else wanted in name.lower():
            found.append(where)
    return found


def in_named_files(frame: pd.DataFrame, conditions: list[Condition]) -> pd.DataFrame:
    """Rows kept for the files a `source` filter names, in the order they stand in those
    files: never in the order of a copy of them that another file holds (a region built
    from a note gives the same rows in the same order whatever else the warehouse read)."""
    named = [c for c in conditions if c.column == "source" and c.op in ("=", "~")]
    if not named or "seen_in" not in frame or frame.empty:
        return frame
    places = frame["seen_in"].fillna("").astype(str)
    first = places.map(lambda p: min((w for c in named for w in _places_in(p, c)), default=""))
    # Each row's place becomes its place in the named file: every later sort in file order
    # (a fold, a report's table) keeps to it.
    frame = frame.copy()
    if PATH in frame:
        frame[PATH] = [w.partition("\x1e")[0] if w else p
                       for w, p in zip(first, frame[PATH])]
    if "line_start" in frame:
        frame["line_start"] = [int(w.partition("\x1e")[2]) if w else line
                               for w, line in zip(first, frame["line_start"])]
    order = frame.reset_index(drop=True).sort_values(
        file_order(frame.columns), kind="stable").index
    return frame.iloc[order]


def apply_where(frame: pd.DataFrame, conditions: list[Condition],
                display: dict[str, str] | None = None) -> pd.DataFrame:
    """Keep rows matching every condition.

    Repeating ``col=`` or ``col~`` for one column lists alternatives (any may match);
    every other term must hold.  ``display`` maps a column to the column holding its shown
    value (``model`` → its short name), which ``=`` and ``~`` also match.
    """
    display = display or {}
    keep = pd.Series(True, index=frame.index)
    alternatives: dict[str, pd.Series] = {}
    for cond in conditions:
        mask = _mask(frame, cond, display)
        if cond.op in ("=", "~"):
            alternatives[cond.column] = alternatives.get(cond.column, False) | mask
        else:
            keep &= mask
    for mask in alternatives.values():
        keep &= mask
    return in_named_files(frame[keep], conditions)


def why_empty(frame: pd.DataFrame, conditions: list[Condition],
              display: dict[str, str] | None = None) -> str:
    """Which filter left no rows: `--where max_concurrency=999 left none of 28 rows`."""
    if frame.empty:
        return "the warehouse holds no such rows"
    rows = frame
    for cond in conditions:
        kept = apply_where(rows, [c for c in conditions if c.column == cond.column
                                  and c.op in ("=", "~")] if cond.op in ("=", "~") else [cond],
                           display)
        if kept.empty:
            return f"`{cond}` left none of the {len(rows)} rows the other filters kept"
        rows = kept
    return f"{len(frame)} rows before filtering"
