"""The dashboard's answer as types: one discriminated union of blocks and the answer that holds them.

Why here, in ``qdash.models``: every layer builds or reads answers — the tools (a run figure, a
question, a proposed action), the lab actions (the approval card), the answer parser, the API's
stream dialects, the CLI and the evaluation — and ``qdash.models`` is the one package all of them
may import (``tests/test_architecture.py``). No block dict is written by hand anywhere else
(``tests/models/test_answer.py`` fails on one: it walks every module's syntax tree).

Why the field order and the nulls: :meth:`Answer.wire` (and each block's ``model_dump()``) is the
exact JSON both upstream dashboard generations parse (``docs/api.md``): every block carries
``type``, ``content`` and ``chart`` in that order, ``null`` where unused (a text block's
``"chart": null``), and our block types add one key after them. A run's ``Final.result`` is an
:class:`Answer`; the stream dialects (``qdash.api``) render it for each dashboard.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

Assessment = Literal["good", "warning", "bad"]


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TextBlock(_Part):
    """Markdown text."""

    type: Literal["text"] = "text"
    content: str
    chart: None = None


class ChartBlock(_Part):
    """A Plotly figure (NaN-sanitised and size-checked by ``qdash.copilot.answer``)."""

    type: Literal["chart"] = "chart"
    content: None = None
    chart: dict[str, Any]


class FigureRef(_Part):
    """Where a run's stored figure is: the page loads ``url`` (``/copilot/figures/{id}``), the
    upstream dashboards ``path`` through their own ``/executions/figure?path=``."""

    id: str
    task_name: str
    qid: str
    chip_id: str
    execution_id: str | None
    start_at: str | None
    url: str
    path: str


class FigureBlock(_Part):
    """A run figure (ours): ``content`` is its caption, what a client that cannot load it shows."""

    type: Literal["figure"] = "figure"
    content: str
    chart: None = None
    figure: FigureRef


class Choices(_Part):
    question: str
    options: list[str]


class ChoicesBlock(_Part):
    """``ask_user``'s question (ours): ``content`` repeats it with the options numbered, the readable
    form for clients without buttons."""

    type: Literal["choices"] = "choices"
    content: str
    chart: None = None
    choices: Choices

    @classmethod
    def of(cls, question: str, options: list[str]) -> ChoicesBlock:
        numbered = "\n".join(f"{index}. {option}" for index, option in enumerate(options, 1))
        return cls(content=f"{question}\n\n{numbered}", choices=Choices(question=question, options=options))


class ApprovalCard(_Part):
    """A proposed lab action: the approval's id, the write tool, its label and arguments."""

    id: str
    tool: str
    label: str
    args: dict[str, Any]


class ApprovalBlock(_Part):
    """The newest upstream dashboard's approval card; it comes last in an answer."""

    type: Literal["approval"] = "approval"
    content: None = None
    chart: None = None
    approval: ApprovalCard


Block = Annotated[
    TextBlock | ChartBlock | FigureBlock | ChoicesBlock | ApprovalBlock, Field(discriminator="type")
]
"""One answer block; ``type`` says which."""

BLOCK = TypeAdapter[Block](Block)
"""Validates a block dict (a tool's attachment) into its type: ``BLOCK.validate_python(raw)``."""


class ExpectedImage(_Part):
    alt_text: str
    index: int


class ImagesSent(_Part):
    """Which images an analysis turn sent the model (the analysis result's ``images_sent``)."""

    experiment_figure: bool
    experiment_figure_paths: list[str]
    expected_images: list[ExpectedImage]
    task_name: str


class Answer(_Part):
    """A finished turn's answer; ``images_sent`` only on analysis turns, ``meta`` (ours: the stop
    reason and usage) only once the API renders it. Both are left out of the JSON when unset, as
    the dashboards' results never carried them as ``null``."""

    blocks: list[Block] = Field(min_length=1)
    assessment: Assessment | None = None
    images_sent: ImagesSent | None = Field(None, exclude_if=lambda value: value is None)
    meta: dict[str, Any] | None = Field(None, exclude_if=lambda value: value is None)

    @classmethod
    def text(cls, content: str) -> Answer:
        """One text block and no assessment (a stopped turn, a reply without a model)."""
        return cls(blocks=[TextBlock(content=content)])

    def wire(self) -> dict[str, Any]:
        """The answer as the dashboards' JSON object (keys in their order, unset extras left out)."""
        return self.model_dump()
