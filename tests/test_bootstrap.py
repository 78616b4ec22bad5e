"""``prepare_database``: open, index, seed only an empty embedded store, close on failure."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from pymongo.database import Database

from qdash.bootstrap import is_empty, prepare_database, seed_demo_if_empty
from qdash.db import close_database, open_database
from qdash.settings import Settings, load_settings


def _settings(tmp_path: Path, **database: Any) -> Settings:
    return load_settings(database={"data_dir": str(tmp_path / "data"), "mongo_uri": None, **database})


def _fake_seed(calls: list[Any]) -> Any:
    def seed(db: Database[Any], spec: Any, config_dir: Any = None) -> Any:
        calls.append((spec, config_dir))
        db["chip"].insert_one({"project_id": "proj-demo", "chip_id": "64Qv3"})
        return SimpleNamespace(total_documents=1)

    return seed


def test_is_empty_ignores_indexes(mongo_db: Database[dict[str, Any]]) -> None:
    mongo_db["c"].create_index("x")
    assert is_empty(mongo_db)
    mongo_db["c"].insert_one({"x": 1})
    assert not is_empty(mongo_db)


def test_prepare_seeds_an_empty_embedded_store_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Any] = []
    monkeypatch.setattr("qdash.demo.seed_demo", _fake_seed(calls))
    settings = _settings(tmp_path)
    db = prepare_database(settings)
    assert "copilot_project_id_1_chip_id_1" in db["chip"].index_information()
    close_database(db)
    close_database(prepare_database(settings))
    assert len(calls) == 1 and calls[0][1] == settings.config_dir


def test_no_seed_when_disabled_or_on_a_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Any] = []
    monkeypatch.setattr("qdash.demo.seed_demo", _fake_seed(calls))
    db = open_database(_settings(tmp_path, embedded_persist=False).database)
    assert seed_demo_if_empty(db, _settings(tmp_path, seed_demo_on_empty=False), was_empty=True) == 0
    monkeypatch.setattr("qdash.bootstrap.database_mode", lambda _db: "mongodb")
    assert seed_demo_if_empty(db, _settings(tmp_path), was_empty=True) == 0
    assert calls == []


def test_failed_start_closes_the_database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_args: Any, **_kw: Any) -> Any:
        raise RuntimeError("generator bug")

    monkeypatch.setattr("qdash.demo.seed_demo", broken)
    settings = _settings(tmp_path)
    with pytest.raises(RuntimeError, match="generator bug"):
        prepare_database(settings)
    close_database(open_database(settings.database))  # the lock was released


def test_start_up_does_not_import_matplotlib(tmp_path: Path) -> None:
    """matplotlib (~40 MiB, ~0.5 s) loads only when a figure is drawn, not at server start."""
    script = (
        "import sys\n"
        "from fastapi.testclient import TestClient\n"
        "from qdash.api.app import create_app\n"
        "from qdash.settings import get_settings\n"
        "with TestClient(create_app(get_settings())) as client:\n"
        "    assert client.get('/health').status_code == 200\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'matplotlib'))\n"
    )
    env = {
        **os.environ,
        "QDASH_DATA_DIR": str(tmp_path),
        "QDASH_DATABASE__SEED_DEMO_ON_EMPTY": "false",
        "QDASH_LOGGING__LEVEL": "WARNING",
    }
    env.pop("QDASH_MONGO_URI", None)
    done = subprocess.run(
        [sys.executable, "-c", script],
        check=False,
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"
