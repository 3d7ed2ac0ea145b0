"""Property: one unexpected thing costs that thing only, in every format.

Over every fixture pair (fixtures/<format>/<case>.<ext> beside <case>.expected.json) four
mutations are made at a few fixed positions each, and the warehouse they give is compared with
the one the fixture gives as it is:

1. garble: one digit of a number stored as a value becomes ``!`` (``671.0`` → ``67!.0``).
   No row disappears; only that value may become null (or missing, or kept as its raw text),
   with a warning at its line; every other stored value is unchanged.
2. foreign: a line a user typed (or a shell prompt) inside or just after a block or table.
   No row disappears and no stored value changes.
3. field: an unknown ``key: value`` field inside a block (a line of its own after a value line
   of a multi-line block; a field inside a one-line record).  No row disappears and no value
   changes (the field may go to ``extra`` by its label).  Not made in tables.
4. cut: the file ends right after a line inside a block.  The rows printed before the cut are
   kept unchanged (links to what came after may go), and the cut row is kept with the values
   it printed, a warning saying where it stops.

Rows are matched by their order in the file (line order), never by a value a mutation can
touch; ids, line numbers and raw text are not compared.  Positions are drawn from a
generator seeded with the fixture's name and the mutation, so every run makes the same files.
"""

from __future__ import annotations

import json
import random
import re
import sqlite3
from pathlib import Path

import pytest

from conftest import FIXTURES, ingest_into
from test_fixture_pairs import PAIRS, raw_for

# How many positions each mutation tries per fixture.
POSITIONS = 3

# Tables of rows a file's blocks make, matched by order (line_start, id).
ROW_TABLES = ("serving_runs", "llama_bench_results", "server_launches", "engine_stats",
              "spec_decode_metrics", "published_tables", "metrics_scrapes")
# Tables of values of a row above: (foreign key, parent table, key columns).
VALUE_TABLES = {
    "latency_stats": ("run_id", "serving_runs", ("metric", "stat", "percentile")),
    "serving_requests": ("run_id", "serving_runs", ("request_index",)),
    "published_results": ("table_id", "published_tables",
                          ("table_index", "row_index", "column_name")),
    "metrics_samples": ("scrape_id", "metrics_scrapes", ("metric", "labels", "le")),
}
# Foreign keys of row tables, compared as the referenced row's position.
FOREIGN_KEYS = {"launch_id": "server_launches", "run_id": "serving_runs"}
# Where a row sits and what it was read from, not a value; configurations and groups are
# counted over rows (experiments/refresh.py), and move when a value does.
NOT_VALUES = {"id", "source_id", "line_start", "line_end", "raw_text", "config_id", "group_id",
              "sightings"}
# A row's ties to rows elsewhere in the file (a run's server launch, found by port and time):
# a cut file may lose what they point at.
LINKS = {"launch_id", "run_id", "launch_matched_on", "engine_from_launch", "window_start",
         "window_end", "window_from",
         # llama-bench prints its `build: <commit> (<number>)` line after the table.
         "build_commit", "build_number"}
# What a record many lines assemble reckons from its last line so far (a launch's ready time
# and load time; a scrape's counts of samples and families): a cut one ends earlier.
RECKONED = {"load_seconds", "ready_at", "samples", "families"}
# Records with no closing line: a server log or a /metrics paste ends where it ends, so one
# cut short is not told by a warning (it keeps what it printed all the same).
OPEN_ENDED = {"server_launches", "metrics_scrapes", "metrics_samples"}

# Whole-file outputs whose own format forbids a line inserted, added or cut (a JSON document,
# a CSV or SQL dump, a JSON-lines file): mutations 2-4 make them invalid files, which are
# warnings of their own (tests/test_bad_input.py).  JSON pasted inside a note is text and is
# mutated like any other.
WHOLE_FILE_SUFFIXES = {".json", ".jsonl", ".csv", ".sql"}

FOREIGN_LINES = ("some unrelated text a user typed", "$ nvidia-smi")
# A number standing as a value of its own: between spaces, cell rules, quotes, `:`/`=`/`,`
# (not a digit of a name, a version or a regex).
NUMBER = re.compile(r"(?:(?<=[\s|│:=,(\"'])|^)\d+(?:\.\d+)?(?=[\s|│,)\"'%]|$)")
VALUE_LINE = re.compile(r"^(?P<pre>[\s>#|*/-]*)(?P<label>[A-Za-z][^:|]*?):(?P<gap>\s+)"
                        r"(?P<value>[-+]?\d[\d.,]*)")
