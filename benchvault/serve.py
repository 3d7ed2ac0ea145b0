"""Datasette over the warehouse: metadata derived from the pydantic models, served read-only."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from .schemas.store import row_models


def metadata(db_name: str = "benchvault") -> dict[str, Any]:
    """Datasette metadata: a description and unit for every column, facets from the models."""
    tables: dict[str, Any] = {}
    for model in row_models():
        columns, facets, units = {}, [], {}
        for name, field in model.model_fields.items():
            extra = field.json_schema_extra or {}
            unit = extra.get("unit")
            text = field.description or ""
            columns[name] = f"{text} [{unit}]" if unit else text
            if extra.get("facet"):
                facets.append(name)
        tables[model.__table__] = {
            "description": model.__description__,
            "columns": columns,
            **({"facets": facets} if facets else {}),
        }
    return {
        "title": "benchvault",
        "description": "LLM-inference benchmark results read from pasted logs and notes.",
        "databases": {db_name: {"tables": tables}},
    }


def run_datasette(db: Path, host: str = "127.0.0.1", port: int = 8001,
                  open_browser: bool = False) -> int:
    """Serve ``db`` immutable (read-only) and block until Datasette exits."""
    with tempfile.TemporaryDirectory() as tmp:
        meta_path = Path(tmp) / "metadata.json"
        meta_path.write_text(json.dumps(metadata(db.stem), indent=2))
        command = [sys.executable, "-m", "datasette", "serve", "-i", str(db),
                   "--metadata", str(meta_path), "--host", host, "--port", str(port),
                   "--setting", "sql_time_limit_ms", "5000"]
        if open_browser:
            command.append("--open")
        try:
            return subprocess.call(command)
        except KeyboardInterrupt:
            return 0
