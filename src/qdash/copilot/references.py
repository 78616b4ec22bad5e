"""Reference figures of a good result, per task: shown by the analysis sidebar, compared by the model.

Why one place: ``GET /copilot/expected-image`` serves image ``index`` of a task and the analysis
result lists the same ``{alt_text, index}`` pairs in ``images_sent.expected_images``, so the UI's
``<img src>`` must find exactly what the model was sent. Image ``index`` of a task is, in order:

1. the operator's own ``<config_dir>/knowledge/<task>/<index>.png`` (served even without an entry in
   ``task_knowledge.yaml``, as before; sent to the model only with one, which gives its alt text);
2. for index 0 of a task whose ``expected_images`` lists one, the demo's ideal figure of the task
   (``qdash.demo.references``), rendered on first request and cached in the data dir.

Everything here is blocking (file system, matplotlib): call it from a worker thread.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from qdash.copilot.prompts.knowledge import load_task_knowledge
from qdash.demo.figures import FigureError
from qdash.demo.references import ensure_reference_figure

TASK_NAME = re.compile(r"^[A-Za-z0-9_]{1,100}$")
"""Task names are identifiers: nothing in them can leave the knowledge folder."""


@dataclass(frozen=True)
class ReferenceImage:
    """One reference figure as sent to the model: its index (for the endpoint), alt text and PNG."""

    index: int
    alt_text: str
    png: bytes


class ReferenceLoader(Protocol):
    """The reference figures of a task that fit ``max_bytes`` each, in index order."""

    def __call__(self, task_name: str, max_bytes: int) -> list[ReferenceImage]: ...


def reference_image_path(config_dir: Path, data_dir: Path, task_name: str, index: int) -> Path | None:
    """The PNG of reference ``index`` of ``task_name``, rendering the demo's figure if needed; None
    when there is none (unknown task, index or an invalid name)."""
    if not TASK_NAME.match(task_name) or index < 0:
        return None
    root = (config_dir / "knowledge").resolve()
    own = (root / task_name / f"{index}.png").resolve()
    if own.is_relative_to(root) and own.is_file():
        return own
    knowledge = load_task_knowledge(config_dir).get(task_name)
    if index != 0 or knowledge is None or not knowledge.expected_images:
        return None
    try:
        return ensure_reference_figure(data_dir, task_name)
    except FigureError:
        return None


def load_reference_images(
    config_dir: Path, data_dir: Path, task_name: str, max_bytes: int
) -> list[ReferenceImage]:
    """The task's ``expected_images`` that have a PNG of at most ``max_bytes`` (larger ones are left
    out, like an oversized experiment figure)."""
    knowledge = load_task_knowledge(config_dir).get(task_name)
    found: list[ReferenceImage] = []
    for index, entry in enumerate(knowledge.expected_images if knowledge else ()):
        path = reference_image_path(config_dir, data_dir, task_name, index)
        if path is not None and path.stat().st_size <= max_bytes:
            found.append(ReferenceImage(index, entry.alt_text, path.read_bytes()))
    return found


def knowledge_references(config_dir: Path, data_dir: Path) -> ReferenceLoader:
    """The loader the assistant uses: references of the configured knowledge and data folders."""

    def load(task_name: str, max_bytes: int) -> list[ReferenceImage]:
        return load_reference_images(config_dir, data_dir, task_name, max_bytes)

    return load
