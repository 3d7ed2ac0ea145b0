"""Repeats folded from a narrow read: a year of runs reported as one row per configuration.

The pandas fold (``fold_repeats``) wants every run derived first, and a run's row is wide (~100
columns): reading, deriving and folding 63k of them took 7 s.  For the default report (every
run, ``--repeats mean``) the fold needs only each run's key, order, derivation context and the
metrics the report shows.  Those are read for every run and folded by the same
``fold_repeats``; the wide row is then read for the first run of each configuration alone.

Derived metrics (throughput times replicas, per GPU, load in minutes) are linear in stored
ones, with factors (replicas, GPUs) read from the run's tags, label, section and launch.  Where
those factors are the same for every run of a configuration, deriving the means gives the
mean of the derived values and deriving the standard deviations gives theirs.  A
configuration whose runs have different factors is ``mixed``: the caller folds its group run
by run.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd

from .derive import (GPU_INPUTS, LOAD_SECONDS, PER_GPU, REPLICA_INPUTS, _tags, gpus_of,
                     replicas_of)
from .experiments import fold_repeats
from .query import PATH, file_order, read_frame, select_sql

# The run columns derive reads to scale metrics (replicas, GPUs).
CONTEXT = tuple(dict.fromkeys((*REPLICA_INPUTS, *GPU_INPUTS)))
# Ids per `IN (...)` when reading the first runs' rows (SQLite's parameter limit is 32766).
IDS_PER_READ = 30000
MAX_PREALLOCATED_RUNS = 1 << 22
RUNS_PER_READ = 8000


@dataclass
class Folded:
    frame: pd.DataFrame        # first run of each configuration, folded metrics averaged
    metrics: list[str]         # the folded metrics (spread in `_std_<metric>`)
    mean_only: list[str]       # averaged for derive alone (`_mean_<column>`)
    unfolded: list[str]        # metrics the report cannot show: the first run's value


def _inputs(shown: set[str]) -> set[str]:
    """The shown columns with the stored ones derive computes them from.  The load seconds
    are no metric themselves (the first run's value is shown) but load_minutes is: derive
    reads their mean."""
    needed = set(shown) | {c for c in PER_GPU if f"{c}_per_gpu" in shown}
    return needed | set(LOAD_SECONDS) if "load_minutes" in shown else needed


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _factors(context: str, names: list[str]) -> tuple:
    """(replicas, GPUs) of a run whose derivation context is ``context`` (a JSON array)."""
    row = dict(zip(names, json.loads(context)))
    if "tags" in row:
        row["tags"] = _tags(row["tags"])
    replicas = replicas_of(row)
    return replicas, gpus_of(row, replicas)


def fold_runs(conn: sqlite3.Connection, table: str, key: str, is_metric: Callable[[str], bool],
              shown: set[str]) -> Folded | None:
    """One row per ``key`` value (a run without one is its own), in file order, or None when
    no configuration has repeats (the pandas fold then leaves every run as it is).

    Only the metrics the report can show (``shown``) or derive a shown one from are folded;
    the others keep the first run's value, as nothing shows them."""
    inner, params = select_sql(conn, table, ordered=False)
    names = [d[0] for d in conn.execute(f"SELECT * FROM ({inner}) LIMIT 0", params).description]
    order = file_order(names)
    if key not in names or "id" not in names:
        return None
    needed = _inputs(shown)
    metrics = [c for c in names if is_metric(c) and c in needed]
    mean_only = [c for c in LOAD_SECONDS if c in names and c in needed and c not in metrics]
    context = [c for c in CONTEXT if c in names]
    contexts = f"json_array({', '.join(map(_q, context))})" if context else "'[]'"
    narrow = list(dict.fromkeys([*order, *metrics, *mean_only]))
    sql = (f"SELECT coalesce('k' || {_q(key)}, 'r' || id) AS _key, {contexts} AS _context, "
           f"{', '.join(map(_q, narrow))} FROM ({inner})")
    # Sorted here (``order`` holds "id" at least), not by SQLite: its ORDER BY walks the rows
    # in index order, page by page.
    runs, distinct = _read_runs_arrow(conn, sql, params, table, narrow, order) or \
        _read_runs(conn.execute(sql, params), order)
    if runs.empty:
        return None
    folded = fold_repeats(runs, "_key", [*metrics, *mean_only], "mean")
    if folded["n"].max() <= 1:
        return None
    # Factors are worked out only where a configuration's runs have several contexts.
    keys = runs["_key"]
    contexts_per_key = runs["_context"].groupby(keys, sort=False).nunique()
    several = runs[keys.isin(contexts_per_key.index[contexts_per_key > 1])]
    factors = {c: str(_factors(distinct[c], context)) for c in several["_context"].unique()}
    ways = several["_context"].map(factors).groupby(several["_key"], sort=False).nunique()
    mixed = set(runs.loc[keys.isin(ways.index[ways > 1]), "id"])
    del runs, keys, several         # every run's row, gone before the first runs' wide rows
    reads = [select_sql(conn, table, among=("id", ids), ordered=False)
             for ids in _chunks(folded["id"].tolist())]
    wide = pd.concat([read_frame(conn, *read) for read in reads], ignore_index=True)
    wide = wide.set_index("id").loc[folded["id"]].reset_index()
    averaged = folded.set_index(wide.index)
    frame = wide.assign(**{c: averaged[c] for c in metrics},
                        **{f"_mean_{c}": averaged[c] for c in mean_only},
                        n=averaged["n"], _mixed=averaged["id"].isin(mixed),
                        **{f"_std_{c}": averaged[f"_std_{c}"] for c in [*metrics, *mean_only]
                           if f"_std_{c}" in averaged})
    unfolded = [c for c in names if is_metric(c) and c not in needed]
    return Folded(frame, metrics, mean_only, unfolded)


def _sorted(runs: pd.DataFrame, order: list[str]) -> pd.DataFrame:
    return runs.sort_values(order, kind="stable", na_position="first", ignore_index=True)


def _read_runs(cursor: sqlite3.Cursor, order: list[str]) -> tuple[pd.DataFrame, list[str]]:
    """The narrow rows, read a chunk at a time with each context as a number (63k runs'
    context texts and row tuples at once took 75 MB), and the contexts by number."""
    names = [d[0] for d in cursor.description]
    numbers: dict[str, int] = {}
    parts = []
    while rows := cursor.fetchmany(RUNS_PER_READ):
        part = pd.DataFrame.from_records(rows, columns=names)
        part["_context"] = [numbers.setdefault(c, len(numbers))
                            for c in part["_context"].tolist()]
        parts.append(part)
    if not parts:
        return pd.DataFrame(columns=names), []
    return _sorted(pd.concat(parts, ignore_index=True), order), list(numbers)


def _read_runs_arrow(conn: sqlite3.Connection, sql: str, params: list, table: str,
                     narrow: list[str], order: list[str]
                     ) -> tuple[pd.DataFrame, list[str]] | None:
    """The narrow rows (``sql``'s key, context and ``narrow`` columns) read through the ADBC
    driver (arrowsql.py): 100k runs without a Python object per value; None when it cannot
    (no driver, a value of another type, a joined column such as a launch's load seconds,
    which ``table``'s model does not type)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from ..arrowsql import ArrowReadFailed, column_types, typed_batches

    types = {**column_types(table), PATH: pa.string()}
    if any(name not in types for name in narrow):
        return None
    schema = pa.schema([("_key", pa.string()), ("_context", pa.string()),
                        *((name, types[name]) for name in narrow)])
    # Texts as numbers: the key and context by first appearance, the file's path (for the
    # reading order) by first appearance too, made its rank among the paths at the end.
    texts = ["_key", "_context", *(n for n in narrow if types[n] == pa.string())]
    # Each batch is copied into NumPy arrays as it comes (a zero-copy view would keep the
    # driver's whole batch, buffers with slack), its key and context texts as numbers: the
    # batches kept, then joined, took about three times the rows' size in peak RSS.
    numbering: list[dict] = [{} for _ in texts]
    # At most one row per run: arrays that long cost only the pages written (capped: an id
    # set by hand may be huge; past the cap the arrays double).
    bound = conn.execute(f"SELECT max(rowid) FROM {_q(table)}").fetchone()[0] or 0
    names = ["_key", "_context", *narrow]
    columns = _Columns(names, min(bound, MAX_PREALLOCATED_RUNS))
    try:
        for batch in typed_batches(conn, sql, params, schema):
            values = []
            for name, column in zip(names, batch.columns):
                if name not in texts:
                    values.append(column.to_numpy(zero_copy_only=False))
                    continue
                numbers = numbering[texts.index(name)]
                encoded = pc.dictionary_encode(column)
                renumber = np.array([numbers.setdefault(text, len(numbers))
                                     for text in encoded.dictionary.to_pylist()], dtype=np.int64)
                values.append(renumber[encoded.indices.to_numpy(zero_copy_only=False)])
            columns.add(values)
    except ArrowReadFailed:
        return None
    if PATH in texts and columns.arrays is not None:
        seen = numbering[texts.index(PATH)]
        rank = np.empty(len(seen), dtype=np.int64)
        rank[[seen[p] for p in sorted(seen, key=lambda p: (p is None, p or ""))]] = \
            np.arange(len(seen))
        at = names.index(PATH)
        columns.arrays[at][:columns.rows] = rank[columns.arrays[at][:columns.rows]]
    return columns.frame(order), list(numbering[1])


class _Columns:
    """Columns filled batch by batch into arrays of a given capacity (doubled if it proves
    short); an integer column that meets a NULL (NaN in NumPy) becomes float, as pandas
    would make it."""

    def __init__(self, names: list[str], capacity: int):
        self.names, self.capacity, self.rows = names, max(capacity, 1), 0
        self.arrays: list[np.ndarray] | None = None

    def add(self, values: list[np.ndarray]) -> None:
        count = len(values[0])
        if self.arrays is None:
            self.arrays = [np.empty(self.capacity, dtype=v.dtype) for v in values]
        if self.rows + count > self.capacity:
            self.capacity = max(2 * self.capacity, self.rows + count)
            self.arrays = [self._moved(a, a.dtype) for a in self.arrays]
        for i, v in enumerate(values):
            if v.dtype != self.arrays[i].dtype:
                self.arrays[i] = self._moved(self.arrays[i], np.result_type(self.arrays[i], v))
            self.arrays[i][self.rows:self.rows + count] = v
        self.rows += count

    def _moved(self, array: np.ndarray, dtype) -> np.ndarray:
        moved = np.empty(self.capacity, dtype=dtype)
        moved[:self.rows] = array[:self.rows]
        return moved

    def frame(self, order: list[str]) -> pd.DataFrame:
        """The rows sorted by ``order`` (stable, NULLs first) in place, one column at a time:
        a sorted copy of the frame would hold every row twice."""
        if self.arrays is None:
            return pd.DataFrame({name: pd.Series(dtype=object) for name in self.names})
        arrays = [a[:self.rows] for a in self.arrays]
        keys = [arrays[self.names.index(name)] for name in order]
        if not all(np.issubdtype(k.dtype, np.integer) for k in keys):    # NaN: pandas sorts
            return _sorted(pd.DataFrame(dict(zip(self.names, arrays)), copy=False), order)
        permutation = np.lexsort(keys[::-1])        # stable; the last key is the primary one
        for a in arrays:
            a[:] = a[permutation]
        return pd.DataFrame(dict(zip(self.names, arrays)), copy=False)


def _chunks(ids: list[int]) -> list[list[int]]:
    return [ids[i:i + IDS_PER_READ] for i in range(0, len(ids), IDS_PER_READ)]


def derive_folded(folded: Folded, derive: Callable[[pd.DataFrame], pd.DataFrame],
                  is_metric: Callable[[pd.Series, str], bool]) -> pd.DataFrame:
    """The folded rows derived as the pandas fold would show them: derived metrics from the
    means, ``_std_<metric>`` for every metric (stored or derived) from the deviations."""
    frame, metrics, mean_only = folded.frame, folded.metrics, folded.mean_only
    stds = [f"_std_{c}" for c in [*metrics, *mean_only] if f"_std_{c}" in frame]
    means = frame.drop(columns=[*stds, *(f"_mean_{c}" for c in mean_only)])
    n = means.pop("n")
    inputs = means.assign(**{c: frame[f"_mean_{c}"] for c in mean_only})
    # Only what derive scales metrics by: names and the rest are the means' business.
    read = {*CONTEXT, *metrics, *mean_only, *folded.unfolded}
    deviations = inputs[[c for c in inputs.columns if c in read]].assign(
        **{c: frame[f"_std_{c}"] if f"_std_{c}" in frame else np.nan
           for c in [*metrics, *mean_only]},
        **{c: np.nan for c in folded.unfolded})
    shown, spread = derive(inputs), derive(deviations)
    shown = shown.assign(**{c: means[c] for c in mean_only})
    folded_columns = [c for c in shown.columns if is_metric(shown[c], c) and c in spread
                      and c not in folded.unfolded and spread[c].notna().any()]
    spreads = spread[folded_columns].add_prefix("_std_").astype(float)
    return pd.concat([shown.assign(n=n.astype(int)), spreads], axis=1)
