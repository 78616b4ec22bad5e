"""The CLI while ``qdash serve`` holds the embedded store: a real server subprocess on a loopback port.

``qdash tools call`` and ``qdash ask`` go through the server's HTTP API (the server records its URL
and an operator token beside the lock); ``qdash demo seed`` and ``qdash db check`` refuse with what
to do (``qdash.route``). ``qdash review``
beside a server: ``tests/review/test_cli_beside_server.py``.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from qdash.db.server_record import SERVER_FILE, read_server
from tests.served import cli_env, one_chip_lab, run_qdash, seed_lab, served


def qdash(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_qdash(cli_env(data_dir), *args)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, int]]:
    """``qdash serve`` on a one-day lab; yields (data dir, port)."""
    data_dir = tmp_path_factory.mktemp("beside") / "data"
    seed_lab(data_dir, one_chip_lab(days=1))
    with served(data_dir) as port:
        yield data_dir, port
    assert not (data_dir / SERVER_FILE).exists(), "the server withdraws its record at shutdown"


def test_server_records_its_url_for_the_cli(server: tuple[Path, int]) -> None:
    data_dir, port = server
    record = read_server(data_dir)
    assert record is not None and record.url == f"http://127.0.0.1:{port}"
    assert (data_dir / SERVER_FILE).stat().st_mode & 0o077 == 0, "owner-only: it holds the operator token"


def test_tools_call_works_through_the_running_server(server: tuple[Path, int]) -> None:
    data_dir, port = server
    result = qdash(data_dir, "tools", "call", "get_qubit_params", "--args", '{"qid": "16"}')
    assert result.returncode == 0, result.stderr
    output = json.loads(result.stdout)
    assert output["qid"] == "16" and output["chip_id"] == "64Qv3" and "t1" in output["params"]
    assert "held by qdash serve" in result.stderr and f"http://127.0.0.1:{port}" in result.stderr


def test_tools_call_through_the_server_reports_an_unknown_user(server: tuple[Path, int]) -> None:
    result = qdash(
        server[0], "tools", "call", "get_qubit_params", "--args", '{"qid": "16"}', "--user", "nobody"
    )
    assert result.returncode == 1
    assert "error: No user 'nobody' in the database" in result.stderr and "Traceback" not in result.stderr


def test_ask_works_through_the_running_server(server: tuple[Path, int]) -> None:
    result = qdash(server[0], "ask", "Show me the T2-echo heatmap", "--json")
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["blocks"][0]["content"].startswith("**T2 echo heatmap**")  # the server's demo model
    assert [b["chart"]["data"][0]["type"] for b in answer["blocks"] if b["type"] == "chart"] == ["heatmap"]


@pytest.mark.parametrize(
    ("command", "why"),
    [
        (("demo", "seed", "--scale", "small"), "seeding rewrites the store"),
        (("db", "check"), "`qdash db check` reads the store in this process"),
    ],
)
def test_commands_that_open_the_store_themselves_say_what_to_do(
    server: tuple[Path, int], command: tuple[str, ...], why: str
) -> None:
    result = qdash(server[0], *command)
    assert result.returncode == 1 and not result.stdout
    said = " ".join(result.stderr.split())
    assert said.startswith(f"error: {why}") and "is held by qdash serve" in said
    assert "stop that server" in said and "run this command again" in said and "QDASH_MONGO_URI" in said
    assert "Traceback" not in said
