"""benchvault's command line: thin wrappers over the library (ingest, serve, report, formats)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from . import __version__

app = typer.Typer(
    help="benchvault: turn pasted LLM-inference benchmark logs (vLLM, llama.cpp, SGLang) into "
         "one SQLite warehouse you can browse (Datasette) and report on (Markdown tables).",
    no_args_is_help=True, add_completion=False)
console = Console(stderr=True)
DB_OPTION = typer.Option(Path("benchvault.db"), "--db", help="SQLite warehouse file.")


def parse_tags(tags: list[str]) -> dict[str, str]:
    out = {}
    for tag in tags:
        key, sep, value = tag.partition("=")
        if not sep or not key.strip():
            raise typer.BadParameter(f"--tag wants key=value, got {tag!r}")
        out[key.strip()] = value.strip()
    return out


@app.command()
def ingest(
    paths: List[Path] = typer.Argument(..., help="Files or directories (walked for .md/.txt/.log"
                                                 "/.json/.csv/.sql...)."),
    db: Path = DB_OPTION,
    tag: List[str] = typer.Option([], "--tag", help="key=value stored with every row of these "
                                                    "files (repeatable), e.g. --tag gpu=MI300X."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Parse and report, write nothing."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON on stdout."),
    force: bool = typer.Option(False, "--force", help="Re-read files even when unchanged."),
) -> None:
    """Find every benchmark result in PATHS and store it with its context and provenance.

    Re-ingesting an unchanged file adds nothing; a changed file replaces its rows in one
    transaction. Problems are warnings with file:line (kept in the unparsed_blocks table);
    a file that cannot be read at all makes the exit code 1, the rest is still ingested.
    """
    from .ingest import expand_paths, ingest_paths
    from .schemas.store import connect

    tags = parse_tags(tag)
    files = expand_paths(paths)
    database = connect(":memory:" if dry_run else db)
    results = []
    with Progress(TextColumn("[bold]ingest"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.description}"), TimeElapsedColumn(), console=console,
                  disable=as_json or not console.is_terminal) as progress:
        task = progress.add_task("", total=len(files))

        def advance(result):
            progress.update(task, advance=1, description=Path(result.path).name)

        results = ingest_paths(database, files, tags, on_file=advance, force=force)
    if as_json:
        print(json.dumps([{"path": r.path, "status": r.status, "counts": r.counts,
                           "error": r.error,
                           "warnings": [{"line": w.line, "reason": w.reason} for w in r.warnings]}
                          for r in results], indent=2))
    else:
        _print_summary(results, dry_run)
    if any(r.status == "error" for r in results):
        raise typer.Exit(1)


def _print_summary(results, dry_run: bool) -> None:
    table = Table(title="benchvault ingest" + (" (dry run: nothing written)" if dry_run else ""))
    table.add_column("file")
    table.add_column("status")
    table.add_column("runs", justify="right")
    table.add_column("other rows", justify="right")
    table.add_column("warnings", justify="right")
    for r in results:
        other = sum(v for k, v in r.counts.items() if k not in ("serving_runs", "latency_stats"))
        table.add_row(r.path, r.status, str(r.runs), str(other), str(len(r.warnings)))
    console.print(table)
    for r in results:
        if r.error:
            console.print(f"[red]error[/red] {r.error}")
        for w in r.warnings:
            console.print(f"[yellow]warning[/yellow] {w.where(r.path)}")


@app.command()
def serve(
    db: Path = DB_OPTION,
    port: int = typer.Option(8001, "--port", help="Port to listen on."),
    host: str = typer.Option("127.0.0.1", "--host",
                             help="Address to bind; 127.0.0.1 unless you mean to share it."),
    open_browser: bool = typer.Option(False, "--open", help="Open a browser tab."),
) -> None:
    """Browse the warehouse in Datasette (read-only, with units, facets and canned queries)."""
    from .serve import run_datasette

    if not db.exists():
        console.print(f"[red]error[/red] {db}: no such database yet - run "
                      f"`benchvault ingest FILES --db {db}` first")
        raise typer.Exit(1)
    raise typer.Exit(run_datasette(db, host=host, port=port, open_browser=open_browser))


@app.command()
def formats() -> None:
    """List the formats benchvault reads and what it recognises them by."""
    from .parsers import all_formats

    table = Table(title="formats")
    for column in ("name", "table", "description", "upstream"):
        table.add_column(column)
    for fmt in all_formats():
        table.add_row(fmt.name, fmt.table, fmt.description, ", ".join(fmt.upstream))
    Console().print(table)


@app.command()
def version() -> None:
    """Print benchvault's version."""
    print(__version__)


def main() -> None:  # pragma: no cover
    sys.exit(app())


if __name__ == "__main__":  # pragma: no cover
    main()
