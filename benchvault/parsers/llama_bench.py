"""llama.cpp ``llama-bench`` markdown table → one ``llama_bench_results`` row per table row.

Upstream printer: ``markdown_printer`` in ``tools/llama-bench/llama-bench.cpp`` (earlier
``examples/llama-bench``), every build since August 2023.  The header names the columns:
``model``, ``size``, ``params``, ``backend`` always, then whichever parameters differ from the
build's defaults (``ngl``, ``threads``, ``n_batch``, ``n_ubatch``, ``type_k``, ``type_v``, ``fa``,
``mmap``, ``sm``, ``mg``, ``dev``, ``ts``, ``embd``, ...), then ``test`` and ``t/s``.

Example (seed ``deepseek-v3``)::

    $ llama-bench -m DeepSeek-V3-Q5_K_M.gguf
    ggml_cuda_init: found 8 CUDA devices:
      Device 0: NVIDIA H100 80GB HBM3, compute capability 9.0, VMM: yes
    | model                        |       size |   params | backend | ngl |  test |           t/s |
    | ---------------------------- | ---------: | -------: | ------- | --: | ----: | ------------: |
    | deepseek2 671B Q5_K - Medium | 442.74 GiB | 671.03 B | CUDA    |  99 | pp512 | 290.28 ± 1.25 |

    build: b56f079e (4418)

gives ``model_type='deepseek2 671B Q5_K - Medium', model_size=475379..., model_n_params=
671030000000, backends='CUDA', n_gpu_layers=99, test='pp512', n_prompt=512, n_gen=0,
avg_ts=290.28, stddev_ts=1.25, build_commit='b56f079e', build_number=4418`` and, from the lines
around it, ``gpu_info``/``gpu_count``, ``command``, ``env`` (a ``VAR=1`` prefix), ``model_filename``.
Columns no field knows go to ``extra``.  A row the header does not fit (a missing cell, text in
``t/s``) is a warning naming its line; the other rows still land.

What a paste does to a table costs only what it touched: the `build:` line may be in backticks
with prose after it, right under the table or after blank lines; a second table may follow
the first without a blank line (each reads its own header and build line); a header wrapped
mid-cell (`... |   t/` then `s |`) is joined again; a stray `|---|` rule is skipped; cells in
`**bold**` are read without it; rows whose header was not pasted are read when their columns
are llama-bench's default seven (model, size, params, backend, ngl or threads, test, t/s),
else they are a warning.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field as dc_field, replace
from functools import lru_cache
from typing import Any

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import LarkError, UnexpectedInput
from pydantic import ValidationError

from . import block_formats
from ..schemas.llama_bench import LlamaBenchResult
from ..reading.tablecells import claiming_format
from ..reading.brackets import nesting
from .base import Block, BlockFormat, BlockParseError, Context, Parsed, Problem, half_unit
from .grammar import finite
from ..reading.cmdline import parse_command
from .runcontext import models_named

# `build/bin/llama-bench -fa 1`, `./llama-bench`, `llama-bench.exe -m x`; not a prose mention
# (`llama-bench:`), a source path (`tools/llama-bench/llama-bench.cpp`) or `# llama-bench`.
# A Windows path with a space is quoted: `'W:\llama\llama.cpp rocm\llama-bench.exe' -m ...`.
COMMANDS = {"llama_bench": re.compile(
    # Paths start at a token start and are matched segment by segment without backtracking:
    # a long run of `=` or `(` must not cost time quadratic in its length.
    r"(?<![^\s>'\"`])(?:[^\s>'\"`/\\]*+[/\\])++llama-bench(?:\.exe)?(?=\s|$|`)"
    r"|(?<![\w.-])(?:(?P<q>['\"])[^'\"\n]*[/\\]llama-bench(?:\.exe)?(?P=q)(?=\s|$)"
    r"|llama-bench(?:\.exe)?(?=\s+--?\w))")}

# Lines printed before the table (stderr): device lists, and `build:` when stdout came last
# (in a markdown note it may be in backticks).  Devices: `Device 0: NVIDIA ..., compute
# capability 8.9`, `ggml_vulkan: 0 = Name (driver) | uma: 0 | ...`, before Feb 2024
# `ggml_vulkan: Using Name | fp16: 1 | ...`, Metal's `GPU name:`, and debug builds'
# `register_device: registered device SYCL0 (Intel(R) Arc(TM) ...)` (not `... device CPU`).
PREAMBLE = re.compile(
    r"^`?((?i:ggml_\w+:\s*found)|ggml_vulkan:\s*(?:\d+|Using)|Device\s+\d+"
    r"|(?i:ggml_metal\w*:\s*GPU name)|register_device:\s*registered device\s+[A-Za-z]+\d+"
    r"|build|model(?=\s{2,}:))\s*(?:[:=]\s*|\s)(.+)$")
# ...the ones that name a device or the build, which a note's later tables ran on too (a
# `build: 086a63e3a (7340)` line above its sections); `found N devices` starts a new list.
LASTING = re.compile(r"^(?:Device\s*\d+|ggml_vulkan|ggml_metal|register_device|build$"
                     r"|(?P<anew>ggml_\w+:\s*found))", re.I)
# The build line after the table; in a note it may be in backticks with prose after it.
# (`build: 45cac7ca7 (8833), GGML_SYCL_F16=ON`: the build options written after it)
TRAILER = re.compile(r"^\s*`?build:\s*[^\s()`]+\s*\(\d+\)`?(?:[\s,;].*)?$")
BUILD_RE = re.compile(r"^([^\s()`]+)\s*\((\d+)\)`?(?:[\s,;].*)?$")
BUILD_LINE_RE = re.compile(r"build:\s*([^\s()`]+)\s*\((\d+)\)")

# Markdown column → llama-bench JSON field (`markdown_printer::get_field_display_name`).
COLUMN_FIELDS = {
    "model": "model_type", "size": "model_size", "params": "model_n_params",
    "backend": "backends", "ngl": "n_gpu_layers", "threads": "n_threads", "sm": "split_mode",
    "mg": "main_gpu", "nkvo": "no_kv_offload", "fa": "flash_attn", "mmap": "use_mmap",
    "dev": "devices", "ts": "tensor_split", "ot": "tensor_buft_overrides", "embd": "embeddings",
    "nopo": "no_op_offload", "noh": "no_host", "lm": "load_mode", "ncmoe": "n_cpu_moe",
    "fitt": "fit_target", "fitc": "fit_min_ctx", "dio": "use_direct_io", "rpk": "repack",
    "mmq": "mul_mat_q",
    # forks that name the KV cache types `kv-k` / `kv-v`
    "kv-k": "type_k", "kv-v": "type_v",
}
# Cells read by a start rule of the grammar rather than by their field's type.
CELL_RULES = {"model_type": "model_value", "model_size": "size_value", "model_n_params": "params_value",
              "test": "test_value", "t/s": "ts_value"}
# Command-line flags that fill a field the table left out (it printed only non-defaults).
FLAG_FIELDS = {
    "ngl": "n_gpu_layers", "n_gpu_layers": "n_gpu_layers", "fa": "flash_attn",
    "flash_attn": "flash_attn", "t": "n_threads", "threads": "n_threads", "b": "n_batch",
    "batch_size": "n_batch", "ub": "n_ubatch", "ubatch_size": "n_ubatch", "ctk": "type_k",
    "cache_type_k": "type_k", "ctv": "type_v", "cache_type_v": "type_v", "sm": "split_mode",
    "split_mode": "split_mode", "mg": "main_gpu", "main_gpu": "main_gpu",
    "ncmoe": "n_cpu_moe", "n_cpu_moe": "n_cpu_moe",
    # llama-bench's other settings flags (print_usage), short and long
    "dev": "devices", "device": "devices", "nkvo": "no_kv_offload",
    "no_kv_offload": "no_kv_offload", "mmp": "use_mmap", "mmap": "use_mmap",
    "dio": "use_direct_io", "direct_io": "use_direct_io", "embd": "embeddings",
    "embeddings": "embeddings", "ts": "tensor_split", "tensor_split": "tensor_split",
    "ot": "tensor_buft_overrides", "override_tensor": "tensor_buft_overrides",
    "nopo": "no_op_offload", "no_op_offload": "no_op_offload", "noh": "no_host", "no_host": "no_host",
    "C": "cpu_mask", "cpu_mask": "cpu_mask", "cpu_strict": "cpu_strict", "poll": "poll",
}
# A backend's name as people write it → llama-bench's `backends` spelling.
BACKENDS = {"cuda": "CUDA", "rocm": "ROCm", "hip": "ROCm", "vulkan": "Vulkan", "metal": "Metal",
            "cpu": "CPU", "sycl": "SYCL", "blas": "BLAS", "opencl": "OpenCL", "cann": "CANN",
            "musa": "MUSA", "rpc": "RPC", "kompute": "Kompute"}
# A llama-bench flag with its value written in a cell or in prose (`-ngl 99`, `--n-cpu-moe 48`).
CELL_FLAG = re.compile(r"(?:^|[\s(\[`])--?(?P<flag>[a-z][\w-]*)[\s=]+(?P<value>[^\s,;()`-][^\s,;()`]*)")
PROMPT_SYMBOLS = re.compile(r"[^\w\s\x21-\x7e]+")
MODEL_FLAG = re.compile(r"(?:^|\s)(?:-m|--model)(?:\s+|=)(\S+)")
SIZE_FACTORS = {"B": 1, "KiB": 2 ** 10, "MiB": 2 ** 20, "GiB": 2 ** 30, "TiB": 2 ** 40}
COUNT_FACTORS = {"K": 10 ** 3, "M": 10 ** 6, "B": 10 ** 9, "T": 10 ** 12}
WORDS = {"true": 1, "false": 0, "yes": 1, "no": 0, "on": 1, "off": 0, "auto": -1,
         "enabled": 1, "disabled": 0}
NUMBER_RE = re.compile(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
FIELDS = LlamaBenchResult.model_fields


@v_args(inline=True)
class TableToValues(Transformer):
    """Tree → [("row", line, cells) | ("build", line, commit, number)], in order."""

    def start(self, *items):
        return [item for item in items if item is not None]

    def row(self, *tokens: Token):
        # Cells are what lies between pipes; the outer pipes, when printed, open and close the
        # row (a clipped paste may lack the closing one, a rendered paste has neither).
        cells: list[str] = [""]
        for tok in tokens:
            if tok.type == "PIPE":
                cells.append("")
            else:
                cells[-1] = str(tok).strip()
        if tokens[0].type == "PIPE":
            cells.pop(0)
        if tokens[-1].type == "PIPE" and len(cells) > 1:
            cells.pop()
        return ("row", tokens[0].line, cells)

    def progress(self, _tok):
        return None

    def backend_log(self, _tok):
        return None

    def build_line(self, token: Token):
        commit, number = BUILD_LINE_RE.search(str(token)).groups()
        return ("build", token.line, commit, int(number))

    # cell values
    def model_value(self, arch, label, *rest):
        ftype = next((str(t).strip() for t in rest if t.type == "MODEL_FTYPE"), None)
        return {"model_arch": str(arch), "model_size_label": str(label), "model_ftype": ftype}

    def size_value(self, number, unit):
        return _whole(float(number) * SIZE_FACTORS[str(unit)], number)

    def params_value(self, number, unit):
        return _whole(float(number) * COUNT_FACTORS[str(unit)], number)

    def ts_value(self, mean, std=None):
        return {"avg_ts": float(mean), "stddev_ts": float(std) if std is not None else None}

    def test_value(self, *parts):
        values = {"n_prompt": 0, "n_gen": 0, "n_depth": 0}
        for part in parts:
            values.update(part)
        values.setdefault("test", test_name(values["n_prompt"], values["n_gen"],
                                            values["n_depth"]))
        return values

    def gen_after_prompt(self, gen, prompt):
        # ik_llama.cpp's JSON keeps n_prompt and n_gen as given; only the label tells the kind
        return {**gen, **prompt, "test": f"tg{gen['n_gen']}@pp{prompt['n_prompt']}"}

    def prompt(self, n):
        return {"n_prompt": int(n)}

    def gen(self, n):
        return {"n_gen": int(n)}

    def depth(self, n):
        return {"n_depth": int(n)}


@lru_cache(maxsize=None)
def _parser() -> Lark:
    return Lark.open("llama_bench.lark", rel_to=__file__, parser="lalr",
                     start=["start", *sorted(set(CELL_RULES.values()))],
                     maybe_placeholders=False, transformer=TableToValues(), cache=True)


def test_name(n_prompt: int | None, n_gen: int | None, n_depth: int | None) -> str | None:
    """The test as llama-bench names it (`markdown_printer::print_test`)."""
    if n_prompt is None and n_gen is None:
        return None
    n_prompt, n_gen = n_prompt or 0, n_gen or 0
    if n_prompt > 0 and n_gen == 0:
        name = f"pp{n_prompt}"
    elif n_gen > 0 and n_prompt == 0:
        name = f"tg{n_gen}"
    else:
        name = f"pp{n_prompt}+tg{n_gen}"
    return name + (f" @ d{n_depth}" if n_depth else "")


def _whole(value: float, printed: Any) -> int:
    """A size or count in its unit's ones; one too large for any column is no value."""
    if not finite(value) or abs(value) >= 2 ** 63:
        raise ValueError(f"{printed} is out of range")
    return round(value)


