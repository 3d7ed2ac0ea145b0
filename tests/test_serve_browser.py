"""End to end in a real browser: `benchvault serve` on the seeds, driven by Chromium.

Debian's `chromium` is driven by Playwright (`.ci/run` installs it; Playwright's own browser
download is not used).  Every request the pages make is checked: anything that is not the
local server is refused and fails the test, so the charts are proven to work offline.
Numbers asserted here were read off the seed notes in fixtures/seeds.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from conftest import SEEDS, ingest_into

CHROMIUM = os.environ.get("BENCHVAULT_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
DEEPSEEK = "deepseek-v3_h100_tp-vs-pp_llamacpp.md"

sync_api = pytest.importorskip("playwright.sync_api")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_for(url: str, proc: subprocess.Popen, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"benchvault serve exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise AssertionError(f"{url} did not answer within {timeout} s")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} missing: .ci/run should have installed chromium")
        pytest.skip(f"{CHROMIUM} not installed (apt-get install chromium)")
    tmp = tmp_path_factory.mktemp("serve")
    db = tmp / "seeds.db"
    ingest_into(db, SEEDS)
    sha256 = hashlib.sha256(db.read_bytes()).hexdigest()
    port = _free_port()
    log = open(tmp / "serve.log", "wb")
    proc = subprocess.Popen([sys.executable, "-m", "benchvault", "serve", "--db", str(db),
                             "--port", str(port)], stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        _wait_for(f"http://127.0.0.1:{port}/-/versions.json", proc)
        yield {"base": f"http://127.0.0.1:{port}", "db": db, "tmp": tmp, "proc": proc,
               "sha256": sha256}
    finally:
        os.killpg(proc.pid, signal.SIGTERM)  # benchvault serve and its datasette child
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()


@pytest.fixture(scope="module")
def browser(server):
    profile = server["tmp"] / "chromium-profile"
    shutil.rmtree(profile, ignore_errors=True)
    with sync_api.sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(profile), executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
            viewport={"width": 1400, "height": 1000})
        try:
            yield context
        finally:
            context.close()


@pytest.fixture
def page(browser, server):
    """A page that may only talk to the local server; anything else is recorded and refused."""
    outside: list[str] = []
    page = browser.new_page()

    def guard(route):
        if route.request.url.startswith(server["base"] + "/") or route.request.url.startswith(
                "data:"):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    page.route("**/*", guard)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    page.close()
    assert not outside, f"pages tried to reach the internet: {outside}"
    assert not errors, f"JavaScript errors: {errors}"


def _cell(row, column: str) -> str:
    return row.locator(f"td.col-{column}").inner_text().replace("\xa0", " ").strip()


def test_serving_runs_table_shows_units_source_and_line(page, server):
    page.goto(server["base"] + "/seeds/serving_runs?_sort=line_start")
    # The source facet names files; choose the DeepSeek notes.
    page.locator(".facet-info[data-column=source_id] a", has_text=DEEPSEEK).click()
    page.wait_for_load_state()
    assert "11 rows" in page.locator("h3").first.inner_text()  # 11 result blocks in that file
    first = page.locator("table.rows-and-columns tbody tr").first
    assert _cell(first, "duration") == "849.46 s"
    assert _cell(first, "output_throughput") == "231.11 tok/s"
    assert _cell(first, "max_concurrency") == "64 requests"
    assert _cell(first, "line_start") == "37"  # the result banner's line in the notes
    assert DEEPSEEK in _cell(first, "source_id")
    header = page.locator("th.col-duration")
    assert header.get_attribute("data-column-description") == "Benchmark duration. (s)"
    page.screenshot(path=str(server["tmp"] / "serving_runs.png"), full_page=False)


def test_max_concurrency_facet_counts(page, server):
    # Five values a facet by default: every one asked for.
    page.goto(server["base"] + "/seeds/serving_runs?_facet_size=max")
    facet = page.locator(".facet-info[data-column=max_concurrency]")
    counts = {}
    for item in facet.locator("li").all():
        match = re.match(r"\s*(\d+)\s+([\d,]+)\s*$", item.inner_text())
        if match:
            counts[int(match.group(1))] = int(match.group(2))
    # DeepSeek: TP and PP sweeps at 64/128/256/512 (two each); Strix Halo: six runs at c=16.
    assert counts[64] == 2 and counts[512] == 2
    assert counts[16] == 6
    facet.locator("a", has_text=re.compile(r"^16$")).click()
    page.wait_for_load_state()
    assert "6 rows where max_concurrency = 16" in page.locator("h3").first.inner_text()
    for facet_column in ("engine", "model", "max_concurrency", "source_id"):
        assert page.locator(f".facet-info[data-column={facet_column}]").count() == 1
    page.screenshot(path=str(server["tmp"] / "facet.png"), full_page=False)


def test_concurrency_sweep_canned_query_with_offline_chart(page, server):
    page.goto(server["base"] + "/seeds/concurrency_sweep?model=DeepSeek-V3")
    rows = page.locator("table.rows-and-columns tbody tr")
    tp16 = [r for r in rows.all() if _cell(r, "section").endswith("TP16")]
    assert [_cell(r, "max_concurrency") for r in tp16] == [
        "64 requests", "128 requests", "256 requests", "512 requests"]
    assert [_cell(r, "output_throughput") for r in tp16] == [
        "281.29 tok/s", "483.22 tok/s", "591.65 tok/s", "604.53 tok/s"]
    assert _cell(tp16[0], "source") == DEEPSEEK
    # The chart preset draws throughput against concurrency with the bundled Vega.
    chart = page.locator("svg.marks, canvas.marks").first
    chart.wait_for(state="visible", timeout=20_000)
    assert "g.x_column=max_concurrency" in page.evaluate("window.location.hash")
    page.screenshot(path=str(server["tmp"] / "concurrency_sweep.png"), full_page=True)


def test_canned_queries_and_views_are_listed(page, server):
    page.goto(server["base"] + "/seeds")
    text = page.locator("body").inner_text()
    for name in ("Concurrency sweep", "Engine comparison at a concurrency",
                 "Speculative decoding summary", "Latest ingest"):
        assert name in text
    assert "latency" in text
    page.goto(server["base"] + "/seeds/engine_comparison?max_concurrency=16")
    rows = page.locator("table.rows-and-columns tbody tr").all()
    best = {(_cell(r, "engine"), _cell(r, "model")): _cell(r, "output_throughput") for r in rows}
    # Strix Halo at c=16: the GPTQ model reached 148.91 tok/s on vLLM; Q4_K_M 178.68 on llama.cpp.
    assert best[("vllm", "TheBloke/Llama-2-7B-Chat-GPTQ")] == "148.91 tok/s"
    assert best[("llama.cpp", "/models/gguf/llama-2-7b.Q4_K_M.gguf")] == "178.68 tok/s"


def test_configurations_with_their_groups(page, server):
    """The configuration view: one row per configuration, n, and its group's title."""
    page.goto(server["base"] + "/seeds/configuration_repeats?group=DeepSeek")
    rows = page.locator("table.rows-and-columns tbody tr").all()
    assert len(rows) == 11                         # 11 DeepSeek-V3 runs, none repeated
    titles = [_cell(r, "title") for r in rows]
    assert "vllm · DeepSeek-V3 · TP16 · c=512" in titles
    tp16 = next(r for r in rows if _cell(r, "title") == "vllm · DeepSeek-V3 · TP16 · c=512")
    assert _cell(tp16, "output_throughput") == "604.53 tok/s"
    assert _cell(tp16, "n") == "1 runs"
    assert _cell(tp16, "group_title") == "deepseek-v3 · H100 · sharegpt"
    chart = page.locator("svg.marks, canvas.marks").first
    chart.wait_for(state="visible", timeout=20_000)
    page.screenshot(path=str(server["tmp"] / "configurations.png"), full_page=True)
    # serving_runs: the group is a facet (one click away), and a run's group shows its title
    page.goto(server["base"] + "/seeds/serving_runs?_facet=group_id")
    facet = page.locator(".facet-info[data-column=group_id]").inner_text()
    assert "llama-2-7b · Strix Halo · sharegpt" in facet


