"""Run a command as the user would, its output shown live and kept as it arrives.

On a terminal the command writes to a pseudo-terminal (so it sees a terminal: progress bars,
colours), whose bytes are copied to this terminal and to the capture as they come; otherwise
its stdout and stderr are pipes, copied to this process's own.  Nothing waits for the end.

The command runs in a session of its own: Ctrl-C (SIGINT) and SIGTERM reach this process,
which hands them on; a second Ctrl-C kills it.
"""

from __future__ import annotations

import errno
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import BinaryIO, Callable

DRAIN = 0.5       # seconds the output is still read after the command ended


class CannotStart(Exception):
    """The command could not be started (not found, not executable)."""


@dataclass
class Outcome:
    status: int             # the command's exit status (128 + N when signal N ended it)
    interrupted: bool       # Ctrl-C (or SIGTERM) was handed to it


def find(argv: list[str]) -> str:
    """The program ``argv[0]`` names, or CannotStart with the one-line reason."""
    name = argv[0]
    if os.sep in name:
        if not os.path.exists(name):
            raise CannotStart(f"{name}: no such file")
        if os.path.isdir(name) or not os.access(name, os.X_OK):
            raise CannotStart(f"{name}: not an executable file")
        return name
    found = shutil.which(name)
    if found is None:
        raise CannotStart(f"{name}: command not found")
    return found


def _window(source: int, target: int) -> None:
    """Copy the terminal's size to the pseudo-terminal (a progress bar sized to it)."""
    try:
        import fcntl
        import termios

        size = fcntl.ioctl(source, termios.TIOCGWINSZ, b"\0" * 8)
        fcntl.ioctl(target, termios.TIOCSWINSZ, size)
    except (OSError, ImportError):
        pass


def run(argv: list[str], capture: BinaryIO, use_pty: bool | None = None,
        on_output: Callable[[], None] | None = None) -> Outcome:
    """Run ``argv``; every byte it prints goes to this terminal (or stdout/stderr) and to
    ``capture`` (flushed as it comes).  ``use_pty``: None to use one when stdout is a
    terminal.  ``on_output``: called after each write to the capture."""
    if use_pty is None:
        use_pty = os.isatty(sys.stdout.fileno())
    find(argv)
    sys.stdout.flush()
    sys.stderr.flush()
    if use_pty:
        import pty

        master, slave = pty.openpty()
        _window(sys.stdout.fileno(), slave)
        try:
            child = subprocess.Popen(argv, stdout=slave, stderr=slave, start_new_session=True)
        except OSError as exc:
            os.close(master)
            raise CannotStart(f"{argv[0]}: {exc.strerror or exc}") from None
        finally:
            os.close(slave)
        sources = {master: sys.stdout.fileno()}
    else:
        try:
            child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     start_new_session=True)
        except OSError as exc:
            raise CannotStart(f"{argv[0]}: {exc.strerror or exc}") from None
        assert child.stdout is not None and child.stderr is not None
        sources = {child.stdout.fileno(): sys.stdout.fileno(),
                   child.stderr.fileno(): sys.stderr.fileno()}
    stops = {"count": 0}

    def hand_on(signum, frame) -> None:
        stops["count"] += 1
        which = signal.SIGKILL if stops["count"] > 1 and signum == signal.SIGINT else signum
        try:
            os.killpg(child.pid, which)
        except OSError:
            pass

    def resized(signum, frame) -> None:
        if use_pty:
            _window(sys.stdout.fileno(), master)

    handlers = {signal.SIGINT: hand_on, signal.SIGTERM: hand_on, signal.SIGWINCH: resized}
    previous = {sig: signal.signal(sig, handler) for sig, handler in handlers.items()}
    try:
        _copy(child, sources, capture, on_output)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for fd in sources:
            try:
                os.close(fd)
            except OSError:
                pass
    status = child.returncode
    if status < 0:
        status = 128 - status
    return Outcome(status=status, interrupted=stops["count"] > 0)


def _copy(child: subprocess.Popen, sources: dict[int, int], capture: BinaryIO,
          on_output: Callable[[], None] | None) -> None:
    """Copy each source to its target and to the capture until the command has ended and its
    output is read (or DRAIN seconds after it ended, when a process it left holds it open)."""
    open_fds = set(sources)
    ended_at = None
    while open_fds:
        if ended_at is None and child.poll() is not None:
            ended_at = time.monotonic()
        if ended_at is not None and time.monotonic() - ended_at > DRAIN:
            break
        try:
            ready, _, _ = select.select(sorted(open_fds), [], [], 0.1)
        except InterruptedError:
            continue
        for fd in ready:
            try:
                data = os.read(fd, 65536)
            except OSError as exc:
                if exc.errno == errno.EINTR:
                    continue
                data = b""      # EIO: the pseudo-terminal's last writer closed it
            if not data:
                open_fds.discard(fd)
                continue
            # The capture first: what the terminal shows is in it already.
            capture.write(data)
            capture.flush()
            _write_all(sources[fd], data)
            if on_output is not None:
                on_output()
    while True:
        try:
            child.wait()
            break
        except InterruptedError:
            continue


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            written = os.write(fd, view)
        except InterruptedError:
            continue
        except OSError:
            return          # the terminal went away: the capture still gets it all
        view = view[written:]