CELL_SHAPES = {"model_value": "a model like `llama 7B Q4_0`", "size_value": "a size like `3.56 GiB`", "params_value": "a count like `6.74 B`",
               "ts_value": "`mean ± std`", "test_value": "a test like `pp512`, `tg128`, "
               "`pp512+tg128`, `pp512 @ d4096` or `tg128@pp512`"}


@lru_cache(maxsize=8192)    # tables repeat their sizes, params and tests row after row
def read_cell(rule: str, text: str) -> Any:
    """A cell's value by its start rule; the result is shared between calls, never mutated."""
    try:
        return _parser().parse(text, start=rule)
    except LarkError:
        raise ValueError(f"{text!r} is not {CELL_SHAPES[rule]}") from None


def typed(field: str, value: Any) -> Any:
    """A printed or structured value converted to its column's type (bool/int/float/str)."""
    if value is None or field not in FIELDS:
        return value
    annotation = FIELDS[field].annotation
    if isinstance(value, str):
        text = value.strip()
        if annotation in (int | None, bool | None):
            if text.lower() in WORDS:
                return WORDS[text.lower()] if annotation is int | None else bool(WORDS[text.lower()])
            if not re.fullmatch(r"[-+]?\d+(?:\.0*)?", text):
                raise ValueError(f"{field}: {text!r} is not a whole number")
            number = float(text)
            if not finite(number) or abs(number) >= 2 ** 63:
                raise ValueError(f"{field}: {text!r} is out of range")
            number = int(number)
            return bool(number) if annotation is bool | None else number
        if annotation is float | None:
            if not NUMBER_RE.fullmatch(text):
                raise ValueError(f"{field}: {text!r} is not a number")
            return float(text)
        return text
    if annotation is int | None and isinstance(value, bool):
        return int(value)
    return value


