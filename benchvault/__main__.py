"""The ``benchvault`` command (and ``python -m benchvault``).

An ingest's first worker is forked here, before the command line loads (parallel.fork_early):
it loads the readers on another core while this process loads typer and walks the paths.
"""

from __future__ import annotations

import sys


def main() -> None:
    if sys.argv[1:2] == ["ingest"]:
        from .parallel import fork_early

        fork_early(sys.argv[2:])
    from .cli import main as run

    run()


if __name__ == "__main__":
    main()
