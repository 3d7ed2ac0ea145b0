"""When two sightings are one row, and what that one row holds.

A serving run printed by the client (`Mean TTFT (ms): 121.23`) and saved by it as JSON
(`"mean_ttft_ms": 121.2301...`) is one run: its results and configuration agree at the
precision the less precise sighting printed.  Each sighting carries, per column, half a unit
of the last digit it printed (its *tolerance*; none for a machine-written value), and two
sightings agree on a column when their values differ by no more than the larger of the two.

Server launches and spec-decode lines are printed text on both sides: they are one row only
when every value agrees (a content fingerprint).

The merged row takes each number from the most precise sighting that has it (the JSON's full
precision over two printed decimals), each piece of context from the first sighting that has
it (the note knows the label and heading, the JSON the dataset), and unions tags and extras.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import operator
import pickle
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from ..schemas.models import INCOMPLETE, json_safe

# Columns that say where a row was read, not what it is.
PROVENANCE = ("id", "source_id", "line_start", "line_end", "raw_text")
# Columns the warehouse sets after storing a row; no sighting says them.
WAREHOUSE = ("sightings", "config_id", "group_id", "launch_matched_on", "engine_from_launch",
             "window_start", "window_end", "window_from")
_NOT_CONTENT = frozenset(PROVENANCE + WAREHOUSE)
# Context: merged from every sighting, never compared (a JSON has no heading).
CONTEXT = ("section", "label", "tags", "command", "namespace", "extra", "format", "engine",
           "launch_id", "run_id")
# Ids of the rows a row was linked to within its file.
LINKS = ("launch_id", "run_id")
_NOT_HASHED = _NOT_CONTENT | frozenset(LINKS)     # what a content hash leaves out of a row
# What a launch or a log line says about where it was seen, not what it is.
LINE_CONTEXT = ("section", "label", "tags", "launch_id", "run_id")
# A number counts as agreeing with another when they differ by this much more than the
# tolerances allow (float rounding of the stored values).
EPSILON = 1e-9
# Two sightings that agree on everything but this many results at most are one run printed two
# ways (a number retyped, a block edited): a contradiction, kept as two rows with a warning.
MAX_CONTRADICTED = 2


@dataclass(frozen=True)
class Identity:
    """How the rows of one table are told apart.

    ``key`` columns are equal in every sighting of one row (they pick the candidates with an
    index); ``near`` is a result compared within tolerance already in that look-up;
    ``results`` must agree within tolerance and ``config`` exactly (text ignoring case), each
    where both sightings have a value.  ``screen``: results measured apart from ``near``
    (latencies, not the throughputs a duration gives), also compared in the look-up: a row seen
    once that differs on more than MAX_CONTRADICTED of them is neither the same run nor a
    contradiction.  ``exact``: one row only when every value but the ``context`` ones is equal
    (compared through a fingerprint).
    """

    table: str
    column: str                         # the sightings column that points at the row
    key: tuple[str, ...] = ()
    near: str | None = None
    results: tuple[str, ...] = ()
    config: tuple[str, ...] = ()
    screen: tuple[str, ...] = ()
    exact: bool = False
    # merged, never compared: where a row sat and what was around it
    context: tuple[str, ...] = CONTEXT
    children: str | None = None         # child table rebuilt from the merged sightings
    # ...its columns a sighting keeps (the first ``child_key`` of them tell a child apart)
    # and the column that points at the row
    child_columns: tuple[str, ...] = ("metric", "stat", "percentile", "value_ms")
    child_key: int = 2
    child_link: str = "run_id"

    def content(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """A row's values without provenance and warehouse columns: what a sighting says."""
        return {k: v for k, v in values.items() if k not in _NOT_CONTENT}

    def fingerprint(self, values: Mapping[str, Any]) -> str:
        """What makes an ``exact`` row what it is: its values, where it sat left out."""
        return _digest({k: v for k, v in self.content(values).items()
                        if k not in self.context and v is not None})

    def content_hash(self, values: Mapping[str, Any],
                     tolerance: Mapping[str, float] | None) -> str:
        """Everything a sighting said: equal for the same text pasted twice.  Links to the
        launch or run beside it are left out: they are ids ingest gave within one file.

        Hashed as pickled, not as JSON: printing the ~40 floats of a result block was two
        thirds of the hash's time, and pickle writes their 8 bytes.  A sighting hashed some
        other way is still found, by its values instead: the same row, a little slower."""
        said = sorted([(k, _canonical(v) if v.__class__ in _NESTED else v)
                       for k, v in values.items() if v is not None and k not in _NOT_HASHED],
                      key=_by_key)
        return _pickled_digest((said, _canonical(tolerance) if tolerance else None))


def _digest(value: Any) -> str:
    text = json.dumps(json_safe(value), sort_keys=True, default=str)
    return hashlib.sha1(text.encode()).hexdigest()


_NESTED = (dict, list)


