"""GuideLLM benchmark reports (``guidellm benchmark ... --output-path benchmarks.json``) → rows.

Upstream writer: ``GenerativeBenchmarksReport.save_file`` (guidellm ≥ 0.2, neuralmagic and
vllm-project): ``{"benchmarks": [GenerativeBenchmark, ...]}``, newer versions with ``metadata``
and ``args`` beside it.  Each benchmark (one strategy of a sweep) is one ``serving_runs`` row.
Its metrics are distributions per request status::

    "metrics": {"requests_per_second": {"successful": {"mean": 4.2, ...}, "errored": ...},
                "time_to_first_token_ms": {"successful": {"mean": 31.5, "median": 30.9,
                    "std_dev": 2.1, "min": 27.0, "max": 40.2,
                    "percentiles": {"p001": ..., "p50": ..., "p99": ..., "p999": ...}}}, ...}

The successful requests' summaries fill the columns named after vLLM's keys (mean → column,
total_sum → token totals); every statistic is a ``latency_stats`` row (``request_latency`` is in
seconds and becomes ``e2el`` in ms).  GuideLLM's TPOT counts the first token too, unlike
vLLM's.  The strategy gives ``max_concurrency`` (synchronous = 1, concurrent = streams,
throughput its ``max_concurrency`` cap) or ``request_rate`` (constant, poisson).  The report is
read one benchmark at a time; sampled requests (``requests.successful/errored/incomplete``)
become ``serving_requests``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

from pydantic import ValidationError

from ..schemas.models import LatencyStat, ServingRun
from ..schemas.result_files import ServingRequest
from .grammar import finite
from .base import Context, FileFormat, Parsed, Problem
from ..reading.jsonstream import members
from ..reading.lines import sniff_encoding
from ..reading.progress import open_text
from .runcontext import infer_engine, serving_context

RAW_LIMIT = 20_000
# metric → (column, statistic of the successful requests' summary)
COLUMNS = {
    "requests_per_second": ("request_throughput", "mean"),
    "output_tokens_per_second": ("output_throughput", "mean"),
    "tokens_per_second": ("total_token_throughput", "mean"),
    "prompt_tokens_per_second": ("input_throughput", "mean"),
    "request_concurrency": ("concurrency", "mean"),
    "prompt_token_count": ("total_input_tokens", "total_sum"),
    "output_token_count": ("total_output_tokens", "total_sum"),
}
# metric → (latency_stats metric, factor to ms)
LATENCIES = {
    "time_to_first_token_ms": ("ttft", 1.0),
    "time_per_output_token_ms": ("tpot", 1.0),
    "inter_token_latency_ms": ("itl", 1.0),
    "request_latency": ("e2el", 1000.0),
}
STATS = {"mean": "mean", "median": "median", "std_dev": "std", "min": "min", "max": "max"}
PERCENTILES = {"p001": 0.1, "p01": 1.0, "p05": 5.0, "p10": 10.0, "p25": 25.0, "p50": 50.0,
               "p75": 75.0, "p90": 90.0, "p95": 95.0, "p99": 99.0, "p999": 99.9}
# Where a version keeps what (first path found wins).
PATHS = {
    "strategy": (("args", "strategy"), ("config", "strategy")),
    "totals": (("metrics", "request_totals"), ("request_totals",), ("total_count",)),
    "model": (("worker", "backend_model"), ("config", "backend", "model"),
              ("request_loader", "processor")),
    "backend": (("worker", "backend_type"), ("config", "backend", "type_")),
    "target": (("worker", "backend_target"), ("config", "backend", "target")),
}


def sniff(head: bytes, path: str) -> bool:
    encoding, binary = sniff_encoding(head)
    if binary:
        return False
    text = head.decode(encoding, errors="ignore").lstrip("\ufeff \t\r\n")
    return text.startswith("{") and '"benchmarks"' in text and (
        "generative_benchmark" in text or "guidellm" in text.lower())


def dig(obj: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def first(obj: Any, what: str) -> Any:
    return next((v for p in PATHS[what] if (v := dig(obj, *p)) is not None), None)


def _word(p: float) -> str:
    return "p" + (str(int(p)) if p == int(p) else str(p))


def _summary(metrics: dict, name: str) -> dict:
    summary = dig(metrics, name, "successful")
    return summary if isinstance(summary, dict) else {}


def bench_to_parsed(bench: dict, report: dict, context: Context, line: int) -> Parsed:
    metrics = bench.get("metrics") or {}
    values: dict[str, Any] = {}
    for name, (column, stat) in COLUMNS.items():
        summary = _summary(metrics, name)
        value = summary.get(stat, summary.get("sum") if stat == "total_sum" else None)
        if isinstance(value, (int, float)) and not finite(value):
            continue                    # a number out of range is no value
        if value is not None:
            values[column] = int(round(value)) if column.startswith("total_") and \
                column.endswith("_tokens") else value
    stats = []
    for name, (metric, factor) in LATENCIES.items():
        summary = _summary(metrics, name)
        found = [(STATS[k], None, summary[k]) for k in STATS if summary.get(k) is not None]
        for key, pct in PERCENTILES.items():
            value = dig(summary, "percentiles", key)
            if value is not None:
                found.append((_word(pct), pct, value))
        for stat, pct, value in found:
            if not isinstance(value, (int, float)) or not finite(value):
                continue                # a number out of range is no statistic
            stats.append(LatencyStat(metric=metric, stat=stat, percentile=pct,
                                     value_ms=value * factor))
            if f"{stat}_{metric}_ms" in ServingRun.model_fields:
                values[f"{stat}_{metric}_ms"] = value * factor
    totals = first(bench, "totals") or {}
    values["completed"] = totals.get("successful")
    values["failed"] = totals.get("errored")
    values["incomplete"] = totals.get("incomplete")
    duration = bench.get("duration")
    if duration is None and bench.get("end_time") is not None:
        duration = bench["end_time"] - bench["start_time"]
    if duration is None:
        timing = bench.get("scheduler_metrics") or {}
        if timing.get("measure_end_time") is not None:
            duration = timing["measure_end_time"] - timing["measure_start_time"]
    values["duration"] = duration
    strategy = first(bench, "strategy") or {}
    kind = strategy.get("type_")
    if kind == "synchronous":
        values["max_concurrency"] = 1
    elif strategy.get("streams") is not None:
        values["max_concurrency"] = strategy["streams"]
    elif kind == "throughput" and isinstance(strategy.get("max_concurrency"), int):
        values["max_concurrency"] = strategy["max_concurrency"]     # throughput@64
    if strategy.get("rate") is not None:
        values["request_rate"] = strategy["rate"]
    model = first(bench, "model") or dig(report, "args", "model")
    backend = first(bench, "backend") or dig(report, "args", "backend")
    target = first(bench, "target")         # (the server's URL: the client's base_url)
    extra = {k: v for k, v in (("strategy", kind),
                               ("run_id", bench.get("run_id")), ("id", bench.get("id_")),
                               ("guidellm_version", dig(report, "metadata", "guidellm_version")))
             if v is not None}
    row = ServingRun(
        **{k: v for k, v in values.items() if v is not None},
        model=model if isinstance(model, str) else None,
        backend=backend if isinstance(backend, str) else None,
        base_url=target if isinstance(target, str) else None,
        extra=extra or None, tags=context.tags or None, format=FORMAT.name,
        label=f"{kind}" + (f"@{strategy.get('streams') or strategy.get('rate')}"
                           if strategy.get("streams") or strategy.get("rate") else "")
        if kind else None,
        engine=infer_engine(context, model if isinstance(model, str) else None, None, None),
        line_start=line, line_end=line,
        raw_text=json.dumps({k: v for k, v in bench.items() if k != "requests"},
                            default=str)[:RAW_LIMIT])
    return Parsed(row=row, children=[*stats, *_requests(bench.get("requests"))])


def _requests(requests: Any) -> list[ServingRequest]:
    out: list[ServingRequest] = []
    if not isinstance(requests, dict):
        return out
    for status in ("successful", "errored", "incomplete"):
        for item in requests.get(status) or []:
            if not isinstance(item, dict):
                continue
            latency = item.get("request_latency")
            out.append(ServingRequest(
                request_index=len(out), status=status,
                input_len=item.get("prompt_tokens"), output_len=item.get("output_tokens"),
                ttft_ms=item.get("time_to_first_token_ms"),
                latency_ms=latency * 1000 if isinstance(latency, (int, float)) else None,
                start_time_s=item.get("start_time"),
                mean_itl_ms=item.get("inter_token_latency_ms"),
                error=item.get("error")))
    return out


def read(path: Path, context: Context) -> Iterator[Parsed | Problem]:
    with open(path, "rb") as fh:
        encoding = sniff_encoding(fh.read(4096))[0]
    encoding = "utf-8-sig" if encoding == "utf-8" else encoding
    report: dict[str, Any] = {}
    line = 1
    with open_text(path, encoding) as fh:
        try:
            for key, value, line in members(fh, into="benchmarks"):
                if key != "benchmarks":
                    report[key] = value        # metadata, args: small, and written first
                    continue
                if not isinstance(value, dict):
                    yield Problem(line, "a benchmark is not a JSON object")
                    continue
                try:
                    yield bench_to_parsed(value, report, context, line)
                except (ValidationError, ValueError, TypeError, KeyError) as exc:
                    yield Problem(line, f"cannot read benchmark: {str(exc).splitlines()[0]}")
        except ValueError as exc:
            yield Problem(line, f"not valid JSON: {exc}")


FORMAT = FileFormat(
    name="guidellm_report",
    table="serving_runs",
    description="GuideLLM benchmark report JSON (benchmarks.json), one serving run per "
                "benchmark of the sweep, recognised by content.",
    upstream=("guidellm >= 0.2 GenerativeBenchmarksReport (neuralmagic/guidellm, "
              "vllm-project/guidellm)",),
    sniff=sniff,
    read=read,
    json_keys=('"benchmarks"',),
    note_context=serving_context,
)
