"""Figures render on first request, are cached, and never leave the data directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from qdash.demo import DemoLab
from qdash.demo.figures import FigureError, ensure_figure

PNG = b"\x89PNG\r\n\x1a\n"


def test_latest_run_of_each_task_renders_and_is_cached(demo_lab: DemoLab, tmp_path: Path) -> None:
    db = demo_lab.db
    names = sorted(db.task_result_history.distinct("name", {"project_id": "proj-demo", "chip_id": "64Qv3"}))
    assert "CheckT1" in names and "CheckCrossResonance" in names
    for name in (
        "CheckT1",
        "CheckRamsey",
        "CheckRabi",
        "ReadoutClassification",
        "ZX90InterleavedRandomizedBenchmarking",
    ):
        doc = db.task_result_history.find_one(
            {"project_id": "proj-demo", "chip_id": "64Qv3", "name": name, "status": "completed"},
            sort=[("start_at", -1)],
        )
        assert doc is not None
        path = ensure_figure(tmp_path, doc)
        assert path == tmp_path.resolve() / doc["figure_path"][0]
        assert path.read_bytes()[:8] == PNG
        stamp = path.stat().st_mtime_ns
        assert ensure_figure(tmp_path, doc) == path
        assert path.stat().st_mtime_ns == stamp, "second call must reuse the cached file"


def test_every_run_but_skipped_ones_has_one_png_path(demo_lab: DemoLab) -> None:
    for doc in demo_lab.db.task_result_history.find({}, {"figure_path": 1, "status": 1, "execution_id": 1}):
        if doc["status"] == "skipped":
            assert doc["figure_path"] == []
        else:
            assert len(doc["figure_path"]) == 1 and doc["figure_path"][0].endswith(".png")
            assert f"/{doc['execution_id'][:8]}/{doc['execution_id'][9:]}/fig/" in doc["figure_path"][0]


def test_bad_paths_and_missing_figures_are_refused(tmp_path: Path) -> None:
    with pytest.raises(FigureError, match="inside"):
        ensure_figure(tmp_path, {"name": "CheckT1", "figure_path": ["../../etc/x.png"]})
    with pytest.raises(FigureError, match="inside"):
        ensure_figure(tmp_path, {"name": "CheckT1", "figure_path": ["/etc/x.png"]})
    with pytest.raises(FigureError, match="no figure_path"):
        ensure_figure(tmp_path, {"name": "CheckT1", "task_id": "t", "status": "skipped", "figure_path": []})
    with pytest.raises(FigureError, match=r"not a \.png"):
        ensure_figure(tmp_path, {"name": "CheckT1", "figure_path": ["fig/x.svg"]})
