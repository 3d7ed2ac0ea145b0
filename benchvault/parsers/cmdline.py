"""Split a pasted shell command into env prefix, program and flags.

Handles what users paste: prompt decorations before the command, `VAR=1` prefixes,
`--flag value`, `--flag=value`, short flags (`-tp 8`), `&&`/`;` chains, shell loops whose
values are `$c` (unknown, so left out), and quotes that a wrapped line broke.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Any

ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
SHELL_SEPARATORS = re.compile(r"\s(?:&&|\|\||;|\|)\s|;\s*$|;(?=\s*(?:do|done)\b)")

# Flags that take no value, so the token after them is a positional argument.
BOOLEAN_FLAGS = {
    "trust_remote_code", "enforce_eager", "enable_prefix_caching", "disable_log_requests",
    "disable_log_stats", "save_result", "save_detailed", "append_result", "ignore_eos",
    "disable_tqdm", "profile", "enable_chunked_prefill", "use_beam_search", "no_stream",
    "enable_expert_parallel", "disable_custom_all_reduce", "cb", "cont_batching", "kv_unified",
    "mlock", "no_mmap", "verbose", "flash_attn_auto", "enable_auto_tool_choice",
    "disable_frontend_multiprocessing", "async_scheduling", "enable_lora", "no_enable_prefix_caching",
}


@dataclass
class Command:
    text: str
    program: str
    env: dict[str, str] = field(default_factory=dict)
    args: dict[str, Any] = field(default_factory=dict)
    positionals: list[str] = field(default_factory=list)


def flag_name(token: str) -> str:
    """`--max-num-seqs` → `max_num_seqs`, `-tp` → `tp`."""
    return token.lstrip("-").replace("-", "_")


def _tokens(text: str) -> list[str]:
    try:
        return shlex.split(text, comments=False, posix=True)
    except ValueError:
        # An unbalanced quote (often a wrapped or hand-edited line): split on spaces.
        return [t.strip("'\"") for t in text.split()]


PATH_CHARS = set("_./~-+$")
INTERPRETER_WORD = re.compile(r"^(?:python[\d.]*|-m|-u|-O|uv|run|torchrun|numactl|taskset|nohup|time"
                              r"|sudo|exec|\S+/python[\d.]*)$")


def segment_with(text: str, program_re: re.Pattern[str]) -> str | None:
    """The part of a `a && b; c` chain (or loop body) that runs the program, with its path,
    interpreter (`python -m`) and `VAR=value` prefix."""
    for part in SHELL_SEPARATORS.split(text):
        match = program_re.search(part)
        if not match:
            continue
        # Widen to the start of the program's path (not into a prompt glued to it).
        start = match.start()
        while start > 0 and (part[start - 1].isascii() and part[start - 1].isalnum()
                             or part[start - 1] in PATH_CHARS):
            start -= 1
        words = part[:start].split()
        keep: list[str] = []
        while words and INTERPRETER_WORD.match(words[-1]):
            keep.insert(0, words.pop())
        while words and ENV_ASSIGNMENT.match(words[-1]):
            keep.insert(0, words.pop())
        body = part[start:].strip()
        return " ".join([*keep, body])
    return None


def parse_command(text: str, program_re: re.Pattern[str], short_flags: dict[str, str] | None = None) -> Command | None:
    """Parse the first invocation of the program in ``text``; None if it is not there."""
    segment = segment_with(text, program_re)
    if segment is None:
        return None
    tokens = _tokens(segment)
    env: dict[str, str] = {}
    while tokens and ENV_ASSIGNMENT.match(tokens[0]):
        key, _, value = tokens.pop(0).partition("=")
        env[key] = value
    # The program is everything up to and including the matched name (path, interpreter).
    consumed = 0
    for i in range(len(tokens)):
        if program_re.search(" ".join(tokens[: i + 1])):
            consumed = i + 1
            break
    program = " ".join(tokens[:consumed])
    command = Command(text=segment, program=program, env=env)
    _read_flags(tokens[consumed:], command, short_flags or {})
    return command


def _is_flag(token: str) -> bool:
    return token.startswith("-") and len(token) > 1 and not re.fullmatch(r"-\d+(\.\d+)?", token)


def _read_flags(tokens: list[str], command: Command, short_flags: dict[str, str]) -> None:
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token in ("do", "done", "then", "fi"):
            i += 1
            continue
        if not _is_flag(token):
            command.positionals.append(token)
            i += 1
            continue
        name, eq, value = token.partition("=")
        key = flag_name(name)
        if not name.startswith("--"):
            key = short_flags.get(key, key)
        if eq:
            i += 1
        elif key in BOOLEAN_FLAGS or i + 1 >= len(tokens) or _is_flag(tokens[i + 1]):
            value = True
            i += 1
        else:
            value = tokens[i + 1]
            i += 2
        if isinstance(value, str) and "$" in value:
            # A shell variable (`--max-concurrency $c`): its value is not in the text.
            continue
        command.args[key] = value
    return None
