"""Configuration loading: defaults, overrides, and errors that name the key and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from qdash.settings import ConfigError, load_settings


def test_defaults_load_and_scoring_is_in_stored_units(tmp_path: Path) -> None:
    settings = load_settings(config_dir=tmp_path)
    assert settings.scoring["t1"].unit == "μs"
    assert settings.scoring["anharmonicity"].higher_is_better is False
    assert settings.database.mongo_uri is None


def test_unknown_key_and_bad_value_are_named(tmp_path: Path) -> None:
    (tmp_path / "copilot.yaml").write_text("sandbox:\n  wall_s: -1\n  bogus: 1\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_settings(config_dir=tmp_path)
    text = str(info.value)
    assert "sandbox.wall_s" in text
    assert "sandbox.bogus: unknown key" in text


def test_local_file_overrides_main_file(tmp_path: Path) -> None:
    (tmp_path / "copilot.yaml").write_text("api:\n  port: 6000\n", encoding="utf-8")
    (tmp_path / "copilot.local.yaml").write_text("api:\n  port: 6001\n", encoding="utf-8")
    assert load_settings(config_dir=tmp_path).api.port == 6001


def test_flat_mongo_uri_alias(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QDASH_MONGO_URI", "ftp://nope")
    with pytest.raises(ConfigError, match=r"database\.mongo_uri: .*mongodb://"):
        load_settings(config_dir=tmp_path)


def test_inverted_thresholds_refuse_to_start(tmp_path: Path) -> None:
    (tmp_path / "copilot.yaml").write_text(
        "scoring:\n  t1: {unit: μs, bad: 60, good: 50, excellent: 100}\n", encoding="utf-8"
    )
    with pytest.raises(ConfigError, match=r"scoring\.t1.*bad < good <= excellent"):
        load_settings(config_dir=tmp_path)


def test_default_model_must_be_configured(tmp_path: Path) -> None:
    (tmp_path / "copilot.yaml").write_text("copilot:\n  default_model: nope\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="default_model 'nope'"):
        load_settings(config_dir=tmp_path)
