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
from typing import Any, Iterable

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

    @property
    def in_prose(self) -> bool:
        """The program is named in a sentence, not run: no flag, and words after it
        (`llama-server with Qwen3-14B on RTX 4080:`, `vllm bench serve with 500 prompts`).
        A run with no flag names one thing at most (`vllm serve Qwen/Qwen3-8B`)."""
        return not self.args and (len(self.positionals) > 1 or any(
            p.endswith((":", ",", ".")) for p in self.positionals))


def flag_name(token: str) -> str:
    """`--max-num-seqs` → `max_num_seqs`, `-tp` → `tp`."""
    return token.lstrip("-").replace("-", "_")


LONGEST_SHELL_LINE = 20_000


@functools.lru_cache(maxsize=1024)
def _tokens(text: str) -> tuple[str, ...]:
    """The shell words of ``text`` (kept for the texts seen last: a sweep repeats its command
    for every run, and shlex reads a character at a time)."""
    if len(text) > LONGEST_SHELL_LINE:
        # shlex takes seconds on a line of a million characters; no command is that long.
        return tuple(t.strip("'\"") for t in text.split())
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
PROMPT_ENDINGS = set("$#>%❯)]:.`*-λ")     # (λ: cmder's prompt on Windows)
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


# Programs that run the command after their own options and operands: `docker exec -it NAME`,
# `docker run ... IMAGE`, `kubectl exec POD -n NS --`, `srun -N 1 --gres=gpu:8`, `sudo -E`,
# `ssh HOST`, `bash -c "`.  Name words → (options that take a value, operands before the
# command).  An option written `--opt=value` or not listed takes no separate value.
_CONTAINER_EXEC = frozenset({"-e", "--env", "--env-file", "-w", "--workdir", "-u", "--user",
                             "--detach-keys", "--index"})
_CONTAINER_RUN = _CONTAINER_EXEC | {
    "-v", "--volume", "-p", "--publish", "--name", "--gpus", "--ipc", "--network", "--net",
    "--shm-size", "--entrypoint", "--runtime", "--device", "--ulimit", "--security-opt",
    "--cap-add", "--cap-drop", "--group-add", "--mount", "--platform", "--restart", "-l",
    "--label", "--cpus", "-m", "--memory", "--memory-swap", "-h", "--hostname", "--add-host",
    "--pid", "--cpuset-cpus", "--log-driver", "--log-opt", "--tmpfs", "--volumes-from",
    "--pull", "--device-cgroup-rule", "--stop-signal", "--userns", "--uts"}
_KUBE_EXEC = frozenset({"-n", "--namespace", "-c", "--container", "--context", "--kubeconfig",
                        "-f", "--filename", "--pod-running-timeout", "--cluster", "--user"})
_SRUN = frozenset({"-p", "--partition", "-N", "--nodes", "-n", "--ntasks", "-c",
                   "--cpus-per-task", "-t", "--time", "-w", "--nodelist", "-A", "--account",
                   "-q", "--qos", "-G", "--gpus", "--gres", "-J", "--job-name", "--mpi",
                   "--ntasks-per-node", "--gpus-per-node", "--gpus-per-task", "--mem",
                   "--container-image", "--container-mounts", "--container-name",
                   "--container-workdir", "-o", "--output", "-e", "--error", "--jobid",
                   "--overlap", "-x", "--exclude", "-C", "--constraint", "--reservation"})
_APPTAINER = frozenset({"-B", "--bind", "--env", "--env-file", "-H", "--home", "--overlay",
                        "-W", "--workdir", "--pwd"})
