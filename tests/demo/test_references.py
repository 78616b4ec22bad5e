"""Ideal reference figures: drawn by the demo's renderer, cached, only for tasks with a figure shape."""

from __future__ import annotations

from pathlib import Path

import pytest

from qdash.copilot.prompts import load_task_knowledge
from qdash.demo.figures import FigureError
from qdash.demo.references import REFERENCE_DIR, ensure_reference_figure, reference_result

PNG = b"\x89PNG\r\n\x1a\n"

PACKAGED_ONLY = Path(__file__).parent / "no-config-dir"  # absent: every file comes from the package


def test_every_task_with_knowledge_has_a_drawable_reference() -> None:
    for name in load_task_knowledge(PACKAGED_ONLY):
        assert reference_result(name) is not None, name


def test_reference_renders_once_with_ideal_values(tmp_path: Path) -> None:
    path = ensure_reference_figure(tmp_path, "CheckT1")
    assert path == tmp_path.resolve() / REFERENCE_DIR / "CheckT1.png"
    assert path.read_bytes()[:8] == PNG
    stamp = path.stat().st_mtime_ns
    assert ensure_reference_figure(tmp_path, "CheckT1") == path
    assert path.stat().st_mtime_ns == stamp, "second call must reuse the cached file"
    assert not list(path.parent.glob(".fig-*")), "no temporary file left behind"
    found = reference_result("CheckT1")
    assert found is not None
    kind, document = found
    assert kind == "decay" and document["output_parameters"] == {"t1": {"value": 120.0}}


def test_outside_the_catalogue_and_undrawable_tasks(tmp_path: Path) -> None:
    found = reference_result("CheckResonatorSpectroscopy")
    assert found is not None and found[0] == "resonance"
    assert ensure_reference_figure(tmp_path, "CheckResonatorSpectroscopy").read_bytes()[:8] == PNG
    assert reference_result("CheckStatus") is None  # a status trace shows nothing to compare with
    for name in ("CheckStatus", "NoSuchTask", "../CheckT1"):
        with pytest.raises(FigureError, match="no reference figure"):
            ensure_reference_figure(tmp_path, name)
    assert not (tmp_path / REFERENCE_DIR / "CheckStatus.png").exists()
