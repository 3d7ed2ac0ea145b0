"""benchvault's command line: thin wrappers over the library (ingest, serve, report, formats)."""

from __future__ import annotations

import functools
import inspect
import json
import sys
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console

from . import __version__
from .console import console, data, error, guarded, note, short_path, shown, warning
from .dbfile import check_for_reading, check_for_writing, check_out_dir
from .errors import EXIT_CODES_HELP, BenchvaultError, ExitCode

app = typer.Typer(
    help="benchvault: turn pasted LLM-inference benchmark logs (vLLM, llama.cpp, SGLang) into "
         "one SQLite warehouse you can browse (Datasette) and report on (Markdown tables).",
    epilog=EXIT_CODES_HELP, no_args_is_help=True, add_completion=False)
command = functools.partial(app.command, epilog=EXIT_CODES_HELP)
DB_OPTION = typer.Option(Path("benchvault.db"), "--db", help="SQLite warehouse file.")


def parse_tags(tags: list[str]) -> dict[str, str]:
    out = {}
    for tag in tags:
        key, sep, value = tag.partition("=")
        if not sep or not key.strip():
            raise typer.BadParameter(f"--tag wants key=value, got {tag!r}")
        out[key.strip()] = value.strip()
    return out


@command()
@guarded
def ingest(
    paths: List[Path] = typer.Argument(..., help="Files or directories (walked for .md/.txt/.log"
                                                 "/.json/.csv/.sql...)."),
    db: Path = DB_OPTION,
    tag: List[str] = typer.Option([], "--tag", help="key=value stored with every row of these "
                                                    "files (repeatable), e.g. --tag gpu=MI300X."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Parse and report, write nothing."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON on stdout."),
    jobs: int = typer.Option(0, "--jobs", "-j", min=0,
                             help="Processes that read files, this one (which also stores "
                                  "them) included: small files are handed out in chunks, a file "
                                  "of 2 MB or more is read by a worker of its own (0: one per "
                                  "core, up to 4; 1: this process alone)."),
    force: bool = typer.Option(False, "--force", help="Re-read files even when unchanged (a file "
                                                      "is unchanged when its size and "
                                                      "modification time, or else its SHA-256, "
                                                      "are as when it was read)."),
    watch: bool = typer.Option(False, "--watch", help="Then keep running: new files, and the "
                               "lines appended to growing ones, are stored as they are written "
                               "(a growing log is read on from where it stopped, never again "
                               "from its start; a block still being written waits for its "
                               "end), each new run shown as one line. Ctrl-C stops it, every "
                               "file finished as an ingest of it as it is then would store it. "
                               "Reads in this process (no -j)."),
) -> None:
    """Find every benchmark result in PATHS and store it with its context and provenance.

    Re-ingesting an unchanged file adds nothing and reads nothing (its size and modification
    time say so, as for make); a changed file replaces its rows in one transaction. Problems
    are warnings with file:line (kept in the unparsed_blocks table); a file that cannot be read
    at all makes the exit code 1, the rest is still ingested. With --watch, what a sweep
    writes lands as it is written (`benchvault serve` shows it on a page refresh).
    """
    from .ingest.find import TEXT_SUFFIXES, all_unchanged, expand_paths, real_path
    from .ingest.outcome import FileResult

    tags = parse_tags(tag)
    if watch and dry_run:
        raise typer.BadParameter("--watch stores as it goes: it cannot be a --dry-run")
    if not dry_run:
        check_for_writing(db)
    if watch:
        _watch(db, paths, tags, force, as_json)
        return
    skipped: list[Path] = []
    files = expand_paths(paths, skipped)
    if skipped:
        shown_names = ", ".join(str(p) for p in skipped[:5]) + (", ..." if len(skipped) > 5 else "")
        note(f"skipped {len(skipped)} file(s) in the directories walked: {shown_names} "
             f"(a walk reads {' '.join(sorted(TEXT_SUFFIXES))}; name a file to read it)",
             limit=1000)
    if not (dry_run or force) and all_unchanged(db, files, paths):
        # The usual re-run: answered from sizes and times, before the parsers load.
        _report_ingest([FileResult(str(f), status="unchanged") for f in files], as_json, dry_run)
        return
    from .ingest.workers import default_jobs

    # The workers start first: they load the readers while this process loads the
    # warehouse's libraries.
    readings = _start_reading(db, files, tags, force, jobs or default_jobs(), dry_run)
    database = None
    try:
        from .ingest.pipeline import forget_missing
        from .schemas.store import connect

        database = connect(":memory:" if dry_run else db)
        # Stored files that were deleted since: their sightings go, other files' runs stay.
        results = [] if dry_run else forget_missing(database, paths)
        removed = {r.path for r in results}
        if removed:
            files = [f for f in files if real_path(f) not in removed]
        results += _ingest_with_progress(database, files, tags, force, quiet=as_json,
                                         jobs=jobs or default_jobs(), readings=readings)
    finally:
        if readings is not None:
            readings.close()
        if database is not None:
            database.close()
    _report_ingest(results, as_json, dry_run)


