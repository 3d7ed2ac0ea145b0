"""Which server launch a serving run ran against when the two were saved apart, and the run's
time window in its server's log.

People start `vllm serve ... 2>&1 | tee server.log`, then run `vllm bench serve ... | tee
bench-c16.txt` at several loads.  A run whose launch is in its own file is linked when the file
is read (ingest/link.py).  Every other run is matched here against the launches of the other
files, on what both name:

- the port: the client's base URL (`--base-url`, the printed Namespace's base_url, GuideLLM's
  target), else its port (`--port`, the Namespace's; `vllm bench serve`'s 8000 when its command
  names none), against the port the server listened on (server_launches.port);
- the model: the name the client asked for (its `--served-model-name`, else its `--model`)
  against the names the server answered to (its `--served-model-name`s, else its model);
- the time: a launch that started after the run ended, or whose log ended before the run began
  (its file's modification time, or the next launch in that file), is not the one.

A run must name both a port and a model, and exactly one launch must fit.  When several fit,
none is linked and the run keeps a warning naming them (and says so in launch_matched_on).  A
link found brings the launch's engine (when the client did not say) and settings into the run's
configuration, as a launch in the run's own file does.

Every linked run also gets its window in its server's clock: the engine stats logged in it are
the run's (view run_server_stats).  See :func:`_window` for the rule.

Nothing here depends on the order files were ingested in: after each file, every run it could
change is matched again -- its own runs, the runs that match one of its launches, and those
linked to launches it replaced (:func:`runs_to_relink`, asked before they go).  Each look-up is
indexed (launches by port, runs by model).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable
from urllib.parse import urlsplit

from ..reading.clock import LogClock
from ..schemas import store
from ..schemas.models import UnparsedBlock
from .refresh import refresh_configurations

if TYPE_CHECKING:
    import sqlite_utils

CHUNK = 500
# vLLM V1 logs its stats every 10 s (V0 every 5 s): the first line after a run's end reports
# on the interval the run ended in.
STATS_INTERVAL = dt.timedelta(seconds=10)
# How long `vllm bench serve` waits for its server to answer (--ready-check-timeout-sec): a
# server whose log begins later than that after the client's did is not the one it ran against.
READY_WAIT = dt.timedelta(seconds=600)
# The client of `vllm bench serve` / benchmark_serving.py talks to port 8000 unless told.
VLLM_CLIENT = re.compile(r"\bvllm\s+bench\s+serve\b|\bbenchmark_serving\b")
DEFAULT_CLIENT_PORT = 8000
LINK_FORMAT = "link"          # unparsed_blocks.format of the warnings given here
AMBIGUOUS = "launches fit"    # in launch_matched_on of a run several launches fit

RUN_COLUMNS = ("id", "source_id", "line_start", "launch_id", "engine", "model", "port",
               "base_url", "namespace", "command", "extra", "duration", "launch_matched_on",
               "engine_from_launch", "window_start", "window_end", "window_from")


# --- what the two sides name ---------------------------------------------------------------

def url_port(url: Any) -> int | None:
    """The port of a URL a client was given (`http://127.0.0.1:18731/v1` → 18731; 80 or 443
    by its scheme when it names none); None when it is no URL (`http://host:$PORT`)."""
    if not isinstance(url, str) or not url.strip():
        return None
    text = url.strip()
    parts = urlsplit(text if "://" in text else f"http://{text}")
    try:
        return parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    except ValueError:
        return None


def _json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return None
    return value


def client_port(run: dict[str, Any]) -> int | None:
    """The port the run's client sent its requests to.  A base URL wins: clients print their
    default host and port even when it is given."""
    extra = _json(run.get("extra"))
    target = extra.get("target") if isinstance(extra, dict) else None
    for url in (run.get("base_url"), target):
        if isinstance(url, str) and url.strip():
            return url_port(url)
    if isinstance(run.get("port"), int):
        return run["port"]
    if VLLM_CLIENT.search(run.get("command") or ""):
        return DEFAULT_CLIENT_PORT
    return None


def client_model(run: dict[str, Any]) -> str | None:
    """The model name the client put in its requests (its --served-model-name, else --model)."""
    namespace = _json(run.get("namespace"))
    named = namespace.get("served_model_name") if isinstance(namespace, dict) else None
    if isinstance(named, str) and named:
        return named
    return run.get("model") or None


def served_names(launch: dict[str, Any]) -> set[str]:
    """The model names a launch answered to: its --served-model-name(s), else its model."""
    args = _json(launch.get("args"))
    named = args.get("served_model_name") if isinstance(args, dict) else None
    names = {named} if isinstance(named, str) else set(named or ()) \
        if isinstance(named, list) else set()
    names |= {launch["served_model_name"]} if launch.get("served_model_name") else set()
    names = {n for n in names if isinstance(n, str) and n}
    return names or ({launch["model"]} if launch.get("model") else set())


# --- time ------------------------------------------------------------------------------------

def parse_stamp(text: Any) -> tuple[dt.datetime, bool] | None:
    """A log or result time (`2025-01-05 11:32:46`, `11-23 10:07:02`, a result file's
    `20261123-100703`) and whether it has a year (2000 stands in when not: a leap year)."""
    if not isinstance(text, str):
        return None
    for pattern, dated in (("%Y-%m-%d %H:%M:%S", True), ("%Y%m%d-%H%M%S", True)):
        try:
            return dt.datetime.strptime(text.strip()[:19], pattern), dated
        except ValueError:
            pass
    try:
        return dt.datetime.strptime("2000-" + text.strip()[:14], "%Y-%m-%d %H:%M:%S"), False
    except ValueError:
        return None


def _mtime(ns: Any) -> dt.datetime | None:
    return dt.datetime.fromtimestamp(ns / 1e9) if isinstance(ns, int) else None


def _near(text: Any, reference: dt.datetime) -> dt.datetime | None:
    """A time with its year: a stamp printed without one (vLLM's) takes the year that puts it
    nearest ``reference``, a time of the other side (a day's log and its clients, a sweep
    across New Year's Eve)."""
    parsed = parse_stamp(text)
    if parsed is None:
        return None
    moment, dated = parsed
    if dated:
        return moment
    options = []
    for year in (reference.year - 1, reference.year, reference.year + 1):
        try:
            options.append(moment.replace(year=year))
        except ValueError:
            pass
    return min(options, key=lambda m: abs(m - reference), default=None)


def _stamp(moment: dt.datetime, dated: bool) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S" if dated else "%m-%d %H:%M:%S")


def _rounded(moment: dt.datetime) -> dt.datetime:
    return (moment + dt.timedelta(milliseconds=500)).replace(microsecond=0)


# --- the stored rows ---------------------------------------------------------------------------

def _rows(db: sqlite_utils.Database, sql: str, params: Iterable[Any] = ()) -> list[dict]:
    cursor = db.execute(sql, list(params))
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def _chunks(ids: Iterable[int]) -> Iterable[list[int]]:
    ids = sorted(ids)
    for start in range(0, len(ids), CHUNK):
        yield ids[start:start + CHUNK]


@dataclass
class Launch:
    row: dict[str, Any]
    names: set[str]
    sources: set[int]                   # files it was seen in
    start: str | None                   # its first timestamp, as printed
    next_start: str | None              # the next launch's in its file: it had ended by then
    mtime: dt.datetime | None           # its file's time: its log had ended by then
    place: str                          # path:line, for a warning

    def ended_by(self, reference: dt.datetime) -> dt.datetime | None:
        return _near(self.next_start, reference) if self.next_start else self.mtime


class Launches:
    """The launches a round of matching looked at, each read once."""

    def __init__(self, db: sqlite_utils.Database):
        self.db = db
        self.by_port: dict[int, list[int]] = {}
        self.known: dict[int, Launch] = {}

    def on_port(self, port: int) -> list[Launch]:
        ids = self.by_port.get(port)
        if ids is None:
            ids = self.by_port[port] = [r[0] for r in self.db.execute(
                "SELECT id FROM server_launches WHERE port = ? ORDER BY id", [port])]
        return [self.get(i) for i in ids]

    def get(self, launch_id: int) -> Launch:
        found = self.known.get(launch_id)
        if found is None:
            found = self.known[launch_id] = self._read(launch_id)
        return found

    def _read(self, launch_id: int) -> Launch:
        row = _rows(self.db, "SELECT l.id, l.source_id, l.line_start, l.engine, l.model, "
                    "l.served_model_name, l.port, l.args, l.started_at, s.path, s.mtime_ns "
                    "FROM server_launches l LEFT JOIN sources s ON s.id = l.source_id "
                    "WHERE l.id = ?", [launch_id])[0]     # (a launch gone takes its links)
        sources = {r[0] for r in self.db.execute(
            "SELECT DISTINCT source_id FROM sightings WHERE launch_id = ?", [launch_id])}
        following = self.db.execute(
            "SELECT started_at FROM server_launches WHERE source_id = ? AND line_start > ? "
            "ORDER BY line_start LIMIT 1", [row["source_id"], row["line_start"] or 0]).fetchone()
        return Launch(row, served_names(row), sources | {row["source_id"]}, row["started_at"],
                      following[0] if following else None, _mtime(row["mtime_ns"]),
                      f"{row['path']}:{row['line_start']}")


# --- matching ----------------------------------------------------------------------------------

@dataclass
class Run:
    row: dict[str, Any]
    sources: set[int]                   # files it was seen in
    ends_by: dt.datetime | None         # it had ended by then (its result's date, its files')
    clock: tuple[str, int] | None       # (the last time logged before it, in which file)


def _read_runs(db: sqlite_utils.Database, run_ids: list[int]) -> list[Run]:
    marks = ", ".join("?" * len(run_ids))
    rows = _rows(db, f"SELECT {', '.join(f'r.[{c}]' for c in RUN_COLUMNS)} FROM serving_runs r "
                     f"WHERE r.id IN ({marks})", run_ids)
    seen: dict[int, list[tuple]] = {}
    for run_id, source_id, mtime_ns, logged, path, line in db.execute(
            "SELECT g.run_id, g.source_id, s.mtime_ns, g.logged_before, s.path, g.line_start "
            f"FROM sightings g JOIN sources s ON s.id = g.source_id WHERE g.run_id IN ({marks}) "
            "ORDER BY s.path, g.line_start", run_ids):
        seen.setdefault(run_id, []).append((source_id, mtime_ns, logged))
    out = []
    for row in rows:
        sightings = seen.get(row["id"], [])
        times = [m for m in (_mtime(s[1]) for s in sightings) if m is not None]
        extra = _json(row.get("extra"))
        dated = parse_stamp(extra.get("date")) if isinstance(extra, dict) else None
        ends_by = dated[0] + dt.timedelta(seconds=1) if dated and dated[1] else \
            (min(times) if times else None)
        clock = next(((s[2], s[0]) for s in sightings if s[2]), None)
        out.append(Run(row, {s[0] for s in sightings} | {row["source_id"]}, ends_by, clock))
    return out


def _fits(run: Run, port: int, model: str, launch: Launch) -> bool:
    row = run.row
    if launch.row["port"] != port or model not in launch.names:
        return False
    if launch.sources & run.sources:
        return False            # a launch in the run's own file: the file's reading decided
    if launch.start is None or parse_stamp(launch.start) is None:
        return False            # a command pasted alone: it says nothing of when it ran
    if row.get("engine") not in (None, "unknown") and not row.get("engine_from_launch") and \
            row["engine"] != launch.row["engine"]:
        return False
    if run.ends_by is not None and _near(launch.start, run.ends_by) > run.ends_by:
        return False            # started after the run had ended
    reference = run.ends_by or launch.mtime
    began = _near(run.clock[0], reference) if run.clock and reference else None
    if began is None:
        return True
    if _near(launch.start, began) > began + READY_WAIT:
        return False            # started after the run began (and its client gave up)
    ended = launch.ended_by(began)
    return ended is None or ended >= began      # else its log had ended before the run began


def runs_to_relink(db: sqlite_utils.Database, source_id: int) -> set[int]:
    """The runs whose launch may change when ``source_id``'s launches change or go: those
    linked to one of them, and those that name the port and model of one (asked before a file
    is forgotten, and after it is stored)."""
    if not db["server_launches"].exists() or not db["sightings"].exists():
        return set()
    launches = Launches(db)
    out: set[int] = set()
    for (launch_id,) in db.execute("SELECT DISTINCT launch_id FROM sightings WHERE source_id = ? "
                                   "AND launch_id IS NOT NULL", [source_id]).fetchall():
        out |= {r[0] for r in db.execute("SELECT id FROM serving_runs WHERE launch_id = ?",
                                         [launch_id])}
        launch = launches.get(launch_id)
        names = sorted(launch.names | ({launch.row["model"]} if launch.row["model"] else set()))
        if launch.row["port"] is None or not names or parse_stamp(launch.start) is None:
            continue            # no run of another file can fit it (_fits)
        # By model (indexed), the port checked here: a client's port is read from its URL.
        marks = ", ".join("?" * len(names))
        for row in _rows(db, "SELECT id, port, base_url, command, extra, namespace, model "
                             f"FROM serving_runs WHERE model IN ({marks})", names):
            if client_port(row) == launch.row["port"]:
                out.add(row["id"])
    return out


def link_across_files(db: sqlite_utils.Database, source_id: int | None,
                      runs: Iterable[int] = ()) -> list[tuple[int, str]]:
    """Match again every run ``source_id`` (the file just stored; None: only ``runs``) could
    change, and ``runs`` (those runs_to_relink gave before it replaced a file, those rebuilt
    when a file went).  Runs whose launch changed get their configuration again.  Returns the
    warnings about runs of ``source_id`` (line, reason), for the file's own; a warning about a
    run of another file is stored with that file."""
    if not db["serving_runs"].exists() or not db["server_launches"].exists():
        return []
    wanted = set(runs)
    if source_id is not None:
        _note_clocks(db, source_id)
        wanted |= {r[0] for r in db.execute("SELECT DISTINCT run_id FROM sightings WHERE "
                                            "source_id = ? AND run_id IS NOT NULL", [source_id])}
        wanted |= runs_to_relink(db, source_id)
    if not db.execute("SELECT 1 FROM server_launches WHERE port IS NOT NULL AND started_at IS "
                      "NOT NULL LIMIT 1").fetchone():
        # No launch another file's run could fit (a year of notes, no server log): only the
        # runs linked already may change.
        wanted = {r for chunk in _chunks(wanted) for (r,) in db.execute(
            f"SELECT id FROM serving_runs WHERE id IN ({', '.join('?' * len(chunk))}) AND "
            "(launch_id IS NOT NULL OR launch_matched_on IS NOT NULL)", chunk)}
    launches = Launches(db)
    changed: set[int] = set()
    warnings: list[tuple[int, str]] = []
    others: set[int] = set()
    for chunk in _chunks(wanted):
        for run in _read_runs(db, chunk):
            outcome = _match(db, run, launches)
            if _apply(db, run, outcome):
                changed.add(run.row["id"])
            warned = _warn(db, run, outcome, source_id)
            if warned is not None:
                if warned[0] == source_id:
                    warnings.append(warned[1:])
                else:
                    others.add(warned[0])
            if run.row["launch_matched_on"] and AMBIGUOUS in run.row["launch_matched_on"]:
                others |= run.sources - {source_id}
    for other in sorted(others):
        db.execute("UPDATE sources SET warnings = (SELECT COUNT(*) FROM unparsed_blocks WHERE "
                   "source_id = ?) WHERE id = ?", [other, other])
    if changed:
        refresh_configurations(db, changed)
    return warnings


@dataclass
class Outcome:
    launch_id: int | None = None
    matched_on: str | None = None       # launch_matched_on
    engine: str | None = None           # the engine to store, when it changes
    engine_from_launch: bool | None = None
    window: tuple[str | None, str | None, str | None] = (None, None, None)
    warning: str | None = None


def _match(db: sqlite_utils.Database, run: Run, launches: Launches) -> Outcome:
    row = run.row
    engine = row["engine"] if not row["engine_from_launch"] else "unknown"
    if row["launch_id"] is not None and row["launch_matched_on"] is None:
        launch = launches.get(row["launch_id"])            # found in the run's own file
        return _linked(db, run, launch, None, engine)
    port, model = client_port(row), client_model(row)
    if port is None or model is None:
        return Outcome(engine=engine)
    fits = [launch for launch in launches.on_port(port) if _fits(run, port, model, launch)]
    if len(fits) == 1:
        return _linked(db, run, fits[0], f"port {port}, model {model}, time", engine)
    if not fits:
        return Outcome(engine=engine)
    places = ", ".join(sorted(launch.place for launch in fits))
    reason = (f"{len(fits)} server {AMBIGUOUS} this run (port {port}, model {model}): "
              f"{places}; none is linked")
    return Outcome(matched_on=reason, engine=engine, warning=reason)


def _linked(db: sqlite_utils.Database, run: Run, launch: Launch, matched_on: str | None,
            engine: str | None) -> Outcome:
    filled = engine in (None, "unknown") and launch.row["engine"] not in (None, "unknown")
    return Outcome(launch.row["id"], matched_on, launch.row["engine"] if filled else engine,
                   True if filled else None, _window(db, run, launch))


def _apply(db: sqlite_utils.Database, run: Run, outcome: Outcome) -> bool:
    """Store the outcome on the run; True when its launch or engine changed."""
    row = run.row
    new = {"launch_id": outcome.launch_id, "launch_matched_on": outcome.matched_on,
           "engine": outcome.engine, "engine_from_launch": outcome.engine_from_launch,
           "window_start": outcome.window[0], "window_end": outcome.window[1],
           "window_from": outcome.window[2]}
    differ = {k: v for k, v in new.items() if row.get(k) != v}
    if differ:
        store.update(db, "serving_runs", row["id"], differ)
    return bool({"launch_id", "engine"} & differ.keys())


def _warn(db: sqlite_utils.Database, run: Run, outcome: Outcome, current: int | None
          ) -> tuple[int, int, str] | None:
    """A warning of several fitting launches, at the run's own place (its primary sighting):
    the one from before goes first.  (file, line, reason) when there is one."""
    row = run.row
    if row["launch_matched_on"] and AMBIGUOUS in row["launch_matched_on"]:
        db.execute(f"DELETE FROM unparsed_blocks WHERE format = ? AND reason = ? AND "
                   f"source_id IN ({', '.join('?' * len(run.sources))})",
                   [LINK_FORMAT, row["launch_matched_on"], *sorted(run.sources)])
    if outcome.warning is None:
        return None
    line = row["line_start"] or 1
    if row["source_id"] != current:
        store.insert(db, UnparsedBlock(source_id=row["source_id"], format=LINK_FORMAT,
                                       line=line, reason=outcome.warning))
    return row["source_id"], line, outcome.warning


# --- the run's window ----------------------------------------------------------------------------

def _window(db: sqlite_utils.Database, run: Run, launch: Launch
            ) -> tuple[str | None, str | None, str | None]:
    """The run's window in its server's clock, and what it was worked out from.

    Its end is its result file's `date` (`--save-result` writes it as the run ends); else its
    start is the last time its client logged before the result (`vllm bench serve` logs a few
    lines as it starts); in its server's own log, that time is its end instead (the server
    logged while it ran); else its file's modification time is its end (a capture written as the
    run ended).  The other end is `Benchmark duration` away.  The window runs to the first
    stats line logged after the end, when that comes within STATS_INTERVAL: that line's
    interval holds the run's last seconds.
    """
    form = _logged_form(db, launch)
    if form is None:
        return None, None, None         # the launch logged nothing a window would hold
    row = run.row
    duration = dt.timedelta(seconds=float(row["duration"] or 0.0))
    extra = _json(row.get("extra"))
    dated = parse_stamp(extra.get("date")) if isinstance(extra, dict) else None
    reference = run.ends_by or launch.mtime or dt.datetime(2000, 1, 1)
    if dated and dated[1]:
        end, begin, source = dated[0], dated[0] - duration, "result date"
    elif run.clock is not None and _near(run.clock[0], reference) is not None:
        moment = _near(run.clock[0], reference)
        if run.clock[1] in launch.sources or _logs_in(db, launch, run.clock[1]):
            end, begin, source = moment, moment - duration, "server log"
        else:
            begin, end, source = moment, moment + duration, "client clock"
    elif row["source_id"] not in launch.sources:
        times = _rows(db, "SELECT mtime_ns FROM sources WHERE id = ?", [row["source_id"]])
        mtime = _mtime(times[0]["mtime_ns"]) if times else None
        if mtime is None:
            return None, None, None
        end, begin, source = mtime, mtime - duration, "file time"
    else:
        return None, None, None         # in its server's log, with no time before it
    begin, end = _rounded(begin), _rounded(end)
    start_text, end_text = _stamp(begin, form), _stamp(end, form)
    after = db.execute("SELECT MIN(logged_at) FROM engine_stats WHERE launch_id = ? AND "
                       "logged_at >= ?", [launch.row["id"], end_text]).fetchone()[0] \
        if db["engine_stats"].exists() else None
    parsed = parse_stamp(after)
    if parsed is not None and parsed[0] - (end if form else end.replace(year=2000)) \
            <= STATS_INTERVAL:
        end_text = after
    return start_text, end_text, source


def _logs_in(db: sqlite_utils.Database, launch: Launch, source_id: int) -> bool:
    """Did the launch log stats lines in that file (a server log the run was printed into)?"""
    return db["engine_stats"].exists() and db.execute(
        "SELECT 1 FROM engine_stats WHERE launch_id = ? AND source_id = ? LIMIT 1",
        [launch.row["id"], source_id]).fetchone() is not None


def _logged_form(db: sqlite_utils.Database, launch: Launch) -> bool | None:
    """Does the launch's log print years (True) or not (False) in the lines a window holds
    (stats, else spec decoding)?  The window is written the same way, so the view compares
    like with like.  None: it logged no such line."""
    for table in ("engine_stats", "spec_decode_metrics"):
        if not db[table].exists():
            continue
        sample = db.execute(f"SELECT logged_at FROM [{table}] WHERE launch_id = ? AND "
                            "logged_at IS NOT NULL LIMIT 1", [launch.row["id"]]).fetchone()
        parsed = parse_stamp(sample[0]) if sample else None
        if parsed is not None:
            return parsed[1]
    return None


# --- the clock of a file's runs ----------------------------------------------------------------

def _note_clocks(db: sqlite_utils.Database, source_id: int) -> None:
    """Each serving-run sighting of the file gets the last time logged before its block,
    after the previous block (sightings.logged_before): those of runs that may have a window,
    linked to a launch or naming the port and model one may be found by."""
    # (asked in SQL first: a log of 50k blocks naming no server is not read row by row)
    if db.execute("SELECT 1 FROM sightings g JOIN serving_runs r ON r.id = g.run_id WHERE "
                  "g.source_id = ? AND g.kind = 'serving_runs' AND (r.launch_id IS NOT NULL "
                  "OR (r.model IS NOT NULL OR r.namespace IS NOT NULL) AND (r.base_url IS NOT "
                  "NULL OR r.port IS NOT NULL OR r.command IS NOT NULL OR r.extra LIKE "
                  "'%\"target\"%')) LIMIT 1", [source_id]).fetchone() is None:
        return
    rows = _rows(db, "SELECT g.id AS sighting_id, g.line_start AS start, g.line_end AS end_, "
                     "r.launch_id, r.port, r.base_url, r.command, r.extra, r.namespace, r.model "
                     "FROM sightings g JOIN serving_runs r ON r.id = g.run_id "
                     "WHERE g.source_id = ? AND g.kind = 'serving_runs' "
                     "ORDER BY g.line_start, g.id", [source_id])
    if not any(r["launch_id"] is not None or
               (client_port(r) is not None and client_model(r) is not None) for r in rows):
        return
    found = db.execute("SELECT path FROM sources WHERE id = ?", [source_id]).fetchone()
    if found is None:
        return
    clock = LogClock(Path(found[0]), (r["start"] or 0 for r in rows))
    if not clock.lines:
        return
    previous, stamps = 0, []
    for r in rows:
        stamp = clock.last_between(previous, r["start"] or 0)
        if stamp is not None:
            stamps.append((stamp, r["sighting_id"]))
        previous = max(previous, r["end_"] or r["start"] or 0)
    db.conn.executemany("UPDATE sightings SET logged_before = ? WHERE id = ?", stamps)
