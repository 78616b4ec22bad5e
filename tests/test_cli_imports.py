"""What ``qdash`` imports before it does any work: a command loads its own module only.

``bench/cli_start.py`` measures the seconds; these tests pin the cause by module name (times vary
with the machine, names do not): ``qdash --help`` lists every command without importing one, and
neither the sandbox command nor ``qdash eval`` (before a run starts) loads the assistant, the model
SDK or the tokenizer.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import typer

from qdash.cli import _LAZY, app

# Each costs a noticeable part of a second (or several) to import.
ASSISTANT = ("openai", "bpe_openai", "qdash.engine", "qdash.copilot", "qdash.evaluation")
DATA = ("pandas", "numpy", "plotly", "pymongo", "qdash.db")


def _loaded_after(code: str) -> list[str]:
    """The modules a fresh interpreter holds after running ``code``."""
    script = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    names: list[str] = json.loads(done.stdout.splitlines()[-1])
    return names


def _among(names: list[str], packages: tuple[str, ...]) -> list[str]:
    return [n for n in names if any(n == p or n.startswith(p + ".") for p in packages)]


def test_help_imports_no_command() -> None:
    loaded = _loaded_after(
        "from qdash.cli import app\ntry:\n    app(['--help'])\nexcept SystemExit:\n    pass"
    )
    assert _among(loaded, (*ASSISTANT, *DATA, "pydantic", "qdash.settings", "uvicorn", "fastapi")) == []
    assert "qdash.commands.sandbox" not in loaded


def test_sandbox_command_loads_neither_the_assistant_nor_the_data_stack() -> None:
    assert _among(_loaded_after("import qdash.cli, qdash.commands.sandbox"), (*ASSISTANT, *DATA)) == []


def test_eval_command_loads_the_assistant_only_to_run_questions() -> None:
    """``qdash eval --list`` reads the question files; the lab, tools and model load when a run starts."""
    loaded = _loaded_after("import qdash.cli, qdash.commands.eval")
    unused = (
        "openai",
        "bpe_openai",
        "qdash.engine",
        "qdash.copilot",
        "qdash.evaluation.fake_llm",
        "qdash.demo",
    )
    assert _among(loaded, (*unused, *DATA)) == []


@pytest.mark.parametrize("name", sorted(_LAZY))
def test_help_line_is_the_commands_own(name: str) -> None:
    """The line ``--help`` shows without importing a command is the first paragraph of its help."""
    command = typer.main.get_command(app).get_command(None, name)  # type: ignore[attr-defined]
    assert command is not None and command.help is not None
    assert _LAZY[name][2] == " ".join(command.help.split("\n\n")[0].split())


def test_tools_list_loads_neither_the_model_sdk_nor_the_database_driver() -> None:
    """The catalogue needs the engine's tool and schema modules only, and lists without a database."""
    loaded = _loaded_after(
        "import qdash.cli, qdash.commands.tools\n"
        "from qdash.copilot.tools.registry import default_registry\n"
        "from qdash.settings import get_settings\n"
        "assert 'ask_user' in default_registry(get_settings()).names"
    )
    assert _among(loaded, ("openai", "bpe_openai", "pymongo", "qdash.engine.agent", "qdash.db")) == []


def test_the_server_loads_the_model_sdk_only_for_a_configured_provider() -> None:
    """``qdash serve`` on the demo model (a fresh install: no key) never needs the openai SDK; the
    first model built from a configured provider loads it."""
    assert "openai" not in _loaded_after("import qdash.api.app")
    built = _loaded_after(
        "from qdash.engine.providers.factory import ModelConfig, build_model\n"
        "build_model('m', ModelConfig('gpt-5-mini', base_url='http://127.0.0.1:9/v1'))"
    )
    assert "openai" in built
