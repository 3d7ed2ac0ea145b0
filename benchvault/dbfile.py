"""Is ``--db`` a warehouse this benchvault can use?  Checked with sqlite3 alone, before a
command opens it, so that a markdown file, a database from a newer benchvault or a locked one
is one clear line (benchvault.errors) and is left exactly as it was."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from . import __version__
from .errors import BenchvaultError, ExitCode, bad_database, busy, cannot_write

# PRAGMA user_version of the warehouses this benchvault writes; a higher one is refused (its
# tables may mean something this version does not know), a lower one (0: before versions
# were kept) is brought up to date by store.ensure_schema.
SCHEMA_VERSION = 5
SQLITE_HEADER = b"SQLite format 3\x00"
DEFAULT_BUSY_TIMEOUT_S = 600.0   # concurrent ingests wait for each other's per-file transactions


def busy_timeout() -> float:
    """Seconds to wait for a locked database: BENCHVAULT_BUSY_TIMEOUT, else 600."""
    raw = os.environ.get("BENCHVAULT_BUSY_TIMEOUT", "").strip()
    if not raw:
        return DEFAULT_BUSY_TIMEOUT_S
    try:
        seconds = float(raw)
    except ValueError:
        seconds = -1.0
    if not seconds >= 0:
        raise BenchvaultError(f"BENCHVAULT_BUSY_TIMEOUT={raw!r}: want a number of seconds")
    return seconds


def check_for_reading(path: Path) -> None:
    """``path`` is an existing warehouse of this schema or an older one."""
    if not path.exists():
        raise bad_database(f"{path}: no such database yet; run `benchvault ingest FILES --db "
                           f"{path}` first")
    _check_existing(path)


def check_for_writing(path: Path) -> None:
    """``path`` is a warehouse (or an empty file) ingest may write, or a new file it may
    create."""
    if path.exists() or path.is_symlink():
        _check_existing(path)
        return
    parent = path.absolute().parent
    if not parent.is_dir():
        raise cannot_write(path, f"no directory {parent}")
    if not os.access(parent, os.W_OK):
        raise cannot_write(path, f"{parent} is not writable")


def _check_existing(path: Path) -> None:
    if path.is_dir():
        raise bad_database(f"{path}: a directory, not a database file; give --db a file name")
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(SQLITE_HEADER))
    except OSError as exc:
        raise bad_database(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if not head:
        return      # an empty file is an empty database to SQLite
    if head != SQLITE_HEADER:
        raise bad_database(f"{path}: not a SQLite database; point --db at a benchvault "
                           "warehouse (or a new file name to start one)")
    version = schema_version(path)
    if version > SCHEMA_VERSION:
        raise bad_database(f"{path}: written by a newer benchvault (schema {version}; "
                           f"benchvault {__version__} reads up to {SCHEMA_VERSION}); upgrade "
                           "benchvault (pip install -U benchvault) or use another --db")


def readonly_uri(path: str | Path, immutable: bool | None = None) -> str:
    """SQLite's URI opening ``path`` read-only, the path percent-encoded: a `#`, `?` or `%`
    in a folder's name would otherwise end or change the file name SQLite opens.

    ``immutable``: never looking for a writer.  By default, when no write-ahead log lies
    beside the file: no writer is mid-way and none left pages to read there, and a read-only
    connection otherwise leaves a ``-wal`` and a ``-shm`` file behind that it cannot remove.
    With a log there (an ingest running), the reader takes part in WAL as usual."""
    if immutable is None:
        immutable = not Path(str(path) + "-wal").exists()
    return Path(path).resolve().as_uri() + "?mode=ro" + ("&immutable=1" if immutable else "")


def schema_version(path: Path) -> int:
    """PRAGMA user_version, read without writing anything: from the file header (offset
    60) unless a write-ahead log may hold a newer page 1 (a read-only connection would
    leave a -wal file beside a database that had none, e.g. one Datasette serves)."""
    if not Path(str(path) + "-wal").exists():
        with open(path, "rb") as fh:
            header = fh.read(100)
        if len(header) == 100:
            return int.from_bytes(header[60:64], "big", signed=True)
    timeout = busy_timeout()
    try:
        conn = sqlite3.connect(readonly_uri(path), uri=True, timeout=timeout)
        try:
            return conn.execute("PRAGMA user_version").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise from_sqlite(path, exc) from None


def from_sqlite(path: object, exc: sqlite3.Error) -> BenchvaultError:
    """What an sqlite3 error on the warehouse means for the user."""
    text = str(exc)
    if "locked" in text or "busy" in text:
        return busy(path, busy_timeout())
    if "unable to open" in text or "readonly" in text or "disk I/O" in text:
        return cannot_write(path, text)
    if "full" in text:
        return cannot_write(path, "disk full")
    if isinstance(exc, sqlite3.OperationalError) and "no such" in text:
        return BenchvaultError(f"{path}: {text}; is it a benchvault warehouse?",
                               ExitCode.BAD_DATABASE)
    return bad_database(f"{path}: {text}; point --db at a benchvault warehouse")


def check_out_dir(out: Path) -> None:
    """``out`` is a directory, or one that can be made, where files may be written (nothing
    is created here: a command that then fails leaves no empty directory behind)."""
    if out.exists() and not out.is_dir():
        raise cannot_write(out, "a file, not a directory")
    existing = out.absolute()
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise cannot_write(out, f"{existing} is a file")
    if not os.access(existing, os.W_OK):
        raise cannot_write(out, f"{existing} is not writable")
