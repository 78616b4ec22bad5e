"""``qdash sandbox …``: run analysis code through the real sandbox from a shell.

Why: operators check a deployment's isolation (``qdash sandbox status`` lists the active layers)
and developers try analysis code exactly as the model's tool would run it, without the API.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Any

import typer

from qdash.logging import configure_logging
from qdash.sandbox.client import SandboxPool, SandboxResult, SandboxUnavailableError
from qdash.settings import get_settings

app = typer.Typer(help="Run analysis code in the sandbox.", no_args_is_help=True)


def _read_data(path: Path | None) -> dict[str, Any]:
    if path is None:
        return {}
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise typer.BadParameter(f"{path}: not a readable JSON file ({exc})", param_hint="--data") from None
    if not isinstance(loaded, dict):
        raise typer.BadParameter(f"{path}: the top level must be an object of data keys", param_hint="--data")
    return loaded


async def _run(code: str, data: dict[str, Any]) -> tuple[SandboxResult, dict[str, str]]:
    settings = get_settings()
    # stdout carries the JSON result only; the start-up log line would break it
    configure_logging("ERROR", settings.logging.json_output)
    pool = SandboxPool(settings.sandbox, one_shot_code=code)
    try:
        await pool.start()
        return await pool.run(code, data), pool.layers
    finally:
        await pool.stop()


@app.command("run")
def run(
    file: Annotated[
        Path, typer.Argument(exists=True, dir_okay=False, readable=True, help="Python file to run.")
    ],
    data: Annotated[
        Path | None, typer.Option("--data", help="JSON file whose object becomes `data`.")
    ] = None,
) -> None:
    """Run FILE with `data` from --data and print the JSON result; exit 1 when it reports an error."""
    payload = _read_data(data)
    try:
        result, _ = asyncio.run(_run(file.read_text(encoding="utf-8"), payload))
    except SandboxUnavailableError as exc:
        typer.echo(json.dumps({"output": None, "error": str(exc), "chart": None}))
        raise typer.Exit(1) from None
    typer.echo(json.dumps(result.to_dict(), ensure_ascii=False))
    if result.error is not None:
        raise typer.Exit(1)


@app.command("status")
def status() -> None:
    """Start the sandbox once and print which isolation layers are active."""
    try:
        result, layers = asyncio.run(_run("result = {'output': 'ok'}", {}))
    except SandboxUnavailableError as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(1) from None
    typer.echo(json.dumps({"layers": layers, "probe": result.to_dict()}, indent=2))
