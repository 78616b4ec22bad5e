"""Which way a command reaches the lab's data: the store, opened in this process, or the running
``qdash serve`` that holds it. Every command that touches the data asks here; none decides by itself.

Why one place: the embedded store belongs to one process (``db/lock.py``). A ``qdash serve`` holding
it records its URL and operator token (``db/server_record.py``), so a command that the server's API
can answer goes through it (:class:`Remote`, ``qdash.remote``), and a command the API cannot answer
(it rewrites the store, or the API has no such operation) stops with one message saying what to do
(``local_only``). With MongoDB (``QDASH_MONGO_URI``) the route is always :class:`Local`: any number
of processes share it. A store held by a process that is not a server (another command) stops every
command with the lock's own message (``DatabaseInUseError``, printed by ``qdash.cli``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import typer

from qdash.db.errors import DatabaseInUseError
from qdash.db.server_record import RunningServer

if TYPE_CHECKING:  # the store and the HTTP client load only when a command takes that route
    from pymongo.database import Database

    from qdash.remote import Operator
    from qdash.settings import Settings

EXIT_FAILED = 1
T = TypeVar("T")
StoreOpener = Callable[[], "Database[dict[str, Any]]"]
"""Opens the store in this process (``open_database`` or ``bootstrap.prepare_database``, bound)."""


@dataclass(frozen=True)
class Local:
    """The store is open in this process."""

    db: Database[dict[str, Any]]


@dataclass(frozen=True)
class Remote:
    """A ``qdash serve`` holds the embedded store: the command goes through its API."""

    server: RunningServer

    def operator(self, user: str, project: str | None) -> Operator:
        """The server's API as ``user`` (in ``project``, default: the user's)."""
        from qdash.remote import Operator

        return Operator(self.server, user, project)


def find_route(open_store: StoreOpener) -> Local | Remote:
    """The store opened here, or the server that holds it (the caller closes a :class:`Local` db).

    Raises ``DatabaseInUseError`` when the holder is not a ``qdash serve`` (no API to go through).
    """
    try:
        return Local(open_store())
    except DatabaseInUseError as exc:
        if exc.server is None:
            raise
        return Remote(exc.server)


@contextmanager
def data_route(open_store: StoreOpener, *, local_only: str | None = None) -> Iterator[Local | Remote]:
    """A command's route for its duration: the store closed at the end; through a server, a note on
    stderr first and the server's refusals (``RemoteError``) as ``error: <detail>``, exit 1.

    ``local_only``: why this command (with these options) must open the store itself; given, a
    server holding the store stops the command with what to do instead.
    """
    from qdash.db import close_database
    from qdash.remote import RemoteError

    route = find_route(open_store)
    if isinstance(route, Local):
        try:
            yield route
        finally:
            close_database(route.db)
        return
    server = route.server
    if local_only is not None:
        typer.echo(
            f"error: {local_only}, and the embedded store is held by qdash serve (PID {server.pid}, "
            f"{server.url}): stop that server (Ctrl-C in its terminal, or `kill {server.pid}`) and run "
            "this command again, or point both at MongoDB (QDASH_MONGO_URI)",
            err=True,
        )
        raise typer.Exit(EXIT_FAILED)
    typer.echo(
        f"(the embedded store is held by qdash serve, PID {server.pid}: going through {server.url})",
        err=True,
    )
    try:
        yield route
    except RemoteError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(EXIT_FAILED) from None


def routed(
    open_store: StoreOpener,
    here: Callable[[Database[dict[str, Any]]], T],
    there: Callable[[Remote], T],
    *,
    local_only: str | None = None,
) -> T:
    """What a command does, decided here for every command: ``here`` on the store opened in this
    process, or ``there`` through the server holding it (:func:`data_route`'s rules and messages)."""
    with data_route(open_store, local_only=local_only) as route:
        return there(route) if isinstance(route, Remote) else here(route.db)


@contextmanager
def local_store(open_store: StoreOpener, *, why: str) -> Iterator[Database[dict[str, Any]]]:
    """For a command that must open the store itself (``why``): :func:`data_route`, local only."""
    with data_route(open_store, local_only=why) as route:
        assert isinstance(route, Local)  # data_route stops the command otherwise
        yield route.db


def read_only(
    settings: Settings,
    here: Callable[[Database[dict[str, Any]]], T],
    there: Callable[[Remote], T],
    nothing: T,
) -> T:
    """What a command that only reads (a listing) finds: ``here`` on the store opened in this process,
    ``there`` through the server holding it (:func:`data_route`), or ``nothing`` when there is no
    store yet, said on stderr with how to get one. A look never creates data: no data directory is
    made and an empty store is not seeded with the demo lab (``qdash serve`` and ``qdash demo seed``
    do that)."""
    from functools import partial

    from qdash.bootstrap import prepare_database
    from qdash.db import not_created

    if (missing := not_created(settings.database)) is not None:
        typer.echo(missing, err=True)
        return nothing
    return routed(partial(prepare_database, settings, seed=False), here, there)
