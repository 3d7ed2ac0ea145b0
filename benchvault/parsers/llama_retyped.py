"""llama-bench results retyped by hand as a table → ``llama_bench_results`` rows.

People compare backends, builds or quantizations by copying llama-bench's t/s figures into a
table of their own, in one of three shapes::

    | Backend | Build           | pp512 (t/s)    | tg128 (t/s) |     tests as columns: each
    |---------|-----------------|----------------|-------------|     numeric cell under a test
    | ROCm    | 137435ff (8192) | 501.32 ± 0.97  | 32.69       |     is one result of its row

    | model        | test  | vulkan t/s | cpu t/s |                  a test column and t/s
    | llama 1B F16 | pp512 | 1140.81    | 98.20   |                  columns: one result per
                                                                    t/s column, named by it

    | Context | Vulkan RADV | HIP |                                  tests as rows, runs as
    | pp512   | 1,088 tok/s | 901 |                                  columns, named by them

A test is named as llama-bench names it (``pp512``, ``tg128``, ``pp512+tg128``, ``@ d4096``), in
a header or a first cell; headers that name both kinds alone (``PP (t/s)``, ``TG (t/s)``) are
sized by the ``-p`` / ``-n`` of the llama-bench command before the table, else the test is
``pp`` / ``tg``.  The other columns say what the result ran on, by llama-bench's own
markdown names (``model``, ``size``, ``backend``, ``ngl``, ``threads``...) or by their words
(``quant`` → ``model_ftype``, ``build`` → ``build_commit``/``build_number``, ``GPU`` →
``gpu_info``); any other goes to ``extra`` by its snake name.  A column named after runs
(``vulkan t/s``) labels its results, and names their backend when it is one.  llama-bench's own
table (``| model | ... | test | t/s |``) stays ``llama_bench``'s.  Every row says, in a warning,
that it was read by its header words.  The command, build line and devices around the table are
read as for ``llama_bench``.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from pydantic import ValidationError

from ..reading.tablecells import (ARROWS, CELL_REMARK, DIFFERENCE, SLASH, Table, arrow_cell,
                                  cell_number, cell_text, printed_number, table)
from ..schemas.llama_bench import LlamaBenchResult
from .base import STRAY, Block, Parsed, Problem, claimed_table, label_and_heading
from .grammar import snake_name
from .runcontext import engine_named_in, models_named
from .llama_bench import (BACKENDS, CELL_FLAG, COLUMN_FIELDS, COUNT_FACTORS, FIELDS, FLAG_FIELDS,
                          HEADER_RE, PROSE_GPU, QUANT_IN_NAME, QUANT_WORD, SIZE_FACTORS, build_from,
                          model_parts, run_context, test_name, typed)

# A test as llama-bench names it, anywhere in a header or a cell: `pp512`, `tg 128`,
# `pp512+tg128`, `pp512 @ d4096`; retyped, its size in brackets (`PP (512)`).
TEST = re.compile(r"(?<![A-Za-z0-9])(?:pp\s?\(?(?P<pp>\d+)\)?(?:\s?\+\s?tg(?P<pptg>\d+))?"
                  r"|tg\s?\(?(?P<tg>\d+)\)?)"
                  r"(?:\s?@\s?d|\s+d)?(?:(?<=d)(?P<depth>\d+))?(?![A-Za-z0-9])", re.I)
# Words that say a column holds tokens per second, left off a run's name.
RATE = re.compile(r"\(?\s*(?:t/s|tok/s(?:ec)?|tokens?/s(?:ec)?|tps)\s*\)?|\[(?:t/s|tok/s)\]", re.I)
# A label column's words → llama-bench field, beyond its own markdown names.
LABEL_WORDS = (
    (re.compile(r"^(?:backends?|engine|runtime|api)\b", re.I), "backends"),
    (re.compile(r"^(?:model|models|modelo|modèle|modell|模型|モデル)(?:\b|$)", re.I), "model_type"),
    (re.compile(r"^(?:quant(?:ization)?|ftype|file type|q(?:uant)? type)\b", re.I), "model_ftype"),
    (re.compile(r"^(?:build|commit)\b", re.I), "build"),
    # (`GPU Cores`, `GPU layers` are counts, not the device)
    (re.compile(r"^(?:gpu|gpus|device|devices|card|hardware|chip|soc|accelerator)"
                r"(?:\s+(?:model|name))?(?:\s*\([^()]*\))?$", re.I), "gpu_info"),
    (re.compile(r"^(?:size|model size)\b", re.I), "model_size"),
    (re.compile(r"^(?:arch|architecture|model arch)\b", re.I), "model_arch"),
    (re.compile(r"^(?:params|parameters)\b", re.I), "model_n_params"),
    (re.compile(r"^(?:flash ?attention|flash_attn)$", re.I), "flash_attn"),
    (re.compile(r"^cpu$", re.I), "cpu_info"),
    (re.compile(r"^(?:threads|n_threads)$", re.I), "n_threads"),
    (re.compile(r"^(?:gpu layers|n_gpu_layers)$", re.I), "n_gpu_layers"),
    (re.compile(r"^(?:batch|batch size|n_batch)$", re.I), "n_batch"),
    (re.compile(r"^(?:u-?batch|micro-?batch|ubatch size|n_ubatch)$", re.I), "n_ubatch"),
    # (a column of each row's prompt size: `| Input tokens | Prefill | Decode |`)
    (re.compile(r"^(?:input(?: size| length| len)?|prompt(?: size| length| len))"
                r"(?: \(?tok(?:en)?s?\)?)?$|^prompt \(?tok(?:en)?s?\)?$|^isl$", re.I), "n_prompt"),
    # (a column that names each row: `| run | prefill | decode |`)
    (re.compile(r"^(?:run|config(?:uration)?|setup|variant|case|scenario)s?$", re.I), "label"),
)
# scripts/compare-llama-bench.py's LLAMA_BENCH_PRETTY_NAMES, as its table heads the columns
# (read in the llama.cpp llama-cpp-python 0.3.36 vendors), by their lower-case header
COMPARE_PRETTY_NAMES = {
    "cpu": "cpu_info", "gpu": "gpu_info", "backends": "backends", "gpu layers": "n_gpu_layers",
    "tensor overrides": "tensor_buft_overrides", "file": "model_filename", "model": "model_type",
    "model size [gib]": "model_size", "num. of par.": "model_n_params", "batch size": "n_batch",
    "microbatch size": "n_ubatch", "embeddings": "embeddings", "cpu mask": "cpu_mask",
    "cpu strict": "cpu_strict", "poll": "poll", "threads": "n_threads", "k type": "type_k",
    "v type": "type_v", "load mode": "load_mode", "nkvo": "no_kv_offload",
    "split mode": "split_mode", "main gpu": "main_gpu", "tensor split": "tensor_split",
    "flashattention": "flash_attn"}
# llama-bench fields no label column gives (its result, where and how it was read).
NOT_LABELS = {"id", "extra", "env", "source_id", "line_start", "line_end", "raw_text", "section",
              "label", "tags", "format", "avg_ts", "stddev_ts", "avg_ns", "stddev_ns",
              "samples_ns", "samples_ts", "test", "n_prompt", "n_gen", "n_depth", "command"}
# A size retyped in the units it was written in (`17.3 GB`: what it says, not llama-bench's GiB).
DECIMAL_SIZES = {"KB": 10 ** 3, "MB": 10 ** 6, "GB": 10 ** 9, "TB": 10 ** 12}
HEADER_UNIT = re.compile(r"[(\[]\s*([KMGT]i?B|[KMBT])\s*[)\]]")     # `Size (GiB)`, `Params (B)`
COMMIT = re.compile(r"^[0-9a-f]{7,40}$")
# A build named in a cell that names more (`tq_head f97400563`, `upstream b10816`): a word of
# hex digits and letters both, or llama.cpp's release tag.
NAMED_BUILD = re.compile(r"(?<![\w.-])(?:(?P<commit>(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,12})"
                         r"|b(?P<number>\d{4,5}))(?![\w.-])")
BUILD_TAG = re.compile(r"^b(\d{3,5})(?:\s*[(\[][^()\[\]]*[)\]])?$", re.I)   # `b10964 (old)`
# ...and in a Build column, a bare `10472` too (a commit has letters, or 7 digits at least)
BUILD_NUMBER = re.compile(r"^b?(\d{3,5})(?:\s*[(\[][^()\[\]]*[)\]])?$", re.I)
# A column of the spread of the results in the column before it (`| tg128 t/s | stddev |`,
# `| old t/s | old sd |`): their stddev_ts.
SPREAD = re.compile(r"(?<![a-z])(?:sd|std|stdev|stddev|std\.? ?dev|standard deviation|±|\+/-)"
                    r"(?![a-z])", re.I)
LOOSE_BUILD = re.compile(r"^([0-9a-f]{6,40})\s*\(([^()]*)\)$")   # `137435ff (8!92)`
PLUS_MINUS = re.compile(r"\s*(?:±|\+/-|\+-)\s*")      # between a mean and its spread
SPREAD_IN_BRACKETS = re.compile(r"\s*\(\s*(?:±|\+/-|\+-)\s*([^()]*?)\s*\)")   # (`25.59 (±0.04)`)
# A number and a remark after it that holds no digit (`215.3 ✓`, `16.80 ← regression`).
WORDS_AFTER = re.compile(r"^([~≈]?\s*[-+−]?[\d.,]*\d)\s+([^\d\s][^\d]*)$")
# A build number written without its `b` among a build cell's words (`ik 4706 (70ea1522)`).
BARE_NUMBER = re.compile(r"(?<![\w.-])b?(\d{3,5})(?![\w.-])")


# A header that names a test's kind but not its size (`PP (t/s)`, `tg`, `Prompt processing`):
# the size is the command's `-p` / `-n`, when it gave one.
BARE_TESTS = {"pp": "pp", "prompt processing": "pp", "prompt": "pp", "prompt eval": "pp",
              "prefill": "pp",
              "tg": "tg", "text generation": "tg", "token generation": "tg", "generation": "tg",
              "gen": "tg", "eval": "tg", "decode": "tg",
              # (in the languages notes are written in: `Generación`, `Génération`, `生成`)
              "generación": "tg", "generacion": "tg", "génération": "tg", "geração": "tg",
              "生成": "tg", "解码": "tg", "预填充": "pp", "提示词": "pp"}
# A header that names a rate and nothing else (`Tokens per Second`, `Speed (t/s)`, `tok/s`).
BARE_RATE = re.compile(r"^(?:(?:avg|average|mean|speed|rate)\s*)?[(\[]?\s*(?:t/s|tok/s|tokens?/s(?:ec)?"
                       r"|tps|tokens?\s+per\s+sec(?:ond)?|tokens?/second)\s*[)\]]?$", re.I)
# Words after a kind that name no more than its rate (`PP speed`, `Prompt eval rate`).
KIND_SUFFIX = re.compile(r"\s+(?:speed|rate|throughput|perf(?:ormance)?)$", re.I)
SIZE_FLAG = {"pp": re.compile(r"(?:^|\s)(?:-p|--n-prompt)[\s=]+(\d+)(?=\s|$)"),
             "tg": re.compile(r"(?:^|\s)(?:-n|--n-gen)[\s=]+(\d+)(?=\s|$)")}


def bare_test(kind: str, command: str | None) -> dict[str, int | None]:
    """The test of a ``kind`` (`pp`, `tg`) a header names alone, sized by the command when it
    can be (else its size is None)."""
    sized = SIZE_FLAG[kind].search(command or "")
    size = int(sized.group(1)) if sized else None
    return {"n_prompt": size if kind == "pp" else 0, "n_gen": size if kind == "tg" else 0,
            "n_depth": 0}


def bare_kind(header: str) -> tuple[str, str] | None:
    """(kind, run) of a header that names a test's kind but not its size, alone (`PP (t/s)`)
    or after a run's name (`CPU PP`: the run `CPU`); None for any other header."""
    name = KIND_SUFFIX.sub("", _run_name(header))
    if (kind := BARE_TESTS.get(name.lower())) is not None:
        return kind, ""
    run, _, last = name.rpartition(" ")
    kind = BARE_TESTS.get(last.lower())
    words = name.split()
    if kind is None and len(words) > 2:     # (`CPU prompt processing`)
        run, last = " ".join(words[:-2]), " ".join(words[-2:])
        kind = BARE_TESTS.get(last.lower())
    # ...or the run after the kind, in a header of a rate (`TG tok/sec main@144ee1c4`, not
    # `Prompt tok`, a count)
    if kind is None and RATE.search(cell_text(header)):
        for size in (2, 1):
            lead = " ".join(words[:size]).lower()
            if len(words) > size and lead in BARE_TESTS:
                kind, run = BARE_TESTS[lead], " ".join(words[size:])
                break
    run = run.strip(" `()[]")
    return (kind, run) if kind and run else None


