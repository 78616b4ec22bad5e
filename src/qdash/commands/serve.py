"""``qdash serve``: the API server (uvicorn) on the configured database.

It checks what would otherwise fail late, after start-up opened the store and seeded the demo: a
port it cannot bind, several workers on the embedded store (owned by one process), a store another
process holds.
"""

from __future__ import annotations

import errno
import os
import socket

import typer

EXIT_CONFIG = 2
EXIT_FAILED = 1


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
    from qdash.settings import get_settings

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
