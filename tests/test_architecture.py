"""Imports point down (docs/architecture.md): a test, so a layering slip fails CI instead of review.

Each rule names a package and the packages it must never import (at module level or inside a
function: a lazy import is still a dependency).
"""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "qdash"

FORBIDDEN: dict[str, tuple[str, ...]] = {
    "qdash.db": ("qdash.api", "qdash.copilot", "qdash.demo", "qdash.repositories", "qdash.bootstrap"),
    "qdash.models": ("qdash.api", "qdash.copilot", "qdash.demo", "qdash.repositories", "qdash.db"),
    "qdash.repositories": ("qdash.api", "qdash.copilot", "qdash.demo"),
    "qdash.demo": ("qdash.api", "qdash.copilot"),
    "qdash.uploads": ("qdash.api", "qdash.copilot"),
    "qdash.copilot": ("qdash.api", "qdash.testing"),
    # The engine is generic: the application hands it its configuration and its answer format.
    "qdash.engine": (
        "qdash.copilot",
        "qdash.settings",
        "qdash.config_files",
        "qdash.sandbox",
        "qdash.repositories",
        "qdash.db",
        "qdash.models",
        "qdash.demo",
        "qdash.api",
        "qdash.uploads",
        "qdash.review",
        "qdash.evaluation",
        "qdash.cli",
        "qdash.bootstrap",
    ),
    "qdash.evaluation.oracle": ("qdash.copilot", "qdash.repositories", "qdash.api", "qdash.review"),
    "qdash.engine.providers": ("qdash.engine.turn", "qdash.engine.agent"),
    "qdash.sandbox": (
        "qdash.copilot",
        "qdash.engine",
        "qdash.repositories",
        "qdash.db",
        "qdash.demo",
        "qdash.api",
    ),
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
    return found


def _violations() -> list[str]:
    problems = []
    for path in sorted(SRC.rglob("*.py")):
        module = _module_name(path)
        for package, banned in FORBIDDEN.items():
            if module != package and not module.startswith(package + "."):
                continue
            for line, imported in _imports(path):
                if any(imported == b or imported.startswith(b + ".") for b in banned):
                    problems.append(f"{path.relative_to(SRC.parent)}:{line} {module} imports {imported}")
    return problems


def test_imports_point_down() -> None:
    assert _violations() == []


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_rule_targets_exist(package: str) -> None:
    assert (SRC.parent / package.replace(".", "/")).is_dir()


def _module_graph() -> dict[str, set[str]]:
    """Module → the qdash modules it imports (``from pkg import mod`` counts as ``pkg.mod``), lazy
    and ``TYPE_CHECKING`` imports included: a cycle through either is still a cycle to read."""
    modules = {_module_name(path): path for path in SRC.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    deps.add(full if full in modules else node.module)
            elif isinstance(node, ast.Import):
                deps.update(alias.name for alias in node.names)
        graph[name] = {d for d in deps if d in modules and d != name}
    return graph


def test_no_import_cycles() -> None:
    try:
        TopologicalSorter(_module_graph()).prepare()
    except CycleError as exc:
        pytest.fail(f"import cycle: {' -> '.join(exc.args[1])}")