# A kind's one word among a row name's others, where the rows of a llama.cpp table describe
# what each measured (`Initial ~14K prompt`, `Generation near 18-20K`).
KIND_WORD = re.compile(r"(?<![\w-])(prompt|prefill|generation|decode|pp|tg)(?![\w-])", re.I)


def _kind_in_words(name: str) -> tuple[str, str] | None:
    """(kind, "") of the one kind a row's name says among other words, None for none or two."""
    kinds = {BARE_TESTS[m.group(1).lower()] for m in KIND_WORD.finditer(cell_text(name))}
    return (kinds.pop(), "") if len(kinds) == 1 else None


# A test named in words with its size (`Prompt processing (512)`, `Text generation 128`).
# The whole header or cell is the test, a rate's unit at most after it (not `chunked prefill
# (8192)`, a setting among other words).
WORD_TEST = re.compile(r"^\s*(?P<kind>prompt processing|prompt eval(?:uation)?|prefill|"
                       r"text generation|token generation|generation|decode)\s*[(\[]?\s*"
                       r"(?P<size>\d{1,6})\s*(?:tok(?:en)?s?)?\s*[)\]]?"
                       r"(?:\s*(?:@\s*)?d(?P<depth>\d{1,7}))?"
                       r"\s*(?:[(\[]?\s*(?:t/s|tok/s|tokens?/s(?:ec)?)\s*[)\]]?)?\s*$", re.I)


