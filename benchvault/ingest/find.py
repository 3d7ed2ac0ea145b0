"""Find: which files an ingest reads, and whether each is already stored as it is now.

Nothing heavier than sqlite3 is imported here, so that re-running an ingest over unchanged
files (the usual case) answers before the parsers, pydantic or sqlite-utils load."""

from __future__ import annotations

import functools
import os
import sqlite3
from pathlib import Path
from typing import Any, Iterable

from .. import __version__
from ..dbfile import readonly_uri

TEXT_SUFFIXES = {".md", ".markdown", ".txt", ".log", ".out", ".json", ".jsonl", ".csv", ".sql",
                 ".mdx", ".text", ".err"}


def expand_paths(paths: Iterable[str | Path], skipped: list[Path] | None = None) -> list[Path]:
    """Files as given (whatever their suffix), directories walked for text-like files, sorted,
    without duplicates.  ``skipped`` collects the files a walk left out (other suffixes; not
    hidden ones, nor fixtures' expected outputs), for saying so."""
    resolve_afresh()
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for p in sorted(path.rglob("*")):
                if not p.is_file() or any(part.startswith(".") for part in p.relative_to(path).parts):
                    continue
                if p.suffix.lower() in TEXT_SUFFIXES and ".expected." not in p.name:
                    out.append(p)
                elif skipped is not None and ".expected." not in p.name:
                    skipped.append(p)
        else:
            out.append(path)
    seen: set[str] = set()
    return [p for p in out if not ((real := real_path(p)) in seen or seen.add(real))]


def real_path(path: str | Path) -> str:
    """``str(Path(path).resolve())`` -- what a file is stored under -- with its directory
    resolved once for all the files in it: a file that is no link needs one lstat, not one per
    component of its path (five of them a file made a walk of 500 notes cost 70 ms)."""
    text = os.fspath(path)
    whole = os.path.abspath(text)
    if ".." in Path(text).parts or os.path.islink(whole):
        return os.path.realpath(text)   # lexical and real ".." differ past a link
    head, name = os.path.split(whole)
    return os.path.join(_real_dir(head), name)


@functools.lru_cache(maxsize=256)
def _real_dir(path: str) -> str:
    return os.path.realpath(path)


def resolve_afresh() -> None:
    """Forget the directories real_path resolved: one may have been renamed or relinked since
    (called as a walk or an ingest starts)."""
    _real_dir.cache_clear()


SOURCE_COLUMNS = "id, sha256, size, mtime_ns, parser_version"


def stat_says(stored: dict[str, Any] | None, stat: os.stat_result) -> bool | None:
    """Is the file stored as it is now?  True: same size and modification time, read by this
    benchvault (like make and rsync decide); False: not stored, or changed; None: only the time
    differs (touched, or rewritten with the same length) -- its hash must decide."""
    if not stored or stored["parser_version"] != __version__ or stored["size"] != stat.st_size:
        return False
    return True if stored["mtime_ns"] == stat.st_mtime_ns else None


def stored(conn: sqlite3.Connection, real: str) -> dict[str, Any] | None:
    """How the file at ``real`` (its real_path) is stored (SOURCE_COLUMNS), if it is."""
    row = conn.execute(f"SELECT {SOURCE_COLUMNS} FROM sources WHERE path = ?",
                       [real]).fetchone()
    return dict(zip(_SOURCE_NAMES, row)) if row else None


_SOURCE_NAMES = [name.strip() for name in SOURCE_COLUMNS.split(",")]


def open_to_read(db_path: str | Path) -> sqlite3.Connection | None:
    """A read-only connection to the warehouse, or None when there is none to read (no file
    yet, not a database: whoever writes it says so)."""
    if not Path(db_path).is_file():
        return None
    try:
        return sqlite3.connect(readonly_uri(db_path), uri=True)
    except sqlite3.Error:
        return None


def all_unchanged(db_path: Path, files: list[Path], arguments: Iterable[str | Path] = ()
                  ) -> bool:
    """Every one of ``files`` is stored as it is now, by size and time alone (see stat_says),
    and no file stored from a directory among ``arguments`` has been deleted since."""
    conn = open_to_read(db_path) if files else None
    if conn is None:
        return False
    try:
        for path in files:
            if stat_says(stored(conn, real_path(path)), path.stat()) is not True:
                return False
        for argument in arguments:
            folder = Path(argument).resolve()
            if not folder.is_dir():
                continue
            prefix = str(folder).rstrip(os.sep) + os.sep
            below = conn.execute("SELECT path FROM sources WHERE substr(path, 1, ?) = ?",
                                 [len(prefix), prefix])
            if any(not Path(p).exists() for (p,) in below):
                return False
        return True
    except (sqlite3.Error, OSError):
        return False   # no warehouse yet, an older one, an unreadable file: ingest will say
    finally:
        conn.close()
