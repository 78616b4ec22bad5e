"""``qdash init``: the commented copilot.local.yaml loads, and uncommented holds every key of the model."""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any, Union, get_args, get_origin

import pytest
import yaml
from pydantic import BaseModel
from typer.testing import CliRunner

from qdash.cli import app
from qdash.commands.init import render_local_file
from qdash.settings import Settings, load_settings

runner = CliRunner()


@pytest.fixture(autouse=True)
def _no_location_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("QDASH_CONFIG_DIR", "QDASH_CONFIG", "QDASH_CONFIG_LOCAL", "QDASH_DATA_DIR"):
        monkeypatch.delenv(name, raising=False)


def _init(directory: Path, *extra: str) -> Path:
    result = runner.invoke(app, ["init", str(directory), *extra])
    assert result.exit_code == 0, result.output
    return directory / "copilot.local.yaml"


def _uncomment(text: str) -> str:
    """What a user gets by removing the leading ``# `` of every key line (``##`` notes stay)."""
    return "\n".join(line[2:] if line.startswith("# ") else line for line in text.splitlines())


def _as_dump(settings: Settings) -> dict[str, Any]:
    return settings.model_dump(exclude={"config_dir"})


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The model classes a field holds directly, as dict values or as list items."""
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType, dict, list):
        return [model for arg in get_args(annotation) for model in _models_in(arg)]
    return [annotation] if isinstance(annotation, type) and issubclass(annotation, BaseModel) else []


def _missing_keys(model: type[BaseModel], data: Any, where: str) -> list[str]:
    missing: list[str] = []
    for name, field in model.model_fields.items():
        if where == "" and name == "config_dir":
            continue
        key = field.alias or name
        if not isinstance(data, dict) or key not in data:
            missing.append(f"{where}{key}")
            continue
        value = data[key]
        origin = get_origin(field.annotation)
        if origin is dict:
            items = {f"{key}.{entry}": item for entry, item in value.items()}
        elif origin is list:
            items = {f"{key}[{index}]": item for index, item in enumerate(value)}
        else:
            items = {key: value}
        for inner in _models_in(field.annotation):
            for label, item in items.items():
                if item is None:  # an optional section left unset
                    continue
                missing += _missing_keys(inner, item, f"{where}{label}.")
    return missing


def _init_text() -> str:
    return render_local_file(Path("/nonexistent-config-dir"))


def test_the_written_file_loads_and_changes_nothing(tmp_path: Path) -> None:
    written = _init(tmp_path / "config")
    assert written.read_text(encoding="utf-8").startswith("## QDash Copilot local settings")
    assert yaml.safe_load(written.read_text(encoding="utf-8")) is None  # every key commented out
    assert _as_dump(load_settings(config_dir=tmp_path / "config")) == _as_dump(
        load_settings(config_dir=tmp_path)
    )


def test_uncommented_it_has_every_key_and_the_same_values(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # data_dir is written as 'var', relative to the working directory
    written = _init(tmp_path / "config")
    uncommented = _uncomment(written.read_text(encoding="utf-8"))
    data = yaml.safe_load(uncommented)
    assert _missing_keys(Settings, data, "") == []
    assert data["copilot"]["models"]["ollama"]["base_url"] == "http://localhost:11434/v1"
    written.write_text(uncommented, encoding="utf-8")
    assert _as_dump(load_settings(config_dir=tmp_path / "config")) == _as_dump(
        load_settings(config_dir=tmp_path)
    )


def test_the_key_check_catches_a_missing_nested_key() -> None:
    data = yaml.safe_load(_uncomment(_init_text()))
    del data["copilot"]["models"]["openai"]["api_style"]
    del data["logging"]["json"]
    assert _missing_keys(Settings, data, "") == ["copilot.models.openai.api_style", "logging.json"]


def test_values_follow_the_directorys_own_copilot_yaml(tmp_path: Path) -> None:
    (tmp_path / "copilot.yaml").write_text("api:\n  port: 6000\n", encoding="utf-8")
    data = yaml.safe_load(_uncomment(_init(tmp_path).read_text(encoding="utf-8")))
    assert data["api"]["port"] == 6000
    assert set(data["copilot"]["models"]) == {"openai"}


def test_an_existing_file_is_kept_unless_forced(tmp_path: Path) -> None:
    (tmp_path / "copilot.local.yaml").write_text("api:\n  port: 6003\n", encoding="utf-8")
    result = runner.invoke(app, ["init", str(tmp_path)])
    assert result.exit_code == 1
    assert "already exists; edit it, or pass --force" in result.output
    assert "6003" in (tmp_path / "copilot.local.yaml").read_text(encoding="utf-8")
    assert "6003" not in _init(tmp_path, "--force").read_text(encoding="utf-8")


def test_init_creates_a_missing_configured_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "lab-config"
    monkeypatch.setenv("QDASH_CONFIG_DIR", str(target))  # other commands refuse a missing directory
    result = runner.invoke(app, ["init"])
    assert result.exit_code == 0, result.output
    assert (target / "copilot.local.yaml").is_file()
    assert "QDASH_CONFIG_DIR" not in result.output  # already the directory qdash reads


def test_init_elsewhere_says_how_to_use_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["init", "elsewhere"])
    assert result.exit_code == 0, result.output
    assert f"QDASH_CONFIG_DIR={tmp_path / 'elsewhere'}" in result.output


def test_environment_values_are_not_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Variables may hold secrets (a MongoDB URI with a password); the file shows the files' values."""
    monkeypatch.setenv("QDASH_MONGO_URI", "mongodb://user:secret@db:27017")
    monkeypatch.setenv("QDASH_API__PORT", "7777")
    text = _init(tmp_path).read_text(encoding="utf-8")
    data = yaml.safe_load(_uncomment(text))
    assert data["api"]["port"] == 5715
    assert data["database"]["mongo_uri"] is None and "secret" not in text


def test_each_documented_key_carries_its_description() -> None:
    text = _init_text()
    documented = [
        (field.alias or name, field.description)
        for section in Settings.model_fields.values()
        if isinstance(section.annotation, type) and issubclass(section.annotation, BaseModel)
        for name, field in section.annotation.model_fields.items()
        if field.description
    ]
    assert len(documented) >= 2
    for key, description in documented:
        first = description.replace("``", "`").splitlines()[0]
        assert f"## {key}: {first}" in text, key
