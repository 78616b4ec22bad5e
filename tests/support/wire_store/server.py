"""A threaded TCP server that speaks the MongoDB wire protocol for one embedded store.

Why: the embedded store lives in one process (its data-directory lock), so several API processes
cannot open it; served over the wire protocol, they all reach it through the ordinary pymongo
``mongodb://`` path, the same code as production MongoDB. One thread per connection (pymongo keeps
a small pool per process); the embedded collections have their own readers-writer locks, so
connections run concurrently.

There is no authentication, so only loopback addresses are bound unless ``allow_remote`` is given.
Lifecycle: ``WireServer(host, port)`` binds (a refused address or a busy port fails before any
store is opened), ``start(db)`` serves that embedded store from a background thread and owns it
from then on, ``close()`` stops accepting, closes every connection, waits for the commands in flight,
then closes the client (journal closed, data-directory lock released).
"""

from __future__ import annotations

import contextlib
import ipaddress
import itertools
import socket
import socketserver
import threading
from typing import Any

from pymongo.database import Database

from qdash.db.fixes import EmbeddedClient
from qdash.logging import get_logger
from tests.support.wire_store.commands import run_command
from tests.support.wire_store.context import Context
from tests.support.wire_store.cursors import CursorRegistry
from tests.support.wire_store.errors import error_reply
from tests.support.wire_store.protocol import ProtocolError, encode, frame_reply, read_request

log = get_logger(__name__)

DEFAULT_PORT = 27018


class BindRefusedError(ValueError):
    """The address is not a loopback address and remote binding was not allowed explicitly."""


def bind_family(host: str, allow_remote: bool) -> socket.AddressFamily:
    """The address family to bind ``host`` with; refuses non-loopback addresses unless allowed."""
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise BindRefusedError(f"cannot resolve host {host!r}: {exc.strerror}") from None
    addresses = {str(info[4][0]).partition("%")[0] for info in infos}
    if not allow_remote and not all(ipaddress.ip_address(a).is_loopback for a in addresses):
        raise BindRefusedError(
            f"refusing to bind {host}: the store server has no authentication, so it binds loopback "
            "addresses only (127.0.0.1, ::1); pass --allow-remote to expose it anyway"
        )
    return infos[0][0]


class WireServer(socketserver.ThreadingTCPServer):
    """Serves one embedded client to any number of pymongo connections."""

    allow_reuse_address = True
    daemon_threads = False  # close() waits for the commands in flight
    block_on_close = True

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
        *,
        allow_remote: bool = False,
        cursor_timeout_s: float = 600.0,
    ) -> None:
        self.address_family = bind_family(host, allow_remote)
        super().__init__((host, port), _Connection)
        self.cursors = CursorRegistry(cursor_timeout_s)
        self.client: EmbeddedClient | None = None
        self._thread: threading.Thread | None = None
        self._connections: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._ids = itertools.count(1)

    @property
    def uri(self) -> str:
        host, port = self.socket.getsockname()[:2]
        shown = f"[{host}]" if ":" in host else host
        return f"mongodb://{shown}:{port}"

    def start(self, db: Database[Any]) -> None:
        """Serve the embedded store ``db`` belongs to (every database in it) from a background
        thread; from now on the server owns it and closes it in ``close()``."""
        if not isinstance(db.client, EmbeddedClient):
            raise TypeError("only an embedded store can be served; open it without a mongodb:// URI")
        self.client = db.client
        self._thread = threading.Thread(target=self.serve_forever, name="qdash-wire", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop serving and close the store (idempotent)."""
        if self._thread is not None:
            self.shutdown()
            self._thread.join()
            self._thread = None
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)  # its thread sees end of stream and returns
        self.server_close()  # joins the connection threads
        self.cursors.clear()
        if self.client is not None:
            self.client.close()
            self.client = None

    def service_actions(self) -> None:
        """Called by ``serve_forever`` about twice a second: expire idle cursors."""
        self.cursors.reap()

    def next_id(self) -> int:
        return next(self._ids)

    def track(self, connection: socket.socket, open_: bool) -> None:
        with self._lock:
            (self._connections.add if open_ else self._connections.discard)(connection)


class _Connection(socketserver.StreamRequestHandler):
    """One client connection: read a request, run it, write the reply, until the client hangs up."""

    disable_nagle_algorithm = True
    server: WireServer

    def handle(self) -> None:
        server = self.server
        assert server.client is not None, "WireServer.start() was not called"
        ctx = Context(server.client, server.cursors, server.next_id())
        server.track(self.connection, True)
        try:
            while (request := read_request(self.rfile)) is not None:
                reply = _encode_reply(ctx, request.command)
                if not request.more_to_come:
                    self.wfile.write(frame_reply(request, reply, server.next_id()))
        except ProtocolError as exc:
            log.warning(
                "closing a connection that broke the wire protocol",
                peer=str(self.client_address),
                error=str(exc),
            )
        except OSError:
            pass  # the client hung up or the server is closing
        finally:
            server.track(self.connection, False)


def _encode_reply(ctx: Context, command: dict[str, Any]) -> bytes:
    reply = run_command(ctx, command)
    try:
        return encode(reply)
    except Exception as exc:  # a value the store returned that BSON cannot hold
        return encode(error_reply(exc))
