"""A pool worker's items reach the writer packed (benchvault.packing): read back, they are the
items the worker read, rows, children, warnings and types alike."""

from __future__ import annotations

from pathlib import Path

from conftest import assert_same_item
from benchvault.ingest import packing
from benchvault.ingest.outcome import IngestWarning
from benchvault.ingest.parse import parse_file
from benchvault.parsers.base import Facts, Parsed

ROOT = Path(__file__).resolve().parent.parent


def test_packed_items_read_back_equal(tmp_path):
    # A seed note (serving blocks with latency children, llama-bench tables), a server log
    # (facts of a launch) and a line that is not UTF-8 (a warning).
    note = tmp_path / "note.md"
    note.write_bytes((ROOT / "fixtures/seeds/strix-halo_vllm-vs-llamacpp.md").read_bytes()
                     + "\nthroughput on the caf\xe9 box\n".encode("latin-1"))
    items = list(parse_file(note))
    for log in sorted((ROOT / "fixtures/vllm_server").iterdir())[:6]:
        items += parse_file(log)
    kinds = {type(i) for i in items}
    assert {Parsed, IngestWarning, Facts} <= kinds
    assert any(isinstance(i, Parsed) and i.children for i in items)
    back = packing.unpack(packing.pack(items))
    assert len(back) == len(items)
    for a, b in zip(back, items):
        assert_same_item(a, b)


def test_unpacking_leaves_the_collector_as_it_was():
    import gc

    data = packing.pack(list(parse_file(ROOT / "fixtures/seeds/strix-halo_vllm-vs-llamacpp.md")))
    assert gc.isenabled()
    packing.unpack(data)
    assert gc.isenabled()
    gc.disable()
    try:
        packing.unpack(data)
        assert not gc.isenabled()
    finally:
        gc.enable()
