"""``qdash ask "…"``: one chat turn on the configured database from the terminal, with live progress.

For lab engineers and operators: it runs exactly what the dashboard's chat runs (same assistant,
same project-scoped tools, same model configuration) and prints the answer as markdown; charts are
listed by title and, with ``--charts-dir``, written as standalone HTML files.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Coroutine
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markdown import Markdown

from qdash.commands.scope import CliScope, resolve_scope
from qdash.copilot.requests import ChatRequest, ModelOverride
from qdash.engine.events import Failed, Final, Status, ToolFinished, Usage
from qdash.models.answer import Answer, ChartBlock
from qdash.settings import Settings

if TYPE_CHECKING:
    from qdash.copilot.assistant import Assistant
    from qdash.remote import Operator

EXIT_FAILED = 1


def chart_title(chart: dict[str, Any]) -> str:
    title = (chart.get("layout") or {}).get("title")
    if isinstance(title, dict):
        title = title.get("text")
    return str(title or "untitled")


def write_chart(directory: Path, index: int, chart: dict[str, Any]) -> Path:
    """A standalone HTML file with the figure (plotly.js inlined: no CDN needed to open it)."""
    import plotly.io

    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"chart-{index}.html"
    plotly.io.write_html(chart, str(path), include_plotlyjs=True, full_html=True)
    return path


def print_result(console: Console, answer: Answer, charts_dir: Path | None) -> None:
    chart_index = 0
    for block in answer.blocks:
        if isinstance(block, ChartBlock):
            chart_index += 1
            line = f"[chart {chart_index}: {chart_title(block.chart)}]"
            if charts_dir is not None:
                line += f" → {write_chart(charts_dir, chart_index, block.chart)}"
            console.print(line, style="cyan", markup=False)
        elif block.content:
            console.print(Markdown(block.content))
    if answer.assessment:
        console.print(f"Assessment: {answer.assessment}", style="bold")


async def run_ask(
    settings: Settings,
    db: Any,
    scope: CliScope,
    request: ChatRequest,
    *,
    console: Console,
    charts_dir: Path | None,
) -> int:
    """Run the turn, printing progress; returns the exit code."""
    from qdash.copilot.assistant import Assistant

    assistant = Assistant(db, settings)
    try:
        return await _print_turn(assistant, scope, request, console=console, charts_dir=charts_dir)
    finally:
        await assistant.aclose()


async def _print_turn(
    assistant: Assistant, scope: CliScope, request: ChatRequest, *, console: Console, charts_dir: Path | None
) -> int:
    with console.status("Starting...") as status:
        async for event in assistant.chat(scope, request):
            if isinstance(event, Status):
                status.update(event.message)
            elif isinstance(event, ToolFinished):
                mark = "✗" if event.is_error else "✓"
                console.print(f"{mark} {event.label} ({event.duration_ms:.0f} ms)", style="dim", markup=False)
            elif isinstance(event, Usage) and event.input_tokens is not None:
                console.print(
                    f"  round {event.round}: {event.input_tokens} in / {event.output_tokens} out tokens",
                    style="dim",
                )
            elif isinstance(event, Failed):
                console.print(f"Error: {event.detail}", style="red", markup=False)
                return EXIT_FAILED
            elif isinstance(event, Final):
                status.stop()
                print_result(console, event.result, charts_dir)
                console.print(f"(stop: {event.stop_reason})", style="dim")
                return 0
    return EXIT_FAILED


def ask(
    question: Annotated[str, typer.Argument(help="What to ask, e.g. 'Which qubits lost T1 this week?'")],
    *,
    user: Annotated[str, typer.Option(help="Whose view to use (a user in the database).")] = "alice",
    project: Annotated[str | None, typer.Option(help="Project id (default: the user's default).")] = None,
    chip: Annotated[str | None, typer.Option(help="Chip id for context (default: latest chip).")] = None,
    qid: Annotated[
        str | None, typer.Option(help="Qubit whose parameters are preloaded (with --chip).")
    ] = None,
    model: Annotated[str | None, typer.Option(help="Configured model alias (copilot.models).")] = None,
    charts_dir: Annotated[Path | None, typer.Option(help="Write charts as HTML files here.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the final result as JSON only.")] = False,
) -> None:
    """Ask one question about the lab from the terminal (live progress, markdown answer)."""
    from qdash.bootstrap import prepare_database
    from qdash.route import routed
    from qdash.settings import get_settings

    settings = get_settings()
    request = ChatRequest(
        message=question,
        chip_id=chip,
        qid=qid,
        model_override=ModelOverride(alias=model) if model else None,
    )
    code = routed(
        partial(prepare_database, settings),
        lambda db: _ask_here(settings, db, request, user, project, charts_dir=charts_dir, as_json=as_json),
        lambda route: _ask_remote(
            route.operator(user, project), request, charts_dir=charts_dir, as_json=as_json
        ),
    )
    raise typer.Exit(code)


def _ask_here(
    settings: Settings,
    db: Any,
    request: ChatRequest,
    user: str,
    project: str | None,
    *,
    charts_dir: Path | None,
    as_json: bool,
) -> int:
    from qdash.copilot.demo_model import with_demo_model

    settings = with_demo_model(settings)  # only here: through a server, the server's models answer
    scope = resolve_scope(db, user, project)
    if as_json:
        return asyncio.run(_with_sandbox_stopped(_ask_json(settings, db, scope, request)))
    return asyncio.run(
        _with_sandbox_stopped(run_ask(settings, db, scope, request, console=Console(), charts_dir=charts_dir))
    )


def _ask_remote(operator: Operator, request: ChatRequest, *, charts_dir: Path | None, as_json: bool) -> int:
    """The turn through the running ``qdash serve`` that holds the embedded store; the exit code.

    The server's refusals raise ``RemoteError`` (``qdash.route`` prints them).
    """
    from qdash.remote import RemoteError

    console = Console(stderr=as_json)
    body = request.model_dump(mode="json", exclude_none=True)
    with console.status("Starting...") as status:
        for event, data in operator.chat_events(body):
            if event == "status":
                status.update(str(data.get("message", "")))
            elif event == "tool_result":
                mark = "✗" if data.get("is_error") else "✓"
                console.print(
                    f"{mark} {data.get('label')} ({data.get('duration_ms', 0):.0f} ms)",
                    style="dim",
                    markup=False,
                )
            elif event == "error":
                raise RemoteError(str(data.get("detail")))
            elif event == "result":
                status.stop()
                if as_json:
                    typer.echo(json.dumps(data, ensure_ascii=False))
                else:
                    print_result(console, remote_answer(data), charts_dir)
                return 0
    return EXIT_FAILED


def remote_answer(data: Any) -> Answer:
    """The server's ``result`` as an answer; one this qdash cannot read (another version's) says so."""
    from qdash.remote import RemoteError

    try:
        return Answer.model_validate(data)
    except ValidationError as exc:
        raise RemoteError(
            f"The server's answer is not one this qdash can show ({exc.errors()[0]['msg']}); "
            "run the same qdash version as the server, or use --json to print it as sent."
        ) from None


async def _with_sandbox_stopped(run: Coroutine[Any, Any, int]) -> int:
    """Run, then stop the sandbox pool the turn may have started (no stray zygote after exit)."""
    from qdash.sandbox import stop_sandbox

    try:
        return await run
    finally:
        await stop_sandbox()


async def _ask_json(settings: Settings, db: Any, scope: CliScope, request: ChatRequest) -> int:
    from qdash.copilot.assistant import Assistant

    assistant = Assistant(db, settings)
    try:
        async for event in assistant.chat(scope, request):
            if isinstance(event, Final):
                typer.echo(json.dumps(event.result.wire(), ensure_ascii=False))
                return 0
            if isinstance(event, Failed):
                typer.echo(json.dumps({"error": event.detail, "code": event.code}), err=True)
                return EXIT_FAILED
        return EXIT_FAILED
    finally:
        await assistant.aclose()
