"""What benchvault prints on the terminal, and how a command ends on bad input.

Text that came from a user's file (warnings, labels, cells, file names) is data: it is never
read as rich markup, never highlighted, its control characters are shown escaped, and it is
cut to a readable length (the whole text stays in the warehouse).  A command ends with one
line and an exit code (benchvault.errors), never a traceback.
"""

from __future__ import annotations

import functools
import os
import sqlite3
from typing import Callable, TypeVar

import typer
from rich.console import Console
from rich.text import Text

from .errors import BenchvaultError, ExitCode

console = Console(stderr=True, highlight=False)
SHOWN_CHARS = 200      # a file's text: a warning's reason, a cell, a label
MESSAGE_CHARS = 2000   # benchvault's own messages (a list of known columns is useful whole)
# C0 and C1 controls and DEL, shown as \x1b etc.: a file must not move the cursor or retitle
# the terminal.  Tabs become a space.
_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0))}
_CONTROLS.update({ord("\t"): " ", ord("\n"): "\\n", ord("\r"): "\\r"})


def shown(text: object, limit: int = SHOWN_CHARS, more: str = "") -> str:
    """``text`` as a terminal may show it: controls escaped, at most ``limit`` characters
    (then an ellipsis and ``more``, e.g. where the whole text is kept)."""
    text = str(text)
    cut = len(text) > limit
    text = text[:limit].translate(_CONTROLS)
    return text + "…" + more if cut else text


def short_path(path: str, width: int) -> str:
    """``path`` in at most ``width`` characters where it can be: the directories nearest the
    file kept, those farther away given as `…`, the file's name always whole."""
    if len(path) <= width:
        return path
    head, sep, name = path.rpartition("/")
    parts = head.split("/") if sep else []
    kept: list[str] = []
    while parts and len("…/" + "/".join([parts[-1], *kept, name])) <= width:
        kept.insert(0, parts.pop())
    return "/".join(["…", *kept, name]) if sep else name


def data(text: object, style: str = "", limit: int = SHOWN_CHARS, more: str = "") -> Text:
    """File text as a rich Text: printed as it is, never parsed as markup."""
    return Text(shown(text, limit, more), style=style)


def say(label: str, style: str, message: object, more: str = "",
        limit: int = SHOWN_CHARS) -> None:
    """``label message`` on stderr, one line; the message is data (see ``data``)."""
    console.print(Text.assemble((label, style), " ", data(message, limit=limit, more=more)),
                  soft_wrap=True)


def note(message: object, limit: int = SHOWN_CHARS) -> None:
    console.print(data(message, limit=limit), soft_wrap=True)


def error(message: object, limit: int = SHOWN_CHARS) -> None:
    say("error", "red", message, limit=limit)


def warning(where: object) -> None:
    say("warning", "yellow", where, more=" (full text in unparsed_blocks)")


F = TypeVar("F", bound=Callable)


def _interrupt_handled() -> None:
    """Tell CPython the Ctrl-C was handled.  When the KeyboardInterrupt was raised inside code
    run from a string (``exec(str)``: a dataclass or namedtuple being made while a module is
    imported), CPython notes it as unhandled and, run as ``python -m``, ends the process by
    SIGINT after it exits instead of with the code given.  Running any string again clears
    that note (CPython 3.8 to 3.13 alike), so Ctrl-C always ends with exit status 130."""
    exec("")  # noqa: S102 - an empty string: nothing runs


def guarded(command: F) -> F:
    """End ``command`` on bad input with one line and its exit code, never a traceback
    (BENCHVAULT_DEBUG=1 lets an unexpected exception through, for a bug report)."""

    @functools.wraps(command)
    def run(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except typer.BadParameter as exc:   # a value the command itself refused
            failure = BenchvaultError(exc.message, ExitCode.USAGE)
        except (typer.Exit, typer.Abort, typer.TyperException):
            raise  # typer's click prints these itself (exit 2 for usage)
        except BenchvaultError as exc:
            failure = exc
        except sqlite3.Error as exc:
            from .dbfile import from_sqlite

            failure = from_sqlite(kwargs.get("db", "the database"), exc)
        except KeyboardInterrupt:
            _interrupt_handled()
            failure = BenchvaultError("interrupted (the file being ingested was rolled back)",
                                      ExitCode.INTERRUPTED)
        except Exception as exc:
            if os.environ.get("BENCHVAULT_DEBUG"):
                raise
            failure = BenchvaultError(f"internal error {type(exc).__name__}: {exc} (a bug: "
                                      "please report it; BENCHVAULT_DEBUG=1 shows the traceback)",
                                      ExitCode.INTERNAL)
        error(failure, limit=MESSAGE_CHARS)
        raise typer.Exit(int(failure.code))

    return run  # type: ignore[return-value]

