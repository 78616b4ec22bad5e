"""``qdash feedback list``: thumbs-down answers with the question, the tools called and the answer.

The data comes from the stored chat sessions (``qdash.repositories.feedback``). While ``qdash
serve`` holds the embedded store the command asks that server (``GET /copilot/chat/feedback``) as
``--as``; otherwise it opens the store itself. Either way the same rule applies: the project's owner
sees every member's ratings, anyone else only their own.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.text import Text

from qdash.tables import FittingTable

feedback_app = typer.Typer(help="Answers rated thumbs-down in the dashboard.")
ANSWER_CHARS = 240
"""The table shows this much of an answer; ``--json`` has all of it."""

Project = Annotated[str | None, typer.Option(help="Project id (default: the --as user's default).")]
User = Annotated[str | None, typer.Option(help="Only this user's ratings (default: every user you may see).")]
Since = Annotated[datetime | None, typer.Option(help="Sessions written at or after this time (ISO, UTC).")]
Viewer = Annotated[str, typer.Option("--as", help="Whose view: an owner sees every member's ratings.")]


def fetch(viewer: str, project: str | None, user: str | None, since: datetime | None) -> list[dict[str, Any]]:
    """Thumbs-down answers as JSON objects, from the store or through the server that holds it."""
    from qdash.bootstrap import prepare_database
    from qdash.db import close_database
    from qdash.db.errors import DatabaseInUseError
    from qdash.settings import get_settings

    try:
        db = prepare_database(get_settings())
    except DatabaseInUseError as exc:
        if exc.server is None:
            raise
        return _fetch_served(exc.server, viewer, project, user, since)
    from qdash.copilot.ask import resolve_scope
    from qdash.repositories.feedback import FeedbackForbiddenError, thumbs_down

    try:
        scope = resolve_scope(db, viewer, project)
        try:
            rated = thumbs_down(db, scope.project_id, scope.username, user=user, since=since)
        except FeedbackForbiddenError as error:
            raise typer.BadParameter(str(error), param_hint="--user") from None
        return [answer.as_json() for answer in rated]
    finally:
        close_database(db)


def _fetch_served(
    server: Any, viewer: str, project: str | None, user: str | None, since: datetime | None
) -> list[dict[str, Any]]:
    from qdash.remote import Operator, RemoteError

    typer.echo(
        f"(the embedded store is held by qdash serve, PID {server.pid}: asking {server.url})", err=True
    )
    params = {k: v for k, v in {"user": user, "since": since and since.isoformat()}.items() if v}
    try:
        body = Operator(server, viewer, project).request_json("GET", "/copilot/chat/feedback", params=params)
    except RemoteError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(1) from None
    return list(body["feedback"])


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
    rated = fetch(viewer, project, user, since)
    if as_json:
        typer.echo(json.dumps(rated, indent=2, ensure_ascii=False))
        return
    console = Console()
    if not rated:
        console.print("No thumbs-down answers.")
        return
    table = FittingTable("rated", "user", "question", "tools", "answer")
    for answer in rated:
        text = " ".join(answer["answer"].split())
        if len(text) > ANSWER_CHARS:
            text = text[: ANSWER_CHARS - 1] + "…"
        cells = (answer["rated_at"][:16].replace("T", " "), answer["username"], answer["question"])
        table.add_row(*(Text(cell) for cell in (*cells, tools_line(answer["tools"]), text)))  # no markup
    console.print(table)
