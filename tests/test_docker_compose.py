"""docker-compose.yml and Dockerfile are well-formed and wired as the README says (no engine runs here).

Static checks only: the images are pinned, the API image is built once and shared, the demo lab is
seeded by a one-shot service the replicas wait for, and the settings the API containers load from
their environment point the packaged ``ollama`` alias at the ``ollama`` service.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from qdash.cli import app
from qdash.settings import load_settings

ROOT = Path(__file__).resolve().parents[1]
API_IMAGE_USERS = ("seed", "api", "api-2")


def _compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))
    return loaded


def _services() -> dict[str, Any]:
    services: dict[str, Any] = _compose()["services"]
    return services


def _version() -> str:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return str(project["version"])


def test_mongo_7_with_a_healthcheck() -> None:
    mongo = _services()["mongo"]
    assert re.fullmatch(r"mongo:7\.0\.\d+", mongo["image"]), mongo["image"]
    assert "ping" in " ".join(mongo["healthcheck"]["test"])
    assert any(volume.endswith(":/data/db") for volume in mongo["volumes"])


def test_every_image_is_pinned_to_a_version() -> None:
    for name, service in _services().items():
        repository, _, tag = service["image"].partition(":")
        assert re.fullmatch(r"\d+(\.\d+)+", tag), f"{name}: pin {repository} to a version, not {tag!r}"
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    for base in re.findall(r"^FROM (\S+)", dockerfile, flags=re.MULTILINE):
        assert re.fullmatch(r"python:3\.11\.\d+-slim-\w+", base), base


def test_the_api_image_is_built_once_and_shared() -> None:
    services = _services()
    builders = [name for name, service in services.items() if "build" in service]
    assert builders == ["api"]
    assert services["api"]["build"] == "."
    assert {services[name]["image"] for name in API_IMAGE_USERS} == {f"qdash-copilot:{_version()}"}


def test_replicas_wait_for_mongo_and_the_seed() -> None:
    services = _services()
    for name in ("api", "api-2"):
        api = services[name]  # the merge key (<<: *api) is resolved by the YAML loader
        assert api["depends_on"]["mongo"]["condition"] == "service_healthy"
        assert api["depends_on"]["seed"]["condition"] == "service_completed_successfully"
        assert api["environment"]["QDASH_MONGO_URI"] == "mongodb://mongo:27017"
        assert "/health" in " ".join(api["healthcheck"]["test"])
    assert services["api"]["ports"] == ["5715:5715"]
    assert services["api-2"]["ports"] == ["5716:5715"]


def test_the_seed_service_offers_the_demo_lab_once() -> None:
    seed = _services()["seed"]
    assert seed["command"] == ["qdash", "demo", "seed", "--if-empty"]
    assert seed["restart"] == "no"
    assert seed["depends_on"]["mongo"]["condition"] == "service_healthy"
    assert seed["environment"]["QDASH_MONGO_URI"] == "mongodb://mongo:27017"
    help_text = CliRunner().invoke(app, ["demo", "seed", "--help"]).output
    assert "--if-empty" in help_text  # the command the service runs exists


def test_the_ollama_alias_reaches_the_ollama_service_from_the_api(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    services = _services()
    for variable in ("QDASH_CONFIG_DIR", "QDASH_CONFIG", "QDASH_CONFIG_LOCAL"):
        monkeypatch.delenv(variable, raising=False)
    for variable, value in services["api"]["environment"].items():
        monkeypatch.setenv(variable, str(value))
    settings = load_settings(config_dir=tmp_path)  # the packaged copilot.yaml + the container's env
    ollama = settings.copilot.models["ollama"]
    assert (ollama.provider, ollama.api_style) == ("ollama", "chat_completions")  # merged, not replaced
    assert ollama.base_url == "http://ollama:11434/v1"
    assert "11434:11434" in services["ollama"]["ports"]
    pull = services["ollama-pull"]
    assert pull["entrypoint"] == ["ollama", "pull", ollama.name]
    assert pull["environment"]["OLLAMA_HOST"] == "http://ollama:11434"
    assert pull["depends_on"]["ollama"]["condition"] == "service_healthy"
    assert pull["image"] == services["ollama"]["image"]


def test_ollama_only_with_its_profile() -> None:
    services = _services()
    assert services["ollama"]["profiles"] == services["ollama-pull"]["profiles"] == ["ollama"]
    assert all("profiles" not in services[name] for name in ("mongo", *API_IMAGE_USERS))
    assert set(_compose()["volumes"]) == {"mongo-data", "ollama-data"}


def test_dockerfile_installs_the_built_wheel_and_serves() -> None:
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    stages = re.split(r"^FROM ", text, flags=re.MULTILINE)[1:]
    assert len(stages) == 2, "a wheel-building stage, then the image that installs the wheel"
    build, final = stages
    assert "pip wheel --no-cache-dir --no-deps --wheel-dir /dist ." in build
    assert "pip install --no-cache-dir /dist/*.whl" in final
    assert "COPY src" not in final and " -e " not in text  # the image runs the installed package
    assert 'CMD ["qdash", "serve", "--host", "0.0.0.0", "--port", "5715"]' in final
    assert "QDASH_CONFIG_DIR=/app/config" in final and "QDASH_DATA_DIR=/data" in final
