"""A pasted server launch command → the facts that begin a ``server_launches`` row.

Reads ``vllm serve MODEL --flag value`` and ``python -m vllm.entrypoints.openai.api_server``
(also SGLang ``launch_server`` and ``llama-server``, whose flags map onto the same columns),
with env-var prefixes (``VLLM_USE_TRITON_FLASH_ATTN=0 vllm serve ...``), short flags
(``-tp 8 -pp 2``), ``--flag=value`` and ``--flag value``, underscores or dashes, a script's
``[2025-01-05 11:32:46]`` prefix.  Example (seed ``mi300x``)::

    VLLM_USE_TRITON_FLASH_ATTN=0 vllm serve -tp 2 -pp 4 meta-llama/Llama-3.1-70B-Instruct \
        --num-scheduler-steps 12 --gpu_memory_utilization=0.96 --max-num-seqs 2048

gives ``tensor_parallel_size=2, pipeline_parallel_size=4, num_scheduler_steps=12,
gpu_memory_utilization=0.96, max_num_seqs=2048, model='meta-llama/Llama-3.1-70B-Instruct'``.
The command line grammar is the shared one in ``cmdline.py``.
"""

from __future__ import annotations

import json
import re
import shlex

from .base import Context, Facts, LineFormat
from ..reading.cmdline import parse_command
from .runcontext import LAUNCH_COMMANDS
from .vllm_server import SHORT_FLAGS, TABLE, unreadable_args
from .vllm_server_log import split_log_line

# The release an image's tag names (`vllm/vllm-openai:v0.8.3`, `...:0.9.1-cu128`), not
# `latest` or `nightly`.
IMAGE_VERSION = re.compile(r"/[\w./-]+:v?(\d+\.\d+(?:\.\d+)?(?:\.?post\d+|rc\d+)?)(?![\w.])")
# ...or the release a note's setup says it ran (`* vLLM Version: 0.9.1.dev59+gb6a6e7a52`,
# `SGLang version 0.4.6.post1`, `vllm==0.10.1`): its engine's name, then the version.
PROSE_VERSION = re.compile(
    r"(?<![\w/.-])(?P<engine>vllm|sglang)\**(?:[\s_-]*version)?\**\s*(?:[:：]|==?|\s)\s*`?v?"
    r"(?P<version>\d+\.\d+(?:\.\d+)?(?:\.?(?:post|rc|dev)\d+)*(?:\+[\w.]+)?)(?![\w.])", re.I)


def _prose_version(engine: str, prose: tuple[str, ...]) -> str | None:
    """The one release of ``engine`` the note's prose names, None when none or several."""
    found = {m.group("version") for line in prose for m in PROSE_VERSION.finditer(line)
             if m.group("engine").lower() == engine}
    return found.pop() if len(found) == 1 else None


# A command written as a list of its words (a Kubernetes or compose `command:`, a Dockerfile's
# `CMD`): `["vllm", "serve", "Qwen/Qwen3-8B", "--tensor-parallel-size", "2"]`.
WORD_LIST = re.compile(r'\[\s*"(?:[^"\\\]]|\\.)*"(?:\s*,\s*"(?:[^"\\\]]|\\.)*")*\s*,?\s*\]')
LISTED_VLLM = r'"vllm"\s*,\s*"serve"'
ANY_LAUNCH = re.compile("|".join(f"(?:{p.pattern})" for p in LAUNCH_COMMANDS.values())
                        + "|" + LISTED_VLLM)


def _as_line(message: str) -> str:
    """The command a list of its words writes, as a shell line; else the message."""
    listed = WORD_LIST.search(message) if '"' in message and "[" in message else None
    if listed is None:
        return message
    try:
        words = json.loads(listed.group(0))
    except ValueError:
        return message
    return " ".join(shlex.quote(w) for w in words) if all(isinstance(w, str) for w in words) \
        else message


def build(line: int, text: str, context: Context) -> Facts | None:
    log = split_log_line(text)
    message = _as_line(log.message)
    for engine, pattern in LAUNCH_COMMANDS.items():
        command = parse_command(message, pattern, SHORT_FLAGS.get(engine))
        if command is None:
            continue
        if not command.args and not command.positionals or command.in_prose:
            return None  # `vllm serve` named in prose, not a launch
        # `vllm serve --help`, or a sentence around the name: nothing launched.
        if "help" in command.args:
            return None
        values = {"command": command.text, "engine": engine,
                  "args": {k: v for k, v in command.args.items()},
                  "positionals": [p for p in command.positionals if not p.startswith(("#", "`"))]}
        if command.env:
            values["args"]["env"] = command.env
        # (an image tagged with the release it holds: `vllm/vllm-openai:v0.8.3`)
        if (tag := IMAGE_VERSION.search(command.program)) is not None:
            values["version"] = tag.group(1)
        elif (said := _prose_version(engine, context.prose)) is not None:
            values["version"] = said
        # A number a column needs that is none (`--max-model-len !096`): said, not stored.
        warnings = [(line, f"{engine} argument {key}: cannot read {value!r}, not stored")
                    for key, value in unreadable_args(command.args, engine)]
        return Facts(TABLE, "command", values, context, log.time, begins=True,
                     warnings=warnings)
    return None


FORMAT = LineFormat(
    name="vllm_server_command",
    table=TABLE,
    description="Server launch command line (`vllm serve`, the OpenAI api_server module, "
                "an image that runs it, SGLang launch_server, llama-server): begins a launch.",
    upstream=("vllm serve (0.5+)", "python -m vllm.entrypoints.openai.api_server",
              "docker run ... vllm/vllm-openai:TAG --model ...",
              "python -m sglang.launch_server", "llama-server"),
    markers=("serve", "api_server", "launch_server", "/server", "vllm"),
    pattern=ANY_LAUNCH,
    build=build,
)
