"""What ingest says about each file: its status, what it stored and its warnings."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class IngestWarning:
    """A problem at file:line; stored in unparsed_blocks with the text it concerns."""

    line: int
    reason: str
    format: str | None = None
    raw_text: str | None = None

    def where(self, path: str) -> str:
        return f"{path}:{self.line}: {self.reason}"


@dataclass
class FileResult:
    path: str
    status: str = "ingested"          # ingested | unchanged | replaced | removed | error
    counts: dict[str, int] = field(default_factory=dict)
    warnings: list[IngestWarning] = field(default_factory=list)
    error: str | None = None
    known: int = 0                    # rows already stored from another sighting

    @property
    def runs(self) -> int:
        return self.counts.get("serving_runs", 0)
