"""Ideal "good result" figures of calibration tasks, drawn by the demo's own figure code.

Why the demo's renderer: a reference is shown (and sent to the model) next to an experiment figure,
so it must have the same shape, axes and fit line; only the values differ. The values are those of a
healthy qubit inside the demo physics' ranges (``physics.py``) and at or above the
"good" column of ``config/task_knowledge.yaml``, drawn with a quarter of a demo run's scatter.
Rendered on first request and cached under ``data_dir``, like the demo runs' figures.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from qdash.demo.catalogue import TASKS, FigureKind
from qdash.demo.figures import FigureError, render, write_png

REFERENCE_DIR = "reference_figures"
"""Folder under ``data_dir`` holding the rendered references, one ``<task>.png`` each."""

REFERENCE_NOISE = 0.25
"""Scatter of a reference relative to a demo run: visibly a measurement, clearly a clean one."""

IDEAL: dict[str, float] = {
    "t1": 120.0,
    "t1_average": 120.0,
    "t2_echo": 150.0,  # ≤ 2 × T1
    "t2_echo_average": 150.0,
    "t2_star": 40.0,  # ≤ T2 echo
    "ramsey_frequency": 0.1,  # six fringes inside the drawn window
    "rabi_frequency": 12.5,
    "rabi_amplitude": 0.25,
    "hpi_amplitude": 0.1,
    "pi_amplitude": 0.2,  # 2 × hpi_amplitude
    "drag_hpi_amplitude": 0.1,
    "drag_pi_amplitude": 0.2,
    "qubit_frequency": 6.5,
    "readout_frequency": 8.5,  # 2 GHz above the qubit
    "average_readout_fidelity": 0.99,
    "readout_fidelity_0": 0.995,
    "readout_fidelity_1": 0.985,
    "average_gate_fidelity": 0.999,
    "x90_gate_fidelity": 0.999,
    "x180_gate_fidelity": 0.999,
    "zx90_gate_fidelity": 0.99,
    "zx_rotation_rate": 1.25,  # a 90° ZX rotation in 200 ns
    "zx90_gate_time": 200.0,
    "bell_state_fidelity": 0.97,
}
"""Values of a healthy result, by output parameter; only the ones a figure draws are needed."""

OUTSIDE_CATALOGUE: dict[str, tuple[FigureKind, tuple[str, ...]]] = {
    "CheckResonatorSpectroscopy": ("resonance", ("readout_frequency",)),
}
"""Tasks with task knowledge that the demo lab never runs: their figure shape and drawn outputs."""


def reference_result(task_name: str) -> tuple[FigureKind, dict[str, Any]] | None:
    """The figure shape and an ideal task-result document of ``task_name``; None if nothing to draw."""
    task = TASKS.get(task_name)
    if task is not None:
        kind, outputs = task.figure, tuple(output.name for output in task.outputs)
    elif task_name in OUTSIDE_CATALOGUE:
        kind, outputs = OUTSIDE_CATALOGUE[task_name]
    else:
        return None
    if kind == "status":
        return None
    document = {
        "name": task_name,
        "task_id": f"reference:{task_name}",
        "qid": "reference",
        "status": "completed",
        "output_parameters": {name: {"value": IDEAL[name]} for name in outputs if name in IDEAL},
    }
    return kind, document


def ensure_reference_figure(data_dir: Path, task_name: str) -> Path:
    """Path of the reference figure of ``task_name`` under ``data_dir``, rendered on first use.

    Blocking (matplotlib): call it from a worker thread in async code. Raises :class:`FigureError`
    for a task without a drawable figure shape.
    """
    found = reference_result(task_name)
    if found is None:
        raise FigureError(f"no reference figure for task {task_name!r}")
    target = Path(data_dir).resolve() / REFERENCE_DIR / f"{task_name}.png"
    if not target.is_file():
        kind, document = found
        write_png(render(document, kind=kind, noise_scale=REFERENCE_NOISE), target)
    return target
