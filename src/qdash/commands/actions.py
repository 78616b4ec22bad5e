"""``qdash actions list``: the project's lab actions from ``copilot_action_audit``, newest first.

``qdash.route`` picks the way, as for ``qdash feedback``: the store opened here, or, while
``qdash serve`` holds it, that server's ``GET /copilot/actions/audit`` as ``--as``. Interrupted
writes are settled before listing (``qdash.actions.audit``), so the list and the data agree.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

import typer

from qdash.tables import print_records

if TYPE_CHECKING:
    from pymongo.database import Database

actions_app = typer.Typer(help="Lab actions the copilot proposed and a person approved (the audit).")

Project = Annotated[str | None, typer.Option(help="Project id (default: the --as user's default).")]
Viewer = Annotated[str, typer.Option("--as", help="Whose membership reads the project.")]


def fetch(viewer: str, project: str | None, limit: int) -> list[dict[str, Any]]:
    """The audit records as JSON objects, from the store or through the server that holds it; none
    when there is no store yet."""
    from qdash.route import Remote, read_only
    from qdash.settings import get_settings

    def there(route: Remote) -> list[dict[str, Any]]:
        body = route.operator(viewer, project).request_json(
            "GET", "/copilot/actions/audit", params={"limit": str(limit)}
        )
        return list(body["records"])

    def here(db: Database[dict[str, Any]]) -> list[dict[str, Any]]:
        from qdash.actions.audit import records
        from qdash.commands.scope import resolve_scope

        scope = resolve_scope(db, viewer, project)
        return [
            json.loads(json.dumps(record, default=str)) for record in records(db, scope.project_id, limit)
        ]

    return read_only(get_settings(), here, there, [])


@actions_app.command("list")
def list_command(
    project: Project = None,
    viewer: Viewer = "alice",
    limit: Annotated[int, typer.Option(min=1, max=500, help="Newest records to show.")] = 50,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print JSON (every field, values before/after).")
    ] = False,
) -> None:
    """Who proposed and approved which action, when, with which model, and its state."""
    print_records(
        fetch(viewer, project, limit),
        ("when", "action", "state", "proposed → approved", "model", "id"),
        _cells,
        as_json=as_json,
        empty="No lab actions recorded.",
    )


def _cells(record: dict[str, Any]) -> tuple[str, ...]:
    state = str(record.get("state")) + (" (undone)" if record.get("undone_by") else "")
    return (
        str(record.get("started_at"))[:16].replace("T", " "),
        str(record.get("label")),
        state,
        f"{record.get('proposed_by')} → {record.get('approved_by')}",
        str(record.get("model") or "—"),
        str(record["_id"]),
    )
