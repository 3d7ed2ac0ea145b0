"""The prefilter only saves time: skipping inert lines must never change what is read.

Every fixture, and mutations of them, is read twice -- with the prefilter jumping over lines
and with every line read -- and both must give the same rows and warnings, line for line.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from benchvault.ingest.find import TEXT_SUFFIXES
from benchvault.ingest.outcome import IngestWarning
from benchvault.ingest.parse import parse_file
from benchvault.parsers import block_formats
from benchvault.reading import prefilter
from benchvault.reading.lines import LineSource
from benchvault.schemas.store import to_record
from fuzzing import CORPUS, ROOT, mutated

TEXT_FIXTURES = [p for p in CORPUS if p.suffix in TEXT_SUFFIXES]


def read_all(path: Path, monkeypatch, skipping: bool) -> list:
    """Everything parse_file yields for ``path``, as comparable plain data."""
    with monkeypatch.context() as patch:
        if not skipping:
            patch.setattr(prefilter, "for_formats", lambda use_hyperscan=True: None)
        out = []
        for item in parse_file(path):
            if isinstance(item, IngestWarning):
                out.append(("warning", item.line, item.reason, item.raw_text))
            elif hasattr(item, "row"):
                out.append(("row", type(item.row).__name__, to_record(item.row),
                            [to_record(c) for c in item.children]))
            else:  # Facts: a line of a server launch
                out.append(("facts", item.kind, item.line, item.values))
        return [repr(entry) for entry in out]   # repr: a printed `nan` equals itself


@pytest.mark.parametrize("path", TEXT_FIXTURES, ids=lambda p: str(p.relative_to(ROOT)))
def test_skipping_inert_lines_reads_every_fixture_the_same(path, monkeypatch):
    assert read_all(path, monkeypatch, skipping=True) == read_all(path, monkeypatch, skipping=False)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=mutated())
def test_skipping_inert_lines_reads_mutated_fixtures_the_same(data: bytes):
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as monkeypatch:
        note = Path(tmp) / "fuzzed.md"
        note.write_bytes(data)
        assert read_all(note, monkeypatch, True) == read_all(note, monkeypatch, False)


def test_hidden_markers_are_still_candidates(tmp_path):
    """What the line cleaner could turn into a marker is looked at: a result header split by
    an ANSI code, fullwidth letters ftfy folds to ASCII, a marker after a collector prefix."""
    lines = ["plain prose, nothing here",
             "============ Serving \x1b[1mBenchmark\x1b[0m Result ============",
             "ｖｌｌｍ ｓｅｒｖｅ meta-llama/Llama-3.1-8B",
             "bench-1  | ============ Serving Benchmark Result ============",
             "more prose"]
    chunk = ("\n".join(lines) + "\n").encode()
    starts = prefilter.for_formats().candidates(chunk)
    found = [chunk[s:chunk.index(b"\n", s)].decode() for s in starts]
    assert found == lines[1:4]


def test_hyperscan_and_regex_prefilters_agree():
    if prefilter.hyperscan is None:
        pytest.skip("hyperscan is not installed here")
    fast, plain = prefilter.for_formats(True), prefilter.for_formats(False)
    for path in TEXT_FIXTURES:
        data = path.read_bytes()
        assert fast.candidates(data) == plain.candidates(data), path


def test_line_numbers_survive_skipping_across_chunks(tmp_path, monkeypatch):
    """A result far into a file, past several chunk boundaries, keeps its true line."""
    monkeypatch.setattr(LineSource, "CHUNK", 4096)
    block = (Path(__file__).parent.parent / "fixtures" / "seeds"
             / "strix-halo_vllm-vs-llamacpp.md").read_text()
    first = re.search(r"^=+ Serving Benchmark Result =+$", block, re.M)
    end = block.index("=" * 50, first.end())
    result = block[first.start():block.index("\n", end) + 1]
    note = tmp_path / "long.log"
    filler = "INFO:     127.0.0.1:40000 - \"POST /v1/completions HTTP/1.1\" 200 OK\n"
    note.write_text(filler * 5000 + result + filler * 10)
    rows = [item for item in parse_file(note) if hasattr(item, "row")]
    assert [(r.row.line_start, r.row.completed) for r in rows] == [(5001, 64)]


def test_every_preamble_line_in_the_fixtures_holds_a_preamble_marker():
    for fmt in block_formats():
        if fmt.preamble is None:
            continue
        assert fmt.preamble_markers, fmt.name
        for path in TEXT_FIXTURES:
            for line in path.read_text(errors="replace").splitlines():
                if fmt.preamble.match(line.strip()):
                    assert any(m in line.lower() for m in fmt.preamble_markers), (path, line)


def test_a_bom_does_not_hide_the_first_line(tmp_path, monkeypatch):
    """Found by the property test: with a UTF-8 BOM the command on line 1 was skipped."""
    note = tmp_path / "bom.txt"
    note.write_bytes(b"\xef\xbb\xbf$ ./llama-bench -m tiny.gguf -p 64 -n 16\n"
                     b"| model | size | params | backend | threads | test | t/s |\n"
                     b"| --- | ---: | ---: | --- | ---: | ---: | ---: |\n"
                     b"| llama ?B F16 | 9.01 MiB | 4.72 M | CPU | 2 | pp64 "
                     b"| 16922.40 \xc2\xb1 233.13 |\n")
    assert read_all(note, monkeypatch, True) == read_all(note, monkeypatch, False)
    rows = [item.row for item in parse_file(note) if hasattr(item, "row")]
    assert rows[0].command == "./llama-bench -m tiny.gguf -p 64 -n 16"


BODY_VARIANTS = [
    "Successful requests:                     1024   ",
    "2025-01-05T11:40:12.123456789Z Mean TTFT (ms):    2639.01",
    "Mar  5 10:00:01 host vllm[12]: Median TTFT (ms):  4076.09",
    "Mean TPOT (ms):                          319.29",
    "Max Jun TPOT:                            1.0",
    "[stdout] P99 ITL (ms):                   5306.83",
    "[pod/vllm-0/vllm] P99 TTFT (ms):         5234.55",
    "bench-1  | Mean ITL (ms):                4421.57",
    "progress 10%\rMedian ITL (ms):           4402.53",
    "\x1b[1mMean E2EL (ms):\x1b[0m             12.5",
    "",
]


@pytest.mark.parametrize("variant", range(len(BODY_VARIANTS) + 1))
def test_block_body_taken_at_once_is_cleaned_as_line_by_line(tmp_path, variant):
    """take_plain's whole-span path (no CR, ESC or `|` in the span) gives each line exactly
    as clean_line does, collector prefixes removed, and stops at the end line."""
    from benchvault.reading.lines import clean_line

    body = BODY_VARIANTS if variant == len(BODY_VARIANTS) else [BODY_VARIANTS[variant]] * 3
    raw = ["============ Serving Benchmark Result ============", *body, "=" * 50,
           "after the block"]
    path = tmp_path / "capture.log"
    path.write_text("\n".join(raw))
    fmt = next(f for f in block_formats() if f.name == "vllm_serving")
    source = LineSource(path, prefilter=prefilter.for_formats())
    next(source)                                    # the start line
    taken, ended = source.take_plain(str, fmt.end.match, 120)
    cleaned = [clean_line(line) for line in raw[1:]]
    stop = cleaned.index("=" * 50) + 1 if ended else len(taken)
    assert [text for _, text in taken] == cleaned[:stop]
    assert [n for n, _ in taken] == list(range(2, 2 + len(taken)))
    assert ended or taken == [] or len(taken) < len(cleaned)
    rest = list(source)
    assert [text for _, text in rest] == cleaned[len(taken):]
    assert [n for n, _ in rest] == list(range(2 + len(taken), len(raw) + 1))


def test_the_compiled_patterns_are_kept_for_the_next_process(tmp_path, monkeypatch):
    """The Hyperscan database is compiled once and read back by later processes (20 ms of
    every start-up); one written by anyone else, or damaged, is compiled again."""
    if prefilter.hyperscan is None:
        pytest.skip("no hyperscan")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    chunk = b"noise\nServing Benchmark Result\nmore noise\n"
    fresh = prefilter.Prefilter(["Serving Benchmark Result"])
    [cache] = tmp_path.glob(".benchvault_hyperscan_*.db")
    assert oct(cache.stat().st_mode & 0o777) == "0o600"
    compiled = []
    real = prefilter.hyperscan.Database
    monkeypatch.setattr(prefilter.hyperscan, "Database", lambda: compiled.append(1) or real())
    again = prefilter.Prefilter(["Serving Benchmark Result"])
    assert compiled == [] and again.candidates(chunk) == fresh.candidates(chunk) == [6]
    cache.write_bytes(cache.read_bytes()[:200] + b"damage" + cache.read_bytes()[206:])
    assert prefilter.Prefilter(["Serving Benchmark Result"]).candidates(chunk) == [6]
    assert compiled == [1]
    cache.chmod(0o666)
    prefilter.Prefilter(["Serving Benchmark Result"])
    assert compiled == [1, 1] and oct(cache.stat().st_mode & 0o777) == "0o600"
    assert [p.name for p in tmp_path.iterdir()] == [cache.name]