WRAPPERS: dict[tuple[str, ...], tuple[frozenset[str], int]] = {
    **{(tool, verb): (_CONTAINER_EXEC, 1) for tool in ("docker", "podman", "nerdctl")
       for verb in ("exec",)},
    **{(tool, verb): (_CONTAINER_RUN, 1) for tool in ("docker", "podman", "nerdctl")
       for verb in ("run",)},
    ("docker", "compose", "exec"): (_CONTAINER_EXEC, 1),
    ("docker", "compose", "run"): (_CONTAINER_RUN, 1),
    ("docker-compose", "exec"): (_CONTAINER_EXEC, 1),
    ("docker-compose", "run"): (_CONTAINER_RUN, 1),
    ("kubectl", "exec"): (_KUBE_EXEC, 1),
    ("oc", "exec"): (_KUBE_EXEC, 1),
    ("srun",): (_SRUN, 0),
    ("apptainer", "exec"): (_APPTAINER, 1),
    ("apptainer", "run"): (_APPTAINER, 1),
    ("singularity", "exec"): (_APPTAINER, 1),
    ("singularity", "run"): (_APPTAINER, 1),
    ("sudo",): (frozenset({"-u", "--user", "-g", "--group", "-C", "-h", "--host", "-p"}), 0),
    ("nohup",): (frozenset(), 0),
    ("time",): (frozenset({"-f", "--format", "-o", "--output"}), 0),
    ("env",): (frozenset({"-u", "--unset", "-C", "--chdir"}), 0),
    ("timeout",): (frozenset({"-s", "--signal", "-k", "--kill-after"}), 1),
    ("numactl",): (frozenset({"-N", "-m", "-C", "-p", "-i", "--cpunodebind", "--membind",
                              "--physcpubind", "--preferred", "--interleave"}), 0),
    ("taskset",): (frozenset(), 1),
    ("stdbuf",): (frozenset({"-i", "-o", "-e"}), 0),
    ("ssh",): (frozenset({"-p", "-i", "-l", "-o", "-J", "-F", "-L", "-R"}), 1),
    ("conda", "run"): (frozenset({"-n", "--name", "-p", "--prefix"}), 0),
    ("bash", "-c"): (frozenset(), 0), ("sh", "-c"): (frozenset(), 0),
    ("zsh", "-c"): (frozenset(), 0), ("bash", "-lc"): (frozenset(), 0),
}
_WRAPPER_FIRST = {name[0] for name in WRAPPERS}
# A container image, its repository and tag (`vllm/vllm-openai:v0.8.3`): a program when the
# image's entrypoint is one.
IMAGE_WORD = re.compile(r"[\w.-]+(?::\d+)?/[\w./-]+(?::[\w.-]+)?(?=\s)")
_QUOTES = ("'", '"')


def _wraps(words: list[str], i: int, image: bool = False) -> bool:
    """Do ``words[i:]`` form a whole wrapper invocation (`docker exec -it NAME`), so the words
    after them are the command it runs?  ``image``: the next word is a container image whose
    entrypoint is the program (`docker run ... vllm/vllm-openai:v0.8.3 --model ...`)."""
    first = words[i].rsplit("/", 1)[-1].lower()
    for name, (value_options, operands) in WRAPPERS.items():
        if first != name[0] or [w.lower() for w in words[i + 1:i + len(name)]] != list(name[1:]):
            continue
        j = i + len(name)
        while j < len(words):
            word = words[j]
            if word == "--":                 # `kubectl exec POD --`: the command follows
                j += 1
                break
            if word.startswith("-") and len(word) > 1:
                j += 2 if "=" not in word and word in value_options else 1
            elif operands:
                operands -= 1
                j += 1
            else:
                break
        if j == len(words) and (operands == 0 or image and operands == 1 and name[-1] == "run"):
            return True
    return False


def _strip_wrapper(words: list[str], image: bool = False) -> bool:
    """Drop the wrapper the words end with (the innermost one); False when they end with none."""
    for i in range(len(words) - 1, -1, -1):
        if words[i].rsplit("/", 1)[-1].lower() in _WRAPPER_FIRST and _wraps(words, i, image):
            del words[i:]
            return True
    return False


