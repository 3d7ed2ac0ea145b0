"""Contract captures (fixtures/contract/<tool>-<version>/, made by `make contract` with the real
llama-bench and vLLM) ingested by benchvault and compared, value by value, with the same run's
own JSON or the server's /metrics.  No tool is needed here: the captures are kept in the repo.
How each value is compared is in tests/contract/compare.py.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "contract"))

import compare  # noqa: E402

CONTRACT = Path(__file__).resolve().parent.parent / "fixtures" / "contract"
DIRS = sorted(p for p in CONTRACT.glob("*-*") if (p / "ABOUT.json").exists())


def captures():
    for d in DIRS:
        for report_path in _capture_paths(d):
            yield pytest.param(d, report_path, id=f"{d.name}/{report_path}")


def _capture_paths(d: Path) -> list[str]:
    names = []
    for f in sorted(d.iterdir()):
        if f.name == "ABOUT.json" or ".truth." in f.name or f.name.endswith(".metrics.txt"):
            continue
        names.append(f.name)
    return names


_REPORTS: dict[Path, dict] = {}


def reports_of(d: Path) -> dict:
    if d not in _REPORTS:
        _REPORTS[d] = {r.capture: r for r in compare.check_dir(d)}
    return _REPORTS[d]


def test_every_runnable_matrix_entry_has_captures():
    """matrix.toml says which versions run here; each must have its captures kept."""
    m = tomllib.loads((Path(__file__).parent / "contract" / "matrix.toml").read_text())
    want = {f"llama.cpp-{e['package']}" for e in m["llama_cpp"]["versions"]
            if e.get("status", "run") == "run"}
    want |= {f"vllm-{e['version']}" for e in m["vllm"]["versions"]
             if e.get("status", "run") == "run"}
    assert want <= {d.name for d in DIRS}, f"no captures for {sorted(want - {d.name for d in DIRS})}"
    for e in m["vllm"]["versions"] + m["llama_cpp"]["versions"]:
        assert e.get("status", "run") == "run" or e.get("reason"), f"{e}: skipped without a reason"


@pytest.mark.parametrize("d,name", list(captures()))
def test_contract_capture(d: Path, name: str):
    report = reports_of(d)[name]
    assert report.compared > 3, f"{name}: only {report.compared} values compared"
    unknown = [m for m in report.mismatches if not compare.known(d.name, m[0])]
    assert not unknown, "\n".join(f"{n}: benchvault {h!r} != tool {t!r}" for n, h, t in unknown)
    if report.mismatches:
        pytest.xfail(compare.known(d.name, report.mismatches[0][0]))
