"""``qdash tools list`` / ``qdash tools call``: JSON out, exactly what the model sees."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from pymongo.database import Database
from typer.testing import CliRunner

from qdash.cli import app
from qdash.copilot.tools.catalog import INVESTIGATION, SPECS

runner = CliRunner()


def test_list_json_is_every_tool_in_the_responses_shape() -> None:
    result = runner.invoke(app, ["tools", "list", "--json"])
    assert result.exit_code == 0, result.output
    tools = json.loads(result.stdout)
    assert [t["name"] for t in tools] == [s.name for s in SPECS if INVESTIGATION not in s.tags] + ["ask_user"]
    assert all(t["type"] == "function" and t["strict"] is True and "parameters" in t for t in tools)
    chat = json.loads(runner.invoke(app, ["tools", "list", "--json", "--chat"]).stdout)
    assert chat[0]["function"]["name"] == "get_qubit_params"


def test_list_plain_names_labels_and_parameters() -> None:
    result = runner.invoke(app, ["tools", "list"])
    assert result.exit_code == 0
    assert (
        "get_qubit_params" in result.stdout and "Fetching qubit parameters  (chip_id, qid)" in result.stdout
    )
    assert result.stdout.splitlines()[-1].split() == [
        "ask_user",
        "Asking",
        "you",
        "to",
        "choose",
        "(question,",
        "options)",
    ]


_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
          "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
          "nineteen"]  # fmt: skip
NUMBERS = (
    {w: n for n, w in enumerate(_WORDS)}
    | {"twenty": 20}
    | {f"twenty-{w}": 20 + n for n, w in enumerate(_WORDS[1:10], 1)}
)


def test_the_readme_counts_the_tools_list_shows() -> None:
    """The README's "picks from the N tools" stays the length of ``qdash tools list`` (it said eighteen
    while the list showed nineteen)."""
    readme = (Path(__file__).resolve().parents[3] / "README.md").read_text(encoding="utf-8")
    words = re.findall(r"picks from the ([a-z-]+) tools `qdash tools list` shows", " ".join(readme.split()))
    assert len(words) == 1, "the README's sentence on the tools was reworded: update this test"
    listed = json.loads(runner.invoke(app, ["tools", "list", "--json"]).stdout)
    assert NUMBERS[words[0]] == len(listed), f"README says {words[0]}, `qdash tools list` shows {len(listed)}"


@pytest.fixture
def lab_database(monkeypatch: pytest.MonkeyPatch, small_lab: Database[dict[str, Any]]) -> None:
    """``call`` opens the configured database; here that is the shared small lab."""
    import qdash.bootstrap
    import qdash.db

    monkeypatch.setattr(qdash.bootstrap, "prepare_database", lambda settings: small_lab)
    monkeypatch.setattr(qdash.db, "close_database", lambda db: None)


def test_call_prints_the_model_view(lab_database: None) -> None:
    result = runner.invoke(app, ["tools", "call", "get_qubit_params", "--args", '{"qid": "Q16"}'])
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert body["qid"] == "16" and body["chip_id"] == "64Qv3"
    other = json.loads(
        runner.invoke(
            app, ["tools", "call", "get_qubit_params", "--args", '{"qid": "16"}', "--project", "proj-other"]
        ).stdout
    )
    assert other["params"] != body["params"]


def test_call_errors_exit_nonzero_with_json(lab_database: None) -> None:
    result = runner.invoke(app, ["tools", "call", "get_qubit_params", "--args", '{"qid": "nope"}'])
    assert result.exit_code == 1
    assert json.loads(result.stdout)["error"].startswith("Invalid arguments for get_qubit_params: qid:")
    unknown = runner.invoke(app, ["tools", "call", "no_such_tool"])
    assert unknown.exit_code == 1 and json.loads(unknown.stdout)["error"].startswith(
        "Unknown tool: no_such_tool."
    )
    bad_json = runner.invoke(app, ["tools", "call", "get_qubit_params", "--args", "{qid"])
    assert bad_json.exit_code == 2 and "not valid JSON" in bad_json.output