def test_of(text: str) -> dict[str, int] | None:
    """n_prompt / n_gen / n_depth of the test ``text`` names, None when it names none."""
    match = TEST.search(cell_text(text))
    if match is None and (worded := WORD_TEST.match(cell_text(text))) is not None:
        size = int(worded.group("size"))
        pp = worded.group("kind").lower().startswith(("prompt", "prefill"))
        return {"n_prompt": size if pp else 0, "n_gen": 0 if pp else size,
                "n_depth": int(worded.group("depth") or 0)}
    if match is None:
        return None
    pp = match.group("pp")
    return {"n_prompt": int(pp or 0), "n_gen": int(match.group("pptg") or match.group("tg") or 0),
            "n_depth": int(match.group("depth") or 0)}


def _rate(text: str, name: str = "") -> dict[str, Any] | None:
    """avg_ts (and stddev_ts after `±`) of a cell; None when it holds no number at all (`—`,
    `OOM`).  A half that holds digits but reads as no number (a garbled `1!88`) is left empty,
    with its reason in ``_unread``."""
    text = SPREAD_IN_BRACKETS.sub(r" ± \1", cell_text(text))
    parts = PLUS_MINUS.split(text)
    out: dict[str, Any] = {}
    for key, part in zip(("avg_ts", "stddev_ts"), parts[:2]):
        value, _ = cell_number(part)
        if value is None and (remark := WORDS_AFTER.match(part)):    # (`16.80 ← regression`)
            value, _ = cell_number(remark.group(1))
        if value is not None:
            out[key] = value
        elif re.search(r"\d", part):
            out.setdefault("_unread", []).append(
                f"{cell_text(name) or 't/s'}: {part!r} is not a number: left empty")
    if "avg_ts" not in out and "_unread" not in out:
        return None
    return out


def _rate_at(row: list[str], header: list[str], i: int) -> dict[str, Any] | None:
    """The rate of a row's ``i``-th cell (None where the row is short of it), with the spread
    the column after it gives (SPREAD) when the cell has none."""
    rate = _rate(row[i], header[i]) if i < len(row) else None
    after = i + 1
    if rate is not None and "stddev_ts" not in rate and after < len(row) \
            and _is_spread(header, after):
        text = cell_text(row[after])
        lead = PLUS_MINUS.match(text)           # (`±0.66`: the spread alone)
        spread, _ = cell_number(text[lead.end():] if lead else text)
        if spread is not None:
            rate["stddev_ts"] = spread
    return rate


def _is_spread(header: list[str], i: int) -> bool:
    """Column ``i`` holds the spread of the results in the column before it."""
    return 0 < i < len(header) and SPREAD.search(cell_text(header[i])) is not None \
        and TEST.search(cell_text(header[i])) is None


def _run_name(header: str) -> str:
    return " ".join(RATE.sub(" ", cell_text(header)).split()).strip(" -:")


# Words beside a test in a header that name no run (`pp512 avg`, `tg128 (mean)`).
NOT_A_RUN = re.compile(r"^(?:avg|average|mean|median|result|speed|rate|perf(?:ormance)?)$", re.I)


def _test_run(header: str) -> str:
    """The run a header names beside its test (`Vulkan pp512`, `pp512 ROCm` → the backend's
    name), "" for none."""
    words = TEST.sub(" ", _run_name(header))
    words = " ".join(re.sub(r"[()\[\],]|:(?!\w)", " ", words).split())   # (`gemma4:26b`)
    return "" if not words or NOT_A_RUN.match(words) or SPREAD.search(words) else words


VERSION_AFTER = re.compile(r"(?<=[a-z])\d+(?:\.\d+)*$")
LONGEST_NAME = 200      # (a cell that long is text, not a name)


def _named_backend(name: str) -> str | None:
    """The backends ``name``'s words name (`llama.cpp Vulkan RADV`, `vLLM + ROCm`, `CUDA,BLAS`);
    a word of a name or a path (`build-rpc-hip-v2`) names none."""
    if len(name) > LONGEST_NAME:
        return None
    words = [BACKENDS.get(w) or w[-1:].isdigit() and BACKENDS.get(VERSION_AFTER.sub("", w))
             for w in (w.strip("()[]").lower() for w in re.split(r"[\s+,/]+", name))]  # (`ROCm7`)
    return ",".join(dict.fromkeys(w for w in words if w)) or None


def _build_of(named: re.Match[str]) -> dict[str, Any]:
    """The build a NAMED_BUILD match names."""
    if named.group("commit"):
        return {"build_commit": named.group("commit")}
    return {"build_number": int(named.group("number"))}


def _field_of(name: str) -> str | None:
    """The llama-bench field a label column's header names, by its own name or its words."""
    header = cell_text(name)
    key = header.lower().replace("-", "_")
    return COLUMN_FIELDS.get(header.lower()) or COMPARE_PRETTY_NAMES.get(header.lower()) \
        or next((f for pattern, f in LABEL_WORDS if pattern.match(header)), None) \
        or (FLAG_FIELDS.get(key) if len(key) > 1 else None) \
        or (key if key in FIELDS and key not in NOT_LABELS else None)   # (`n_cpu_moe`)


# A figure with a character a paste garbled (`6!.8`, `?2`): digits, and a stray symbol.
GARBLED_FIGURE = re.compile(rf"(?=.*[{STRAY}])[\d.,{STRAY}]+")


# A backend column's one word that names no backend llama.cpp registers: a fork's or a build's
# name for it (ik_llama.cpp's `AVX2`, `Zen4`, `NEON`), the backend as the table says it.
ONE_WORD_BACKEND = re.compile(r"[A-Za-z][\w.+-]{1,15}")


