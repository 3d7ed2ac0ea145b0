"""Per-request rows that a serving benchmark's saved result file carries.

vLLM ``--save-result --save-detailed`` and SGLang ``--output-details`` keep one entry per
request in parallel arrays (``input_lens``, ``output_lens``, ``ttfts``, ``itls``, ``errors``);
GuideLLM keeps a (sampled) list of request objects.  Each request becomes one row here,
pointing at its run in ``serving_runs``.
"""

from __future__ import annotations

from pydantic import Field

from .models import Row, col


class ServingRequest(Row):
    __table__ = "serving_requests"
    __description__ = ("One row per request of a serving run, from a result file that kept "
                       "per-request data (vLLM --save-detailed, SGLang --output-details, "
                       "GuideLLM).")
    __foreign_keys__ = (("run_id", "serving_runs", "id"), ("source_id", "sources", "id"))

    id: int | None = None
    run_id: int | None = col("Serving run (serving_runs.id).")
    source_id: int | None = col("File the request was read from (sources.id): a run seen in "
                                "several files keeps each file's requests.")
    request_index: int = Field(description="Position of the request in the file's arrays "
                                           "(0-based).")
    status: str | None = col("successful, errored or incomplete (GuideLLM); else "
                             "successful / errored from the error text.", facet=True)
    input_len: int | None = col("Prompt tokens.", "tokens")
    output_len: int | None = col("Generated tokens.", "tokens")
    ttft_ms: float | None = col("Time to first token.", "ms")
    latency_ms: float | None = col("End-to-end request latency.", "ms")
    start_time_s: float | None = col("Request start (the client's clock).", "s")
    queue_time_ms: float | None = col("Time the request waited in the client's queue.", "ms")
    itl_count: int | None = col("Inter-token latencies recorded for the request.", "tokens")
    mean_itl_ms: float | None = col("Mean of the request's inter-token latencies.", "ms")
    itls_ms: list[float] | None = col("Every inter-token latency of the request, in order.")
    error: str | None = col("Error text of a failed request.")