def model_parts(model_type: str | None) -> dict[str, Any]:
    """arch / size label / ftype of a `llama_model_desc()` string; none when it is not one."""
    try:
        return read_cell("model_value", model_type) if model_type else {}
    except ValueError:
        return {}


def loose(value: str) -> Any:
    """An unknown column's cell: a number when it is one (not a commit such as `982e3472`,
    which reads as a float too large to be one)."""
    text = value.strip()
    if re.fullmatch(r"[-+]?\d+", text):
        return int(text)
    if NUMBER_RE.fullmatch(text) and math.isfinite(float(text)):
        return float(text)
    return text


# A column a table's writer added for the build (`| llama.cpp | model | ... |` over `982e3472`).
BUILD_COLUMN = re.compile(r"^(?:build|commit|llama\.?cpp(?:\s+(?:build|commit|version))?)$", re.I)
COMMIT_CELL = re.compile(r"^(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}$")
BUILD_NUMBER_CELL = re.compile(r"^b?(\d{3,5})$")


def build_cell(text: str) -> dict[str, Any]:
    """The build a build column's cell names: `982e3472`, `b5600`, `6d7f1117 (5678)`."""
    text = text.strip().strip("`")
    if COMMIT_CELL.match(text):
        return {"build_commit": text}
    if number := BUILD_NUMBER_CELL.match(text):
        return {"build_number": int(number.group(1))}
    return build_from(text)


def ts_halves(cell: str) -> dict[str, float]:
    """The halves of a `mean ± std` cell that read as numbers when the cell as a whole does
    not (one of them unreadable): the other is still what was printed."""
    parts = re.split(r"\s*(?:Â±|±|\+/-|\+-)\s*", cell.strip())
    if len(parts) != 2:
        return {}
    return {key: float(text) for key, text in zip(("avg_ts", "stddev_ts"), parts)
            if NUMBER_RE.fullmatch(text)}


# The cell a row is told by (`pp512`): a row without it is no result of anything.
IDENTIFYING_CELLS = {"test"}


def row_values(header: list[str], cells: list[str],
               unread: list[str] | None = None) -> dict[str, Any]:
    """One table row's cells → field values (``extra`` for columns no field knows).  With
    ``unread``, a cell that cannot be read (but its test) is left empty and its reason
    added there: one unreadable value costs that value only."""
    values: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for name, cell in zip(header, cells):
        field = COLUMN_FIELDS.get(name.lower(), name.lower())
        rule = CELL_RULES.get(field)
        if field == "model_type":
            values.update(model_parts(cell), model_type=cell or None)
            continue
        if rule is None and BUILD_COLUMN.match(name.strip()) and (built := build_cell(cell)):
            values.update(built)
            continue
        if rule is None and (field not in FIELDS or field in ("id", "extra", "env")):
            # under llama-bench's field name when the header is a known display name
            extra[field if name.lower() in COLUMN_FIELDS else name] = loose(cell)
            continue
        try:
            if rule is not None:
                try:
                    parsed = read_cell(rule, cell)
                except ValueError as exc:
                    raise ValueError(f"{name}: {exc}") from None
                values.update(parsed if isinstance(parsed, dict) else {field: parsed})
            else:
                values[field] = typed(field, cell) if cell != "" else None
        except ValueError as exc:
            # A t/s cell of words (`out of memory`) says the test gave no result: no row.
            if unread is None or field in IDENTIFYING_CELLS or (
                    field == "t/s" and not re.search(r"\d", cell)):
                raise
            halves = ts_halves(cell) if field == "t/s" else {}
            values.update(halves)
            kept = f" (kept {', '.join(halves)})" if halves else ""
            unread.append(f"{exc}: left empty{kept}")
    if extra:
        values["extra"] = extra
    return values


def printed_tolerance(header: list[str], cells: list[str]) -> dict[str, float]:
    """Half a unit of the last printed digit of the rounded cells, in the stored units
    (`3.56 GiB` → 0.005 GiB in bytes; `878.31 ± 4.11` → 0.005 for both)."""
    out: dict[str, float] = {}
    for name, cell in zip(header, cells):
        field = COLUMN_FIELDS.get(name.lower(), name.lower())
        words = cell.split()
        if field in ("model_size", "model_n_params") and len(words) == 2:
            factor = (SIZE_FACTORS if field == "model_size" else COUNT_FACTORS).get(words[1])
            unit = half_unit(words[0])
            if factor and unit is not None:
                out[field] = unit * factor
        elif field == "t/s":
            mean, _, std = cell.replace("Â±", "±").partition("±")
            for key, text in (("avg_ts", mean), ("stddev_ts", std)):
                unit = half_unit(text)
                if unit is not None:
                    out[key] = unit
    return out


# -- context: device lines, build line, command ---------------------------------------------
DEVICE_RE = re.compile(r"^(?P<name>.+?),\s*(?:compute capability\s+(?P<cc>[\d.]+)|(?P<gfx>gfx\w+))")


def _device(value: str) -> tuple[str, str | None]:
    """(name, arch) from `NVIDIA H100 80GB HBM3, compute capability 9.0, VMM: yes`,
    `AMD Radeon Graphics, gfx1151 (0x1151), ...` or Vulkan's `Name (driver) | uma: 0 | ...`."""
    match = DEVICE_RE.match(value)
    if match:
        return match.group("name").strip(), match.group("cc") or match.group("gfx")
    name = value.split(" | ")[0].strip()
    if " | " in value:
        name = re.sub(r"\s*\([^()]*\)$", "", name)   # Vulkan prints `(driver name)` last
    return name, None


