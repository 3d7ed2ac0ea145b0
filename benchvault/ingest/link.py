"""Link: within one file, assemble server launches from their lines and link rows to them.

Ingest hands every :class:`~benchvault.parsers.base.Facts` and every row to a :class:`Linker`
in file order.  A launch's row is inserted at its first line and updated as more lines arrive
(streaming, inside the file's transaction).  Links:

- a serving run → the launch in scope: the latest one in its section (or a parent section);
  else the latest one in the file that nothing about the run contradicts (engine, model, a
  `tp16` / `PP=2` in its label or headings);
- a speculative-decoding line → the launch in scope, and the run printed after it in the same
  section;
- an engine stats line → the launch in scope.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from ..parsers.base import Facts
from ..parsers.vllm_server import Assembly
from ..schemas import store
from ..schemas.models import Row
from ..schemas.server import LOGGED_BY_LAUNCH, ServerLaunch

if TYPE_CHECKING:
    import sqlite_utils

PARALLEL_WORDS = {
    "tensor_parallel_size": re.compile(r"\btp\s*[=:]?\s*(\d+)\b", re.I),
    "pipeline_parallel_size": re.compile(r"\bpp\s*[=:]?\s*(\d+)\b", re.I),
}


def in_scope(outer: str | None, inner: str | None) -> bool:
    """Is a record under heading path ``inner`` inside the section ``outer``?"""
    if not outer:
        return True
    return inner == outer or (inner or "").startswith(outer + " > ")


@dataclass
class Launch:
    id: int
    assembly: Assembly
    source_id: int
    runs: int = 0
    dirty: bool = True
    _row: dict[str, Any] = field(default_factory=dict)

    def model(self) -> ServerLaunch:
        return ServerLaunch(id=self.id, source_id=self.source_id, **self.assembly.row())

    @property
    def row(self) -> dict[str, Any]:
        # Rebuilt only when a fact arrived since: a long log has thousands of facts per launch.
        if self.dirty:
            self._row = self.model().model_dump()
            self.dirty = False
        return self._row


class Linker:
    def __init__(self, db: sqlite_utils.Database, source_id: int,
                 flush: "Callable[[], None]" = lambda: None,
                 place_launch: "Callable[[int, dict[str, Any]], int] | None" = None):
        # ``flush`` writes rows still buffered by ingest, before an UPDATE that must see them;
        # ``place_launch`` files a finished launch among those stored (the same launch seen in
        # another file keeps one row) and says which id it keeps.
        self.db, self.source_id, self.flush = db, source_id, flush
        self.place_launch = place_launch
        self.launches: list[Launch] = []
        self.pending_spec: list[tuple[int, str | None]] = []   # (row id, section)
        self.unsaved: set[int] = set()

    # -- launches --------------------------------------------------------------------------
    def facts(self, facts: Facts) -> None:
        if facts.table != ServerLaunch.__table__:
            return
        section = facts.context.section_text
        current = self._launch_in_scope(section)
        if facts.begins:
            if current is not None and self._restates(current, facts, section):
                # The same server's command again before it printed anything: the first was
                # a draft (or an echo) of this one.
                current.assembly.restart_command()
            else:
                current = None
        elif current is not None and facts.once and facts.kind in current.assembly.kinds:
            current = None          # a second banner: the server was started again
        elif current is not None and facts.printer and current.assembly.printer \
                and facts.printer != current.assembly.printer:
            current = None          # another engine's own words: another server (a note
            #                         comparing vLLM's start-up with SGLang's)
        if current is None:
            if facts.weak:
                return
            current = self._open(facts)
        current.assembly.add(facts)
        self._save(current)

    @staticmethod
    def _restates(launch: Launch, facts: Facts, section: str | None) -> bool:
        assembly = launch.assembly
        if launch.runs or assembly.printed_anything or assembly.section != section:
            return False
        engine = facts.values.get("engine")
        model = (facts.values.get("positionals") or [None])[0]
        return engine == assembly.engine and model == launch.row.get("model")

    def _open(self, facts: Facts) -> Launch:
        ctx = facts.context
        assembly = Assembly(None, ctx.section_text, ctx.label_or_heading, ctx.tags or None)
        launch_id = store.insert(self.db, ServerLaunch(source_id=self.source_id))
        launch = Launch(launch_id, assembly, self.source_id)
        self.launches.append(launch)
        return launch

    def _save(self, launch: Launch) -> None:
        launch.dirty = True
        self.unsaved.add(launch.id)

    def finish(self) -> None:
        """Write every launch that changed since it was last written (once per file), then
        place each among the launches already stored."""
        self.save()
        if self.place_launch is not None:
            for launch in self.launches:
                launch.id = self.place_launch(launch.id, dict(launch.model().__dict__))

    def save(self) -> list[int]:
        """Write every launch that changed since it was last written; their ids.  (A file a
        watch follows is committed in parts: its launches as assembled so far.)"""
        saved = [launch.id for launch in self.launches if launch.id in self.unsaved]
        for launch in self.launches:
            if launch.id in self.unsaved:
                store.update(self.db, ServerLaunch.__table__, launch.id,
                             store.to_record(launch.model()))
        self.unsaved.clear()
        return saved

    def _launch_in_scope(self, section: str | None) -> Launch | None:
        for launch in reversed(self.launches):
            if in_scope(launch.assembly.section, section):
                return launch
        return None

    # -- rows ------------------------------------------------------------------------------
    def before_insert(self, row: Row) -> None:
        table = row.__table__
        if table == "serving_runs" and row.launch_id is None:
            launch = self._launch_for_run(row)
            if launch is not None:
                row.launch_id = launch.id
                launch.runs += 1
                if row.model is None and launch.row.get("model"):
                    # The client printed no model (no command or Namespace pasted): the
                    # server it ran against says which.
                    row.model = launch.row["model"]
        elif table in LOGGED_BY_LAUNCH and row.launch_id is None:
            launch = self._launch_in_scope(row.section)
            if launch is not None:
                row.launch_id = launch.id
                if table != "spec_decode_metrics" and row.logged_at and launch.assembly.year and \
                        not row.logged_at[:4].isdigit() and len(row.logged_at) < 16:
                    row.logged_at = f"{launch.assembly.year:04d}-{row.logged_at}"

    def after_insert(self, row: Row, row_id: int) -> None:
        table = row.__table__
        if table == "spec_decode_metrics":
            self.pending_spec.append((row_id, row.section))
        elif table == "serving_runs":
            mine = [i for i, section in self.pending_spec if section == row.section]
            if mine:
                self.flush()
                marks = ", ".join("?" * len(mine))
                self.db.execute(f"UPDATE spec_decode_metrics SET run_id = ? WHERE id IN ({marks})",
                                [row_id, *mine])
            self.pending_spec = []

    @property
    def launch_count(self) -> int:
        return len(self.launches)

    def _launch_for_run(self, run: Row) -> Launch | None:
        for launch in reversed(self.launches):
            if in_scope(launch.assembly.section, run.section) and self._same_engine(launch, run):
                return launch
        for launch in reversed(self.launches):
            if not self._contradicts(launch, run):
                return launch
        return None

    @staticmethod
    def _same_engine(launch: Launch, run: Row) -> bool:
        return run.engine in (None, "unknown") or run.engine == launch.row.get("engine")

    def _contradicts(self, launch: Launch, run: Row) -> bool:
        """Does anything the run says disagree with the launch (so it ran elsewhere)?"""
        if not self._same_engine(launch, run):
            return True
        model = launch.row.get("model")
        if model and run.model and model.lower() != run.model.lower():
            return True
        words = " ".join(filter(None, (run.label, run.section)))
        for column, pattern in PARALLEL_WORDS.items():
            said = {int(m) for m in pattern.findall(words)}
            size = launch.row.get(column) or 1
            if said and size not in said:
                return True
        return False
