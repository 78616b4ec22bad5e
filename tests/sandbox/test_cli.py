"""``qdash sandbox run FILE --data JSON`` prints the JSON result."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog
from typer.testing import CliRunner, Result

from qdash.cli import app


@pytest.fixture(autouse=True)
def _keep_logging_config() -> Iterator[None]:
    """The command reconfigures structlog for its stdout; give other tests theirs back."""
    saved = structlog.get_config()
    yield
    structlog.configure(**saved)


def sandbox_run(tmp_path: Path, source: str, data: str | None = None) -> Result:
    """``qdash sandbox run`` on ``source`` written to a file, with ``data`` (JSON text) if given."""
    code = tmp_path / "code.py"
    code.write_text(source)
    args = ["sandbox", "run", str(code)]
    if data is not None:
        (tmp_path / "data.json").write_text(data)
        args += ["--data", str(tmp_path / "data.json")]
    return CliRunner().invoke(app, args)


def test_run_prints_json_result(tmp_path: Path) -> None:
    source = "import statistics\nresult = {'output': statistics.mean(data['v'])}\n"
    outcome = sandbox_run(tmp_path, source, json.dumps({"v": [1, 2, 3]}))
    assert outcome.exit_code == 0, outcome.output
    assert json.loads(outcome.stdout) == {"output": "2", "error": None, "chart": None}


ONE_SHOT = {
    # A dict of statistics as ``result`` is the output (it used to print all nulls).
    "a result that is not the envelope": (
        "import statistics\nresult = {'mean': statistics.mean(data['v']), 'n': 3}\n",
        json.dumps({"v": [1, 2, 3]}),
        {"mean": 2, "n": 3},
    ),
    # The one-shot path (no spares, no heavy warm-up) imports numpy and pandas when the code does.
    "numpy and pandas when the code imports them": (
        "def stats(values):\n    import pandas as pd\n    return pd.Series(values).describe()\n"
        "from numpy import arange\nresult = {'output': stats(arange(3.0))['mean']}\n",
        None,
        1.0,
    ),
    # ``strptime`` and ``statistics`` import more on first use: the light warm-up covers them.
    "stdlib code with lazy imports": (
        "import datetime, statistics\n"
        "d = datetime.datetime.strptime('2024-01-02 03:04', '%Y-%m-%d %H:%M')\n"
        "result = [d.strftime('%b %d'), statistics.stdev([1, 2, 4])]\n",
        None,
        ["Jan 02", 1.5275252316519468],
    ),
}
"""Name → (source, data as JSON text, the printed output read as JSON)."""


@pytest.mark.parametrize(("source", "data", "output"), ONE_SHOT.values(), ids=list(ONE_SHOT))
def test_one_shot_run_prints_the_output(tmp_path: Path, source: str, data: str | None, output: Any) -> None:
    outcome = sandbox_run(tmp_path, source, data)
    assert outcome.exit_code == 0, outcome.output
    assert json.loads(json.loads(outcome.stdout)["output"]) == output


def test_run_reports_code_errors_with_exit_1(tmp_path: Path) -> None:
    outcome = sandbox_run(tmp_path, "import os\n")
    assert outcome.exit_code == 1
    assert json.loads(outcome.stdout)["error"].startswith("ImportError: Import of 'os' is not allowed")


def test_bad_data_file_is_a_usage_error(tmp_path: Path) -> None:
    outcome = sandbox_run(tmp_path, "print(1)\n", "[1, 2]")
    assert outcome.exit_code == 2
    assert "top level must be an object" in outcome.output


def test_one_shot_run_refuses_what_the_server_refuses(tmp_path: Path) -> None:
    """The one-shot path (no spares, no heavy warm-up) keeps the language and the OS layer."""
    outcome = sandbox_run(tmp_path, "import math\nresult = open('/etc/passwd').read()\n")
    assert outcome.exit_code == 1
    assert json.loads(outcome.stdout)["error"].startswith("NameError: Call to 'open' is not allowed")
    outcome = sandbox_run(tmp_path, "import json\nresult = json.codecs.open('/etc/passwd').read()\n")
    assert outcome.exit_code == 1
    assert json.loads(outcome.stdout)["error"].startswith("AttributeError: 'codecs'")


def test_console_command_keeps_output_and_exit_status(tmp_path: Path) -> None:
    """The ``qdash`` script's ``main`` (the app, then an exit without the collector) still prints the
    whole result and exits with the command's status."""
    env = {**os.environ, "QDASH_CONFIG_DIR": str(tmp_path), "QDASH_DATA_DIR": str(tmp_path)}
    for source, status, output in (("result = 1 + 1\n", 0, "2"), ("result = 1 / 0\n", 1, None)):
        code = tmp_path / "code.py"
        code.write_text(source)
        done = subprocess.run(
            [sys.executable, "-m", "qdash.cli", "sandbox", "run", str(code)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == status, done.stderr
        assert json.loads(done.stdout)["output"] == output