def gpu_context(printed: dict[str, str]) -> dict[str, Any]:
    devices, registered = [], []
    for label, value in printed.items():
        number = re.search(r"(?<!\d)(\d+)$", label)   # (not from each digit: linear)
        if number and (label.startswith("Device") or label.startswith("ggml_vulkan")):
            devices.append((label.startswith("ggml_vulkan"), int(number.group(1)), value))
        elif label.startswith("ggml_vulkan") and label.endswith("Using"):  # before Feb 2024
            devices.append((True, 0, value))
        elif label.lower().startswith("ggml_metal"):
            devices.append((True, 0, value))
        elif number and label.startswith("register_device"):
            registered.append((False, int(number.group(1)), value.strip().removeprefix(
                "(").removesuffix(")")))
    names = [_device(value) for *_, value in sorted(devices or registered)]
    out: dict[str, Any] = {}
    if names:
        out["gpu_info"] = ", ".join(name for name, _ in names)
        out["gpu_count"] = len(names)
        out["gpu_arch"] = names[0][1]
    else:
        found = next((v for k, v in printed.items() if k.lower().endswith("found")), None)
        count = re.match(r"(\d+)\s", found or "")
        if count:
            out["gpu_count"] = int(count.group(1))
    return out


def build_from(text: str | None) -> dict[str, Any]:
    text = (text or "").strip()
    if match := BUILD_RE.match(text):
        return {"build_commit": match.group(1), "build_number": int(match.group(2))}
    if info := BUILD_INFO.fullmatch(text):      # (common's build_info: `b7446-5c0d18881`)
        return {"build_commit": info.group(2), "build_number": int(info.group(1))}
    return {}


def command_context(context: Context) -> dict[str, Any]:
    """command, env and the single-valued flags of the llama-bench command before the table."""
    seen = context.commands.get("llama_bench")
    if seen is None:
        return {}
    # A prompt's symbols (`❯`, `🟠`) repaired from mojibake can end up glued to a `VAR=1` prefix.
    command = parse_command(PROMPT_SYMBOLS.sub(" ", seen.text), COMMANDS["llama_bench"])
    if command is None:
        return {}
    out: dict[str, Any] = {"command": command.text, "env": command.env or None}
    models = MODEL_FLAG.findall(command.text)
    if len(models) == 1 and "," not in models[0]:
        out["model_filename"] = models[0].strip("'\"")
    for flag, value in command.args.items():
        field = FLAG_FIELDS.get(flag)
        if field and isinstance(value, str) and not re.search(r"[,*]|\d-\d", value):
            try:
                out[field] = typed(field, value)
            except ValueError:
                pass
    return out


# What a note's prose says of the runs in words: a build (`b10064`, `build d48a56eff (9430)`),
# a thread count, a labelled device (`GPU: Intel Arc B580`, `**Card:** RX 9070 XT (gfx1201)`).
# Switches written without a value (llama-server's and llama-cli's `--no-mmap`, `-nkvo`).
NEGATED_FLAGS = {"--no-mmap": ("use_mmap", 0), "-nkvo": ("no_kv_offload", 1),
                 "--no-kv-offload": ("no_kv_offload", 1)}
NEGATED_FLAG = re.compile(r"(?<![\w-])(--no-mmap|-nkvo|--no-kv-offload)(?![\w-]|[\s=]+\d)")
PROSE_BUILD_NUMBER = re.compile(r"(?<![\w.-])b(\d{4,5})(?![\w.])")
PROSE_BUILD_FIRST = re.compile(r"\b(?:build|version)(?:\s+llama\.cpp)?\s*[:=]?\s*`?b?(\d{3,5})`?\s*\(`?"
                               r"([0-9a-f]{7,12})`?\)", re.I)
PROSE_BUILD_COMMIT = re.compile(r"\b(?:build|commit)\s*[:=]?\s*`?((?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,12}(?:[0-9a-f]{28})?)`?"
                                r"(?![\w(]|\s*\()", re.I)
PROSE_BUILD = re.compile(r"\bbuild[:\s]+`?([0-9a-f]{7,12})`?\s*\((\d+)\)", re.I)
# common's build_info, as llama-cli's banner (`build      : b7400-4a1b2c3d5`) and llama-server's
# start-up print it
BUILD_INFO = re.compile(r"(?<![\w.-])b(\d{3,5})-((?=[0-9a-f]*[a-f])[0-9a-f]{7,12})(?![\w.])")
PROSE_MODEL = re.compile(r"^\s*(?:[-*+]\s+)?\**\s*Model\s*\**\s*[:：]\s*\**\s*`?([^(,*`]+)", re.I)
PROSE_CPU_ONLY = re.compile(r"\bCPU[- ]only\b|\bpure CPU\b|\bCPU backend\b", re.I)
PROSE_THREADS = re.compile(r"(?<![\w.])(\d{1,3})\s*threads\b|\bthreads\s*[=:]\s*(\d{1,3})\b", re.I)
# One type for the KV cache's keys and values, in words (`q4_0 KV cache`, `KV cache: q8_0`).
_KV_TYPES = r"(f16|bf16|f32|q8_0|q4_0|q4_1|q5_0|q5_1|iq4_nl)"
PROSE_KV_TYPE = re.compile(rf"(?<![\w-]){_KV_TYPES}`?\s+KV(?:[\s-]cache)?\b"
                           rf"|\bKV[\s-]cache(?:\s+type)?\s*[:=]?\s*`?{_KV_TYPES}(?![\w-])", re.I)
PROSE_DEVICE = re.compile(r"(?:^|[·|;]\s*|[-*+]\s+)\**\s*(?P<what>GPU|CPU|Card|Processor)s?\s*\**"
                          r"\s*[:：]\s*\**\s*(?P<name>[^·|;,(*]+?)\s*(?:\((?P<arch>gfx\w+|sm_?\d+)\))?"
                          r"\s*(?=[·|;,(*]|$)", re.I)


# An AMD GPU by its name and its LLVM target, either way round (`gfx1151 (Radeon 8060S)`,
# `Radeon RX 7900 XTX / gfx1100`); a target alone.
_RADEON = r"(?:AMD\s+)?Radeon(?:\s+(?:RX|Pro|AI|Graphics|[A-Z]?\d{3,5}[A-Z]*|XTX?|XT|M))+"
PROSE_RADEON = re.compile(r"(?<![\w-])(?P<arch>gfx\d{3,4}[a-z]?)`?\s*\(\s*(?P<name>" + _RADEON + r")"
                          r"|(?P<name2>" + _RADEON + r")\s*[(/,]\s*`?(?P<arch2>gfx\d{3,4}[a-z]?)\b")