def test_unit_aware_filter(server):
    """Datasette's Pint converts a filter value into the column's unit: 10min = 600 s."""
    url = server["base"] + "/seeds/serving_runs.json?duration__gt=10min&_col=duration&_shape=array"
    with urllib.request.urlopen(url, timeout=10) as response:
        durations = sorted(r["duration"] for r in json.load(response))
    # Runs longer than 600 s in the seeds: DeepSeek 699.36, 849.46, 1612.14, 1826.67, 3536.56;
    # Strix Halo vLLM c=1 1295.4.
    assert durations == [699.36, 849.46, 1295.4, 1612.14, 1826.67, 3536.56]


def test_served_read_only(server):
    with urllib.request.urlopen(server["base"] + "/-/databases.json", timeout=10) as response:
        assert '"is_mutable": false' in response.read().decode()
    try:
        urllib.request.urlopen(server["base"] + "/seeds.json?sql=delete+from+sources", timeout=10)
    except urllib.error.HTTPError as error:
        assert error.code == 400
    assert hashlib.sha256(server["db"].read_bytes()).hexdigest() == server["sha256"]
    assert not Path(str(server["db"]) + "-wal").exists()


@pytest.mark.parametrize("table, metric", [("serving_runs", "output_throughput"),
                                           ("llama_bench_results", "avg_ts")])
def test_a_result_table_opens_on_its_results(browser, server, table, metric):
    """At 1280x800 the first screen of a result table shows what it is for: the row's label
    and its key results lead, where it was read (source, lines, the raw block) comes last.
    BENCHVAULT_SCREENSHOTS=docs/screenshots keeps the screenshots there."""
    page = browser.new_page()
    page.set_viewport_size({"width": 1280, "height": 800})
    try:
        page.goto(server["base"] + f"/seeds/{table}")
        headers = [h.get_attribute("data-column") for h in
                   page.locator("table.rows-and-columns thead th").all()]
        assert metric in headers[:12], headers[:12]
        assert headers.index("label") < headers.index(metric)
        for provenance in ("source_id", "line_start", "raw_text"):
            assert headers.index(provenance) > len(headers) - 6, (provenance, headers[-6:])
        box = page.locator(f"th.col-{metric}").bounding_box()
        assert box is not None and box["x"] + box["width"] <= 1280    # on the first screen
        first = page.locator(f"table.rows-and-columns tbody tr td.col-{metric}").first
        cell = first.bounding_box()
        assert cell is not None and cell["y"] + 20 <= 800, cell      # the first row's result
        out = Path(os.environ.get("BENCHVAULT_SCREENSHOTS", server["tmp"]))
        out.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(out / f"{table}.png"), full_page=False)
    finally:
        page.close()
