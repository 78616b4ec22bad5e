"""The ``qdash`` command: config errors exit 2 without a traceback, ``doctor`` checks, ``serve`` wiring."""

from __future__ import annotations

import http.server
import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from qdash.cli import app
from qdash.db import close_database, open_database
from qdash.db.server_record import advertise_server, withdraw_server
from qdash.settings import DatabaseSettings, get_settings

runner = CliRunner()


@pytest.fixture(autouse=True)
def isolated_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Each test writes its own config file; the cached process settings are reset around it."""
    config = tmp_path / "copilot.yaml"
    config.write_text("{}\n", encoding="utf-8")
    monkeypatch.setenv("QDASH_CONFIG", str(config))
    monkeypatch.setenv("QDASH_CONFIG_LOCAL", str(tmp_path / "none.yaml"))
    monkeypatch.setenv("QDASH_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("QDASH_MONGO_URI", raising=False)
    get_settings.cache_clear()
    yield config
    get_settings.cache_clear()


class _Ollama(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = json.dumps({"version": "0.6.0"} if self.path == "/api/version" else {"data": [{}, {}]})
        self.send_response(200 if self.path in ("/api/version", "/v1/models") else 404)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *_args: Any) -> None:
        pass


@pytest.fixture
def model_server() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Ollama)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_config_error_exits_2_with_the_message(isolated_config: Path) -> None:
    isolated_config.write_text("database:\n  nmae: x\n", encoding="utf-8")
    result = runner.invoke(app, ["doctor"])
    assert result.exit_code == 2
    assert "database.nmae: unknown key" in result.output
    assert "Traceback" not in result.output


def test_invalid_yaml_exits_2(isolated_config: Path) -> None:
    isolated_config.write_text("database: [unclosed\n", encoding="utf-8")
    result = runner.invoke(app, ["version"])
    assert result.exit_code == 2
    assert "not valid YAML" in result.output


def run_doctor(config: Path, default: str, *models: str, demo: bool = True) -> Result:
    """``qdash doctor`` on a config whose ``copilot.models`` are ``models`` (YAML ``alias: {...}``);
    ``demo=False`` turns the demo-model fallback off."""
    lines = ["copilot:", *([] if demo else ["  demo_when_no_model: false"]), f"  default_model: {default}"]
    lines += ["  models:", *(f"    {model}" for model in models)]
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return runner.invoke(app, ["doctor"])


def test_doctor_all_ok(isolated_config: Path, model_server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every model is contacted: OpenAI itself (here: its URL pointed at the local server), an
    ``openai`` model on a custom base_url, a compatible server and Ollama."""
    monkeypatch.setenv("DOCTOR_TEST_KEY", "sk-should-never-be-printed")
    monkeypatch.setattr("qdash.commands.doctor.OPENAI_URL", f"{model_server}/v1")
    result = run_doctor(
        isolated_config,
        "local",
        f"local: {{provider: ollama, name: qwen3:8b, base_url: '{model_server}/v1', api_key_env: null}}",
        f"vllm: {{provider: openai_compatible, name: m, base_url: '{model_server}/v1'}}",
        "cloud: {provider: openai, name: gpt-5-mini, api_key_env: DOCTOR_TEST_KEY}",
        f"gateway: {{provider: openai, name: g, base_url: '{model_server}/v1', api_key_env: null}}",
    )
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert [line[:4] for line in lines] == ["OK  "] * 6
    assert f"embedded; no embedded database in {isolated_config.parent / 'data'} yet" in lines[1]
    assert "(version 0.6.0)" in lines[2] and "(2 models)" in lines[3]
    assert "DOCTOR_TEST_KEY is set; GET" in lines[4] and "/v1/models answered (2 models)" in lines[4]
    assert f"GET {model_server}/v1/models answered" in lines[5]
    assert "sk-should-never" not in result.output


