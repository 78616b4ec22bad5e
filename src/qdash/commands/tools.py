"""``qdash tools``: list the tools and call one exactly as the model would.

Why: when an answer looks wrong, the first question is "what did the tool return?". ``call`` runs
the same executor the agent runs (validation, guards, data store, compaction, size guard) on the
configured database — the embedded demo lab by default — and prints the JSON the model sees.
``list --json`` prints every definition in the Responses tool shape, schema included.
"""

from __future__ import annotations

import asyncio
import json
from functools import partial
from typing import TYPE_CHECKING, Annotated, Any

import typer

from qdash.settings import get_settings

if TYPE_CHECKING:
    from pymongo.database import Database

tools_app = typer.Typer(
    help="List the calibration tools or call one as the model would.", no_args_is_help=True
)


@tools_app.command("list")
def list_tools(
    as_json: Annotated[bool, typer.Option("--json", help="Every tool in the Responses tool shape.")] = False,
    chat: Annotated[bool, typer.Option("--chat", help="With --json: the Chat Completions shape.")] = False,
) -> None:
    """The tools the model sees, in order (needs no database)."""
    from qdash.copilot.tools.registry import default_registry

    registry = default_registry(get_settings())
    if as_json:
        typer.echo(registry.to_json("chat" if chat else "responses"))
        return
    width = max(len(name) for name in registry.names)
    for spec in registry:
        params = ", ".join(registry.parameters(spec.name)["properties"])
        typer.echo(f"{spec.name:<{width}}  {spec.label}  ({params})")


@tools_app.command("call")
def call_tool(
    name: Annotated[str, typer.Argument(help="Tool name, e.g. get_qubit_params.")],
    args: Annotated[str, typer.Option("--args", help="Arguments as a JSON object.")] = "{}",
    project: Annotated[str, typer.Option("--project", help="Project scope.")] = "proj-demo",
    user: Annotated[str, typer.Option("--user", help="User name (data-store scope).")] = "alice",
    session: Annotated[str | None, typer.Option("--session", help="Chat session id (data store).")] = None,
) -> None:
    """Run one tool on the configured database and print what the model would see.

    Exit status 0 on success, 1 when the tool answered with an error (the error JSON is printed).
    """
    from qdash.bootstrap import prepare_database
    from qdash.copilot.tools.jsonsafe import dumps
    from qdash.route import Remote, routed

    try:
        arguments = json.loads(args)
    except json.JSONDecodeError as exc:
        typer.echo(f"error: --args is not valid JSON ({exc})", err=True)
        raise typer.Exit(2) from None
    if not isinstance(arguments, dict):
        typer.echo("error: --args must be a JSON object", err=True)
        raise typer.Exit(2)
    settings = get_settings()

    def there(route: Remote) -> tuple[str, list[dict[str, Any]], bool]:
        output, charts, is_error = route.operator(user, project).call_tool(name, arguments, session)
        return dumps(output), charts, is_error

    text, charts, is_error = routed(
        partial(prepare_database, settings),
        lambda db: asyncio.run(_call(db, name, arguments, project=project, user=user, session=session)),
        there,
    )
    typer.echo(text)
    if charts:
        typer.echo(f"({len(charts)} chart(s) intercepted for the user; not shown to the model)", err=True)
    if is_error:
        raise typer.Exit(1)


async def _call(
    db: Database[dict[str, Any]],
    name: str,
    arguments: dict[str, Any],
    *,
    project: str,
    user: str,
    session: str | None,
) -> tuple[str, list[dict[str, Any]], bool]:
    from qdash.copilot.service import ANALYSIS_TOOL, CopilotDataService
    from qdash.copilot.tools.output import output_data
    from qdash.copilot.tools.spec import ToolContext
    from qdash.sandbox import SandboxUnavailableError, start_sandbox, stop_sandbox

    settings = get_settings()
    sandbox = None
    try:
        if name == ANALYSIS_TOOL:
            try:
                sandbox = await start_sandbox(settings.sandbox)
            except SandboxUnavailableError as exc:
                typer.echo(f"warning: {exc}", err=True)
        service = CopilotDataService(ToolContext(db, project, user, settings, session, sandbox=sandbox))
        output = await service.call(name, arguments, chat=True)  # every tool it lists
        return output.model_text, output_data(output).charts, output.is_error
    finally:
        if sandbox is not None:
            await stop_sandbox()