def _watch(db: Path, paths: list[Path], tags, force: bool, as_json: bool) -> None:
    """ingest --watch: the library's Watch until Ctrl-C (or SIGTERM), each run one line."""
    import signal
    import threading

    from .ingest.watch import Watch
    from .schemas.store import connect

    stop = threading.Event()

    def stopping(signum, frame) -> None:
        stop.set()
        # A second Ctrl-C interrupts at once (what is not committed is rolled back).
        signal.signal(signal.SIGINT, signal.default_int_handler)

    previous = {sig: signal.signal(sig, stopping) for sig in (signal.SIGINT, signal.SIGTERM)}
    database = connect(db)
    try:
        watcher = Watch(database, paths, tags, stop=stop, show=_watch_show(paths, as_json),
                        force=force)
        results = watcher.run()
    finally:
        database.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if results or as_json:
        _report_ingest(results, as_json, False, title="benchvault ingest --watch",
                       warnings=False)
    if watcher.unfinished:
        note(f"stopped while reading {', '.join(watcher.unfinished)}: stored as far as it was "
             "read; the next ingest reads it again", limit=1000)
        raise typer.Exit(ExitCode.INTERRUPTED)


def _watch_show(paths: list[Path], as_json: bool):
    """What ingest --watch prints: the first pass's summary, then a line per run and per
    warning as they land (on stderr, like every note)."""
    from rich.text import Text

    from .ingest.watch import Show

    class Shown(Show):
        started = False         # the first pass is summed up in a table instead

        def landed(self, path, row, known):
            if not self.started:
                return
            console.print(Text.assemble(("run", "green"), " ",
                                        data(f"{Path(path).name}:{row.line_start}"), "  ",
                                        data(row.label or row.section or "-", limit=40),
                                        f"  {_load(row)}  output ",
                                        _number(row.output_throughput, " tok/s"),
                                        "  mean TTFT ", _number(row.mean_ttft_ms, " ms"),
                                        ("  (seen before)" if known else "", "dim")),
                          soft_wrap=True)

        def warned(self, path, found):
            if self.started:
                warning(found.where(path))

        def read_anew(self, path, why):
            note(f"{path}: {why}")

        def caught_up(self, results):
            self.started = True
            if results and not as_json:
                _print_summary(results, False)
            note(f"watching {', '.join(str(p) for p in paths)} (Ctrl-C stops)", limit=1000)

    return Shown()


def _load(row) -> str:
    if row.max_concurrency is not None:
        return f"c={row.max_concurrency}"
    if row.request_rate is not None:
        return f"rate={row.request_rate:g}"
    return "c=?"


def _number(value, unit: str) -> str:
    return "?" if value is None else f"{value:.2f}{unit}"


def _start_reading(db: Path, files: list[Path], tags, force: bool, jobs: int, dry_run: bool):
    from .ingest.find import open_to_read
    from .ingest.workers import start_reading

    stored = None if dry_run else open_to_read(db)
    try:
        return start_reading(stored, files, tags, force, jobs)
    finally:
        if stored is not None:
            stored.close()


