"""Format registry: every module here with a module-level ``FORMAT`` is a format.

Adding a format is adding ``<name>.lark`` + ``<name>.py`` (declaring ``FORMAT``) and a fixture;
nothing here changes.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from .base import BlockFormat, FileFormat, LineFormat


@lru_cache(maxsize=None)
def all_formats() -> tuple[BlockFormat | LineFormat | FileFormat, ...]:
    found = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        fmt = getattr(module, "FORMAT", None)
        if isinstance(fmt, (BlockFormat, LineFormat, FileFormat)):
            found.append(fmt)
    return tuple(found)


def block_formats() -> tuple[BlockFormat, ...]:
    return tuple(f for f in all_formats() if isinstance(f, BlockFormat))


def line_formats() -> tuple[LineFormat, ...]:
    return tuple(f for f in all_formats() if isinstance(f, LineFormat))


def file_formats() -> tuple[FileFormat, ...]:
    return tuple(f for f in all_formats() if isinstance(f, FileFormat))