# A GPU or a CPU by its model's name, as a note writes it (`RTX 2060 mobile`, `GTX 1650`,
# `RX 7900 XTX`, `Arc B580`, `Apple M4 Pro`, `MI300X`; `Ryzen 7 5800X`, `i7-10750H`,
# `Core Ultra 7 255H`, `Ryzen AI MAX+ 395`, `Xeon Gold 6338`).
PROSE_GPU = re.compile(
    r"(?<![\w-])(?:(?:NVIDIA\s+)?(?:GeForce\s+)?(?:RTX|GTX)[\s-]?(?:PRO\s+)?\d{3,4}(?:\s?(?:Ti|SUPER|Super))?"
    r"(?:\s(?:Laptop|mobile|Mobile|Ada|Blackwell))?|(?:AMD\s+)?(?:Radeon\s+)?RX\s?\d{3,4}(?:\s?(?:XTX|XT|GRE))?"
    r"|(?:AMD\s+)?Radeon\s+(?:Pro\s+)?\d{3,4}[A-Z]{0,2}(?:\s?(?:XTX|XT))?"
    r"|(?:AMD\s+)?Radeon\s+(?:VII|Pro\s+W\d{4}X?)|[5-9]\d{3}\s?(?:XTX|XT|GRE)"
    r"|(?:NVIDIA\s+)?(?:RTX\s+)?A[2-6]000|(?:NVIDIA\s+)?(?:Tesla\s+)?(?:P40|P100|V100|T4)"
    r"|(?:AMD\s+)?Instinct\s+MI\d{2,3}X?|MI\d{2,3}X?\b|(?:Intel\s+)?Arc\s+(?:Pro\s+)?[AB]\d{2,3}"
    r"|Apple\s+M\d(?:\s(?:Pro|Max|Ultra))?|M\d\s(?:Pro|Max|Ultra)|(?:NVIDIA\s+)?(?:A|H|B|L|GB)\d{2,3}S?(?=\s|,|$)"
    r"|(?:NVIDIA\s+)?(?:DGX\s+)?Spark|Jetson\s+\w+(?:\s+\w+)?|Strix\s+(?:Halo|Point))(?![\w-])")
# A GeForce named by its number alone after a word that says it is hardware (`on my 4090`,
# `2x 3090`, `a 5090`): a bare number elsewhere is no GPU.
PROSE_BARE_GPU = re.compile(r"(?:\b(?:my|an?|on|the|dual|single|two|three|four|eight)\s+|\b\d\s?[x×]\s*)"
                            r"((?:[2-5]0[5-9]0)(?:\s?(?:Ti|Super|SUPER))?)(?![\w.])", re.I)
# The series word before a GPU's number, left off when two names are compared.
GPU_SERIES = re.compile(r"^(?:GeForce\s+)?(?:RTX|GTX|RX|Tesla|Instinct)\s*", re.I)
PROSE_CPU = re.compile(
    r"(?<![\w-])(?:(?:AMD\s+)?Ryzen[\s-]+(?:AI\s+)?(?:MAX\+?\s+|Threadripper\s+)?(?:\d\s+)?(?:PRO\s+)?"
    r"\d{3,4}[A-Z]{0,3}\d?(?:\s?X3D)?|(?:Intel\s+)?(?:Core\s+)?i[3579]-\d{4,5}[A-Z]{0,3}"
    r"|(?:Intel\s+)?Core\s+Ultra\s+(?:\d\s+)?\d{3}[A-Z]{0,2}|(?:Intel\s+)?Xeon\s+\w+\s+\d{4}[A-Z]?"
    r"|EPYC\s+\d{4}[A-Z]?)(?![\w-])")
# A model file's quantization written in its name (`Qwen3.8-27B IQ3_S`, `UD-Q2_K_XL`, `BF16`).
QUANT_WORD = re.compile(r"(?<![A-Za-z0-9])(?:UD-)?(?P<quant>I?Q\d(?:_[A-Z0-9]+)*|TQ\d_\d|BF16|F16"
                        r"|F32|MXFP4(?:_MOE)?|NVFP4)(?![A-Za-z0-9])")
# ...in a file's name, in any case (`aurora-v8-q8_0.gguf`)
QUANT_IN_NAME = re.compile(QUANT_WORD.pattern, re.I)
VENDOR_WORDS = re.compile(r"\b(?:NVIDIA|GeForce|AMD|Radeon|Intel|Apple)\s+", re.I)
PROSE_GFX = re.compile(r"(?<![\w-])(gfx\d{3,4}[a-z]?)(?![\w-])", re.I)
# A quantization named in words (`Q4_K_M`, `UD-Q4_K_XL`, `MXFP4`), not in a file's name.
PROSE_QUANT = re.compile(r"(?<![\w.-])(?:UD-)?(?P<quant>I?Q\d_(?:[A-Z0-9]+_?)*[A-Z0-9]|MXFP4|NVFP4)"
                         r"(?![\w.-])")


# A model's file named first in a labelled line (`Qwen3-8B-Q4_K_M.gguf` before its remarks).
GGUF_FILE = re.compile(r"[^\s`*()]+\.gguf(?![\w.])", re.I)