def _canonical(value: Any) -> Any:
    """``value`` with every dict as its items sorted by key: equal values, equal pickles."""
    if value.__class__ is dict:
        return tuple(sorted([(k, _canonical(v) if v.__class__ in _NESTED else v)
                             for k, v in value.items()], key=_by_key))
    if value.__class__ is list:
        return [_canonical(v) if v.__class__ in _NESTED else v for v in value]
    return value


_by_key = operator.itemgetter(0)


def _pickled_digest(value: Any) -> str:
    """SHA-1 of ``value`` pickled without the memo: with it, a string met twice is written
    the second time as a reference or in full depending on whether it is one object, and equal
    values could hash differently."""
    out = io.BytesIO()
    pickler = pickle.Pickler(out, protocol=5)
    pickler.fast = True
    pickler.dump(value)
    return hashlib.sha1(out.getbuffer()).hexdigest()


def _numbers(model: type, skip: Iterable[str]) -> tuple[str, ...]:
    """The model's int and float columns, less ``skip``."""
    import typing

    out = []
    for name, field in model.model_fields.items():
        args = set(typing.get_args(field.annotation)) or {field.annotation}
        if name not in skip and args & {int, float} and bool not in args:
            out.append(name)
    return tuple(out)


def _serving() -> Identity:
    from ..parsers.runcontext import workload_keys
    from ..schemas.models import ServingRun

    config = ("model", "max_concurrency", "request_rate", "num_prompts", "burstiness",
              "dataset_name", *workload_keys(None))
    skip = set(PROVENANCE) | set(WAREHOUSE) | set(CONTEXT) | set(config) | {"port", "seed"}
    return Identity("serving_runs", "run_id", key=("completed",), near="duration",
                    results=_numbers(ServingRun, skip), config=config,
                    screen=("mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms", "mean_tpot_ms",
                            "median_tpot_ms", "mean_itl_ms", "mean_e2el_ms"),
                    children="latency_stats")


def _llama_bench() -> Identity:
    from ..schemas.llama_bench import LlamaBenchResult

    results = ("avg_ts", "stddev_ts", "avg_ns", "stddev_ns", "model_size", "model_n_params")
    skip = set(PROVENANCE) | set(WAREHOUSE) | set(CONTEXT) | set(results) | {
        "samples_ns", "samples_ts", "test_time", "env", "gpu_count", "gpu_arch", "cpu_info",
        "gpu_info", "model_filename", "model_arch", "model_size_label", "model_ftype"}
    config = tuple(n for n in LlamaBenchResult.model_fields if n not in skip)
    return Identity("llama_bench_results", "llama_bench_id", key=("test",), near="avg_ts",
                    results=results, config=config)


def _offline() -> Identity:
    from ..schemas.offline import OfflineRun

    config = ("model", "batch_size", "input_len", "output_len", "tensor_parallel_size",
              "dtype", "quantization", "kv_cache_dtype", "num_prompts", "dataset_name",
              "n_sequences", "use_beam_search", "backend", "num_iters", "num_iters_warmup",
              "max_model_len", "n_kv", "n_kv_max", "n_batch", "n_ubatch", "n_gpu_layers",
              "n_threads", "n_threads_batch", "flash_attn", "is_pp_shared", "is_tg_separate")
    skip = set(PROVENANCE) | set(WAREHOUSE) | set(CONTEXT) | set(config) | {
        "tool", "phase", "run_name"}
    # A vLLM latency or throughput JSON says neither batch size nor lengths, and no figure is
    # printed by every offline program: the look-up is by program and phase, every result
    # compared at its printed precision.
    return Identity("offline_runs", "offline_id", key=("tool", "phase"),
                    results=_numbers(OfflineRun, skip), config=config,
                    children="offline_steps",
                    child_columns=("phase", "kind", "step", "batch_size", "latency_s",
                                   "throughput"),
                    child_key=3, child_link="offline_id")


def _spec_decode() -> Identity:
    return Identity("spec_decode_metrics", "spec_decode_id", exact=True, context=LINE_CONTEXT)


def _launch() -> Identity:
    return Identity("server_launches", "launch_id", exact=True, context=LINE_CONTEXT)


_IDENTITIES: dict[str, Identity] | None = None


def identities() -> dict[str, Identity]:
    """Table → how its rows are told apart, for every table whose rows can be seen twice."""
    global _IDENTITIES
    if _IDENTITIES is None:
        _IDENTITIES = {i.table: i for i in (_serving(), _llama_bench(), _spec_decode(),
                                             _launch(), _offline())}
    return _IDENTITIES


# --- agreement ---------------------------------------------------------------------------------

def close(a: Any, b: Any, tolerance: float) -> bool:
    """Two stored numbers agree: equal infinities, or no further apart than ``tolerance``."""
    try:
        a, b = float(a), float(b)
    except (TypeError, ValueError):
        return str(a) == str(b)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= tolerance + EPSILON * max(1.0, abs(a), abs(b))


