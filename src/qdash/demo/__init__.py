"""The demo lab: a deterministic synthetic calibration history for every collection.

Entry points: :func:`seed_demo` (fill a database), :class:`DemoSpec` (what to generate),
:class:`SeedReport` (what was inserted); ``qdash.demo.figures.ensure_figure`` renders a task's PNG on
first request (imported on demand: it pulls in matplotlib).
See docs/demo-data.md for the generated lab and its special qubits.
"""

from qdash.demo.generator import DemoDataExistsError, seed_demo
from qdash.demo.report import ChipReport, DemoLab, SeedReport, UserReport
from qdash.demo.spec import ChipPlan, DemoSpec, ProjectPlan, UserPlan

__all__ = [
    "ChipPlan",
    "ChipReport",
    "DemoDataExistsError",
    "DemoLab",
    "DemoSpec",
    "ProjectPlan",
    "SeedReport",
    "UserPlan",
    "UserReport",
    "seed_demo",
]
