"""`make peers`: llama.cpp's compare-llama-bench.py beside `benchvault compare`, on the contract
captures, printing the rows and values the two agree on and the rows only one of them prints.

The script comes from the llama-cpp-python sdist (pip download, vendor/llama.cpp/scripts), run
in a scratch venv under .peers/ with what it imports (GitPython, tabulate).  Each pair of
builds is given to both as llama-bench's own JSON (`-o json`, or the `-oe json` beside a
markdown table).  Not part of `make test`: it needs the network for pip.
"""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONTRACT = ROOT / "fixtures" / "contract"
WORK = ROOT / ".peers"
VERSION = "0.3.36"
# (baseline file, its build, candidate file, its build)
PAIRS = [
    ("peers/compare-llama-bench/build_a.sql", "0c1e570",
     "peers/compare-llama-bench/build_b.sql", "c0ffee0"),
    ("llama.cpp-0.2.90/out_json.json", "1d1ccce", "llama.cpp-0.3.16/out_json.json", "4227c9b"),
    ("llama.cpp-0.3.16/out_json.json", "4227c9b", "llama.cpp-0.3.36/out_json.json", "0c1e570"),
    ("llama.cpp-0.2.90/md_sweep_p_n_t_fa.truth.json", "1d1ccce",
     "llama.cpp-0.3.16/md_sweep_p_n_t_fa.truth.json", "4227c9b"),
    ("llama.cpp-0.3.16/md_sweep_p_n_t_fa.truth.json", "4227c9b",
     "llama.cpp-0.3.36/md_sweep_p_n_t_fa.truth.json", "0c1e570"),
]


def run(args: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True, **kw)


def peer_script() -> tuple[Path, Path]:
    venv = WORK / "venv"
    py = venv / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", "scikit-build-core", "GitPython",
                        "tabulate"], check=True)
    script = WORK / f"compare-llama-bench-{VERSION}.py"
    if not script.exists():
        sdists = WORK / "sdist"
        subprocess.run([str(py), "-m", "pip", "download", "-q", "--no-deps", "--no-binary",
                        ":all:", "--no-build-isolation", f"llama-cpp-python=={VERSION}", "-d",
                        str(sdists)], check=True)
        [archive] = sdists.glob(f"llama_cpp_python-{VERSION}.tar.gz")
        with tarfile.open(archive) as tar:
            member = next(m for m in tar.getmembers()
                          if m.name.endswith("vendor/llama.cpp/scripts/compare-llama-bench.py"))
            script.write_bytes(tar.extractfile(member).read())
    return py, script


def pipe_rows(text: str) -> list[dict[str, str]]:
    lines = [ln for ln in text.splitlines() if ln.startswith("|")]
    if not lines:
        return []
    split = [[c.strip() for c in re.split(r"(?<!\\)\|", ln)[1:-1]] for ln in lines]
    header, body = split[0], [r for r in split[1:] if not all(set(c) <= set("-: ") for c in r)]
    return [dict(zip(header, r)) for r in body]


def one_pair(py: Path, script: Path, base: str, b: str, cand: str, c: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        inputs = [str(CONTRACT / base), str(CONTRACT / cand)]
        if base.endswith(".sql"):           # -o sql: replayed into the SQLite file it reads
            database = Path(tmp) / "llama-bench.sqlite"
            with sqlite3.connect(database) as conn:
                for name in inputs:
                    conn.executescript(Path(name).read_text())
            inputs = [str(database)]
        peer = run([str(py), str(script), "-t", "llama-bench",
                    *(a for name in inputs for a in ("-i", name)),
                    "-b", b, "-c", c], cwd=tmp)
        db = Path(tmp) / "w.db"
        bv = ROOT / ".venv" / "bin" / "benchvault"
        run([str(bv), "ingest", str(CONTRACT / base), str(CONTRACT / cand), "--db", str(db)])
        ours = run([str(bv), "compare", "--db", str(db), "--report", "llama-bench",
                    "--baseline", f"build_commit={b}", "--candidate", f"build_commit={c}"])
    theirs = pipe_rows(peer.stdout)
    mine = pipe_rows(ours.stdout)

    def key(row: dict, test: str) -> tuple:
        return (row.get("Model"), row.get(test))

    peer_values = {}
    for row in theirs:
        peer_values.setdefault(key(row, "Test"), []).append(
            (float(row[f"t/s {b}"]), float(row[f"t/s {c}"]), float(row["Speedup"])))
    agree = values = 0
    for row in mine:
        found = peer_values.get(key(row, "Test"), [])
        mb, mc = float(row["Baseline t/s"]), float(row["Candidate t/s"])
        if any(abs(mb - pb) <= 0.0101 and abs(mc - pc) <= 0.0101 for pb, pc, _ in found):
            agree += 1
            values += 2
    return {"pair": f"{base} ({b}) vs {cand} ({c})", "peer_rows": len(theirs),
            "peer_exit": peer.returncode, "peer_said": (peer.stdout + peer.stderr).strip()
            .splitlines()[-1:] if not theirs else [],
            "ours_rows": len(mine), "ours_exit": ours.returncode,
            "ours_said": ours.stdout.strip().splitlines()[:1] if not mine else [],
            "agree_rows": agree, "agree_values": values}


def main() -> int:
    WORK.mkdir(exist_ok=True)
    py, script = peer_script()
    print(f"peer: {script.name} (llama-cpp-python {VERSION} sdist)")
    for pair in PAIRS:
        out = one_pair(py, script, *pair)
        print(f"\n{out['pair']}")
        print(f"  compare-llama-bench.py: {out['peer_rows']} rows (exit {out['peer_exit']})"
              + (f": {out['peer_said'][0]}" if out["peer_said"] else ""))
        print(f"  benchvault compare:     {out['ours_rows']} rows (exit {out['ours_exit']})"
              + (f": {out['ours_said'][0]}" if out["ours_said"] else ""))
        print(f"  agree: {out['agree_rows']} rows, {out['agree_values']} t/s values "
              "(model, test, both speeds within 0.01)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
