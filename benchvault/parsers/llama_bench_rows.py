"""llama-bench table rows pasted without their header → ``llama_bench_results`` rows.

Upstream printer: ``markdown_printer`` in llama.cpp's ``llama-bench`` (see ``llama_bench``).  A
paste that kept the rows but not the header above them (`Output:` and then the rows, or the
rows after a line that ended the table)::

    | phi3 3B Q4_K - Medium          |   2.23 GiB |     3.82 B | BLAS       |       8 |           pp512 |         15.60 ± 1.42 |

is read as llama-bench's default table when it has its seven columns (model, size, params,
backend, `ngl` -- `threads` for a CPU or BLAS backend, or whichever of the two the command
line above gave that value -- test, t/s); other rows are a warning, kept as raw text.  The
block, its build line and its context are read by ``llama_bench.build``.

A separate format because its first line looks like any row of a table: it must not cut an
open table (``restarts=False``), while a llama-bench header must (``llama_bench`` restarts).
"""

from __future__ import annotations

import re

from .base import BlockFormat
from .llama_bench import COMMANDS, DATA_ROW, TRAILER, build, continues

FORMAT = BlockFormat(
    name="llama_bench_rows",
    table="llama_bench_results",
    description="llama.cpp llama-bench table rows pasted without their header (the default "
                "seven columns).",
    upstream=("llama.cpp llama-bench (examples/llama-bench, tools/llama-bench) 2023 – 2026",),
    # every row's last cell is `mean ± std`
    markers=("±",),
    start=re.compile(DATA_ROW),
    end=None,
    max_lines=100_000,
    build=build,
    commands=COMMANDS,
    continues=continues,
    trailer=TRAILER,
    restarts=False,
)
