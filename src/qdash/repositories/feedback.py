"""Answers rated thumbs-down in the dashboard, read from the stored chat sessions.

Where the rating lives: the newest upstream dashboard keeps it inside the assistant message's
``content`` (the JSON of the answer: ``{"blocks": …, "trace": …, "feedback": "up" | "down"}``) and
sends it with the rest of the conversation through the session ``PATCH``; the sessions API stores
``content`` as sent, so nothing else records it (docs/upstream-dashboard-stream.md, "Answer
feedback"). The tools called come from the same payload's ``trace`` when the dashboard stored one.

Who sees what: the project's owner sees every member's ratings (``user`` narrows them), anyone else
only their own, so a question a colleague asked is not shown to other members.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pymongo import DESCENDING
from pymongo.database import Database

from qdash.repositories.membership import active_memberships
from qdash.repositories.scope import ProjectScope
from qdash.repositories.sessions import COLLECTION

THUMBS_DOWN = "down"
MAX_SESSIONS = 2000
"""Sessions read per listing (newest first): a bound on one call, far above a lab's rating rate."""


class FeedbackForbiddenError(Exception):
    """A member who is not the project's owner asked for another user's ratings."""


@dataclass(frozen=True)
class RatedAnswer:
    """One thumbs-down answer with what led to it."""

    project_id: str
    session_id: str
    username: str
    title: str
    context: dict[str, Any] | None
    index: int
    """Position of the answer in the session's messages."""
    rated_at: datetime
    """When the session was last written (the rating arrives with a session ``PATCH``)."""
    question: str
    answer: str
    tools: list[dict[str, Any]] | None
    """``[{tool, args, status}]`` from the stored trace; ``None`` when no trace was stored."""

    def as_json(self) -> dict[str, Any]:
        rated_at = self.rated_at if self.rated_at.tzinfo else self.rated_at.replace(tzinfo=UTC)
        return {**self.__dict__, "rated_at": rated_at.isoformat()}


def is_owner(db: Database[dict[str, Any]], project_id: str, username: str) -> bool:
    owned = db["project"].find_one({"project_id": project_id, "owner_username": username}, {"_id": 1})
    return owned is not None or active_memberships(db, username).get(project_id) == "owner"


def thumbs_down(
    db: Database[dict[str, Any]],
    project_id: str,
    viewer: str,
    *,
    user: str | None = None,
    since: datetime | None = None,
) -> list[RatedAnswer]:
    """The project's thumbs-down answers the ``viewer`` may see, newest session first. Blocking."""
    if not is_owner(db, project_id, viewer):
        if user not in (None, viewer):
            raise FeedbackForbiddenError(f"only the project's owner sees other members' feedback ({user})")
        user = viewer
    query: dict[str, Any] = {}
    if user is not None:
        query["username"] = user
    if since is not None:
        query["updated_at"] = {"$gte": since if since.tzinfo else since.replace(tzinfo=UTC)}
    sessions = ProjectScope(db, project_id).iter_find(
        COLLECTION, query, sort=[("updated_at", DESCENDING), ("session_id", 1)], limit=MAX_SESSIONS
    )
    return [rated for doc in sessions for rated in _rated_in(doc)]


def _rated_in(doc: dict[str, Any]) -> list[RatedAnswer]:
    messages = doc.get("messages") or []
    found: list[RatedAnswer] = []
    for index, message in enumerate(messages):
        payload = _answer_payload(message)
        if payload is None or payload.get("feedback") != THUMBS_DOWN:
            continue
        question = next(
            (str(m.get("content", "")) for m in reversed(messages[:index]) if m.get("role") == "user"), ""
        )
        found.append(
            RatedAnswer(
                project_id=str(doc["project_id"]),
                session_id=str(doc["session_id"]),
                username=str(doc["username"]),
                title=str(doc.get("title", "")),
                context=doc.get("context") if isinstance(doc.get("context"), dict) else None,
                index=index,
                rated_at=doc["updated_at"],
                question=question,
                answer=answer_text(payload),
                tools=tools_called(payload),
            )
        )
    return found


def _answer_payload(message: dict[str, Any]) -> dict[str, Any] | None:
    content = message.get("content")
    if message.get("role") != "assistant" or not isinstance(content, str) or not content.startswith("{"):
        return None
    try:
        payload = json.loads(content)
    except ValueError:
        return None
    return payload if isinstance(payload, dict) else None


def answer_text(payload: dict[str, Any]) -> str:
    """The text the user read: the answer's text blocks (else its ``explanation``)."""
    blocks = payload.get("blocks")
    if isinstance(blocks, list):
        texts = [
            str(b["content"])
            for b in blocks
            if isinstance(b, dict) and b.get("type") == "text" and b.get("content")
        ]
        if texts:
            return "\n\n".join(texts)
    return str(payload.get("explanation") or "")


def tools_called(payload: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The tool steps of the stored trace (the dashboard keeps ``args`` when it stored them)."""
    trace = payload.get("trace")
    if not isinstance(trace, dict) or not isinstance(trace.get("steps"), list):
        return None
    return [
        {"tool": str(step.get("tool", "")), "args": step.get("args"), "status": step.get("status")}
        for step in trace["steps"]
        if isinstance(step, dict) and step.get("kind") == "tool"
    ]
