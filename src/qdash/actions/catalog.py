"""The lab actions: which document each one changes and which fields, in upstream QDash's shapes.

Why upstream's shapes: a lab's upstream dashboard reads these fields. Its exclusion toggle
(``POST /task-results/{task_id}/exclude``) sets ``excluded``, ``excluded_reason`` (empty when
restoring), ``excluded_by``, ``excluded_by_user_id`` and ``excluded_at`` (on both toggles); its
task-result note (``PUT /task-results/{task_id}/note``) sets ``user_note = {content, updated_by,
updated_at}`` (a BSON date: upstream's partial note index selects ``updated_at`` of type date).
Each action touches only those fields of the one task result, found by its unique key
(``project_id``, ``task_id``); nothing else is written to a lab's collections.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from qdash.repositories.refused import RefusedError
from qdash.repositories.task_results import TASK_RESULTS
from qdash.repositories.upstream_values import as_utc

if TYPE_CHECKING:  # the tool catalogue imports this module; ``qdash tools list`` loads no driver
    from pymongo.database import Database

Doc = dict[str, Any]
UNDO = "undo_action"
"""The write tool that reverts a recorded action (its own approval, its own record)."""


class ActionError(RefusedError):
    """The action cannot be proposed or carried out as asked: the API answers 400 with the message;
    the write tools pass the message and ``hint`` (what to do instead) to the model."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(400, message)
        self.hint = hint


@dataclass(frozen=True)
class Actor:
    """The person whose approval makes the write (upstream records name and user id)."""

    username: str
    user_id: str | None


@dataclass(frozen=True)
class Target:
    """One document of a lab collection, by its unique key within the project."""

    collection: str
    key: dict[str, str]

    def filter(self, project_id: str) -> Doc:
        return {"project_id": project_id, **self.key}

    def as_doc(self) -> Doc:
        return {"collection": self.collection, "key": dict(self.key)}

    @classmethod
    def of(cls, doc: Doc) -> Target:
        return cls(str(doc["collection"]), {str(k): str(v) for k, v in doc["key"].items()})


@dataclass(frozen=True)
class Proposal:
    """What the person is asked to approve: a one-line label and the document it changes."""

    label: str
    target: Target


class Action(Protocol):
    """One kind of write: ``propose`` reads (never writes) and describes it; ``changes`` are the
    field values the approved write sets, computed when it runs."""

    name: str
    switch: str
    """The ``actions.<switch>`` setting that must be on for the model to be offered it."""
    fields: tuple[str, ...]

    def propose(self, db: Database[Doc], project_id: str, args: Doc) -> Proposal: ...

    def changes(self, args: Doc, actor: Actor, now: datetime) -> Doc: ...


_RESULT_FIELDS = {"task_id": 1, "name": 1, "qid": 1, "chip_id": 1, "start_at": 1, "excluded": 1}


def task_result(db: Database[Doc], project_id: str, task_id: str) -> Doc:
    doc = db[TASK_RESULTS].find_one({"project_id": project_id, "task_id": task_id}, _RESULT_FIELDS)
    if doc is None:
        raise ActionError(
            f"No task result {task_id!r} in this project",
            "Find its task_id with get_latest_task_result or get_task_history first.",
        )
    return doc


def describe(doc: Doc) -> str:
    """``CheckT1 on Q16 (64Qv3, run 2026-11-20 10:00 UTC)``: what a person recognises."""
    qid = str(doc.get("qid") or "")
    who = f"Q{qid}" if qid.isdigit() else qid or "the chip"
    start = as_utc(doc.get("start_at"))
    when = f", run {start:%Y-%m-%d %H:%M} UTC" if start else ""
    return f"{doc.get('name')} on {who} ({doc.get('chip_id')}{when})"


def _result_target(task_id: str) -> Target:
    return Target(TASK_RESULTS, {"task_id": task_id})


EXCLUSION_FIELDS = ("excluded", "excluded_reason", "excluded_by", "excluded_by_user_id", "excluded_at")


class Exclusion:
    """Exclude a result from statistics (``excluded=True``) or restore it: upstream's one toggle,
    which writes the same five fields either way (the reason only when excluding)."""

    switch = "exclude_task_result"
    fields: tuple[str, ...] = EXCLUSION_FIELDS

    def __init__(self, excluded: bool) -> None:
        self.excluded = excluded
        self.name = "exclude_task_result" if excluded else "restore_task_result"

    def propose(self, db: Database[Doc], project_id: str, args: Doc) -> Proposal:
        doc = task_result(db, project_id, args["task_id"])
        if (doc.get("excluded") is True) == self.excluded:
            state = "already excluded" if self.excluded else "not excluded"
            raise ActionError(f"{describe(doc)} is {state}", "Nothing to do; say so to the user.")
        label = (
            f"Exclude {describe(doc)} from statistics"
            if self.excluded
            else f"Restore {describe(doc)} to statistics"
        )
        return Proposal(label, _result_target(args["task_id"]))

    def changes(self, args: Doc, actor: Actor, now: datetime) -> Doc:
        return {
            "excluded": self.excluded,
            "excluded_reason": args["reason"] if self.excluded else "",
            "excluded_by": actor.username,
            "excluded_by_user_id": actor.user_id,
            "excluded_at": now,
        }


class NoteResult:
    name = "note_task_result"
    switch = "note_task_result"
    fields: tuple[str, ...] = ("user_note",)

    def propose(self, db: Database[Doc], project_id: str, args: Doc) -> Proposal:
        doc = task_result(db, project_id, args["task_id"])
        return Proposal(f"Set the note of {describe(doc)}", _result_target(args["task_id"]))

    def changes(self, args: Doc, actor: Actor, now: datetime) -> Doc:
        return {"user_note": {"content": args["content"], "updated_by": actor.username, "updated_at": now}}


REVIEWS = "copilot_review"
"""Our AI reviews (``qdash.review.store``): upstream has no field for a person's verdict on one."""


class LabelReview:
    """A person confirms or corrects an AI review's decision and label: ``human_label`` on our own
    review document (the newest of that task result), never on upstream's ``ai_review`` fields."""

    name = "label_ai_review"
    switch = "label_ai_review"
    fields: tuple[str, ...] = ("human_label",)

    def propose(self, db: Database[Doc], project_id: str, args: Doc) -> Proposal:
        result = task_result(db, project_id, args["task_id"])
        review = db[REVIEWS].find_one(  # a review whose job was undone is no longer current
            {"project_id": project_id, "task_id": args["task_id"], "undone_by": None},
            sort=[("created_at", -1)],
        )
        if review is None:
            raise ActionError(
                f"No AI review of {describe(result)}",
                "Review it first (qdash review run).",
            )
        verdict = (args["decision"], args["label"])
        same = verdict == (review.get("decision"), review.get("label"))
        how = "confirming" if same else f"correcting {review.get('decision')}/{review.get('label')}"
        label = f"Label the AI review of {describe(result)} {verdict[0]}/{verdict[1]} ({how})"
        return Proposal(label, Target(REVIEWS, {"_id": str(review["_id"])}))

    def changes(self, args: Doc, actor: Actor, now: datetime) -> Doc:
        human = {"decision": args["decision"], "label": args["label"], "comment": args.get("comment") or ""}
        return {"human_label": {**human, "by": actor.username, "at": now}}


_ALL: tuple[Action, ...] = (
    Exclusion(excluded=True),
    Exclusion(excluded=False),
    NoteResult(),
    LabelReview(),
)
ACTIONS: dict[str, Action] = {action.name: action for action in _ALL}
