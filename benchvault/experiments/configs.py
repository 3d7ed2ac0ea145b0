"""What defines a serving run (its configuration) and which configurations compare (a group).

A configuration is everything that, changed, would change the numbers: the engine and model,
how the server was launched (tensor/pipeline parallelism, replicas, quantization, dtypes,
max-model-len, speculative decoding), the workload (dataset, input/output lengths, number of
prompts), the load (concurrency, request rate) and the user's tags.  Runs sharing all of it
are repeats.  Where the warehouse has no launch log it reads what the note says: `tp16` or
`PP=2 TP=8` in a label or heading, `tp2 x 4` replicas, a quantization in the model's name.

A group holds the configurations a reader compares in one table: one model family (the model
without organisation, quantization or chat/instruct suffix), one workload, one hardware.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Iterable, Mapping

# The order reports show varying fields in: what a reader compares first.
CONFIG_FIELDS = ("engine", "hardware", "model", "tensor_parallel_size",
                 "pipeline_parallel_size", "data_parallel_size", "replicas", "quantization",
                 "dtype", "kv_cache_dtype", "max_model_len", "speculative_model",
                 "num_speculative_tokens", "dataset_name", "input_len", "output_len",
                 "num_prompts", "request_rate", "max_concurrency", "tags")
GROUP_FIELDS = ("model_family", "hardware", "dataset_name", "input_len", "output_len")
# Tag keys that name the hardware (`--tag gpu=MI300X`).
HARDWARE_TAGS = ("gpu", "hardware", "device", "accelerator", "gpu_name", "machine")

TP_RE = re.compile(r"\btp\s*[=:]?\s*(\d+)\b", re.I)
PP_RE = re.compile(r"\bpp\s*[=:]?\s*(\d+)\b", re.I)
DP_RE = re.compile(r"\bdp\s*[=:]?\s*(\d+)\b", re.I)
REPLICAS_RE = re.compile(r"\b(?:tp|pp|dp)\s*=?\s*\d+\s*[x×*]\s*(\d+)\b", re.I)

_SEP = r"[-_.\s]"
_QUANT = (r"gptq|awq|w\d+a\d+(?:-?fp8)?|fp8(?:-dynamic)?|int[48]|bnb|[48]bit|nf4|exl2|mlx"
          r"|q\d(?:_k)?(?:_[sml]|_\d)?|iq\d_[a-z]+|f16|fp16|bf16|f32|fp32")
_QUANT_RE = re.compile(rf"(?:^|{_SEP})({_QUANT})(?={_SEP}|$)", re.I)
_VARIANT = r"chat|instruct|it|hf|base|quantized|gguf|ggml"
_VARIANT_RE = re.compile(rf"(?:^|{_SEP})(?:{_VARIANT}|{_QUANT})(?={_SEP}|$)", re.I)
_FILE_SUFFIX = re.compile(r"\.(gguf|bin|safetensors|pt|pth|onnx|ggml)$", re.I)
_QUANT_NAMES = {"gptq": "GPTQ", "awq": "AWQ", "bnb": "bitsandbytes", "exl2": "EXL2",
                "mlx": "MLX", "nf4": "NF4", "fp16": "F16", "f16": "F16", "bf16": "BF16",
                "f32": "F32", "fp32": "F32"}

HARDWARE_RE = re.compile(
    r"\b(?:GB\d{3}|GH\d{3}|[HBA]\d{2,3}[A-Z]?|L40S?|L4|A10G?|T4|V100|P100|MI\d{3}[AXH]?"
    r"|RTX\s?(?:PRO\s?)?\d{4}(?:\s?(?:Ti|Ada))?|RX\s?\d{4}\s?(?:XTX|XT)?|Strix\s?Halo"
    r"|Gaudi\s?\d|TPU\s?v\d\w*|Ascend\s?\d+\w*|Apple\s?M\d(?:\s?(?:Max|Ultra|Pro))?"
    r"|M\d\s?(?:Max|Ultra)|gfx\d{3,4}|Jetson\s?\w+)\b", re.I)


# --- names ---------------------------------------------------------------------------------------

def short_model(model: Any) -> str | None:
    """A model path's file name (`/models/x.gguf` → `x.gguf`); a hub id stays `org/name`."""
    if not isinstance(model, str) or not model.strip():
        return None
    text = model.strip().rstrip("/\\")
    if text.startswith(("/", "./", "../", "~", "\\")) or re.match(r"^[A-Za-z]:[\\/]", text) \
            or text.count("/") > 1 or "\\" in text or _FILE_SUFFIX.search(text):
        return re.split(r"[\\/]", text)[-1] or text
    return text