IN_LINE_FIELD = re.compile(r":\s*[-+]?\d[\d.]*[^,:]*?, ")
TEST_NAME = re.compile(r"\b(?:pp|tg)\s*$")
LABELLED = re.compile(r"[A-Za-z][\w ()/%#-]*:\s*[-+]?\d")
TABLE_ROW = re.compile(r"[|│┃].*[|│┃]")


# Known failures, by what causes them: xfail(strict=True), so a fix shows as XPASS and the
# entry goes.  (mutation, fixture) → why.
KNOWN: dict[tuple[str, str], str] = {}
for _kind, _why, _fixtures in [
    ('cut', "a block cut where body_line does not take every line before it (SGLang's layouts) is a warning only, not a row marked incomplete", (
        'vllm_serving/derived-docker-timestamps-issue12845',
    )),
    ('cut', "a 2023 client summary cut right after its first line (`Total time: 95.12 s` alone): one value is prose, not a run (tests/test_vllm_client_summary.py pins that), so the run is not kept; cut later, it is, with a warning", (
        'vllm_client_summary/derived-vllm-2023-serving-docs-indented',
    )),
    ('cut', "a result a note retyped as a list, cut right after its duration (a count and a duration, no throughput or latency yet): two values are no result, so no run is kept, as for the 2023 client summary above; cut later, it is", (
        'vllm_serving/derived-note-list-and-bold',
    )),
    ('cut', "a launch cut inside a hard-wrapped start-up line: the launch's line_end is its last fact's first line (LineHit carries no end line), so the test counts the half-printed fact as printed whole", (
        'vllm_server/derived-wrapped-80-cols-pr24162',
    )),
    ('cut', "a line format cut inside a wrapped record: a record whose last field is cut is read without it (ingest/parse.py), but one cut between pieces that read neither alone nor joined is a WrapCut warning and lost (engine_stats), a hand-wrapped SGLang line cut between pieces reads as whole with no warning, and a wrapped launch command cut loses the launch's arguments", (
        'engine_stats/derived-wrapped-100-cols-issue14226',
        'sglang_stats/derived-sglang-hand-wrapped',
        'spec_decode/v1_ngram_pr24127',
        'sglang_server/real-vllm-and-sglang-kv-lines-in-one-issue',
    )),
    ('foreign', "a line typed between the two pieces of a record a terminal hard-wrapped at 130 columns: the joiner does not look past the typed line, and neither piece reads alone, so that record is kept raw with a warning", (
        'engine_stats/real-tt-inference-server-issue246-terminal-splice',
    )),
    ('foreign', 'a foreign line between the pieces of a hand-wrapped SGLang line splits the record', (
        'sglang_stats/derived-sglang-hand-wrapped',
    )),
    ('foreign', "a foreign line between a hand-written markdown table's header and its `---|---` rule in a note: it is not a table any more (published_markdown)", (
        'notes/derived-note-saved-as-txt',
    )),
    ('foreign', "a foreign line inside a hand-made markdown table ends the table (a published table is read to its first line that is no table row): the rows after it have no header and are not read as runs (serving_retyped)", (
        'serving_retyped/derived-both-orientations-and-cells',
        'serving_retyped/real-held-out-tt-inference-server-pr1571-and-vllm-ascend-pr4936',
        'serving_retyped/real-vllm-metal-pr352-units-in-cells',
        'serving_retyped/real-vllm-metal-pr559-metric-rows-delta',
        'serving_retyped/derived-runs-named-by-their-setting',
        'notes/derived-capture-with-table',
        'serving_retyped/real-llm-d-precise-routing-units-in-prose',
        'serving_retyped/real-chinese-blog-total-token-throughput',
        'serving_retyped/derived-note-in-a-fence-label-under-its-heading',
        'serving_retyped/derived-list-items-indented-diff-fence-and-heading',
        'serving_retyped/real-setup-section-then-median-observations',
    )),
    ('foreign', "a foreign line inside a hand-made markdown table ends the table, as for serving_retyped above: the rows after it have no header (llama_retyped)", (
        'llama_retyped/derived-three-shapes',
        'llama_retyped/derived-sizes-in-units-bare-means',
        'llama_retyped/derived-tests-as-columns-beside-ttft',
        'llama_retyped/real-strix-halo-perf-backend-version-build',
        'llama_retyped/derived-spread-column-builds-in-cells',
        'llama_retyped/real-strix-halo-toolboxes-tg128-backend-columns',
        'llama_retyped/real-dgx-spark-m2-ultra-build-per-column',
        'llama_retyped/real-ling-vs-qwen-rows-describing-tests',
        'llama_retyped/real-mimo-prefill-decode-footnote-and-prompt-tokens',
    )),
    ('foreign', "a foreign line inside GuideLLM's tables retyped by hand ends the table (guidellm_retyped): the rows after it are not joined with the other table's by place any more", (
        'guidellm_retyped/derived-guidellm-groups-one-cell-each',
    )),
    ('cut', "tables joined row by row by their place need as many rows each: a second table cut short is runs of its own, and the first table's runs keep only their own figures", (
        'guidellm_retyped/derived-guidellm-groups-one-cell-each',
        'guidellm_retyped/real-inferentia2-guidellm-0.5.4-lengths-in-heading',
    )),
    ('foreign', "a line of text typed between an HTML table's rows is no markup the table's grammar knows: the table is not read, with a warning, and kept raw (published_html)", (
        'serving_retyped/derived-html-tables',
    )),
    ('foreign', "a shell prompt (`$ nvidia-smi`) typed inside a table aligned with spaces starts another command's output, so the table ends there and the rows after it have no header; a line of prose is skipped with a warning (aligned_table)", (
        'aligned_table/real-b70-xpu-w4a16-fenced-serving',
        'aligned_table/derived-copied-from-a-page-tab-separated',
    )),
    ('cut', "llama-server's timings cut after their total time lose the draft's acceptance with no warning: the acceptance line is printed only with a draft model, so nothing says it is missing (llama_timings)", (
        'llama_timings/real-llama-server-eagle3-draft-acceptance',
    )),
    ('cut', "a hand-made table cut before its second latency or throughput row is no serving result any more (two make one) and stays a published table; and the runs of a metrics-as-rows table share their lines and are named by column headers, while this test counts a run that shares its first line as printed only when a row starts with its label (GuideLLM's rows)", (
        'serving_retyped/derived-both-orientations-and-cells',
    )),
    ('cut', "a record written out a field per line with no separators reads whole wherever it is cut: none of its lines says a field is still to come (`GPU KV cache usage: 42.2%` ends a record as well as it goes on), so nothing warns of the fields the cut took", (
        'spec_decode/real-zh-report-annotated-field-per-line',
    )),
    ('foreign', "a line typed between the fields of a record written out a field per line with no separators ends the record: the fields after it read as no record alone and are not its", (
        'spec_decode/real-zh-report-annotated-field-per-line',
    )),
    ('garble', "a garbled figure in a field of a record written out a field per line with no separators makes that piece read worse than the record without it, so the record ends before it and the fields from there on are not its", (
        'spec_decode/real-zh-report-annotated-field-per-line',
    )),
    ('foreign', "the paste's own remark after a figure (`Failed requests: 0 <<<<<<< New line`) is a line the result block holds only between its own lines; a line typed right after it makes two foreign lines in a row, where the block ends: cut short, its values kept and marked incomplete with a warning", (
        'vllm_serving/real-pr26478-test-plan-then-test-result',
    )),
    ('garble', "a save-result JSON pasted beside the printed block it saved: one run seen twice; "
     "its JSON's garbled value is null with a warning, but the merged run then takes that "
     "value from the printed block (rounded: `17.3` for `17.30030700127827`), and a garbled "
     "`completed` (the identity's key) makes the JSON a run of its own, the printed block's "
     "rounded values standing for the run (experiments/identity.py, not a parser)", (
        'notes/derived-pasted-save-result',
    )),
    ('garble', "a rate written in words whose figure is garbled leaves a result with no figure: "
     "one run with any other of its test whose settings say nothing different (the runs before "
     "and after an arrow, or a test of the lines above), so it is that run seen again and "
     "lends it what it states (experiments/identity.py, not a parser); the warning says which "
     "figure was left empty (a table's rows that describe their tests, `Initial ~14K prompt`, "
     "name them by kind alone, `pp`: there a test with no figure is no row, and the warning "
     "keeps the row's text; llama-cli's chat rates print no sizes either: a turn's garbled "
     "rate leaves a `pp` or `tg` row with no figure, that test of the next turn seen again)", (
        'llama_timings/derived-llama-cli-chat-rates',
        'llama_prose/derived-speeds-in-words',
        'llama_prose/derived-rates-after-runs-and-chat-stats',
        'llama_retyped/real-ling-vs-qwen-rows-describing-tests',
        'llama_retyped/real-mimo-prefill-decode-footnote-and-prompt-tokens',
    )),
    ('cut', "a table whose rows describe their tests (`Initial ~14K prompt`) among rows of "
     "settings (`Parameters`, `GGUF`) is read as tests when most of its rows name one: cut "
     "after its first test row, it is a published table; cut later, the rows kept take the "
     "places the rows cut off had in the whole table", (
        'llama_retyped/real-ling-vs-qwen-rows-describing-tests',
    )),]:
    KNOWN.update({(_kind, f + ".expected.json"): _why for f in _fixtures})