def _ingest_with_progress(database, files: list[Path], tags, force: bool, quiet: bool,
                          jobs: int, readings=None):
    """Progress by bytes (MB done, MB/s, ETA: one big log moves the bar) and by files; shown
    only on a terminal."""
    from .ingest.pipeline import ingest_paths

    if quiet or not console.is_terminal:        # (rich's progress not even loaded)
        return ingest_paths(database, files, tags, force=force, jobs=jobs, readings=readings)
    from rich.progress import (BarColumn, DownloadColumn, Progress, TextColumn,
                               TimeRemainingColumn, TransferSpeedColumn)

    sizes = [_size(f) for f in files]
    done = {"files": 0, "bytes": 0}
    with Progress(TextColumn("[bold]ingest"), BarColumn(), DownloadColumn(),
                  TransferSpeedColumn(), TimeRemainingColumn(),
                  TextColumn("{task.fields[files]}  {task.description}", markup=False),
                  console=console) as progress:
        task = progress.add_task("", total=sum(sizes) or 1, files=f"0/{len(files)} files")

        def read(n: int) -> None:
            progress.update(task, advance=n)

        def advance(result) -> None:
            # An unchanged file reports no bytes: its size moves the bar.
            done["bytes"] += sizes[done["files"]]
            done["files"] += 1
            progress.update(task, completed=done["bytes"],
                            files=f"{done['files']}/{len(files)} files",
                            description=shown(Path(result.path).name, 60))

        return ingest_paths(database, files, tags, on_file=advance, force=force, on_bytes=read,
                            jobs=jobs, readings=readings)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _report_ingest(results, as_json: bool, dry_run: bool, title: str = "benchvault ingest",
                   warnings: bool = True) -> None:
    """The summary (a table, or JSON on stdout); exit 1 when a file could not be read.
    ``warnings``: print each file's warnings after it (a watch printed them as they came)."""
    if as_json:
        print(json.dumps([{"path": r.path, "status": r.status, "counts": r.counts,
                           "seen_before": r.known, "error": r.error,
                           "warnings": [{"line": w.line, "reason": w.reason} for w in r.warnings]}
                          for r in results], indent=2))
    else:
        _print_summary(results, dry_run, title, warnings)
    if any(r.status == "error" for r in results):
        raise typer.Exit(ExitCode.FINDINGS)


def _print_summary(results, dry_run: bool, title: str = "benchvault ingest",
                   warnings: bool = True) -> None:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    title += " (dry run: nothing written)" if dry_run else ""
    table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False,
                  caption="rows: other rows stored; known: rows seen before, in another file "
                          "or earlier in this one")
    # The file's name is what the reader needs whole: the other columns are sized to their
    # contents and the path's directories give way first (console.short_path); a name longer
    # than the room left folds onto a second line rather than being cut.
    rows = [(r, sum(v for k, v in r.counts.items() if k not in ("serving_runs", "latency_stats")))
            for r in results]
    columns = [("status", [r.status for r, _ in rows]), ("runs", [str(r.runs) for r, _ in rows]),
               ("rows", [str(o) for _, o in rows]), ("known", [str(r.known) for r, _ in rows]),
               ("warnings", [str(len(r.warnings)) for r, _ in rows])]
    widths = [max([len(h), *map(len, v)]) for h, v in columns]
    room = console.width - sum(w + 2 for w in widths) - 7
    if room < 12 or any(len(Path(r.path).name) + 2 > room for r, _ in rows):
        # Too narrow for the names: a line per file, its path last and whole.
        console.print(Text(title, style="bold"))
        console.print(" ".join(h.ljust(w) if h == "status" else h.rjust(w)
                               for (h, _), w in zip(columns, widths)) + "  file")
        for at, (r, _) in enumerate(rows):
            cells = [values[at] for _, values in columns]
            console.print(Text.assemble(" ".join(c.ljust(w) if i == 0 else c.rjust(w)
                                                 for i, (c, w) in enumerate(zip(cells, widths))),
                                        "  ", data(r.path)), soft_wrap=True)
        console.print(table.caption)
    else:
        table.add_column("file", overflow="fold")
        for name, _ in columns:
            table.add_column(name, justify="left" if name == "status" else "right",
                             no_wrap=True)
        for r, other in rows:
            table.add_row(data(short_path(r.path, room)), r.status, str(r.runs), str(other),
                          str(r.known), str(len(r.warnings)))
        console.print(table)
    for r in results:
        if r.error:
            error(r.error)
        for w in r.warnings if warnings else ():
            warning(w.where(r.path))


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
             epilog="Exit status: COMMAND's; 130 when Ctrl-C stopped it; 127 when it cannot "
                    "be started; benchvault's own codes (3 bad database, 5 cannot write) "
                    "before it starts.")
