"""The service skeleton: lifespan (open once, index, seed when empty), /health, request ids, access log."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pymongo.database import Database

from qdash import __version__
from qdash.api import lifespan
from qdash.api.app import create_app
from qdash.db import close_database, open_database
from qdash.settings import Settings, load_settings


def _settings(tmp_path: Path, **database: Any) -> Settings:
    base = {"data_dir": str(tmp_path / "data"), "mongo_uri": None, "seed_demo_on_empty": False}
    return load_settings(database={**base, **database}, logging={"json": True})


def test_health_reports_mode_and_version(tmp_path: Path) -> None:
    with TestClient(create_app(_settings(tmp_path, embedded_persist=False))) as client:
        response = client.get("/health")
    assert response.status_code == 200
    assert response.json() == {
        "status": "ok",
        "database": {"mode": "embedded", "ok": True},
        "version": __version__,
    }


def test_health_is_503_with_a_reason_when_the_ping_fails(tmp_path: Path) -> None:
    db = open_database(_settings(tmp_path, embedded_persist=False).database)
    close_database(db)
    app = create_app(_settings(tmp_path), db=db)
    with TestClient(app) as client:
        response = client.get("/health")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable" and body["database"]["mode"] == "embedded"
    assert "ping failed" in body["database"]["error"]


def test_health_before_the_database_is_open(tmp_path: Path) -> None:
    client = TestClient(create_app(_settings(tmp_path)))  # no context manager: lifespan not run
    response = client.get("/health")
    assert response.status_code == 503
    assert "not open yet" in response.json()["database"]["error"]


def test_lifespan_opens_indexes_persists_and_releases(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    with TestClient(create_app(settings)) as client:
        db: Database[dict[str, Any]] = client.app.state.db  # type: ignore[attr-defined]
        assert "copilot_project_id_1_task_id_1" in db["task_result_history"].index_information()
        db["copilot_project_chat_session"].insert_one({"project_id": "p", "username": "u", "session_id": "s"})
    # The lock is released at shutdown and the session survives the restart.
    with TestClient(create_app(settings)) as client:
        db = client.app.state.db  # type: ignore[attr-defined]
        assert db["copilot_project_chat_session"].count_documents({"project_id": "p"}) == 1


def test_the_store_warms_up_off_the_loop_after_readiness_and_stops_before_it_closes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The embedded store's warm-up (db/warmup.py) runs in its own thread, /health answers while it
    still runs, and shutdown stops it before the store is closed."""
    events: list[str] = []

    def held_warm_up(db: Any, maps: Any, stop: Callable[[], bool]) -> dict[str, int]:
        try:
            asyncio.get_running_loop()
            events.append("on the event loop")
        except RuntimeError:
            events.append(f"in {threading.current_thread().name}")
        deadline = time.monotonic() + 10  # a start-up that waited for it fails, not hangs
        while not stop() and time.monotonic() < deadline:
            time.sleep(0.01)
        events.append("stopped" if stop() else "never stopped")
        return {}

    monkeypatch.setattr("qdash.db.warmup.warm_up", held_warm_up)
    real_close = lifespan.close_database
    monkeypatch.setattr(lifespan, "close_database", lambda db: (events.append("closed"), real_close(db)))
    with TestClient(create_app(_settings(tmp_path, embedded_persist=False))) as client:
        assert client.get("/health").status_code == 200
        warming = client.app.state.warm_up  # type: ignore[attr-defined]
        assert not warming.done.is_set()  # readiness did not wait for it
    assert events == ["in qdash-store-warm-up", "stopped", "closed"]


def test_injected_database_is_neither_opened_nor_closed(
    mongo_db: Database[dict[str, Any]], tmp_path: Path
) -> None:
    with TestClient(create_app(_settings(tmp_path), db=mongo_db)) as client:
        assert client.app.state.db is mongo_db  # type: ignore[attr-defined]
    mongo_db["still_open"].insert_one({"x": 1})


def test_demo_is_seeded_only_into_an_empty_embedded_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[Any] = []

    def fake_seed(db: Database[Any], spec: Any, config_dir: Any = None) -> Any:
        calls.append(spec)
        db["chip"].insert_one({"project_id": "proj-demo", "chip_id": "64Qv3"})
        return SimpleNamespace(total_documents=1)

    monkeypatch.setattr("qdash.demo.seed_demo", fake_seed)
    settings = _settings(tmp_path, seed_demo_on_empty=True)
    with TestClient(create_app(settings)):
        pass
    with TestClient(create_app(settings)):
        pass
    assert len(calls) == 1
    with TestClient(create_app(_settings(tmp_path / "other", seed_demo_on_empty=False))):
        pass
    assert len(calls) == 1


def test_request_id_is_echoed_generated_and_logged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with TestClient(create_app(_settings(tmp_path, embedded_persist=False))) as client:
        given = client.get("/health", headers={"X-Request-Id": "abc-123"})
        generated = client.get("/health")
        bogus = client.get("/health", headers={"X-Request-Id": "bad id\twith spaces"})
        missing = client.get("/no-such-path?api_key=sk-secretsecretsecret")
    assert given.headers["x-request-id"] == "abc-123"
    assert len(generated.headers["x-request-id"]) == 32
    assert bogus.headers["x-request-id"] != "bad id\twith spaces"
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines() if line.startswith("{")]
    access = [line for line in lines if line.get("logger_name") == "qdash.access"]
    not_found = next(line for line in access if line["path"] == "/no-such-path")
    assert not_found["status"] == 404 and not_found["level"] == "info"
    assert not_found["request_id"] == missing.headers["x-request-id"]
    assert "sk-secret" not in json.dumps(lines)
    assert all(line["level"] == "debug" for line in access if line["path"] == "/health")


@pytest.mark.parametrize(("override", "expected"), [(None, 4), (7, 7)])
def test_lifespan_sizes_the_blocking_pools_for_the_database(
    tmp_path: Path, override: int | None, expected: int
) -> None:
    import anyio.to_thread

    from qdash.engine import pool

    async def limiter_tokens() -> float:
        return anyio.to_thread.current_default_thread_limiter().total_tokens

    settings = _settings(tmp_path, embedded_persist=False).model_copy(
        update={"api": load_settings(api={"worker_threads": override}).api}
    )
    try:
        with TestClient(create_app(settings)) as client:
            assert client.portal is not None
            assert client.portal.call(limiter_tokens) == expected  # the embedded store: GIL-bound calls
            assert pool.tool_pool()._max_workers == expected
    finally:
        pool.set_tool_threads(pool.DEFAULT_THREADS)