def stated_in_prose(lines: tuple[str, ...] | list[str]) -> dict[str, Any]:
    """What a note's prose around a table (``Context.prose``) states of every run in it, when
    it states one value: llama-bench's flags (`-t 8`, `-fa on`), its build, its thread count, a
    labelled model, GPU or CPU, its one backend.  A value stated twice differently states
    none."""
    text = " ".join(line.strip().strip("*") for line in lines)
    stated: dict[str, set] = {}

    def state(field: str, value: Any) -> None:
        stated.setdefault(field, set()).add(value)

    def state_file(name: str) -> None:      # (a model's file, and the quantization it names)
        # (the file's path and its name alone, `-m /models/x.gguf` and `model: x.gguf`, state
        # one file: its path)
        base = name.replace("\\", "/").rsplit("/", 1)[-1]
        same = {f for f in stated.get("model_filename", ())
                if f.replace("\\", "/").rsplit("/", 1)[-1] == base}
        if same:
            stated["model_filename"] -= same
            name = max([*same, name], key=len)
        state("model_filename", name)
        if quant := QUANT_IN_NAME.search(name):      # (`...-Q5_K_M.gguf`)
            state("model_ftype", quant.group("quant").upper())

    for match in CELL_FLAG.finditer(text):
        field = FLAG_FIELDS.get(match.group("flag").replace("-", "_"))
        if field is not None:
            try:
                state(field, typed(field, match.group("value")))
            except ValueError:
                state(field, None)
    for match in NEGATED_FLAG.finditer(text):
        state(*NEGATED_FLAGS[match.group(1)])
    for match in PROSE_THREADS.finditer(text):
        state("n_threads", int(match.group(1) or match.group(2)))
    for match in PROSE_KV_TYPE.finditer(text):
        kv_type = (match.group(1) or match.group(2)).lower()
        state("type_k", kv_type)
        state("type_v", kv_type)
    builds = set(PROSE_BUILD_NUMBER.findall(text))
    for commit, number in PROSE_BUILD.findall(text):
        state("build_commit", commit)
        builds.add(number)
    for number, commit in PROSE_BUILD_FIRST.findall(text):     # (`Build llama.cpp : 9442 (d4c8e2c29)`)
        state("build_commit", commit)
        builds.add(number)
    for number, commit in BUILD_INFO.findall(text):
        state("build_commit", commit)
        builds.add(number)
    # (`llama.cpp build `f53577432``, `(commit `9a5f57795`)`: a commit alone)
    if "build_commit" not in stated:
        for commit in PROSE_BUILD_COMMIT.findall(text):
            state("build_commit", commit)
    for number in builds:
        state("build_number", int(number))
    for match in MODEL_FLAG.finditer(text):      # (`llama-server -m x.gguf` quoted in prose)
        state_file(match.group(1).strip("'\"`"))
    if "model_filename" not in stated:      # (`llama.cpp b6500, Qwen3-8B-Q4_K_M.gguf`)
        files = {m.group(0).rsplit("/", 1)[-1] for m in GGUF_FILE.finditer(text)}
        if len(files) == 1:
            state_file(files.pop())
    for line in lines:
        if model := PROSE_MODEL.match(line):
            name = model.group(1).strip().strip("*` ")
            if (file := GGUF_FILE.match(name)) is not None:   # (`Model: x-Q4_K_M.gguf (16K..)`)
                state_file(file.group(0))
            else:
                state("model_type", name)
        for match in PROSE_DEVICE.finditer(line):
            field = "cpu_info" if match.group("what").lower() in ("cpu", "processor") \
                else "gpu_info"
            state(field, match.group("name").strip().strip("*` "))
            arch = match.group("arch")
            if arch and field == "gpu_info":     # (CUDA's as its compute capability: 8.6)
                digits = re.sub(r"\D", "", arch) if arch.lower().startswith("sm") else None
                state("gpu_arch", f"{digits[:-1]}.{digits[-1]}" if digits else arch)
    if "model_type" not in stated:      # (`## Qwen3-30B-A3B via hybrid offload`: one name)
        names = models_named(text)
        if len(names) == 1:
            state("model_type", names.pop())
    for match in PROSE_RADEON.finditer(text):     # (`gfx1151 (Radeon 8060S)`)
        state("gpu_arch", match.group("arch") or match.group("arch2"))
        state("gpu_info", (match.group("name") or match.group("name2")).strip())
    gpus = {" ".join(m.group(0).split()) for m in PROSE_GPU.finditer(text)}
    # (`the 3060` beside `RTX 3060 Laptop` is that one)
    bare = {" ".join(m.group(1).split()) for m in PROSE_BARE_GPU.finditer(text)}
    gpus |= {name for name in bare if not any(name in gpu for gpu in gpus)}
    # (`Arc A770` in a heading, `Intel Arc A770` below it, `RX 9070 XT` and `my 9070 XT`: one
    # GPU, named at its longest)
    kinds = {GPU_SERIES.sub("", VENDOR_WORDS.sub("", gpu).replace("-", " ")).replace(" ", "").lower()
             for gpu in gpus}
    if len(kinds) == 1 and "gpu_info" not in stated:        # (`on an RTX 3070`, `Apple M5`)
        state("gpu_info", max(gpus, key=len))
    cpus = {" ".join(m.group(0).split()) for m in PROSE_CPU.finditer(text)}
    if len(cpus) == 1 and "cpu_info" not in stated:        # (`an AMD Ryzen 7 5800X`)
        state("cpu_info", cpus.pop())
    for arch in {a.lower() for a in PROSE_GFX.findall(text)}:     # (`RADV GFX1152`)
        state("gpu_arch", arch)
    quants = {m.group("quant") for m in PROSE_QUANT.finditer(text)}
    if len(quants) == 1:                          # (`Qwen3.6-35B-A3B Q4_K_M, -ngl 999`)
        state("model_ftype", quants.pop())
    # (a bare `CPU` is no backend in prose: `experts on CPU`, `CPU offload`)
    words = {BACKENDS.get(w.lower()) for w in re.findall(r"[A-Za-z]+", text) if w.lower() != "cpu"}
    if PROSE_CPU_ONLY.search(text):
        words.add("CPU")
    words.discard(None)
    words.discard("BLAS")
    if len(words) == 1:
        stated["backends"] = words
    return {field: next(iter(values)) for field, values in stated.items()
            if len(values) == 1 and None not in values}


def run_context(context: Context) -> dict[str, Any]:
    """Fields every row of one table shares, from what was around it."""
    row: dict[str, Any] = {"section": context.section_text, "label": context.label_or_heading,
                           "tags": context.tags or None, "format": FORMAT.name}
    row.update(command_context(context))
    row.update(gpu_context(context.printed))
    row.update(build_from(context.printed.get("build")))
    # what the note's prose states, where the command and the printed lines say nothing (and
    # the model llama-cli's banner printed, `model      : x.gguf`, as a note would say it)
    printed_model = (f"model: {context.printed['model']}",) if "model" in context.printed else ()
    for field, value in stated_in_prose((*context.section, *context.prose,
                                         *printed_model)).items():
        row.setdefault(field, value)
    # ...and the devices and build the note printed last, in an earlier section
    for field, value in gpu_context(context.devices).items():
        row.setdefault(field, value)
    for field, value in build_from(context.devices.get("build")).items():
        row.setdefault(field, value)
    return row


def rejoin_bracketed(cells: list[str]) -> list[str]:
    """Cells split at a `|` inside brackets put back together: an `-ot` pattern like
    `blk\\.(1[0-9]|2[0-9])\\.ffn_(up|down)_exps=CPU` is one cell whose `|` are the regex's."""
    merged: list[str] = []
    for cell in cells:
        if merged and nesting(merged[-1], quotes="") > 0:
            merged[-1] += "|" + cell
        else:
            merged.append(cell)
    return merged


# A header as llama-bench prints it, or re-pasted from a rendered view without outer pipes.
# llama-bench's `t/s`, and the names a paste may have given it instead
RATE_NAMES = ("t/s", "tok/s", "tokens/s", "tps", "tok/sec", "tokens/sec", "t/sec")
HEADER_START = (r"^(?=(?:.*\|)?\s*model\s*\|)(?=.*\|\s*test\s*\|)"
                rf"(?=.*\|\s*(?:{'|'.join(RATE_NAMES)})\s*(?:\||$))")
HEADER_RE = re.compile(HEADER_START, re.I)
# The first part of a header a paste wrapped: the rest follows on the next line(s).  It ends
# inside a cell, or at a pipe when it is the printer's own padded header (`| model` and 24
# spaces: a table typed by hand that names no test is not one).
HEADER_PART = (r"^\s*\|\s*model(?:\s*\|\s*(?:model_)?size\s*\|\s*(?:model_n_)?params\s*\|"
               r"(?!.*\|\s*$)|\s{10,}\|\s*(?:model_)?size\s*\|\s*(?:model_n_)?params\s*\|)")
HEADER_PART_RE = re.compile(HEADER_PART, re.I)
# The rest of a wrapped header: header words up to a closing pipe, no digits.
HEADER_REST = re.compile(r"^\s*[^|\s\d][^|\d]*\|(?:[^|\d]*\|)*\s*$")
# A row of a table whose header was not pasted: model, size, params, ..., `mean ± std` last.
# Its numbers are taken as printed, not checked: a row with one unreadable number is still a
# row (that value a warning, llama_bench.build), and must not leave the rows after it to
# another format.  Size and params hold a digit; t/s is two words around `±`.
DATA_ROW = (r"^\s*\|?\s*[^|\s][^|]*\|\s*(?=[^|\s]*\d)[^|\s]+\s*(?:[KMGT]i)?B\s*\|"
            r"\s*(?=[^|\s]*\d)[^|\s]+\s*[KMBT]\s*\|(?:[^|]*\|)*?\s*[^|\s]+\s*"
            r"(?:±|Â±)\s*[^|\s]+\s*\|?\s*$")
