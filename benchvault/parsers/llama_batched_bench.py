"""llama.cpp's ``llama-batched-bench`` and ik_llama.cpp's ``llama-sweep-bench`` → ``offline_runs``.

Upstream printers: ``tools/batched-bench/batched-bench.cpp`` (``examples/`` before 2025; read in
the llama-cpp-python 0.2.20, 0.2.60, 0.2.90, 0.3.16 and 0.3.36 sdists) and ik_llama.cpp's
``examples/sweep-bench/sweep-bench.cpp``.  Both print their settings, then one table::

    main: n_kv_max = 16384, n_batch = 2048, n_ubatch = 512, flash_attn = 0, is_pp_shared = 0, n_gpu_layers = 99, n_threads = 8, n_threads_batch = 8

    |    PP |     TG |    B |   N_KV |   T_PP s | S_PP t/s |   T_TG s | S_TG t/s |      T s |    S t/s |
    |-------|--------|------|--------|----------|----------|----------|----------|----------|----------|
    |   128 |    128 |    1 |    256 |    0.108 |  1186.64 |    3.079 |    41.57 |    3.187 |    80.32 |

A row is one static batch: ``B`` sequences of ``PP`` prompt tokens each (one shared prompt with
``-pps``) that then generate ``TG`` tokens each.  sweep-bench runs one sequence through its
context a ``-ub`` window at a time: ``N_KV`` is the context already in the cache, and it prints
neither ``B`` nor the totals.  The settings line grew over the builds (2023: ``n_kv_max,
is_pp_shared, n_gpu_layers, mmq``; 2024 adds ``n_batch``, ``n_ubatch``, threads and
``flash_attn``; 2026 ``is_tg_separate``), and its prefix is the printing function's name.

Each row is an ``offline_runs`` case in the columns the other offline programs fill for the same
quantity (the JSONL keys ``pp``, ``tg``, ``pl``, ``t_pp``, ``speed_pp``, ``t``, ``speed`` are
``input_len``, ``output_len``, ``batch_size``, ``prefill_latency``, ``prefill_throughput``,
``total_latency``, ``overall_throughput``); the decode totals are ``decode_latency`` and
``decode_throughput``, and ``n_kv`` and the settings keep upstream's names.  The command line
(``-m``, ``-c``, ``-ngl``...) fills what the settings line did not print.
"""

from __future__ import annotations

import re
from typing import Any

from lark import v_args

from . import grammar
from .base import Block, BlockFormat, BlockParseError, Context, Parsed, Problem, own_lines
from .grammar import ColumnTransformer, flatten, snake_name
from .offlinecontext import Case, case_rows
from ..reading.cmdline import parse_command

ENGINE = "llama.cpp"
COMMANDS = {"llama_batched_bench": re.compile(r"(?<![\w-])(?:llama-)?batched-bench\b"),
            "llama_sweep_bench": re.compile(r"(?<![\w-])(?:llama-)?sweep-bench\b")}
TOOLS = {"llama_batched_bench": "llama-batched-bench", "llama_sweep_bench": "llama-sweep-bench"}

# upstream's JSONL key → column of offline_runs
KEY_COLUMNS = {"pp": "input_len", "tg": "output_len", "pl": "batch_size", "n_kv": "n_kv",
               "t_pp": "prefill_latency", "speed_pp": "prefill_throughput",
               "t_tg": "decode_latency", "speed_tg": "decode_throughput", "t": "total_latency",
               "speed": "overall_throughput"}
# printed header → its JSONL key → column
HEADER_KEYS = {"PP": "pp", "TG": "tg", "B": "pl", "N_KV": "n_kv", "T_PP s": "t_pp",
               "S_PP t/s": "speed_pp", "T_TG s": "t_tg", "S_TG t/s": "speed_tg", "T s": "t",
               "S t/s": "speed"}
HEADERS = {header: KEY_COLUMNS[key] for header, key in HEADER_KEYS.items()}
# headers with no column: their JSONL key in `extra`
EXTRA_HEADERS = {"RSS HWM": "rss_hwm_mib", "VRAM delta": "vram_delta_mib"}
# settings-line keys (= JSONL keys) with a column; any other (2023's `mmq`) goes to `extra`
SETTINGS = ("n_kv_max", "n_batch", "n_ubatch", "flash_attn", "is_pp_shared", "is_tg_separate",
            "n_gpu_layers", "n_threads", "n_threads_batch")
BOOL_SETTINGS = ("is_pp_shared", "is_tg_separate")
# command-line flags (short and long) → the setting they give
FLAGS = {"c": "n_kv_max", "ctx_size": "n_kv_max", "b": "n_batch", "batch_size": "n_batch",
         "ub": "n_ubatch", "ubatch_size": "n_ubatch", "ngl": "n_gpu_layers",
         "gpu_layers": "n_gpu_layers", "n_gpu_layers": "n_gpu_layers", "t": "n_threads",
         "threads": "n_threads", "tb": "n_threads_batch", "threads_batch": "n_threads_batch",
         "fa": "flash_attn", "flash_attn": "flash_attn"}
SWITCHES = {"on": 1, "off": 0, "auto": -1, "true": 1, "false": 0, "1": 1, "0": 0, "-1": -1}
SETTING_RE = re.compile(r"(\w+)\s*=\s*([-\w.]+)")
PREAMBLE = re.compile(r"^`?(?:[\w.]+:\s+)?(n_kv_max)\s*=\s*(\d.*?)`?\s*$")
HEADER = re.compile(r"^\s*\|?\s*PP\s*\|\s*TG\s*\|(?:\s*B\s*\|)?\s*N_KV\s*\|\s*T_PP\s+s\s*\|")
ROW = re.compile(r"^\s*\|?\s*(?:\d|:?-{2,})")


