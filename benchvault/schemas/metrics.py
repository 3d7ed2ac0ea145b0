"""Prometheus text snapshots of a server's ``/metrics`` (vLLM, SGLang): samples per scrape.

A scrape is one contiguous run of ``# HELP`` / ``# TYPE`` / sample lines.  Consecutive scrapes of
one file give rates: the ``metrics_rates`` view pairs each counter sample with the same series
in the previous scrape.
"""

from __future__ import annotations

from pydantic import Field

from .models import Row, col


class MetricsScrape(Row):
    __table__ = "metrics_scrapes"
    __description__ = "One row per /metrics scrape found in a file."
    __foreign_keys__ = (("source_id", "sources", "id"),)

    id: int | None = None
    source_id: int | None = col("Source file (sources.id).")
    line_start: int | None = col("First line of the scrape in the source file.")
    line_end: int | None = col("Last line of the scrape.")
    section: str | None = col("Markdown heading path the scrape sits under.", facet=True)
    label: str | None = col("Nearest `# comment` or heading before the scrape.", facet=True)
    tags: dict[str, str] | None = col("`--tag key=value` pairs given at ingest.")
    timestamp_ms: int | None = col("Latest sample timestamp in the scrape (ms since the "
                                   "epoch), when samples carry one.", "ms")
    samples: int | None = col("Samples in the scrape.", "samples")
    families: int | None = col("Metric families (# TYPE lines) in the scrape.", "families")


class MetricsSample(Row):
    __table__ = "metrics_samples"
    __description__ = "Every sample of every /metrics scrape: metric, labels, value."
    __foreign_keys__ = (("scrape_id", "metrics_scrapes", "id"),)

    id: int | None = None
    scrape_id: int | None = col("The scrape (metrics_scrapes.id).")
    metric: str = Field(description="Sample name as exposed (`vllm:prompt_tokens_total`, "
                                    "`..._bucket`).", json_schema_extra={"facet": True})
    family: str | None = col("Metric family the sample belongs to (`# TYPE` name).", facet=True)
    type: str | None = col("counter, gauge, histogram, summary or untyped.", facet=True)
    labels: dict[str, str] | None = col("Label names and values.")
    le: str | None = col("Histogram bucket upper bound (`le` label).")
    value: float = Field(description="Sample value.")
    timestamp_ms: int | None = col("Sample timestamp (ms since the epoch), when given.", "ms")


# -- the rates view: each counter sample minus the same series in the previous scrape ----------
RATES_SQL = """WITH s AS (
  SELECT sc.source_id, sc.id AS scrape_id, m.id AS sample_id,
         DENSE_RANK() OVER (PARTITION BY sc.source_id ORDER BY sc.line_start) - 1 AS scrape_index,
         COALESCE(m.timestamp_ms, sc.timestamp_ms) AS timestamp_ms,
         m.metric, m.family, m.type, m.labels, m.value
  FROM metrics_samples m JOIN metrics_scrapes sc ON sc.id = m.scrape_id
), paired AS (
  SELECT s.*, LAG(value) OVER w AS previous_value,
         LAG(timestamp_ms) OVER w AS previous_timestamp_ms,
         LAG(scrape_index) OVER w AS previous_scrape_index
  FROM s WINDOW w AS (PARTITION BY source_id, metric, labels ORDER BY scrape_index)
)
SELECT source_id, scrape_id, sample_id, scrape_index, previous_scrape_index, metric, family, labels,
  previous_value, value, value - previous_value AS delta,
  (timestamp_ms - previous_timestamp_ms) / 1000.0 AS seconds,
  CASE WHEN timestamp_ms > previous_timestamp_ms
       THEN (value - previous_value) * 1000.0 / (timestamp_ms - previous_timestamp_ms) END
    AS rate_per_s
FROM paired
WHERE previous_value IS NOT NULL AND type IN ('counter', 'histogram', 'summary')
ORDER BY source_id, scrape_index, sample_id"""


def _register_rates_view() -> None:
    """Add ``metrics_rates`` to the warehouse's views (views.VIEWS is read when views are made)."""
    from . import views

    if any(v.name == "metrics_rates" for v in views.VIEWS):
        return
    doc = views.ColumnDoc
    columns = {
        "source_id": doc("Source file (sources.id)."),
        "scrape_id": doc("The later scrape (metrics_scrapes.id)."),
        "sample_id": doc("The later sample (metrics_samples.id)."),
        "scrape_index": doc("Order of the later scrape in its file, 0-based."),
        "previous_scrape_index": doc("Order of the scrape the value is compared with."),
        "metric": doc("Sample name (`vllm:generation_tokens_total`, `..._bucket`)."),
        "family": doc("Metric family (`# TYPE` name)."),
        "labels": doc("Label names and values (JSON)."),
        "previous_value": doc("Value in the previous scrape."),
        "value": doc("Value in this scrape."),
        "delta": doc("value - previous_value (a counter's increase; negative after a restart)."),
        "seconds": doc("Time between the two samples, when both carry a timestamp.", "s"),
        "rate_per_s": doc("delta per second, when timestamps are known.", "1/s"),
    }
    views.VIEWS = (*views.VIEWS, views.View(
        "metrics_rates", "Counters (and histogram buckets, sums and counts) of consecutive "
        "/metrics scrapes in one file: increase and, with timestamps, rate per second.",
        ("metrics_samples", "metrics_scrapes"), lambda: RATES_SQL, lambda: columns))


_register_rates_view()