def _label_values(name: str, cell: str) -> dict[str, Any]:
    """What a label column's cell says of the row, by its header's words."""
    text = cell_text(cell)
    if not text or re.fullmatch(r"[-–—?]+", text):
        return {}
    header = cell_text(name)
    if not header and cell_number(text)[0] is None:     # (a top-left cell left empty: names)
        return {"label": text}
    field = _field_of(name)
    if field == "model_type":
        parts = model_parts(text)
        # (`Llama 2 7B Q4_K_M`: the quantization, not the words model_parts left before it)
        if (quant := QUANT_WORD.search(text)) and not (parts.get("model_ftype") or "").startswith(
                quant.group("quant")):
            parts["model_ftype"] = quant.group("quant")
        return {**parts, "model_type": text}
    if field == "model_filename":   # (its quantization in its name: `Qwen3-8B-Q4_K_M.gguf`)
        quant = QUANT_WORD.search(text)
        return {"model_filename": text, **({"model_ftype": quant.group("quant")} if quant else {})}
    if field == "model_arch":       # (`\`qwen35\` (hybrid)`: the architecture's name)
        return {"model_arch": text.split()[0]}
    if field == "backends":     # (`Host (build-rpc-hip-v2)` names a host, not a backend)
        named = _named_backend(text) or (text if ONE_WORD_BACKEND.fullmatch(text) else None)
        return {"backends": named} if named else {"extra": {"backend": text}}
    if field == "build":
        if built := build_from(text):
            return built
        if short := BUILD_NUMBER.match(text):
            return {"build_number": int(short.group(1))}
        if loose := LOOSE_BUILD.match(text):
            return {"build_commit": loose.group(1), "_unread": [
                f"{header}: {loose.group(2)!r} is not a build number: left empty"]}
        # (`ik 4706 (`70ea1522`)`, `Lemonade prebuilt b1270 (`39cf5d6`)`: both, in words)
        named = list(NAMED_BUILD.finditer(text))
        commits = {m.group("commit") for m in named if m.group("commit")}
        numbers = {int(m.group("number")) for m in named if m.group("number")}
        if len(commits) == 1 and not numbers:
            commit = next(m for m in named if m.group("commit"))
            if number := BARE_NUMBER.search(text[:commit.start()] + " " + text[commit.end():]):
                numbers = {int(number.group(1))}
        if len(commits) == 1 or not commits and len(numbers) == 1:
            return {**({"build_commit": commits.pop()} if commits else {}),
                    **({"build_number": numbers.pop()} if len(numbers) == 1 else {})}
        return {"build_commit": text}
    if field in ("model_size", "model_n_params"):
        words = re.sub(r"^([\d.,]+)([A-Za-z]+)$", r"\1 \2", text).split()    # (`1.10B`)
        factors = {**SIZE_FACTORS, **DECIMAL_SIZES} if field == "model_size" else COUNT_FACTORS
        unit = HEADER_UNIT.search(header)
        if len(words) == 1 and unit is not None:        # (`Size (GiB)` over `4.58`)
            words.append(unit.group(1))
        value, _ = cell_number(words[0]) if words else (None, None)
        if len(words) == 2 and value is not None and words[1] in factors:
            return {field: round(value * factors[words[1]])}
        return {"extra": {snake_name(header): text}}
    if field is not None and field in FIELDS and field not in ("id", "extra", "env"):
        # (`0 (all GPU)`; `2,000` written with a thousands' comma)
        for value in dict.fromkeys((text, CELL_REMARK.sub("", text), printed_number(text)[0] or "")):
            try:
                return {field: typed(field, value)}
            except ValueError:
                pass
    number, _ = cell_number(text)
    if number is None and GARBLED_FIGURE.fullmatch(text):     # (`6!.8`: a figure garbled)
        return {"_unread": [f"{header or 'a cell'}: {text!r} is not a number: left empty"]}
    return {"extra": {snake_name(header) or "label": number if number is not None else text}}


# Two tests in one header, their rates in one cell (`pp512 / tg128 (t/s)` over `1234 / 56.7`).
JOINED_TESTS = re.compile(r"(?<![\w/])([A-Za-z]+\s?\(?\d*\)?)\s*/\s*([A-Za-z]+\s?\(?\d*\)?)(?![\w/])")


def _joined_names(header: str) -> list[str] | None:
    """The headers of the tests one header joins with `/`, None when it joins none."""
    text = cell_text(header)
    for match in JOINED_TESTS.finditer(text):
        parts = match.groups()
        if all(test_of(p) or BARE_TESTS.get(p.lower()) for p in parts):
            return [text[:match.start()] + p + text[match.end():] for p in parts]
    return None


# A header that names the two runs an arrow cell compares (`Before → After`, `b10964 -> b11207`).
ARROW_HEADER = re.compile(r"^(?P<before>.+?)\s*" + ARROWS + r"\s*(?P<after>.+)$")


def _split_arrows(t: Table) -> Table:
    """The table with each column of arrow cells (`1314.23 → 1514.80`) as two columns, the
    runs before and after, named by the header's two sides (`Before → After`) or `before` and
    `after` beside its own name."""
    header, body = list(t.header), [(i, list(row)) for i, row in t.body]
    for c in reversed(range(1, len(header))):
        cells = [cell_text(row[c]) if c < len(row) else "" for _, row in body]
        sides = [arrow_cell(text) for text in cells]
        if not any(sides) or any(not m and re.search(r"\d", text) for m, text in zip(sides, cells)):
            continue
        named = ARROW_HEADER.match(cell_text(header[c]))
        header[c:c + 1] = [named.group("before"), named.group("after")] if named else \
            [f"{cell_text(header[c])} before".strip(), f"{cell_text(header[c])} after".strip()]
        for (_, row), m in zip(body, sides):
            if c < len(row):
                row[c:c + 1] = [m.group("before"), m.group("after")] if m else [row[c], row[c]]
    return Table(header, body)


def _split_columns(t: Table) -> Table:
    """The table with each column of joined tests (`pp512 / tg128`) as a column a test, when
    every cell of it holds a rate per test."""
    header, body = list(t.header), [(i, list(row)) for i, row in t.body]
    for c in reversed(range(len(header))):
        names = _joined_names(header[c])
        if names is None:
            continue
        cells = [SLASH.split(cell_text(row[c])) if c < len(row) and re.search(r"\d", row[c])
                 else None for _, row in body]            # (a cell of no figure: `—`, `OOM`)
        if not any(cells) or any(parts is not None and (len(parts) != len(names) or any(
                _rate(p) is None for p in parts)) for parts in cells):
            continue
        header[c:c + 1] = names
        for (_, row), parts in zip(body, cells):
            if c < len(row):
                row[c:c + 1] = parts or [""] * len(names)
    return Table(header, body)


SERVING_WORDS = re.compile(r"\b(?:ttft|tpot|itl|e2el?|req(?:uest)?s?\s*/\s*s|qps|rps|concurren\w*)\b",
                           re.I)


def _of_llama(t: Table, skip: Iterable[int]) -> bool:
    """A row's other cells name a GGUF file, a quantization or a llama.cpp backend: the table
    is llama.cpp's, with one test's kind only (`| Model | TG t/s |`).  Not when a header names
    a serving figure (`TTFT`, `req/s`): a serving table's `Decode tok/s` is no llama test."""
    if any(SERVING_WORDS.search(cell_text(h)) for h in t.header):
        return False
    for _, row in t.body:
        for i, cell in enumerate(row):
            if i in skip:
                continue
            text = cell_text(cell)
            if ".gguf" in text.lower() or QUANT_WORD.search(text) or any(
                    BACKENDS.get(w.lower()) not in (None, "CPU", "BLAS")
                    for w in re.findall(r"[A-Za-z]+", text)):
                return True
    return False


