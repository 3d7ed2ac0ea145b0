"""What a serving run's context says: client arguments and which engine was measured.

Sources, weakest first: the markdown heading, the pasted command line, the `Key: value` lines
the client printed just before its result, the printed ``Namespace(...)``.  A stronger source
overwrites a weaker one (the Namespace is what the program actually ran with).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Iterator

from .base import Context
from ..reading.cmdline import BOOLEAN_FLAGS, parse_command, unabbreviated
from ..schemas.models import json_safe
from ..reading.pyliteral import ReprParseError, parse_namespace

# Patterns name the program only (no `\S*` path prefix: that backtracks quadratically on long
# lines); cmdline.segment_with widens a match to its path, interpreter and env prefix.
BENCH_COMMANDS = {
    "serving_bench": re.compile(
        r"\bbenchmark_serving(?:\.py)?\b|\bvllm\s+bench\s+serve\b|\bsglang\.bench_serving\b"
        r"|\bbench_serving\.py\b"
    ),
}

# Server launches; the engine a client talked to is most often told by the launch before it.
LAUNCH_COMMANDS = {
    # (and an image that runs vLLM's server as its entrypoint, given the server's options:
    # `docker run ... vllm/vllm-openai:v0.8.3 --model ...`)
    "vllm": re.compile(r"\bvllm\s+serve\b|\bvllm\.entrypoints\.(?:openai\.)?api_server\b"
                       r"|(?<![\w./:-])[\w.-]+/[\w.-]*vllm[\w.-]*(?::[\w.-]+)?(?=\s+--[a-z])"),
    "llama.cpp": re.compile(r"\bllama-server\b|/server\s+-m\b"),
    "sglang": re.compile(r"\bsglang\.launch_server\b|\bsglang\s+serve\b"),
}

ENGINE_WORDS = (
    ("llama.cpp", re.compile(r"llama[._\- ]?cpp|llama-(?:server|bench|sweep-bench|batched-bench"
                             r"|cli)\b|\bgguf\b", re.I)),
    ("sglang", re.compile(r"\bsglang\b", re.I)),
    ("vllm", re.compile(r"\bvllm\b", re.I)),
    # (the other engines a serving client measures: its `--backend` names them too)
    ("tensorrt-llm", re.compile(r"\btensorrt[-_ ]?llm\b|\btrt[-_ ]?llm\b", re.I)),
    ("lmdeploy", re.compile(r"\blmdeploy\b", re.I)),
    ("tgi", re.compile(r"\btext[-_ ]generation[-_ ]inference\b|\btgi\b", re.I)),
)
# A client's `--backend` names the server it talks to -- except the generic OpenAI ones
# (`openai`, `openai-chat`, `openai-audio`), which any engine serves, so they say nothing.
# Keys: the ASYNC_REQUEST_FUNCS of SGLang's bench_serving (`sglang`, `sglang-native`,
# `sglang-oai`, `sglang-oai-chat`, `vllm`, `vllm-chat`, `lmdeploy`, `lmdeploy-chat`, `trt`) and
# of vLLM's benchmark_serving / `vllm bench serve` (`vllm`, `tgi`, `lmdeploy`, `deepspeed-mii`,
# `tensorrt-llm`, `scalellm`, `sglang`, `llama.cpp`), and the `-chat` / `trt-llm` spellings
# other copies of those scripts use.
CLIENT_BACKEND_ENGINES = {
    "sglang": "sglang", "sglang-native": "sglang", "sglang-oai": "sglang",
    "sglang-oai-chat": "sglang", "sglang-chat": "sglang",
    "vllm": "vllm", "vllm-chat": "vllm",
    "tgi": "tgi",
    "lmdeploy": "lmdeploy", "lmdeploy-chat": "lmdeploy",
    "tensorrt-llm": "tensorrt-llm", "trt": "tensorrt-llm", "trt-llm": "tensorrt-llm",
    "deepspeed-mii": "deepspeed-mii", "scalellm": "scalellm",
    "llama.cpp": "llama.cpp",
}
# ...but vLLM's own client names itself: `--backend vllm` is what `vllm bench serve` /
# benchmark_serving.py ran with by default, against whatever OpenAI-compatible server, so as
# that client's argument it says nothing.  Printed by SGLang's client (`Backend: vllm-chat`,
# whose default is `sglang`), it was chosen, and names the engine.
SILENT_CLIENT_ARGUMENTS = frozenset({"vllm", "vllm-chat"})

RUN_KEYS = ("backend", "endpoint", "base_url", "host", "port", "model", "tokenizer",
            "dataset_name", "dataset_path", "num_prompts", "max_concurrency", "request_rate",
            "burstiness", "seed", "ignore_eos")
# Workload lengths, per dataset: the client's arguments list every dataset's defaults, so only
# those of the run's own dataset say anything about it.
WORKLOAD_KEYS = {
    "random": ("random_input_len", "random_output_len", "random_range_ratio",
               "random_prefix_len"),
    "sharegpt": ("sharegpt_output_len",),
    "sonnet": ("sonnet_input_len", "sonnet_output_len", "sonnet_prefix_len"),
    "hf": ("hf_output_len",),
    # vLLM's newer datasets (`vllm bench serve --dataset-name ...`, 0.10 on)
    "custom": ("custom_output_len",),
    "prefix_repetition": ("prefix_repetition_prefix_len", "prefix_repetition_suffix_len",
                          "prefix_repetition_num_prefixes", "prefix_repetition_output_len"),
    "spec_bench": ("spec_bench_output_len",),
    "speed_bench": ("speed_bench_output_len",),
    # SGLang's image dataset draws its text lengths as the random one does
    "image": ("random_input_len", "random_output_len", "random_range_ratio"),
}
INT_KEYS = ("max_concurrency", "num_prompts", "port", "seed", "random_input_len",
            "random_output_len", "random_prefix_len", "sharegpt_output_len", "sonnet_input_len",
            "sonnet_output_len", "sonnet_prefix_len", "hf_output_len", "custom_output_len",
            "prefix_repetition_prefix_len", "prefix_repetition_suffix_len",
            "prefix_repetition_num_prefixes", "prefix_repetition_output_len",
            "spec_bench_output_len", "speed_bench_output_len")
FLOAT_KEYS = ("request_rate", "burstiness", "random_range_ratio")
# The client's arguments benchvault reads, the names a flag may abbreviate (argparse's).
CLIENT_KEYS = tuple(dict.fromkeys([*RUN_KEYS, *(k for keys in WORKLOAD_KEYS.values()
                                                 for k in keys)]))
_NUMBER_KEYS = {**dict.fromkeys(INT_KEYS, int), **dict.fromkeys(FLOAT_KEYS, float)}


def workload_keys(dataset_name: str | None) -> tuple[str, ...]:
    """The length arguments that apply to ``dataset_name`` (all of them when it is unknown)."""
    return _workload_keys(str(dataset_name) if dataset_name else None)


@lru_cache(maxsize=256)     # asked for every serving run
def _workload_keys(dataset_name: str | None) -> tuple[str, ...]:
    if not dataset_name:
        return tuple(k for keys in WORKLOAD_KEYS.values() for k in keys)
    return WORKLOAD_KEYS.get(dataset_name.lower().split("-")[0], ())
PRINTED_KEYS = {"traffic request rate": "request_rate", "burstiness factor": "burstiness",
                "maximum request concurrency": "max_concurrency",
                "max request concurrency": "max_concurrency"}


PATH_WORD = re.compile(r"\S*/\S*")


@lru_cache(maxsize=4096)    # a note's headings and labels, asked for every run under them
def engine_named_in(text: str | None) -> str | None:
    """The one engine a heading or label names; None when it names none or several."""
    if not text:
        return None
    named = {engine for engine, pattern in ENGINE_WORDS if pattern.search(text)}
    return named.pop() if len(named) == 1 else None


def launch_engine(context: Context) -> str | None:
    seen = context.commands.get("launch")
    if seen is None:
        return None
    for engine, pattern in LAUNCH_COMMANDS.items():
        if pattern.search(seen.text):
            return engine
    return None


def infer_engine(context: Context, model: str | None, printed_backend: str | None,
                 client_backend: str | None) -> str:
    candidates = (
        engine_named_in(context.label),
        "llama.cpp" if model and model.lower().endswith(".gguf") else None,
        CLIENT_BACKEND_ENGINES.get((printed_backend or "").lower()),
        launch_engine(context),
        *(engine_named_in(heading) for heading in reversed(context.section)),
        None if (client_backend or "").lower() in SILENT_CLIENT_ARGUMENTS
        else CLIENT_BACKEND_ENGINES.get((client_backend or "").lower()),
        # (last, the one engine the note's prose around names, `vLLM 0.10.1, Llama-3.1-8B`;
        # not in a link or a path: `github.com/vllm-project/...` is where, not what)
        engine_named_in(PATH_WORD.sub(" ", " ".join(context.prose))),
    )
    return next((c for c in candidates if c), "unknown")


def _printed_values(context: Context) -> dict[str, Any]:
    values = {}
    for label, value in context.printed.items():
        key = PRINTED_KEYS.get(label.lower())
        word = value.split()[0].rstrip(".") if value.split() else ""
        if key and word and word.lower() not in ("none", "not"):
            values[key] = word
    return values


def serving_context(context: Context, printed_backend: str | None = None) -> dict[str, Any]:
    """Row fields for a serving run from its context (never from the block itself)."""
    row: dict[str, Any] = {"section": context.section_text, "label": context.label_or_heading,
                           "tags": context.tags or None}
    bench = context.commands.get("serving_bench")
    command = None
    if bench is not None:
        command = parse_command(bench.text, BENCH_COMMANDS["serving_bench"])
        command = None if command is not None and command.in_prose else command
    arguments: dict[str, Any] = unabbreviated(command.args, CLIENT_KEYS) \
        if command is not None else {}
    if command is not None:
        row["command"] = command.text
        # A value flag printed without its value (`--model` last on a line the paste lost the
        # rest of) says nothing about that value.
        row.update({k: v for k, v in arguments.items()
                    if k in RUN_KEYS and (v is not True or k in BOOLEAN_FLAGS)})
    row.update(_printed_values(context))
    if context.namespace is not None:
        try:
            namespace = parse_namespace(context.namespace.text)
        except ReprParseError:
            namespace = None
        if namespace is not None:
            row["namespace"] = json_safe(namespace)
            row.update({k: v for k, v in namespace.items() if k in RUN_KEYS and v is not None})
            arguments.update(namespace)
    lengths = workload_keys(row.get("dataset_name"))
    row.update({k: v for k, v in arguments.items() if k in lengths and v is not None})
    if isinstance(row.get("ignore_eos"), str):
        row["ignore_eos"] = row["ignore_eos"].lower() in ("true", "1", "yes")
    for key in _NUMBER_KEYS.keys() & row.keys():     # only the keys the context set
        if isinstance(row[key], str):
            try:
                row[key] = _NUMBER_KEYS[key](row[key])
            except ValueError:
                row.pop(key)
    prose = (*context.section, *context.prose)
    if not row.get("model"):        # (the one model id the note's prose names: `Qwen/Qwen3-32B`)
        model = model_in_prose(prose)
        if model is not None:
            row["model"] = model
    if not row.get("dataset_name") and (dataset := dataset_in_prose(prose)) is not None:
        row["dataset_name"] = dataset
    if row.get("dataset_name") in (None, "random"):
        for key, value in workload_in_prose(prose).items():
            row.setdefault(key, value)
    row["engine"] = infer_engine(context, row.get("model"), printed_backend, row.get("backend"))
    return row


# A model id as the Hugging Face hub names it (`Qwen/Qwen3-32B`, `meta-llama/Llama-3.1-8B`):
# an organisation, one slash, a name with a letter and a digit; not part of a path or a URL.
HUB_MODEL_RE = re.compile(r"(?<![\w./:-])([A-Za-z][\w-]{1,38}/(?=[\w.-]*\d)(?=[\w.-]*[A-Za-z])"
                          r"[\w.-]{2,95}?)(?=[.,;:!?)]*(?:\s|$|[`*\"'\])]))(?!/)")


# A model named without its organisation, by a family's name and a version or size
# (`Qwen2.5-72B-Instruct`, `gpt-oss-120b`, `Llama-3.1-8B`, `DeepSeek-R1`, Ollama's tagged
# `qwen2.5:14b`); not a file's name.
_FAMILIES = (r"(?:Meta-)?(?:Llama|Qwen|QwQ|Mistral|Mixtral|Ministral|Devstral|Magistral"
             r"|Codestral|DeepSeek|gpt-oss|Gemma|Phi|GLM|Kimi|MiniMax|Granite|Falcon|Nemotron|OLMo"
             r"|InternLM|Hunyuan|ERNIE|Seed-OSS|Yi)")
BARE_MODEL_RE = re.compile(
    r"(?<![\w./:-])(" + _FAMILIES + r"(?=[\w.-]*\d|:\d)(?:[\w.-]*[\w])?(?::\d[\w.-]*[\w])?)"
    r"(?![\w/-])", re.I)
# ...written in words, with its size among them (`Qwen 3.5 2B`, `Gemma 4 26B A4B`), not a
# family's version alone (`Qwen 3`).
SPACED_MODEL_RE = re.compile(
    r"(?<![\w./:-])(" + _FAMILIES + r"(?:\s\d[\w.-]*)(?:\s(?:\d[\w.-]*|[A-Za-z]\d[\w.-]*))*)"
    r"(?![\w/-])", re.I)
SIZE_WORD = re.compile(r"\s\d+(?:\.\d+)?[BM]\b", re.I)


def _bare_models(text: str, start: int = 0) -> Iterator["re.Match[str]"]:
    """BARE_MODEL_RE's matches from ``start`` on that are no `.gguf` file's name."""
    return (m for m in BARE_MODEL_RE.finditer(text, start)
            if not m.group(1).lower().endswith(".gguf"))


def models_named(text: str) -> set[str]:
    """The models ``text`` names without their organisation (BARE_MODEL_RE), not a `.gguf`
    file's name."""
    return {m.group(1) for m in _bare_models(text)} \
        | {m.group(1) for m in SPACED_MODEL_RE.finditer(text) if SIZE_WORD.search(m.group(1))}


