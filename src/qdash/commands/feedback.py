"""``qdash feedback list``: thumbs-down answers with the question, the tools called and the answer.

The data comes from the stored chat sessions (``qdash.repositories.feedback``). ``qdash.route``
picks the way: the store opened here, or, while ``qdash serve`` holds it, that server's ``GET
/copilot/chat/feedback`` as ``--as``. Either way the same rule applies: the project's owner
sees every member's ratings, anyone else only their own.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any

import typer

from qdash.tables import print_records

if TYPE_CHECKING:
    from pymongo.database import Database

feedback_app = typer.Typer(help="Answers rated thumbs-down in the dashboard.")
ANSWER_CHARS = 240
"""The table shows this much of an answer; ``--json`` has all of it."""

Project = Annotated[str | None, typer.Option(help="Project id (default: the --as user's default).")]
User = Annotated[str | None, typer.Option(help="Only this user's ratings (default: every user you may see).")]
Since = Annotated[datetime | None, typer.Option(help="Sessions written at or after this time (ISO, UTC).")]
Viewer = Annotated[str, typer.Option("--as", help="Whose view: an owner sees every member's ratings.")]


def fetch(viewer: str, project: str | None, user: str | None, since: datetime | None) -> list[dict[str, Any]]:
    """Thumbs-down answers as JSON objects, from the store or through the server that holds it
    (``qdash.route``); none when there is no store yet."""
    from qdash.route import Remote, read_only
    from qdash.settings import get_settings

    def there(route: Remote) -> list[dict[str, Any]]:
        params = {"user": user, "since": since.isoformat() if since else None}
        body = route.operator(viewer, project).request_json(
            "GET", "/copilot/chat/feedback", params={k: v for k, v in params.items() if v}
        )
        return list(body["feedback"])

    def here(db: Database[dict[str, Any]]) -> list[dict[str, Any]]:
        from qdash.commands.scope import resolve_scope
        from qdash.repositories.feedback import FeedbackForbiddenError, thumbs_down

        scope = resolve_scope(db, viewer, project)
        try:
            rated = thumbs_down(db, scope.project_id, scope.username, user=user, since=since)
        except FeedbackForbiddenError as error:
            raise typer.BadParameter(str(error), param_hint="--user") from None
        return [answer.as_json() for answer in rated]

    return read_only(get_settings(), here, there, [])


def tools_line(tools: list[dict[str, Any]] | None) -> str:
    """The tool names in call order; says when the dashboard stored no trace to read them from."""
    if tools is None:
        return "(no trace stored)"
    return ", ".join(str(step["tool"]) for step in tools) or "none"


@feedback_app.command("list")
def list_command(
    project: Project = None,
    user: User = None,
    since: Since = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON (every field, whole answers).")] = False,
    viewer: Viewer = "alice",
) -> None:
    """Thumbs-down answers: when, who, the question, the tools called and the answer."""
    print_records(
        fetch(viewer, project, user, since),
        ("rated", "user", "question", "tools", "answer"),
        _cells,
        as_json=as_json,
        empty="No thumbs-down answers.",
    )


def _cells(answer: dict[str, Any]) -> tuple[str, ...]:
    text = " ".join(answer["answer"].split())
    if len(text) > ANSWER_CHARS:
        text = text[: ANSWER_CHARS - 1] + "…"
    rated_at = answer["rated_at"][:16].replace("T", " ")
    return (rated_at, answer["username"], answer["question"], tools_line(answer["tools"]), text)