@v_args(inline=True)
class TableToItems(ColumnTransformer):
    """Tree → ("header", names) and ("row", line, cells), in order."""

    def start(self, *items):
        return [i for i in flatten(items) if isinstance(i, tuple)]

    def column(self, name, children):
        if name == "header":
            return ("header", [re.sub(r"\s+", " ", str(c)) for c in children])
        if name == "row":
            return ("row", children[0].line, [str(c) for c in children])
        return None


def parse_table(text: str) -> list[tuple]:
    parser = grammar.in_parser("llama_batched_bench.lark", __file__, TableToItems)
    return grammar.parse(parser, text + "\n", "llama-batched-bench table")


def settings(printed: dict[str, str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The settings line (the preamble before the table) → (columns, extra)."""
    line = printed.get("n_kv_max")
    columns: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    if line is None:
        return columns, extra
    for key, value in SETTING_RE.findall("n_kv_max = " + line):
        number = _int(value)
        if key in SETTINGS and number is not None:
            columns[key] = bool(number) if key in BOOL_SETTINGS else number
        elif number is not None:
            extra[key] = number
    return columns, extra


def _int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return SWITCHES.get(text.lower())


def command_context_of(context: Context) -> tuple[str | None, dict[str, Any]]:
    """(the program's kind, the columns its command line gives) from the nearest command."""
    seen = [(s.line, kind) for kind, s in context.commands.items() if kind in COMMANDS]
    if not seen:
        return None, {}
    kind = max(seen)[1]
    command = parse_command(context.commands[kind].text, COMMANDS[kind])
    if command is None:
        return kind, {}
    row: dict[str, Any] = {"command": command.text}
    model = command.args.get("m", command.args.get("model"))
    if isinstance(model, str):
        row["model"] = model
    for flag, column in FLAGS.items():
        value = command.args.get(flag)
        number = _int(value) if isinstance(value, str) else None
        if number is not None:
            row.setdefault(column, number)
    if "pps" in command.args:
        row["is_pp_shared"] = True
    return kind, row


def case_context(context: Context, kind: str) -> dict[str, Any]:
    """The columns every case of the program ``kind`` shares with the note around it."""
    return {"section": context.section_text, "label": context.label_or_heading,
            "tags": context.tags or None, "tool": TOOLS[kind], "engine": ENGINE}


def build(block: Block) -> list[Parsed | Problem]:
    # (the header is the block's first line; after it, the table's rule and rows)
    rows_kept, skipped = own_lines(block.lines[1:], block.line_start + 1,
                                   lambda line: line if ROW.match(line) else None,
                                   "row of the llama-batched-bench table")
    out: list[Parsed | Problem] = list(skipped)
    kept = [block.lines[0], *rows_kept]
    while kept and not kept[-1].strip():
        kept.pop()
    try:
        items = parse_table("\n".join(kept))
    except BlockParseError as exc:
        # a paste cut mid-row: the rows before it
        cut = exc.line
        if cut is None or cut < 3:
            raise
        out.append(Problem(block.line_start + cut - 1, "llama-batched-bench row cut short, "
                           f"skipped: {kept[cut - 1].strip()[:80]!r}", kept[cut - 1]))
        items = parse_table("\n".join(kept[:cut - 1]))
    if not items or items[0][0] != "header":
        raise BlockParseError("a llama-batched-bench table without its header", 1)
    header = items[0][1]
    rows = [i for i in items if i[0] == "row"]
    if not rows:
        raise BlockParseError("a llama-batched-bench table without rows", 1)
    kind, from_command = command_context_of(block.context)
    if kind is None:
        kind = "llama_batched_bench" if "B" in header else "llama_sweep_bench"
    printed, printed_extra = settings(block.context.printed)
    row0 = case_context(block.context, kind)
    row0.update(from_command)
    row0.update(printed)
    cases = []
    for _, line, cells in rows:
        at = block.line_start + line - 1
        if len(cells) < len(header) and not kept[line - 1].rstrip().endswith("|"):
            # (a paste cut mid-row: its last cell may be a number cut short)
            out.append(Problem(at, "llama-batched-bench row cut short, skipped: "
                               f"{kept[line - 1].strip()[:80]!r}", kept[line - 1]))
            continue
        case = Case(at)
        case.extra.update(printed_extra)
        if len(cells) != len(header):
            case.warnings.append((at, f"the row has {len(cells)} cells, the header "
                                  f"{len(header)}: read by their place"))
        for name, cell in zip(header, cells):
            if cell.lower() == "n/a":
                continue
            column = HEADERS.get(name)
            if column is not None:
                case.put(column, cell, at, name)
            else:
                value = case.number(name, cell, at)
                if value is not None:
                    case.extra[EXTRA_HEADERS.get(name) or snake_name(name)] = value
        cases.append(case)
    return out + case_rows(block, cases, row0, None, FORMAT.name)


def continues(line: str) -> bool:
    return line.lstrip().startswith("|")


FORMAT = BlockFormat(
    name="llama_batched_bench",
    table="offline_runs",
    description="llama.cpp llama-batched-bench's and ik_llama.cpp llama-sweep-bench's table "
                "(PP, TG, B, N_KV, prefill, decode and total times and speeds): one offline "
                "case a row, with the settings line before it.",
    upstream=("llama.cpp tools/batched-bench/batched-bench.cpp 2023 –",
              "ik_llama.cpp examples/sweep-bench/sweep-bench.cpp 2025 –"),
    markers=("T_PP",),
    start=HEADER,
    end=None,
    max_lines=5_000,
    build=build,
    commands=COMMANDS,
    preamble=PREAMBLE,
    preamble_markers=("n_kv_max",),
    continues=continues,
    restarts=False,
)
