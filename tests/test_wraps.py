"""Lines a pane or an editor wrapped read as the lines they were.

Real captures are wrapped here the two ways people's pastes are: hard at a terminal's width
(`fold -w`), cutting anywhere, numbers too, and at word boundaries (`fold -s`), with the blank
at the end of each piece kept or trimmed by an editor.  Each must give the rows of the capture
as printed.
"""

from __future__ import annotations

import re
import sqlite3
import textwrap

import pytest

from benchvault.reading.wrap import Pane, pane_of, readings
from conftest import FIXTURES, ingest_into

TABLES = ("server_launches", "engine_stats", "spec_decode_metrics")
# Where a row was read and its raw text differ by construction.
IGNORED = {"id", "source_id", "launch_id", "run_id", "config_id", "group_id", "raw_text",
           "line_start", "line_end", "text"}
# Real captures of each kind of line that runs long: start-up figures (KV cache size, maximum
# concurrency, init engine, non-default args), v0 and v1 stats lines, spec-decode lines,
# SGLang scheduler lines of several versions.
CAPTURES = [
    "vllm_server/v1_kv_capacity_pr20707.log",
    "vllm_server/v1_startup_figures_derived.log",
    "vllm_server/v1_nondefault_args_pr24162.log",
    "vllm_server/v0_memory_profile_derived.log",
    "vllm_server/v1_graph_capture_pr19794.log",
    "vllm_server/ascend_npu_and_cpu_backend_blocks_derived.log",
    "engine_stats/v0_metrics_issue22230.log",
    "engine_stats/v1_loggers_issue14226.log",
    "spec_decode/v0_spec_prefix_issue9539.log",
    "spec_decode/v1_log_rename_pr15902.log",
    "sglang_stats/derived-scheduler-2024-to-2025.log",
    "sglang_stats/derived-sglang-0.5-2026-current.log",
]


def hard(text: str, width: int) -> str:
    """`fold -w width`: every line cut into pieces of the pane's width."""
    out = []
    for line in text.split("\n"):
        out += [line[i:i + width] for i in range(0, len(line), width)] or [""]
    return "\n".join(out)


def word(text: str, width: int, trim: bool) -> str:
    """`fold -s -w width`: cut after the last blank that fits (kept, or trimmed as an editor
    does), a word longer than the pane cut where it must."""
    out = []
    for line in text.split("\n"):
        while len(line) > width:
            cut = line.rfind(" ", 0, width) + 1 or width
            out.append(line[:cut].rstrip() if trim else line[:cut])
            line = line[cut:]
        out.append(line)
    return "\n".join(out)


def content(db) -> dict:
    conn = sqlite3.connect(db)
    try:
        out = {}
        for table in TABLES:
            columns = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")
                       if r[1] not in IGNORED]
            out[table] = [dict(zip(columns, r)) for r in conn.execute(
                f"SELECT {', '.join(columns)} FROM {table} ORDER BY rowid")]
        return out
    finally:
        conn.close()


def rows_of(tmp_path, name: str, text: str) -> dict:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    ingest_into(tmp_path / f"{name}.db", path)
    return content(tmp_path / f"{name}.db")


WRAPS = {"hard-80": lambda t: hard(t, 80), "hard-100": lambda t: hard(t, 100),
         "hard-120": lambda t: hard(t, 120), "word-80": lambda t: word(t, 80, False),
         "word-80-trimmed": lambda t: word(t, 80, True), "word-100": lambda t: word(t, 100, False)}


@pytest.mark.parametrize("wrap", sorted(WRAPS))
@pytest.mark.parametrize("capture", CAPTURES)
def test_a_wrapped_capture_reads_as_printed(tmp_path, capture, wrap):
    text = (FIXTURES / capture).read_text(encoding="utf-8")
    want = rows_of(tmp_path, "printed.log", text)
    assert sum(map(len, want.values())) > 0
    got = rows_of(tmp_path, "wrapped.log", WRAPS[wrap](text))
    for table in TABLES:
        assert got[table] == want[table], table


NARROW = {"hard-40": lambda t: hard(t, 40), "hard-50": lambda t: hard(t, 50),
          "word-50": lambda t: word(t, 50, True), "word-60": lambda t: word(t, 60, False)}


