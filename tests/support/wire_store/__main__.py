"""``python -m tests.support.wire_store``: the embedded store served over the MongoDB wire protocol.

A test double, not a product feature: the two-process test (``tests/api/test_scale_out.py``) and
``bench/wire_store.py`` use it when no MongoDB server is available. Several API processes in
production share MongoDB (README, "Scale-out").
"""

from __future__ import annotations

import signal
import threading

import typer

from qdash.bootstrap import prepare_database
from qdash.logging import configure_logging, get_logger
from qdash.settings import get_settings
from tests.support.wire_store.server import BindRefusedError, WireServer

EXIT_FAILED = 1
EXIT_CONFIG = 2

app = typer.Typer(add_completion=False)


@app.command()
def serve(
    host: str = typer.Option("127.0.0.1", help="Interface to bind (loopback only unless --allow-remote)."),
    port: int = typer.Option(27018, min=0, max=65535, help="Port (0: any free port, printed)."),
    allow_remote: bool = typer.Option(
        False, help="Bind a non-loopback address although the server has no authentication."
    ),
) -> None:
    """Serve database.data_dir's embedded store until SIGINT/SIGTERM; prints its QDASH_MONGO_URI."""
    settings = get_settings()
    configure_logging(settings.logging.level, settings.logging.json_output)  # stderr: stdout is the URI
    if settings.database.mongo_uri:
        typer.echo(
            "error: QDASH_MONGO_URI is set; this serves the embedded store, so unset it here and give "
            "its printed URI to the other processes instead",
            err=True,
        )
        raise typer.Exit(EXIT_CONFIG)
    try:
        server = WireServer(host, port, allow_remote=allow_remote)
    except BindRefusedError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(EXIT_CONFIG) from None
    except OSError as exc:
        typer.echo(f"error: cannot listen on {host}:{port} ({exc.strerror}); pick another --port", err=True)
        raise typer.Exit(EXIT_FAILED) from None
    stop = threading.Event()
    try:
        db = prepare_database(settings)  # the embedded store: lock, journal, indexes, demo when empty
        server.start(db)
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, lambda *_: stop.set())
        typer.echo(f"QDASH_MONGO_URI={server.uri}")
        get_logger(__name__).info(
            "serving the embedded store", uri=server.uri, data_dir=str(settings.database.data_dir)
        )
        stop.wait()
    finally:
        server.close()  # connections closed, journal closed, lock released


if __name__ == "__main__":
    app()
