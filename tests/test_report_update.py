"""`benchvault report --update FILE`: marker regions regenerated in place, nothing else."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchvault.cli import app
from benchvault.reports.query import ReportError
from benchvault.reports.update import find_regions, update_file
from conftest import ROOT, SEEDS, ingest_into

STRIX = SEEDS / "strix-halo_vllm-vs-llamacpp.md"

TWO_REGIONS = """# Strix Halo notes

Hand-written text | with a pipe, **bold**, and a marker shown as an example:

```
<!-- benchvault:begin example where=engine=vllm -->
<!-- benchvault:end example -->
```

## c=16
<!-- benchvault:begin c16 report=engines where=max_concurrency=16 header=engine=Backend -->
stale text that will be replaced
<!-- benchvault:end c16 -->

## vLLM by concurrency
<!-- benchvault:begin sweep where=engine=vllm where="model=meta-llama/Llama-2-7b-chat-hf" charts=throughput chart-dir=img -->
<!-- benchvault:end sweep -->

Trailing text stays.
"""


@pytest.fixture(scope="module")
def strix_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("strix") / "strix.db"
    ingest_into(db, STRIX)
    return db


def test_two_regions_idempotent_and_outside_untouched(strix_db, tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(TWO_REGIONS)
    runner = CliRunner()
    first = runner.invoke(app, ["report", "--update", str(readme), "--db", str(strix_db)])
    assert first.exit_code == 0, first.output
    once = readme.read_bytes()
    second = runner.invoke(app, ["report", "--update", str(readme), "--db", str(strix_db)])
    assert second.exit_code == 0 and "unchanged" in second.output
    assert readme.read_bytes() == once
    text = once.decode()
    assert "stale text" not in text
    # Everything outside the regions is byte-for-byte what it was.
    before_lines, after_lines = TWO_REGIONS.splitlines(), text.splitlines()
    assert after_lines[:11] == before_lines[:11]           # up to and including c16's begin
    assert after_lines[-3:] == before_lines[-3:]            # end marker and after
    # The fenced example marker was left alone; the c=16 region holds the six c=16 runs.
    assert "<!-- benchvault:begin example where=engine=vllm -->\n<!-- benchvault:end" in text
    c16 = text.split("benchvault:begin c16")[1].split("benchvault:end c16")[0]
    assert c16.count("\n| ") == 1 + 6 and "| Backend" in c16 and "**178.68**" in c16
    sweep = text.split("benchvault:begin sweep")[1].split("benchvault:end sweep")[0]
    assert "| c=8 " in sweep and "(img/sweep-throughput.png)" in sweep
    assert (tmp_path / "img" / "sweep-throughput.png").exists()


@pytest.mark.parametrize("broken, line, message", [
    ("x\n<!-- benchvault:begin c16 where=max_concurrency=16 -->\nold\n", 2, "has no"),
    ("<!-- benchvault:begin a -->\n<!-- benchvault:begin b -->\n<!-- benchvault:end b -->\n", 1,
     "has no"),
    ("text\n\n<!-- benchvault:end c16 -->\n", 3, "without a begin"),
    ("<!-- benchvault:begin a -->\n<!-- benchvault:end b -->\n", 2, "closes region 'a'"),
    ("<!-- benchvault:begin a where -->\n<!-- benchvault:end a -->\n", 1, "not key=value"),
])
def test_broken_markers_name_the_line_and_leave_the_file(strix_db, tmp_path, broken, line,
                                                         message):
    readme = tmp_path / "README.md"
    readme.write_text("# keep me\n" + broken)
    stat = readme.stat()
    with pytest.raises(ReportError, match=f"README.md:{line + 1}: .*{message}"):
        update_file(readme, strix_db)
    assert readme.read_text() == "# keep me\n" + broken
    assert readme.stat().st_mtime_ns == stat.st_mtime_ns
    result = CliRunner().invoke(app, ["report", "--update", str(readme), "--db", str(strix_db)])
    assert result.exit_code == 2 and f"README.md:{line + 1}" in result.output


def test_a_bad_region_leaves_earlier_regions_unwritten(strix_db, tmp_path):
    readme = tmp_path / "README.md"
    text = ("<!-- benchvault:begin engines -->\n<!-- benchvault:end engines -->\n"
            "<!-- benchvault:begin engines2 report=engines where=nope=1 -->\n"
            "<!-- benchvault:end engines2 -->\n")
    readme.write_text(text)
    with pytest.raises(ReportError, match="unknown column 'nope'"):
        update_file(readme, strix_db)
    assert readme.read_text() == text


def test_crlf_file_keeps_its_line_endings(strix_db, tmp_path):
    readme = tmp_path / "notes.md"
    readme.write_bytes(b"top\r\n<!-- benchvault:begin engines where=max_concurrency=1 -->\r\n"
                       b"<!-- benchvault:end engines -->\r\nbottom\r\n")
    assert update_file(readme, strix_db)
    data = readme.read_bytes()
    assert b"\n" not in data.replace(b"\r\n", b"") and data.startswith(b"top\r\n")
    assert b"| llama-2-7b.Q4_K_M.gguf" in data
    assert not update_file(readme, strix_db)


def _files_with_regions() -> list[Path]:
    """README.md and every docs/*.md that holds a region (markers in code fences are examples)."""
    candidates = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    return [p for p in candidates
            if find_regions(p.read_text(encoding="utf-8").splitlines(), str(p))]


def test_repository_readme_regions_are_current(tmp_path):
    """The regions of README.md and of the docs pages, regenerated from the seed notes and the
    contract captures, equal what is committed, and their charts land in docs/charts."""
    work = tmp_path / "repo"
    work.mkdir()
    os.symlink(ROOT / "fixtures", work / "fixtures")
    files = [p.relative_to(ROOT) for p in _files_with_regions()]
    assert Path("README.md") in files
    # Where each region now lives (a region moved into docs/ must still be checked).
    assert {"docs/experiments.md", "docs/analyses.md"} <= {f.as_posix() for f in files}
    for rel in files:
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, work / rel)
    db = tmp_path / "seeds.db"
    ingest_into(db, SEEDS, ROOT / "fixtures" / "contract")     # what `make demo` ingests
    linked: set[Path] = set()
    for rel in files:
        before = (work / rel).read_bytes()
        assert b"<!-- benchvault:begin" in before, rel
        update_file(work / rel, db)
        after = (work / rel).read_bytes()
        assert after == before, f"{rel}: regions are stale; regenerate them"
        # Every chart a region links to was drawn, next to the page that links it.
        text = after.decode("utf-8")
        for region in find_regions(text.splitlines(), str(rel)):
            body = "\n".join(text.splitlines()[region.begin + 1:region.end])
            for link in re.findall(r"\]\(([^)\s]+\.(?:png|svg))\)", body):
                linked.add(((work / rel).parent / link).resolve().relative_to(work.resolve()))
    charts = Path("docs") / "charts"
    expected = {charts / f"{name}.{ext}" for ext in ("png", "svg") for name in (
        "strix-sweep-throughput", "slo-deepseek-deepseek-v3-h100-sharegpt",
        "pareto-mi300x-llama-3-1-70b-mi300x-sharegpt", "trend-llama-cpp-llama-b-amd-epyc")}
    assert expected <= linked
    drawn = {p.relative_to(work) for p in work.rglob("*")
             if p.is_file() and p.suffix in (".png", ".svg") and "fixtures" not in p.parts}
    assert drawn == linked, "charts drawn outside docs/charts, or drawn and not linked"
    for chart in linked:
        assert chart.parent == charts, chart
        assert (work / chart).stat().st_size > 0
        assert (ROOT / chart).exists(), f"{chart} is linked but not committed"
    # The chart the README shows outside its regions is one of those kept current.
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for link in re.findall(r"\]\((docs/charts/[^)\s]+\.(?:png|svg))\)", readme):
        assert Path(link) in linked, link


def test_a_readme_region_does_not_depend_on_what_else_the_warehouse_holds(tmp_path):
    """The README's regions name the note they show (`where=source=...`): built from every
    fixture (copies of the note's runs in other files among them), they equal the committed
    README, row for row and in the same order."""
    work = tmp_path / "repo"
    work.mkdir()
    os.symlink(ROOT / "fixtures", work / "fixtures")
    shutil.copy(ROOT / "README.md", work / "README.md")
    for chart in re.findall(r"\]\((docs/charts/[^)\s]+)\)", (ROOT / "README.md").read_text()):
        (work / chart).parent.mkdir(parents=True, exist_ok=True)
    db = tmp_path / "fixtures.db"
    ingest_into(db, ROOT / "fixtures")
    before = (work / "README.md").read_bytes()
    update_file(work / "README.md", db)
    assert (work / "README.md").read_bytes() == before