@guarded
def record(
    command_line: List[str] = typer.Argument(..., metavar="-- COMMAND [ARGS]...",
                                             help="The command to run, after `--`."),
    db: Path = DB_OPTION,
    out: Path = typer.Option(Path("benchvault-records"), "--out",
                             help="Directory the capture is written to."),
    tag: List[str] = typer.Option([], "--tag", help="key=value stored with every row of the "
                                                    "capture (repeatable)."),
    label: Optional[str] = typer.Option(None, "--label", help="Label of the runs (written "
                                        "above the command, as a note's `# label`)."),
) -> None:
    """Run COMMAND, show its output live, keep it and store its runs with the machine's facts.

    The output reaches the terminal unchanged (a pseudo-terminal on a terminal, pipes
    otherwise) and is written as it arrives to OUT/<UTC start>-<tool>.log, a plain capture
    `benchvault ingest` reads like any other. The facts of the machine and the run (host, OS,
    CPU, GPUs, driver, CUDA/ROCm, engine and package versions, git commit, the VLLM_/SGLANG_/
    CUDA_/NCCL_/HF_ variables without secrets) are appended to it and stored in the
    environments table; the runs take their hardware from them. A server (`vllm serve`,
    `python -m sglang.launch_server`, `llama-server`) is stored as it runs, as `ingest --watch`
    stores a growing log; Ctrl-C goes to COMMAND, and what was printed is kept and stored.
    """
    from .record.run import CannotStart
    from .record.session import record as run_record

    check_for_writing(db)
    check_out_dir(out)
    try:
        recorded = run_record(list(command_line), db, out, parse_tags(tag), label)
    except CannotStart as exc:
        error(f"benchvault record: {exc}")
        raise typer.Exit(127)
    stored = sum(r.runs for r in recorded.results)
    failed = [r.error for r in recorded.results if r.error]
    for reason in failed:
        error(reason)
    note(f"recorded {recorded.capture}: {stored} run(s) stored in {db}"
         + (" (interrupted: what was printed is kept)" if recorded.outcome.interrupted else ""),
         limit=1000)
    raise typer.Exit(recorded.facts.exit_status or 0)


@command()
@guarded
def serve(
    db: Path = DB_OPTION,
    port: int = typer.Option(8001, "--port", help="Port to listen on."),
    host: str = typer.Option("127.0.0.1", "--host",
                             help="Address to bind; 127.0.0.1 unless you mean to share it."),
    open_browser: bool = typer.Option(False, "--open", help="Open a browser tab."),
    live: Optional[bool] = typer.Option(None, "--live/--immutable", help="--live: serve the "
                                        "warehouse as it changes (read-only, not immutable: "
                                        "what a running `ingest --watch` stores shows on a page "
                                        "refresh). --immutable: serve it as it is now (facet "
                                        "counts kept between pages). Default: live while a "
                                        "write-ahead log lies beside it (a writer has it "
                                        "open), else immutable."),
) -> None:
    """Browse the warehouse in Datasette (read-only, with units, facets and canned queries)."""
    from .serve import run_datasette

    check_for_reading(db)
    if live is None:
        wal = Path(f"{db}-wal")
        live = wal.exists() and wal.stat().st_size > 0
    raise typer.Exit(run_datasette(db, host=host, port=port, open_browser=open_browser,
                                   live=live))


def _pairs(values: list[str], option: str) -> dict[str, str]:
    out = {}
    for value in values:
        key, sep, text = value.partition("=")
        if not sep:
            raise typer.BadParameter(f"{option} wants KEY=VALUE, got {value!r}")
        out[key.strip()] = text
    return out


def _split(values: list[str]) -> list[str]:
    return [x.strip() for v in values for x in v.split(",") if x.strip()]


