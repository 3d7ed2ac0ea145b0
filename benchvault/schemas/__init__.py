"""Warehouse schemas: pydantic row models (one module per area) and the SQLite store.

Every module here is imported so that each ``Row`` subclass (each table) is registered; a new
area's models go in a new module and need no edit elsewhere.
"""

from __future__ import annotations

import importlib
import pkgutil

for _info in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_info.name}")
