"""The CLI keeps what it loaded before reading out of the collector's full passes, once."""

from __future__ import annotations

import gc

from benchvault import ingest


def test_what_is_loaded_is_frozen_once(monkeypatch):
    monkeypatch.setattr(ingest, "_frozen", False)
    ingest.freeze_what_stays()
    frozen = gc.get_freeze_count()
    assert frozen > 10_000          # the modules, formats and patterns loaded
    later = [[i] for i in range(5000)]    # made after: left to the collector
    ingest.freeze_what_stays()
    assert gc.get_freeze_count() == frozen and later
