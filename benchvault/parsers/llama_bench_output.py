"""llama-bench's structured outputs (``-o json``, ``-o jsonl``, ``-o csv``, ``-o sql``) → rows.

Upstream printers: ``json_printer``, ``jsonl_printer``, ``csv_printer``, ``sql_printer`` in
``tools/llama-bench/llama-bench.cpp``.  Every one writes the fields of ``test::get_fields()``
(``build_commit``, ``model_type``, ``n_prompt``, ``avg_ts``, ...), which are this table's column
names; fields a build adds or drops land in ``extra``.  A file is recognised by its content,
whatever its name:

    [ { "build_commit": "b56f079e", "build_number": 4418, ... } ]        -o json
    {"build_commit": "b56f079e", "build_number": 4418, ...}              -o jsonl (one a line)
    build_commit,build_number,cpu_info,...  then  "b56f079e","4418",...   -o csv
    CREATE TABLE IF NOT EXISTS llama_bench (...);  INSERT INTO ...        -o sql

The field set changed with the builds (``get_fields()``): 2023 builds wrote one bool per
compiled-in backend (``cuda``, ``opencl``, ``metal``, ``gpu_blas``, ``blas``; 2024 adds
``vulkan``, ``kompute``, ``sycl``, ``rpc``) where later ones write ``backends``, and ``f16_kv``
where later ones write ``type_k``/``type_v``; those give the newer columns here (and stay in
``extra``).  2025–26 builds add ``n_depth``, ``devices``, ``use_direct_io``, ``load_mode``,
``lazy_mode``, ``repack``, ``fit_target``/``fit_min_ctx``; ``flash_attn`` went from a bool to
-1/0/1.  The SQL table is ``test`` until mid 2025, ``llama_bench`` after; any name is read.

Lines a build prints before its output when stderr is captured too (``ggml_cuda_init: ...``,
``  Device 0: ...``, ``load_backend: ...``, the SYCL device table, the echoed command) are
skipped.  A ``-o json`` cut off inside its last record keeps that record's complete fields when
they include its result (``avg_ts``), with a warning that it was cut.

Files are streamed: one JSON object, CSV record or SQL statement at a time.  The SQL is run
only inside a throwaway in-memory SQLite that may create a table and insert into it (an
authorizer refuses anything else), never against the warehouse.
"""

from __future__ import annotations

import csv
import json
import re
import sqlite3
from pathlib import Path
from typing import Any, Iterator

from pydantic import ValidationError

from ..schemas.llama_bench import LlamaBenchResult
from .base import Context, FileFormat, Parsed, Problem
from ..reading.lines import SNIFF_BYTES, sniff_encoding
from ..reading.progress import open_text
from .llama_bench import FIELDS, model_parts, run_context, test_name, typed

CHUNK = 1 << 16
MAX_RECORD = 16 << 20          # a record bigger than this is not llama-bench's
RAW_LIMIT = 4000
# Columns the reader fills itself; a field of that name in a file goes to `extra`.
OWN_COLUMNS = {"id", "source_id", "line_start", "line_end", "raw_text", "section", "label",
               "tags", "format", "command", "env", "extra", "gpu_count", "gpu_arch", "test"}
SQL_HEAD = re.compile(r"^\s*CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?[\w\"]+\s*\(", re.I)
SQL_STATEMENT = re.compile(r"^\s*(?:CREATE\s+TABLE|INSERT\s+INTO)\b", re.I)
SQL_TABLE = re.compile(r"^\s*INSERT\s+INTO\s+(\"?\w+\"?)", re.I)
SIGNATURE = ("model_type", "n_prompt")
# What a build prints before its output when stderr is captured with it: backend and device
# banners, `load_backend:` / `register_*:` lines, warnings, progress, the SYCL device table
# (`|ID|  Device Type|...`, `| 0| [level_zero:gpu:0]|...`; never a `| model |` table), and the
# echoed llama-bench command.
BANNER = re.compile(
    r"^\s*$|^(?:ggml_\w+:|load_backend:|register_(?:backend|device):|warning:|llama-bench:"
    r"|\s+Device \d+:|Vulkan\d+:|(?i:found) \d+ SYCL devices:|\|\s*(?:ID|-+|\d+)?\s*\|)"
    r"|(?:^|[\s/\\'\"])llama-bench(?:\.exe)?['\"]?\s")
