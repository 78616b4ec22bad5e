"""Everything analysis mode knows before asking the model: the result, its qubit, neighbours, figure.

Why through the tools: the qubit's parameters, the task history and the couplings are fetched with
the same project-scoped, compacted tools the model would call, so the prompt shows exactly what a
tool call would have shown and no second query path exists to keep scoped.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from qdash.copilot.prompts import AnalysisContext
from qdash.copilot.prompts.knowledge import load_task_knowledge
from qdash.copilot.references import ReferenceImage, ReferenceLoader
from qdash.copilot.requests import AnalyzeRequest
from qdash.copilot.service import CopilotDataService
from qdash.copilot.tools.output import output_data
from qdash.models.answer import ExpectedImage, ImagesSent
from qdash.repositories.scope import Doc, ProjectScope
from qdash.repositories.task_results import is_excluded
from qdash.units import shown_unit

MAX_NEIGHBOURS = 8


class FigureLoader(Protocol):
    """Finds the PNG of a task result: ``[(path, png bytes)]``, at most one, each ≤ the size cap."""

    def __call__(self, task_result: Doc, max_bytes: int) -> list[tuple[str, bytes]]: ...


Renderer = Callable[[Path, Doc], Path]
"""Draws a missing figure into the data root and returns its path (the demo lab's ``ensure_figure``)."""


def mapped_figure(raw: str, roots: Mapping[str, Path]) -> Path | None:
    """Upstream's absolute figure path (``/app/calib_data/<user>/<date>/…/fig/x.png``) on this
    machine, through the longest matching ``lab.figure_roots`` prefix; ``None`` when no prefix maps
    it or the mapped path leaves its local directory (``..``, symlinks)."""
    for prefix in sorted(roots, key=len, reverse=True):
        stored = prefix.rstrip("/")
        if raw != stored and not raw.startswith(stored + "/"):
            continue
        local_root = roots[prefix].resolve()
        resolved = (local_root / raw[len(stored) :].lstrip("/")).resolve()
        return resolved if resolved.is_relative_to(local_root) else None
    return None


def files_under(
    root: Path, render_missing: Renderer | None = None, roots: Mapping[str, Path] | None = None
) -> FigureLoader:
    """Figures stored as files: ``figure_path`` entries, relative ones resolved inside ``root``,
    absolute ones read when they lie inside ``root`` or map through ``roots`` (``lab.figure_roots``:
    upstream stores absolute paths of its own container). Nothing outside those directories is read.

    ``render_missing`` draws a figure that is not on disk yet (the embedded demo lab renders its
    synthetic figures on first request); a real lab's files are only read.
    """

    def load(task_result: Doc, max_bytes: int) -> list[tuple[str, bytes]]:
        base = root.resolve()
        for raw in task_result.get("figure_path") or []:
            path = Path(str(raw))
            resolved = (path if path.is_absolute() else base / path).resolve()
            if not resolved.is_relative_to(base):
                mapped = mapped_figure(str(raw), roots or {})
                if mapped is None or mapped.suffix.lower() != ".png":
                    continue
                if mapped.is_file() and mapped.stat().st_size <= max_bytes:
                    return [(str(raw), mapped.read_bytes())]
                continue
            if resolved.suffix.lower() != ".png":
                continue
            if not resolved.is_file() and render_missing is not None:
                try:
                    resolved = render_missing(base, task_result)
                except ValueError:
                    continue
            if resolved.is_file() and resolved.stat().st_size <= max_bytes:
                return [(str(raw), resolved.read_bytes())]
        return []

    return load


@dataclass(frozen=True)
class AnalysisInputs:
    """The gathered context; ``not_found`` explains why there is nothing to analyse."""

    context: AnalysisContext
    figure_paths: list[str] = field(default_factory=list)
    figure_images: list[str] = field(default_factory=list)
    references: list[ReferenceImage] = field(default_factory=list)
    not_found: str = ""

    @property
    def reference_images(self) -> list[str]:
        """The reference PNGs, base64, in index order (sent after the experiment figure)."""
        return [base64.b64encode(ref.png).decode("ascii") for ref in self.references]

    def images_sent(self, task_name: str) -> ImagesSent:
        """The ``images_sent`` object of the analysis result."""
        expected = [ExpectedImage(alt_text=ref.alt_text, index=ref.index) for ref in self.references]
        return ImagesSent(
            experiment_figure=bool(self.figure_images),
            experiment_figure_paths=self.figure_paths,
            expected_images=expected,
            task_name=task_name,
        )


def compact_parameters(parameters: dict[str, Any] | None) -> dict[str, Any]:
    """``{name: {value, unit, error?}}`` from stored ParameterModel dicts (10 fields → 2-3), in each
    parameter's display unit (``qdash.units``), as the tools beside it in the same context show it."""
    compact: dict[str, Any] = {}
    for name, param in (parameters or {}).items():
        if isinstance(param, dict):
            scale, unit = shown_unit(name, param.get("unit", ""))
            entry = {"value": _scaled(param.get("value"), scale), "unit": unit}
            if param.get("error"):
                entry["error"] = _scaled(param["error"], scale)
            compact[name] = entry
        else:
            compact[name] = param
    return compact


def _scaled(value: Any, scale: float) -> Any:
    """A stored number × ``scale`` at full precision; anything else as stored."""
    if isinstance(value, int | float) and not isinstance(value, bool) and scale != 1.0:
        return value * scale
    return value


async def gather_analysis_inputs(
    service: CopilotDataService,
    request: AnalyzeRequest,
    figures: FigureLoader | None,
    max_image_bytes: int,
    references: ReferenceLoader | None = None,
) -> AnalysisInputs:
    """Load the task result (scoped by project) and its context; the experiment figure and the task's
    reference figures only when their loaders are set (the model takes images)."""
    scope = ProjectScope(service.context.db, service.context.project_id)
    doc = await asyncio.to_thread(scope.find_one, "task_result_history", {"task_id": request.task_id})
    base = AnalysisContext(
        task_name=request.task_name,
        chip_id=request.chip_id,
        qid=request.qid,
        execution_id=request.execution_id,
        task_id=request.task_id,
    )
    if doc is None:
        return AnalysisInputs(base, not_found=f"Task result not found (task_id={request.task_id})")
    turn = service.run_context()
    chip_id = str(doc.get("chip_id") or request.chip_id)
    qid = str(doc.get("qid") or request.qid)

    async def call(name: str, arguments: dict[str, Any]) -> Any:
        output = await service.call(name, arguments, turn)
        return None if output.is_error else output_data(output).shown

    is_coupling = "-" in qid
    qubit, history, couplings = await asyncio.gather(
        call(
            "get_coupling_params" if is_coupling else "get_qubit_params",
            {"chip_id": chip_id, "coupling_id": qid} if is_coupling else {"chip_id": chip_id, "qid": qid},
        ),
        call(
            "get_task_history",
            {
                "task_name": str(doc.get("name") or request.task_name),
                "chip_id": chip_id,
                "qid": qid,
                "last_n": 5,
            },
        ),
        call("get_coupling_params", {"chip_id": chip_id, "qubit_id": qid}) if not is_coupling else _none(),
    )
    task_name = str(doc.get("name") or request.task_name)
    outputs = list(doc.get("output_parameters") or {}) or await asyncio.to_thread(
        _declared_outputs, service, task_name
    )
    neighbours = await _neighbours(call, chip_id, qid, couplings, outputs)
    context = AnalysisContext(
        task_name=task_name,
        chip_id=chip_id,
        qid=qid,
        execution_id=str(doc.get("execution_id") or request.execution_id),
        task_id=request.task_id,
        status=_status(doc),
        message=str(doc.get("message") or ""),
        input_parameters=compact_parameters(doc.get("input_parameters")),
        output_parameters=compact_parameters(doc.get("output_parameters")),
        run_parameters=compact_parameters(doc.get("run_parameters")),
        qubit_parameters=qubit or {},
        recent_history=[history] if history else [],
        neighbours=[neighbours] if neighbours else [],
        couplings=[couplings] if couplings else [],
    )
    loaded, refs = await asyncio.gather(
        asyncio.to_thread(figures, doc, max_image_bytes) if figures else _empty(),
        asyncio.to_thread(references, request.task_name, max_image_bytes) if references else _empty(),
    )
    return AnalysisInputs(
        context,
        figure_paths=[path for path, _ in loaded],
        figure_images=[base64.b64encode(png).decode("ascii") for _, png in loaded],
        references=refs,
    )


def _declared_outputs(service: CopilotDataService, task_name: str) -> list[str]:
    """The outputs task knowledge lists for a task: what to compare the neighbours on when the run
    holds none (upstream clears a failed run's outputs before it saves the run)."""
    knowledge = load_task_knowledge(service.context.settings.config_dir).get(task_name)
    return [] if knowledge is None else list(knowledge.review.outputs)


def _status(doc: Doc) -> str:
    """The run's status; a run a person excluded from metrics upstream says so, and why."""
    status = str(doc.get("status") or "")
    if not is_excluded(doc):
        return status
    by = f" by {doc['excluded_by']}" if doc.get("excluded_by") else ""
    reason = f": {doc['excluded_reason']}" if doc.get("excluded_reason") else ""
    return f"{status}, excluded from metrics{by}{reason}"


async def _none() -> None:
    return None


async def _empty() -> list[Any]:
    return []


def _neighbour_ids(qid: str, couplings: Any) -> list[str]:
    """Qubits sharing a coupling with ``qid``, read from the compact coupling reply."""
    text = json.dumps(couplings) if couplings else ""
    found: list[str] = []
    for token in text.replace('"', " ").replace(",", " ").replace(":", " ").split():
        left, sep, right = token.partition("-")
        if sep and left.isdigit() and right.isdigit() and qid in (left, right):
            other = right if left == qid else left
            if other not in found:
                found.append(other)
    return found[:MAX_NEIGHBOURS]


async def _neighbours(call: Any, chip_id: str, qid: str, couplings: Any, params: list[str]) -> Any:
    ids = _neighbour_ids(qid, couplings)
    if not ids:
        return None
    arguments: dict[str, Any] = {"chip_id": chip_id, "qids": ids}
    if params:
        arguments["param_names"] = params[:8]
    return await call("compare_qubits", arguments)