def model_family(model: Any) -> str | None:
    """The model without organisation, file suffix, quantization or chat/instruct words:
    `TheBloke/Llama-2-7B-Chat-GPTQ`, `llama-2-7b.Q8_0.gguf` → `llama-2-7b`."""
    name = short_model(model)
    if name is None:
        return None
    name = _FILE_SUFFIX.sub("", name.rsplit("/", 1)[-1]).lower()
    previous = None
    while previous != name:
        previous, name = name, _VARIANT_RE.sub("", name)
    name = re.sub(r"[-_\s]+", "-", name).strip("-.")
    name = re.sub(r"^meta-(?=llama)", "", name)
    return name or None


def quantization_in(model: Any) -> str | None:
    """The quantization a model's name states (`GPTQ`, `w8a8`, `Q4_K_M`, `F16`), if any."""
    name = short_model(model)
    if name is None:
        return None
    match = _QUANT_RE.search(_FILE_SUFFIX.sub("", name.rsplit("/", 1)[-1]))
    if not match:
        return None
    word = match.group(1)
    lower = word.lower()
    if lower in _QUANT_NAMES:
        return _QUANT_NAMES[lower]
    if re.match(r"^w\d+a\d+", lower):
        return lower
    return word.upper()


def hardware_in(texts: Iterable[str | None]) -> str | None:
    """The first accelerator a text names (`H100`, `MI300X`, `Strix Halo`, `RTX 4090`)."""
    for text in texts:
        if not text:
            continue
        match = HARDWARE_RE.search(re.sub(r"[_./-]+", " ", text))
        if match:
            found = re.sub(r"\s+", " ", match.group(0)).strip()
            return "Strix Halo" if found.lower().replace(" ", "") == "strixhalo" else \
                found.upper() if not found.lower().startswith(("apple", "jetson", "gaudi",
                                                               "ascend")) else found
    return None


def _int(value: Any) -> int | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return int(number) if math.isfinite(number) and number == int(number) else None


def _first(pattern: re.Pattern[str], texts: Iterable[str]) -> int | None:
    for text in texts:
        match = pattern.search(text)
        if match:
            return int(match.group(1))
    return None


def context_texts(label: Any, section: Any) -> list[str]:
    """The label, then the innermost heading: where a note writes `tp2 x 4`."""
    out = [label] if isinstance(label, str) and label else []
    if isinstance(section, str) and section:
        out.append(section.split(" > ")[-1])
    return out


def hardware_of(tags: Mapping[str, Any], label: Any, section: Any,
                source_name: str | None, machine: str | None = None) -> str | None:
    """What a row ran on: a hardware tag (`--tag gpu=MI300X`), else the ``machine``'s GPU (an
    environment report or recorded facts beside it: environments.hardware), else the first
    accelerator its label, its headings (innermost first) or its file's name names."""
    tagged = next((str(tags[k]) for k in HARDWARE_TAGS if tags.get(k)), None)
    return tagged or machine or hardware_in([*context_texts(label, section),
                                  *reversed(str(section or "").split(" > ")), source_name])


def tags_of(value: Any) -> dict[str, str]:
    if isinstance(value, dict):
        return value
    if isinstance(value, str) and value:
        try:
            loaded = json.loads(value)
        except ValueError:
            return {}
        return loaded if isinstance(loaded, dict) else {}
    return {}


