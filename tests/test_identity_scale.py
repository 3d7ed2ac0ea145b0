"""A file of many distinct runs that share a request count (a long sweep, every run with
`--num-prompts 1024`): each new run is compared only with the runs near its duration, not with
every earlier one, and the runs, sightings and repeats come out as before."""

from __future__ import annotations

import re

from benchvault.experiments import identity
from benchvault.ingest import identify as sightings
from conftest import SEEDS, ingest_into, rows

BLOCK_RE = re.compile(r"^=+ Serving Benchmark Result =+\n.*?^={10,}\n", re.M | re.S)
DURATION_RE = re.compile(r"^(Benchmark duration \(s\):\s+)[\d.]+$", re.M)
THROUGHPUT_RE = re.compile(r"^(Output token throughput \(tok/s\):\s+)[\d.]+$", re.M)


def _sweep(count: int) -> str:
    """``count`` runs of one seed block (1024 requests each), each with its own duration and
    throughput, then the first five pasted again."""
    block = next(b.group(0) for seed in sorted(SEEDS.glob("*.md"))
                 for b in BLOCK_RE.finditer(seed.read_text())
                 if "Successful requests:                     1024" in b.group(0))
    runs = [THROUGHPUT_RE.sub(rf"\g<1>{200 + i * 0.37:.2f}",
                              DURATION_RE.sub(rf"\g<1>{500 + i * 1.13:.2f}", block))
            for i in range(count)]
    return "# sweep\n\n```\n" + "".join(runs + runs[:5]) + "```\n"


def test_a_long_sweep_compares_each_run_with_its_neighbours_only(tmp_path, monkeypatch):
    note = tmp_path / "sweep.md"
    note.write_text(_sweep(400))
    compared = []
    real = identity.differences

    def counted(*args):
        compared.append(1)
        return real(*args)

    monkeypatch.setattr(sightings, "differences", counted)
    db = tmp_path / "w.db"
    ingest_into(db, note)
    runs = rows(db, "SELECT completed, duration, output_throughput, sightings FROM serving_runs "
                    "ORDER BY id")
    assert len(runs) == 400 and {r["completed"] for r in runs} == {1024}
    assert [r["duration"] for r in runs[:3]] == [500.0, 501.13, 502.26]
    assert [r["sightings"] for r in runs[:6]] == [2, 2, 2, 2, 2, 1]     # the five pasted again
    # Comparing every run with every earlier one of the same request count: ~80,000.
    assert len(compared) < 2 * 400