@lru_cache(maxsize=1024)      # (a note's prose, asked for every run under it)
def model_in_prose(lines: tuple[str, ...], hub_only: bool = False) -> str | None:
    """The one hub model id a note's prose names, else (unless ``hub_only``) the one model it
    names without its organisation, or None (none, or several)."""
    found = {m.group(1).rstrip(".") for line in lines for m in HUB_MODEL_RE.finditer(line)}
    if found or hub_only:
        return found.pop() if len(found) == 1 else None
    bare = {name for line in lines for name in models_named(line)}
    if len(bare) > 1:       # (`- Model / implementation: gemma-4-26B-A4B-it / gemma4-autoport`)
        # (not a line that compares models: `Model: Qwen3-8B vs Llama-3.1-8B`)
        labelled = [m.group(1) for line in lines if (label := MODEL_LABEL.match(line))
                    and not COMPARED.search(line)
                    and (m := next(_bare_models(line, label.end()), None))]
        bare = set(labelled[:1]) if len(set(labelled)) == 1 else bare
    return bare.pop() if len(bare) == 1 else None


COMPARED = re.compile(r"\b(?:vs\.?|versus|and|against)\s", re.I)
# A line that says which model it names first: `- Model: ...`, `**Model / implementation**: ...`.
MODEL_LABEL = re.compile(r"^[\s*>#-]*\**models?\b[^:：\n]{0,40}[:：]\**\s*", re.I)


