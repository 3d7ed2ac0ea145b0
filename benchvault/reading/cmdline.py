"""Split a pasted shell command into env prefix, program and flags.

Handles what users paste: prompt decorations before the command, `VAR=1` prefixes,
`--flag value`, `--flag=value`, short flags (`-tp 8`), `&&`/`;` chains, shell loops whose
values are `$c` (unknown, so left out), and quotes that a wrapped line broke.
"""

from __future__ import annotations

import functools
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


@functools.lru_cache(maxsize=1024)
def _tokens(text: str) -> tuple[str, ...]:
    """The shell words of ``text`` (kept for the texts seen last: a sweep repeats its command
    for every run, and shlex reads a character at a time)."""
    try:
        return tuple(shlex.split(text, comments=False, posix=True))
    except ValueError:
        # An unbalanced quote (often a wrapped or hand-edited line): split on spaces.
        return tuple(t.strip("'\"") for t in text.split())


PATH_CHARS = set("_./~-+$")
SHELL_WORDS = {"&&", "||", ";", "|", "do", "then", "else", "time", "nohup", "sudo", "exec", "env",
               "xargs", "watch", "srun", "+"}
# A token that ends a prompt or a label before a command: `user@host:~$`, `>`, `❯`, `(venv)`,
# `[2025-01-05 11:32:46]`, `Full vLLM command:`, `1.`, a backtick.
PROMPT_ENDINGS = set("$#>%❯)]:.`*-")
GLUED_PROMPT = re.compile(r"^[^\w\s\x21-\x7e]+")
LOG_LINE_START = re.compile(
    r"^\s*(?:\[[^\]]*\]\s*)?(?:\(\w+(?:[ =]\S+)*\)\s*)?(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL|NOTICE)\b")
INTERPRETER_WORD = re.compile(r"^(?:python[\d.]*|-m|-u|-O|uv|run|torchrun|numactl|taskset|nohup|time"
                              r"|sudo|exec|\S+/python[\d.]*)$")


def _program_start(text: str, start: int) -> int:
    """Widen a program-name match to the start of its path (not into a prompt glued to it)."""
    while start > 0 and (text[start - 1].isascii() and text[start - 1].isalnum()
                         or text[start - 1] in PATH_CHARS):
        start -= 1
    return start


def invoked_at(text: str, start: int) -> bool:
    """Is the program named at ``start`` run by this line, rather than mentioned in a log
    message or a sentence (`WARNING: vllm bench serve no longer sets ...`, `Restart vllm serve
    with --enable-scale-out`)?  What may stand before a command: a prompt (`user@host:~$`,
    `❯`, `(venv)`), a `[timestamp]`, `VAR=1`, an interpreter, a shell keyword or separator,
    a `... command:` label, list or code markup."""
    prefix = SHELL_SEPARATORS.split(text[:_program_start(text, start)])[-1]
    # A prompt symbol repaired from mojibake can stick to the next word (`🟠⯠VAR=1`).
    words = [GLUED_PROMPT.sub("", w) or "❯" for w in prefix.split()]
    while words and (INTERPRETER_WORD.match(words[-1]) or ENV_ASSIGNMENT.match(words[-1])
                     or words[-1] in SHELL_WORDS):
        words.pop()
    if not words:
        return True
    if LOG_LINE_START.match(" ".join(words)) and not words[-1].lower().endswith("command:"):
        return False
    last = words[-1]
    return last[-1] in PROMPT_ENDINGS or not any(ch.isalpha() for ch in last)


def segment_with(text: str, program_re: re.Pattern[str]) -> str | None:
    """The part of a `a && b; c` chain (or loop body) that runs the program, with its path,
    interpreter (`python -m`) and `VAR=value` prefix."""
    for part in SHELL_SEPARATORS.split(text):
        match = next((m for m in program_re.finditer(part) if invoked_at(part, m.start())), None)
        if not match:
            continue
        start = _program_start(part, match.start())
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
    tokens = list(_tokens(segment))
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