def replicas_in(tags: Mapping[str, Any], texts: Iterable[str]) -> int | None:
    """`--tag replicas=N`, else `tp2 x 4` in the label or heading; None when not stated."""
    count = _int(tags.get("replicas"))
    if count:
        return count
    return _first(REPLICAS_RE, texts)


# --- a run's configuration ------------------------------------------------------------------------

def _lengths(run: Mapping[str, Any]) -> tuple[int | None, int | None]:
    dataset = str(run.get("dataset_name") or "").lower()
    if dataset.startswith("prefix_repetition"):
        # a prompt is the shared prefix and its own suffix
        prefix, suffix = (_int(run.get(f"prefix_repetition_{k}_len")) for k in ("prefix",
                                                                               "suffix"))
        return ((prefix or 0) + (suffix or 0) or None,
                _int(run.get("prefix_repetition_output_len")))
    for name, keys in (("random", ("random_input_len", "random_output_len")),
                       ("sonnet", ("sonnet_input_len", "sonnet_output_len")),
                       ("sharegpt", (None, "sharegpt_output_len")),
                       ("hf", (None, "hf_output_len")),
                       ("custom", (None, "custom_output_len")),
                       ("spec_bench", (None, "spec_bench_output_len")),
                       ("speed_bench", (None, "speed_bench_output_len"))):
        if dataset.startswith(name):
            return (_int(run.get(keys[0])) if keys[0] else None, _int(run.get(keys[1])))
    inputs = [_int(run.get(k)) for k in ("random_input_len", "sonnet_input_len")]
    outputs = [_int(run.get(k)) for k in ("random_output_len", "sonnet_output_len",
                                          "sharegpt_output_len", "hf_output_len")]
    return (next((v for v in inputs if v), None), next((v for v in outputs if v), None))


def configuration(run: Mapping[str, Any], launch: Mapping[str, Any] | None = None,
                  source_name: str | None = None,
                  spec_tokens: int | None = None) -> dict[str, Any]:
    """The configuration of a serving run: ``run`` is its serving_runs row (with the GPU and
    engine of its machine, ``machine_hardware`` / ``machine_engine``, when an environment
    report or recorded facts say), ``launch`` the server launch it ran against,
    ``spec_tokens`` the speculative tokens its engine reported."""
    launch = launch or {}
    tags = tags_of(run.get("tags"))
    texts = context_texts(run.get("label"), run.get("section"))
    tp = _int(launch.get("tensor_parallel_size")) or _first(TP_RE, texts)
    pp = _int(launch.get("pipeline_parallel_size")) or _first(PP_RE, texts)
    if tp and not pp:
        pp = 1
    model = run.get("model")
    quantization = launch.get("quantization") or quantization_in(model)
    input_len, output_len = _lengths(run)
    hardware = hardware_of(tags, run.get("label"), run.get("section"), source_name,
                           run.get("machine_hardware"))
    rate = run.get("request_rate")
    return {
        "engine": run.get("engine") if run.get("engine") not in (None, "unknown")
        else run.get("machine_engine") or "unknown",
        "hardware": hardware,
        "model": short_model(model),
        "tensor_parallel_size": tp,
        "pipeline_parallel_size": pp,
        "data_parallel_size": _int(launch.get("data_parallel_size")) or _first(DP_RE, texts),
        "replicas": replicas_in(tags, texts),
        "quantization": quantization,
        "dtype": launch.get("dtype"),
        "kv_cache_dtype": launch.get("kv_cache_dtype"),
        "max_model_len": _int(launch.get("max_model_len")),
        "speculative_model": launch.get("speculative_model"),
        "num_speculative_tokens": spec_tokens or _int(launch.get("num_speculative_tokens")),
        "dataset_name": run.get("dataset_name"),
        "input_len": input_len,
        "output_len": output_len,
        "num_prompts": _int(run.get("num_prompts")),
        "request_rate": float(rate) if isinstance(rate, (int, float)) else None,
        "max_concurrency": _int(run.get("max_concurrency")),
        "tags": dict(sorted(tags.items())) or None,
    }


