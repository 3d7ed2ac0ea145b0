"""Saved serving-benchmark result files (vLLM ``--save-result``, SGLang ``--output-file``) → rows.

Upstream writers: vLLM ``benchmarks/benchmark_serving.py`` and ``vllm/benchmarks/serve.py``
(``json.dump(result_json)``, one object; ``--append-result`` adds one more per line), SGLang
``bench_serving`` (one JSON object per line, appended per run).  Each object is one run and
lands in the same ``serving_runs`` columns (and ``latency_stats`` rows) as the printed result
block of that run, because the columns are named after these keys::

    {"date": "20250812-101500", "backend": "vllm", "model_id": "meta-llama/Llama-2-7b-chat-hf",
     "num_prompts": 64, "request_rate": "inf", "max_concurrency": 8, "gpu": "MI300X",
     "duration": 225.8, "completed": 64, ..., "mean_ttft_ms": 536.74, "p99_itl_ms": 431.69,
     "input_lens": [...], "ttfts": [...], "itls": [[...], ...], "errors": ["", ...]}

Key drift across versions is data, not code: vLLM 0.6.4-0.9.1 wrote ``"request_goodput:"``
(with the colon); SGLang writes ``total_throughput`` and ``*_e2e_latency_ms``; ``"inf"`` and
``Infinity`` are infinite rates.  Every ``{mean,median,std,min,max,pNN}_{metric}_ms`` key is a
``latency_stats`` row.  ``--metadata KEY=VALUE`` pairs (top-level string values no writer
defines) become tags.  Per-request arrays (``--save-detailed`` / ``--output-details``) become
``serving_requests`` rows; ``generated_texts`` are not kept.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any, Iterator

from pydantic import ValidationError

from ..schemas.models import LatencyStat, ServingRun
from ..schemas.result_files import ServingRequest
from .grammar import finite
from .base import Context, FileFormat, Parsed, Problem
from .llama_bench_output import tolerant_decode
from ..reading.jsonstream import records
from ..reading.lines import sniff_encoding
from ..reading.progress import open_text
from .runcontext import infer_engine, serving_context, workload_keys
from .vllm_serving import metric_key

RAW_LIMIT = 20_000
# Keys that name a column by another name, in some writer or version.
RENAMED = {
    "model_id": "model",
    "tokenizer_id": "tokenizer",
    "total_throughput": "total_token_throughput",      # SGLang
    "request_goodput:": "request_goodput",              # vLLM 0.6.4 - 0.9.1 (key typo)
}
# Per-request arrays → serving_requests columns, with the factor to the column's unit.
REQUEST_ARRAYS = {
    "input_lens": ("input_len", None),
    "output_lens": ("output_len", None),
    "ttfts": ("ttft_ms", 1000.0),
    "latencies": ("latency_ms", 1000.0),
    "start_times": ("start_time_s", None),
    "queue_times": ("queue_time_ms", 1000.0),
    "itls": ("itls_ms", 1000.0),
    "errors": ("error", None),
}
DROPPED = {"generated_texts"}
# SGLang's `server_info` (its server's arguments) → the launch settings a configuration reads;
# kept in extra["launch"] under the launch columns' names.
SERVER_INFO_KEYS = {
    "tp_size": "tensor_parallel_size", "pp_size": "pipeline_parallel_size",
    "dp_size": "data_parallel_size", "quantization": "quantization", "dtype": "dtype",
    "kv_cache_dtype": "kv_cache_dtype", "context_length": "max_model_len",
    "speculative_draft_model_path": "speculative_model",
    "speculative_num_draft_tokens": "num_speculative_tokens",
}
# Columns a file never sets: provenance and what benchvault infers.
OWN_COLUMNS = {"id", "source_id", "line_start", "line_end", "raw_text", "section", "label",
               "tags", "format", "engine", "launch_id", "command", "namespace", "extra"}
# Top-level keys the writers define themselves (not --metadata), kept in `extra`.
WRITER_KEYS = {"date", "endpoint_type", "label", "tag", "ramp_up_strategy", "ramp_up_start_rps",
               "ramp_up_end_rps", "best_of", "use_beam_search", "rps_change_events",
               "server_info", "storage_backend", "goodput_slos_ms"}
STAT_KEY_RE = re.compile(r"^(mean|median|std|min|max|p\d+(?:\.\d+)?)_(.+)_ms$")
SIGNATURE = ('"completed"', '"duration"')
# ...or, in a copy a user cut down to the figures they care about, a latency's statistic
LATENCY_KEY = re.compile(r'"(?:mean|median|p\d+)_(?:ttft|tpot|itl|e2el)_ms"')
# One of these too: SGLang's 2024 layout wrote output_throughput but no request_throughput.
THROUGHPUT_KEYS = ('"request_throughput"', '"output_throughput"')
INFINITE = {"inf", "infinity", "+inf"}


def sniff(head: bytes, path: str) -> bool:
    encoding, binary = sniff_encoding(head)
    if binary:
        return False
    text = head.decode(encoding, errors="ignore").lstrip("\ufeff \t\r\n")
    return text.startswith("{") and (all(s in text for s in SIGNATURE)
                                     or LATENCY_KEY.search(text) is not None) \
        and any(k in text for k in THROUGHPUT_KEYS) and '"benchmarks"' not in text


def _number(value: Any) -> Any:
    if isinstance(value, str) and value.strip().lower() in INFINITE:
        return math.inf
    return value


def _stat(word: str) -> tuple[str, float | None]:
    if word.startswith("p"):
        return word, float(word[1:])
    return word, None


def _requests(record: dict[str, Any], unreadable: frozenset[str] = frozenset()
              ) -> tuple[list[ServingRequest], list[str]]:
    arrays = {k: v for k, v in record.items() if k in REQUEST_ARRAYS and isinstance(v, list)}
    if not arrays:
        return [], []
    lengths = {k: len(v) for k, v in arrays.items()}
    count = max(lengths.values())
    problems = [f"per-request arrays differ in length: {lengths}"] \
        if len(set(lengths.values())) > 1 else []
    out = []
    for i in range(count):
        row: dict[str, Any] = {"request_index": i}
        for key, items in arrays.items():
            column, factor = REQUEST_ARRAYS[key]
            value = items[i] if i < len(items) else None
            if i < len(items):
                items[i] = None     # each request's values let go once its row holds them
            if value is None:
                continue
            if isinstance(value, str) and value in unreadable:
                problems.append(f"{key}[{i}]: {value!r} is no number, stored as null")
                continue
            if column == "itls_ms":
                itls = [x * factor for x in value if isinstance(x, (int, float)) and finite(x)]
                row.update(itls_ms=itls, itl_count=len(itls),
                           mean_itl_ms=sum(itls) / len(itls) if itls else None)
            elif column == "error":
                row["error"] = str(value) or None
            elif isinstance(value, (int, float)) and not finite(value):
                problems.append(f"{key}[{i}]: a number out of range, stored as null")
            else:
                row[column] = value * factor if factor else value
        row["status"] = "errored" if row.get("error") else "successful"
        out.append(ServingRequest(**row))
    return out, problems


def record_to_parsed(record: dict[str, Any], context: Context, fmt: str, line: int,
                     unreadable: frozenset[str] = frozenset()) -> tuple[Parsed, list[str]]:
    """``unreadable``: bare words a tolerant read quoted (garbled numbers): a value that is one
    is null with a warning, never a tag or a column's text."""
    fields = ServingRun.model_fields
    values_: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    tags: dict[str, str] = dict(context.tags)
    stats: list[LatencyStat] = []
    unread: list[str] = []
    for key, value in record.items():
        if key in REQUEST_ARRAYS or key in DROPPED:
            continue
        if isinstance(value, str) and value in unreadable:
            unread.append(f"{key}: {value!r} is no number, stored as null")
            continue
        if isinstance(value, int) and not isinstance(value, bool) and not finite(value):
            unread.append(f"{key}: a number out of range, stored as null")
            continue
        column = RENAMED.get(key, key)
        stat = STAT_KEY_RE.match(column)
        if stat and isinstance(value, (int, float)):
            word, pct = _stat(stat.group(1))
            metric = metric_key(stat.group(2))
            stats.append(LatencyStat(metric=metric, stat=word, percentile=pct,
                                     value_ms=float(value)))
            column = f"{word}_{metric}_ms"
            if column in fields:
                values_[column] = float(value)
            continue
        if column in fields and column not in OWN_COLUMNS:
            values_[column] = _number(value)
        elif isinstance(value, str) and key not in WRITER_KEYS:
            tags[key] = value                          # --metadata KEY=VALUE
        else:
            extra[key] = value
    # SGLang writes no model key; the server it asked (`server_info`) names it, and how it
    # was launched.
    server = record.get("server_info")
    if isinstance(server, dict):
        if values_.get("model") is None and isinstance(server.get("model_path"), str):
            values_["model"] = server["model_path"]
        launch = {column: server[key] for key, column in SERVER_INFO_KEYS.items()
                  if server.get(key) is not None}
        if launch:
            extra["launch"] = launch
    # Length arguments of another dataset than the run's say nothing about it.
    relevant = set(workload_keys(values_.get("dataset_name")))
    for key in workload_keys(None):
        if key in values_ and key not in relevant:
            extra[key] = values_.pop(key)
    rates = values_.get("spec_decode_per_position_acceptance_rates")
    if isinstance(rates, list):    # saved as fractions, printed as percentages
        values_["spec_decode_per_position_acceptance_rates"] = [r * 100 for r in rates]
    summary = {k: v for k, v in record.items() if k not in REQUEST_ARRAYS and k not in DROPPED}
    raw = json.dumps(summary, default=str)[:RAW_LIMIT]
    label = record.get("label") or record.get("tag")
    for _ in range(3):
        try:
            row = ServingRun(
                **values_, extra=extra or None, tags=tags or None, format=fmt,
                label=label if isinstance(label, str) else None,
                engine=infer_engine(context, values_.get("model"), None, values_.get("backend")),
                line_start=line, line_end=line, raw_text=raw)
            break
        except ValidationError as exc:
            # A value its column cannot hold (a number garbled into text): null, with a
            # warning; the run keeps the rest.  Anything else fails the record as before.
            bad = {str(e["loc"][0]) for e in exc.errors() if e.get("loc")}
            if not bad or not bad <= values_.keys():
                raise
            unread += [f"{k}: {values_.pop(k)!r} is not a value of its column, stored as null"
                       for k in sorted(bad)]
    else:
        raise ValueError("a result whose values its columns cannot hold")
    requests, problems = _requests(record, unreadable)  # last: it lets go of the arrays
    return Parsed(row=row, children=[*stats, *requests]), unread + problems


