"""Imports point down (docs/architecture.md): a test, so a layering slip fails CI instead of review.

Each rule names a package and the packages it must never import (``FORBIDDEN``) or the only ones it
may import (``ALLOWED``), at module level or inside a function: a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "qdash"

# The command layer: the command groups, their wiring and the way a command reaches its data. A
# domain package is driven by commands and never imports one (nor the route a command takes).
COMMAND_LAYER = ("qdash.commands", "qdash.cli", "qdash.route", "qdash.remote")
DOMAIN = (
    "qdash.db",
    "qdash.models",
    "qdash.repositories",
    "qdash.demo",
    "qdash.uploads",
    "qdash.copilot",
    "qdash.engine",
    "qdash.sandbox",
    "qdash.review",
    "qdash.actions",
    "qdash.feedback",
    "qdash.evaluation",
)

FORBIDDEN: dict[str, tuple[str, ...]] = {
    # Commands drive the domain packages and take their database from qdash.bootstrap/qdash.route,
    # never from the API (nor the tests' fakes).
    "qdash.commands": ("qdash.api", "qdash.evaluation.fake_llm", "qdash.evaluation.plan_model"),
    # The server never imports its command-line client (they share the server record's constants).
    "qdash.api": COMMAND_LAYER,
    # Evaluation never knows where its questions come from: feedback writes drafts in its format.
    "qdash.evaluation": ("qdash.feedback",),
    "qdash.db": ("qdash.api", "qdash.copilot", "qdash.demo", "qdash.repositories", "qdash.bootstrap"),
    "qdash.models": ("qdash.api", "qdash.copilot", "qdash.demo", "qdash.repositories", "qdash.db"),
    "qdash.repositories": ("qdash.api", "qdash.copilot", "qdash.demo"),
    "qdash.demo": ("qdash.api", "qdash.copilot"),
    "qdash.uploads": ("qdash.api", "qdash.copilot"),
    "qdash.copilot": ("qdash.api", "qdash.evaluation"),
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


# The only qdash packages (and their modules) a package may import, besides its own modules.
ALLOWED: dict[str, tuple[str, ...]] = {
    # Lab actions: membership and task results from the repositories, its switches from settings.
    "qdash.actions": ("qdash.models", "qdash.repositories", "qdash.settings"),
    # AI review sits above the assistant; only the API, the commands and bench import it.
    "qdash.review": (
        "qdash.copilot",
        "qdash.engine",
        "qdash.logging",
        "qdash.models",
        "qdash.repositories",
        "qdash.settings",
        "qdash.units",
    ),
    # Feedback turns answers into draft eval cases: it knows the question format, nothing else.
    "qdash.feedback": ("qdash.evaluation.questions",),
    # Which way a command reaches the data: the database opened here or the server's client.
    "qdash.route": ("qdash.bootstrap", "qdash.db", "qdash.remote", "qdash.settings"),
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


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _violations() -> list[str]:
    problems = []
    for path in sorted(SRC.rglob("*.py")):
        module = _module_name(path)
        imports = [(line, imported) for line, imported in _imports(path) if _within(imported, "qdash")]
        for line, imported in imports:
            where = f"{path.relative_to(SRC.parent)}:{line} {module} imports {imported}"
            banned = [b for package, names in FORBIDDEN.items() if _within(module, package) for b in names]
            banned += [b for package in DOMAIN if _within(module, package) for b in COMMAND_LAYER]
            if any(_within(imported, b) for b in banned):
                problems.append(where)
            for package, allowed in ALLOWED.items():
                if _within(module, package) and not any(_within(imported, a) for a in (package, *allowed)):
                    problems.append(f"{where} (may import only {', '.join(allowed)})")
    return problems


def test_imports_point_down() -> None:
    assert _violations() == []


def _exists(name: str) -> bool:
    path = SRC.parent / name.replace(".", "/")
    return path.is_dir() or path.with_suffix(".py").is_file()


@pytest.mark.parametrize("name", sorted({*FORBIDDEN, *ALLOWED, *DOMAIN, *COMMAND_LAYER}))
def test_rule_targets_exist(name: str) -> None:
    assert _exists(name)


def test_no_command_module_inside_a_domain_package() -> None:
    """Command code lives in ``qdash.commands``: a ``cli.py`` beside domain code would invite the
    domain to import it (as ``evaluation`` once imported ``feedback``'s command)."""
    assert sorted(str(p.relative_to(SRC)) for p in SRC.rglob("cli.py")) == ["cli.py"]


def _nodes(tree: ast.AST, runtime_only: bool) -> Iterator[ast.AST]:
    """Every node; ``runtime_only`` leaves out ``if TYPE_CHECKING:`` bodies (never run)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        if runtime_only and isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            stack.extend(node.orelse)
        else:
            stack.extend(ast.iter_child_nodes(node))


def _module_graph(runtime_only: bool = False) -> dict[str, set[str]]:
    """Module → the qdash modules it imports (``from pkg import mod`` counts as ``pkg.mod``), lazy
    and (unless ``runtime_only``) ``TYPE_CHECKING`` imports included: a cycle through either is
    still a cycle to read."""
    modules = {_module_name(path): path for path in SRC.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        deps: set[str] = set()
        for node in _nodes(ast.parse(path.read_text(encoding="utf-8")), runtime_only):
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


# What each runtime command loads (uvicorn imports the app factory by name; ``qdash.cli`` its
# commands by name, so each is its own root).
RUNTIME: dict[str, str] = {
    "qdash (every command)": "qdash.cli",
    "qdash serve": "qdash.api.app",
    "qdash ask": "qdash.commands.ask",
    "qdash eval --mode live": "qdash.evaluation.live",
    "qdash eval --suite reviews --mode live": "qdash.evaluation.reviews.live",
}


# What the wheel holds only for ``qdash eval --mode scripted`` and the replay modes.
TEST_DOUBLES = ("qdash.evaluation.fake_llm", "qdash.evaluation.plan_model")


def test_the_package_never_imports_the_test_support() -> None:
    """``tests.support`` (fixtures, wire double, upstream lab) is not in the wheel a lab installs, so
    an import of it from ``src/qdash`` would break there, even a lazy one."""
    found = [
        f"{path.relative_to(SRC.parent)}:{line} imports {imported}"
        for path in sorted(SRC.rglob("*.py"))
        for line, imported in _imports(path)
        if _within(imported, "tests")
    ]
    assert found == []


@pytest.mark.parametrize("command", sorted(RUNTIME))
def test_runtime_never_imports_test_support(command: str) -> None:
    """The fake LLM server and the plan-following model ship only for the eval's scripted and replay
    modes; a module these commands run must not import them, even in a function."""
    graph = _module_graph(runtime_only=True)
    came_from: dict[str, str | None] = {RUNTIME[command]: None}
    queue = [RUNTIME[command]]
    while queue:
        module = queue.pop()
        parts = module.split(".")
        parents = {".".join(parts[:n]) for n in range(2, len(parts))} & graph.keys()  # run first
        for dep in sorted(graph[module] | parents):
            if dep not in came_from:
                came_from[dep] = module
                queue.append(dep)
    reached = sorted(m for m in came_from if any(_within(m, double) for double in TEST_DOUBLES))
    chain = [reached[0]] if reached else []
    while chain and (previous := came_from[chain[-1]]) is not None:
        chain.append(previous)
    assert not chain, " <- ".join(chain)


@pytest.mark.parametrize("module", ["tool.py", "events.py", "turn.py"])
def test_engine_tool_results_carry_no_dashboard_concept(module: str) -> None:
    """What a tool returns beside its text is the application's (``ToolOutput.data``): the engine's
    tool result, its events and its loop name no chart, attachment or answer block."""
    fields = {
        node.attr if isinstance(node, ast.Attribute) else node.target.id  # type: ignore[union-attr]
        for node in ast.walk(ast.parse((SRC / "engine" / module).read_text()))
        if isinstance(node, ast.Attribute)
        or (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name))
    }
    assert not fields & {"charts", "chart_ids", "named_charts", "attachments"}