def _results(t: Table, command: str | None = None, heading: str = "", of_llama: bool = False,
             said: str = "") -> list[tuple[int, dict[str, Any]]] | None:
    """(line index, values) of each result the table holds, None when it is no table of
    llama-bench results.  ``command``: the llama-bench command before it (sizes `pp`);
    ``heading``: the heading or label over it (names the test of t/s columns that name none);
    ``of_llama``: the note around says it ran llama.cpp (a bare `tok/s` column is its);
    ``said``: the words over it (a unit its figures do not print, `Decode speed (tok/s):`)."""
    t = _split_columns(_split_arrows(t))
    header = t.header
    tests = {i: test_of(h) for i, h in enumerate(header)}
    tests = {i: v for i, v in tests.items() if v is not None}
    runs: dict[int, dict[str, Any]] = {}
    kinds_named = not tests
    guessed = None          # the one bare t/s column read as generation
    sized_test = None       # the one test the words over a table of rates name (`tg128`)
    if not tests:       # `| GPU | PP (t/s) | TG (t/s) |`: both kinds, or it is no such table
        kinds = {i: bare_kind(h) for i, h in enumerate(header)}
        kinds = {i: kind for i, kind in kinds.items() if kind}
        found_kinds = {kind for kind, _ in kinds.values()}
        bare = [i for i, h in enumerate(header) if BARE_RATE.match(cell_text(h))]
        # (rows that name their tests, `| test | t/s |` over `pp512`: read below, by row)
        rows_name_tests = any(row and (test_of(row[0]) or bare_kind(row[0])
                                       or _kind_in_words(row[0])) for _, row in t.body) or any(
            cell_text(h).lower() == "test" for h in header)
        if not kinds and len(bare) == 1 and not rows_name_tests \
                and (of_llama or _of_llama(t, bare)):
            # (`| Model | Quantization | Tokens per Second |`: the speed people quote of a
            # llama.cpp model is its generation's; said in a warning)
            kinds, found_kinds = {bare[0]: ("tg", "")}, {"tg"}
            guessed = bare[0]
        # (not where the rows name the tests: the columns are runs of them, read below)
        rated = [] if kinds or bare or rows_name_tests \
            else _rate_columns(t, RATE_SAID.search(said) is not None)
        if rated and not (of_llama or _of_llama(t, rated)
                          or any(GGUF_QUANT.search(cell_text(h)) for h in header)):
            rated = []          # (tokens per second of some other program's)
        if rated:
            # (`| Model | RTX 4090 | M4 Max |` over `145.2 t/s`: a run per column, of the kind
            # the heading names, else of generation's, said in a warning)
            # (or the words over it: `Token generation speed (t/s), tg128:`)
            named_kind = _kind_in_words(heading) or _kind_in_words(said)
            kind = named_kind[0] if named_kind else "tg"
            kinds = {i: (kind, header[i] if len(rated) > 1 else "") for i in rated}
            found_kinds = {kind}
            guessed = None if named_kind else rated[0]
            sized = _heading_test(heading) or _heading_test(said)
            if sized and (sized["n_gen"] > 0) == (kind == "tg"):
                sized_test = sized
        if found_kinds == {"pp", "tg"} or found_kinds and (command or rated or of_llama
                                                             or _of_llama(t, kinds)):
            tests = {i: sized_test or bare_test(kind, command) for i, (kind, _) in kinds.items()}
            runs = {i: _run(run, list(kinds)) for i, (_, run) in kinds.items() if run}
    out: list[tuple[int, dict[str, Any]]] = []
    if tests and not kinds_named:   # (`Vulkan pp512 | ROCm pp512`: a run's name by the test)
        named = {i: _test_run(header[i]) for i in tests}
        by_test: dict[tuple, set[str]] = {}
        for i, test in tests.items():
            by_test.setdefault(tuple(sorted(test.items())), set()).add(named[i])
        if any(len(names) >= 2 for names in by_test.values()):     # one test, several runs
            runs = {i: _run(n, list(tests)) for i, n in named.items() if n}
    if tests:                                           # tests as columns
        depth = next((i for i, h in enumerate(header) if DEPTH.match(cell_text(h))), None)
        for index, row in t.body:
            labels = _labels(header, row, skip={*tests, *([depth] if depth is not None else [])})
            at = _depth(row, depth)
            for i, test in tests.items():
                rate = _rate_at(row, header, i)
                if rate is not None and i == guessed and not out:   # (once a table)
                    rate.setdefault("_unread", []).append(
                        f"{cell_text(header[i])!r} names no test: read as token generation (tg)")
                if rate is not None:
                    test = {**test, "n_depth": at} if at and not test["n_depth"] else test
                    out.append((index, merged(labels, test, rate, runs.get(i))))
        return out or None
    rates = [i for i, h in enumerate(header) if RATE.search(cell_text(h))]
    test_column = next((i for i, h in enumerate(header) if cell_text(h).lower() == "test"), None)
    # The column that names each row's test: the first, or one after the rows' names
    # (`| Model | Metric | Vulkan | HIP |` over `| Llama 7B Q4_K_M | pp512 | 1,074 | 1,182 |`).
    # (a row of no figure, `| **Average** | — | — |`, names none)
    figured = [row for _, row in t.body if any(cell_number(cell)[0] is not None
                                                for cell in row[1:])]
    named_at = next((c for c in range(1, len(header)) if c != test_column and len(figured) >= 2
                     and all(c < len(row) and test_of(row[c]) for row in figured)), 0)
    first = [test_of(row[named_at]) if len(row) > named_at else None for _, row in t.body]
    described: set[int] = set()     # rows whose words name their test's kind
    if first and not all(first):        # (rows named by kind alone: `Prompt processing`)
        kinds = [bare_kind(DEPTH_SUFFIX.sub("", row[0])) if row else None for _, row in t.body]
        kinds = [k if k and not k[1] else None for k in kinds]
        if not named_at and _of_llama(t, ()):  # (`Initial ~14K prompt`, `Generation near 18K`)
            worded = [None if k else _kind_in_words(row[0] if row else "")
                      for k, (_, row) in zip(kinds, t.body)]
            described = {index for w, (index, _) in zip(worded, t.body) if w}
            kinds = [k or w for k, w in zip(kinds, worded)]
        if {k[0] for k in kinds if k} | {"pp" if f["n_prompt"] else "tg"
                                         for f in first if f} == {"pp", "tg"}:
            first = [f or (_at_depth(bare_test(k[0], command), row) if k else None)
                     for f, k, (_, row) in zip(first, kinds, t.body)]
    # (a row that names no test among rows that do, `Real prompting avg`: kept as raw text)
    others = [i for i, f in enumerate(first) if not f]
    settings: list[list[str]] = []      # rows of settings among the tests (`| GGUF | Q5_K_M |`)
    if first and len(first) - len(others) >= max(2, len(others) + 1) \
            and (test_column is None or test_column == 0 and not rates):
        for i in others:
            out.append((t.body[i][0], {"_skipped": "a row that names no llama-bench test "
                                                   "among rows that do: kept as raw text"}))
        settings = [t.body[i][1] for i in others if not named_at]
        t = Table(header, [row for i, row in enumerate(t.body) if i not in others])
        first = [f for f in first if f]
    if test_column is not None and not rates and all(    # (`| model | test | ROCm | Vulkan |`)
            test_column < len(row) and test_of(row[test_column]) for _, row in t.body):
        rates = [i for i in range(1, len(header)) if i != test_column
                 and _field_of(header[i]) is None and not DIFFERENCE.search(cell_text(header[i]))
                 and _holds_results(t, i)]
    if test_column is not None and rates:               # a test column, t/s columns
        for index, row in t.body:
            test = test_of(row[test_column]) if test_column < len(row) else None
            if test is None:
                continue
            labels = _labels(header, row, skip={test_column, *rates})
            for i in rates:
                rate = _rate_at(row, header, i)
                if rate is not None:
                    out.append((index, merged(labels, test, rate, _run(header[i], rates))))
        return out or None
    if first and all(first):                            # tests as rows, runs as columns
        runs = [i for i in range(named_at + 1, len(header)) if not _is_spread(header, i)
                and not DIFFERENCE.search(cell_text(header[i]))      # (`speedup`, `Δ`)
                and any(_rate_at(row, header, i) for _, row in t.body)
                and (not named_at or _field_of(header[i]) is None and any(
                    "avg_ts" in (_rate_at(row, header, i) or {}) for _, row in t.body))]
        # (what a row of settings says of each run's column: its quantization, its build)
        stated = {i: {k: v for row in settings if i < len(row) and row[0]
                      for k, v in _labels([row[0]], [row[i]], set()).items()
                      if k in ("model_ftype", "build_commit", "build_number", "backends")}
                  for i in runs}
        for (index, row), test in zip(t.body, first):
            # (the columns before the test's name the row: `Model`)
            labels = _labels(header[:named_at], row[:named_at], set()) if named_at else {}
            if index in described:      # (the row's words name what its test measured)
                labels["label"] = cell_text(row[0])
            for i in runs:
                rate = _rate_at(row, header, i)
                if rate is not None and index in described and "avg_ts" not in rate:
                    # (no figure for a test named by its kind alone: no row, which would be
                    # taken for the run of that kind in another row; the reason, as a warning)
                    unread = "; ".join(m.replace(": left empty", "") for m in rate["_unread"])
                    out.append((index, {"_skipped": f"{unread}: no figure, kept as raw text"}))
                elif rate is not None:
                    out.append((index, merged({**stated[i], **labels}, test, rate,
                                              _run(header[i], runs))))
        return out or None
    named = _heading_test(heading)
    depths = {i: d for i, h in enumerate(header) if (d := _depth_header(h)) is not None}
    if named is not None and len(depths) >= 2:          # depths as columns, the test over them
        for index, row in t.body:
            labels = _labels(header, row, skip=set(depths))
            for i, depth in depths.items():
                rate = _rate_at(row, header, i)
                if rate is not None:
                    out.append((index, merged(labels, {**named, "n_depth": depth}, rate)))
        return out or None
    if named is not None and not rates:     # (`| Model | Vulkan Radv | ROCm 7 |` of `13.65 ± 0.02`)
        rates = [i for i in range(1, len(header)) if _field_of(header[i]) is None
                 and not DIFFERENCE.search(cell_text(header[i])) and _holds_results(t, i)]
    if rates and named is not None:                     # t/s columns, the test named over them
        for index, row in t.body:
            labels = _labels(header, row, skip=set(rates))
            for i in rates:
                rate = _rate_at(row, header, i)
                if rate is not None:
                    out.append((index, merged(labels, named, rate, _run(header[i], rates))))
        return out or None
    return None