DATA_ROW_RE = re.compile(DATA_ROW)
RULE_CELL = re.compile(r"^:?-+:?$")
EMPHASIS = re.compile(r"^(\*\*|__|`)(.+)\1$")
# The columns of a row without its header: llama-bench's default table (a CPU or BLAS backend
# prints `threads` where a GPU one prints `ngl`).
DEFAULT_COLUMNS = 7


def _is_header(cells: list[str]) -> bool:
    names = {cell.lower() for cell in cells}
    return "model" in names and "test" in names and "t/s" in names


def _own_names(cells: list[str]) -> list[str]:
    """A header row with llama-bench's `model` and `test`: its rate column named `t/s`."""
    names = {cell.lower() for cell in cells}
    if "model" in names and "test" in names and "t/s" not in names:
        return ["t/s" if cell.lower() in RATE_NAMES else cell for cell in cells]
    return cells


def _is_rule(cells: list[str]) -> bool:
    filled = [cell for cell in cells if cell]
    return bool(filled) and all(RULE_CELL.match(cell) for cell in filled)


def _plain(cell: str) -> str:
    """A cell without the markdown emphasis around it (`**45.08 ± 0.25**`)."""
    match = EMPHASIS.match(cell)
    return match.group(2).strip() if match else cell


def _header_rest(line: str) -> bool:
    """Could ``line`` be the rest of a header a paste wrapped?  (Header words and pipes: not
    a row of values, not a rule.)"""
    if HEADER_REST.match(line):
        return True
    return line.lstrip().startswith("|") and DATA_ROW_RE.search(line) is None \
        and not _is_rule([c.strip() for c in line.strip().strip("|").split("|")]) \
        and not any(ch.isdigit() for ch in line)


def _wrapped_header(lines: list[str], i: int) -> tuple[int, str] | None:
    """(its last line, the header joined) when the header a paste wrapped starts at line
    ``i``; None when no header starts there or it was not wrapped."""
    line = lines[i]
    if HEADER_RE.search(line):
        # whole, unless the wrap fell just before its closing pipe (`... | t/s` then `|`)
        if line.lstrip().startswith("|") and not line.rstrip().endswith("|") \
                and i + 1 < len(lines) and lines[i + 1].strip() == "|":
            return i + 1, line.rstrip() + " |"
        return None
    if not HEADER_PART_RE.match(line):
        return None
    joined = line
    for j in range(i + 1, min(i + 4, len(lines))):
        rest = lines[j]
        if not _header_rest(rest):
            return None
        # A hard wrap cuts anywhere: the pieces join as they are -- but spaces between the
        # two halves of a word (no header name holds one) are the note's indentation.
        inside_word = joined[-1:] not in ("", " ", "\t", "|") \
            and rest[:1].isspace() and not rest.lstrip().startswith("|")
        joined += rest.lstrip() if inside_word else rest
        if HEADER_RE.search(joined):
            if joined.rstrip().endswith("|") or j + 1 == len(lines) \
                    or lines[j + 1].strip() != "|":
                return j, joined
            return j + 1, joined.rstrip() + " |"
    return None


def rejoin_headers(lines: list[str]) -> tuple[list[str], dict[int, str]]:
    """``lines`` with each header a paste wrapped put back on its first line (the lines it
    took become blank, so every line keeps its number), and the raw text of each such header
    by its index."""
    out = list(lines)
    raws: dict[int, str] = {}
    i = 0
    while i < len(lines):
        wrapped = _wrapped_header(lines, i) if "model" in lines[i] else None
        if wrapped is None:
            i += 1
            continue
        last, joined = wrapped
        out[i] = joined
        out[i + 1:last + 1] = [""] * (last - i)
        raws[i] = "\n".join(lines[i:last + 1])
        i = last + 1
    return out, raws


def table_items(lines: list[str]) -> list[tuple]:
    """The block's rows and build lines; a line the grammar cannot read becomes
    ("foreign", line) and the others are still read."""
    text = "\n".join(lines) + "\n"
    try:
        return _parser().parse(text, start="start")
    except UnexpectedInput:
        pass
    items: list[tuple] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            found = _parser().parse(line + "\n", start="start")
        except UnexpectedInput:
            items.append(("foreign", number))
            continue
        items.extend((item[0], number, *item[2:]) for item in found)
    return items


def default_header(cells: list[str], context: dict[str, Any]) -> list[str] | None:
    """The columns of a row printed without its header, when they can be known: llama-bench's
    default seven, the fifth `threads` or `ngl` as the command line or the backend says."""
    if len(cells) != DEFAULT_COLUMNS:
        return None
    fifth = cells[4].strip()
    flags = [name for name, field in (("ngl", "n_gpu_layers"), ("threads", "n_threads"))
             if str(context.get(field)) == fifth]
    if len(flags) == 1:
        return ["model", "size", "params", "backend", flags[0], "test", "t/s"]
    cpu = re.search(r"CPU|BLAS", cells[3], re.I) is not None
    return ["model", "size", "params", "backend", "threads" if cpu else "ngl", "test", "t/s"]


@dataclass
class _Table:
    """Rows under one header (or under none: a paste that lost it) and its build line."""

    header: list[str] | None
    header_raw: str | None
    rows: list[tuple[int, list[str]]] = dc_field(default_factory=list)
    build: dict[str, Any] = dc_field(default_factory=dict)


def tables(block: Block) -> tuple[list[_Table], list[Problem]]:
    lines, raws = rejoin_headers(block.lines)
    found: list[_Table] = []
    problems: list[Problem] = []
    for kind, line, *rest in table_items(lines):
        if kind == "foreign":
            problems.append(Problem(block.line_start + line - 1, "not a line of the llama-bench "
                                    "table: skipped", block.lines[line - 1]))
            continue
        if kind == "build":
            if not found:
                found.append(_Table(None, None))
            found[-1].build = found[-1].build or {"build_commit": rest[0],
                                                  "build_number": rest[1]}
            continue
        cells = _own_names(rest[0])
        if len(cells) == 1 and "|" not in block.lines[line - 1]:
            continue        # no cell rule at all: a line typed into the paste, not a row
        if _is_header(cells):
            found.append(_Table(cells, raws.get(line - 1, block.lines[line - 1])))
        elif _is_rule(cells):
            continue
        else:
            if not found:
                found.append(_Table(None, None))
            found[-1].rows.append((line, cells))
    return found, problems


def build(block: Block) -> list[Parsed | Problem]:
    found, problems = tables(block)
    if not any(t.header is not None and "t/s" in (h.lower() for h in t.header) for t in found):
        # A header with no `t/s` column (`| vulkan t/s | cpu t/s |`): llama-bench's table,
        # retyped; the format that claims it reads it.
        other = claiming_format(block.lines, FORMAT, block_formats(), context=block.context)
        if other is not None:
            return other.build(replace(block, format=other))
    context = run_context(block.context)
    out: list[Parsed | Problem] = list(problems)
    for table in found:
        shared = {**context, **table.build}
        if table.header is None and table.rows:
            line, cells = table.rows[0]
            if len(cells) > DEFAULT_COLUMNS:
                cells = rejoin_bracketed(cells)
            if default_header(cells, context) is None:
                out.append(Problem(block.line_start + line - 1, f"llama-bench rows without "
                                   f"their header ({len(cells)} cells): which column is which "
                                   f"is not known, not read",
                                   "\n".join(block.lines[r - 1] for r, _ in table.rows)))
                continue
        numeric = numeric_columns(table)
        for line, cells in table.rows:
            out.append(_row(block, table, shared, line, cells, context, numeric))
    if not out:
        raise BlockParseError("llama-bench table has a header but no rows", 1)
    return sorted(out, key=_line_of)