@command()
@guarded
def report(
    kind: str = typer.Argument("all", help="sweep, engines, llama-bench, llama-bench-compare, "
                                            "spec-decode, capacity, offline (by batch size), or "
                                            "all; the analyses slo, pareto, trend."),
    db: Path = DB_OPTION,
    where: List[str] = typer.Option([], "--where", help="Filter, e.g. max_concurrency=16, "
                                    "engine=llama.cpp, model~Q4 (substring), duration<100, "
                                    "tag.gpu=MI300X. Repeating col= or col~ lists alternatives."),
    sql: Optional[str] = typer.Option(None, "--sql", help="Raw SQL for the rows (read-only)."),
    columns: List[str] = typer.Option([], "--columns", help="Columns to show, comma-separated."),
    sort: List[str] = typer.Option([], "--sort", help="Sort columns, comma-separated; -col for "
                                                      "descending. Default: order in the notes."),
    header: List[str] = typer.Option([], "--header", help="col=Header text (repeatable)."),
    fmt: List[str] = typer.Option([], "--fmt", help="col=template, e.g. max_concurrency=c={}."),
    name: List[str] = typer.Option([], "--name", help="MODEL=Shown name (repeatable)."),
    name_from: str = typer.Option("model", "--name-from", help="Name rows by model (short name "
                                  "of a path), label, section or source."),
    models: Optional[Path] = typer.Option(None, "--models", help="JSON/TOML {model: {name, size,"
                                          " ...}}: display names and extra columns."),
    title: Optional[str] = typer.Option(None, "--title", help="Report title."),
    template: Optional[Path] = typer.Option(None, "--template", help="Your own jinja2 template."),
    out: Optional[Path] = typer.Option(None, "--out", help="Write report.md and charts (PNG + "
                                       "SVG) into this directory instead of printing."),
    charts: Optional[str] = typer.Option(None, "--charts", help="Charts to draw with --out "
                                         "(throughput,ttft,llamabench; 'none' for none)."),
    replicas: bool = typer.Option(True, "--replicas/--no-replicas", help="Scale results of N "
                                  "replicas (tag replicas=N, label 'tp2 x 4')."),
    update: List[Path] = typer.Option([], "--update", help="Regenerate the benchvault:begin/end "
                                      "regions of this Markdown file in place (repeatable)."),
    table_only: bool = typer.Option(False, "--table-only", help="Print just the table (what a "
                                    "README region holds)."),
    repeats: str = typer.Option("mean", "--repeats", help="Runs of one configuration (repeats):"
                                " mean (mean ± sample std, n shown), best, last, or all."),
    slo: List[str] = typer.Option([], "--slo", help="report slo: an objective, METRIC<=VALUE "
                                  "(or <, >=, >), e.g. p99_ttft_ms<=500 (repeatable)."),
    metric_: Optional[str] = typer.Option(None, "--metric", help="report trend: the metric "
                                          "followed (default avg_ts over builds, else "
                                          "output_throughput)."),
    over: str = typer.Option("build", "--over", help="report trend: build (llama-bench), "
                             "version (the launch's engine version) or date."),
    threshold: float = typer.Option(5.0, "--threshold", help="report trend: flag a change "
                                    "worse than this percent."),
    fail_on_regression: bool = typer.Option(False, "--fail-on-regression", help="report "
                                            "trend: exit 1 when a point is flagged."),
    order: List[str] = typer.Option([], "--order", help="report trend: the axis in this order "
                                    "(builds, versions or dates, comma-separated; a build by "
                                    "its commit's first characters); default: build number "
                                    "then first test time, versions and dates sorted."),
    group: Optional[bool] = typer.Option(None, "--group/--no-group", help="One table (and "
                                         "chart) per comparable group: same model family, "
                                         "workload and hardware, leading with the settings "
                                         "that vary in it. Default: on, off when --where or "
                                         "--sql chose the rows."),
) -> None:
    """Markdown tables (best value per column in bold) and charts from the warehouse."""
    from jinja2 import TemplateError

    from .reports import ReportError
    from .reports.render import ReportOptions, build
    from .reports.update import update_file

    check_for_reading(db)
    if out is not None:
        check_out_dir(out)
    try:
        if update:
            for path in update:
                changed = update_file(path, db)
                note(f"{path}: {'updated' if changed else 'unchanged'}")
            return
        options = ReportOptions(
            where=where, sql=sql, columns=_split(columns), sort=_split(sort),
            headers=_pairs(header, "--header"), formats=_pairs(fmt, "--fmt"),
            renames=_pairs(name, "--name"), name_from=name_from,
            models_file=str(models) if models else None, title=title,
            template=str(template) if template else None, scale_replicas=replicas,
            repeats=repeats, group=group, slos=list(slo), metric=metric_, over=over,
            threshold=threshold, order=_split(order),
            charts=None if charts is None else [c for c in _split([charts]) if c != "none"])
        built: list = []
        text = build(db, [kind], options, out_dir=out, table_only=table_only, reports=built)
    except TemplateError as exc:
        raise BenchvaultError(f"--template {template}{_template_line(exc)}: {exc}; fix the "
                              "template (jinja2 syntax)") from None
    except OSError as exc:
        raise _os_failure(exc, out) from None
    except (ReportError, ValueError) as exc:
        raise BenchvaultError(str(exc)) from None
    if out is None:
        print(text, end="")
    else:
        note(f"wrote {out / 'report.md'}")
    regressions = sum(r.regressions for r in built)
    if fail_on_regression and regressions:
        console.print(f"[red]regression[/red] {regressions} point(s) worse than "
                      f"-{abs(threshold):g}%")
        raise typer.Exit(ExitCode.FINDINGS)