def _known(request, kind: str, pair: Path) -> None:
    why = KNOWN.get((kind, _ids(pair)))
    if why:
        request.applymarker(pytest.mark.xfail(strict=True, reason=why))


def _ids(pair: Path) -> str:
    return str(pair.relative_to(FIXTURES))


# ------------------------------------------------------------------------------------------
# The warehouse a file gives, as values by row position.

def _decoded(value):
    if isinstance(value, str) and value[:1] in "{[":
        try:
            return json.loads(value)
        except ValueError:
            pass
    return value


def _flat(value, path=()):
    """A row's value as {path: leaf}: JSON columns opened down to their leaves."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            out.update(_flat(item, path + (key,)))
        return out or ({} if path == ("extra",) else {path: {}})
    if isinstance(value, list):
        out = {}
        for i, item in enumerate(value):
            out.update(_flat(item, path + (i,)))
        return out or {path: []}
    return {path: value}


class Warehouse:
    def __init__(self, db: Path, warnings):
        self.warnings = [(w.line, w.reason) for w in warnings]
        conn = sqlite3.connect(db)
        conn.row_factory = sqlite3.Row
        try:
            self.rows: dict[str, list[dict]] = {}
            self.spans: dict[str, list[tuple[int, int]]] = {}
            position: dict[tuple[str, int], int] = {}
            for table in ROW_TABLES:
                found = [dict(r) for r in conn.execute(
                    f"SELECT * FROM {table} ORDER BY line_start, id")]
                for i, row in enumerate(found):
                    position[table, row["id"]] = i
                self.spans[table] = [(r["line_start"], r["line_end"]) for r in found]
                self.rows[table] = found
            for table, found in self.rows.items():
                flat = []
                for row in found:
                    values = {}
                    for column, value in row.items():
                        if column in NOT_VALUES:
                            continue
                        if column in FOREIGN_KEYS and value is not None:
                            value = ("row", position.get((FOREIGN_KEYS[column], value)))
                        if column == "extra" and value is None:
                            value = "{}"        # no extra: no key in it
                        values.update(_flat(_decoded(value), (column,)))
                    flat.append(values)
                self.rows[table] = flat
            self.values: dict[str, dict[tuple, dict]] = {}
            for table, (fk, parent, key) in VALUE_TABLES.items():
                keyed: dict[tuple, dict] = {}
                for r in conn.execute(f"SELECT * FROM {table} ORDER BY id"):
                    r = dict(r)
                    k = (position.get((parent, r[fk])), *(r[c] for c in key))
                    n = sum(1 for have in keyed if have[:-1] == k)
                    keyed[(*k, n)] = {c: v for c, v in r.items()
                                      if c not in ("id", fk, "source_id", *key)}
                self.values[table] = keyed
            # The last line of each run's sightings (a run printed twice, or printed and saved
            # as JSON, is one row with the values of its best sighting).
            self.seen_until = {position["serving_runs", r]: last for r, last in conn.execute(
                "SELECT run_id, max(line_end) FROM sightings WHERE run_id IS NOT NULL "
                "GROUP BY run_id") if ("serving_runs", r) in position}
            self.counts = {t: len(self.rows[t]) for t in ROW_TABLES}
            self.counts["sightings"] = conn.execute("SELECT count(*) FROM sightings").fetchone()[0]
        finally:
            conn.close()

    def numbers(self) -> set[float]:
        """Every number stored as a value."""
        out = set()
        for found in self.rows.values():
            for row in found:
                out.update(float(v) for v in row.values()
                           if isinstance(v, (int, float)) and not isinstance(v, bool))
        for keyed in self.values.values():
            for row in keyed.values():
                out.update(float(v) for v in row.values()
                           if isinstance(v, (int, float)) and not isinstance(v, bool))
        return out

    def block_lines(self) -> list[tuple[str, int, int, int]]:
        """(table, row position, line_start, line_end) of every stored row."""
        return [(t, i, a, b) for t, spans in self.spans.items()
                for i, (a, b) in enumerate(spans) if a and b]


def _warehouse(path: Path, text: str | bytes, name: str) -> Warehouse:
    path.mkdir(parents=True, exist_ok=True)
    raw = path / name
    raw.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    db = path / "w.db"
    results = ingest_into(db, raw)
    assert results[0].status in ("ingested", "replaced"), results[0].error
    return Warehouse(db, results[0].warnings)


_BASE: dict[Path, tuple[str, Warehouse]] = {}


def _base(raw: Path, tmp_path_factory) -> tuple[str, Warehouse]:
    if raw not in _BASE:
        text = raw.read_bytes().decode("utf-8")
        _BASE[raw] = text, _warehouse(tmp_path_factory.mktemp("base"), text, raw.name)
    return _BASE[raw]


# ------------------------------------------------------------------------------------------
# Differences between two warehouses.

MISSING = object()


def _row_diffs(table, i, before: dict, after: dict):
    for path in before.keys() | after.keys():
        old, new = before.get(path, MISSING), after.get(path, MISSING)
        if old != new or type(old) is not type(new):
            yield table, i, path, old, new


def _diffs(base: Warehouse, got: Warehouse, pairs: dict[str, list[tuple[int, int]]]):
    """(table, row, path, old, new) of every value that differs in the rows paired as
    ``pairs`` (table → [(base position, mutated position)]), and in their value rows."""
    out = []
    for table, paired in pairs.items():
        for i, j in paired:
            out += _row_diffs(table, i, base.rows[table][i], got.rows[table][j])
    for table, (_fk, parent, _key) in VALUE_TABLES.items():
        to_got = dict(pairs.get(parent, ()))
        b = {k: v for k, v in base.values[table].items() if k[0] in to_got}
        back = {j: i for i, j in to_got.items()}
        g = {(back.get(k[0], ("unpaired", k[0])), *k[1:]): v for k, v in got.values[table].items()
             if k[0] in back}
        for key in b.keys() | g.keys():
            before, after = b.get(key, {}), g.get(key, {})
            if not before or not after:
                out.append((table, key[0], key[1:], before or MISSING, after or MISSING))
                continue
            out += _row_diffs(table, key[0], before, after)
    return out


def _same_order(base: Warehouse, got: Warehouse) -> dict[str, list[tuple[int, int]]]:
    return {t: [(i, i) for i in range(min(len(base.rows[t]), len(got.rows[t])))]
            for t in ROW_TABLES}


def _report(kind, where, problems, base, got) -> str:
    lines = [f"{kind} at {where}:"] + [f"  {p}" for p in problems[:12]]
    if len(problems) > 12:
        lines.append(f"  ... {len(problems) - 12} more")
    new = [w for w in got.warnings if w not in base.warnings]
    lines.append(f"  new warnings: {new[:6]}")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------
# Positions.

def _rng(raw: Path, kind: str) -> random.Random:
    return random.Random(f"{raw.relative_to(FIXTURES)}:{kind}")


def _pick(rng: random.Random, candidates: list, n: int = POSITIONS) -> list:
    candidates = sorted(set(candidates))
    return sorted(rng.sample(candidates, min(n, len(candidates))))


def _lines_in_blocks(base: Warehouse) -> set[int]:
    return {n for _t, _i, a, b in base.block_lines() for n in range(a, b + 1)}


def _wrap_pieces(lines: list[str]) -> set[int]:
    """Lines of a capture a terminal hard-wrapped that are cut pieces (as wide as the pane, the
    widest line, printed at least three times): a line put after one, or a field put inside
    one, would split one printed line in two or change the pane's width (tests/test_wraps.py
    covers wraps)."""
    widths = [len(line.rstrip()) for line in lines]
    pane = max(widths, default=0)
    if pane < 60 or widths.count(pane) < 3:
        return set()
    return {n for n, w in enumerate(widths, 1) if w >= pane - 1}


def _is_whole_file_output(raw: Path) -> bool:
    return raw.suffix in WHOLE_FILE_SUFFIXES


# ------------------------------------------------------------------------------------------
# The mutations.

def garbles(raw: Path, text: str, base: Warehouse) -> list[tuple[int, str, str]]:
    """(line, token, garbled token) of a few numbers stored as values, each one digit → !."""
    lines = text.split("\n")
    stored = base.numbers()
    inside = _lines_in_blocks(base)
    candidates = []
    for n in sorted(inside):
        if n > len(lines):
            continue
        for m in NUMBER.finditer(lines[n - 1]):
            # llama-bench's test (`pp 512`, `tg 128`) identifies its row: a row whose test
            # cannot be read is a warning, not a row (parsers/llama_bench.py, by design).
            if TEST_NAME.search(lines[n - 1][:m.start()]):
                continue
            if float(m.group()) in stored:
                candidates.append((n, m.start(), m.group()))
    rng = _rng(raw, "garble")
    out = []
    for n, start, token in _pick(rng, candidates):
        digits = [i for i, c in enumerate(token) if c.isdigit()]
        d = rng.choice(digits)
        out.append((n, start, token, token[:d] + "!" + token[d + 1:]))
    return out


@pytest.mark.parametrize("pair", PAIRS, ids=_ids)
def test_garbled_value_costs_that_value_only(pair, tmp_path, tmp_path_factory, request):
    _known(request, "garble", pair)
    raw = raw_for(pair)
    text, base = _base(raw, tmp_path_factory)
    failures = []
    for k, (n, start, token, bad) in enumerate(garbles(raw, text, base)):
        lines = text.split("\n")
        line = lines[n - 1]
        lines[n - 1] = line[:start] + bad + line[start + len(token):]
        got = _warehouse(tmp_path / f"g{k}", "\n".join(lines), raw.name)
        where = f"{raw.name}:{n} {token!r}→{bad!r}"
        problems = [f"{t} count {base.counts[t]} → {got.counts[t]}" for t in base.counts
                    if got.counts[t] < base.counts[t]]
        lost = []
        for table, i, path, old, new in _diffs(base, got, _same_order(base, got)):
            if new is None or new is MISSING or (
                    isinstance(new, str) and new == str(old).replace(token, bad)) or (
                    old is MISSING and path[0] == "extra" and isinstance(new, str)
                    and bad in new):        # kept as printed, by its label
                lost.append((table, i, path, old))
            else:
                problems.append(f"{table}[{i}].{path}: {old!r} → {new!r}")
        # The warning names the value's line, or the first line of the record it is on (a
        # wrapped line joined, a table's row read whole).
        near = {n} | {m for t, i, a, b in base.block_lines() if a <= n <= b
                      for m in range(a, b + 1)}
        if lost and not any(w[0] in near for w in got.warnings if w not in base.warnings):
            problems.append(f"value(s) lost with no warning at line {n}: {lost[:4]}")
        if problems:
            failures.append(_report("garble", where, problems, base, got))
    assert not failures, "\n".join(failures)


def foreign_positions(raw: Path, text: str, base: Warehouse) -> list[int]:
    """Lines after which a foreign line goes: inside a block or right after it (never inside
    a command continued by a backslash: a line there is part of the command)."""
    lines = text.split("\n")
    pieces = _wrap_pieces(lines)
    candidates = {n for n in _lines_in_blocks(base) if n <= len(lines) and n not in pieces
                  and not lines[n - 1].rstrip().endswith("\\")}
    return _pick(_rng(raw, "foreign"), candidates)


@pytest.mark.parametrize("pair", PAIRS, ids=_ids)
def test_foreign_line_costs_nothing(pair, tmp_path, tmp_path_factory, request):
    _known(request, "foreign", pair)
    raw = raw_for(pair)
    if _is_whole_file_output(raw):
        pytest.skip("a whole-file output with a line added is not that format any more")
    text, base = _base(raw, tmp_path_factory)
    failures = []
    for k, n in enumerate(foreign_positions(raw, text, base)):
        foreign = FOREIGN_LINES[k % len(FOREIGN_LINES)]
        lines = text.split("\n")
        got = _warehouse(tmp_path / f"f{k}", "\n".join(lines[:n] + [foreign] + lines[n:]),
                         raw.name)
        problems = [f"{t} count {base.counts[t]} → {got.counts[t]}" for t in base.counts
                    if got.counts[t] != base.counts[t] and t != "sightings"]
        problems += [f"{t}[{i}].{p}: {o!r} → {w!r}"
                     for t, i, p, o, w in _diffs(base, got, _same_order(base, got))]
        if problems:
            failures.append(_report("foreign line", f"{raw.name} after line {n} {foreign!r}",
                                    problems, base, got))
    assert not failures, "\n".join(failures)


def field_positions(raw: Path, text: str, base: Warehouse) -> list[tuple[int, str]]:
    """(line, mutated text) for an unknown field: a ``Label: value`` line of its own after a
    value line of a multi-line block, or a field inside a one-line record.  Table rows are
    left alone (a table has no place for a field)."""
    lines = text.split("\n")
    pieces = _wrap_pieces(lines)
    candidates = []
    for _t, _i, a, b in base.block_lines():
        for n in range(a, b + 1):
            if n > len(lines):
                break
            line = lines[n - 1]
            if TABLE_ROW.search(line) or n in pieces:
                continue
            if a == b:
                # A record of `Label: value, Label: value` fields (not a row of values).
                m = IN_LINE_FIELD.search(line)
                if m and len(LABELLED.findall(line)) >= 2:
                    candidates.append((n, line[:m.end()] + "mystery field: 12.5, "
                                       + line[m.end():]))
                continue
            m = VALUE_LINE.match(line)
            if m:
                label = "Mystery metric (ms):"
                width = len(m.group("label")) + 1 + len(m.group("gap"))
                candidates.append((n, line + "\n" + m.group("pre") + label
                                   + " " * max(1, width - len(label)) + "12.5"))
    return _pick(_rng(raw, "field"), candidates)


@pytest.mark.parametrize("pair", PAIRS, ids=_ids)
def test_unknown_field_costs_nothing(pair, tmp_path, tmp_path_factory, request):
    _known(request, "field", pair)
    raw = raw_for(pair)
    if _is_whole_file_output(raw):
        pytest.skip("a whole-file output's fields are its format's keys (see serving_result_json)")
    text, base = _base(raw, tmp_path_factory)
    failures = []
    for k, (n, mutated) in enumerate(field_positions(raw, text, base)):
        lines = text.split("\n")
        lines[n - 1] = mutated
        got = _warehouse(tmp_path / f"u{k}", "\n".join(lines), raw.name)
        problems = [f"{t} count {base.counts[t]} → {got.counts[t]}" for t in base.counts
                    if got.counts[t] != base.counts[t] and t != "sightings"]
        for t, i, p, o, w in _diffs(base, got, _same_order(base, got)):
            if o is MISSING and p[0] == "extra":
                continue        # the field kept by its label
            problems.append(f"{t}[{i}].{p}: {o!r} → {w!r}")
        if problems:
            failures.append(_report("unknown field", f"{raw.name}:{n} {mutated[-60:]!r}",
                                    problems, base, got))
    assert not failures, "\n".join(failures)


# `grep -n`'s `file:118:` before a line: its number is no value the line holds.
GREP_LINE_TAG = re.compile(r"^[^\s:]+[:-]\d+[:-]")


def cut_positions(raw: Path, text: str, base: Warehouse) -> list[int]:
    """Lines after which the file ends: a line holding a value inside a block (or a table),
    with more of the file after it."""
    lines = text.split("\n")
    last = max((i for i, line in enumerate(lines, 1) if line.strip()), default=0)
    candidates = {n for n in _lines_in_blocks(base)
                  if n < last and re.search(r"\d", GREP_LINE_TAG.sub("", lines[n - 1]))}
    return _pick(_rng(raw, "cut"), candidates)


# A report that prints several runs in tables (GuideLLM) makes each run a row that starts at
# the report's first line (its metadata is every run's), but a run's values are only in its
# table rows: cut before the first of them, nothing of that run was printed and there is no
# row to keep (the report is marked cut short with a warning all the same).  Such a run (one
# of several rows of a table starting on one line) counts as printed once a table line after
# that start names it in its first cell (its label's first word, as many times as runs before
# it share it).
TABLE_LINE = re.compile(r"[|│┃]")
ROW_START = re.compile(r"^[\s|│┃]*")


def _run_printed(base: Warehouse, table: str, i: int, cut_lines: list[str],
                 lines: list[str]) -> bool:
    """Run ``i`` of a group of runs one line starts (a label's rows under it, `**before**`
    lines) was printed before the cut; runs named by columns (no line starts with their label)
    were printed with their row."""
    start, end = base.spans[table][i]
    group = [j for j, (a, _b) in enumerate(base.spans[table]) if a == start]
    label = base.rows[table][i].get(("label",))
    if len(group) < 2 or not isinstance(label, str) or not label.split():
        return True
    word = re.compile(rf"{re.escape(label.split()[0])}(?![\w-])")
    same = [j for j in group if isinstance(base.rows[table][j].get(("label",)), str)
            and base.rows[table][j][("label",)].split()[:1] == label.split()[:1]]
    def starts_a_row(line: str) -> bool:
        return TABLE_LINE.search(line) is not None and \
            word.match(line, ROW_START.match(line).end()) is not None

    # (only the lines of the run's own block: a table further on may name the same model)
    if not any(starts_a_row(line) for line in lines[start:end]):
        return True
    seen = sum(1 for line in cut_lines[start:end] if starts_a_row(line))
    return seen > same.index(i)


@pytest.mark.parametrize("pair", PAIRS, ids=_ids)
def test_cut_block_keeps_what_it_printed(pair, tmp_path, tmp_path_factory, request):
    _known(request, "cut", pair)
    raw = raw_for(pair)
    if _is_whole_file_output(raw):
        pytest.skip("a whole-file output cut short is not that format any more")
    text, base = _base(raw, tmp_path_factory)
    failures = []
    for k, n in enumerate(cut_positions(raw, text, base)):
        got = _warehouse(tmp_path / f"c{k}", "\n".join(text.split("\n")[:n]) + "\n", raw.name)
        problems = []
        pairs: dict[str, list[tuple[int, int]]] = {}
        whole: set[tuple[str, int]] = set()
        cut_lines = text.split("\n")[:n]
        for table, spans in base.spans.items():
            printed = [i for i, (a, _b) in enumerate(spans) if a <= n
                       and _run_printed(base, table, i, cut_lines, text.split("\n"))]
            if len(got.rows[table]) < len(printed):
                problems.append(f"{table} count {len(printed)} printed → "
                                f"{len(got.rows[table])}")
            pairs[table] = list(zip(printed, range(len(got.rows[table]))))
            whole |= {(table, i) for i in printed if spans[i][1] <= n}
        # A run seen again after the cut (printed, then saved as JSON) had the values of the
        # sighting that read best: without it, those of what was printed before the cut.
        resighted = {i for i, last in base.seen_until.items()
                     if last > n and base.spans["serving_runs"][i][0] <= n}
        lost = []
        for t, i, p, o, w in _diffs(base, got, pairs):
            if i in resighted and "serving_runs" in (t, VALUE_TABLES.get(t, (0, 0))[1]):
                continue
            if p and p[0] in LINKS and w in (None, MISSING):
                continue        # what it was linked to came after the cut
            if (t, i) not in whole and t in ROW_TABLES or t in VALUE_TABLES and (
                    VALUE_TABLES[t][1], i) not in whole:
                if w is None or w is MISSING:
                    if t not in OPEN_ENDED:
                        lost.append((t, i, p))
                    continue
                if o is MISSING and p == ("extra", "incomplete") or p[0] in RECKONED:
                    continue
            problems.append(f"{t}[{i}].{p}: {o!r} → {w!r}")
        if lost and not [w for w in got.warnings if w not in base.warnings]:
            problems.append(f"a cut row lost values with no warning: {lost[:4]}")
        if problems:
            failures.append(_report("cut", f"{raw.name} after line {n}", problems, base, got))
    assert not failures, "\n".join(failures)