def invoked_at(text: str, start: int) -> bool:
    """Is the program named at ``start`` run by this line, rather than mentioned in a log
    message or a sentence (`WARNING: vllm bench serve no longer sets ...`, `Restart vllm serve
    with --enable-scale-out`)?  What may stand before a command: a prompt (`user@host:~$`,
    `❯`, `(venv)`), a `[timestamp]`, `VAR=1`, an interpreter, a shell keyword or separator,
    a wrapper that runs it (`docker exec -it NAME`, `kubectl exec POD --`, `srun ...`,
    `sudo`, `nohup`, `time`), a `... command:` label, list or code markup."""
    prefix = SHELL_SEPARATORS.split(text[:_program_start(text, start)])[-1]
    image = IMAGE_WORD.match(text, start) is not None       # (a container's entrypoint)
    # A prompt symbol repaired from mojibake can stick to the next word (`🟠⯠VAR=1`).
    words = [GLUED_PROMPT.sub("", w) or "❯" for w in prefix.split()]
    while words:
        if image and _strip_wrapper(words, image):     # (`-e VAR=1` is the wrapper's own)
            continue
        # (`` `VAR=1 vllm bench ...` ``, `` `python3 -m sglang...` ``: a code span's backtick
        # before the first word)
        if (INTERPRETER_WORD.match(words[-1].lstrip("`"))
                or ENV_ASSIGNMENT.match(words[-1].lstrip("`"))
                or words[-1] in SHELL_WORDS):
            words.pop()
        elif words[-1] in _QUOTES and _strip_wrapper(inner := words[:-1]):
            words[:] = inner                 # `bash -c "vllm bench serve ..."`
        elif not _strip_wrapper(words, image):
            break
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
        if start and part[start - 1] == "`" and "`" in body:
            body = body[:body.index("`")].rstrip()      # (the code span the command is: no more)
        if body.endswith("`") and body.count("`") % 2:      # (a code span's closing backtick)
            body = body[:-1].rstrip()
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
    # The program is everything up to and including the matched name (path, interpreter); a
    # pattern that looks ahead at the first flag (`llama-bench(?=\s+-)`) does not take it.
    consumed = 0
    for i in range(len(tokens)):
        name = program_re.search(" ".join(tokens[: i + 1]))
        if name is not None:
            consumed = i if name.end() <= len(" ".join(tokens[:i])) else i + 1
            break
    program = " ".join(tokens[:consumed])
    command = Command(text=segment, program=program, env=env)
    _read_flags(tokens[consumed:], command, short_flags or {})
    return command


def unabbreviated(args: dict[str, object], known: Iterable[str]) -> dict[str, object]:
    """``args`` with each flag a Python program took by a prefix of its name (argparse's
    abbreviations: `--random-input 2048` is `--random-input-len`, `--num-prompt` is
    `--num-prompts`) under the one ``known`` name it starts; a name no known one, or several,
    start stays as written."""
    names = tuple(known)
    out: dict[str, object] = {}
    for key, value in args.items():
        if key not in names:
            longer = [n for n in names if n.startswith(key)]
            if len(longer) == 1 and longer[0] not in args:
                key = longer[0]
        out.setdefault(key, value)
    return out


def _is_flag(token: str) -> bool:
    return token.startswith("-") and len(token) > 1 and not re.fullmatch(r"-\d+(\.\d+)?", token)


# A template's slot for a value (`vllm serve <model>`, `--max-concurrency {c}`): no value.
PLACEHOLDER = re.compile(r"<[^<>\s]+>|\{\w*\}|\.\.\.")


def _read_flags(tokens: list[str], command: Command, short_flags: dict[str, str]) -> None:
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token in ("do", "done", "then", "fi", "\\", "`", "^"):   # (a continuation mark left)
            i += 1
            continue
        if not _is_flag(token):
            if not PLACEHOLDER.fullmatch(token):
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
        if isinstance(value, str) and ("$" in value or PLACEHOLDER.fullmatch(value)):
            # A shell variable (`--max-concurrency $c`), a template's slot: no value here.
            continue
        command.args[key] = value
    return None
