"""benchvault: a results warehouse for LLM-inference benchmarks."""

import sys as _sys

__version__ = "0.1.0"


def _import_sqlite_utils_lightly() -> None:
    """Import sqlite-utils without pandas and numpy when they are not loaded yet.

    sqlite-utils imports both (half a second, most of every command's start-up) only to map
    their scalar types to column types; benchvault never writes such values.  Whatever imports
    pandas later gets it as usual.
    """
    hidden = [name for name in ("pandas", "numpy") if name not in _sys.modules]
    for name in hidden:
        _sys.modules[name] = None  # type: ignore[assignment]  # `import pandas` fails fast
    try:
        import sqlite_utils  # noqa: F401
    finally:
        for name in hidden:
            del _sys.modules[name]


_import_sqlite_utils_lightly()
