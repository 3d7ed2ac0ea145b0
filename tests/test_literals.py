"""reading.literals.any_of finds what the plain alternation of the same words finds."""

import re

from hypothesis import given, settings, strategies as st

from benchvault.reading.literals import any_of
from benchvault.reading.segmenter import Segmenter


def plain(words):
    words = [w for w in words if w]
    return re.compile("|".join(map(re.escape, words)) if words else r"(?!)")


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.text(alphabet="ab |\t-x.(", max_size=4), max_size=8),
       st.text(alphabet="ab |\t-xy.(", max_size=24))
def test_same_first_match_as_the_alternation(words, text):
    ours, theirs = any_of(words).search(text), plain(words).search(text)
    assert (ours is None) == (theirs is None)
    if ours is not None:
        assert ours.start() == theirs.start()


def test_the_segmenters_markers_on_real_lines():
    segmenter = Segmenter("note.md")
    markers = [m for f in segmenter.formats for m in f.markers]
    assert len(markers) > 50
    lines = ["Mean TTFT (ms):                          123.45",
             "| model | size | params | backend | ngl | test | t/s |",
             "Successful requests:                     1000",
             "INFO 07-03 23:23:58 [loggers.py:116] Engine 000: Avg prompt throughput: 1.0 tokens/s",
             "nothing to see here", "   pp512 @ d4096", "a\tTTFT column"]
    for line in lines:
        assert (segmenter.start_hint.search(line) is None) == \
            (plain(markers).search(line) is None), line
        assert (segmenter.wrap_marker_re.search(line) is None) == \
            (plain(segmenter.wrap_markers).search(line) is None), line
    assert segmenter.start_hint.search(lines[1]) is not None       # '| model'
    assert segmenter.start_hint.search(lines[4]) is None