@pytest.mark.parametrize("wrap", sorted(NARROW))
@pytest.mark.parametrize("capture", ["engine_stats/v0_metrics_issue22230.log",
                                     "engine_stats/v1_loggers_issue14226.log",
                                     "spec_decode/v1_log_rename_pr15902.log",
                                     "sglang_stats/derived-sglang-0.5-2026-current.log"])
def test_a_stats_capture_from_a_narrow_pane_reads_as_printed(tmp_path, capture, wrap):
    # A phone's terminal or a split pane cuts a stats line into five pieces or more.
    text = (FIXTURES / capture).read_text(encoding="utf-8")
    want = rows_of(tmp_path, "printed.log", text)
    got = rows_of(tmp_path, "narrow.log", NARROW[wrap](text))
    for table in TABLES:
        assert got[table] == want[table], table


def hanging(text: str, width: int) -> str:
    """A word wrap with a hanging indent (an editor's or a renderer's): each piece after the
    first starts with four blanks."""
    out = []
    for line in text.split("\n"):
        out += textwrap.wrap(line, width, subsequent_indent="    ", break_long_words=True,
                             break_on_hyphens=False, drop_whitespace=True) or [""]
    return "\n".join(out)


# What a log collector prints before each line; the pane that wraps the line counts it.
COLLECTORS = {"docker-t": "2025-11-02T09:14:03.512345678Z ", "compose": "vllm-1  | ",
              "kubectl-prefix": "[pod/vllm-0/vllm] ",
              "cri-node-log": "2025-11-02T09:14:03.512345678Z stdout F "}
NOTE_WRAPS = {"hard-80": lambda t: hard(t, 80), "hard-100": lambda t: hard(t, 100),
              "word-80": lambda t: word(t, 80, True), "hanging-90": lambda t: hanging(t, 90)}


@pytest.mark.parametrize("wrap", sorted(NOTE_WRAPS))
@pytest.mark.parametrize("collector", sorted(COLLECTORS))
@pytest.mark.parametrize("capture", ["engine_stats/v1_loggers_issue14226.log",
                                     "spec_decode/v1_log_rename_pr15902.log",
                                     "sglang_stats/derived-sglang-0.5-2026-current.log"])
def test_a_collected_capture_wrapped_in_a_note_reads_as_printed(tmp_path, capture, collector,
                                                                 wrap):
    # The collector's prefix is read off each line, but the pane printed it: the first piece
    # of a wrapped line is that much narrower than the pieces after it.
    lines = (FIXTURES / capture).read_text(encoding="utf-8").splitlines()
    text = "\n".join(COLLECTORS[collector] + line if line.strip() else line for line in lines)
    want = rows_of(tmp_path, "printed.md", f"```\n{text}\n```\n")
    assert sum(map(len, want.values())) > 0
    got = rows_of(tmp_path, "wrapped.md", f"```\n{NOTE_WRAPS[wrap](text)}\n```\n")
    for table in TABLES:
        assert got[table] == want[table], table


KV_LINE = ("(EngineCore_0 pid=1399537) INFO 08-19 14:58:40 [kv_cache_utils.py:853] Maximum "
           "concurrency for 40,000 tokens per request: 501.94x")
STATS_LINE = ("INFO 03-05 18:47:22 loggers.py:78] Avg prompt throughput: 1480.0 tokens/s, Avg "
              "generation throughput: 1.1 tokens/s, Running: 4 reqs, Waiting: 0 reqs, GPU KV "
              "cache usage: 15.3%, Prefix cache hit rate: 0.0%")


@pytest.mark.parametrize("at", range(len(KV_LINE) - 7, len(KV_LINE)))
def test_a_number_cut_at_any_place_is_joined_exactly(tmp_path, at):
    # `501.9|4x`, `50|1.94x`...: a hard wrap at the pane's width loses nothing.  The pane is
    # seen in the paste: three stats lines cut at the same width come before.
    before = "\n".join(hard(STATS_LINE, at).split("\n")[:2]) + "\n"
    note = tmp_path / "pane.log"
    note.write_text(before * 3 + hard(KV_LINE, at) + "\n", encoding="utf-8")
    ingest_into(tmp_path / "w.db", note)
    conn = sqlite3.connect(tmp_path / "w.db")
    assert conn.execute("SELECT max_concurrency_x, max_concurrency_tokens "
                        "FROM server_launches").fetchall() == [(501.94, 40000)]
    assert conn.execute("SELECT count(*) FROM unparsed_blocks").fetchone() == (0,)


