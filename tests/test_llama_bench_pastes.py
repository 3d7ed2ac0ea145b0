"""llama-bench tables as pastes leave them: what a paste did costs only what it touched.

Own text throughout; the values are read off the lines by eye.
"""

from __future__ import annotations

import pytest

from benchvault.ingest.parse import parse_file

HEADER = ("| model                          |       size |     params | backend    | ngl | fa |"
          "            test |                  t/s |")
RULE = ("| ------------------------------ | ---------: | ---------: | ---------- | --: | -: |"
        " --------------: | -------------------: |")
ROWS = ["| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | CUDA       |  99 |  1 |"
        "           pp512 |      5012.77 ± 21.40 |",
        "| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | CUDA       |  99 |  1 |"
        "           tg128 |        152.31 ± 0.26 |"]
WANT = [("pp512", 5012.77, 21.40, 99, 1, "0a1b2c3d", 4321), ("tg128", 152.31, 0.26, 99, 1,
                                                            "0a1b2c3d", 4321)]


def read(tmp_path, text: str, name: str = "paste.txt"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    items = list(parse_file(path))
    rows = [i.row for i in items if hasattr(i, "row")]
    warnings = [(w.line, w.reason) for w in items if not hasattr(w, "row")]
    return rows, warnings


def values(rows):
    return [(r.test, r.avg_ts, r.stddev_ts, r.n_gpu_layers, r.flash_attn, r.build_commit,
             r.build_number) for r in rows]


# every place a terminal could have cut the header after its `params` column
CUTS = range(HEADER.index("params |") + len("params |"), len(HEADER) - 1)


@pytest.mark.parametrize("cut", CUTS)
@pytest.mark.parametrize("indent", ["", "    "])
def test_a_header_wrapped_anywhere_is_joined_again(tmp_path, cut, indent):
    text = "\n".join([HEADER[:cut], indent + HEADER[cut:], RULE, *ROWS, "",
                      "build: 0a1b2c3d (4321)", ""])
    rows, warnings = read(tmp_path, text)
    assert values(rows) == WANT, (HEADER[:cut], HEADER[cut:])
    assert [r.line_start for r in rows] == [4, 5]
    # (the reader drops the spaces a line ends with)
    assert rows[0].raw_text == "\n".join([HEADER[:cut].rstrip(), indent + HEADER[cut:], ROWS[0]])
    assert warnings == []


def test_a_hand_made_table_with_model_and_size_columns_is_not_a_wrapped_header(tmp_path):
    """`| model | size | params |` without `test` and `t/s`: a table someone typed, left to
    the published tables."""
    note = "\n".join(["| model | size | params | notes |", "|---|---|---|---|",
                      "| llama 8B Q4_K - Medium | 4.58 GiB | 8.03 B | the one we ship |", ""])
    rows, warnings = read(tmp_path, note, "note.md")
    assert [type(r).__name__ for r in rows] != [] and all(
        type(r).__name__ != "LlamaBenchResult" for r in rows)
    assert not any("llama" in reason for _, reason in warnings)


@pytest.mark.parametrize("trailer", [
    "`build: 0a1b2c3d (4321)`",
    "`build: 0a1b2c3d (4321)` — the pinned commit, built with `-DGGML_CUDA=ON`.",
    "build: 0a1b2c3d (4321) (from the nightly image)",
])
@pytest.mark.parametrize("gap", [0, 1, 2])
def test_a_build_line_after_the_table_is_read_whatever_follows_it(tmp_path, trailer, gap):
    text = "\n".join([HEADER, RULE, *ROWS, *[""] * gap, trailer, "", "Next: the 70B."]) + "\n"
    rows, warnings = read(tmp_path, text, "note.md")
    assert values(rows) == WANT
    assert warnings == []


def test_bold_cells_and_a_stray_rule_cost_nothing(tmp_path):
    bold = ROWS[0].replace("5012.77 ± 21.40", "**5012.77 ± 21.40**")
    text = "\n".join([HEADER, RULE, bold, "|---|---|", ROWS[1], "build: 0a1b2c3d (4321)", ""])
    rows, warnings = read(tmp_path, text)
    assert values(rows) == WANT
    assert warnings == []


def test_a_second_table_right_under_the_first_reads_its_own_header_and_build(tmp_path):
    other = ("| model | size | params | backend | threads | test | t/s |",
             "| --- | ---: | ---: | --- | ---: | ---: | ---: |",
             "| llama 8B Q4_K - Medium | 4.58 GiB | 8.03 B | CPU | 16 | pp512 | 88.10 ± 0.52 |",
             "build: 9f8e7d6c (4400)")
    text = "\n".join([HEADER, RULE, *ROWS, *other, ""])
    rows, warnings = read(tmp_path, text)
    assert [(r.test, r.backends, r.n_gpu_layers, r.n_threads, r.build_commit) for r in rows] == [
        ("pp512", "CUDA", 99, None, None), ("tg128", "CUDA", 99, None, None),
        ("pp512", "CPU", None, 16, "9f8e7d6c")]
    assert warnings == []


def test_rows_without_header_default_columns_or_a_warning(tmp_path):
    seven = ("| llama 8B Q4_K - Medium | 4.58 GiB | 8.03 B | Metal,BLAS | 12 | pp512 "
             "| 401.93 ± 1.02 |")
    eight = ("| llama 8B Q4_K - Medium | 4.58 GiB | 8.03 B | Metal,BLAS | 12 | 1 | pp512 "
             "| 431.50 ± 0.98 |")
    rows, warnings = read(tmp_path, "Output:\n" + seven + "\n\nOutput:\n" + eight + "\n")
    assert [(r.backends, r.n_threads, r.n_gpu_layers, r.avg_ts, r.line_start) for r in rows] == [
        ("Metal,BLAS", 12, None, 401.93, 2)]
    assert [(line, "without their header (8 cells)" in reason) for line, reason in warnings] \
        == [(5, True)]


def test_a_command_says_which_column_a_headerless_row_has(tmp_path):
    """`-t 12` on the command line: the fifth cell of a Vulkan row is its threads, not ngl."""
    row = ("| llama 8B Q4_K - Medium | 4.58 GiB | 8.03 B | Vulkan | 12 | pp512 | 301.93 ± 1.02 |")
    rows, _ = read(tmp_path, "$ llama-bench -m llama-8b.gguf -t 12\n" + row + "\n")
    assert [(r.n_threads, r.n_gpu_layers, r.model_filename) for r in rows] == [
        (12, None, "llama-8b.gguf")]


def test_a_notes_table_of_llama_bench_rows_under_its_own_headers_is_retyped(tmp_path):
    """A note's own table of llama-bench's rows, its `t/s` column headed otherwise (`Result`),
    is read by its test column and its `mean ± std` cells, as a table retyped by hand."""
    note = "\n".join([
        "| Model | Size | Params | Backend | ngl | Test | Result |",
        "|---|---|---|---|---|---|---|",
        "| llama 8B Q4_K - Medium | 4.58 GiB | 8.03 B | CUDA | 99 | pp512 | 5012.77 ± 21.40 |",
        ""])
    rows, warnings = read(tmp_path, note, "note.md")
    assert [(type(r).__name__, r.backends, r.test, r.avg_ts, r.stddev_ts) for r in rows] == [
        ("LlamaBenchResult", "CUDA", "pp512", 5012.77, 21.4)]
    assert any("retyped by hand" in str(w) for w in warnings)


@pytest.mark.parametrize("shown", ["±", "Â±", "┬▒", "?", "_", "�", "+/-"])
def test_a_spread_sign_a_terminal_could_not_show_is_still_the_spread(tmp_path, shown):
    # A console without UTF-8 (`Â±`, `┬▒`), one without the glyph (`?`, `_`), a lossy decoder.
    text = "\n".join([HEADER, RULE, *(r.replace("±", shown) for r in ROWS),
                      "build: 0a1b2c3d (4321)", ""])
    rows, warnings = read(tmp_path, text)
    assert values(rows) == WANT
    assert warnings == []


@pytest.mark.parametrize("heading, tests", [
    ("### Results, tg128", ["tg128", "tg128"]),         # the one test named over the table
    ("### pp512 and tg128", []),                        # two: which is it? no result
    ("### Results", []),
])
def test_the_test_of_bare_rate_columns_is_the_one_the_heading_names(tmp_path, heading, tests):
    rows, _ = read(tmp_path, "\n".join([heading, "", "| round | old t/s | old sd | new t/s |",
                                        "|---:|---:|---:|---:|", "| 1 | 51.61 | 0.91 | 52.74 |"])
                   + "\n", "notes.md")
    rows = [r for r in rows if hasattr(r, "avg_ts")]
    assert [r.test for r in rows] == tests
    if tests:
        assert [(r.label, r.avg_ts, r.stddev_ts) for r in rows] == [("old", 51.61, 0.91),
                                                                   ("new", 52.74, None)]


def test_decimal_commas_remarks_and_a_build_cell_of_words(tmp_path):
    rows, _ = read(tmp_path, "\n".join([
        "### QAT UD-Q4_K_XL (13,26 GiB)", "",
        "| Build | pp512 (t/s) | tg128 (t/s) |", "|---|---:|---:|",
        "| ik 4706 (`70ea1522`) | 199,8 ± 17,5 | **16.80** ← regression |",
        "| b4749 | 1,234.5 ✓ | 13,90 ± 1,73 |"]) + "\n", "notes.md")
    assert [(r.test, r.avg_ts, r.stddev_ts, r.build_commit, r.build_number, r.model_ftype)
            for r in rows if hasattr(r, "avg_ts")] == [
        ("pp512", 199.8, 17.5, "70ea1522", 4706, "Q4_K_XL"),
        ("tg128", 16.8, None, "70ea1522", 4706, "Q4_K_XL"),
        ("pp512", 1234.5, None, None, 4749, "Q4_K_XL"),
        ("tg128", 13.9, 1.73, None, 4749, "Q4_K_XL")]


def test_a_footnote_mark_after_a_figure_is_no_part_of_it(tmp_path):
    rows, warnings = read(tmp_path, "\n".join([
        "| Model | Prefill (tok/s) | Decode (tok/s) |", "|---|---:|---:|",
        "| Qwen3 8B Q4_K_M | **146.0** | 16.4¹ |", "| Qwen3 8B Q8_0 | 120.5 † | 12.0 |", "",
        "¹ Decode over only 16 tokens is noisy."]) + "\n", "notes.md")
    assert [(r.test, r.avg_ts) for r in rows if hasattr(r, "avg_ts")] == [
        ("pp", 146.0), ("tg", 16.4), ("pp", 120.5), ("tg", 12.0)]
    assert not [w for w in warnings if "not a number" in w]


def test_columns_of_batch_sizes_and_of_each_rows_prompt_size(tmp_path):
    rows, _ = read(tmp_path, "\n".join([
        "| Input tokens | Batch | Ubatch | Prefill | Decode |", "|---:|---:|---:|---:|---:|",
        "| 2,000 | 256 | 32 | 352.16 tok/s | 22.01 tok/s |",
        "| 59,893 | 64 | 16 | 253.34 tok/s | 12.88 tok/s |"]) + "\n", "notes.md")
    assert [(r.test, r.n_prompt, r.n_batch, r.n_ubatch, r.avg_ts) for r in rows] == [
        ("pp2000", 2000, 256, 32, 352.16), ("tg", 0, 256, 32, 22.01),
        ("pp59893", 59893, 64, 16, 253.34), ("tg", 0, 64, 16, 12.88)]


def test_rows_that_describe_what_each_measured_under_model_columns(tmp_path):
    rows, _ = read(tmp_path, "\n".join([
        "| Measurement | Qwen 3.5 2B | Ling 3.0 Tiny |", "|---|---:|---:|",
        "| GGUF | Q5_K_M, 1.42 GB | Q4_K_M, 4.82 GB |",
        "| Initial ~14K prompt | 429.87 t/s | 88.72 t/s |",
        "| Generation around 14K | 38.5 t/s | 22.02 t/s |"]) + "\n", "notes.md")
    # (a column a model family names is the model's; the row's words and the column's name
    # are the label)
    assert [(r.model_type, r.model_ftype, r.label, r.test, r.avg_ts) for r in rows
            if hasattr(r, "avg_ts")] == [
        ("Qwen 3.5 2B", "Q5_K_M", "Initial ~14K prompt Qwen 3.5 2B", "pp", 429.87),
        (None, "Q4_K_M", "Initial ~14K prompt Ling 3.0 Tiny", "pp", 88.72),
        ("Qwen 3.5 2B", "Q5_K_M", "Generation around 14K Qwen 3.5 2B", "tg", 38.5),
        (None, "Q4_K_M", "Generation around 14K Ling 3.0 Tiny", "tg", 22.02)]


def test_a_run_columns_device_and_build_beat_the_notes(tmp_path):
    rows, _ = read(tmp_path, "\n".join([
        "Source: DGX Spark discussion (build b6761).", "",
        "| Model | DGX Spark pp2048 / tg32 (build 7941) | M2 Ultra pp2048 / tg32 (build 7948) |",
        "|---|---|---|", "| gpt-oss-20b MXFP4 | 4505.82 / 83.43 | 2713.40 / 129.97 |"]) + "\n",
        "notes.md")
    assert [(r.gpu_info, r.build_number, r.test, r.avg_ts) for r in rows if hasattr(r, "avg_ts")] == [
        ("DGX Spark", 7941, "pp2048", 4505.82), ("DGX Spark", 7941, "tg32", 83.43),
        ("M2 Ultra", 7948, "pp2048", 2713.4), ("M2 Ultra", 7948, "tg32", 129.97)]


def test_a_flags_long_name_in_a_notes_cell(tmp_path):
    rows, _ = read(tmp_path, "\n".join([
        "| Model ID | Prompt (t/s) | Gen (t/s) | Notes |", "|---|---|---|---|",
        "| `glm-4.6v` | 16 | 8.6 | MoE; `n-cpu-moe=38`; b=256 |"]) + "\n", "notes.md")
    assert [(r.test, r.n_cpu_moe, r.n_batch, r.avg_ts) for r in rows] == [
        ("pp", 38, None, 16.0), ("tg", 38, None, 8.6)]


def test_a_first_column_of_words_names_its_rows_and_a_depth_there_is_theirs(tmp_path):
    rows, _ = read(tmp_path, "\n".join([
        "| Leg | pp512 t/s | tg128 t/s | wall s |", "|---|---:|---:|---:|",
        "| depth 0 | 1083.71 | 90.67 | 9.3 |", "| depth 4,096 | 667.65 | 76.38 | 15.8 |"]) + "\n",
        "notes.md")
    assert [(r.label, r.test, r.n_depth, r.avg_ts) for r in rows] == [
        ("depth 0", "pp512", 0, 1083.71), ("depth 0", "tg128", 0, 90.67),
        ("depth 4,096", "pp512 @ d4096", 4096, 667.65), ("depth 4,096", "tg128 @ d4096", 4096, 76.38)]


def test_tests_named_in_words_with_their_size(tmp_path):
    rows, _ = read(tmp_path, "\n".join([
        "| Backend | Prompt processing (512) | Text generation (128) |", "|---|---:|---:|",
        "| Vulkan | 881.38 ± 2.11 | 52.82 ± 0.04 |"]) + "\n", "notes.md")
    assert [(r.test, r.avg_ts) for r in rows] == [("pp512", 881.38), ("tg128", 52.82)]


@pytest.mark.parametrize("text, want", [
    # (columns named by their hardware, the kind named by the heading)
    ("### Token generation\n\n| Model | RTX 4090 | M4 Max |\n|---|---|---|\n"
     "| Qwen3-8B Q4_K_M | 145.2 t/s | 61.0 t/s |\n",
     [("RTX 4090", "tg", 145.2), ("M4 Max", "tg", 61.0)]),
    # (a column named by a model: generation, with a warning)
    ("| GPU | Qwen3-8B Q4_K_M |\n|---|---|\n| RTX 4090 | 145.2 tok/s |\n| RX 7900 XTX | 120.1 tok/s |\n",
     [(None, "tg", 145.2), (None, "tg", 120.1)]),
    ("| Model | Speed |\n|---|---|\n| Qwen3-8B Q4_K_M | 45 tok/s |\n", [(None, "tg", 45.0)]),
    # (another program's tokens per second: vLLM's quantizations are no GGUF file's)
    ("| Config | BF16 | NVFP4 |\n|---|---|---|\n| TP1 | 1200 tok/s | 1500 tok/s |\n", []),
    # (the unit said once, in the first cell; the next column, another engine's, none)
    ("llama.cpp on GB10, decode speed:\n\n| Workload | llama.cpp Q4_K_XL | vLLM |\n|---|---|---|\n"
     "| Agentic coding | 25.6 tok/s | 32.1 |\n| Reasoning | 27.5 | 41.2 |\n",
     [("Agentic coding", "tg", 25.6), ("Reasoning", "tg", 27.5)]),
    # (the unit and the test said by the words over the table: a run per column)
    ("Token generation speed (t/s) with llama-bench tg128:\n\n"
     "| Model | 12 GB (partial offload) | 20 GB (full offload) |\n|---|---|---|\n"
     "| gemma-2-27b-it | 3.50 | 34.19 |\n| Qwen3-32B | 4.42 | 31.58 |\n",
     [("12 GB (partial offload)", "tg128", 3.5), ("20 GB (full offload)", "tg128", 34.19),
      ("12 GB (partial offload)", "tg128", 4.42), ("20 GB (full offload)", "tg128", 31.58)]),
    # (...the kind alone, over figures by GPU: llama.cpp's, not a serving table's)
    ("Decode speed with llama.cpp (tok/s):\n\n| Model | RTX 3090 | RTX 4090 |\n|---|---|---|\n"
     "| Qwen3-8B Q4_K_M | 112.3 | 140.2 |\n| Qwen3-14B Q4_K_M | 68.1 | 85.9 |\n",
     [("RTX 3090", "tg", 112.3), ("RTX 4090", "tg", 140.2), ("RTX 3090", "tg", 68.1),
      ("RTX 4090", "tg", 85.9)]),
    # (no unit said anywhere: figures of nothing known)
    ("Decode speed with llama.cpp:\n\n| Model | RTX 3090 | RTX 4090 |\n|---|---|---|\n"
     "| Qwen3-8B Q4_K_M | 112.3 | 140.2 |\n| Qwen3-14B Q4_K_M | 68.1 | 85.9 |\n", []),
])
def test_columns_whose_cells_say_tokens_per_second(tmp_path, text, want):
    rows, warnings = read(tmp_path, text, "notes.md")
    assert [(r.label, r.test, r.avg_ts) for r in rows if hasattr(r, "avg_ts")] == want


def test_speeds_in_words_after_the_model_they_are_of(tmp_path):
    rows, _ = read(tmp_path, "\n".join([
        "Results on a 7900 XTX with llama.cpp (Vulkan):", "",
        "- Qwen3-8B Q4_K_M: pp512 1200 t/s, tg128 45 t/s",
        "- Qwen3-14B Q4_K_M: pp512 700 t/s, tg128 30 t/s"]) + "\n", "notes.md")
    assert [(r.model_type, r.model_ftype, r.test, r.avg_ts) for r in rows] == [
        ("Qwen3-8B Q4_K_M", "Q4_K_M", "pp512", 1200.0), ("Qwen3-8B Q4_K_M", "Q4_K_M", "tg128", 45.0),
        ("Qwen3-14B Q4_K_M", "Q4_K_M", "pp512", 700.0), ("Qwen3-14B Q4_K_M", "Q4_K_M", "tg128", 30.0)]


def test_a_header_over_two_rows_under_a_blank_top_left_cell(tmp_path):
    rows, _ = read(tmp_path, "\n".join([
        "| | RTX 4090 | | M4 Max | |", "|---|---|---|---|---|",
        "| Model | pp512 | tg128 | pp512 | tg128 |", "| Qwen3-8B Q4_K_M | 5000 | 145 | 900 | 61 |"])
        + "\n", "notes.md")
    assert [(r.label, r.model_type, r.test, r.avg_ts) for r in rows] == [
        ("RTX 4090", "Qwen3-8B Q4_K_M", "pp512", 5000.0), ("RTX 4090", "Qwen3-8B Q4_K_M", "tg128", 145.0),
        ("M4 Max", "Qwen3-8B Q4_K_M", "pp512", 900.0), ("M4 Max", "Qwen3-8B Q4_K_M", "tg128", 61.0)]


def test_a_test_column_beside_columns_named_by_backends(tmp_path):
    rows, _ = read(tmp_path, "\n".join([
        "| model | test | ROCm | Vulkan | speedup |", "|---|---|---|---|---|",
        "| gpt-oss 20B MXFP4 | pp2048 | 1500.23 ± 5.1 | 1200.11 ± 3.2 | 1.25 |",
        "| gpt-oss 20B MXFP4 | tg32 | 70.1 ± 0.1 | 75.3 ± 0.2 | 0.93 |"]) + "\n", "notes.md")
    assert [(r.backends, r.test, r.avg_ts, r.stddev_ts) for r in rows] == [
        ("ROCm", "pp2048", 1500.23, 5.1), ("Vulkan", "pp2048", 1200.11, 3.2),
        ("ROCm", "tg32", 70.1, 0.1), ("Vulkan", "tg32", 75.3, 0.2)]


def test_kinds_after_a_run_name_flag_and_field_columns_and_remarks_in_cells(tmp_path):
    rows, _ = read(tmp_path, "\n".join([
        "llama-bench -m m.gguf -dev Vulkan1 -ngl 99 -p 512 -n 128", "",
        "| model | n_cpu_moe | CPU PP | CPU TG |", "|---|---:|---:|---:|",
        "| Qwen3-4B (dense) | 0 (all GPU) | 188.30 | 39.50 |"]) + "\n", "notes.md")
    assert [(r.test, r.label, r.backends, r.avg_ts, r.n_cpu_moe, r.devices, r.model_type)
            for r in rows if hasattr(r, "avg_ts")] == [
        ("pp512", "CPU", "CPU", 188.3, 0, "Vulkan1", "Qwen3-4B (dense)"),
        ("tg128", "CPU", "CPU", 39.5, 0, "Vulkan1", "Qwen3-4B (dense)")]


@pytest.mark.parametrize("pp, tg", [("Prompt processing (t/s)", "Token generation (t/s)"),
                                    ("Prefill speed", "Decode speed"),
                                    ("Prompt eval rate (tokens/s)", "Eval rate (tokens/s)")])
def test_kinds_named_in_words_are_sized_by_the_command(tmp_path, pp, tg):
    rows, _ = read(tmp_path, "\n".join([
        "llama-bench -m qwen3-8b-q4_k_m.gguf -p 1024 -n 256", "",
        f"| GPU | {pp} | {tg} |", "|---|---|---|", "| 7900 XTX | 1,234.5 ± 3.2 | 45.6 |"])
        + "\n", "notes.md")
    assert [(r.test, r.avg_ts, r.stddev_ts, r.gpu_info) for r in rows if hasattr(r, "avg_ts")] \
        == [("pp1024", 1234.5, 3.2, "7900 XTX"), ("tg256", 45.6, None, "7900 XTX")]


def test_rows_named_by_kind_alone_are_tests_of_the_runs_in_columns(tmp_path):
    rows, _ = read(tmp_path, "\n".join([
        "| Test | ROCm 6.4 | Vulkan RADV |", "|---|---|---|",
        "| Prompt processing | 1,088 | 901 |", "| Token generation | 45.1 | 48.9 |"]) + "\n",
        "notes.md")
    assert [(r.test, r.label, r.backends, r.avg_ts) for r in rows if hasattr(r, "avg_ts")] == [
        ("pp", "ROCm 6.4", "ROCm", 1088.0), ("pp", "Vulkan RADV", "Vulkan", 901.0),
        ("tg", "ROCm 6.4", "ROCm", 45.1), ("tg", "Vulkan RADV", "Vulkan", 48.9)]


@pytest.mark.parametrize("header, labels", [
    ("| Model | Vulkan pp512 | Vulkan tg128 | ROCm pp512 | ROCm tg128 |",
     ["Vulkan", "Vulkan", "ROCm", "ROCm"]),
    ("| Model | pp512 t/s | tg128 t/s | pp512 (FA) | tg128 (FA) |", [None, None, "FA", "FA"]),
    ("| Model | pp512 avg | tg128 avg | pp1024 | tg256 |", [None, None, None, None]),
])
def test_a_run_named_beside_a_test_that_repeats_labels_its_results(tmp_path, header, labels):
    rows, _ = read(tmp_path, "\n".join([header, "|---|---|---|---|---|",
                                        "| Qwen3 8B Q4_K_M | 1,234.5 | 45.6 | 1,400.2 | 44.1 |"])
                   + "\n", "notes.md")
    assert [(r.label, r.avg_ts) for r in rows if hasattr(r, "avg_ts")] == list(
        zip(labels, [1234.5, 45.6, 1400.2, 44.1]))


def test_file_types_as_runs_beside_kinds_and_a_row_named_in_an_unheaded_column(tmp_path):
    # (the shape of llama.cpp's Apple silicon comparison: a file type's PP and TG per column)
    rows, _ = read(tmp_path, "\n".join([
        "|   | BW [GB/s] | GPU Cores | F16 PP [t/s] | F16 TG [t/s] | Q4_0 PP [t/s] | Q4_0 TG [t/s] |",
        "| --- | --- | --- | --- | --- | --- | --- |",
        "| M2 Max | 400 | 38 | 600.46 | 24.16 | 537.37 | 60.99 |"]) + "\n", "notes.md")
    assert [(r.test, r.label, r.model_ftype, r.gpu_info, r.avg_ts, r.extra)
            for r in rows if hasattr(r, "avg_ts")] == [
        (kind, f"M2 Max {q}", q, None, ts, {"bw_gb_per_s": 400.0, "gpu_cores": 38.0})
        for kind, q, ts in [("pp", "F16", 600.46), ("tg", "F16", 24.16),
                            ("pp", "Q4_0", 537.37), ("tg", "Q4_0", 60.99)]]


def test_builds_as_run_columns_a_speedup_column_and_a_depth_column(tmp_path):
    rows, _ = read(tmp_path, "\n".join([
        "| test | b4500 | b5600 | speedup |", "|---|---|---|---|",
        "| pp512 | 1000.1 | 1100.2 | 1.10x |", "| tg128 | 50.3 | 55.4 | 1.10x |", "",
        "llama-bench -m m.gguf -p 512 -n 128 -d 0,4096", "",
        "| Depth | PP (t/s) | TG (t/s) |", "|---|---|---|", "| 0 | 1200 | 80 |",
        "| 4k | 1000 | 70 |"]) + "\n", "notes.md")
    assert [(r.test, r.label, r.build_number, r.n_depth, r.avg_ts)
            for r in rows if hasattr(r, "avg_ts")] == [
        ("pp512", "b4500", 4500, 0, 1000.1), ("pp512", "b5600", 5600, 0, 1100.2),
        ("tg128", "b4500", 4500, 0, 50.3), ("tg128", "b5600", 5600, 0, 55.4),
        ("pp512", None, None, 0, 1200.0), ("tg128", None, None, 0, 80.0),
        ("pp512 @ d4096", None, None, 4096, 1000.0), ("tg128 @ d4096", None, None, 4096, 70.0)]


def test_a_row_with_a_cell_more_than_its_header_keeps_its_model_test_and_rate(tmp_path):
    """A header that lost a column (a fork's printer, a column deleted by hand): the model
    columns and the test and t/s are read from either end, the settings between are not."""
    header = HEADER.replace("| fa |", "| n_ubatch | fa |")
    rows = [row.replace("|  99 |  1 |", "|  99 |   2048 |   2048 |  1 |") for row in ROWS]
    got, warnings = read(tmp_path, "\n".join([header, RULE.replace("| -: |", "| --: | -: |"),
                                             *rows]) + "\n")
    assert [(r.model_type, r.backends, r.test, r.avg_ts, r.stddev_ts) for r in got] == [
        ("llama 8B Q4_K - Medium", "CUDA", "pp512", 5012.77, 21.40),
        ("llama 8B Q4_K - Medium", "CUDA", "tg128", 152.31, 0.26)]
    assert all(r.n_ubatch is None and r.flash_attn is None for r in got)
    assert [line for line, _ in warnings] == [3, 4]
    assert all("row has 10 cells, the header has 9" in reason for _, reason in warnings)


NOTE_PROSE = """\
## Strix Halo, Vulkan

- **GPU:** Radeon 8060S (gfx1151) · **CPU:** Ryzen AI MAX+ 395
- llama.cpp b9876 with `-fa 1 -ub 512`, 16 threads

### Results

| Model | pp512 | tg128 |
|---|---|---|
| Qwen3-8B Q4_K_M | 1234.5 | 45.6 |
"""


def test_what_a_notes_prose_states_fills_what_the_table_does_not(tmp_path):
    got, _ = read(tmp_path, NOTE_PROSE, "note.md")
    assert {(r.test, r.avg_ts) for r in got} == {("pp512", 1234.5), ("tg128", 45.6)}
    assert {(r.backends, r.build_number, r.flash_attn, r.n_ubatch, r.n_threads, r.gpu_info,
             r.gpu_arch, r.cpu_info) for r in got} == {
        ("Vulkan", 9876, 1, 512, 16, "Radeon 8060S", "gfx1151", "Ryzen AI MAX+ 395")}


def test_prose_that_states_two_values_states_neither(tmp_path):
    text = NOTE_PROSE.replace("llama.cpp b9876 with", "b9876 against b9901, both with") \
        .replace("## Strix Halo, Vulkan", "## Vulkan against ROCm")
    got, _ = read(tmp_path, text, "note.md")
    assert got and all(r.build_number is None and r.backends is None for r in got)
    assert all(r.flash_attn == 1 for r in got)      # (stated once)


def test_a_bare_cpu_in_prose_is_no_backend_but_cpu_only_is(tmp_path):
    text = NOTE_PROSE.replace("## Strix Halo, Vulkan", "## MoE experts on CPU")
    got, _ = read(tmp_path, text, "note.md")
    assert got and all(r.backends is None for r in got)
    got, _ = read(tmp_path, text.replace("experts on CPU", "CPU-only run"), "note2.md")
    assert got and all(r.backends == "CPU" for r in got)


def test_prose_gives_way_to_the_command(tmp_path):
    text = NOTE_PROSE.replace("### Results", "### Results\n\n`llama-bench -m q.gguf -fa 0 -t 8`")
    got, _ = read(tmp_path, text, "note.md")
    assert got and all(r.flash_attn == 0 and r.n_threads == 8 for r in got)


def test_a_system_section_holds_for_the_results_beside_it(tmp_path):
    text = ("## Regression\n\n### System\n- CPU: Intel Core i9-9900T (8C/16T)\n"
            "- GPU: NVIDIA RTX A1000 (sm_86), driver 595\n\n### Results\n\n"
            "| Build | pp512 (t/s) | tg128 (t/s) |\n|---|---|---|\n| b4706 | 192.4 | 26.23 |\n\n"
            "### Another box\n- GPU: RTX 4090 (sm_89)\n\n"
            "| Build | pp512 (t/s) | tg128 (t/s) |\n|---|---|---|\n| b4706 | 992.4 | 96.23 |\n")
    got, _ = read(tmp_path, text, "note.md")
    assert sorted({(r.avg_ts, r.gpu_info, r.gpu_arch, r.cpu_info) for r in got}) == [
        (26.23, "NVIDIA RTX A1000", "8.6", "Intel Core i9-9900T"),
        (96.23, "RTX 4090", "8.9", "Intel Core i9-9900T"),
        (192.4, "NVIDIA RTX A1000", "8.6", "Intel Core i9-9900T"),
        (992.4, "RTX 4090", "8.9", "Intel Core i9-9900T")]


def test_a_notes_model_line_names_the_model_of_a_table_without_one(tmp_path):
    text = ("- **Model:** Qwen3-Coder-Next UD Q6_K_XL (63.87 GiB, MoE 80B-A3B)\n\n"
            "| Backend | pp512 | tg128 |\n|---|---|---|\n| Vulkan | 512.3 | 41.2 |\n"
            "| ROCm | 630.8 | 38.9 |\n")
    got, _ = read(tmp_path, text, "note.md")
    assert sorted((r.backends, r.test, r.model_type, r.model_ftype) for r in got) == [
        ("ROCm", "pp512", "Qwen3-Coder-Next UD Q6_K_XL", "Q6_K_XL"),
        ("ROCm", "tg128", "Qwen3-Coder-Next UD Q6_K_XL", "Q6_K_XL"),
        ("Vulkan", "pp512", "Qwen3-Coder-Next UD Q6_K_XL", "Q6_K_XL"),
        ("Vulkan", "tg128", "Qwen3-Coder-Next UD Q6_K_XL", "Q6_K_XL")]


def test_compare_llama_bench_tables_name_their_columns_as_its_pretty_names(tmp_path):
    """scripts/compare-llama-bench.py heads its columns with LLAMA_BENCH_PRETTY_NAMES."""
    text = ("| GPU | Model | Microbatch size | K type | Threads | Test | t/s master | t/s mmf |"
            " Speedup |\n|:--|:--|--:|:--|--:|:--|--:|--:|--:|\n"
            "| RX 7900 XTX | qwen2 1.5B F16 | 8 | q8_0 | 6 | pp512 | 711.10 | 1149.95 | 1.62 |\n")
    got, _ = read(tmp_path, text, "note.md")
    assert sorted((r.label, r.avg_ts, r.n_ubatch, r.type_k, r.n_threads, r.gpu_info)
                  for r in got) == [("master", 711.10, 8, "q8_0", 6, "RX 7900 XTX"),
                                    ("mmf", 1149.95, 8, "q8_0", 6, "RX 7900 XTX")]


def test_a_bare_number_in_a_build_column_is_the_build_number(tmp_path):
    text = ("**Model:** `Qwen3-8B-Q4_K_M.gguf` (4.7 GiB)\n\n"
            "| image | build | pp512 |\n|---|---|---:|\n| rocm-7.14 | 10472 | 298.30 |\n"
            "| vulkan-radv | 10471 | 246.24 |\n")
    got, _ = read(tmp_path, text, "note.md")
    assert sorted((r.build_number, r.build_commit, r.avg_ts, r.model_filename, r.model_type)
                  for r in got) == [(10471, None, 246.24, "Qwen3-8B-Q4_K_M.gguf", None),
                                    (10472, None, 298.30, "Qwen3-8B-Q4_K_M.gguf", None)]


def test_a_file_column_gives_the_file_and_its_quantization(tmp_path):
    text = ("| File | pp512 | tg128 |\n|---|---:|---:|\n"
            "| Qwen3-8B-Q4_K_M.gguf | 1234.5 | 45.6 |\n| Qwen3-8B-IQ3_XXS.gguf | 1300.1 | 52.3 |\n")
    got, _ = read(tmp_path, text, "note.md")
    assert sorted({(r.model_filename, r.model_ftype) for r in got}) == [
        ("Qwen3-8B-IQ3_XXS.gguf", "IQ3_XXS"), ("Qwen3-8B-Q4_K_M.gguf", "Q4_K_M")]


def test_a_heading_names_the_test_of_a_folded_table(tmp_path):
    text = ("### Text Generation (tg128) — tokens/second\n\n<details><summary>Results</summary>\n\n"
            "| Model | Vulkan Radv | Rocm7 Beta |\n|---|---|---|\n"
            "| gemma-3-12b-it-UD-Q8_K_XL | 13.65 ± 0.02 | 13.80 ± 0.00 |\n\n</details>\n")
    got, _ = read(tmp_path, text, "note.md")
    assert [(r.test, r.backends, r.avg_ts, r.label) for r in got] == [
        ("tg128", "Vulkan", 13.65, "Vulkan Radv"), ("tg128", "ROCm", 13.8, "Rocm7 Beta")]


def test_an_amd_target_written_in_capitals_in_a_heading(tmp_path):
    text = ("## Vulkan iGPU Results (llama.cpp, RADV GFX1152, -ngl 999)\n\n"
            "| Model | Quant | pp512 | tg128 |\n|---|---|---:|---:|\n| Phi-4-mini | Q4_K_M | 200 | 23 |\n")
    got, _ = read(tmp_path, text, "note.md")
    assert {(r.gpu_arch, r.backends, r.n_gpu_layers) for r in got} == {("gfx1152", "Vulkan", 999)}


def test_an_amd_target_its_gpu_and_one_quantization_stated_in_prose(tmp_path):
    text = ("## Benchmarks\n\nMeasured on gfx1151 (Radeon 8060S), Qwen3.6-35B-A3B Q4_K_M, "
            "`-ngl 999 -r 1`.\n\n| test | baseline t/s | this PR t/s |\n|---|---|---|\n"
            "| pp128 | 549.01 | 563.88 |\n| tg128 | 53.31 | 53.28 |\n")
    got, _ = read(tmp_path, text, "note.md")
    assert {(r.label, r.test, r.avg_ts) for r in got} >= {("this PR", "tg128", 53.28)}
    assert {(r.gpu_arch, r.gpu_info, r.model_ftype, r.n_gpu_layers) for r in got} == {
        ("gfx1151", "Radeon 8060S", "Q4_K_M", 999)}


def test_a_build_cell_of_words_a_tag_and_a_commit(tmp_path):
    text = ("Model: `aurora-effects-v8-q8_0.gguf` (26.62 GiB)\n\n"
            "| Build | `pp64` (tok/s) | `tg16` (tok/s) |\n|---|---|---|\n"
            "| **Lemonade prebuilt b1270** (`39cf5d6`) | 253.96 ± 27.59 | 7.48 ± 0.05 |\n")
    got, _ = read(tmp_path, text, "note.md")
    assert {(r.test, r.avg_ts, r.stddev_ts, r.build_commit, r.build_number, r.model_filename,
             r.model_ftype) for r in got} == {
        ("pp64", 253.96, 27.59, "39cf5d6", 1270, "aurora-effects-v8-q8_0.gguf", "Q8_0"),
        ("tg16", 7.48, 0.05, "39cf5d6", 1270, "aurora-effects-v8-q8_0.gguf", "Q8_0")}


def test_the_devices_a_note_printed_in_an_earlier_section_hold_for_its_table(tmp_path):
    text = ("## Detection\n\n```\n$ ./llama-bench -h\nggml_cuda_init: found 1 ROCm devices:\n"
            "  Device 0: Radeon 8060S Graphics, gfx1151 (0x1151), VMM: no, Wave Size: 32\n```\n\n"
            "## Parity\n\n| Build | pp64 (tok/s) | tg16 (tok/s) |\n|---|---|---|\n"
            "| b1270 | 253.96 | 7.48 |\n")
    got, _ = read(tmp_path, text, "note.md")
    assert {(r.test, r.gpu_info, r.gpu_arch, r.gpu_count) for r in got} == {
        ("pp64", "Radeon 8060S Graphics", "gfx1151", 1), ("tg16", "Radeon 8060S Graphics", "gfx1151", 1)}


@pytest.mark.parametrize("prose, gpu, cpu", [
    ("Ran it on another box (RTX 3070 and an AMD Ryzen 7 5800X)", "RTX 3070", "AMD Ryzen 7 5800X"),
    ("MoE tuning (i7-10750H + RTX 2060 mobile, b9442)", "RTX 2060 mobile", "i7-10750H"),
    ("Repro on macOS (Apple M5, 32 GB)", "Apple M5", None),
    ("Testing on Intel Core Ultra 265K, 64GB", None, "Intel Core Ultra 265K"),
    ("RTX 4090 against RTX 3090", None, None),                    # two named: neither
    ("**Apple M4 Pro** (24 GB); host: MacBook Pro, M4 Pro, 14 CPU cores", "Apple M4 Pro", None),
])
def test_the_one_gpu_and_cpu_a_notes_prose_names(prose, gpu, cpu):
    from benchvault.parsers.llama_bench import stated_in_prose
    stated = stated_in_prose((prose,))
    assert (stated.get("gpu_info"), stated.get("cpu_info")) == (gpu, cpu)


@pytest.mark.parametrize("prose, commit, number", [
    ("**Binary**: `llama-cpp-cuda-0.0.0` (commit `9a5f57795`)", "9a5f57795", None),
    ("llama.cpp build `f53577432`", "f53577432", None),
    ("Build llama.cpp : 9442 (d4c8e2c29)", "d4c8e2c29", 9442),
    # (a full commit id; common's build_info, as llama-cli's banner prints it)
    ("the BailingMoE3 branch at commit `db4480bc802dda303627830833e0e6c2a7c47297`",
     "db4480bc802dda303627830833e0e6c2a7c47297", None),
    ("build      : b7446-5c0d18881", "5c0d18881", 7446),
])
def test_the_build_a_notes_prose_names(prose, commit, number):
    from benchvault.parsers.llama_bench import stated_in_prose
    stated = stated_in_prose((prose,))
    assert (stated.get("build_commit"), stated.get("build_number")) == (commit, number)


def test_two_tests_joined_in_one_column_and_one_cell(tmp_path):
    text = ("| Model | pp512 / tg128 (t/s) |\n|---|---|\n| Qwen3-8B Q4_K_M | 1234.5 / 56.7 |\n"
            "| Qwen3-8B Q8_0 | — |\n")
    got, _ = read(tmp_path, text, "note.md")
    assert [(r.model_type, r.test, r.avg_ts) for r in got] == [
        ("Qwen3-8B Q4_K_M", "pp512", 1234.5), ("Qwen3-8B Q4_K_M", "tg128", 56.7)]


def test_one_tests_kind_alone_when_the_rows_are_llama_cpps(tmp_path):
    text = ("| Model | Generation (t/s) |\n|---|---|\n| Qwen3-8B Q4_K_M | 40.25 |\n\n"
            "| Setup | Generation (t/s) |\n|---|---|\n| My laptop | 30.5 |\n\n"
            "| Precision | Decode tok/s | TTFT (ms) |\n|---|---|---|\n| BF16 | 50.5 | 120.1 |\n")
    got, _ = read(tmp_path, text, "note.md")
    assert [(r.model_type, r.model_ftype, r.test, r.avg_ts) for r in got
            if type(r).__name__ == "LlamaBenchResult"] == [("Qwen3-8B Q4_K_M", "Q4_K_M", "tg", 40.25)]
    assert {type(r).__name__ for r in got} == {"LlamaBenchResult", "PublishedTable", "ServingRun"}


def test_a_table_copied_from_a_rendered_page_with_arrow_cells(tmp_path):
    # (GitHub's copy writes no outer pipes and a `-- | --` delimiter row)
    text = ("#### Current performance:\nTest | Before → After | Δ\n-- | -- | --\n"
            "Qwen pp2048 | 1314.23 → 1514.80 | +15.26%\nGPT-OSS tg128 | 73.82 → 73.82 | neutral\n")
    got, _ = read(tmp_path, text, "note.md")
    assert [(r.label, r.test, r.avg_ts) for r in got] == [
        ("Before", "pp2048", 1314.23), ("After", "pp2048", 1514.8),
        ("Before", "tg128", 73.82), ("After", "tg128", 73.82)]


def test_a_table_without_outer_pipes_and_one_dash_delimiters(tmp_path):
    # (GFM asks for one dash in a delimiter cell: `:-|:-|:-`)
    text = ("Built on HEAD (b5392):\n\n Backend|pp512 (t/s)|tg128 (t/s)\n:-|:-|:-\n"
            "CPU|304.42 ± 2.05|28.65 ± 0.03\nVulkan|881.38 ± 2.11|52.82 ± 0.04\n")
    got, _ = read(tmp_path, text, "note.md")
    assert [(r.backends, r.test, r.avg_ts, r.stddev_ts) for r in got] == [
        ("CPU", "pp512", 304.42, 2.05), ("CPU", "tg128", 28.65, 0.03),
        ("Vulkan", "pp512", 881.38, 2.11), ("Vulkan", "tg128", 52.82, 0.04)]


def test_an_html_table_headed_tok_s_reads_as_the_pipe_table_it_stands_for(tmp_path):
    text = ("## Qwen3.6-27B\n\n<table>\n<thead>\n<tr>\n<th>Backend</th>\n<th>Config</th>\n"
            "<th>Prompt tok/s</th>\n<th>Decode tok/s</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n"
            "<td>Vulkan</td>\n<td>baseline</td>\n<td>73.71</td>\n<td>12.29</td>\n</tr>\n<tr>\n"
            "<td>Vulkan</td>\n<td>ring1</td>\n<td>53.46</td>\n<td><strong>18.77</strong></td>\n"
            "</tr>\n</tbody>\n</table>\n")
    got, _ = read(tmp_path, text, "note.md")
    assert [(r.model_type, r.backends, r.label, r.test, r.avg_ts, r.line_start) for r in got] == [
        ("Qwen3.6-27B", "Vulkan", "baseline", "pp", 73.71, 13),
        ("Qwen3.6-27B", "Vulkan", "baseline", "tg", 12.29, 13),
        ("Qwen3.6-27B", "Vulkan", "ring1", "pp", 53.46, 19),
        ("Qwen3.6-27B", "Vulkan", "ring1", "tg", 18.77, 19)]


@pytest.mark.parametrize("tail", ["", "<tr>\n<td>ROCm</td>\n<td>base", "</tbody>\n"])
def test_an_html_table_the_paste_cuts_off_keeps_its_whole_rows(tmp_path, tail):
    text = ("## Qwen3.6-27B\n\n<table>\n<thead>\n<tr>\n<th>Backend</th>\n<th>Config</th>\n"
            "<th>Prompt tok/s</th>\n<th>Decode tok/s</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n"
            "<td>Vulkan</td>\n<td>baseline</td>\n<td>73.71</td>\n<td>12.29</td>\n</tr>\n"
            + tail)
    got, warnings = read(tmp_path, text, "note.md")
    assert [(r.backends, r.label, r.test, r.avg_ts) for r in got] == [
        ("Vulkan", "baseline", "pp", 73.71), ("Vulkan", "baseline", "tg", 12.29)]
    assert any("published_html" in w and "no closing rule" in w for _, w in warnings), warnings


@pytest.mark.parametrize("head, row", [
    ("<th>run</th><th>prefill</th><th>decode</th>", "<td>ncmoe 40</td><td>383.85 t/s</td><td>22.52 t/s</td>"),
    ("<th>Model</th><th>Tokens per Second</th>", "<td>qwen3:30b Q4_K_M</td><td>34.1</td>")])
def test_an_html_table_whose_cells_or_header_name_a_rate_is_claimed(tmp_path, head, row):
    text = f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n<tr>{row}</tr>\n</tbody></table>\n"
    got, _ = read(tmp_path, text, "note.md")
    assert [type(r).__name__ for r in got] and {type(r).__name__ for r in got} == {"LlamaBenchResult"}


def test_llama_benchs_own_columns_written_as_an_html_table(tmp_path):
    text = ("<table>\n<thead><tr><th>model</th><th>size</th><th>params</th><th>backend</th>"
            "<th>ngl</th><th>test</th><th>t/s</th></tr></thead>\n<tbody>\n"
            "<tr><td>qwen2 14B Q4_K - Medium</td><td>8.37 GiB</td><td>14.77 B</td><td>Vulkan</td>"
            "<td>99</td><td>pp512</td><td>335.63 ± 0.78</td></tr>\n</tbody></table>\n")
    got, _ = read(tmp_path, text, "note.md")
    assert [(r.model_type, r.backends, r.n_gpu_layers, r.test, r.avg_ts, r.stddev_ts) for r in got] \
        == [("qwen2 14B Q4_K - Medium", "Vulkan", 99, "pp512", 335.63, 0.78)]


def test_an_html_table_under_a_heading_that_names_its_test(tmp_path):
    text = ("### Text Generation (tg128)\n\n<table>\n<thead><tr><th>Model</th><th>Vulkan Radv</th>"
            "<th>Rocm7 Beta</th></tr></thead>\n<tbody>\n<tr><td>gemma-3-12b-it-UD-Q8_K_XL</td>"
            "<td>13.65 ± 0.02</td><td>13.80 ± 0.00</td></tr>\n</tbody></table>\n")
    got, _ = read(tmp_path, text, "note.md")
    assert [(r.test, r.backends, r.avg_ts) for r in got] == [
        ("tg128", "Vulkan", 13.65), ("tg128", "ROCm", 13.8)]


def test_a_table_flattened_onto_one_line_is_read_row_by_row(tmp_path):
    text = (" Qwen 3.6 35B-A3B\n | model | size | params | backend | ngl | test | t/s | "
            "| --------------- | ---------: | ------: | ------- | --: | -----: | ------------: | "
            "| qwen35moe 35B.A3B Q8_0 | 35.19 GiB | 35.51 B | Vulkan | 99 | pp8192 | 287.33 ± 2.06 | "
            "| qwen35moe 35B.A3B Q8_0 | 35.19 GiB | 35.51 B | Vulkan | 99 | tg128 | 21.06 ± 0.01 | \n")
    got, _ = read(tmp_path, text, "note.md")
    assert [(r.model_type, r.backends, r.test, r.avg_ts, r.stddev_ts) for r in got] == [
        ("qwen35moe 35B.A3B Q8_0", "Vulkan", "pp8192", 287.33, 2.06),
        ("qwen35moe 35B.A3B Q8_0", "Vulkan", "tg128", 21.06, 0.01)]


def test_tests_as_rows_with_a_depth_a_bare_kind_and_a_row_of_no_test(tmp_path):
    text = ("| Metric | Run 1 | Run 2 |\n|:---|---:|---:|\n| **PP speed @ d0** | ~287 t/s | ~326 t/s |\n"
            "| **TG32 @ d0** | ~40.1 t/s | ~35.5 t/s |\n| **TG128 @ d16384** | ~33.1 t/s | ~28.2 t/s |\n"
            "| **Real prompting avg** | 28.42 t/s | 28.49 t/s |\n")
    got, warnings = read(tmp_path, text, "note.md")
    assert [(r.label, r.test, r.n_depth, r.avg_ts) for r in got] == [
        ("Run 1", "pp", 0, 287.0), ("Run 2", "pp", 0, 326.0),
        ("Run 1", "tg32", 0, 40.1), ("Run 2", "tg32", 0, 35.5),
        ("Run 1", "tg128 @ d16384", 16384, 33.1), ("Run 2", "tg128 @ d16384", 16384, 28.2)]
    assert any(line == 6 and "names no llama-bench test" in reason for line, reason in warnings)


def test_a_depth_written_after_a_blank_and_a_test_column_of_rows(tmp_path):
    text = ("| test | ROCmFP4 | Q4_K_L | delta |\n|---|---:|---:|---:|\n"
            "| tg128 d32768 | 65.58 +/- 0.40 | 56.68 +/- 0.37 | +15.7% |\n"
            "| pp2048 d0 | 1324.07 +/- 19.22 | 1263.96 +/- 8.90 | +4.8% |\n"
            "| resident GTT (idle) | 13.86 GiB | 16.87 GiB | -3.0 GiB |\n")
    got, _ = read(tmp_path, text, "note.md")
    assert [(r.label, r.test, r.n_depth, r.avg_ts, r.stddev_ts) for r in got] == [
        ("ROCmFP4", "tg128 @ d32768", 32768, 65.58, 0.4), ("Q4_K_L", "tg128 @ d32768", 32768, 56.68, 0.37),
        ("ROCmFP4", "pp2048", 0, 1324.07, 19.22), ("Q4_K_L", "pp2048", 0, 1263.96, 8.9)]


def test_a_table_whose_blanks_were_squeezed_to_one_is_read_from_its_right(tmp_path):
    text = ("M2 Mac Mini, llama.cpp b4980\n\n양자화 포맷 PP (t/s) TG (t/s)\nQ4_0 143.23 32.27\n"
            "Q4_K_M 123.30 29.60\nIQ4_XS 133.84 33.13\n\nResults for pp512 tg128\n"
            "and more words 12 34\nmore 1 2\n")
    got, _ = read(tmp_path, text, "note.md")
    assert [(r.model_ftype, r.test, r.avg_ts, r.build_number) for r in got] == [
        ("Q4_0", "pp", 143.23, 4980), ("Q4_0", "tg", 32.27, 4980),
        ("Q4_K_M", "pp", 123.3, 4980), ("Q4_K_M", "tg", 29.6, 4980),
        ("IQ4_XS", "pp", 133.84, 4980), ("IQ4_XS", "tg", 33.13, 4980)]


def test_tests_named_in_a_column_after_the_models(tmp_path):
    text = ("Same build (b6120) on both.\n\n| Model | Metric | Vulkan | ROCm 6.4 | Winner |\n"
            "|---|---|---|---|---|\n| Qwen3 8B Q4_K_M | pp512 | 2,031 | **2,240** | ROCm (+10%) |\n"
            "| Qwen3 8B Q4_K_M | tg128 | **88.4** | 80.9 | Vulkan (+9%) |\n"
            "| Phi 4 Q8_0 | pp1024 | — | 703 | ROCm only |\n")
    got, _ = read(tmp_path, text, "note.md")
    assert [(r.label, r.model_type, r.model_ftype, r.test, r.avg_ts, r.backends, r.build_number)
            for r in got] == [
        ("Vulkan", "Qwen3 8B Q4_K_M", "Q4_K_M", "pp512", 2031.0, "Vulkan", 6120),
        ("ROCm 6.4", "Qwen3 8B Q4_K_M", "Q4_K_M", "pp512", 2240.0, "ROCm", 6120),
        ("Vulkan", "Qwen3 8B Q4_K_M", "Q4_K_M", "tg128", 88.4, "Vulkan", 6120),
        ("ROCm 6.4", "Qwen3 8B Q4_K_M", "Q4_K_M", "tg128", 80.9, "ROCm", 6120),
        ("ROCm 6.4", "Phi 4 Q8_0", "Q8_0", "pp1024", 703.0, "ROCm", 6120)]


def test_a_bare_tokens_per_second_beside_quantizations_is_generation(tmp_path):
    text = ("- GPU: Radeon RX 7600 (8 GB)\n\n| Model | Quant | Tokens per Second |\n|---|---|---|\n"
            "| `mistral:7b` | Q4_0 | 41.2 |\n| `llama3.2:3b` | Q8_0 | 63.9 |\n")
    got, warnings = read(tmp_path, text, "note.md")
    assert [(r.model_type, r.model_ftype, r.test, r.avg_ts) for r in got] == [
        ("mistral:7b", "Q4_0", "tg", 41.2), ("llama3.2:3b", "Q8_0", "tg", 63.9)]
    assert [line for line, reason in warnings if "read as token generation" in reason] == [5]
    # (without a quantization, a backend or a GGUF file, a bare rate names no llama table)
    got, _ = read(tmp_path, "| Server | Tokens per Second |\n|---|---|\n| a | 41.2 |\n| b | 6.3 |\n",
                  "other.md")
    assert not any(hasattr(r, "avg_ts") for r in got)     # (a published table)


def test_a_model_and_quantization_beside_a_test_name_the_columns_runs(tmp_path):
    text = ("On an RTX-3090, flags `-ngl 99 -fa 1 --no-mmap`:\n\n"
            "| Setup | qwen3:8b Q4_K_M tg128 | phi4:14b Q8_0 tg128 |\n|---|---|---|\n"
            "| llama.cpp b6000 | 101.5 t/s | ~47 t/s |\n")
    got, _ = read(tmp_path, text, "note.md")
    assert [(r.model_type, r.model_ftype, r.avg_ts, r.build_number, r.use_mmap, r.n_gpu_layers,
             r.gpu_info) for r in got] == [
        ("qwen3:8b Q4_K_M", "Q4_K_M", 101.5, 6000, 0, 99, "RTX-3090"),
        ("phi4:14b Q8_0", "Q8_0", 47.0, 6000, 0, 99, "RTX-3090")]


def test_a_model_the_heading_names_and_a_run_column_naming_rows(tmp_path):
    text = ("## Mixtral-8x7B-Instruct with experts on the CPU\n\n| run | prefill | decode | VRAM |\n"
            "|---|---|---|---|\n| `-ncmoe 12` @ 32k | 211.40 t/s | 14.05 t/s | 21.2 GB |\n")
    got, _ = read(tmp_path, text, "note.md")
    assert [(r.label, r.model_type, r.test, r.avg_ts, r.n_cpu_moe) for r in got] == [
        ("-ncmoe 12 @ 32k", "Mixtral-8x7B-Instruct", "pp", 211.4, 12),
        ("-ncmoe 12 @ 32k", "Mixtral-8x7B-Instruct", "tg", 14.05, 12)]


def test_a_build_line_above_a_notes_sections_holds_for_their_tables(tmp_path):
    text = ("build: 5c0eb5ef5 (6611)\n\n## Box one\n\n### small model\n\n" + HEADER + "\n" + RULE
            + "\n" + ROWS[0] + "\n")
    got, _ = read(tmp_path, text, "note.md")
    assert [(r.test, r.build_commit, r.build_number, r.section) for r in got] == [
        ("pp512", "5c0eb5ef5", 6611, "Box one > small model")]


def test_headers_in_the_notes_language_and_builds_the_prose_writes_its_own_way(tmp_path):
    text = ("Build llama.cpp : 8120 (a9b8c7d6e).\n\n| Modelo | Generación | Prompt |\n|---|---|---|\n"
            "| Qwen2.5-3B `Q4_K_M` | 9.15 tok/s | 31.2 tok/s |\n")
    got, _ = read(tmp_path, text, "note.md")
    assert [(r.model_type, r.model_ftype, r.test, r.avg_ts, r.build_commit, r.build_number)
            for r in got] == [("Qwen2.5-3B Q4_K_M", "Q4_K_M", "tg", 9.15, "a9b8c7d6e", 8120),
                              ("Qwen2.5-3B Q4_K_M", "Q4_K_M", "pp", 31.2, "a9b8c7d6e", 8120)]
    # a commit alone; the heading's build over the prose's
    text = ("llama.cpp build `0c1e570aa`, KV at f16.\n\n## Run (this version, `5d6e7f8a9`)\n\n"
            "| backend | pp512 | tg128 |\n|---|---|---|\n| CPU | 50.1 | 9.9 |\n")
    got, _ = read(tmp_path, text, "other.md")
    assert {(r.build_commit, r.build_number) for r in got} == {("5d6e7f8a9", None)}
    got, _ = read(tmp_path, text.replace("## Run (this version, `5d6e7f8a9`)", "## Run"),
                  "third.md")
    assert {r.build_commit for r in got} == {"0c1e570aa"}


def test_a_powershell_command_goes_on_after_its_backticks(tmp_path):
    text = ("```powershell\nllama-bench.exe -m model.gguf `\n  -ngl 999 -ncmoe 40 -t 6 `\n"
            "  -p 512 -n 128\n```\n\n| ncmoe | pp512 (t/s) | tg128 (t/s) |\n|---|---|---|\n"
            "| 40 | 234,2 ± 8,0 | 14,05 ± 0,35 |\n")
    got, _ = read(tmp_path, text, "note.md")
    assert [(r.test, r.avg_ts, r.n_gpu_layers, r.n_threads, r.n_cpu_moe) for r in got] == [
        ("pp512", 234.2, 999, 6, 40), ("tg128", 14.05, 999, 6, 40)]


def test_depths_as_columns_under_a_heading_that_names_the_test(tmp_path):
    text = ("## Results (tg64 t/s per depth)\n\n| tree | commit | FA | @0 | @8K | @32K |\n"
            "|---|---|---|---|---|---|\n| master | 1a2b3c4d5 | on | 41.20 | 38.75 | 30.02 |\n")
    got, _ = read(tmp_path, text, "note.md")
    assert [(r.test, r.n_depth, r.avg_ts, r.build_commit, r.flash_attn) for r in got] == [
        ("tg64", 0, 41.2, "1a2b3c4d5", 1), ("tg64 @ d8192", 8192, 38.75, "1a2b3c4d5", 1),
        ("tg64 @ d32768", 32768, 30.02, "1a2b3c4d5", 1)]


@pytest.mark.parametrize("box", [
    # tabulate's psql, prettytable, rich's rounded box
    ["+---------+---------+", "| backend |   pp512 |", "|---------+---------|",
     "| Vulkan  | 1021.37 |", "| ROCm    | 1203.95 |", "+---------+---------+"],
    ["+---------+---------+", "| backend |  pp512  |", "+---------+---------+",
     "| Vulkan  | 1021.37 |", "| ROCm    | 1203.95 |", "+---------+---------+"],
    ["╭─────────┬─────────╮", "│ backend │   pp512 │", "├─────────┼─────────┤",
     "│ Vulkan  │ 1021.37 │", "│ ROCm    │ 1203.95 │", "╰─────────┴─────────╯"]])
def test_a_table_drawn_with_borders_reads_as_the_pipe_table_it_stands_for(tmp_path, box):
    text = "Qwen3-8B Q4_K_M, t/s:\n\n```\n" + "\n".join(box) + "\n```\n"
    got, _ = read(tmp_path, text, "note.md")
    assert [(r.backends, r.test, r.avg_ts, r.line_start) for r in got] == [
        ("Vulkan", "pp512", 1021.37, 7), ("ROCm", "pp512", 1203.95, 8)]


def test_a_setup_table_in_a_section_before_names_the_device_and_links_name_models(tmp_path):
    text = ("## The Setup\n\n| Component | Detail |\n|---|---|\n"
            "| GPU | NVIDIA RTX PRO 6000 Blackwell Server Edition, 96 GB VRAM |\n"
            "| CPU | AMD Ryzen 7 9800X3D |\n\n## The Results\n\n"
            "| Model | Vulkan PP | Vulkan TG |\n|---|---|---|\n"
            "| [Gemma 3 1B :material-open-in-new:](https://huggingface.co/x/gemma-3-1b-it-GGUF) "
            "| 3,390 | 61 |\n")
    got, _ = read(tmp_path, text, "note.md")
    assert [(r.model_type, r.backends, r.test, r.avg_ts, r.gpu_info, r.cpu_info) for r in got] == [
        ("Gemma 3 1B", "Vulkan", "pp", 3390.0, "NVIDIA RTX PRO 6000 Blackwell Server Edition",
         "AMD Ryzen 7 9800X3D"),
        ("Gemma 3 1B", "Vulkan", "tg", 61.0, "NVIDIA RTX PRO 6000 Blackwell Server Edition",
         "AMD Ryzen 7 9800X3D")]


@pytest.mark.parametrize("where", ["before", "after"])
def test_a_build_line_with_its_options_written_after_it(tmp_path, where):
    build = "build: 45cac7ca7 (8833), GGML_SYCL_F16=ON\n"
    table = ("| model | size | params | backend | ngl | test | t/s |\n"
             "| --- | ---: | ---: | --- | --: | ---: | ---: |\n"
             "| gemma4 31B Q4_K - Medium | 17.46 GiB | 30.70 B | SYCL | 99 | pp512 | 759.09 ± 2.13 |\n")
    text = "Stable on an Arc B70.\n\n" + (build + "\n" + table if where == "before"
                                             else table + "\n" + build)
    got, _ = read(tmp_path, text, "note.md")
    assert [(r.test, r.build_commit, r.build_number, r.gpu_info) for r in got] == [
        ("pp512", "45cac7ca7", 8833, "Arc B70")]


@pytest.mark.parametrize("cell", ["25.59 (±0.04)", "25.59 (± 0.04)", "25.59 (+/- 0.04)",
                                  "25.59 ± 0.04"])
def test_a_spread_in_brackets_after_the_mean(tmp_path, cell):
    text = f"Qwen3-8B Q4_K_M\n\n| backend | tg128 |\n|---|---|\n| CUDA | {cell} |\n"
    got, _ = read(tmp_path, text, "note.md")
    assert [(r.test, r.avg_ts, r.stddev_ts) for r in got] == [("tg128", 25.59, 0.04)]


@pytest.mark.parametrize("line, got", [
    ("- gpt-oss-20b: pp2048 2130.79, tg32 62.68",
     [("gpt-oss-20b", "pp2048", 2130.79), ("gpt-oss-20b", "tg32", 62.68)]),
    ("pp512 1234.5 ± 3.2, tg128 45.6", [(None, "pp512", 1234.5), (None, "tg128", 45.6)]),
    ("We ran pp512 1234.5 and it was fine", []),          # a sentence: no line of speeds
    ("- gpt-oss-20b: prompt 2130.79, generation 62.68", []),   # kinds alone need their unit
    ("* 12.39 tok/sec TG", [(None, "tg", 12.39)]),                # the rate first
    ("- Qwen3-8B: 592 t/s for prompt processing, 171 t/s for generation",
     [("Qwen3-8B", "pp", 592.0), ("Qwen3-8B", "tg", 171.0)]),
    ("I got 171 t/s for generation on chrome", []),               # a sentence around it
])
def test_speeds_named_by_a_sized_test_need_no_unit(tmp_path, line, got):
    rows, _ = read(tmp_path, f"Build b6761 on a DGX Spark.\n\n{line}\n", "note.md")
    assert [(r.model_type, r.test, r.avg_ts) for r in rows] == got


def test_a_summary_row_of_no_figure_leaves_the_tests_named_by_their_column(tmp_path):
    text = ("| Model | Metric | Vulkan RADV | ROCm 7.2 HIP |\n|---|---|---|---|\n"
            "| Llama 2 7B Q4_K_M | pp512 | 1,074 | 1,182 |\n| Llama 2 7B Q4_K_M | tg128 | 47.3 | 41.8 |\n"
            "| **Average** | — | — | — |\n")
    got, _ = read(tmp_path, text, "note.md")
    assert [(r.test, r.backends, r.avg_ts) for r in got] == [
        ("pp512", "Vulkan", 1074.0), ("pp512", "ROCm", 1182.0),
        ("tg128", "Vulkan", 47.3), ("tg128", "ROCm", 41.8)]


@pytest.mark.parametrize("prose, read_as_llama", [
    ("llama.cpp built natively with `GGML_METAL=ON`, commit `da5b448`, `-ngl 999`", True),
    ("vLLM 0.11 against llama.cpp on the same box", False),     # another engine named too
    ("Numbers from our API gateway", False),
])
def test_a_bare_tok_s_column_is_llama_cpps_in_a_note_that_names_only_it(tmp_path, prose, read_as_llama):
    text = (f"{prose}\n\n| Model | Size | avg tok/s |\n|---|---|---|\n"
            "| Qwen3-30B-A3B-Instruct-2507 | 17.3 GB | **70.55** |\n| gemma-3-27b-it | 15.4 GB | 13.24 |\n")
    got, _ = read(tmp_path, text, "note.md")
    rows = [(r.model_type, r.test, r.avg_ts) for r in got if type(r).__name__ == "LlamaBenchResult"]
    assert rows == ([("Qwen3-30B-A3B-Instruct-2507", "tg", 70.55), ("gemma-3-27b-it", "tg", 13.24)]
                    if read_as_llama else [])


@pytest.mark.parametrize("header, kind", [
    ("TG tok/sec `main@144ee1c4`", ("tg", "main@144ee1c4")),     # the kind, then the run
    ("TG t/s (main)", ("tg", "main")),
    ("Prompt processing ROCm t/s", ("pp", "ROCm")),
    ("Prompt tok", None),                                         # a count, no rate
    ("main TG t/s", ("tg", "main")),                              # the run, then the kind
    ("CPU prompt processing", ("pp", "CPU")),
    ("PP (t/s)", ("pp", "")),
    ("Vulkan pp512 t/s", None),                                   # a sized test: no bare kind
])
def test_a_kind_named_beside_its_run_either_side(header, kind):
    from benchvault.parsers.llama_retyped import bare_kind
    assert bare_kind(header) == kind


def test_runs_named_by_their_branch_at_a_commit_in_a_note_that_names_a_llama_cpp_tool(tmp_path):
    text = ("* First line of llama-sweep-bench PP512/TG128/N_KV0\n\n"
            "| TG tok/sec `main@144ee1c4` | TG tok/sec `PR541@93209939` | speed-up |\n"
            "| --- | --- | --- |\n| 6.29 | 8.22 | 1.309x |\n")
    got, _ = read(tmp_path, text, "note.md")
    assert [(r.test, r.avg_ts, r.label, r.build_commit) for r in got] == [
        ("tg", 6.29, "main@144ee1c4", "144ee1c4"), ("tg", 8.22, "PR541@93209939", "93209939")]


def test_llama_servers_timings_of_two_requests_are_two_prints(tmp_path):
    request = ("slot print_timings: id  0 | task {t} | \n"
               "prompt eval time =     {pe} ms /   {n} tokens (    1.49 ms per token,   {pr} tokens per second)\n"
               "       eval time =    5683.35 ms /   255 tokens (   22.29 ms per token,    {er} tokens per second)\n"
               "      total time =    6014.29 ms /   397 tokens\n")
    text = ("Qwen3-8B Q4_K_M, llama-server on an RTX 3060:\n\n```\n"
            + request.format(t=0, pe="211.55", n=142, pr="671.24", er="44.87")
            + request.format(t=1, pe="98.10", n=64, pr="652.40", er="44.12") + "```\n")
    got, warnings = read(tmp_path, text, "note.md")
    assert [(r.test, r.avg_ts, r.format) for r in got] == [
        ("pp142", 671.24, "llama_timings"), ("tg255", 44.87, "llama_timings"),
        ("pp64", 652.4, "llama_timings"), ("tg255", 44.12, "llama_timings")]
    assert got[1].extra["total_time_ms"] == 6014.29 and got[2].extra == {"prompt_eval_time_ms": 98.1}


def test_llama_timings_cut_before_their_total_say_so(tmp_path):
    text = ("```\nllama_perf_context_print: prompt eval time =     300.11 ms /    20 tokens "
            "(   15.01 ms per token,    66.64 tokens per second)\n"
            "llama_perf_context_print:        eval time =    2296.72 ms /   255 runs   "
            "(    9.01 ms per token,   111.03 tokens per second)\n```\n")
    got, warnings = read(tmp_path, text, "note.md")
    assert [(r.test, r.avg_ts, (r.extra or {}).get("incomplete")) for r in got] == [
        ("pp20", 66.64, None), ("tg255", 111.03, True)]
    assert any("stop before their total time" in w for _, w in warnings)



@pytest.mark.parametrize("rate", ["t/s", "tok/s"])
def test_a_test_column_beside_one_bare_rate_column_names_each_rows_test(tmp_path, rate):
    # (the note names the model and llama.cpp: a bare `t/s` column alone would be generation's)
    rows, warnings = read(tmp_path, "\n".join([
        "llama.cpp ROCm on MI50 32GB, Qwen3-32B Q4_0", "",
        f"| test | {rate} |", "|---|---|", "| pp512 | 312.45 ± 1.20 |",
        "| tg128 | 19.87 ± 0.05 |"]) + "\n", "notes.md")
    assert [(r.test, r.avg_ts, r.stddev_ts, r.backends) for r in rows] == [
        ("pp512", 312.45, 1.2, "ROCm"), ("tg128", 19.87, 0.05, "ROCm")]
    assert not any("names no test" in w for _, w in warnings)


def test_a_models_path_and_its_name_alone_state_one_file_and_a_hyphenated_cpu(tmp_path):
    rows, _ = read(tmp_path, "\n".join([
        "model:  Qwen3-8B-Q4_K_M.GGUF", "args:   -m /models/qwen/Qwen3-8B-Q4_K_M.GGUF -ngl 0 -t 16",
        "on my Ryzen-7950X CPU", "",
        "| model | size | params | backend | threads | test | t/s |",
        "| --- | ---: | ---: | --- | ---: | ---: | ---: |",
        "| qwen3 8B Q4_K - Medium | 4.68 GiB | 8.19 B | CPU | 16 | pp512 | 61.20 ± 0.31 |"]) + "\n",
        "notes.md")
    assert [(r.model_filename, r.model_ftype, r.cpu_info) for r in rows] == [
        ("/models/qwen/Qwen3-8B-Q4_K_M.GGUF", "Q4_K - Medium", "Ryzen-7950X")]


def test_a_change_said_in_words_and_gen_after_prompt(tmp_path):
    rows, _ = read(tmp_path, "\n".join([
        "llama.cpp CUDA, RTX 3090, Llama-3.1-8B Q4_K_M", "",
        "PP went from 4012 t/s to 4530 t/s and TG from 128.4 t/s to 131.9 t/s with the PR.", "",
        "On the M3 Ultra: ", "", "Prompt: 245.6 t/s | Gen: 28.9 t/s"]) + "\n", "notes.md")
    assert [(r.label, r.test, r.avg_ts) for r in rows] == [
        ("before", "pp", 4012.0), ("after", "pp", 4530.0), ("before", "tg", 128.4),
        ("after", "tg", 131.9), ("On the M3 Ultra", "pp", 245.6), ("On the M3 Ultra", "tg", 28.9)]


@pytest.mark.parametrize("said, gpu", [
    ("llama.cpp Vulkan on my 9070 XT", "9070 XT"), ("llama.cpp ROCm, 7900XTX", "7900XTX"),
    ("llama.cpp on 2x 3090 Ti", "3090 Ti"), ("llama.cpp CUDA, Tesla P40", "Tesla P40"),
    ("llama.cpp ROCm on an MI50 32GB", "MI50"), ("llama.cpp on RTX 6000 Ada", "RTX 6000 Ada"),
    ("llama.cpp on the 3060 laptop, an RTX 3060 Laptop GPU", "RTX 3060 Laptop"),
])
def test_a_gpu_named_by_its_number_or_its_datacenter_name(tmp_path, said, gpu):
    rows, _ = read(tmp_path, f"{said}, Qwen3-8B Q4_K_M\n\npp512: 1234.5 t/s\ntg128: 56.7 t/s\n",
                   "notes.md")
    assert [(r.test, r.gpu_info) for r in rows] == [("pp512", gpu), ("tg128", gpu)]


def test_llama_cpps_version_line_gives_its_build():
    from benchvault.parsers.llama_bench import stated_in_prose
    assert stated_in_prose(["version: 4254 (fd16a418)", "built with MSVC 19.44 for x64"]) == {
        "build_number": 4254, "build_commit": "fd16a418"}


def test_a_rows_name_gives_its_model_and_its_backend_in_brackets(tmp_path):
    rows, _ = read(tmp_path, "\n".join([
        "llama.cpp on Strix Halo", "", "| | pp512 | tg128 |", "|---|---|---|",
        "| Qwen3-30B-A3B Q4_K_M (Vulkan) | 1021.4 | 72.3 |",
        "| Qwen3-30B-A3B Q4_K_M (ROCm) | 987.6 | 65.1 |"]) + "\n", "notes.md")
    assert [(r.model_type, r.model_ftype, r.backends, r.test, r.avg_ts) for r in rows] == [
        ("Qwen3-30B-A3B", "Q4_K_M", "Vulkan", "pp512", 1021.4),
        ("Qwen3-30B-A3B", "Q4_K_M", "Vulkan", "tg128", 72.3),
        ("Qwen3-30B-A3B", "Q4_K_M", "ROCm", "pp512", 987.6),
        ("Qwen3-30B-A3B", "Q4_K_M", "ROCm", "tg128", 65.1)]
