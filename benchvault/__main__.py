"""The ``benchvault`` command (and ``python -m benchvault``).

For ``ingest``, two things the command line cannot do itself:

- its first worker is forked here, before the command line loads (parallel.fork_early): it
  loads the readers on another core while this process loads typer and walks the paths;
- the process ends without the interpreter's teardown, which frees every object of the
  readers and the warehouse one by one (~30 ms after 500 notes) for memory the system takes
  back at once.  The warehouse is closed by then and the output flushed here.
"""

from __future__ import annotations

import os
import sys


def main() -> None:
    if sys.argv[1:2] != ["ingest"]:
        from .cli import main as run

        run()
        return
    from .parallel import dismiss_early, fork_early

    fork_early(sys.argv[2:])
    from .cli import main as run

    try:
        run()
    except SystemExit as done:
        dismiss_early()
        os._exit(_flushed(done.code))


def _flushed(code: object) -> int:
    """Flush the output and give the exit status ``sys.exit(code)`` gives."""
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):       # a closed pipe (`| head`): nothing to save
            pass
    return code or 0


if __name__ == "__main__":
    main()