RATE_UNITS = {"t/s", "tok/s", "tokens/s", "token/s", "tok/sec", "tps"}
# A quantization only a GGUF file has (`Q4_K_M`, `IQ3_S`), not one vLLM serves too (`BF16`).
GGUF_QUANT = re.compile(r"(?<![A-Za-z0-9])(?:UD-)?(?:I?Q\d(?:_[A-Z0-9]+)+|TQ\d_\d)(?![A-Za-z0-9])")


def _rate_columns(t: Table, said: bool = False) -> list[int]:
    """The columns (after the first) that no field names and whose figures say they are
    tokens per second: in most of their cells (`145.2 t/s`), or in some and the rest bare
    figures (`25.6 tok/s`, `27.5`), or, ``said`` (the words over the table give the unit),
    in none and all bare figures."""
    out = []
    for i in range(1, len(t.header)):
        if _field_of(t.header[i]) is not None or DIFFERENCE.search(cell_text(t.header[i])) \
                or _depth_header(t.header[i]) is not None:      # (`@16K`: read by its depth)
            continue
        cells = [cell_text(row[i]) for _, row in t.body if i < len(row) and cell_text(row[i])]
        figures = [cell_number(PLUS_MINUS.split(c)[0]) for c in cells]
        units = [(unit or "").lower() for _, unit in figures]
        rated = sum(u in RATE_UNITS for u in units)
        bare = sum(value is not None and unit is None for value, unit in figures)
        if cells and (2 * rated > len(cells)
                      or rated + bare == len(cells) and (rated or said and bare >= 2)):
            out.append(i)
    return out


def _holds_results(t: Table, i: int) -> bool:
    """Column ``i`` holds llama-bench's results though its header names no rate: most of its
    cells are `mean ± std`, or its header names a backend and its cells are figures."""
    rates = [_rate_at(row, t.header, i) or {} for _, row in t.body]
    if _named_backend(cell_text(t.header[i])):
        return any("avg_ts" in rate for rate in rates)
    return 2 * sum("stddev_ts" in rate for rate in rates) >= len(rates) > 0


# A column of the depth the tests ran at (llama-bench's `-d`): `| Depth | PP (t/s) | TG (t/s) |`.
DEPTH = re.compile(r"^(?:n_depth|depth|context depth|ctx depth|kv depth|prefilled context)$",
                   re.I)


# A depth as a cell writes it (`4096`, `d4096`, `4k`), and as a column of one depth's results
# is headed (`@16K`, `d4096`, `@ d0`): llama-bench's `-d`, its `K` 1,024.
DEPTH_CELL = re.compile(r"^d?\s*(\d+)\s*([kK])?$")
DEPTH_HEADER = re.compile(r"^(?:@\s*d?|d|depth\s*)(\d+)\s*([kK])?$", re.I)


def _depth_in(pattern: re.Pattern[str], text: str) -> int | None:
    match = pattern.match(cell_text(text).replace(",", ""))
    return int(match.group(1)) * (1024 if match.group(2) else 1) if match else None


def _depth(row: list[str], column: int | None) -> int:
    """The depth a row's depth cell gives, 0 for none."""
    if column is None or column >= len(row):
        return 0
    return _depth_in(DEPTH_CELL, row[column]) or 0


def _depth_header(header: str) -> int | None:
    return _depth_in(DEPTH_HEADER, header)


