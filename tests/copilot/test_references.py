"""Where a task's reference figures come from: the operator's PNGs first, else the demo's ideal figure."""

from __future__ import annotations

from pathlib import Path

from qdash.copilot.prompts import load_task_knowledge
from qdash.copilot.references import knowledge_references, load_reference_images, reference_image_path
from qdash.demo.references import REFERENCE_DIR

PACKAGED_ONLY = Path(__file__).parent / "no-config-dir"  # absent: every file comes from the package
PNG = b"\x89PNG\r\n\x1a\n"
KNOWLEDGE = """\
CheckT1:
  summary: T1.
  expected_images:
    - alt_text: Clean decay.
    - alt_text: Operator's second reference.
CheckRabi:
  summary: Rabi, no references listed.
"""


def config_with_knowledge(tmp_path: Path) -> Path:
    config = tmp_path / "config"
    config.mkdir()
    (config / "task_knowledge.yaml").write_text(KNOWLEDGE, encoding="utf-8")
    return config


def test_every_listed_reference_of_the_shipped_knowledge_resolves(tmp_path: Path) -> None:
    listed = {
        name: k.expected_images for name, k in load_task_knowledge(PACKAGED_ONLY).items() if k.expected_images
    }
    assert len(listed) >= 20
    for name in listed:
        path = reference_image_path(PACKAGED_ONLY, tmp_path, name, 0)
        assert path is not None and path.read_bytes()[:8] == PNG, name


def test_demo_figure_for_index_zero_operator_png_for_the_rest(tmp_path: Path) -> None:
    config, data = config_with_knowledge(tmp_path), tmp_path / "data"
    rendered = reference_image_path(config, data, "CheckT1", 0)
    assert rendered == data.resolve() / REFERENCE_DIR / "CheckT1.png"
    assert reference_image_path(config, data, "CheckT1", 1) is None  # the demo draws one per task
    assert reference_image_path(config, data, "CheckRabi", 0) is None  # not listed, no operator file
    own = config / "knowledge" / "CheckT1"
    own.mkdir(parents=True)
    (own / "1.png").write_bytes(PNG + b"second")
    assert reference_image_path(config, data, "CheckT1", 1) == (own / "1.png").resolve()
    (own / "0.png").write_bytes(PNG + b"operator")
    assert reference_image_path(config, data, "CheckT1", 0) == (own / "0.png").resolve()

    images = knowledge_references(config, data)("CheckT1", 1024)
    assert [(i.index, i.alt_text, i.png) for i in images] == [
        (0, "Clean decay.", PNG + b"operator"),
        (1, "Operator's second reference.", PNG + b"second"),
    ]


def test_oversized_and_unlisted_references_are_not_sent(tmp_path: Path) -> None:
    config, data = config_with_knowledge(tmp_path), tmp_path / "data"
    own = config / "knowledge" / "CheckRabi"
    own.mkdir(parents=True)
    (own / "0.png").write_bytes(PNG)
    assert reference_image_path(config, data, "CheckRabi", 0) is not None  # served, as before
    assert load_reference_images(config, data, "CheckRabi", 10**6) == []  # no alt text: not sent
    assert [i.index for i in load_reference_images(config, data, "CheckT1", 10**6)] == [0]
    assert load_reference_images(config, data, "CheckT1", 1024) == []  # the rendered PNG is larger
    assert load_reference_images(config, data, "NoSuchTask", 10**6) == []


def test_names_that_could_leave_the_knowledge_folder_are_refused(tmp_path: Path) -> None:
    config = config_with_knowledge(tmp_path)
    (config / "knowledge").mkdir()
    (config / "secret.png").write_bytes(PNG)
    for name in ("..", "../secret", "CheckT1/../..", "", "a" * 101, "Check T1"):
        assert reference_image_path(config, tmp_path, name, 0) is None, name
    assert reference_image_path(config, tmp_path, "CheckT1", -1) is None
