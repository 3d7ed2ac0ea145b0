"""The warehouse's rows as pydantic models: the one place that names, types and documents a field.

SQLite columns (``schemas.store``), Datasette descriptions and units, and report headers are all
derived from these classes.  Metric names follow vLLM's ``--save-result`` JSON keys.
"""

from __future__ import annotations

import functools
import math
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, create_model


def col(description: str, unit: str | None = None, *, facet: bool = False,
        better: str | None = None, label: str | None = None) -> Any:
    """A nullable column with its documentation.

    ``better`` is "higher" or "lower" for metrics whose best value a report can mark;
    ``label`` is the short header a report shows.
    """
    extra = {k: v for k, v in (("unit", unit), ("facet", facet or None), ("better", better),
                                ("label", label)) if v is not None}
    return Field(default=None, description=description, json_schema_extra=extra or None)


def json_safe(value: Any) -> Any:
    """A JSON column's value without inf/nan (not JSON): stored as the strings Python prints."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    # Scalars are answered inline (`v - v == 0`: finite): a row holds ~100, hashed per sighting.
    if isinstance(value, dict):
        return {k: v if v.__class__ in _PLAIN or v.__class__ is float and v - v == 0
                else json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [v if v.__class__ in _PLAIN or v.__class__ is float and v - v == 0
                else json_safe(v) for v in value]
    return value


_PLAIN = frozenset({str, int, bool, type(None)})


@functools.cache
def fields_of(model: type[BaseModel]) -> dict[str, Any]:
    """``model.model_fields``, looked up once: pydantic answers it through a descriptor that
    costs microseconds per call, and ingest asks for every row."""
    return dict(model.model_fields)


class Row(BaseModel):
    """A warehouse row; ``__table__`` names its table."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, defer_build=True)
    __table__: ClassVar[str]
    __description__: ClassVar[str]
    __foreign_keys__: ClassVar[tuple[tuple[str, str, str], ...]] = ()
    # The facets Datasette opens the table with (empty: every column marked facet=True);
    # the others stay one click away.
    __facets__: ClassVar[tuple[str, ...]] = ()
    # The columns a reader compares first: the table stores them first, after its id (what
    # the row is and how it was run, then its key results); where it was read comes last
    # (schemas.tables.stored_order).
    __leading__: ClassVar[tuple[str, ...]] = ()


class Provenance(Row):
    """Where a row came from: which file, which lines, and the text itself."""

    source_id: int | None = col("Source file this row was read from (sources.id).")
    line_start: int | None = col("First line of the block in the source file (1-based).")
    line_end: int | None = col("Last line of the block in the source file.")
    raw_text: str | None = col("The block exactly as it stood in the file, after mojibake repair.")
    section: str | None = col("Markdown heading path the block sits under, outermost first.",
                              facet=True)
    label: str | None = col("Nearest `# c=16`-style comment before the block, else its heading.",
                            facet=True)
    tags: dict[str, str] | None = col("`--tag key=value` pairs given when the source was ingested.")


class Source(Row):
    __table__ = "sources"
    __description__ = "Every file ingested: path, content hash and when."

    id: int | None = None
    path: str = Field(description="Absolute path of the file when it was ingested.")
    name: str = Field(description="File name without its directory.")
    sha256: str = Field(description="SHA-256 of the file's bytes; an unchanged file is skipped.")
    size: int = Field(description="File size.", json_schema_extra={"unit": "bytes"})
    mtime_ns: int | None = col("The file's modification time when it was read (ns since the "
                               "epoch); with its size, says it is unchanged without hashing it.",
                               "ns")
    encoding: str | None = col("Text encoding the file was read with.")
    ingested_at: str = Field(description="UTC time of the ingest (ISO 8601).")
    parser_version: str = Field(description="benchvault version that parsed the file.")
    tags: dict[str, str] | None = col("`--tag key=value` pairs given on the command line.")
    runs: int | None = col("Serving runs found in the file.", "runs")
    warnings: int | None = col("Warnings raised while reading the file.", "warnings")


# The key of ``extra`` that marks a row read from a block cut short: it holds what the block
# printed, the rest of its values unknown.
INCOMPLETE = "incomplete"

