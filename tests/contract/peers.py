"""Peers: programs that compute what benchvault computes, run here on the same data.

llama.cpp's own ``scripts/compare-llama-bench.py`` (from the same llama-cpp-python sdist tree
the llama-bench captures are built from) compares builds in a llama-bench SQLite file.  Two
real ``llama-bench -o sql`` runs of one binary (two models, flash attention 0 and 1) are kept;
the second is relabelled as another build, so the file holds two builds with their own
speeds, as the script's users have them.  Its table is kept as the truth that
tests/test_peers.py holds ``benchvault compare --report llama-bench`` to, row for row.

    fixtures/contract/peers/compare-llama-bench/
        build_a.sql          llama-bench -o sql, as printed (build 0c1e570)
        build_b.sql          a second run, build_commit relabelled (see ABOUT.json)
        compare.truth.md     compare-llama-bench.py -i <both> -b <a> -c <b>
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from pathlib import Path

from common import FIXTURES, LOGS, WORK, ContractError, ensure_tools, run
import llamacpp_runs

PEERS = FIXTURES / "peers" / "compare-llama-bench"
# A second build id of the same length as the real one (the script cuts ids to the shortest).
SECOND_BUILD = "c0ffee0"
ARGS = ["-r", "2", "-t", "2", "-p", "64", "-n", "16", "-fa", "0,1", "-o", "sql"]


def _sql_run(package: str, models: list[Path], out: Path, log: Path) -> None:
    exe = llamacpp_runs.bin_path(package, "llama-bench")
    run([str(exe), "-m", ",".join(m.name for m in models), *ARGS], log,
        cwd=llamacpp_runs.build_dir(package), stdout=out)


def _relabel(sql: str, old: str, new: str) -> str:
    if len(old) != len(new):
        raise ContractError(f"build ids {old!r} and {new!r} differ in length")
    return sql.replace(f"VALUES ('{old}',", f"VALUES ('{new}',")


def _first_build(sql_path: Path) -> str:
    conn = sqlite3.connect(":memory:")
    conn.executescript(sql_path.read_text())
    return conn.execute("SELECT build_commit FROM llama_bench LIMIT 1").fetchone()[0]


def bench(entry: dict, progress=lambda msg: None) -> Path:
    package = entry["package"]
    log = LOGS / "peers-compare-llama-bench.log"
    llamacpp_runs.fetch(package)
    progress("build")
    llamacpp_runs.build(package)
    progress("models")
    models = llamacpp_runs.models(package)
    if PEERS.exists():
        shutil.rmtree(PEERS)
    PEERS.mkdir(parents=True)
    progress("llama-bench run 1")
    _sql_run(package, models, PEERS / "build_a.sql", log)
    progress("llama-bench run 2")
    second = WORK / "tmp" / "peers-build_b.sql"
    second.parent.mkdir(parents=True, exist_ok=True)
    _sql_run(package, models, second, log)
    build = _first_build(PEERS / "build_a.sql")
    (PEERS / "build_b.sql").write_text(_relabel(second.read_text(), build, SECOND_BUILD))
    progress("compare-llama-bench.py")
    py = ensure_tools()
    run([str(py), "-m", "pip", "install", "-q", "GitPython", "tabulate"], log)
    database = WORK / "tmp" / "peers-llama-bench.sqlite"
    database.unlink(missing_ok=True)
    with sqlite3.connect(database) as conn:
        conn.executescript((PEERS / "build_a.sql").read_text())
        conn.executescript((PEERS / "build_b.sql").read_text())
    script = llamacpp_runs.tree(package) / "scripts" / "compare-llama-bench.py"
    # Run outside any git repository: the script would otherwise name builds after its heads.
    out = subprocess.run([str(py), str(script), "-i", str(database), "-b", build,
                          "-c", SECOND_BUILD], cwd=database.parent, capture_output=True,
                         text=True)
    with open(log, "a") as fh:
        fh.write(out.stderr)
    if out.returncode != 0:
        raise ContractError(f"compare-llama-bench.py exited {out.returncode}; see {log}")
    (PEERS / "compare.truth.md").write_text(out.stdout)
    (PEERS / "ABOUT.json").write_text(json.dumps({
        "peer": "llama.cpp scripts/compare-llama-bench.py",
        "source": f"llama-cpp-python=={package} sdist, vendor/llama.cpp",
        "build_a.sql": ["llama-bench", "-m", ",".join(m.name for m in models), *ARGS],
        "build_b.sql": f"the same command run again (real speeds of a second run), its "
                       f"build_commit {build!r} relabelled {SECOND_BUILD!r}",
        "compare.truth.md": ["compare-llama-bench.py", "-i", "llama-bench.sqlite (both files)",
                             "-b", build, "-c", SECOND_BUILD],
    }, indent=1) + "\n")
    return PEERS