# A workload as a note states it: `ISL=6400 / OSL=400`, `input_len=512 / output_len=256`,
# `inp len: 32768`, `in2048/out128`, `ISL/OSL = 1024/1024`, `3000 input tokens, 30 output
# tokens`, `128 prompt / 128 output tokens`, `输入=200, 输出=100`, `num_prompts=200`, `645 prompts`,
# `at concurrency 16`, `random 2048/256 @ conc 64`, `100 concurrent requests`, `seed 0`,
# `Prompt 128 tokens, output 256 tokens`.
_N = r"(\d{1,7})(?![\d.,]*\d|\s*[kKmM%])"
# (the number is no figure's: no unit after it)
_NO_UNIT = r"(?!\s*(?:tok|t/s|req|ms\b|s\b|sec|%|x\b|GB|GiB|MB|tps|qps))"
_INPUT = r"(?:isl|input[_ -]?len(?:gth)?|inp\s+len|random[_-]input(?:[_-]len)?|prompt[_ ]len(?:gth)?|input|输入|入力)"
_OUTPUT = r"(?:osl|output[_ -]?len(?:gth)?|out\s+len|random[_-]output(?:[_-]len)?|gen(?:eration)?[_ ]len(?:gth)?|output|输出|出力)"
PROSE_WORKLOAD = (
    (re.compile(r"(?<![\w-])" + _INPUT + r"\s*/\s*" + _OUTPUT + r"\s*(?:len(?:gths?)?)?\s*[=:：]?\s*"
                + r"(\d{1,7})\s*/\s*" + _N, re.I), ("random_input_len", "random_output_len")),
    (re.compile(r"(?<![\w-])" + _INPUT + r"\s*[=:：]\s*" + _N, re.I), ("random_input_len",)),
    (re.compile(r"(?<![\w-])" + _OUTPUT + r"\s*[=:：]\s*" + _N, re.I), ("random_output_len",)),
    # (a length's name and its number with a blank between: `ISL 1024 OSL 128`, `input 2048,
    # output 256`, `--input-len 1024`; not a figure's, `output 5123 tok/s`)
    (re.compile(r"(?<![\w])(?:--)?" + _INPUT + r"(?:\s+len(?:gth)?)?\s+" + _N + _NO_UNIT, re.I),
     ("random_input_len",)),
    (re.compile(r"(?<![\w])(?:--)?" + _OUTPUT + r"(?:\s+len(?:gth)?)?\s+" + _N + _NO_UNIT, re.I),
     ("random_output_len",)),
    # (`1024 in / 128 out`, `in 1024, out 1024`)
    (re.compile(r"(?<![\w.,])(\d{1,7})\s+in\s*[,/]\s*(\d{1,7})\s+out\b", re.I),
     ("random_input_len", "random_output_len")),
    (re.compile(r"(?<![\w-])in\s+(\d{1,7})\s*[,/]\s*out\s+" + _N, re.I),
     ("random_input_len", "random_output_len")),
    (re.compile(r"(?<![\w-])in(\d{1,7})\s*/\s*out" + _N, re.I),
     ("random_input_len", "random_output_len")),
    (re.compile(r"(?<![\w-])random\s+(\d{1,7})\s*/\s*" + _N, re.I),      # `random 2048/256`
     ("random_input_len", "random_output_len")),
    (re.compile(r"(?<![\w.,])(\d{1,7})\s+(?:input|prompt)(?:\s+tokens?)?\s*(?:[,/]|and)\s*(\d{1,7})\s+output\b",
                re.I),
     ("random_input_len", "random_output_len")),
    # (`Prompt 128 tokens, output 256 tokens`)
    (re.compile(r"(?<![\w-])(?:prompt|input)\s+(\d{1,7})\s+tokens?\s*[,/]?\s*(?:and\s+)?output\s+"
                + _N + r"\s+tokens?\b", re.I), ("random_input_len", "random_output_len")),
    (re.compile(r"\bnum[_ -]?prompts\s*[=:：]\s*" + _N + r"|(?<![\w.,])(\d{1,7})\s+prompts\b"
                + r"|(?<![\w.,])(\d{1,7})\s+(?:measured\s+|timed\s+)?requests\s+(?:per|each|in\s+each)\s+run\b"
                + r"|\brequests\s+per\s+(?:run|level|step|point)\**\s*[=:：]\s*" + _N
                + r"|请求数量\s*[=:：]\s*" + _N, re.I), ("num_prompts",)),
    (re.compile(r"\b(?:max[_ ])?conc(?:urrency)?(?:\s+level)?\s*(?:[=:：]|of)?\s*" + _N
                + r"|(?<![\w.,])(\d{1,7})\s+concurrent\s+(?:requests|users|clients|streams)\b", re.I),
     ("max_concurrency",)),
    (re.compile(r"(?<![\w-])(?:--)?seed\s*[=:：]?\s*`?(\d{1,10})(?![\d.,]*\d)", re.I), ("seed",)),
    # (`--request-rate 1`, `request rate: 0.5`, `qps=4`; not `qps 40+`, a range of them)
    (re.compile(r"(?<![\w-])(?:--request-rate|request[_ ]rate|qps|rps)\s*[=:：]?\s*"
                r"(\d{1,4}(?:\.\d+)?)(?![\d.]*\d|\s*[kKmM%+])", re.I), ("request_rate",)),
)