LATENCY_METRICS = ("ttft", "tpot", "itl", "e2el")
LATENCY_NAMES = {
    "ttft": "time to first token",
    "tpot": "time per output token, excluding the first",
    "itl": "inter-token latency",
    "e2el": "end-to-end request latency",
}
LATENCY_COLUMN_STATS = ("mean", "median", "std", "p25", "p50", "p75", "p90", "p95", "p99", "max")


def _latency_fields() -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for metric in LATENCY_METRICS:
        for stat in LATENCY_COLUMN_STATS:
            word = {"mean": "Mean", "median": "Median", "std": "Standard deviation of",
                    "max": "Maximum"}.get(
                stat, f"{stat[1:]}th percentile of")
            label = f"{stat.capitalize() if not stat.startswith('p') else stat.upper()} {metric.upper()} (ms)"
            fields[f"{stat}_{metric}_ms"] = (
                float | None,
                col(f"{word} {LATENCY_NAMES[metric]}.", "ms",
                    better=None if stat == "std" else "lower", label=label),
            )
    return fields


class ServingRunBase(Provenance):
    """Columns of one serving benchmark result block, before the latency columns."""

    id: int | None = None
    format: str | None = col("Parser that read the block (vllm_serving, ...).", facet=True)
    engine: str | None = col("Serving engine measured: vllm, sglang, llama.cpp, another a "
                             "client names (tensorrt-llm, lmdeploy, tgi, ...) or unknown.",
                             facet=True)
    launch_id: int | None = col("Server launch this run ran against (server_launches.id).")
    # run context
    backend: str | None = col("Benchmark client backend (`--backend`).", facet=True)
    endpoint: str | None = col("API endpoint the client called.", facet=True)
    base_url: str | None = col("Server base URL given to the client.")
    host: str | None = col("Server host given to the client.")
    port: int | None = col("Server port given to the client.")
    model: str | None = col("Model name or path the client asked for.", facet=True)
    tokenizer: str | None = col("Tokenizer the client used, when not the model's.")
    dataset_name: str | None = col("Dataset (`--dataset-name`).", facet=True)
    dataset_path: str | None = col("Dataset file (`--dataset-path`).")
    num_prompts: int | None = col("Requests the client was asked to send (`--num-prompts`).",
                                  "requests")
    request_rate: float | None = col("Configured request rate; inf means all at once.", "req/s")
    burstiness: float | None = col("Burstiness factor of request arrivals (1.0 = Poisson).")
    seed: int | None = col("Client random seed.")
    # the workload's lengths, as the client's own arguments name them (only those of the
    # run's dataset are kept: a Namespace lists every dataset's defaults)
    random_input_len: int | None = col("Prompt length of the random dataset "
                                       "(`--random-input-len`).", "tokens")
    random_output_len: int | None = col("Output length of the random dataset "
                                        "(`--random-output-len`).", "tokens")
    random_range_ratio: float | None = col("Spread of the random dataset's lengths around "
                                           "their value (`--random-range-ratio`).", "fraction")
    random_prefix_len: int | None = col("Shared prefix before each random prompt "
                                        "(`--random-prefix-len`).", "tokens")
    sharegpt_output_len: int | None = col("Output length forced on ShareGPT prompts "
                                          "(`--sharegpt-output-len`); null: the dataset's own.",
                                          "tokens")
    sonnet_input_len: int | None = col("Prompt length of the sonnet dataset "
                                       "(`--sonnet-input-len`).", "tokens")
    sonnet_output_len: int | None = col("Output length of the sonnet dataset "
                                        "(`--sonnet-output-len`).", "tokens")
    sonnet_prefix_len: int | None = col("Shared prefix of the sonnet dataset "
                                        "(`--sonnet-prefix-len`).", "tokens")
    hf_output_len: int | None = col("Output length forced on a Hugging Face dataset "
                                    "(`--hf-output-len`).", "tokens")
    custom_output_len: int | None = col("Output length of the custom dataset "
                                        "(`--custom-output-len`).", "tokens")
    prefix_repetition_prefix_len: int | None = col(
        "Shared prefix of the prefix_repetition dataset (`--prefix-repetition-prefix-len`).",
        "tokens")
    prefix_repetition_suffix_len: int | None = col(
        "Prompt after the shared prefix, prefix_repetition dataset "
        "(`--prefix-repetition-suffix-len`).", "tokens")
    prefix_repetition_num_prefixes: int | None = col(
        "Distinct prefixes of the prefix_repetition dataset "
        "(`--prefix-repetition-num-prefixes`).", "prefixes")
    prefix_repetition_output_len: int | None = col(
        "Output length of the prefix_repetition dataset (`--prefix-repetition-output-len`).",
        "tokens")
    spec_bench_output_len: int | None = col("Output length of the spec_bench dataset "
                                            "(`--spec-bench-output-len`).", "tokens")
    speed_bench_output_len: int | None = col("Output length of the speed_bench dataset "
                                             "(`--speed-bench-output-len`).", "tokens")
    ignore_eos: bool | None = col("Generation ran to the output length, past end-of-sequence "
                                  "(`--ignore-eos`).")
    command: str | None = col("Benchmark command line that produced the block, as pasted.")
    namespace: dict[str, Any] | None = col("All client arguments from the printed Namespace(...).")
    # metrics, named after vLLM's --save-result JSON keys
    completed: int | None = col("Successful requests.", "requests", label="Completed")
    failed: int | None = col("Failed requests (GuideLLM: errored).", "requests", better="lower",
                             label="Failed")
    incomplete: int | None = col("Requests cut off when the benchmark ended (GuideLLM).",
                                 "requests")
    start_time: str | None = col("When the benchmark started, as its output gives it (GuideLLM's "
                                 "console: the clock time, `HH:MM:SS`).")
    end_time: str | None = col("When the benchmark ended, as its output gives it.")
    max_concurrency: int | None = col("Maximum request concurrency.", "requests", facet=True,
                                      label="Concurrency")
    duration: float | None = col("Benchmark duration.", "s", better="lower", label="Duration (s)")
    total_input_tokens: int | None = col("Total input tokens.", "tokens", label="Input tokens")
    total_output_tokens: int | None = col("Total generated tokens.", "tokens",
                                          label="Output tokens")
    total_input_text_tokens: int | None = col("Input tokens of the prompts' text (SGLang).",
                                              "tokens")
    total_input_vision_tokens: int | None = col("Input tokens of the prompts' images "
                                                "(SGLang).", "tokens")
    total_output_tokens_retokenized: int | None = col(
        "Total generated tokens counted again by the client's tokenizer (SGLang).", "tokens")
    request_throughput: float | None = col("Completed requests per second.", "req/s",
                                           better="higher", label="Req/s")
    request_goodput: float | None = col("Requests per second that met the --goodput SLOs.",
                                        "req/s", better="higher", label="Goodput (req/s)")
    input_throughput: float | None = col("Input tokens per second.", "tok/s", better="higher",
                                         label="Input Tok/s")
    output_throughput: float | None = col("Generated tokens per second.", "tok/s",
                                          better="higher", label="Output Tok/s")
    total_token_throughput: float | None = col("Input plus generated tokens per second.", "tok/s",
                                               better="higher", label="Total Tok/s")
    max_output_tokens_per_s: float | None = col("Peak output token throughput.", "tok/s",
                                                better="higher", label="Peak Tok/s")
    max_concurrent_requests: int | None = col("Peak concurrent requests.", "requests")
    concurrency: float | None = col("Average requests in flight (SGLang).", "requests")
    accept_length: float | None = col("Speculative-decoding accept length (SGLang).", "tokens",
                                      better="higher")
    spec_decode_acceptance_rate: float | None = col(
        "Speculative decoding: drafted tokens accepted (vLLM >= 0.14 prints it).", "%",
        better="higher", label="Acceptance (%)")
    spec_decode_acceptance_length: float | None = col(
        "Speculative decoding: mean tokens emitted per draft step.", "tokens", better="higher")
    spec_decode_num_drafts: int | None = col("Speculative decoding: draft steps.", "drafts")
    spec_decode_draft_tokens: int | None = col("Speculative decoding: tokens drafted.", "tokens")
    spec_decode_accepted_tokens: int | None = col("Speculative decoding: tokens accepted.",
                                                  "tokens")
    spec_decode_per_position_acceptance_rates: list[float] | None = col(
        "Speculative decoding: acceptance rate (%) at each draft position, first first.")
    extra: dict[str, Any] | None = col("Printed `Label: value` lines no column knows, kept as-is.")
    # what the warehouse knows about the run (benchvault.experiments): set after it is stored
    sightings: int | None = col("Places the run was seen (printed, saved as JSON, pasted "
                                "again): see the sightings table.", "sightings")
    config_id: int | None = col("Its configuration (configurations.id): runs sharing one "
                                "are repeats.")
    group_id: int | None = col("Its comparable group (experiment_groups.id).", facet=True)
    launch_matched_on: str | None = col(
        "How launch_id was found when the launch was read in another file: what the client "
        "and the server both named (`port 8000, model x, time`); null when the launch is in "
        "the run's own file, or none was found.")
    engine_from_launch: bool | None = col(
        "The client did not say which engine it measured: `engine` is its launch's.")
    window_start: str | None = col(
        "Start of the run in its server's clock (the form its log prints: `MM-DD HH:MM:SS` "
        "without a year): the engine stats logged from here to window_end are the run's "
        "(view run_server_stats).")
    window_end: str | None = col(
        "End of the run's window: the first stats line its server logged after the run "
        "ended (within 10 s), else the end itself.")
    window_from: str | None = col(
        "What the window was worked out from: `result date` (the --save-result JSON's date: "
        "its end), `client clock` (the last time its client logged before the result: its "
        "start), `server log` (the last time logged before the result in its server's own "
        "log: its end) or `file time` (the file's modification time: its end).", facet=True)


