"""benchvault's exit codes and the one kind of error a command ends with on bad input.

Every command exits with one of these codes (listed in ``benchvault --help`` and the README).
A problem the user can fix is a ``BenchvaultError``: one line naming the thing and what to do,
printed without a traceback; the command writes nothing before it is raised.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    FINDINGS = 1        # some files could not be read (the rest is stored); a regression flagged
    USAGE = 2           # a bad option or argument: unknown column in --where, a bad template...
    BAD_DATABASE = 3    # --db missing, not SQLite, or written by a newer benchvault
    BUSY = 4            # the database stayed locked (another ingest?) past the timeout
    CANNOT_WRITE = 5    # cannot write where asked (the database's directory, --out)
    INTERRUPTED = 130   # Ctrl-C: the file being ingested is rolled back
    INTERNAL = 70       # a bug in benchvault (BENCHVAULT_DEBUG=1 shows the traceback)


EXIT_CODES_HELP = ("Exit codes: 0 ok; 1 findings (a file could not be read, a regression "
                   "flagged); 2 usage (bad option, --where column, template); 3 bad database "
                   "(missing, not SQLite, from a newer benchvault); 4 database locked past "
                   "BENCHVAULT_BUSY_TIMEOUT; 5 cannot write there; 130 interrupted; 70 internal "
                   "error.")


class BenchvaultError(Exception):
    """What went wrong and what to do about it, in one line, with its exit code."""

    def __init__(self, message: str, code: ExitCode = ExitCode.USAGE):
        super().__init__(message)
        self.code = code


def bad_database(message: str) -> BenchvaultError:
    return BenchvaultError(message, ExitCode.BAD_DATABASE)


def busy(path: object, seconds: float) -> BenchvaultError:
    return BenchvaultError(
        f"{path}: locked by another process (an ingest?) for more than {seconds:g} s; wait for "
        "it to finish, or set BENCHVAULT_BUSY_TIMEOUT=SECONDS to wait longer", ExitCode.BUSY)


def cannot_write(path: object, why: str) -> BenchvaultError:
    return BenchvaultError(f"{path}: cannot write here ({why}); choose a writable place",
                           ExitCode.CANNOT_WRITE)