# Builds before Nov 2024 wrote a bool per compiled-in backend; `test::get_backend()` named the
# first one set, in this order (a ROCm build sets `cuda` too: it printed `ROCm` from the same
# flag, which the JSON cannot tell apart).  `rpc` (mid 2024) was appended as `+RPC`.
BACKEND_FLAGS = (("cuda", "CUDA"), ("opencl", "OpenCL"), ("vulkan", "Vulkan"),
                 ("kompute", "Kompute"), ("metal", "Metal"), ("sycl", "SYCL"),
                 ("gpu_blas", "GPU BLAS"), ("blas", "BLAS"))
LEGACY_FLAGS = {flag for flag, _ in BACKEND_FLAGS} | {"rpc", "f16_kv"}


def start_of(head: bytes) -> tuple[str | None, int]:
    """(json / jsonl / csv / sql, lines before it) when ``head`` (a file's first bytes) is
    llama-bench output, after any banner lines; (None, 0) otherwise."""
    encoding, binary = sniff_encoding(head)   # PowerShell's `>` writes UTF-16
    if binary:
        return None, 0
    text = head.decode(encoding, errors="ignore").lstrip("\ufeff")
    if not all(word in text for word in SIGNATURE):
        return None, 0
    lines = text.split("\n")
    skip = 0
    while skip < len(lines) - 1 and BANNER.search(lines[skip]) \
            and not lines[skip].lstrip().startswith(("[", "{")):
        skip += 1
    rest = "\n".join(lines[skip:]).lstrip()
    if rest.startswith("["):
        return "json", skip
    if rest.startswith("{"):
        return "jsonl", skip
    if SQL_HEAD.match(rest):
        return "sql", skip
    names = [n.strip().strip('"') for n in rest.split("\n", 1)[0].split(",")]
    if all(word in names for word in SIGNATURE):
        return "csv", skip
    return None, 0


def kind_of(head: bytes, path: str) -> str | None:
    """json / jsonl / csv / sql when ``head`` (a file's first bytes) is llama-bench output."""
    return start_of(head)[0]


def sniff(head: bytes, path: str) -> bool:
    return kind_of(head, path) is not None


def _flag(value: Any) -> bool:
    return str(value).strip().lower() in ("1", "true")


def older_fields(record: dict[str, Any]) -> dict[str, Any]:
    """`backends` and `type_k`/`type_v` from the fields older builds wrote instead."""
    out: dict[str, Any] = {}
    if "backends" not in record and any(flag in record for flag, _ in BACKEND_FLAGS):
        name = next((name for flag, name in BACKEND_FLAGS if _flag(record.get(flag))), "CPU")
        out["backends"] = name + ("+RPC" if _flag(record.get("rpc")) else "")
    if "f16_kv" in record and "type_k" not in record and "type_v" not in record:
        out["type_k"] = out["type_v"] = "f16" if _flag(record["f16_kv"]) else "f32"
    return out


def record_row(record: dict[str, Any], context: Context, kind: str, line: int,
               raw: str, unread: list[str] | None = None) -> LlamaBenchResult:
    """One llama-bench record (its own field names) → a validated row.  A value its column
    cannot hold (a garbled `1!.5`) is null, named in ``unread`` (or an error when None)."""
    values: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    lost: set[str] = set()
    for key, value in record.items():
        if key in FIELDS and key not in OWN_COLUMNS:
            try:
                values[key] = typed(key, value) if value != "" else None
            except ValueError as exc:
                if unread is None:
                    raise
                unread.append(str(exc))
                values[key] = None
                lost.add(key)
        else:
            extra[key] = value
            # Older builds' flags (`cuda`, `blas`, `f16_kv`) are 0/1: one that is neither
            # says nothing about the backend (kept as printed, named in a warning).
            if key in LEGACY_FLAGS and unread is not None and value is not None \
                    and str(value).strip().lower() not in ("0", "1", "true", "false"):
                unread.append(f"{key}: {value!r} is not a 0/1 flag")
                lost.add(key)
    for key in ("samples_ns", "samples_ts"):
        # csv/sql do not print samples; a string here is a list someone wrote as text
        if isinstance(values.get(key), str):
            extra[key] = values.pop(key)
    if values.get("n_depth") is None and values.get("n_prompt") is not None \
            and "n_depth" not in lost:
        values["n_depth"] = 0          # builds before `-d` always ran at depth 0
    values.update(older_fields(record))
    values.update(model_parts(values.get("model_type")))
    gpu_info = values.get("gpu_info")
    # Forks that write the label (ik_llama.cpp: `tg128@pp512`) know a kind the counts do not.
    label = extra.pop("test", None) if isinstance(extra.get("test"), str) else None
    return LlamaBenchResult(
        **values, extra=extra or None, format=f"llama_bench_{kind}",
        test=label.strip() if label and label.strip() else None
        if lost & {"n_prompt", "n_gen", "n_depth"} else      # a count of the test unread
        test_name(values.get("n_prompt"), values.get("n_gen"), values.get("n_depth")),
        gpu_count=len(gpu_info.split(", ")) if gpu_info else None,
        tags=context.tags or None, line_start=line, line_end=line, raw_text=raw[:RAW_LIMIT])