def _template_line(exc) -> str:
    line = getattr(exc, "lineno", None)
    return f":{line}" if line else ""


def _os_failure(exc: OSError, out: Optional[Path]) -> BenchvaultError:
    """An OSError as the user sees it: writing --out (5) or reading a file they named (2)."""
    name = exc.filename or ""
    why = exc.strerror or str(exc)
    if out is not None and name and Path(name).absolute().is_relative_to(out.absolute()):
        from .errors import cannot_write

        return cannot_write(name, why)
    return BenchvaultError(f"{name}: {why}" if name else why)


@command()
@guarded
def compare(
    baseline: List[str] = typer.Option(..., "--baseline", help="Condition(s) selecting the "
                                       "baseline rows, e.g. engine=vllm (repeatable: all must "
                                       "hold); with --by, a value of those columns (vllm)."),
    candidate: List[str] = typer.Option([], "--candidate", help="A candidate's rows, e.g. "
                                        "engine=llama.cpp; repeat for several candidates (an "
                                        "N-way table); `;` joins conditions of one candidate "
                                        "(engine=sglang;model~Q4)."),
    by: List[str] = typer.Option([], "--by", help="Every value of these columns (e.g. engine, "
                                 "or engine,quantization) other than --baseline is a candidate."),
    out: Optional[Path] = typer.Option(None, "--out", help="Also write compare.md and a "
                                       "grouped-bar chart (PNG + SVG) of an N-way comparison "
                                       "into this directory."),
    db: Path = DB_OPTION,
    kind: str = typer.Option("sweep", "--report", help="Which rows: sweep (serving runs), "
                                                       "offline (offline runs) or "
                                                       "llama-bench, ..."),
    where: List[str] = typer.Option([], "--where", help="Filter both sides."),
    metric: List[str] = typer.Option([], "--metric", help="Metric(s) to compare (repeatable)."),
    match: List[str] = typer.Option([], "--match", help="Columns pairing the rows; the other "
                                    "settings may differ (each difference is said)."),
    strict: bool = typer.Option(False, "--strict", help="Pair only rows whose every setting "
                                "is known and equal on both sides."),
    fail_on_regression: Optional[float] = typer.Option(
        None, "--fail-on-regression", help="Exit 1 when a candidate is worse than its baseline "
                                           "by more than PCT percent on a compared metric."),
) -> None:
    """Compare a baseline with candidates, side by side with speedups.

    One candidate: baseline and candidate side by side, with speedup (1.25x) and change
    (-20.0%). Several candidates (--by engine, or --candidate repeated): an N-way table, each
    candidate's value and ratio per row, their geometric mean last. Rows pair when they ran
    the same test and every setting not chosen by --baseline/--candidate/--by is equal
    (concurrency, dataset, flash attention, model...); only repeats of one configuration are
    averaged. A setting a row leaves out at the tool's default is that default; one it does
    not say (a blank) is unknown and pairs with any value. Every difference is a column or a
    note under the table. No comparable rows: exit 1 with one line naming what each side
    has."""
    from .reports import ReportError
    from .reports.compare import compare as run_compare
    from .reports.ratios import NoComparableRows

    if not candidate and not by:
        raise BenchvaultError("compare wants --candidate (repeatable) or --by")
    check_for_reading(db)
    if out is not None:
        check_out_dir(out)
    try:
        from .reports.nway import selection

        result = run_compare(db, baseline, kind=kind, where=where, metrics=_split(metric),
                             match=_split(match), candidates=[selection(c) for c in candidate],
                             by=_split(by), strict=strict)
        text = result.markdown()
        if out is not None:
            _write_comparison(result, kind, text, out)
    except OSError as exc:
        raise _os_failure(exc, out) from None
    except NoComparableRows as exc:
        print(str(exc))
        raise typer.Exit(ExitCode.FINDINGS) from None
    except (ReportError, ValueError) as exc:
        raise BenchvaultError(str(exc)) from None
    print(text, end="")
    if fail_on_regression is not None and result.regressed(fail_on_regression):
        console.print(f"[red]regression[/red] {result.worst_change:.1f}% is worse than "
                      f"-{abs(fail_on_regression)}%")
        raise typer.Exit(ExitCode.FINDINGS)


