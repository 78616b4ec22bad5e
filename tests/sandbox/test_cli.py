"""``qdash sandbox run FILE --data JSON`` prints the JSON result."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog
from typer.testing import CliRunner

from qdash.cli import app


@pytest.fixture(autouse=True)
def _keep_logging_config() -> Iterator[None]:
    """The command reconfigures structlog for its stdout; give other tests theirs back."""
    saved = structlog.get_config()
    yield
    structlog.configure(**saved)


def test_run_prints_json_result(tmp_path: Path) -> None:
    code = tmp_path / "a.py"
    code.write_text("import statistics\nresult = {'output': statistics.mean(data['v'])}\n")
    data = tmp_path / "d.json"
    data.write_text(json.dumps({"v": [1, 2, 3]}))
    outcome = CliRunner().invoke(app, ["sandbox", "run", str(code), "--data", str(data)])
    assert outcome.exit_code == 0, outcome.output
    assert json.loads(outcome.stdout) == {"output": "2", "error": None, "chart": None}


def test_run_prints_a_result_that_is_not_the_envelope(tmp_path: Path) -> None:
    """A dict of statistics as ``result`` is the output (it used to print all nulls)."""
    code = tmp_path / "s.py"
    code.write_text("import statistics\nresult = {'mean': statistics.mean(data['v']), 'n': 3}\n")
    data = tmp_path / "d.json"
    data.write_text(json.dumps({"v": [1, 2, 3]}))
    outcome = CliRunner().invoke(app, ["sandbox", "run", str(code), "--data", str(data)])
    assert outcome.exit_code == 0, outcome.output
    assert json.loads(json.loads(outcome.stdout)["output"]) == {"mean": 2, "n": 3}


def test_run_reports_code_errors_with_exit_1(tmp_path: Path) -> None:
    code = tmp_path / "b.py"
    code.write_text("import os\n")
    outcome = CliRunner().invoke(app, ["sandbox", "run", str(code)])
    assert outcome.exit_code == 1
    assert json.loads(outcome.stdout)["error"].startswith("ImportError: Import of 'os' is not allowed")


def test_bad_data_file_is_a_usage_error(tmp_path: Path) -> None:
    code = tmp_path / "c.py"
    code.write_text("print(1)\n")
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    outcome = CliRunner().invoke(app, ["sandbox", "run", str(code), "--data", str(bad)])
    assert outcome.exit_code == 2
    assert "top level must be an object" in outcome.output
