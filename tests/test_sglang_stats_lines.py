"""SGLang scheduler lines read one at a time: what an unexpected prefix, field or value costs.

The fixture pairs (fixtures/sglang_stats/) hold whole logs; these pin the rules a single line
follows: a garbled value is null with a warning naming the file line and the text, a prefix no
rule knows costs only the time or rank it would have given, prose glued onto a line by a wrap is
refused (so the segmenter keeps the lines apart).
"""

from __future__ import annotations

import pytest

from benchvault.ingest.parse import parse_file
from benchvault.parsers.base import BlockParseError, Context, Parsed
from benchvault.parsers.sglang_stats import FORMAT, build

DECODE = ("Decode batch, #running-req: 9, #token: 7560, token usage: 0.06, cuda graph: True, "
          "gen throughput (token/s): 399.87, #queue-req: 2")


def read(text: str, line: int = 1) -> Parsed:
    return build(line, text, Context())


def test_a_garbled_number_is_null_with_a_warning_naming_the_line_and_the_text():
    parsed = read(DECODE.replace("399.87", "3g9.87"), line=41)
    row = parsed.row
    assert row.generation_throughput is None
    assert (row.running, row.waiting, row.gpu_kv_cache_usage_pct) == (9, 2, 6.0)
    assert row.num_used_tokens == 7560
    assert row.cuda_graph is True and row.extra == {"batch": "decode"}
    [(line, reason)] = parsed.warnings
    assert line == 41 and "gen throughput (token/s)" in reason and "'3g9.87'" in reason


def test_a_garbled_count_in_extra_is_null_there():
    parsed = read(DECODE.replace("#token: 7560", "#token: 75?0"))
    assert parsed.row.num_used_tokens is None and "num_token" not in parsed.row.extra
    assert parsed.row.running == 9
    assert "'75?0'" in parsed.warnings[0][1]


def test_a_fraction_where_a_count_belongs_is_null_with_a_warning():
    parsed = read(DECODE.replace("#running-req: 9", "#running-req: 9.5"))
    assert parsed.row.running is None and parsed.row.waiting == 2
    assert "#running-req" in parsed.warnings[0][1]


def test_a_line_cut_mid_label_keeps_what_it_printed():
    parsed = read("[2025-09-09 03:15:31 DP2 TP2] Decode batch, #running-req: 4, #token: 3390, "
                  "token usage: 0.03, pre-allocated usage: 0.00, #retra")
    assert (parsed.row.running, parsed.row.engine_index, parsed.row.waiting) == (4, 2, None)
    assert "'#retra'" in parsed.warnings[0][1]


@pytest.mark.parametrize("tail", [" and then it hung", ", and then it hung", ", Note: it hung here"])
def test_prose_after_the_last_field_is_not_part_of_the_line(tail):
    """What a wrap join would glue on: refused, so the segmenter reads the line alone."""
    with pytest.raises(BlockParseError):
        read(DECODE + tail)


def test_prose_after_a_terminal_wide_line_stays_its_own_line(tmp_path):
    log = tmp_path / "hung.log"
    log.write_text(f"[2025-09-09 03:15:29 TP0] {DECODE}\nthen it hung for a minute\n")
    [item] = [i for i in parse_file(log) if isinstance(i, Parsed)]
    assert "hung" not in item.row.raw_text
    assert (item.row.running, item.row.waiting, item.row.generation_throughput) == (9, 2, 399.87)


def test_a_head_without_fields_is_a_warning_not_a_row():
    with pytest.raises(BlockParseError, match="wrapped"):
        read("[2026-04-22 07:41:25 DP3 TP3] Decode batch,")


@pytest.mark.parametrize("text, batch", [
    ("    #running-req: 2, #token: 90, token usage: 0.01, gen throughput (token/s): 18.40, "
     "#queue-req: 0", "decode"),
    ("  #new-seq: 1, #new-token: 64, #cached-token: 0, token usage: 0.00, #running-req: 1, "
     "#queue-req: 0", "prefill")])
def test_the_fields_of_a_line_wrapped_after_its_head_are_read_alone(text, batch):
    assert FORMAT.matches(text)
    row = read(text).row
    assert row.extra["batch"] == batch and row.running in (1, 2) and row.logged_at is None


