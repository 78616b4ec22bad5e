"""Where reviews live: our ``copilot_review`` documents and upstream's fields on the task result.

Why both: upstream QDash's dashboard reads ``task_result_history.ai_review_note`` (a note apart from
``user_note``) and ``ai_review`` (the request state), so its AI Reviews page shows our reviews
unchanged; our own documents keep what upstream has no field for (guards, the structured verdict,
the configuration, tokens) and make reviews idempotent: the ``_id`` is project + task result +
configuration key, so a second insert of the same review fails instead of duplicating it.

Write order is the crash-safety rule: upstream's fields first, our document last. Our document is
the commit marker: if a process dies between the two, the review is simply done again. Each write
to upstream's fields is recorded before it is made (``writes.py``: job, who, values before and
after), with the review document it replaces, so ``undo.py`` can take a job's verdicts back.
A review taken back (``undone_by``) is not current: listings leave it out and the next run of
that result and configuration reviews it again.
Every filter carries the project; a task result of another project is "not found".
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pymongo.database import Database
from pymongo.errors import DuplicateKeyError

from qdash.models.ai_review import ai_review_note, ai_review_state, render_note
from qdash.models.common import utc_now
from qdash.repositories.scope import Doc, ProjectScope
from qdash.repositories.task_results import TASK_RESULTS
from qdash.review.config import ReviewConfig
from qdash.review.outcome import Outcome
from qdash.review.writes import write

REVIEWS = "copilot_review"


class ReviewNotFoundError(LookupError):
    """No such task result or review in this project (the API answers 404)."""


@dataclass(frozen=True)
class ReviewRequest:
    """Who asked for a review and how (upstream's ``ai_review.requested_by`` / ``trigger_type``)."""

    requested_by: str
    job_id: str | None = None
    trigger: str = "manual_single"
    """``manual_single`` (one result) or ``manual_chip_bulk`` (a job), as upstream names them."""
    force: bool = False


def review_id(project_id: str, task_id: str, config: ReviewConfig) -> str:
    return f"{project_id}:{task_id}:{config.key}"


class ReviewStore:
    """Reads and writes of one project's reviews; nothing here can see another project."""

    def __init__(self, db: Database[Doc], project_id: str) -> None:
        self.db = db
        self.project_id = project_id
        self.scope = ProjectScope(db, project_id)

    def task_result(self, task_id: str) -> Doc:
        """The task result under review, or :class:`ReviewNotFoundError` naming it."""
        doc = self.scope.find_one(TASK_RESULTS, {"task_id": task_id})
        if doc is None:
            raise ReviewNotFoundError(f"Task result not found in project {self.project_id}: {task_id}")
        return doc

    def existing(self, task_id: str, config: ReviewConfig) -> Doc | None:
        """The current review of this result under this configuration (not one taken back), if any."""
        key = review_id(self.project_id, task_id, config)
        return self.scope.find_one(REVIEWS, {"_id": key, "undone_by": None})

    def get(self, review: str) -> Doc:
        doc = self.scope.find_one(REVIEWS, {"_id": review})
        if doc is None:
            raise ReviewNotFoundError(f"Review not found in project {self.project_id}: {review}")
        return doc

    def list(
        self, filters: dict[str, str], *, latest_only: bool = False, limit: int = 50, offset: int = 0
    ) -> list[Doc]:
        """Reviews newest result first, filtered by equality on stored fields (``chip_id``,
        ``task_name``, ``decision``, ``label``, ``execution_id``, ``job_id``, ``qid``).

        ``latest_only`` keeps the newest review of each (task, qid), as the dashboard's AI Reviews
        page, and only then applies the verdict filters: a qubit whose newest review passed is not
        listed as failing because of an older one.
        Reviews taken back (``qdash review undo``) are not listed.
        """
        verdict_keys = ("decision", "label") if latest_only else ()
        query: Doc = {key: value for key, value in filters.items() if key not in verdict_keys}
        query["undone_by"] = None
        wanted = {key: filters[key] for key in verdict_keys if key in filters}
        cursor = self.scope.iter_find(REVIEWS, query, sort=[("result_start_at", -1), ("created_at", -1)])
        seen: set[tuple[str, str]] = set()
        page: list[Doc] = []
        skipped = 0
        for doc in cursor:
            key = (str(doc.get("task_name")), str(doc.get("qid")))
            if latest_only:
                if key in seen:
                    continue
                seen.add(key)
            if any(doc.get(name) != value for name, value in wanted.items()):
                continue
            if skipped < offset:
                skipped += 1
                continue
            page.append(doc)
            if len(page) == limit:
                break
        return page

    def save(
        self,
        result: Doc,
        config: ReviewConfig,
        outcome: Outcome,
        request: ReviewRequest,
    ) -> tuple[Doc, bool]:
        """Store one review; returns ``(document, created)``. Without ``request.force`` a current
        review of the same result and configuration is returned unchanged (``created`` False); one
        taken back is replaced. :class:`ReviewNotFoundError` when the result is gone."""
        key = review_id(self.project_id, str(result["task_id"]), config)
        found = self.scope.find_one(REVIEWS, {"_id": key})
        if found is not None and not request.force and not found.get("undone_by"):
            return found, False
        now = utc_now()  # to the millisecond: the write record's values compare equal to the stored ones
        note = render_note(outcome.verdict)
        upstream = {
            "ai_review_note": ai_review_note(note, now),
            "ai_review": _ai_review_state(config, now, request, request.job_id or key, status="completed"),
        }
        self._write(result, upstream, request, kind="review", review_id=key, review_before=found)
        doc = self._document(key, result, config, outcome, note=note, now=now, request=request)
        if request.force:
            self.db[REVIEWS].replace_one({"_id": key, "project_id": self.project_id}, doc, upsert=True)
            return doc, True
        if not self._store_new(doc, replacing_undone=found is not None):  # another runner was first
            return self.get(key), False
        doc.pop("_id", None)
        return {"_id": key, **doc}, True

    def _store_new(self, doc: Doc, *, replacing_undone: bool) -> bool:
        """Insert the review, or replace the one taken back; ``False`` when another runner stored a
        current one first (theirs stands)."""
        if replacing_undone:
            query = {"_id": doc["_id"], "project_id": self.project_id, "undone_by": {"$ne": None}}
            return bool(self.db[REVIEWS].replace_one(query, doc).matched_count)
        try:
            self.db[REVIEWS].insert_one(doc)
        except DuplicateKeyError:
            return False
        return True

    def mark_failed(self, result: Doc, config: ReviewConfig, error: str, request: ReviewRequest) -> None:
        """Upstream's request state for a review that could not run (model down); no review is stored,
        so the next run tries again."""
        run_id = request.job_id or review_id(self.project_id, str(result["task_id"]), config)
        state = _ai_review_state(config, utc_now(), request, run_id, status="failed", error=error)
        self._write(result, {"ai_review": state}, request, kind="failed")

    def _write(self, result: Doc, values: Doc, request: ReviewRequest, *, kind: str, **meta: Any) -> None:
        """Upstream's fields (``ai_review_note``, ``ai_review``) in upstream's shapes, recorded first
        (``writes.py``); ``user_note`` is never touched."""
        task_id = str(result["task_id"])
        who = {"job_id": request.job_id, "requested_by": request.requested_by, "trigger": request.trigger}
        if write(self.db, self.project_id, task_id, values, {"kind": kind, **who, **meta}) is None:
            raise ReviewNotFoundError(f"Task result not found in project {self.project_id}: {task_id}")

    def _document(
        self,
        key: str,
        result: Doc,
        config: ReviewConfig,
        outcome: Outcome,
        *,
        note: str,
        now: datetime,
        request: ReviewRequest,
    ) -> Doc:
        verdict = outcome.verdict
        return {
            "_id": key,
            "review_id": key,
            "project_id": self.project_id,
            "task_id": str(result["task_id"]),
            "task_name": str(result.get("name") or ""),
            "chip_id": str(result.get("chip_id") or ""),
            "qid": str(result.get("qid") or ""),
            "execution_id": str(result.get("execution_id") or ""),
            "task_status": str(result.get("status") or ""),
            "result_start_at": result.get("start_at"),
            "config": config.as_doc(),
            "decision": verdict.decision,
            "label": verdict.label,
            "verdict": verdict.model_dump(),
            "source": outcome.source,
            "guards": outcome.guard_dicts(),
            "note": note,
            "usage": outcome.usage,
            "prompt": outcome.prompt,
            "outputs": outcome.guards.outputs,
            "job_id": request.job_id,
            "requested_by": request.requested_by,
            "created_at": now,
        }


def _ai_review_state(
    config: ReviewConfig,
    now: datetime,
    request: ReviewRequest,
    run_id: str,
    *,
    status: str,
    error: str = "",
) -> dict[str, Any]:
    return ai_review_state(
        status=status,
        at=now,
        requested_by=request.requested_by,
        run_id=run_id,
        trigger=request.trigger,
        provider=config.provider,
        model=config.model,
        error=error,
    )