V1_STATS_LINE = ("(APIServer pid=24172) INFO 11-23 09:33:16 [loggers.py:335] Engine 000: "
                 + STATS_LINE[STATS_LINE.index("Avg prompt"):])


def test_a_label_cut_inside_a_word_is_joined_exactly(tmp_path):
    at = V1_STATS_LINE.index("Avg prompt") + len("Avg promp")   # `Avg promp|t throughput`
    pane = tmp_path / "pane.log"
    pane.write_text(hard(V1_STATS_LINE, at) + "\n", encoding="utf-8")
    ingest_into(tmp_path / "w.db", pane)
    conn = sqlite3.connect(tmp_path / "w.db")
    assert conn.execute("SELECT prompt_throughput, generation_throughput, running, "
                        "gpu_kv_cache_usage_pct FROM engine_stats").fetchall() == [
        (1480.0, 1.1, 4, 15.3)]


def test_readings_of_each_kind_of_wrap():
    # A hard wrap: pieces of the pane's width joined with nothing, one a blank short (the cut
    # fell on it and it was trimmed) joined with it.
    assert readings(["abc de", "f gh"]) == [[""], [" "]]
    assert readings(["abcdef", "abcde", "xy"], pane_at_least=6)[0] == ["", " "]
    # A word wrap only: a piece narrower than the pane the paste showed.
    assert readings(["Avg prompt", "throughput: 1.0"], pane_at_least=20) == [[" "]]
    # Both fit two pieces: two known words, or a flag after a value, say word wrap first.
    assert readings(["GPU KV cache", "usage: 1.3%"])[0] == [" "]
    assert readings(["vllm serve model", "--max-model-len 2048"])[0] == [" "]
    # A pane seen in the capture decides.
    assert readings(["Avg prompt", "throughput"], pane=Pane("word", 12))[0] == [" "]
    # No pane cuts a piece longer than the one before it at a word's end.
    assert readings(["short", "a much longer line than that"]) == []


def test_the_pane_is_seen_in_the_capture():
    text = (FIXTURES / "engine_stats/v1_loggers_issue14226.log").read_text(encoding="utf-8")
    assert pane_of(text.encode()) is None
    assert pane_of(hard(text, 80).encode()) == Pane("hard", 80)
    assert pane_of(word(text, 80, False).encode()) == Pane("word", 80)
    # A llama-bench table's rows are one width too, but no row is a wrapped piece.
    table = (FIXTURES / "llama_bench/vulkan_depth_kv_types.txt").read_bytes()
    assert pane_of(table) is None


def ragged(text: str, seed: int, inside_words: bool) -> str:
    """A wrap at no one width (a web page's in a proportional font, copied): each piece as
    wide as the page happened to be there, cut at a blank (trimmed) or anywhere."""
    import random
    rng = random.Random(seed)
    out = []
    for line in text.split("\n"):
        while len(line) > 40:
            width = rng.randint(40, 100)
            if len(line) <= width:
                break
            cut = width if inside_words else (line.rfind(" ", 0, width) + 1 or width)
            out.append(line[:cut].rstrip())
            line = line[cut:] if inside_words else line[cut:].lstrip()
        out.append(line)
    return "\n".join(out)


def per_field(text: str) -> str:
    """A record broken after each field by hand, its commas kept (`Running: 4 reqs,`)."""
    return "\n".join(line.replace(", ", ",\n") for line in text.split("\n"))


def per_field_bare(text: str) -> str:
    """A record written out a field per line, its separators left off (`Running: 4 reqs`)."""
    return "\n".join(re.sub(r", (?=[A-Z#][^,:]{0,40}:)", "\n", line) for line in text.split("\n"))


def remarked(text: str) -> str:
    """Each field of it with the writer's remark after it (`Running: 4 reqs    # peak`)."""
    return "\n".join(line + "    # 注: " + str(n) if line.strip() else line
                     for n, line in enumerate(per_field_bare(text).split("\n")))


def paragraphs(text: str) -> str:
    """Each piece of a wrap a paragraph of its own (a web page's `<p>`, copied): a blank line
    after every line, the pieces of one record's too."""
    return "\n\n".join(ragged(text, 5, False).split("\n"))


RAGGED = {"word-1": lambda t: ragged(t, 1, False), "word-2": lambda t: ragged(t, 2, False),
          "anywhere-3": lambda t: ragged(t, 3, True), "anywhere-4": lambda t: ragged(t, 4, True),
          "per-field": per_field, "per-field-bare": per_field_bare, "remarked": remarked,
          "paragraphs": paragraphs}