# A file this big that is not valid JSON is not read again tolerantly (that reads it whole).
MAX_TOLERANT = 64 << 20


def _tolerant_records(text: str) -> Iterator[tuple[Any, int, list[str], int]]:
    """(value, line, bare words quoted, line of the first) of every top-level value of a file
    that is not valid JSON: a bare word where a value belongs (a number garbled in the paste,
    `1!.5`) is read as text.  Raises ValueError where that does not make it JSON."""
    decoder = json.JSONDecoder()
    pos, line = 0, 1
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            line += text[pos] == "\n"
            pos += 1
        if pos >= len(text):
            return
        try:
            value, end = decoder.raw_decode(text, pos)
            bad, at = [], line
        except json.JSONDecodeError as exc:
            mended = tolerant_decode(decoder, text, pos, exc)
            if mended is None:
                raise
            value, end, bad = mended
            at = line + text.count("\n", pos, exc.pos)
        yield value, line, bad, at
        line += text.count("\n", pos, end)
        pos = end


def _record(record: Any, line: int, context: Context, unreadable: frozenset[str] = frozenset()
            ) -> Iterator[Parsed | Problem]:
    if not isinstance(record, dict):
        yield Problem(line, "a result is not a JSON object")
        return
    kind = "sglang" if "total_output_tokens_retokenized" in record or \
        any(k.endswith("_e2e_latency_ms") for k in record) else "vllm"
    try:
        parsed, problems = record_to_parsed(record, context, f"{kind}_result_json", line,
                                            unreadable)
    except (ValidationError, ValueError, TypeError) as exc:
        yield Problem(line, f"cannot read result: {str(exc).splitlines()[0]}",
                      json.dumps(record, default=str)[:4000])
        return
    yield from (Problem(line, p) for p in problems)
    yield parsed