# The columns a row starts with that say which model ran (text, never a setting's number).
MODEL_FIELDS = ("model_type", "model_filename", "model_size", "model_n_params", "backends")


def placed_by_ends(header: list[str], cells: list[str]) -> tuple[list[str], list[str]] | None:
    """A row with more cells than its header (a column the header lost: a fork's printer, a
    column deleted by hand): the model columns it starts with and its test and t/s, which
    llama-bench prints first and last, read from either end; the settings between them, whose
    place is not known, left out.  None when the header has no test column."""
    lower = [name.lower() for name in header]
    if "test" not in lower:
        return None
    test = lower.index("test")
    left = 0
    while left < test and COLUMN_FIELDS.get(lower[left], lower[left]) in MODEL_FIELDS:
        left += 1
    tail = len(header) - test
    return header[:left] + header[test:], cells[:left] + cells[len(cells) - tail:]


def _line_of(item: Parsed | Problem) -> int:
    return item.line if isinstance(item, Problem) else item.row.line_start


def numeric_columns(table: _Table) -> dict[int, int]:
    """Column → how many of the table's rows print a number there, for the columns kept in
    ``extra`` (no field knows them, so no type says what they hold)."""
    if table.header is None:
        return {}
    out: dict[int, int] = {}
    for i, name in enumerate(table.header):
        field = COLUMN_FIELDS.get(name.lower(), name.lower())
        if field in CELL_RULES or field == "model_type" or field in FIELDS \
                and field not in ("id", "extra", "env"):
            continue
        out[i] = sum(1 for _, cells in table.rows if len(cells) == len(table.header)
                     and not isinstance(loose(_plain(cells[i])), str))
    return out


def _row(block: Block, table: _Table, shared: dict[str, Any], line: int, cells: list[str],
         context: dict[str, Any], numeric: dict[int, int] | None = None) -> Parsed | Problem:
    where = block.line_start + line - 1
    raw = block.lines[line - 1] if table.header_raw is None else \
        "\n".join((table.header_raw, block.lines[line - 1]))
    header = table.header
    if header is None or len(cells) > len(header):
        cells = rejoin_bracketed(cells)
    if header is None:
        header = default_header(cells, context)
        if header is None:
            return Problem(where, f"row has {len(cells)} cells, the rows before it have "
                                  f"{DEFAULT_COLUMNS}", raw)
    unread: list[str] = []
    if len(cells) > len(header):
        placed = placed_by_ends(header, cells)
        if placed is not None:
            unread.append(f"row has {len(cells)} cells, the header has {len(header)}: its "
                          f"model columns and its test and t/s read by their place, the "
                          f"settings between them not read")
            header, cells = placed
            numeric = None          # (its counts are by the header's own columns)
    if len(cells) != len(header):
        return Problem(where, f"row has {len(cells)} cells, the header has {len(header)}", raw)
    cells = [_plain(cell) for cell in cells]
    try:
        values = row_values(header, cells, unread)
        tolerance = printed_tolerance(header, cells)
        fields = {k: v for k, v in shared.items() if k not in values}
        row = LlamaBenchResult(**fields, **values, line_start=where, line_end=where,
                               raw_text=raw)
    except ValueError as exc:        # pydantic's ValidationError is a ValueError
        reason = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
        return Problem(where, reason, raw)
    # An unknown column's cell kept as printed where every other row prints a number: a
    # number that cannot be read.
    for i, count in (numeric or {}).items():
        if cells[i] and isinstance(loose(cells[i]), str) and count == len(table.rows) - 1 > 0:
            unread.append(f"{header[i]}: {cells[i]!r} is not a number (the column's other rows "
                          f"are): kept as printed")
    return Parsed(row=row, tolerance=tolerance, warnings=[(where, reason) for reason in unread])


# A row of a table re-pasted from GitHub's rendered view: no outer pipes, cells ` | `-joined.
RENDERED_ROW = re.compile(r"^[^|]+(?:\s\|\s[^|]*){3,}$")
# Backend messages printed (stderr) between the rows while llama-bench runs: the table goes on
# after them (the grammar's BACKEND_LOG).
BACKEND_LOG = re.compile(r"^(?:ggml_\w+:|GGML_\w+:|\[SYCL\]|get_memory_info:|=+ Repacked \d+ tensors"
                         r"|[Ff]ound \d+ SYCL devices:|Running with Environment Variables:"
                         r"|Build with Macros:|SYCL Optimization Feature:)")


def continues(line: str) -> bool:
    """Table rows (a second table's header and rule too: `build` tells them apart), the rest
    of a wrapped header, `--progress` lines and backend messages."""
    stripped = line.lstrip()
    return (stripped.startswith("|") or stripped.startswith("llama-bench:")
            or BACKEND_LOG.match(stripped) is not None
            or RENDERED_ROW.match(stripped) is not None
            or HEADER_REST.match(stripped) is not None)


def _cells_of(line: str) -> int:
    return len(rejoin_bracketed(line.strip().strip("|").split("|")))


def resumes(lines: list[str], line: str) -> bool:
    """After a line that is not the table's (typed into the paste, a prompt), the table goes on
    at a row with as many cells as its header (or, a header wrapped, its last row)."""
    stripped = line.strip()
    if "|" not in stripped:
        return False
    for prior in reversed(lines):
        if HEADER_RE.match(prior) or prior.lstrip().startswith("|"):
            return _cells_of(prior) == _cells_of(stripped)
    return False


FORMAT = BlockFormat(
    name="llama_bench",
    table="llama_bench_results",
    description="llama.cpp llama-bench markdown table (any columns), with the device lines, "
                "command line and `build:` line around it.",
    upstream=("llama.cpp llama-bench (examples/llama-bench, tools/llama-bench) 2023 – 2026",
              "ik_llama.cpp llama-bench"),
    # a header holds `t/s`; its first part, when a paste wrapped it, `| model`
    markers=("t/s", "| model"),
    # `| model | ... | test | t/s |`, or rendered-and-re-pasted `model | ... | test | t/s`, or
    # the first part of a wrapped header.  (Rows printed without their header start the
    # llama_bench_rows format, which this build reads.)
    start=re.compile(f"{HEADER_START}|{HEADER_PART}", re.I),
    end=None,
    max_lines=100_000,
    build=build,
    commands=COMMANDS,
    preamble=PREAMBLE,
    lasting=LASTING,
    preamble_markers=("ggml_", "device", "build", "model"),
    continues=continues,
    trailer=TRAILER,
    resumes=resumes,
)