def _heading_test(heading: str) -> dict[str, int] | None:
    """The one test a heading or label over a table names (`Results, tg128`), None when it
    names none or several."""
    found = {m.group(0).replace(" ", "").lower() for m in TEST.finditer(cell_text(heading))}
    return test_of(found.pop()) if len(found) == 1 else None


def _run(header: str, columns: list[int]) -> dict[str, Any]:
    """What a column of one run's results says of them (`vulkan t/s`): its label, and its
    backend when it names one; the device and the build it names too (`M2 Ultra (build
    7948)`)."""
    name = _run_name(header)
    if not name or len(columns) == 1 and not _named_backend(name):
        return {}
    named: dict[str, Any] = {}
    if (build := RUN_BUILD.search(name)) is not None:
        named["build_number"] = int(build.group(1) or build.group(2))
    if (gpu := PROSE_GPU.search(name)) is not None:
        named["gpu_info"] = gpu.group(0)
    if (at := AT_COMMIT.search(name)) is not None:      # (`main@144ee1c4`, `PR541@93209939`)
        named["build_commit"] = at.group(1)
    return {**_run_of(name), **named}


# A branch at its commit, naming a run's column.
AT_COMMIT = re.compile(r"@([0-9a-f]{7,40})\b")


# A build named in a run's column (`DGX Spark (build 7941)`, `main (b6761)`).
RUN_BUILD = re.compile(r"\bbuild\s+b?(\d{3,5})\b|[(\[]b(\d{3,5})[)\]]", re.I)


def _run_of(name: str) -> dict[str, Any]:
    if COMMIT.match(name):      # compare-llama-bench.py's `t/s 0c1e570`: a build per column
        return {"label": name, "build_commit": name}
    if number := BUILD_TAG.match(name):         # (`| test | b4500 | b5600 |`: a build each)
        return {"label": name, "build_number": int(number.group(1))}
    quant = QUANT_WORD.fullmatch(name)      # (`F16 PP [t/s] | Q4_0 PP [t/s]`: a file type each)
    backend = _named_backend(name)
    if quant is None and backend is None and (quant := QUANT_WORD.search(name)):
        # (`gemma4:26b Q4_K_XL tg128`: a model and its quantization per column)
        return {"label": name, "model_type": name, "model_ftype": quant.group("quant")}
    joined = re.sub(r"\s+", "-", name)
    if backend is None and models_named(joined) == {joined}:   # (`| Metric | Qwen 3.5 2B | ...`)
        return {"label": name, "model_type": name}
    return {"label": name, **({"backends": backend} if backend else {}),
            **({"model_ftype": quant.group("quant")} if quant else {})}


# A column of llama-bench's settings (`Flags`, `Params`), which may drop the dashes: `fa=1 b=256`.
FLAGS_HEADER = re.compile(r"^(?:flags?|params?|parameters|options?|settings?|args?|arguments)$", re.I)
UNDASHED_FLAG = re.compile(r"(?:^|[\s,;(])(?P<flag>[a-z][\w-]*)=(?P<value>[^\s,;()`-][^\s,;()`]*)")


def _flag_values(cell: str, header: str = "") -> dict[str, Any]:
    """The settings a label cell states as llama-bench's flags (`-ngl 99 -ncmoe 48`; under a
    header that names flags, `fa=1 b=256` too)."""
    out: dict[str, Any] = {"_unread": []}
    flags = [*CELL_FLAG.finditer(cell_text(cell))]
    undashed = UNDASHED_FLAG.finditer(cell_text(cell))
    # (in a notes cell, a flag's long name only: `n-cpu-moe=37`, not `b=256`)
    flags += undashed if FLAGS_HEADER.match(cell_text(header)) else \
        (m for m in undashed if len(m.group("flag")) >= 4 and re.search(r"[-_]", m.group("flag")))
    for match in flags:
        flag, value = match.group("flag"), match.group("value")
        field = FLAG_FIELDS.get(flag.replace("-", "_"))
        if field is not None:
            try:
                out[field] = typed(field, value)
            except ValueError:
                out["_unread"].append(f"-{flag} {value!r} is no {field}: left empty")
    return out


