"""Where configuration and data come from: packaged defaults, overridden file by file by a config dir."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from qdash.config_files import describe_sources, packaged_file
from qdash.copilot.prompts import load_task_knowledge
from qdash.models import load_topology
from qdash.settings import ConfigError, load_settings


@pytest.fixture(autouse=True)
def _no_location_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("QDASH_CONFIG_DIR", "QDASH_CONFIG", "QDASH_CONFIG_LOCAL", "QDASH_DATA_DIR"):
        monkeypatch.delenv(name, raising=False)


def _packaged_aliases() -> set[str]:
    packaged = yaml.safe_load(packaged_file("copilot.yaml").read_text(encoding="utf-8"))
    aliases = set(packaged["copilot"]["models"])
    assert {"openai", "ollama"} <= aliases
    return aliases


def test_an_empty_config_dir_uses_the_packaged_files(tmp_path: Path) -> None:
    settings = load_settings(config_dir=tmp_path)
    assert set(settings.copilot.models) == _packaged_aliases()
    assert settings.copilot.suggestions
    assert load_topology("square-lattice-mux-64", tmp_path).num_qubits == 64
    assert "CheckT1" in load_task_knowledge(tmp_path)


def test_a_config_file_replaces_the_packaged_file_of_that_name(tmp_path: Path) -> None:
    (tmp_path / "copilot.yaml").write_text("api:\n  port: 6000\n", encoding="utf-8")
    settings = load_settings(config_dir=tmp_path)
    assert settings.api.port == 6000
    assert set(settings.copilot.models) == {"openai"}  # the whole file was replaced, not merged
    assert settings.copilot.suggestions == []


def test_precedence_env_over_local_over_main_over_packaged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "copilot.yaml").write_text("api:\n  port: 6000\n  heartbeat_s: 3\n", encoding="utf-8")
    (tmp_path / "copilot.local.yaml").write_text("api:\n  port: 6001\n  host: 0.0.0.0\n", encoding="utf-8")
    monkeypatch.setenv("QDASH_API__PORT", "6002")
    api = load_settings(config_dir=tmp_path).api
    assert (api.port, api.host, api.heartbeat_s) == (6002, "0.0.0.0", 3.0)
    monkeypatch.delenv("QDASH_API__PORT")
    assert load_settings(config_dir=tmp_path).api.port == 6001


def test_topologies_are_overridden_and_added_one_file_at_a_time(tmp_path: Path) -> None:
    folder = tmp_path / "topologies"
    folder.mkdir()
    packaged = packaged_file("topologies/linear-16.yaml").read_text(encoding="utf-8")
    (folder / "linear-16.yaml").write_text(packaged.replace("name: ", "name: Our bench "), encoding="utf-8")
    (folder / "linear-4.yaml").write_text(
        "grid_size: 4\nnum_qubits: 4\nqubits:\n"
        + "".join(f"  {q}: {{row: 0, col: {q}}}\n" for q in range(4))
        + "couplings:\n- [0, 1]\n",
        encoding="utf-8",
    )
    assert load_topology("linear-16", tmp_path).name.startswith("Our bench ")
    assert load_topology("linear-4", tmp_path).num_qubits == 4
    assert load_topology("heavy-hex-27", tmp_path).num_qubits == 27  # still the packaged one
    assert not load_topology("linear-16", tmp_path / "elsewhere").name.startswith("Our bench ")


def test_task_knowledge_file_replaces_the_packaged_one(tmp_path: Path) -> None:
    (tmp_path / "task_knowledge.yaml").write_text(
        "CheckT1:\n  summary: Our own T1 procedure.\n", encoding="utf-8"
    )
    knowledge = load_task_knowledge(tmp_path)
    assert set(knowledge) == {"CheckT1"}
    assert knowledge["CheckT1"].summary == "Our own T1 procedure."


def test_config_dir_is_env_then_dot_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work, named = tmp_path / "work", tmp_path / "named"
    (work / "config").mkdir(parents=True)
    named.mkdir()
    (work / "config" / "copilot.local.yaml").write_text("api:\n  port: 6001\n", encoding="utf-8")
    (named / "copilot.local.yaml").write_text("api:\n  port: 6002\n", encoding="utf-8")
    monkeypatch.chdir(work)
    assert load_settings().api.port == 6001
    assert load_settings().config_dir == work / "config"
    monkeypatch.setenv("QDASH_CONFIG_DIR", str(named))
    assert load_settings().api.port == 6002


def test_without_any_config_dir_everything_is_packaged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    settings = load_settings()
    assert set(settings.copilot.models) == _packaged_aliases()
    assert "there is no config directory" in describe_sources(settings.config_dir, {})


def test_a_named_config_dir_must_exist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QDASH_CONFIG_DIR", str(tmp_path / "missing"))
    with pytest.raises(ConfigError, match=r"does not exist; create it with `qdash init .*missing`"):
        load_settings()


def test_data_defaults_to_var_under_the_working_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert load_settings().database.data_dir == tmp_path / "var"
    monkeypatch.setenv("QDASH_DATA_DIR", "lab-data")
    assert load_settings().database.data_dir == tmp_path / "lab-data"
    monkeypatch.setenv("QDASH_DATA_DIR", str(tmp_path / "abs"))
    assert load_settings().database.data_dir == tmp_path / "abs"


def test_doctor_line_names_the_overrides(tmp_path: Path) -> None:
    (tmp_path / "topologies").mkdir()
    (tmp_path / "topologies" / "linear-4.yaml").write_text("grid_size: 4\n", encoding="utf-8")
    (tmp_path / "copilot.local.yaml").write_text("{}\n", encoding="utf-8")
    line = describe_sources(tmp_path, {"QDASH_ACTIONS__ENABLED": "true", "HOME": "/root"})
    assert line == (
        f"packaged defaults, overridden by {tmp_path}: copilot.local.yaml, topologies/linear-4.yaml; "
        "QDASH_* variables set: QDASH_ACTIONS__ENABLED"
    )


def test_doctor_line_for_a_config_dir_without_configuration_files(tmp_path: Path) -> None:
    """A checkout's config/ holds only its README: the line names the folder and what it holds (it
    said "no overrides in …/config", as for a folder that is not there, and "and QDASH_* variables"
    with none set)."""
    config = tmp_path / "config"
    assert describe_sources(config, {}) == (
        f"packaged defaults (there is no config directory {config}); no QDASH_* variables set"
    )
    config.mkdir()
    assert describe_sources(config, {}).startswith(
        f"packaged defaults (the config directory {config} is empty)"
    )
    (config / "README.md").write_text("# overrides go here\n", encoding="utf-8")
    assert describe_sources(config, {}) == (
        f"packaged defaults (the config directory {config} holds no configuration file, only README.md); "
        "no QDASH_* variables set"
    )
    (config / "copilot.local.yml").write_text("{}\n", encoding="utf-8")  # misspelt: not read
    assert "holds no configuration file, only README.md, copilot.local.yml)" in describe_sources(config, {})


def test_yaml_errors_name_the_file(tmp_path: Path) -> None:
    broken = tmp_path / "task_knowledge.yaml"
    broken.write_text("CheckT1:\n  summary: [unclosed\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"task_knowledge\.yaml: not valid YAML"):
        load_task_knowledge(tmp_path)
    (tmp_path / "copilot.local.yaml").write_text("api: {port: 1\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"copilot\.local\.yaml: not valid YAML"):
        load_settings(config_dir=tmp_path)


def test_one_scoring_threshold_can_be_overridden_alone(tmp_path: Path) -> None:
    """``scoring.t1.good`` alone changes that number; the rest of t1 and the other metrics stay."""
    defaults = load_settings(config_dir=tmp_path).scoring
    (tmp_path / "copilot.local.yaml").write_text("scoring:\n  t1:\n    good: 60\n", encoding="utf-8")
    scoring = load_settings(config_dir=tmp_path).scoring
    assert scoring["t1"].good == 60
    assert scoring["t1"].model_dump(exclude={"good"}) == defaults["t1"].model_dump(exclude={"good"})
    assert set(scoring) == set(defaults) and scoring["t2_echo"] == defaults["t2_echo"]
    (tmp_path / "copilot.local.yaml").write_text("scoring:\n  t1:\n    good: 500\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"scoring\.t1: thresholds must satisfy"):
        load_settings(config_dir=tmp_path)
    (tmp_path / "copilot.local.yaml").write_text("scoring:\n  new_metric:\n    good: 1\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"scoring\.new_metric\.unit"):
        load_settings(config_dir=tmp_path)
