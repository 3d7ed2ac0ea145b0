"""Parsing each shape of text once (reading/memo.py) must give exactly what lark gives.

The texts are the real blocks and log lines of the fixtures; the property test puts other
numbers (0, long, decimal, many digits) into them, which is what the cache sees in a sweep.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchvault.parsers import engine_stats, spec_decode, vllm_server, vllm_serving
from benchvault.reading import memo
from benchvault.reading.segmenter import LineHit, Segmenter
from benchvault.parsers.base import Block
from benchvault.reading.lines import iter_lines
from benchvault.parsers.vllm_server_log import split_log_line
from fuzzing import CORPUS

# (parser, how a segmenter item becomes the text that parser reads)
PARSERS = {
    "vllm_serving": (vllm_serving._parser, lambda item: item.text + "\n"),
    "engine_stats": (engine_stats._parser, lambda item: split_log_line(item.text).message),
    "spec_decode": (spec_decode._parser, lambda item: split_log_line(item.text).message),
    "vllm_server": (vllm_server._parser, lambda item: split_log_line(item.text).message),
}


def fixture_texts() -> list[tuple[str, str]]:
    """(format, text its grammar reads) for every block and line the fixtures hold."""
    out = []
    for path in CORPUS:
        if path.suffix not in (".md", ".txt", ".log"):
            continue
        for item in Segmenter(str(path)).run(iter_lines(path)):
            if isinstance(item, (Block, LineHit)) and item.format.name in PARSERS:
                out.append((item.format.name, PARSERS[item.format.name][1](item)))
    return out


TEXTS = fixture_texts()


def lark_parse(name: str, text: str):
    try:
        return PARSERS[name][0]().parse(text)
    except Exception as exc:  # the memo must fail the same way
        return type(exc)


def memo_parse(cache: memo.Memo, text: str):
    try:
        return cache(text)
    except Exception as exc:
        return type(exc)


def test_the_fixtures_hold_texts_for_every_memoised_grammar():
    assert {name for name, _ in TEXTS} == set(PARSERS)
    assert len(TEXTS) > 100


@pytest.mark.parametrize("name", sorted(PARSERS))
def test_memo_gives_lark_results_on_every_fixture_text(name):
    cache = memo.Memo(PARSERS[name][0]().parse)
    texts = [t for n, t in TEXTS if n == name]
    for _ in range(2):  # first pass learns the shapes, the second is served from them
        for text in texts:
            assert memo._same(memo_parse(cache, text), lark_parse(name, text)), text
    assert cache.hits >= len(texts) - cache.misses


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(pick=st.sampled_from(TEXTS), data=st.data())
def test_memo_gives_lark_results_with_other_numbers(pick, data):
    name, text = pick
    cache = memo.Memo(PARSERS[name][0]().parse)
    memo_parse(cache, text)  # learn this shape from the fixture's own numbers
    number = st.one_of(st.just("0"), st.integers(1, 10**9).map(str),
                       st.floats(0, 1e7, allow_nan=False).map(lambda f: f"{f:.2f}"),
                       st.floats(0, 1, allow_nan=False).map(lambda f: f"{f:.4f}"))
    other = memo.SLOT_RE.sub(lambda m: data.draw(number), text)
    assert memo._same(memo_parse(cache, other), lark_parse(name, other)), other


def test_a_grammar_that_computes_with_a_number_is_parsed_every_time():
    # MiB → GiB, the way vllm_server reads weights memory: not a copy of the printed number.
    def parse(text):
        return {"gib": float(re.search(r"[\d.]+", text).group()) / 1024}

    cache = memo.Memo(parse)
    assert cache("Model weights took 2048 MiB") == {"gib": 2.0}
    assert cache("Model weights took 1024 MiB") == {"gib": 1.0}
    assert cache.hits == 0


def test_a_result_holding_lark_tokens_is_not_templated():
    from lark import Token

    cache = memo.Memo(lambda text: [Token("NUMBER", text.split()[-1])])
    first, second = cache("value 1"), cache("value 2")
    assert type(second[0]) is Token and second == ["2"] and first == ["1"]
    assert cache.hits == 0


@pytest.mark.parametrize("text,slots", [
    ("Mean TTFT (ms):   39.09", ["39.09"]),
    ("P99 TTFT (ms): 120", ["120"]),            # P99 is a label, not a number
    ("vLLM 0.6.6 on 127.0.0.1:8000", ["8000"]),  # versions and addresses are not numbers
    ("weights 1,024 MiB, 1e5 rps", []),           # neither are 1,024 or 1e5
    ("INFO 01-05 11:40:06 at run 41.", ["01", "05", "11", "40", "06", "41"]),
    ("Running: 64 reqs, usage: 9.2%.", ["64", "9.2"]),
])
def test_what_counts_as_a_number(text, slots):
    assert memo.SLOT_RE.findall(text) == slots


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(pick=st.sampled_from(TEXTS), data=st.data())
def test_memo_gives_lark_results_for_texts_laid_out_like_a_known_one(pick, data):
    """Other digits, in the numbers or in the labels (`P99` → `P11`, `15` → `05`): a text
    laid out like a known one is served from the layout cache only when its labels are the
    same and its numbers are still numbers."""
    name, text = pick
    cache = memo.Memo(PARSERS[name][0]().parse)
    memo_parse(cache, text)
    digit = st.sampled_from("123456789")
    in_numbers = memo.SLOT_RE.sub(lambda m: re.sub("[1-9]", lambda _: data.draw(digit),
                                                   m.group()), text)
    anywhere = re.sub("[0-9]", lambda _: data.draw(st.sampled_from("0123456789")), text)
    for other in (in_numbers, anywhere):
        assert memo._same(memo_parse(cache, other), lark_parse(name, other)), other
    fresh = memo.Memo(PARSERS[name][0]().parse)
    memo_parse(fresh, text)
    if memo.layout_of(text) in fresh.layouts:
        memo_parse(fresh, in_numbers)
        assert fresh.hits == 1


def test_the_cache_stays_within_its_budget(monkeypatch):
    """Every shape new (labels with a counter): the cache stops growing at its budget, and
    a text longer than MAX_TEXT is never kept; results stay lark's."""
    monkeypatch.setattr(memo, "MAX_CACHED_CHARS", 10_000)
    cache = memo.Memo(lambda text: text.split())
    for i in range(2000):
        text = f"label{i}x: {i}.5 ms"
        assert cache(text) == text.split()
    assert cache.cached_chars <= 10_000
    assert 100 < len(cache.shapes) + len(cache.layouts) < 1000
    long = "x" * (memo.MAX_TEXT + 1) + " 42"
    assert cache(long) == long.split() and memo.layout_of(long) not in cache.layouts