def _write_comparison(result, kind: str, text: str, out: Path) -> None:
    from .reports.kinds import kind as get_kind
    from .reports.nway import NWay, grouped_bar_chart

    out.mkdir(parents=True, exist_ok=True)
    if isinstance(result, NWay) and result.table is not None:
        spec = get_kind(kind)
        files = grouped_bar_chart(result, spec.table, f"{result.metrics[0]}: "
                                  f"{result.baseline} vs {len(result.sides)} candidates",
                                  out / f"compare-{result.metrics[0]}")
        if files:
            text += f"\n![{result.metrics[0]}]({files[0].name}) ([SVG]({files[1].name}))\n"
    (out / "compare.md").write_text(text, encoding="utf-8")
    note(f"wrote {out / 'compare.md'}")


@command()
@guarded
def export(
    db: Path = DB_OPTION,
    fmt: str = typer.Option("parquet", "--format", help="csv, json (JSON lines) or parquet."),
    table: List[str] = typer.Option([], "--table", help="Only this table (repeatable)."),
    out: Path = typer.Option(Path("export"), "--out", help="Directory to write into."),
) -> None:
    """Write the warehouse's tables as CSV, JSON lines or Parquet.

    Parquet columns are typed (for DuckDB, Spark, Trino). The database is opened read-only.
    Rows come in the order of what they are and are numbered in that order, so the same files
    give the same export whatever order they were ingested in."""
    from .export import export as run_export

    check_for_reading(db)
    check_out_dir(out)
    try:
        written = run_export(db, fmt, out, table or None)
    except OSError as exc:
        raise _os_failure(exc, out) from None
    except ValueError as exc:
        raise BenchvaultError(str(exc)) from None
    for path in written:
        note(f"wrote {path}")


@command()
@guarded
def formats() -> None:
    """List the formats benchvault reads, the table each fills and the versions it knows.

    One entry per format: its name and table, what it reads, and the upstream versions it
    was checked against."""
    from rich.padding import Padding
    from rich.text import Text

    from .parsers import all_formats

    out = Console()
    for fmt in all_formats():
        out.print(Text.assemble((fmt.name, "bold"), " → ", fmt.table))
        out.print(Padding(Text(fmt.description), (0, 0, 0, 4)))
        if fmt.upstream:
            out.print(Padding(Text("upstream: " + "; ".join(fmt.upstream), style="dim"),
                              (0, 0, 0, 4)))
        out.print()


@command()
@guarded
def version() -> None:
    """Print benchvault's version."""
    print(__version__)


def _reflowed(doc: str | None) -> str | None:
    """A docstring as help the terminal wraps: each paragraph's lines joined (rich keeps the
    source's line breaks, which a narrower terminal breaks again); an indented line, a list
    item, stays a line of its own."""
    if not doc:
        return doc
    paragraphs = []
    for paragraph in inspect.cleandoc(doc).split("\n\n"):
        lines: list[str] = []
        for line in paragraph.splitlines():
            if lines and not line.startswith((" ", "-", "*")) and not lines[-1].endswith(":"):
                lines[-1] += " " + line.strip()
            else:
                lines.append(line)
        paragraphs.append("\n".join(lines))
    return "\n\n".join(paragraphs)


for _info in app.registered_commands:
    if _info.help is None and _info.callback is not None:
        _info.help = _reflowed(_info.callback.__doc__)


def main() -> None:  # pragma: no cover
    sys.exit(app())


if __name__ == "__main__":  # pragma: no cover
    main()
