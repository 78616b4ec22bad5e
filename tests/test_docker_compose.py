"""docker-compose.yml and Dockerfile are well-formed and wired as the README says (no engine runs here)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]


def _compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))
    return loaded


def test_mongo_7_with_a_healthcheck() -> None:
    mongo = _compose()["services"]["mongo"]
    assert mongo["image"] == "mongo:7"
    assert "ping" in " ".join(mongo["healthcheck"]["test"])
    assert any(volume.endswith(":/data/db") for volume in mongo["volumes"])


def test_api_builds_and_waits_for_a_healthy_mongo() -> None:
    api = _compose()["services"]["api"]  # the merge key (<<: *api) is resolved by the YAML loader
    assert api["build"] == "."
    assert api["depends_on"]["mongo"]["condition"] == "service_healthy"
    assert api["environment"]["QDASH_MONGO_URI"] == "mongodb://mongo:27017"
    assert api["ports"] == ["5715:5715"]
    assert "/health" in " ".join(api["healthcheck"]["test"])


def test_ollama_only_with_its_profile() -> None:
    services = _compose()["services"]
    assert services["ollama"]["profiles"] == ["ollama"]
    assert all("profiles" not in services[name] for name in ("mongo", "api"))
    assert set(_compose()["volumes"]) == {"mongo-data", "ollama-data"}


def test_dockerfile_installs_the_package_and_serves() -> None:
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert "pip install --no-cache-dir ." in text
    assert 'CMD ["qdash", "serve", "--host", "0.0.0.0", "--port", "5715"]' in text
    assert "QDASH_CONFIG_DIR=/app/config" in text
