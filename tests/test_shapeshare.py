"""Worker processes share the shapes their memos learn (benchvault/shapeshare.py)."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import FIXTURES, ROOT
from benchvault.parsers import engine_stats
from benchvault.reading import fastlane, memo

NOTE = FIXTURES / "seeds" / "mi300x_llama70b_tp-pp_specdecode.md"


def test_a_memo_adopts_what_a_memo_of_its_name_learnt_elsewhere(monkeypatch):
    monkeypatch.setattr(memo, "_learnt", [])        # recording, for this test only
    monkeypatch.setattr(memo, "_NAMED", memo.weakref.WeakValueDictionary())
    parse = engine_stats._parser().parse
    text = ("Avg prompt throughput: 926.3 tokens/s, Avg generation throughput: 23.2 tokens/s, "
            "Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.3%")
    learner = memo.Memo(parse, name="stats")
    assert learner(text) == parse(text)
    learnt = memo.take_learnt()
    assert [(name, entry[0]) for name, _, entry in learnt] == [("stats", "template")]
    assert memo.take_learnt() == []                  # taken once
    del learner

    other = text.replace("926.3", "1204.9").replace("Running: 1", "Running: 12")
    memo.adopt(learnt)                       # before a memo of that name exists: kept for it
    adopter = memo.Memo(parse, name="stats")
    assert adopter(other) == parse(other)
    assert (adopter.hits, adopter.misses) == (1, 0)
    assert memo.take_learnt() == []          # adopted, not learnt: not sent on again


def test_a_row_model_is_named_the_same_in_every_process():
    from benchvault.schemas.server import EngineStat

    name = f"{EngineStat.__module__}:{EngineStat.__qualname__}"
    fastlane._MODELS.pop(name, None)
    assert fastlane._model_named(name)[0] is EngineStat


# Two workers forked from one fresh process: the first reads a note and sends what it
# learnt; the second reads a copy of it after that (with the exchange, or alone).
SCENARIO = """
import json, multiprocessing, sys
from benchvault import ingest, parallel, shapeshare
from benchvault.reading import memo

log, copy, share = sys.argv[1], sys.argv[2], sys.argv[3] == "share"
ingest.freeze_what_stays()
exchange = shapeshare.Exchange()
fork = multiprocessing.get_context("fork")

def misses():
    return sum(m.misses for m in list(memo._NAMED.values()))

def read(path, out, join):
    if join:
        shapeshare.join(exchange)
    before = misses()
    items = parallel._unpacked(parallel._parse_packed(path, None)).items
    out.put((misses() - before, len(items)))

out = fork.Queue()
for path, join in ((log, True), (copy, share)):
    worker = fork.Process(target=read, args=(path, out, join))
    worker.start()
    worker.join()
print(json.dumps([out.get(timeout=60), out.get(timeout=60)]))
"""


def _scenario(tmp_path, share: bool) -> list[list[int]]:
    copy = tmp_path / "copy.log"
    copy.write_bytes(NOTE.read_bytes())
    done = subprocess.run([sys.executable, "-c", SCENARIO, str(NOTE), str(copy),
                           "share" if share else "alone"], capture_output=True, text=True,
                          cwd=ROOT, check=True)
    return json.loads(done.stdout)


def test_a_worker_reads_without_learning_what_another_learnt(tmp_path):
    (learnt, rows), (shared, rows_shared) = _scenario(tmp_path, share=True)
    _, (alone, rows_alone) = _scenario(tmp_path, share=False)
    assert learnt >= 3 and alone == learnt       # every shape learnt again when alone
    assert shared == 0
    assert rows == rows_shared == rows_alone >= 10
