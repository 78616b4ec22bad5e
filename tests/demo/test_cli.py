"""``qdash demo seed`` on an in-memory embedded store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from qdash.cli import app
from qdash.db import close_database, open_database
from qdash.db.indexes import index_states
from qdash.settings import get_settings


@pytest.fixture
def memory_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("QDASH_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("QDASH_MONGO_URI", raising=False)
    monkeypatch.setenv("QDASH_DATABASE__EMBEDDED_PERSIST", "false")
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def test_seed_prints_counts_and_tokens(memory_store: None) -> None:
    result = CliRunner().invoke(app, ["demo", "seed", "--scale", "small", "--days", "1", "--seed", "5"])
    assert result.exit_code == 0, result.output
    assert "task_result_history" in result.output
    assert "demo-token-alice" in result.output and "demo-token-bob" in result.output


def test_unknown_scale_is_a_usage_error(memory_store: None) -> None:
    result = CliRunner().invoke(app, ["demo", "seed", "--scale", "huge"])
    assert result.exit_code == 2
    assert "unknown scale 'huge'" in result.output


def test_seed_leaves_the_store_indexed_as_serve_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QDASH_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("QDASH_MONGO_URI", raising=False)
    get_settings.cache_clear()
    try:
        result = CliRunner().invoke(app, ["demo", "seed", "--scale", "small", "--days", "1"])
        assert result.exit_code == 0, result.output
        db = open_database(get_settings().database)
        try:
            assert [s.collection for s in index_states(db) if s.missing] == []
        finally:
            close_database(db)
    finally:
        get_settings.cache_clear()


def test_if_empty_seeds_once_then_leaves_the_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docker compose's seed service runs ``--if-empty`` on every ``up``: the second run is a no-op."""
    monkeypatch.setenv("QDASH_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("QDASH_MONGO_URI", raising=False)
    get_settings.cache_clear()
    seed = ["demo", "seed", "--scale", "small", "--days", "1"]
    try:
        first = CliRunner().invoke(app, [*seed, "--if-empty"])
        assert first.exit_code == 0 and "demo-token-alice" in first.output, first.output
        again = CliRunner().invoke(app, [*seed, "--if-empty"])
        assert again.exit_code == 0, again.output
        assert "nothing seeded: database 'qdash' already holds data" in again.output
        refused = CliRunner().invoke(app, seed)
        assert refused.exit_code == 1 and "already has data" in refused.output
    finally:
        get_settings.cache_clear()
