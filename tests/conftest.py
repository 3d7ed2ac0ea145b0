"""Shared fixtures: the seeds ingested once, and small helpers to read rows back."""

from __future__ import annotations

import json
import os
import sqlite3
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

from benchvault.ingest.pipeline import expand_paths, ingest_paths
from benchvault.schemas.store import connect

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
SEEDS = FIXTURES / "seeds"

# Property tests draw the same examples on every run, so a failure is one that can be run again
# and the suite's verdict never depends on luck; HYPOTHESIS_PROFILE=explore draws new ones, and
# bench/fuzz_campaign.py explores at length.
settings.register_profile("same", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "same"))


@pytest.fixture(scope="session", autouse=True)
def system_temp_stays_clean(tmp_path_factory):
    """Tests write only under pytest's tmp_path: the system temp directory (tempfile's and, via
    TMPDIR, any subprocess's) is a fresh directory under the session's base temp, and whatever
    is left in it at the end fails the run (other people's files in /tmp never count)."""
    scratch = tmp_path_factory.mktemp("system-temp")
    saved_env, saved_dir = os.environ.get("TMPDIR"), tempfile.tempdir
    os.environ["TMPDIR"] = str(scratch)
    tempfile.tempdir = str(scratch)
    try:
        yield scratch
    finally:
        tempfile.tempdir = saved_dir
        if saved_env is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = saved_env
    # lark's grammar cache (parsers/grammar.py, cache=True) and the prefilter's compiled
    # patterns (reading/prefilter.py) are meant to outlive a run: a few fixed names,
    # overwritten, never piling up.
    caches = (".lark_cache_", ".benchvault_hyperscan_")
    left = sorted(p.name for p in scratch.iterdir() if not p.name.startswith(caches)
                  or p.name.endswith(".part"))
    assert not left, f"tests left {len(left)} entries in the system temp directory: {left[:10]}"


def ingest_into(db_path: Path, *paths: Path, tags: dict | None = None):
    db = connect(db_path)
    try:
        return ingest_paths(db, expand_paths(paths), tags)
    finally:
        db.close()


def rows(db_path: Path, sql: str, params=()) -> list[dict]:
    conn = sqlite3.connect(db_path)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute(sql, params)]
    finally:
        conn.close()


@pytest.fixture(scope="session")
def seeds_db(tmp_path_factory) -> Path:
    db_path = tmp_path_factory.mktemp("seeds") / "seeds.db"
    ingest_into(db_path, SEEDS)
    return db_path


def run_by(db_path: Path, source: str, where: str, params=()) -> dict:
    """The one serving run of ``source`` (file name prefix) matching ``where``."""
    found = rows(db_path, "SELECT r.* FROM serving_runs r JOIN sources s ON s.id = r.source_id "
                          f"WHERE s.name LIKE ? AND {where} ORDER BY r.line_start",
                 (source + "%", *params))
    assert len(found) == 1, f"{len(found)} runs match {where!r} in {source}"
    run = found[0]
    for key in ("namespace", "extra", "tags"):
        if run.get(key):
            run[key] = json.loads(run[key])
    return run


# The tables a parallel or streamed ingest must fill exactly as one process does.
WAREHOUSE_TABLES = ("serving_runs", "sightings", "latency_stats", "llama_bench_results",
                    "server_launches", "engine_stats", "spec_decode_metrics",
                    "unparsed_blocks", "configurations")


def warehouse_tables(db_path: Path) -> dict[str, list[tuple]]:
    """Every row of WAREHOUSE_TABLES, in id order."""
    conn = sqlite3.connect(db_path)
    try:
        return {t: conn.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall()
                for t in WAREHOUSE_TABLES}
    finally:
        conn.close()


def ingested_warehouse(db_path: Path, files, jobs: int):
    """(ingest_paths' results, warehouse_tables) for ``files`` ingested with ``jobs``."""
    db = connect(db_path)
    try:
        results = ingest_paths(db, files, jobs=jobs)
    finally:
        db.close()
    return results, warehouse_tables(db_path)


def assert_same_item(a, b) -> None:
    """Two ingest items alike: a Parsed's rows and children with their values' very types
    (64 stays an int, 64.0 a float), its warnings and tolerance; anything else equal."""
    from benchvault.parsers.base import Parsed

    assert type(a) is type(b)
    if isinstance(a, Parsed):
        assert type(a.row) is type(b.row) and a.row.__dict__ == b.row.__dict__
        assert [type(v) for v in a.row.__dict__.values()] == \
            [type(v) for v in b.row.__dict__.values()]
        assert [(type(c), c.__dict__) for c in a.children] == \
            [(type(c), c.__dict__) for c in b.children]
        assert (a.warnings, a.tolerance) == (b.warnings, b.tolerance)
    else:
        assert a == b


# The contract's vLLM captures (fixtures/contract/vllm-*), saved as people save them: each
# server's log in a file of its own, each client run in another.  version → server log → the
# port it listened on and the model name it served.
CAPTURED_SERVERS = {
    "vllm-0.11.0": {"server.log": (58525, "tiny-llama-cd1e84fc")},
    "vllm-0.27.1": {"server.log": (32889, "tiny-llama-593769cf"),
                    "spec_server.log": (34811, "tiny-llama-22f8d41c")},
    "vllm-0.32.0": {"server.log": (53045, "tiny-llama-cc9952da"),
                    "spec_server.log": (42099, "tiny-llama-cea3251d")}}
CAPTURED_CLIENTS = ("c2", "goodput", "openai_chat", "rate4_percentiles")


def split_captures(folder: Path, with_results: bool = False) -> list[Path]:
    """Every contract server log and client capture copied to ``folder``/<version>/, each a
    file of its own (with each client's --save-result JSON when ``with_results``)."""
    import shutil

    out = []
    for version, servers in CAPTURED_SERVERS.items():
        (folder / version).mkdir(parents=True)
        names = [*servers, *(f"{c}.txt" for c in CAPTURED_CLIENTS)]
        if "spec_server.log" in servers:
            names.append("spec_c2.txt")
        if with_results:
            names += [n.replace(".txt", ".truth.json") for n in names if n.endswith(".txt")]
        for name in names:
            shutil.copy2(FIXTURES / "contract" / version / name, folder / version / name)
            out.append(folder / version / name)
    return out


def rewritten(source: Path, target: Path, *replacements: tuple[str, str]) -> Path:
    """``source`` copied to ``target`` with each (old, new) text replaced, bytes otherwise
    kept (a server log's carriage returns too)."""
    text = source.read_bytes().decode("utf-8")
    for old, new in replacements:
        text = text.replace(old, new)
    target.write_bytes(text.encode("utf-8"))
    return target
