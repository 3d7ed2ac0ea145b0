"""Property: whatever mutation of a real fixture it is fed, ingest never raises, and every
number it stores is one printed in the text it stored it from."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings

from benchvault.ingest.pipeline import ingest_file
from benchvault.schemas.store import connect
from fuzzing import check_values_come_from_text, mutated


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=mutated())
def test_ingest_never_raises_and_stores_only_printed_values(data: bytes):
    with tempfile.TemporaryDirectory() as tmp:
        note = Path(tmp) / "fuzzed.md"
        note.write_bytes(data)
        db_path = Path(tmp) / "w.db"
        db = connect(db_path)
        try:
            result = ingest_file(db, note)
        finally:
            db.close()
        assert result.status in ("ingested", "replaced")
        for warning in result.warnings:
            assert warning.line >= 1 and warning.reason
        check_values_come_from_text(db_path)