def _row_or_problem(record: Any, context: Context, kind: str, line: int, raw: str
                    ) -> Parsed | Problem:
    if not isinstance(record, dict):
        return Problem(line, f"{kind}: a record is not an object: {raw[:80]!r}", raw)
    unread: list[str] = []
    try:
        row = record_row(record, context, kind, line, raw, unread)
    except ValidationError as exc:
        # A value of the wrong type for its column (`"n_prompt": "5!2"` as text): that value
        # is null, the record kept; what still fails loses the record as before.
        bad = {str(e["loc"][0]) for e in exc.errors() if e.get("loc")}
        if bad and all(k in record for k in bad):
            unread += [f"{k}: {record[k]!r} is not a value of its column" for k in sorted(bad)]
            try:
                row = record_row({k: (None if k in bad else v) for k, v in record.items()},
                                 context, kind, line, raw, unread)
            except (ValidationError, ValueError):
                row = None
            if row is not None:
                return Parsed(row=row, warnings=[(line, f"{kind}: {u}, stored as null")
                                                 for u in unread])
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        return Problem(line, f"{kind}: {where}: {first.get('msg')}", raw[:RAW_LIMIT])
    except ValueError as exc:
        return Problem(line, f"{kind}: {exc}", raw[:RAW_LIMIT])
    return Parsed(row=row, warnings=[(line, f"{kind}: {u}, stored as null") for u in unread])


# -- json / jsonl: one object at a time ----------------------------------------------------
# A bare word where a JSON value belongs (a number garbled in the paste: `1!.5`, `!547`): up
# to the next `,` `}` `]` or line end.
BARE_WORD = re.compile(r"[^\s,}\]\[{\"]+")
MAX_MENDS = 8


def tolerant_decode(decoder: json.JSONDecoder, buf: str, pos: int,
                    exc: json.JSONDecodeError) -> tuple[Any, int, list[str]] | None:
    """The JSON value at ``pos`` read again with what broke it mended, so one bad value costs
    that value only: a bare word where a value belongs (a garbled number, `1!.5`) quoted as a
    string (its column cannot hold the text: null, with a warning), or a whole line that is no
    JSON at all (typed into the paste, a prompt) left out.  (value, end in ``buf``, what was
    mended) or None when the value is not readable that way (cut short, or broken otherwise)."""
    text, bad, added = buf, [], 0
    for _ in range(MAX_MENDS):
        mended = _quoted(text, pos, exc.pos) or _line_left_out(text, pos, exc.pos)
        if mended is None:
            return None
        text, what, grew = mended
        bad.append(what)
        added += grew
        try:
            value, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as again:
            exc = again
            continue
        # `end` in the mended text; in ``buf`` it is as many characters off as mending added.
        return value, end - added, bad
    return None


def _quoted(text: str, pos: int, at: int) -> tuple[str, str, int] | None:
    # back to the start of the word the error is in (`1!.5`: the error is at `!`)
    start = at
    while start > pos and text[start - 1] not in " \t\r\n,:[{\"":
        start -= 1
    word = BARE_WORD.match(text, start)
    if word is None or word.end() <= at or text[start - 1:start] == '"':
        return None
    if not text[:start].rstrip().endswith((":", ",", "[")):
        return None
    quoted = json.dumps(word.group())
    return (text[:start] + quoted + text[word.end():], word.group(),
            len(quoted) - len(word.group()))


