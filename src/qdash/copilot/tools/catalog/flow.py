"""The calibration flow (``calibration_flow.yaml``): the order a lab runs its tasks.

Why a file: "what to recalibrate next" depends on which task feeds which (a pulse before the
fidelity measured with it), and a lab's flow differs from the demo's; the operator replaces the file
in the config directory like ``task_knowledge.yaml``. Validated at first use, so a typo is an error
that names the file, not a silently unordered suggestion.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from qdash.config_files import config_file
from qdash.settings import ConfigError

FLOW_FILE = "calibration_flow.yaml"


class CalibrationFlow(BaseModel):
    """Qubit tasks in flow order, then coupling tasks in flow order."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    qubit: tuple[str, ...] = ()
    coupling: tuple[str, ...] = ()

    def position(self, task_name: str) -> tuple[int, str]:
        """Sort key of a task: its place in the flow (qubit tasks first); unlisted tasks last, by name."""
        order = (*self.qubit, *self.coupling)
        return (order.index(task_name) if task_name in order else len(order), task_name)


@lru_cache(maxsize=4)
def load_flow(config_dir: Path) -> CalibrationFlow:
    """Read the flow (config folder, else packaged); no file at all means no order (names only)."""
    path = config_file(FLOW_FILE, config_dir)
    if path is None:
        return CalibrationFlow()
    try:
        return CalibrationFlow.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")) or {})
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({exc}); fix the syntax at the position shown") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise ConfigError(
            f"{path}: {where}: {first['msg']}; the file has two lists of task names, qubit: and coupling:"
        ) from None
