"""Upstream's absolute figure paths map to local directories through ``lab.figure_roots``; nothing
outside the mapped directories (or the data directory) is ever read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from qdash.copilot.analysis_context import files_under
from qdash.settings import ConfigError, load_settings

PNG = b"\x89PNG\r\n\x1a\nfigure"
STORED = "/app/calib_data/alice/20260301/001/fig/CheckT1_Q00.png"


@pytest.fixture
def lab(tmp_path: Path) -> Path:
    local = tmp_path / "mnt" / "calib_data"
    figure = local / "alice/20260301/001/fig/CheckT1_Q00.png"
    figure.parent.mkdir(parents=True)
    figure.write_bytes(PNG)
    (tmp_path / "mnt" / "secret.png").write_bytes(PNG + b"secret")
    (local / "alice/link.png").symlink_to(tmp_path / "mnt" / "secret.png")
    return local


def _load(tmp_path: Path, lab: Path, *paths: str, roots: dict[str, Path] | None = None) -> list[str]:
    data_dir = tmp_path / "data"
    data_dir.mkdir(exist_ok=True)
    loader = files_under(data_dir, roots={"/app/calib_data": lab} if roots is None else roots)
    return [path for path, _ in loader({"figure_path": list(paths)}, 10_000)]


def test_absolute_upstream_paths_are_read_through_the_mapping(tmp_path: Path, lab: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    loaded = files_under(data_dir, roots={"/app/calib_data/": lab})({"figure_path": [STORED]}, 10_000)
    assert loaded == [(STORED, PNG)]
    assert _load(tmp_path, lab, STORED, roots={}) == []  # unmapped: not read


@pytest.mark.parametrize(
    "stored",
    [
        "/app/calib_data/../../mnt/secret.png",  # climbs out of the mapped directory
        "/app/calib_data/alice/link.png",  # a symlink pointing outside it
        "/app/calib_data_old/alice/20260301/001/fig/CheckT1_Q00.png",  # a prefix of a name, not a folder
        "/etc/hostname",
    ],
)
def test_nothing_outside_the_mapped_roots_is_read(tmp_path: Path, lab: Path, stored: str) -> None:
    assert _load(tmp_path, lab, stored) == []


def test_figure_roots_must_be_absolute(tmp_path: Path) -> None:
    base = {"data_dir": str(tmp_path)}
    with pytest.raises(ConfigError, match="must be an absolute path as stored by upstream"):
        load_settings(database=base, lab={"figure_roots": {"app/calib_data": str(tmp_path)}})
    with pytest.raises(ConfigError, match="must be an absolute local directory"):
        load_settings(database=base, lab={"figure_roots": {"/app/calib_data": "mnt"}})
    settings = load_settings(database=base, lab={"figure_roots": {"/app/calib_data": str(tmp_path)}})
    assert settings.lab.figure_roots == {"/app/calib_data": tmp_path}


def test_the_assistant_uses_the_configured_roots(tmp_path: Path, lab: Path, mongo_db: Any) -> None:
    from qdash.copilot.assistant import default_figures

    settings = load_settings(
        database={"data_dir": str(tmp_path / "data"), "mongo_uri": None},
        lab={"figure_roots": {"/app/calib_data": str(lab)}},
    )
    assert default_figures(mongo_db, settings)({"figure_path": [STORED]}, 10_000) == [(STORED, PNG)]
