"""What the warehouse knows about its rows: where each was seen, what defines it, what compares.

- ``sightings``: every place a serving run, llama-bench row, server launch or spec-decode line
  was read (file, lines, format, raw text).  The same run pasted into two notes, or printed
  and saved as ``--save-result`` JSON, is one row of its table with two sightings.
- ``configurations``: what defines a serving run (engine, model, launch settings, workload,
  load, tags).  Runs of one configuration are repeats; the configuration keeps their count,
  mean, standard deviation, min and max of the key metrics.
- ``experiment_groups``: configurations that can be compared (same model family and workload
  on the same hardware, as far as the warehouse knows); reports write one table per group.

Rules (which sightings are one run, what a configuration is) live in ``benchvault.experiments``.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, create_model

from .models import Row, col

# Metrics a configuration summarises over its repeats (vLLM save-result names).
CONFIG_METRICS = ("output_throughput", "request_throughput", "total_token_throughput",
                  "duration", "mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms", "mean_tpot_ms",
                  "median_tpot_ms", "p99_tpot_ms", "mean_itl_ms", "p99_itl_ms", "mean_e2el_ms")
STATS = ("std", "min", "max")


class Sighting(Row):
    __table__ = "sightings"
    __description__ = ("Every place a row was seen: a serving run, llama-bench row, server launch "
                       "or spec-decode line read from a file.  Rows seen more than once (a "
                       "printed block and its --save-result JSON, one note pasted twice) are "
                       "one row with several sightings.")
    __foreign_keys__ = (("source_id", "sources", "id"), ("run_id", "serving_runs", "id"),
                        ("llama_bench_id", "llama_bench_results", "id"),
                        ("launch_id", "server_launches", "id"),
                        ("spec_decode_id", "spec_decode_metrics", "id"),
                        ("offline_id", "offline_runs", "id"))

    id: int | None = None
    kind: str = Field(description="Table of the row seen: serving_runs, llama_bench_results, "
                                  "server_launches, spec_decode_metrics or offline_runs.",
                      json_schema_extra={"facet": True})
    run_id: int | None = col("The serving run seen (serving_runs.id).")
    llama_bench_id: int | None = col("The llama-bench row seen (llama_bench_results.id).")
    launch_id: int | None = col("The server launch seen (server_launches.id).")
    spec_decode_id: int | None = col("The spec-decode line seen (spec_decode_metrics.id).")
    offline_id: int | None = col("The offline benchmark case seen (offline_runs.id).")
    source_id: int | None = col("File of this sighting (sources.id).")
    line_start: int | None = col("First line of the sighting in its file (1-based).")
    line_end: int | None = col("Last line of the sighting in its file.")
    format: str | None = col("Parser that read it.", facet=True)
    raw_text: str | None = col("The text as it stood in the file.")
    is_primary: bool | None = col("This sighting gave the row its values' precision and its "
                               "provenance columns (the most precise one; the first on a tie).")
    content_hash: str | None = col("Hash of everything this sighting said (values, context, "
                                   "printed precision): equal for the same text pasted twice.")
    fingerprint: str | None = col("Hash of the values that make a launch or a spec-decode line "
                                  "what it is (where it sat left out): equal means one row.")
    record: dict[str, Any] | None = col(
        "What this sighting said (every column but provenance), kept once the row has been "
        "seen saying different things; one sighting per distinct content keeps it, the others "
        "(null) said the same.")
    tolerance: dict[str, float] | None = col(
        "Half a unit of the last digit this sighting printed, per column (`225.80` → 0.005): "
        "two sightings agree when their values differ by no more.  Absent: an exact value.")
    children: list[Any] | None = col("Latency statistics this sighting printed (metric, stat, "
                                     "percentile, value_ms), or an offline case's step lines "
                                     "(phase, kind, step, batch_size, latency_s, throughput), "
                                     "kept with its record.")
    near_tolerance: float | None = col(
        "The tolerance of the value a run or llama-bench row is looked up by (duration, avg_ts): "
        "0 for an exact value.  The widest one stored bounds the look-up of a new sighting.")
    logged_before: str | None = col(
        "A serving run's: the last log timestamp its file printed before this block, after the "
        "previous one (`vllm bench serve` logs `INFO 11-23 10:07:02 ...`; `MM-DD HH:MM:SS` "
        "when no year was printed): in a client's own capture, about when the run began; in "
        "its server's log, about when it ended (serving_runs.window_start).")


class ExperimentGroup(Row):
    __table__ = "experiment_groups"
    __description__ = ("Configurations that can be compared: the same model family and workload "
                       "on the same hardware, as far as the warehouse knows.  Reports write one "
                       "table and one chart per group.")

    id: int | None = None
    key: str = Field(description="What the group's configurations share, as JSON (unique).")
    title: str | None = col("Short name of the group (model · hardware · workload).",
                            facet=True)
    model_family: str | None = col("Model without organisation, quantization or chat/instruct "
                                   "suffix (`llama-2-7b`).", facet=True)
    hardware: str | None = col("Accelerator from a `gpu=` tag, the headings or the file name.",
                               facet=True)
    dataset_name: str | None = col("Dataset of the group's runs.", facet=True)
    input_len: int | None = col("Prompt length of the workload, when the dataset sets one.",
                                "tokens")
    output_len: int | None = col("Output length of the workload, when the dataset sets one.",
                                 "tokens")
    engines: str | None = col("Engines measured in the group, comma-separated.", facet=True)
    configurations: int | None = col("Configurations in the group.", "configurations")
    runs: int | None = col("Runs in the group (repeats counted).", "runs")


def _metric_fields() -> dict[str, Any]:
    from .models import ServingRun

    fields: dict[str, Any] = {}
    for metric in CONFIG_METRICS:
        source = ServingRun.model_fields[metric]
        extra = source.json_schema_extra if isinstance(source.json_schema_extra, dict) else {}
        unit, label = extra.get("unit"), extra.get("label")
        fields[metric] = (float | None, col(f"Mean over the configuration's runs: "
                                            f"{source.description}", unit,
                                            better=extra.get("better"), label=label))
        for stat in STATS:
            word = {"std": "Sample standard deviation (n-1)", "min": "Lowest",
                    "max": "Highest"}[stat]
            fields[f"{metric}_{stat}"] = (float | None, col(
                f"{word} over the configuration's runs of {metric}.", unit))
    return fields


class ConfigurationBase(Row):
    """What defines a serving run; runs that share all of it are repeats."""

    id: int | None = None
    key: str = Field(description="The configuration's fields as JSON (unique).")
    title: str | None = col("Short name: engine · model · parallelism · quantization · load.")
    series: str | None = col("The short name without the load: one line of a sweep chart.",
                             facet=True)
    group_id: int | None = col("Comparable group (experiment_groups.id).", facet=True)
    engine: str | None = col("Serving engine measured.", facet=True, label="Engine")
    hardware: str | None = col("Accelerator (`gpu=` tag, headings, file name).", facet=True,
                               label="Hardware")
    model: str | None = col("Model the client asked for.", facet=True, label="Model")
    model_family: str | None = col("Model without organisation, quantization or chat suffix.",
                                   facet=True)
    tensor_parallel_size: int | None = col("Tensor-parallel size (launch, else `tp16` in the "
                                           "label or heading).", "GPUs", facet=True, label="TP")
    pipeline_parallel_size: int | None = col("Pipeline-parallel size.", "GPUs", facet=True,
                                             label="PP")
    data_parallel_size: int | None = col("Data-parallel size of the launch.", "replicas",
                                         label="DP")
    replicas: int | None = col("Independent server copies the result stands for (`--tag "
                               "replicas=N`, `tp2 x 4`).", "replicas", label="Replicas")
    quantization: str | None = col("Quantization (launch `--quantization`, else the model "
                                   "name: GPTQ, AWQ, w8a8, FP8, Q4_K_M, F16...).", facet=True,
                                   label="Quant")
    dtype: str | None = col("Weights dtype of the launch.", facet=True, label="dtype")
    kv_cache_dtype: str | None = col("KV-cache dtype of the launch.", label="KV dtype")
    max_model_len: int | None = col("Longest sequence the server accepted.", "tokens",
                                    label="Max len")
    speculative_model: str | None = col("Draft model or method of speculative decoding.",
                                        facet=True, label="Draft")
    num_speculative_tokens: int | None = col("Speculative tokens per step (what the engine "
                                             "reported, else the launch).", "tokens",
                                             label="Spec tokens")
    dataset_name: str | None = col("Dataset.", facet=True, label="Dataset")
    input_len: int | None = col("Prompt length the dataset was set to.", "tokens",
                                label="Input len")
    output_len: int | None = col("Output length the dataset was set to.", "tokens",
                                 label="Output len")
    num_prompts: int | None = col("Requests per run.", "requests", label="Prompts")
    request_rate: float | None = col("Request rate; inf means all at once.", "req/s",
                                     label="Rate")
    max_concurrency: int | None = col("Maximum request concurrency.", "requests", facet=True,
                                      label="Concurrency")
    tags: dict[str, str] | None = col("`--tag` pairs of the runs.")
    n: int | None = col("Runs of this configuration (repeats); empty while an ingest has yet "
                        "to count them.", "runs", label="n")
    first_run_id: int | None = col("Its first run (serving_runs.id) in reading order: by file "
                                   "path, then line.")
    last_run_id: int | None = col("Its last run (serving_runs.id) in reading order.")


Configuration = create_model("Configuration", __base__=ConfigurationBase,
                             __module__=__name__, **_metric_fields())
Configuration.__doc__ = "A serving configuration with the statistics of its repeats."
Configuration.__table__ = "configurations"
Configuration.__description__ = (
    "What defines a serving run (engine, model, launch settings, workload, load, tags); runs "
    "of one configuration are repeats.  Metric columns hold the mean over the runs, with "
    "_std (n-1), _min and _max beside them.")
Configuration.__foreign_keys__ = (("group_id", "experiment_groups", "id"),)
