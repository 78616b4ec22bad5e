"""``python -m tests.support.wire_store``: the test double's command refuses what it cannot serve safely."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from qdash.settings import get_settings
from tests.support.wire_store.__main__ import app

runner = CliRunner()


@pytest.fixture(autouse=True)
def isolated_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("QDASH_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("QDASH_MONGO_URI", raising=False)
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def test_store_serve_refuses_a_non_loopback_host_and_a_mongo_uri(monkeypatch: pytest.MonkeyPatch) -> None:
    refused = runner.invoke(app, ["--host", "0.0.0.0", "--port", "0"])
    assert refused.exit_code == 2 and "--allow-remote" in refused.output
    monkeypatch.setenv("QDASH_MONGO_URI", "mongodb://127.0.0.1:27017")
    get_settings.cache_clear()
    pointed = runner.invoke(app, ["--port", "0"])
    assert pointed.exit_code == 2 and "unset it" in pointed.output


def test_store_serve_reports_a_busy_port_cleanly() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        result = runner.invoke(app, ["--port", str(busy.getsockname()[1])])
    assert result.exit_code == 1 and "pick another --port" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