def _labels(header: list[str], row: list[str], skip: set[int]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for i, name in enumerate(header):
        if i in skip or i >= len(row) or DIFFERENCE.search(cell_text(name)) \
                or _is_spread(header, i) and (i - 1 in skip):
            continue
        flagged = _flag_values(row[i], name)
        values.setdefault("_unread", []).extend(flagged.pop("_unread"))
        for field, value in flagged.items():
            values.setdefault(field, value)
        found = _label_values(name, row[i])
        if i == 0 and set(found) == {"extra"} and _field_of(name) is None \
                and _names_row(row[0]):
            found = {"label": cell_text(row[0])}   # (`| Leg |`, `| Test |` of words: the row's name)
            if (depth := _depth_in(DEPTH_HEADER, row[0])) is not None:
                found["n_depth"] = depth            # (`depth 4,096`)
        if "build_commit" not in found and "build_number" not in found \
                and (named := NAMED_BUILD.search(cell_text(row[i]))):
            found.update(_build_of(named))
        extra = found.pop("extra", None)
        values.setdefault("_unread", []).extend(found.pop("_unread", []))
        values.update(found)
        for key, value in (extra or {}).items():    # (a header twice: `Short` per group)
            kept = values.setdefault("extra", {})
            kept[next(k for n in range(1, len(header) + 2)
                      if (k := key if n == 1 else f"{key}_{n}") not in kept)] = value
    # A row's name that says its model and, in brackets, its backend (`Qwen3-8B Q4_K_M
    # (Vulkan)`), where no column does.
    if isinstance(label := values.get("label"), str):
        if not values.get("model_type") and len(named := models_named(label)) == 1:
            values["model_type"] = named.pop()
        if not values.get("backends") and (bracket := re.search(r"\(([^()]{1,40})\)", label)) \
                and (backend := _named_backend(bracket.group(1))) is not None:
            values["backends"] = backend
    # A quantization named in a cell no column names it in (`| Mode | qwen36 IQ4_NL |`).
    if not values.get("model_ftype"):
        quants = (QUANT_WORD.search(cell_text(c)) for i, c in enumerate(row)
                  if i not in skip and i < len(header) and _field_of(header[i]) is None)
        values["model_ftype"] = next((q.group("quant") for q in quants if q), None)
    # The backend is the first cell that starts with one's name (`| Host | ROCm 6.4.2 |`),
    # when the Backend column names none.
    if values.get("backends") is None:
        starts = (_named_backend(cell_text(c)) for i, c in enumerate(row) if i not in skip
                  and cell_text(c) and _named_backend(cell_text(c).split()[0]))
        named = next(starts, None)
        if named is not None:
            values["backends"] = named
        else:               # (the note's own word for every row, if it says one)
            values.pop("backends", None)
    return values


def _names_row(cell: str) -> bool:
    """A first cell of words that names its row (`depth 0`, `Short prefill (n_predict=8)`): not
    a figure, nor a test's name."""
    text = cell_text(cell)
    return bool(re.search(r"[A-Za-z]", text)) and cell_number(text)[0] is None \
        and test_of(text) is None


# A depth after a test's kind (`PP speed @ d0`, `TG @ d16384`).
DEPTH_SUFFIX = re.compile(r"\s*@\s*d(\d+)\s*$", re.I)


def _at_depth(test: dict[str, int | None], row: list[str]) -> dict[str, int | None]:
    depth = DEPTH_SUFFIX.search(cell_text(row[0])) if row else None
    return {**test, "n_depth": int(depth.group(1))} if depth else test


def merged(labels: dict[str, Any], test: dict[str, int], rate: dict[str, float],
            run: dict[str, Any] | None = None) -> dict[str, Any]:
    if not test.get("n_depth") and labels.get("n_depth"):     # (a row named `depth 4,096`)
        test = {**test, "n_depth": labels["n_depth"]}
    values = {**labels, **(run or {}), **rate, **test,
              "_unread": [*labels.get("_unread", []), *rate.get("_unread", [])]}
    if labels.get("label") and (run or {}).get("label"):     # (the row's name and the run's)
        values["label"] = f"{labels['label']} {run['label']}"
    # (a size the table and the command leave unknown: one a column of the row gives, else the
    # test is its kind, `pp` / `tg`)
    for key in ("n_prompt", "n_gen"):
        if test[key] is None and isinstance(labels.get(key), int) and labels[key] > 0:
            test = {**test, key: labels[key]}
            values[key] = labels[key]
    values["test"] = test_name(test["n_prompt"], test["n_gen"], test["n_depth"]) \
        if None not in (test["n_prompt"], test["n_gen"]) \
        else ("pp" if test["n_prompt"] is None else "tg")
    if "extra" in labels:
        values["extra"] = dict(labels["extra"])
    return values


# A serving latency in a header: the table is a serving result's (serving_retyped), even
# with llama-bench-like `pp (t/s)` / `tg (t/s)` columns beside it; not when a header names a
# test as llama-bench does (`pp512 (t/s) | tg128 (t/s) | TTFT (512tok)`).
SERVING = re.compile(r"(?<![A-Za-z])(?:TTFT|TPOT|ITL|E2EL?)(?![A-Za-z])", re.I)


def resembles(lines: list[str], context: Any = None) -> bool:
    """A table of llama-bench results retyped by hand (not llama-bench's own table, nor a
    serving result's)."""
    if not lines or HEADER_RE.search(lines[0]) \
            or SERVING.search(lines[0]) and not TEST.search(lines[0]):
        return False
    t = table(lines)
    return t is not None and _results(t, heading=_over(context), of_llama=llama_note(context),
                                      said=_said_over(context)) is not None


def llama_note(context: Any) -> bool:
    """The note's headings and prose name llama.cpp, and no other engine."""
    words = " ".join((*getattr(context, "section", ()), *getattr(context, "prose", ())))
    return engine_named_in(words) == "llama.cpp"


# A rate's unit in words (`(tok/s)`, `tokens per second`)
RATE_SAID = re.compile(r"(?<![\w/])(?:t/s|tok/s(?:ec)?|tokens?/s(?:ec)?|tokens?\s+per\s+sec(?:ond)?"
                       r"|tps)(?![\w/])", re.I)


def _said_over(context: Any) -> str:
    """The label and heading over a table and the paragraph last before it."""
    prose = getattr(context, "prose", ())
    return " — ".join(filter(None, (_over(context), prose[-1] if prose else "")))


def _over(context: Any) -> str:
    """The label and the heading over a table, both: each may name its test."""
    return " — ".join(dict.fromkeys(x for x in label_and_heading(context) if x))


def build(block: Block) -> list[Parsed | Problem]:
    t = table(block.lines)
    shared = {**run_context(block.context), "format": FORMAT.name}
    # flags the heading or label over the table states (`## Speed (-ngl 99, -fa 1)`): its
    # own, over a command's further up
    heading = cell_text(_over(block.context))
    stated = _flag_values(heading)
    stated.pop("_unread")
    shared.update(stated)
    builds = list(NAMED_BUILD.finditer(heading))
    if len(builds) == 1:        # (`## Measurements (this version, 02a883fea)`: over the prose's)
        shared.pop("build_commit", None)
        shared.pop("build_number", None)
        shared.update(_build_of(builds[0]))
    if str(shared.get("model_type", "")).lower().endswith(".gguf"):   # (`Model: x.gguf`)
        shared.setdefault("model_filename", shared.pop("model_type"))
        if quant := QUANT_IN_NAME.search(shared["model_filename"]):   # (`...-q8_0.gguf`)
            shared.setdefault("model_ftype", quant.group("quant").upper())
    if shared.get("model_type"):                # (a note's `Model:` line: read as a cell)
        shared.update(_label_values("model", shared["model_type"]))
    quants = {m.group("quant") for m in QUANT_WORD.finditer(heading)}
    if len(quants) == 1:                        # (`### QAT UD-Q4_K_XL (13.26 GiB)`)
        shared["model_ftype"] = quants.pop()
    found = _results(t, shared.get("command"), heading, llama_note(block.context),
                     _said_over(block.context)) if t is not None else None
    if not found:
        return []
    out: list[Parsed | Problem] = []
    for index, values in found:
        line = block.line_start + index
        raw = "\n".join([block.lines[0], block.lines[index]])
        if "_skipped" in values:
            out.append(Problem(line, values["_skipped"], raw))
            continue
        unread = values.pop("_unread", [])
        if values.get("model_ftype") is None:   # (none in the row: the heading's or command's)
            values.pop("model_ftype", None)
        fields = {k: v for k, v in shared.items() if k not in values}
        add_result(out, {**fields, **values}, line, raw, [(line, r) for r in unread],
                   "a table retyped by hand, read as llama-bench results by its header words")
    return out


def add_result(out: list[Parsed | Problem], values: dict[str, Any], line: int, raw: str,
               warnings: list[tuple[int, str]], read_as: str, line_end: int | None = None
               ) -> None:
    """``values`` as one more row of ``out`` (a Problem when they are no valid row), on
    ``line`` (to ``line_end`` when it spans more); the first row carries ``read_as``, the one
    warning of how its block was read."""
    try:
        row = LlamaBenchResult(**values, line_start=line, line_end=line_end or line, raw_text=raw)
    except (ValidationError, ValueError) as exc:
        reason = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
        out.append(Problem(line, reason, raw))
        return
    if not any(isinstance(item, Parsed) for item in out):
        warnings = [*warnings, (line, read_as)]
    out.append(Parsed(row=row, warnings=warnings))


FORMAT = claimed_table(
    name="llama_retyped",
    table="llama_bench_results",
    description="llama-bench results retyped by hand as a markdown table (tests as columns, "
                "t/s columns per run, or tests as rows): a result per test and run, matched "
                "by its header words.",
    upstream=("llama.cpp llama-bench results, retyped",),
    build=build,
    claims=resembles,
)