# The dataset a note names in words, as the clients' `--dataset-name` does (`random dataset`,
# `dataset: sharegpt`, `the ShareGPT dataset`).
_DATASET = r"(random|sharegpt|sonnet|burstgpt|random-mm)"
DATASET_IN_PROSE = re.compile(rf"(?<![\w-]){_DATASET}\s+dataset\b"
                              rf"|\bdataset(?:[_ -]name)?\**\s*[=:：]\s*`?{_DATASET}(?![\w-])", re.I)


@lru_cache(maxsize=1024)
def dataset_in_prose(lines: tuple[str, ...]) -> str | None:
    """The one dataset a note's prose names, lower case; None for none or several."""
    named = {(m.group(1) or m.group(2)).lower() for line in lines
             for m in DATASET_IN_PROSE.finditer(line)}
    return named.pop() if len(named) == 1 else None


@lru_cache(maxsize=1024)      # (a note's prose, asked for every run under it)
def workload_in_prose(lines: tuple[str, ...]) -> dict[str, int | float]:
    """The workload a note's prose states once (its input and output lengths, its prompt
    count, its concurrency): what a run's command and printed lines leave empty.  A value
    stated twice differently states none."""
    stated: dict[str, set[int | float]] = {}
    for line in lines:
        for pattern, keys in PROSE_WORKLOAD:
            for match in pattern.finditer(line):
                numbers = [g for g in match.groups() if g is not None]
                for key, number in zip(keys, numbers):
                    value = float(number)
                    stated.setdefault(key, set()).add(int(value) if value.is_integer() else value)
            # (a pair read is not read again by one name: `ISL/OSL = 1024/8192`)
            line = pattern.sub(" ", line)
    return {key: values.pop() for key, values in stated.items() if len(values) == 1}
