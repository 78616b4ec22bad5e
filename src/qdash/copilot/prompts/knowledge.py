"""Task knowledge (``task_knowledge.yaml``): what a task measures and how it fails.

Loaded once and validated like the rest of the configuration, so a typo in the file stops
start-up instead of silently dropping knowledge from analysis prompts.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from qdash.config_files import config_file
from qdash.settings import ConfigError


class ExpectedImage(BaseModel):
    """One reference figure of a good result; the image itself is found by ``copilot.references``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    alt_text: str = Field(min_length=1)


class ResultLimits(BaseModel):
    """What a trustworthy result of the task must satisfy; AI review's deterministic guards read it.

    ``outputs``: parameters a completed run must have; ``bounds``: physically possible range per
    parameter in stored units (outside = the fit is wrong, whatever the model says);
    ``max_relative_error``: largest error/value accepted without a human look; ``min_r2``: the
    smallest fit R² (read from the run's ``r2``/``r_squared`` where the task stores one).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    outputs: tuple[str, ...] = ()
    bounds: dict[str, tuple[float, float]] = Field(default_factory=dict)
    max_relative_error: float | None = Field(None, gt=0)
    min_r2: float | None = Field(None, ge=0, le=1)


class TaskKnowledge(BaseModel):
    """Knowledge of one calibration task, rendered into the analysis prompt."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    summary: str
    figure: str = ""
    good: str = ""
    failures: tuple[str, ...] = ()
    next: str = ""
    expected_images: tuple[ExpectedImage, ...] = ()
    review: ResultLimits = ResultLimits()

    def render(self, task_name: str) -> str:
        """Markdown-ish block for the prompt."""
        lines = [f"Task {task_name}: {self.summary}"]
        if self.figure:
            lines.append(f"Figure: {self.figure}")
        if self.good:
            lines.append(f"Healthy result: {self.good}")
        if self.failures:
            lines.append("Typical failures:")
            lines.extend(f"- {failure}" for failure in self.failures)
        if self.next:
            lines.append(f"Next step: {self.next}")
        return "\n".join(lines)


def render_knowledge(task_name: str, knowledge: TaskKnowledge | None) -> str:
    """The task's knowledge block, or a line saying there is none (the model then reasons from data)."""
    if knowledge is None:
        return f"Task {task_name}: no stored knowledge; reason from the parameters and the figure."
    return knowledge.render(task_name)


@lru_cache(maxsize=4)
def load_task_knowledge(config_dir: Path) -> dict[str, TaskKnowledge]:
    """Read ``task_knowledge.yaml`` (config folder, else packaged); no file at all means no knowledge."""
    path = config_file("task_knowledge.yaml", config_dir)
    if path is None:
        return {}
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({exc}); fix the syntax at the position shown") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: the top level must map task names to knowledge entries")
    knowledge: dict[str, TaskKnowledge] = {}
    for name, entry in raw.items():
        try:
            knowledge[str(name)] = TaskKnowledge.model_validate(entry)
        except ValidationError as exc:
            first = exc.errors()[0]
            key = ".".join([str(name), *(str(part) for part in first["loc"])])
            raise ConfigError(
                f"{path}: {key}: {first['msg']}; fix it (fields: summary, figure, good, failures, next, "
                "expected_images: a list of {alt_text: ...}, "
                "review: {outputs, bounds, max_relative_error, min_r2})"
            ) from None
    return knowledge
