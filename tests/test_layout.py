"""The package's layout: no import cycle between modules, and the ingest stages import only the
stages before them (the data's way: find → read → parse → link → identify → store)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "benchvault"
# The ingest pipeline's modules in the order a file's data passes through them; ``outcome``
# (what ingest says of a file) is shared by all, ``tablejoin`` joins the runs of split tables
# as ``parse`` builds them, ``packing`` and ``stream`` serve the workers,
# ``tail`` reads a file still being written, ``watch`` runs the pipeline as files grow.
STAGES = ("outcome", "find", "read", "tablejoin", "parse", "packing", "stream", "workers", "tail",
          "link", "identify", "store", "pipeline", "watch")


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _imports(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """Every benchvault module ``module`` imports anywhere in its text (inside functions and
    ``if TYPE_CHECKING:`` blocks too: an import made late is still an edge)."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            for alias in node.names:
                full = f"{name}.{alias.name}"
                if full in modules:
                    out.add(full)
                elif name in modules:
                    out.add(name)
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name in modules}
    out.discard(module)
    return out


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {m: _imports(m, p, modules) for m, p in modules.items()}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle, as the modules along it, or None."""
    state: dict[str, int] = {}          # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        path.append(module)
        for target in sorted(graph.get(module, ())):
            if state.get(target) == 1:
                return path[path.index(target):] + [target]
            if target not in state and (found := visit(target)):
                return found
        path.pop()
        state[module] = 2
        return None

    for module in sorted(graph):
        if module not in state and (found := visit(module)):
            return found
    return None


def test_no_import_cycle_between_modules():
    graph = _graph()
    assert len(graph) > 80 and "benchvault.ingest.pipeline" in graph
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def test_the_walk_finds_a_cycle_where_there_is_one():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_ingest_stages_import_only_earlier_stages():
    graph = _graph()
    stage = {f"benchvault.ingest.{name}": at for at, name in enumerate(STAGES)}
    assert set(stage) | {"benchvault.ingest"} == \
        {m for m in graph if m.startswith("benchvault.ingest")}
    for module, at in stage.items():
        later = sorted(t for t in graph[module] if stage.get(t, -1) > at)
        assert not later, f"{module} imports later stages {later}"


def test_the_ingest_package_imports_nothing_so_unchanged_files_answer_light():
    """``benchvault.ingest`` and its ``find`` stage load no parser, pydantic or sqlite-utils:
    a re-run over unchanged files answers from sizes and times alone."""
    import subprocess
    import sys

    code = ("import sys, benchvault.ingest.find; "
            "print(sorted(m for m in ('pydantic', 'lark', 'sqlite_utils', 'benchvault.parsers') "
            "if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, check=True)
    assert done.stdout.strip() == "[]"