def _line_left_out(text: str, pos: int, at: int) -> tuple[str, str, int] | None:
    start = text.rfind("\n", pos, at) + 1
    end = text.find("\n", at)
    if start <= pos or end < 0:
        return None             # the value's first line, or its last: not a line inside it
    line = text[start:end]
    if not line.strip() or line.lstrip()[:1] in '"{}[],':
        return None             # a JSON line broken otherwise
    return text[:start] + text[end + 1:], f"line {line.strip()[:60]!r}", -(end + 1 - start)


def _skip(fh, lines: int) -> None:
    for _ in range(lines):
        fh.readline()


def _cut_record(text: str) -> dict[str, Any] | None:
    """The complete fields of a pretty-printed record the file cut off (`json_printer` writes
    one field a line), when they include its result; None otherwise."""
    end = text.rfind(",\n")
    if end < 0:
        return None
    try:
        record = json.loads(text[:end] + "}")
    except ValueError:
        return None
    return record if isinstance(record, dict) and "avg_ts" in record else None


def _json_records(path: Path, encoding: str, skip: int = 0
                  ) -> Iterator[tuple[int, Any, str] | Problem]:
    decoder = json.JSONDecoder()
    with open_text(path, encoding) as fh:
        _skip(fh, skip)
        buf, pos, line, eof = "", 0, 1 + skip, False
        while True:
            # skip what separates records: whitespace, `[`, `,`, `]`
            while True:
                while pos < len(buf) and buf[pos] in " \t\r\n[,]":
                    line += buf[pos] == "\n"
                    pos += 1
                if pos < len(buf) or eof:
                    break
                buf, pos = fh.read(CHUNK), 0
                eof = not buf
            if pos >= len(buf):
                return
            try:
                record, end = decoder.raw_decode(buf, pos)
            except json.JSONDecodeError as exc:
                mended = tolerant_decode(decoder, buf, pos, exc)
                if mended is not None:
                    record, end, bad = mended
                    raw = buf[pos:end]
                    yield line, record, raw
                    yield Problem(line + buf.count("\n", pos, exc.pos),
                                  f"not valid JSON at {', '.join(bad)}: read as text, or a "
                                  "line left out", raw[:RAW_LIMIT])
                    line += raw.count("\n")
                    pos = end
                    continue
                more = "" if eof else fh.read(CHUNK)
                if more and len(buf) - pos < MAX_RECORD:
                    buf = buf[pos:] + more
                    pos = 0
                    continue
                raw = buf[pos:pos + RAW_LIMIT]
                where = line + buf.count("\n", pos, exc.pos)
                cut = _cut_record(buf[pos:]) if eof or not more else None
                if cut is not None:
                    yield line, cut, buf[pos:][:RAW_LIMIT]
                    yield Problem(where, f"not valid JSON: {exc.msg}; the file ends inside this "
                                         f"record: its complete fields were kept", raw)
                    return
                yield Problem(where, f"not valid JSON: {exc.msg}", raw)
                return
            raw = buf[pos:end]
            yield line, record, raw
            line += raw.count("\n")
            pos = end
            if len(buf) - pos < CHUNK and not eof:
                more = fh.read(CHUNK)
                eof = not more
                buf, pos = buf[pos:] + more, 0


# -- csv: a header of field names, then one record a line -----------------------------------
def _csv_records(path: Path, encoding: str, skip: int = 0
                 ) -> Iterator[tuple[int, Any, str] | Problem]:
    with open_text(path, encoding, newline="") as fh:
        _skip(fh, skip)
        reader = csv.reader(fh)
        header = next(reader, None)
        while header is not None and not any(cell.strip() for cell in header):
            header = next(reader, None)          # blank lines before the header
        if header is None:
            return
        header = [name.strip() for name in header]
        line = reader.line_num + 1 + skip
        for cells in reader:
            raw = ",".join(cells)
            if not cells or cells == [""]:
                line = reader.line_num + 1 + skip
                continue
            if len(cells) != len(header):
                yield Problem(line, f"csv: record has {len(cells)} values, the header has "
                                    f"{len(header)}", raw)
            else:
                yield line, dict(zip(header, cells)), raw
            line = reader.line_num + 1 + skip