def test_a_line_joined_back_from_its_wrap_reads_whole():
    row = read("[2026-04-22 07:41:25 DP3 TP3] Decode batch,\n    #running-req: 2, #token: 90, "
               "token usage: 0.01, gen throughput (token/s): 18.40, #queue-req: 0").row
    assert (row.logged_at, row.engine_index, row.running, row.generation_throughput) == \
        ("2026-04-22 07:41:25", 3, 2, 18.4)


@pytest.mark.parametrize("prefix, logged_at, engine_index, clock", [
    ("", None, None, None),
    ("[gpu_id=3] ", None, None, None),
    ("[gpu=1] ", None, None, None),
    ("[11:02:33 TP0] ", None, None, "11:02:33"),
    ("[22:54:04 DP28] ", None, 28, "22:54:04"),
    ("[2025-06-03 21:40:02 DP5 TP5] ", "2025-06-03 21:40:02", 5, None),
    ("[2026-05-20 04:44:46 TP0 EP0] ", "2026-05-20 04:44:46", None, None),
    ("(SGLangEngine pid=23817, ip=10.4.1.22) [2025-11-20 06:31:14 DP1 TP1] ",
     "2025-11-20 06:31:14", 1, None),
    ("2026-01-09 13:27:50,412 [INFO] sglang.srt.managers.scheduler_metrics_mixin: ",
     "2026-01-09 13:27:50", None, None),
    ("2026-09-27T00:15:25.500Z pod-7 INFO TP0] ", "2026-09-27 00:15:25", None, None),
    ("+         ", None, None, None),
    ("-[2025-04-11 15:31:02 TP0] ", "2025-04-11 15:31:02", None, None),
    ("> ", None, None, None),
])
def test_every_prefix_costs_only_what_it_would_have_said(prefix, logged_at, engine_index, clock):
    text = prefix + DECODE
    assert FORMAT.matches(text)
    row = read(text).row
    assert (row.logged_at, row.engine_index, row.extra.get("logged_time")) == \
        (logged_at, engine_index, clock)
    assert (row.running, row.waiting, row.generation_throughput) == (9, 2, 399.87)


@pytest.mark.parametrize("text", [
    'f"Decode batch. "',
    "r'Prefill batch, #new-seq: (\\d+), #new-token: (\\d+)'",
    "The decode batch size was 64.",
])
def test_source_and_prose_naming_a_batch_are_no_lines(text):
    assert not FORMAT.matches(text)


def test_lines_of_one_shape_give_each_their_own_numbers():
    """The parse memo (reading/memo.py) fills a learnt shape with each line's numbers."""
    a = read(DECODE).row
    b = read(DECODE.replace("9,", "11,").replace("399.87", "412.05").replace("0.06", "0.07")).row
    assert (a.running, a.generation_throughput, a.gpu_kv_cache_usage_pct) == (9, 399.87, 6.0)
    assert (b.running, b.generation_throughput, b.gpu_kv_cache_usage_pct) == (11, 412.05, 7.0)


def test_keyed_pool_values_and_lists_keep_their_shape():
    row = read("Decode batch. #running-req: 2, #token: full=1200, swa=310, token usage: "
               "full=0.30, swa=0.20, #running-req per DP: [1, 1], gen throughput (token/s): "
               "51.00, #queue-req: 0").row
    assert row.gpu_kv_cache_usage_pct == 30.0
    assert row.num_used_tokens == 1200
    assert row.extra == {"batch": "decode", "num_token": {"full": 1200, "swa": 310},
                         "token_usage": {"full": 0.3, "swa": 0.2}, "num_running_req_per_dp": [1, 1]}


def test_the_warning_of_a_garbled_value_reaches_the_warehouse(tmp_path):
    log = tmp_path / "garbled.log"
    log.write_text(DECODE.replace("399.87", "3g9.87") + "\n")
    warnings = [i for i in parse_file(log) if not isinstance(i, Parsed)]
    assert [w.line for w in warnings] == [1] and "3g9.87" in warnings[0].reason
