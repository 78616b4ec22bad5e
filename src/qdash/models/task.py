"""Calibration history: ``task_result_history``, ``execution_history``, ``calibration_note``.

``task_result_history`` is the main time-series source. Its ``output_parameter_names`` must equal the
keys of ``output_parameters`` because the time-series tools query the (multikey-indexed) name list,
not the dict: the model fills it when absent and rejects a mismatch.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, model_validator

from qdash.models.common import (
    Document,
    ParameterModel,
    StoredModel,
    SystemInfo,
    UtcDatetime,
    elapsed_seconds,
)

TaskStatus = Literal["scheduled", "running", "completed", "failed", "pending", "skipped", "cancelled"]
ExecutionStatus = Literal["scheduled", "running", "completed", "failed", "cancelled"]
TaskType = Literal["qubit", "coupling", "global", "system"]


def _seconds(value: object) -> object:
    """Float seconds from any stored form; an unreadable value is left for pydantic to reject."""
    seconds = elapsed_seconds(value)
    return value if seconds is None else seconds


class UserNote(StoredModel):
    """The dashboard's free-form note on a task result (upstream's ``NoteModel``)."""

    content: str = ""
    updated_by: str = ""
    updated_at: UtcDatetime | None = None


class AiReview(StoredModel):
    """Upstream's ``AiReviewModel``: the state of a result's AI review request (written by
    ``qdash.models.ai_review.ai_review_state``)."""

    status: str = ""
    requested_at: UtcDatetime | None = None
    requested_by: str = ""
    review_run_id: str = ""
    trigger_type: str = ""
    model_provider: str = ""
    model_name: str = ""
    completed_at: UtcDatetime | None = None
    error: str = ""


class TaskResultHistory(Document, collection="task_result_history", natural_key=("task_id",)):
    """One task run; ``_id`` is the task id (a UUID4 string, globally unique).

    Upstream's later fields are read with upstream's defaults: ``excluded`` (a person removed the
    measurement from metrics, with ``excluded_reason``/``excluded_by``/``excluded_at``),
    ``cooldown_id`` (``""`` when unassigned) and ``user_note``. ``elapsed_time`` is float seconds;
    older upstream rows stored a string (``"0:01:23"``), read as seconds. ``project_id`` stays
    required: upstream rows without one belong to no project and are never read.
    """

    project_id: str
    username: str = ""
    task_id: str
    name: str
    upstream_id: str = ""
    source_task_id: str | None = None
    status: TaskStatus = "scheduled"
    message: str = ""
    input_parameters: dict[str, ParameterModel] = Field(default_factory=dict)
    output_parameters: dict[str, ParameterModel] = Field(default_factory=dict)
    output_parameter_names: list[str] = Field(default_factory=list)
    run_parameters: dict[str, Any] = Field(default_factory=dict)
    note: dict[str, Any] = Field(default_factory=dict)
    figure_path: list[str] = Field(default_factory=list)
    json_figure_path: list[str] = Field(default_factory=list)
    raw_data_path: list[str] = Field(default_factory=list)
    start_at: UtcDatetime | None = None
    end_at: UtcDatetime | None = None
    elapsed_time: Annotated[float, BeforeValidator(_seconds)] = 0.0
    task_type: TaskType = "qubit"
    qid: str = ""
    execution_id: str = ""
    tags: list[str] = Field(default_factory=list)
    chip_id: str = ""
    system_info: SystemInfo = Field(default_factory=SystemInfo)
    cooldown_id: str = ""
    user_note: UserNote = Field(default_factory=UserNote)
    ai_review_note: UserNote | None = None
    """The AI review's note (``qdash.models.ai_review``), apart from ``user_note``; ``None``: none."""
    ai_review: AiReview | None = None
    excluded: bool = False
    excluded_reason: str = ""
    excluded_by: str | None = None
    excluded_at: UtcDatetime | None = None

    @model_validator(mode="before")
    @classmethod
    def _fill_names(cls, data: Any) -> Any:
        if isinstance(data, dict) and "output_parameter_names" not in data:
            outputs = data.get("output_parameters") or {}
            data = {**data, "output_parameter_names": list(outputs)}
        return data

    @model_validator(mode="after")
    def _names_match_outputs(self) -> TaskResultHistory:
        keys = list(self.output_parameters)
        if self.output_parameter_names != keys:
            raise ValueError(
                f"output_parameter_names {self.output_parameter_names} must equal the keys of "
                f"output_parameters {keys} (same names, same order); omit it to derive it"
            )
        return self


class ExecutionHistory(Document, collection="execution_history", natural_key=("project_id", "execution_id")):
    """One workflow run grouping many tasks; ``execution_id`` is unique per project only."""

    project_id: str
    username: str = ""
    name: str
    execution_id: str
    calib_data_path: str = ""
    note: dict[str, Any] = Field(default_factory=dict)
    status: ExecutionStatus = "scheduled"
    tags: list[str] = Field(default_factory=list)
    chip_id: str = ""
    start_at: UtcDatetime | None = None
    end_at: UtcDatetime | None = None
    elapsed_time: Annotated[float, BeforeValidator(_seconds)] = 0.0
    message: str = ""
    system_info: SystemInfo = Field(default_factory=SystemInfo)


class CalibrationNote(
    Document, collection="calibration_note", natural_key=("project_id", "chip_id", "execution_id", "task_id")
):
    """A machine note written by the backend (``task_id: "master"``), not a human annotation."""

    project_id: str
    username: str = ""
    chip_id: str
    execution_id: str
    task_id: str = "master"
    note: dict[str, Any] = Field(default_factory=dict)
    version: int = 1
    timestamp: UtcDatetime | None = None
    system_info: SystemInfo = Field(default_factory=SystemInfo)