def same_text(a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        a, b = a.strip().lower(), b.strip().lower()
        if a == b:
            return True
        # `/models/gguf/x.gguf` and `x.gguf` name one model file.
        return a.rsplit("/", 1)[-1] == b.rsplit("/", 1)[-1] and ("/" in a) != ("/" in b)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return close(a, b, 0.0)
    return a == b


@dataclass
class Said:
    """One sighting's values and the tolerance of each printed number."""

    values: Mapping[str, Any]
    tolerance: Mapping[str, float] | None = None

    def tol(self, column: str) -> float:
        return float((self.tolerance or {}).get(column, 0.0))


def differences(identity: Identity, a: Said, b: Said) -> list[str]:
    """Columns on which two sightings disagree (empty: they are one row).  Two that each
    printed results but none in common (two pastes of different parts of results) have
    nothing to agree on: they differ on their results; so do two that have one in common and
    each others besides."""
    out = []
    results = (identity.near, *identity.results) if identity.near else identity.results
    shared = 0
    for column in results:
        x, y = a.values.get(column), b.values.get(column)
        if x is not None and y is not None:
            shared += 1
            if not close(x, y, max(a.tol(column), b.tol(column))):
                out.append(column)
    # (nor do two that share one figure and each hold others: two rows of hand-made tables
    # whose throughput rounds alike, `6.41`, are two runs)
    only_a = [c for c in results if a.values.get(c) is not None and b.values.get(c) is None]
    only_b = [c for c in results if b.values.get(c) is not None and a.values.get(c) is None]
    if (not shared and any(a.values.get(c) is not None for c in results)
            and any(b.values.get(c) is not None for c in results)) \
            or (shared == 1 and only_a and only_b):
        out.extend([*only_a, *only_b])
    for column in (*identity.key, *identity.config):
        x, y = a.values.get(column), b.values.get(column)
        if x is not None and y is not None and not same_text(x, y):
            out.append(column)
    return out


def near_agrees(identity: Identity, a: Said, b: Said) -> bool:
    """The look-up columns agree at the sightings' own precision."""
    column = identity.near
    x, y = a.values.get(column), b.values.get(column)
    return x is not None and y is not None and close(x, y, max(a.tol(column), b.tol(column)))


def contradicts(identity: Identity, a: Said, b: Said, differ: list[str]) -> bool:
    """Two sightings that differ on ``differ`` (differences') are one run printed two ways --
    a contradiction worth a warning -- rather than two runs: they agree on what picks them out
    (the key, the look-up value, the configuration) and on every result but MAX_CONTRADICTED
    at most.  Two repeats that happen to share a request count and a duration differ on most
    of their figures: two runs, no warning."""
    if not identity.near or not near_agrees(identity, a, b):
        return False
    return len(differ) <= MAX_CONTRADICTED and not set(differ) & {*identity.key, *identity.config}


# --- merging -----------------------------------------------------------------------------------

def precision_rank(said: Said) -> int:
    """0 for a machine-written sighting (every value exact), 1 for a printed one."""
    return 1 if said.tolerance else 0


def primary_index(saids: Sequence[Said]) -> int:
    """The sighting that gives a merged row its provenance: the most precise, then the first."""
    return min(range(len(saids)), key=lambda i: (precision_rank(saids[i]), i))


def merge(identity: Identity, saids: Sequence[Said], numeric: set[str]) -> dict[str, Any]:
    """One row's content from its sightings (in the order they were seen).

    Numbers come from the sighting that printed them most precisely (the first on a tie);
    dicts (tags, extra, namespace) are unioned, earlier sightings winning a key (a run is
    incomplete only when every sighting was cut short); every other
    value is the first sighting's that has one, `unknown` engines counting as none.
    """
    merged: dict[str, Any] = {}
    columns = list(dict.fromkeys(c for s in saids for c in s.values))
    for column in columns:
        present = [(i, s) for i, s in enumerate(saids) if s.values.get(column) is not None]
        if not present:
            merged[column] = None
            continue
        values = [s.values[column] for _, s in present]
        if column in numeric:
            _, best = min(present, key=lambda p: (p[1].tol(column), p[0]))
            merged[column] = best.values[column]
        elif all(isinstance(v, dict) for v in values):
            union: dict[str, Any] = {}
            for value in reversed(values):
                union.update(value)
            if INCOMPLETE in union and any(not (s.values.get(column) or {}).get(INCOMPLETE)
                                           for s in saids):
                del union[INCOMPLETE]           # another sighting printed the whole run
                union = union or None
            merged[column] = union
        elif column == "format":
            merged[column] = saids[primary_index(saids)].values.get(column) or values[0]
        elif column == "engine":
            merged[column] = next((v for v in values if v != "unknown"), values[0])
        else:
            merged[column] = values[0]
    return merged


def merge_children(saids_children: Sequence[tuple[Said, Sequence[Sequence[Any]]]],
                   key: int = 2) -> list[list[Any]]:
    """The children of a merged row: every child any sighting printed (told apart by its
    first ``key`` values: a latency statistic's metric and stat), its values from the most
    precise sighting that has it."""
    order = sorted(range(len(saids_children)),
                   key=lambda i: (precision_rank(saids_children[i][0]), i))
    out: dict[tuple, list[Any]] = {}
    for i in order:
        for child in saids_children[i][1]:
            out.setdefault(tuple(child[:key]), list(child))
    return list(out.values())
