"""Identity decisions pinned per fixture: which rows are one run, how many sightings each table
holds, how many rows a file found seen before, and which contradictions were reported.

Each fixture is ingested alone, then every fixture together in path order (notes that repeat
each other's runs). ``identity_counts.json`` holds what the warehouse decided; a change to how
candidates are looked up must leave every figure as it is.  Regenerate it only for a change
that means to decide differently:  python tests/test_identity_pinned.py
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from conftest import FIXTURES, ingest_into  # noqa: E402

from benchvault.ingest.find import expand_paths  # noqa: E402

PINNED = Path(__file__).with_name("identity_counts.json")
TABLES = ("serving_runs", "llama_bench_results", "server_launches", "spec_decode_metrics",
          "latency_stats", "engine_stats", "offline_runs", "offline_steps")


def _warehouse(db: Path) -> dict:
    conn = sqlite3.connect(db)
    try:
        have = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        out = {t: conn.execute(f"SELECT count(*) FROM [{t}]").fetchone()[0]
               for t in TABLES if t in have}
        out["sightings"] = dict(conn.execute(
            "SELECT kind, count(*) FROM sightings GROUP BY kind ORDER BY kind").fetchall())
        # How often each run was seen: the multiset of sighting counts.
        out["runs_by_sightings"] = {str(n): c for n, c in conn.execute(
            "SELECT sightings, count(*) FROM serving_runs GROUP BY sightings ORDER BY 1")}
        out["contradictions"] = conn.execute(
            "SELECT count(*) FROM unparsed_blocks WHERE reason LIKE '%contradicts%'"
        ).fetchone()[0]
        return out
    finally:
        conn.close()


def _file(result) -> dict:
    return {"counts": dict(sorted(result.counts.items())), "seen_before": result.known,
            "contradictions": sum("contradicts" in w.reason for w in result.warnings)}


def decisions(scratch: Path) -> dict:
    files = expand_paths([FIXTURES])
    out: dict = {"alone": {}, "together": {}}
    for n, path in enumerate(files):
        db = scratch / f"alone-{n}.db"
        [result] = ingest_into(db, path)
        out["alone"][str(path.relative_to(ROOT))] = {**_file(result), **_warehouse(db)}
    db = scratch / "together.db"
    results = ingest_into(db, *files)
    out["together"] = {"files": {str(Path(r.path).relative_to(ROOT)): _file(r)
                                 for r in results},
                       "warehouse": _warehouse(db)}
    return out


def test_identity_decisions_are_pinned_per_fixture(tmp_path):
    pinned = json.loads(PINNED.read_text())
    got = decisions(tmp_path)
    assert sorted(got["alone"]) == sorted(pinned["alone"])
    for name, expected in pinned["alone"].items():
        assert got["alone"][name] == expected, name
    assert got["together"]["warehouse"] == pinned["together"]["warehouse"]
    for name, expected in pinned["together"]["files"].items():
        assert got["together"]["files"][name] == expected, name


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        PINNED.write_text(json.dumps(decisions(Path(scratch)), indent=1, sort_keys=True) + "\n")
    print(f"wrote {PINNED}")