def test_doctor_contacts_an_openai_model_on_a_custom_base_url(isolated_config: Path) -> None:
    dead = f"http://127.0.0.1:{_closed_port()}/v1"
    gateway = f"gateway: {{provider: openai, name: g, base_url: '{dead}', api_key_env: null}}"
    result = run_doctor(isolated_config, "gateway", gateway, demo=False)
    assert result.exit_code == 1
    assert f"FAIL model gateway (openai g): GET {dead}/models failed" in result.output
    assert "correct copilot.models.gateway.base_url" in result.output


def test_doctor_fails_on_required_checks_only(
    isolated_config: Path, model_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DOCTOR_TEST_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    dead = f"http://127.0.0.1:{_closed_port()}"
    result = run_doctor(
        isolated_config,
        "cloud",
        "cloud: {provider: openai, name: gpt-5-mini, api_key_env: DOCTOR_TEST_KEY}",
        f"local: {{provider: ollama, name: q, base_url: '{dead}', api_key_env: null}}",
        demo=False,
    )
    assert result.exit_code == 1
    assert "FAIL model cloud (openai gpt-5-mini): DOCTOR_TEST_KEY is not set; export" in result.output
    assert "WARN model local (ollama q) (optional)" in result.output and "ollama serve" in result.output
    assert "demo model" not in result.output  # copilot.demo_when_no_model: false (below: the default)
    # Only an optional check failing: success.
    monkeypatch.setenv("DOCTOR_TEST_KEY", "x")
    monkeypatch.setattr("qdash.commands.doctor.OPENAI_URL", f"{model_server}/v1")
    result = runner.invoke(app, ["doctor"])
    assert result.exit_code == 0 and "demo model" not in result.output


def test_doctor_passes_the_demo_setup_and_creates_nothing(
    isolated_config: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No key, no Ollama: the demo model answers, so the set-up works (exit 0, WARN lines with the fix).
    Run in an empty working directory with the default data directory: nothing is written there."""
    work = tmp_path / "empty"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.delenv("QDASH_DATA_DIR")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    dead = f"http://127.0.0.1:{_closed_port()}/v1"  # no Ollama, whatever runs on this machine
    result = run_doctor(
        isolated_config,
        "openai",
        "openai: {provider: openai, name: gpt-5-mini, api_key_env: OPENAI_API_KEY}",
        f"ollama: {{provider: ollama, name: qwen3:8b, base_url: '{dead}', api_key_env: null}}",
    )
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert [line[:4] for line in lines] == ["OK  ", "OK  ", "WARN", "WARN", "OK  "], result.output
    assert "OPENAI_API_KEY is not set; export OPENAI_API_KEY=<your key>; until then the demo" in lines[2]
    assert "(optional)" in lines[3] and lines[4].startswith("OK   demo model: no configured model answers")
    assert f"no embedded database in {Path('var').resolve()} yet" in lines[1]
    assert runner.invoke(app, ["db", "check"]).exit_code == 0
    assert list(work.iterdir()) == []


def test_doctor_names_a_config_dir_that_holds_only_its_readme(
    isolated_config: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As a checkout's ``config/`` is: the folder is there, and none of its files is configuration."""
    config = tmp_path / "work" / "config"
    config.mkdir(parents=True)
    (config / "README.md").write_text("# config/ — your overrides\n", encoding="utf-8")
    monkeypatch.chdir(config.parent)
    dead = f"http://127.0.0.1:{_closed_port()}/v1"
    result = run_doctor(
        isolated_config,
        "local",
        f"local: {{provider: ollama, name: q, base_url: '{dead}', api_key_env: null}}",
    )
    files, variables = result.output.splitlines()[0].split("; ")
    assert files == (
        f"OK   config: packaged defaults (the config directory {config} holds no configuration file, "
        "only README.md)"
    )
    assert variables.startswith("QDASH_* variables set: QDASH_CONFIG, QDASH_CONFIG_LOCAL, QDASH_DATA_DIR")


@pytest.mark.parametrize(
    ("command", "empty"),
    [
        (["review", "list"], "No reviews"),
        (["feedback", "list"], "No thumbs-down answers."),
        (["actions", "list"], "No lab actions"),
    ],
)
def test_a_listing_in_an_empty_directory_creates_nothing_and_says_how_to_start(
    isolated_config: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str], empty: str
) -> None:
    """A read-only listing never seeds the demo lab (nor creates ``./var``): it says there is no
    store yet, how to get one, and that there is nothing to list; exit 0."""
    work = tmp_path / "empty"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.delenv("QDASH_DATA_DIR")
    result = runner.invoke(app, command)
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert f"no embedded database in {Path('var').resolve()} yet" in said
    assert "qdash demo seed" in said and "QDASH_MONGO_URI" in said
    assert empty in said
    assert list(work.iterdir()) == []


def test_exporting_a_review_in_an_empty_directory_creates_nothing(
    isolated_config: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "empty"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.delenv("QDASH_DATA_DIR")
    result = runner.invoke(app, ["review", "export", "r-1"])
    assert result.exit_code == 1
    said = " ".join(result.output.split())
    assert "no embedded database in" in said and "error: no review r-1 to export" in said
    assert list(work.iterdir()) == []


def test_doctor_unreachable_mongodb(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QDASH_MONGO_URI", f"mongodb://127.0.0.1:{_closed_port()}/?directConnection=true")
    monkeypatch.setenv("QDASH_DATABASE__SERVER_SELECTION_TIMEOUT_MS", "300")
    result = runner.invoke(app, ["doctor"])
    assert result.exit_code == 1
    assert (
        "FAIL database: cannot reach MongoDB" in result.output
        and "docker compose up -d mongo" in result.output
    )


def test_commands_log_info_lines_only_with_verbose(tmp_path: Path) -> None:
    """A command's output comes first: INFO lines (the store opened) only with ``-v``."""
    close_database(open_database(DatabaseSettings(data_dir=tmp_path / "data")))
    quiet = runner.invoke(app, ["db", "check"])
    assert "embedded database opened" not in quiet.output and "collection" in quiet.output
    verbose = runner.invoke(app, ["-v", "db", "check"])
    assert "embedded database opened" in verbose.output


def test_doctor_counts_documents_and_accepts_a_running_server(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    db = open_database(DatabaseSettings(data_dir=data_dir))
    db["qubit"].insert_many([{"project_id": "p", "qid": str(i)} for i in range(3)])
    result = runner.invoke(app, ["doctor"])
    # Held by a process that is not a server (another command): `qdash serve` cannot start now.
    assert "FAIL database: the embedded database is in use by PID" in result.output
    advertise_server(data_dir, "http://127.0.0.1:5715")  # as `qdash serve` does once it holds the lock
    result = runner.invoke(app, ["doctor"])
    assert "OK   database: embedded, held by a running server (PID" in result.output
    withdraw_server(data_dir)
    close_database(db)
    result = runner.invoke(app, ["doctor"])
    assert "3 documents [qubit 3]" in result.output


def test_serve_runs_uvicorn_on_the_factory(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr("uvicorn.run", lambda target, **kw: calls.append({"target": target, **kw}))
    monkeypatch.setattr(
        "qdash.commands.serve._cannot_bind", lambda host, port: None
    )  # 5715 may be in use here
    assert runner.invoke(app, ["serve"]).exit_code == 0
    assert runner.invoke(app, ["serve", "--host", "0.0.0.0", "--port", "8000", "--reload"]).exit_code == 0
    assert calls[0]["target"] == "qdash.api.app:create_app" and calls[0]["factory"] is True
    assert (calls[0]["host"], calls[0]["port"], calls[0]["reload"]) == ("127.0.0.1", 5715, False)
    assert (calls[1]["host"], calls[1]["port"], calls[1]["reload"]) == ("0.0.0.0", 8000, True)


def test_serve_workers_need_a_shared_database(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr("uvicorn.run", lambda target, **kw: calls.append(kw))
    monkeypatch.setattr("qdash.commands.serve._cannot_bind", lambda host, port: None)
    monkeypatch.delenv("QDASH_MONGO_URI", raising=False)
    refused = runner.invoke(app, ["serve", "--workers", "2"])
    assert refused.exit_code == 2 and "QDASH_MONGO_URI" in refused.output and not calls
    assert "docker compose up -d mongo" in refused.output
    monkeypatch.setenv("QDASH_MONGO_URI", "mongodb://127.0.0.1:1")
    get_settings.cache_clear()
    monkeypatch.setattr("qdash.db.preflight", lambda database: None)  # no server needed to decide
    assert runner.invoke(app, ["serve", "--workers", "3"]).exit_code == 0
    assert calls[0]["workers"] == 3


def test_serve_refuses_a_locked_data_dir_cleanly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("uvicorn.run", lambda *a, **kw: pytest.fail("must not start"))
    monkeypatch.setattr("qdash.commands.serve._cannot_bind", lambda host, port: None)
    db = open_database(DatabaseSettings(data_dir=tmp_path / "data"))
    try:
        result = runner.invoke(app, ["serve"])
    finally:
        close_database(db)
    assert result.exit_code == 1
    assert "the embedded database is in use by PID" in result.output
    assert "Traceback" not in result.output


def test_serve_end_to_end(tmp_path: Path) -> None:
    """The real command: /health answers, SIGINT shuts down cleanly and releases the data dir."""
    import os
    import signal
    import subprocess
    import sys
    import time
    import urllib.request

    port = _closed_port()
    env = {
        **os.environ,
        "QDASH_DATA_DIR": str(tmp_path / "data"),
        "QDASH_DATABASE__SEED_DEMO_ON_EMPTY": "false",
        "QDASH_LOGGING__JSON": "true",
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "qdash.cli", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    body: dict[str, Any] = {}
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None and not body:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1) as response:
                    body = json.loads(response.read())
            except OSError:
                time.sleep(0.1)
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert body["status"] == "ok" and body["database"]["mode"] == "embedded"
    assert proc.returncode == 0, err
    assert '"event": "database ready"' in err
    close_database(open_database(DatabaseSettings(data_dir=tmp_path / "data")))


def test_serve_names_a_busy_port_before_opening_the_database(monkeypatch: pytest.MonkeyPatch) -> None:
    """The port is checked first: no database work, and the message names the fix (``--port``)."""
    monkeypatch.setattr("uvicorn.run", lambda *a, **kw: pytest.fail("must not start"))
    monkeypatch.setattr("qdash.db.preflight", lambda database: pytest.fail("database opened first"))
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = runner.invoke(app, ["serve", "--port", str(port)])
    assert result.exit_code == 1
    assert f"port {port} on 127.0.0.1 is already in use" in result.output
    assert f"qdash serve --port {port + 1}" in result.output and "Traceback" not in result.output


def test_bad_default_model_names_the_aliases_not_the_section(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QDASH_COPILOT__DEFAULT_MODEL", "gpt-99")
    result = runner.invoke(app, ["version"])
    assert result.exit_code == 2
    assert "copilot: default_model 'gpt-99' is not one of the configured models ['openai']" in result.output
    assert "thinking_language" not in result.output and "Value error" not in result.output


@pytest.mark.parametrize("columns", ["40", "80", "200"])
def test_a_usage_error_is_one_unwrapped_line_at_any_terminal_width(columns: str) -> None:
    """The message a user copies (a path, a model name) never depends on the terminal's width."""
    missing = "/tmp/" + "a-rather-long-directory-name/" * 4 + "missing"
    result = runner.invoke(app, ["eval", "--replay", missing], env={"COLUMNS": columns})
    assert result.exit_code == 2
    assert f"Error: Invalid value for --replay: {missing} is not a directory of recordings\n" in result.output