@pytest.mark.parametrize("wrap", sorted(RAGGED))
@pytest.mark.parametrize("capture", ["engine_stats/v1_loggers_issue14226.log",
                                     "engine_stats/v0_metrics_issue22230.log",
                                     "spec_decode/v1_log_rename_pr15902.log"])
def test_a_capture_wrapped_at_no_one_width_in_a_note_reads_as_printed(tmp_path, capture, wrap):
    # Pieces of every width: no pane tells where a line was cut, the record's grammar does
    # (it stops mid-way: on a separator, inside a token, or before the words it is known by).
    text = (FIXTURES / capture).read_text(encoding="utf-8")
    want = rows_of(tmp_path, "printed.md", f"Logs:\n\n```\n{text}\n```\n")
    assert sum(map(len, want.values())) > 0
    got = rows_of(tmp_path, "wrapped.md", f"Logs:\n\n```\n{RAGGED[wrap](text)}\n```\n")
    for table in TABLES:
        assert got[table] == want[table], table


def test_a_line_after_a_record_may_start_with_a_letter_outside_ascii(tmp_path):
    # GuideLLM heads its tables with `ℹ` (a letter to Python, no word the grammars know)
    # under a record that ends on a letter: it goes on no word, and ingesting goes on.
    note = tmp_path / "note.md"
    note.write_text("- Maximum concurrency for 262,144 tokens per request: 1.14x\n"
                    "ℹ Request Latency Statistics (Completed Requests)\n", encoding="utf-8")
    ingest_into(tmp_path / "w.db", note)
    conn = sqlite3.connect(tmp_path / "w.db")
    assert conn.execute("SELECT max_concurrency_x FROM server_launches").fetchall() == [(1.14,)]


def test_a_stats_line_cut_into_ten_pieces_reads_as_printed(tmp_path):
    # v0's stats and spec-decode lines (250 characters) in a 30-column pane: ten pieces.
    text = (FIXTURES / "engine_stats/v0_metrics_issue22230.log").read_text(encoding="utf-8")
    want = rows_of(tmp_path, "printed.log", text)
    assert len(want["engine_stats"]) == 1 and len(want["spec_decode_metrics"]) == 1
    assert rows_of(tmp_path, "narrow.md", "Logs:\n\n" + hard(text, 30) + "\n") == want


@pytest.mark.parametrize("line,kept", [
    ("Mean acceptance length: 3.32   # MTP3", "Mean acceptance length: 3.32"),
    ("Running: 4 reqs\t\t# peak", "Running: 4 reqs"),
    ("#running-req: 3  # x", "#running-req: 3  # x"),          # SGLang's own `#`
    ("| Mean TTFT: 45 |  # x |", "| Mean TTFT: 45 |  # x |"),    # a table's row
    ("no figure here  # remark", "no figure here  # remark"),
])
def test_a_writer_s_remark_after_a_figure_is_left_off(line, kept):
    from benchvault.reading.segmenter import without_remark
    assert without_remark(line) == kept


def test_prose_that_names_a_program_is_prose_not_a_cut_record(tmp_path):
    # (a path to llama-server.exe is the launch format's word, but the line launches nothing)
    text = ("Box: Intel Arc B580 (12GB), Windows 11, Vulkan (bin\\vulkan\\llama-server.exe, "
            "build b9120-0f1e2d3)\n\nCommand:\n`llama-server -m tiny-Q4_0.gguf -ngl 99`\n\n"
            "Prompt processing: 820.5 t/s\nGeneration: 61.2 t/s\n")
    path = tmp_path / "note.md"
    path.write_text(text, encoding="utf-8")
    ingest_into(tmp_path / "note.db", path)
    conn = sqlite3.connect(tmp_path / "note.db")
    reasons = [r for (r,) in conn.execute("SELECT reason FROM unparsed_blocks")]
    got = conn.execute("SELECT test, avg_ts, gpu_info, build_number, model_ftype "
                       "FROM llama_bench_results ORDER BY rowid").fetchall()
    conn.close()
    assert not any("reads neither alone nor joined" in r for r in reasons)
    assert got == [
        ("pp", 820.5, "Intel Arc B580", 9120, "Q4_0"), ("tg", 61.2, "Intel Arc B580", 9120, "Q4_0")]