def config_key(config: Mapping[str, Any], family: str | None = None,
               run_place: str | None = None, fields: tuple[str, ...] = CONFIG_FIELDS) -> str:
    """The configuration as text: equal for repeats (model names compared without case).  A
    run that names no model is its own configuration: too little is known to call another run
    a repeat of it (two such blocks are told apart only by the labels above them); its key
    holds ``run_place``, where the run was read (file path and line).  ``fields``: the
    configuration fields of the run's kind (an offline case has its own)."""
    keyed = {k: (v.lower() if isinstance(v, str) else v) for k, v in config.items()
             if k in fields}
    keyed["model_family"] = family
    if not config.get("model"):
        keyed["run"] = run_place
    return json.dumps(keyed, sort_keys=True, default=str)


def group_of(config: Mapping[str, Any], family: str | None) -> dict[str, Any]:
    """What a configuration shares with those it compares with."""
    return {"model_family": family, "hardware": config.get("hardware"),
            "dataset_name": config.get("dataset_name"), "input_len": config.get("input_len"),
            "output_len": config.get("output_len")}


def group_key(group: Mapping[str, Any]) -> str:
    return json.dumps({k: (v.lower() if isinstance(v, str) else v) for k, v in group.items()},
                      sort_keys=True, default=str)


def group_title(group: Mapping[str, Any]) -> str:
    """`llama-2-7b · Strix Halo · sharegpt`, `deepseek-v3 · H100 · random 1024/128`."""
    workload = group.get("dataset_name") or ""
    if group.get("input_len") or group.get("output_len"):
        workload = f"{workload} {group.get('input_len') or '?'}/{group.get('output_len') or '?'}"
    parts = [group.get("model_family") or "unknown model", group.get("hardware"),
             workload.strip() or None]
    return " · ".join(str(p) for p in parts if p)


def config_title(config: Mapping[str, Any], load: bool = True) -> str:
    """`vllm · DeepSeek-V3 · TP8 PP2 · c=64`, `llama.cpp · llama-2-7b.Q8_0.gguf · c=16`
    (without ``load``: the line of a sweep the configuration is a point of)."""
    model = config.get("model")
    parts = [config.get("engine"), model.rsplit("/", 1)[-1] if isinstance(model, str) else None]
    parallel = " ".join(f"{name}{config[key]}" for name, key in (
        ("TP", "tensor_parallel_size"), ("PP", "pipeline_parallel_size"),
        ("DP", "data_parallel_size")) if config.get(key) and config[key] > 1)
    parts += [parallel or None, f"x{config['replicas']}" if config.get("replicas") else None,
              config.get("quantization"),
              f"draft {config['speculative_model']}" if config.get("speculative_model") else None,
              f"k={config['num_speculative_tokens']}" if config.get("num_speculative_tokens")
              else None]
    if not load:
        pass
    elif config.get("max_concurrency") is not None:
        parts.append(f"c={config['max_concurrency']}")
    elif config.get("request_rate") is not None:
        parts.append(f"{config['request_rate']:g} req/s")
    return " · ".join(str(p) for p in parts if p)


def repeat_values(metric: str, numbers: list[float]) -> dict[str, float | None]:
    """A configuration's columns for one metric over its repeats: the mean, the sample
    standard deviation, the smallest and the largest (None where there are too few)."""
    mean = math.fsum(numbers) / len(numbers) if numbers else None
    return {metric: mean,
            f"{metric}_std": math.sqrt(math.fsum([(x - mean) ** 2 for x in numbers])
                                       / (len(numbers) - 1)) if len(numbers) > 1 else None,
            f"{metric}_min": min(numbers) if numbers else None,
            f"{metric}_max": max(numbers) if numbers else None}
