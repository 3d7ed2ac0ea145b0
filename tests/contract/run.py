"""`make contract`: run the real tools of tests/contract/matrix.toml, keep their captures under
fixtures/contract/, check them, and regenerate docs/compatibility.md.

    python tests/contract/run.py                    # the whole matrix
    python tests/contract/run.py llama.cpp-0.3.36   # one version (or several)
    python tests/contract/run.py --list             # what the matrix holds
    python tests/contract/run.py --docs             # only regenerate the docs from fixtures

Heavy (venvs of several GB, compiles): not part of `make test`.  Everything is built under
.contract/ (git-ignored); servers bind 127.0.0.1 only.  Progress on the terminal, details of
every command in .contract/logs/.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from rich.console import Console  # noqa: E402
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn  # noqa: E402

import common  # noqa: E402
import llamacpp_runs  # noqa: E402
import peers  # noqa: E402
import vllm_runs  # noqa: E402


def entries() -> list[tuple[str, dict, object]]:
    m = common.matrix()
    out = [(f"llama.cpp-{e['package']}", e, llamacpp_runs.bench)
           for e in m["llama_cpp"]["versions"]]
    out += [(f"vllm-{e['version']}", e, vllm_runs.bench) for e in m["vllm"]["versions"]]
    out += [(f"peers-{e['name']}", e, peers.bench) for e in m.get("peers", [])]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("only", nargs="*", help="matrix names to run (llama.cpp-0.3.36, vllm-0.32.0)")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--docs", action="store_true", help="only regenerate docs from fixtures")
    args = ap.parse_args(argv)
    console = Console()
    todo = entries()
    if args.list:
        for name, entry, _ in todo:
            console.print(f"{name:24} {entry.get('status', 'run'):5} {entry.get('reason', '')}")
        return 0
    unknown = set(args.only) - {name for name, _, _ in todo}
    if unknown:
        console.print(f"[red]not in {common.MATRIX.name}: {', '.join(sorted(unknown))}")
        return 2
    failed = []
    if not args.docs:
        todo = [t for t in todo if (not args.only or t[0] in args.only)
                and t[1].get("status", "run") == "run"]
        columns = (SpinnerColumn(), TextColumn("{task.description:<28}"), BarColumn(),
                   TextColumn("{task.completed}/{task.total}"), TextColumn("{task.fields[step]}"),
                   TimeElapsedColumn())
        with Progress(*columns, console=console) as progress:
            overall = progress.add_task("contract matrix", total=len(todo), step="")
            for name, entry, bench in todo:
                task = progress.add_task(name, total=None, step="start")
                started = time.monotonic()
                try:
                    bench(entry, lambda msg, t=task: progress.update(t, step=msg))
                except Exception as exc:          # one version failing must not stop the rest
                    failed.append(name)
                    progress.update(task, step=f"[red]failed: {exc}")
                else:
                    progress.update(task, total=1, completed=1,
                                    step=f"[green]captured in {time.monotonic() - started:.0f}s")
                progress.advance(overall)
    import compat_doc
    summary = compat_doc.write()
    for line in summary:
        console.print(line)
    if failed:
        console.print(f"[red]failed: {', '.join(failed)} (logs in {common.LOGS})")
    return 1 if failed or any("FAIL" in s for s in summary) else 0


if __name__ == "__main__":
    sys.exit(main())
