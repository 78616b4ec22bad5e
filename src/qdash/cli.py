"""The ``qdash`` command. Each group lives beside the code it drives; this file only assembles them.

Every command starts from validated settings: a configuration error prints its message (which names
the key and the fix) and exits with status 2, a database that cannot be opened exits with 1 — never
a traceback. Other packages add their groups here with one ``app.add_typer(...)``/``app.command()``
line each.
"""

from __future__ import annotations

import errno
import os
import socket
from typing import Any

import typer
from typer.core import TyperGroup

from qdash.config_init import init
from qdash.copilot.ask import ask
from qdash.copilot.tools.cli import tools_app
from qdash.db import DatabaseUnavailableError
from qdash.db.cli import db_app
from qdash.demo.cli import demo_app
from qdash.evaluation.cli import eval_command
from qdash.review.cli import review_app
from qdash.sandbox.cli import app as sandbox_app
from qdash.settings import ConfigError, get_settings

EXIT_CONFIG = 2
EXIT_FAILED = 1


class _CleanErrors(TyperGroup):
    """Turns the errors users cause (configuration, unreachable database) into a message + exit code."""

    def invoke(self, ctx: Any) -> Any:  # typer vendors click privately; the type is its Context
        try:
            return super().invoke(ctx)
        except ConfigError as exc:
            typer.echo(str(exc), err=True)
            raise typer.Exit(EXIT_CONFIG) from None
        except DatabaseUnavailableError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(EXIT_FAILED) from None


app = typer.Typer(
    cls=_CleanErrors,
    help="QDash Copilot: chat with your calibration data.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    # Plain click errors: Rich would box and wrap a message at the terminal's width, splitting a path
    # or a model name a user copies (and a test reads) across lines.
    rich_markup_mode=None,
)


app.add_typer(sandbox_app, name="sandbox")
app.add_typer(tools_app, name="tools")
app.add_typer(demo_app, name="demo")
app.add_typer(review_app, name="review")
app.add_typer(db_app, name="db")
app.command(name="ask")(ask)
app.command(name="eval")(eval_command)
app.command(name="init")(init)


@app.callback()
def _validate_config(ctx: typer.Context) -> None:
    """Load the configuration before any command, so a bad key stops here with exit status 2.

    Logging is set up here too: log lines go to stderr, so a command's stdout stays its output.
    ``init`` is exempt: it is how a missing or broken configuration directory gets its file.
    """
    from qdash.logging import configure_logging

    if ctx.invoked_subcommand == "init":
        return
    settings = get_settings()
    configure_logging(settings.logging.level, settings.logging.json_output)


@app.command()
def version() -> None:
    """Print the version."""
    from qdash import __version__

    typer.echo(__version__)


@app.command()
def serve(
    host: str | None = typer.Option(None, help="Interface to bind (default: api.host, 127.0.0.1)."),
    port: int | None = typer.Option(None, help="Port (default: api.port, 5715)."),
    reload: bool = typer.Option(False, help="Restart on code changes (development)."),
    workers: int = typer.Option(
        1, min=1, max=64, help="Server processes (needs QDASH_MONGO_URI: a MongoDB server they share)."
    ),
) -> None:
    """Run the API server (uvicorn) on the configured database.

    One process runs Python on one core at a time; ``--workers`` adds processes on a multi-core
    machine. They share nothing but the database, so the embedded store (owned by one process)
    cannot back them: point them at MongoDB (``docker compose up -d mongo`` starts one).
    """
    import uvicorn

    from qdash.db import preflight
    from qdash.db.server_record import SERVE_URL_ENV, local_url

    settings = get_settings()
    if workers > 1 and not settings.database.mongo_uri:
        typer.echo(
            "error: --workers needs a database the processes can share: set QDASH_MONGO_URI to a MongoDB "
            "server (`docker compose up -d mongo` starts one on mongodb://127.0.0.1:27017); the embedded "
            "store belongs to one process",
            err=True,
        )
        raise typer.Exit(EXIT_CONFIG)
    bind_host, bind_port = host or settings.api.host, port or settings.api.port
    # Before the database: uvicorn binds only after start-up (opening the store, seeding the demo),
    # so a busy port would otherwise fail late, with a bare errno.
    if (problem := _cannot_bind(bind_host, bind_port)) is not None:
        typer.echo(f"error: {problem}", err=True)
        raise typer.Exit(EXIT_FAILED)
    preflight(settings.database)
    os.environ[SERVE_URL_ENV] = local_url(bind_host, bind_port)  # the CLI beside this server finds it
    try:
        uvicorn.run(
            "qdash.api.app:create_app",
            factory=True,
            host=bind_host,
            port=bind_port,
            reload=reload,
            workers=workers,
            log_config=None,  # our handlers (stderr, redaction) instead of uvicorn's
            access_log=False,  # the request-id middleware writes the access log
        )
    finally:
        os.environ.pop(SERVE_URL_ENV, None)


def _cannot_bind(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be served (busy, not an address of this machine), with the fix."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return (
                    f"port {port} on {host} is already in use (another `qdash serve`?); start on another "
                    f"port with `qdash serve --port {port + 1}` (or set api.port), or stop the other server"
                )
            return f"cannot listen on {host}:{port} ({exc.strerror}); choose a --host and --port to bind"
    return None


@app.command()
def doctor() -> None:
    """Check configuration, database and model servers; exit 1 when a required check fails (FAIL).

    WARN lines (an optional model, or the default one while the demo model answers) do not fail it.
    """
    from qdash.config_files import describe_sources
    from qdash.doctor import run_checks
    from qdash.logging import configure_logging

    settings = get_settings()
    configure_logging("WARNING", settings.logging.json_output)  # the check lines are the output
    typer.echo(f"OK   config: {describe_sources(settings.config_dir)} and QDASH_* variables")
    checks = run_checks(settings)
    for check in checks:
        typer.echo(check.line())
    if any(check.status == "FAIL" for check in checks):
        raise typer.Exit(EXIT_FAILED)


if __name__ == "__main__":
    app()