# -- sql: CREATE TABLE + INSERTs, replayed in a throwaway in-memory database ------------------
ALLOWED = {sqlite3.SQLITE_CREATE_TABLE, sqlite3.SQLITE_INSERT, sqlite3.SQLITE_READ,
           sqlite3.SQLITE_TRANSACTION, sqlite3.SQLITE_FUNCTION}


def _only_create_and_insert(action: int, table: str | None, *_args) -> int:
    # CREATE TABLE writes its own row of sqlite_master; nothing else may be updated.
    if action in ALLOWED or action == sqlite3.SQLITE_UPDATE and table == "sqlite_master":
        return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


def _sql_records(path: Path, encoding: str, skip: int = 0
                 ) -> Iterator[tuple[int, Any, str] | Problem]:
    scratch = sqlite3.connect(":memory:")
    try:
        with open_text(path, encoding) as fh:
            _skip(fh, skip)
            statement, start = "", 0
            for lineno, text in enumerate(fh, 1 + skip):
                if not statement.strip():
                    statement, start = "", lineno
                statement += text
                if len(statement) > MAX_RECORD:
                    yield Problem(start, "sql: statement too long", statement[:RAW_LIMIT])
                    return
                if "\x00" in text:
                    yield Problem(lineno, "sql: NUL byte; statement skipped", text[:RAW_LIMIT])
                    statement = ""
                    continue
                if not sqlite3.complete_statement(statement):
                    continue
                yield from _run_statement(scratch, statement, start)
                statement = ""
            if statement.strip():
                yield Problem(start, "sql: statement never ends (no `;`)", statement[:RAW_LIMIT])
    finally:
        scratch.close()


def _run_statement(scratch: sqlite3.Connection, statement: str, line: int
                   ) -> Iterator[tuple[int, Any, str] | Problem]:
    raw = statement.strip()
    if not SQL_STATEMENT.match(raw):
        yield Problem(line, "sql: only CREATE TABLE and INSERT INTO are read; statement "
                            "skipped", raw[:RAW_LIMIT])
        return
    scratch.set_authorizer(_only_create_and_insert)
    try:
        scratch.execute(raw)
    except sqlite3.Error as exc:
        yield Problem(line, f"sql: {exc}", raw[:RAW_LIMIT])
        return
    finally:
        scratch.set_authorizer(None)
    table = SQL_TABLE.match(raw)
    if table is None:
        return
    cursor = scratch.execute(f"SELECT rowid, * FROM {table.group(1)}")
    names = [d[0] for d in cursor.description][1:]
    for rowid, *values in cursor.fetchall():
        yield line, dict(zip(names, values)), raw
    scratch.execute(f"DELETE FROM {table.group(1)}")


READERS = {"json": _json_records, "jsonl": _json_records, "csv": _csv_records,
           "sql": _sql_records}


def read(path: Path, context: Context) -> Iterator[Parsed | Problem]:
    with open(path, "rb") as fh:
        head = fh.read(SNIFF_BYTES)
    kind, skip = start_of(head)
    if kind is None:
        return
    encoding = sniff_encoding(head)[0]
    encoding = "utf-8-sig" if encoding == "utf-8" else encoding
    line = 1
    try:
        for item in READERS[kind](Path(path), encoding, skip):
            if isinstance(item, Problem):
                yield item
            else:
                line, record, raw = item
                got = _row_or_problem(record, context, kind, line, raw)
                yield got
                if isinstance(got, Parsed):         # a whole-file row's own warnings
                    yield from (Problem(at, reason, raw[:RAW_LIMIT])
                                for at, reason in got.warnings)
                    got.warnings = []
    except (csv.Error, ValueError) as exc:   # a damaged file: what was read stays
        yield Problem(line, f"{kind}: cannot read further: {exc}")


FORMAT = FileFormat(
    name="llama_bench_output",
    table="llama_bench_results",
    description="llama.cpp llama-bench -o json / jsonl / csv / sql output files, recognised "
                "by content.",
    upstream=("llama.cpp llama-bench json_printer, jsonl_printer, csv_printer, sql_printer",),
    sniff=sniff,
    read=read,
    embed_markers=("model_type", "create table"),
    json_keys=('"avg_ts"',),
    note_context=lambda context: run_context(context),
)
