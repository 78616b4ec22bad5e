"""Run figures in the chat: the reference an answer carries, and the project-scoped lookup behind it.

Why a reference and not the PNG: a figure is 20–200 KB and the model never needs to see it. A tool
that returns a task result attaches ``{id, task_name, qid, chip_id, execution_id, start_at, url,
path}`` (``path``: the stored figure path, which upstream's ``/executions/figure?path=`` serves);
the answer shows it as a ``figure`` block next to the numbers and the page loads the image from
``GET /copilot/figures/{id}`` with the user's token. The id is the run's ``task_id``, read inside
the caller's project only (another project's id is simply not found), and the file is read only
through the figure loader, which stays inside the data dir or a ``lab.figure_roots`` directory.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import PurePosixPath
from urllib.parse import quote

from qdash.models.answer import FigureBlock, FigureRef
from qdash.repositories.scope import Doc, ProjectScope
from qdash.repositories.task_results import TASK_RESULTS

FileReader = Callable[[Doc, int], list[tuple[str, bytes]]]
"""``analysis_context.FigureLoader``'s shape (not imported: that module imports the tools, which
attach figures through this one)."""

FIGURE_URL = "/copilot/figures/{task_id}"
DASHBOARD_FIGURE_URL = "/api/executions/figure?path={path}"
"""Where the upstream dashboards load a figure by its stored path (their own ``/api`` base, which
their proxy forwards to ``/executions/figure`` here, with the session cookie's token)."""


def png_path(run: Doc) -> str | None:
    """The run's first recorded PNG figure path, as stored (the file itself is checked when it is
    served), or ``None``."""
    return next(
        (str(path) for path in run.get("figure_path") or [] if str(path).lower().endswith(".png")), None
    )


def figure_files(run: Doc) -> list[str]:
    """The file names of every figure the run saved (PNG, then Plotly JSON), as a result lists them:
    which figures a task result has, without the long stored paths."""
    paths = [*(run.get("figure_path") or []), *(run.get("json_figure_path") or [])]
    return [PurePosixPath(str(path)).name for path in paths]


def figure_reference(
    run: Doc, *, task_name: str, qid: str, chip_id: str, start_at: str | None
) -> FigureRef | None:
    """The reference to ``run``'s figure, or ``None`` when it has no id or no PNG figure."""
    task_id, path, execution_id = run.get("task_id"), png_path(run), run.get("execution_id")
    if not isinstance(task_id, str) or not task_id or path is None:
        return None
    return FigureRef(
        id=task_id,
        task_name=task_name,
        qid=qid,
        chip_id=chip_id,
        execution_id=None if execution_id is None else str(execution_id),
        start_at=start_at,
        url=FIGURE_URL.format(task_id=quote(task_id, safe="")),
        path=path,
    )


def figure_block(reference: FigureRef) -> FigureBlock:
    """The answer block of a run figure: ``content`` is a caption (what a client that cannot load
    the image shows), ``figure`` the reference."""
    parts = [reference.task_name, reference.qid, reference.chip_id, reference.start_at]
    caption = "Run figure: " + " · ".join(part for part in parts if part)
    return FigureBlock(content=caption, figure=reference)


def dashboard_figure_text(block: FigureBlock) -> str:
    """A figure block as markdown the older upstream dashboard draws: its text blocks go through
    react-markdown, which renders an image, loaded from ``/api/executions/figure`` with the
    dashboard's cookie; the caption stays below as text."""
    caption, path = block.content, block.figure.path
    if not path:
        return caption
    alt = re.sub(r"[\[\]\\]", "", caption)
    return f"![{alt}]({DASHBOARD_FIGURE_URL.format(path=quote(path, safe=''))})\n\n{caption}"


def load_run_figure(scope: ProjectScope, task_id: str, loader: FileReader, max_bytes: int) -> bytes | None:
    """The PNG of the caller's project's run ``task_id``, or ``None`` when the run is not in this
    project, has no figure, or its file is missing, too large or outside the allowed directories."""
    run = scope.find_one(TASK_RESULTS, {"task_id": task_id})
    if run is None:
        return None
    files = loader(run, max_bytes)
    return files[0][1] if files else None


def load_figure_by_path(
    scopes: Iterable[ProjectScope], path: str, loader: FileReader, max_bytes: int
) -> bytes | None:
    """The PNG stored at ``path`` when a run of one of these projects (the caller's) recorded
    exactly that path, else ``None``; the loader then reads only that path, inside the data dir or
    a ``lab.figure_roots`` directory (``..`` and symlinks resolved first)."""
    if not path.lower().endswith(".png"):
        return None
    run = next(
        (found for scope in scopes if (found := scope.find_one(TASK_RESULTS, {"figure_path": path}))), None
    )
    if run is None:
        return None
    files = loader({**run, "figure_path": [path]}, max_bytes)
    return files[0][1] if files else None