ServingRun = create_model("ServingRun", __base__=ServingRunBase, __module__=__name__,
                          **_latency_fields())
ServingRun.__doc__ = "One serving benchmark result block with its context."
ServingRun.__table__ = "serving_runs"
ServingRun.__description__ = ("One row per serving benchmark result block (vLLM "
                              "benchmark_serving.py / vllm bench serve, SGLang bench_serving).")
ServingRun.__facets__ = ("engine", "model", "max_concurrency", "source_id")
ServingRun.__leading__ = ("label", "engine", "model", "max_concurrency", "request_rate",
                          "output_throughput", "request_throughput", "total_token_throughput",
                          "mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms", "mean_tpot_ms",
                          "median_tpot_ms", "p99_tpot_ms", "mean_itl_ms", "mean_e2el_ms",
                          "duration", "completed", "failed", "launch_id", "config_id",
                          "group_id")
ServingRun.__foreign_keys__ = (("source_id", "sources", "id"),
                              ("launch_id", "server_launches", "id"),
                              ("config_id", "configurations", "id"),
                              ("group_id", "experiment_groups", "id"))


class LatencyStat(Row):
    __table__ = "latency_stats"
    __description__ = "Every latency statistic a serving block printed, one per row."
    __foreign_keys__ = (("run_id", "serving_runs", "id"),)

    id: int | None = None
    run_id: int | None = col("Serving run (serving_runs.id).")
    metric: str = Field(description="ttft, tpot, itl or e2el.", json_schema_extra={"facet": True})
    stat: str = Field(description="mean, median, std, min, max or pNN (p99, p99.9).",
                      json_schema_extra={"facet": True})
    percentile: float | None = col("The percentile for pNN stats, else null.", "%")
    value_ms: float = Field(description="The printed value.", json_schema_extra={"unit": "ms"})


class UnparsedBlock(Row):
    __table__ = "unparsed_blocks"
    __description__ = "What could not be read, with file:line and why; nothing is dropped silently."
    __foreign_keys__ = (("source_id", "sources", "id"),)

    id: int | None = None
    source_id: int | None = col("Source file (sources.id).")
    format: str | None = col("Format the block looked like.", facet=True)
    line: int = Field(description="Line of the problem in the source file (1-based).")
    reason: str = Field(description="Why it was not stored.")
    raw_text: str | None = col("The text, kept so nothing is lost.")
