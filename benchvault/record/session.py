"""``benchvault record``: run a command, keep its capture, store it with the machine's facts.

The capture is a plain file under ``out``: the command line as a shell prompt shows it
(`$ vllm bench serve ...`, after `# LABEL` when there is one), the bytes the command printed,
as they arrived, then the facts block (facts.render).  ``benchvault ingest`` reads it as it
reads any note, so a record can be ingested again, moved or pasted; here it is stored:

- a client or an offline benchmark: once it ended, by one ingest of the file (one
  transaction: its runs and its facts together, or nothing);
- a server (`vllm serve`, `python -m sglang.launch_server`, `llama-server`): followed as it is
  written, as ``ingest --watch`` follows a file (ingest/watch.py), so its launch is stored once
  it is up and its stats lines as they are logged; finished when it ends.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shlex
import threading
from dataclasses import dataclass, field
from pathlib import Path

from . import facts as facts_mod
from .run import CannotStart, Outcome, find, run


@dataclass
class Recorded:
    capture: Path
    outcome: Outcome
    facts: facts_mod.Facts
    results: list = field(default_factory=list)     # the ingest's FileResults


def tool_name(argv: list[str]) -> str:
    """The tool's name for the capture's file name: the program and the words after it that
    name a subcommand (`vllm-bench-serve`), the module or script of a Python
    (`sglang.launch_server`, `benchmark_serving`)."""
    words = list(argv)
    first = Path(words.pop(0)).name
    if re.fullmatch(r"python[\d.]*", first):
        while words and words[0].startswith("-") and words[0] != "-m":
            words.pop(0)
        if len(words) >= 2 and words[0] == "-m":
            first, words = words[1], words[2:]
        elif words:
            first, words = Path(words[0]).stem, words[1:]
    parts = [first]
    for word in words[:2]:
        if not re.fullmatch(r"[a-z][a-z0-9_-]*", word):
            break
        parts.append(word)
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", "-".join(parts)).strip("-.")
    return name[:60] or "command"


def capture_path(out: Path, argv: list[str], started: dt.datetime) -> Path:
    stem = f"{started:%Y%m%dT%H%M%SZ}-{tool_name(argv)}"
    path = out / f"{stem}.log"
    n = 2
    while path.exists():
        path = out / f"{stem}-{n}.log"
        n += 1
    return path


def _utc(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def record(argv: list[str], db: Path, out: Path, tags: dict[str, str] | None = None,
           label: str | None = None, use_pty: bool | None = None) -> Recorded:
    """Run ``argv`` and store what it printed (see the module).  CannotStart when it cannot
    be started (nothing is written then)."""
    find(argv)
    started = dt.datetime.now(dt.timezone.utc)
    cwd = os.getcwd()
    gathered: dict[str, facts_mod.Facts] = {}
    # The machine's facts are gathered while the command runs (nvidia-smi takes a moment).
    def gather() -> None:
        try:
            gathered["facts"] = facts_mod.gather(argv, cwd, _utc(started))
        except Exception:       # a probe that failed oddly: the run is kept with fewer facts
            pass

    gathering = threading.Thread(target=gather, daemon=True)
    gathering.start()
    out.mkdir(parents=True, exist_ok=True)
    path = capture_path(out, argv, started)
    server = facts_mod.is_server(argv)
    follower = _Follower(db, path, tags) if server else None
    with open(path, "xb") as capture:
        if label:
            capture.write(f"# {' '.join(label.split())}\n".encode())
        capture.write(f"$ {shlex.join(argv)}\n".encode())
        capture.flush()
        if follower is not None:
            follower.start()
        try:
            outcome = run(argv, capture, use_pty=use_pty)
        except CannotStart:
            capture.close()
            if follower is not None:
                follower.stop()
            _remove(path)
            raise
        except BaseException:
            if follower is not None:
                follower.stop()
            raise
        ended = dt.datetime.now(dt.timezone.utc)
        gathering.join()
        facts = gathered.get("facts") or facts_mod.Facts(command=shlex.join(argv), cwd=cwd,
                                                         started_at=_utc(started))
        facts.ended_at = _utc(ended)
        facts.interrupted = outcome.interrupted
        facts.exit_status = 130 if outcome.interrupted else outcome.status
        facts.engine_version = facts_mod.printed_version(_head(path), facts.engine)
        ending = b"" if _ends_a_line(path) else b"\n"
        capture.write(ending + b"\n" + facts_mod.render(facts).encode("utf-8"))
    if follower is not None:
        results = follower.stop()
    else:
        results = _ingest(db, path, tags)
    return Recorded(path, outcome, facts, results)


HEAD = 4 << 20      # the bytes of a capture searched for the engine's version (its start-up)


def _head(path: Path) -> str:
    with open(path, "rb") as fh:
        return fh.read(HEAD).decode("utf-8", "replace")


def _ends_a_line(path: Path) -> bool:
    with open(path, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        if fh.tell() == 0:
            return True
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) == b"\n"


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


def _ingest(db: Path, path: Path, tags: dict[str, str] | None) -> list:
    from ..ingest.pipeline import ingest_file
    from ..schemas.store import connect

    database = connect(db)
    try:
        return [ingest_file(database, path, tags, force=True)]
    finally:
        database.close()


class _Follower:
    """A server's capture followed while it is written (ingest/watch.py's Watch, in a thread
    with a connection of its own), finished when stopped."""

    def __init__(self, db: Path, path: Path, tags: dict[str, str] | None):
        self.db, self.path, self.tags = db, path, tags
        self.halt = threading.Event()
        self.results: list = []
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._watch, daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _watch(self) -> None:
        from ..ingest.watch import Watch
        from ..schemas.store import connect

        try:
            database = connect(self.db)
            try:
                self.results = Watch(database, [self.path], self.tags, stop=self.halt).run()
            finally:
                database.close()
        except BaseException as exc:       # handed to the main thread by stop()
            self.error = exc

    def stop(self) -> list:
        self.halt.set()
        self.thread.join()
        if self.error is not None:
            raise self.error
        return self.results