def read(path: Path, context: Context) -> Iterator[Parsed | Problem]:
    with open(path, "rb") as fh:
        encoding = sniff_encoding(fh.read(4096))[0]
    encoding = "utf-8-sig" if encoding == "utf-8" else encoding
    line = 1
    done = 0
    with open_text(path, encoding) as fh:
        try:
            for record, line in records(fh, arrays=frozenset(REQUEST_ARRAYS),
                                        dropped=frozenset(DROPPED)):
                yield from _record(record, line, context)
                done += 1
            return
        except ValueError as exc:
            error = exc
    # Not valid JSON: read again with each bare word that broke it as text (its column cannot
    # hold it: null, with a warning), the records already read skipped.
    if path.stat().st_size <= MAX_TOLERANT:
        with open_text(path, encoding) as fh:
            text = fh.read()
        try:
            found = list(_tolerant_records(text))
        except ValueError:
            found = None
        if found is not None:
            for value, start, bad, at in found[done:]:
                if bad:
                    yield Problem(at, f"not valid JSON at {', '.join(bad)}: read as text, "
                                      "or a line left out")
                if isinstance(value, dict):
                    for key in DROPPED:
                        value.pop(key, None)
                yield from _record(value, start, context, frozenset(bad))
            return
    yield Problem(line, f"not valid JSON: {error}")


FORMAT = FileFormat(
    name="serving_result_json",
    table="serving_runs",
    description="vLLM --save-result JSON and SGLang bench_serving --output-file JSONL result "
                "files, recognised by content (per-request arrays → serving_requests).",
    upstream=("vllm benchmark_serving.py / vllm bench serve --save-result [--save-detailed] "
              "[--append-result] [--metadata]", "sglang bench_serving --output-file"),
    sniff=sniff,
    read=read,
    json_keys=THROUGHPUT_KEYS,
    note_context=serving_context,
)
