"""The record a ``qdash serve`` on the embedded store leaves beside its lock: ``embedded.server``.

Why: the CLI, refused by the store's lock, works through that server's HTTP API instead
(``qdash.route``, ``qdash.remote``); this file tells it where the server listens and which operator token it
accepts. Owner-only permissions: whoever may read the data directory may already read every
document, so the token grants nothing new.
"""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

SERVER_FILE = "embedded.server"
SERVE_URL_ENV = "QDASH_SERVE_URL"
"""Set by ``qdash serve`` for its server process: the URL the CLI on this machine reaches it at."""
OPERATOR_USER_HEADER = "X-QDash-Operator-User"
"""The header naming the user a request with the operator token acts for (the CLI's ``--user``)."""


@dataclass(frozen=True)
class RunningServer:
    """The ``qdash serve`` process that holds the embedded store, as it recorded itself."""

    pid: int
    url: str
    token: str


def local_url(host: str, port: int) -> str:
    """The URL a process on this machine uses for a server bound to ``host`` (any-address → loopback)."""
    host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def advertise_server(data_dir: Path, url: str) -> RunningServer:
    """Record this process as the server of ``data_dir`` at ``url``, with a fresh operator token."""
    server = RunningServer(os.getpid(), url, secrets.token_urlsafe(32))
    path = data_dir / SERVER_FILE
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump({"pid": server.pid, "url": server.url, "token": server.token}, handle)
    return server


def withdraw_server(data_dir: Path) -> None:
    """Remove this process's record (at shutdown); a record of another process stays."""
    found = read_server(data_dir)
    if found is not None and found.pid == os.getpid():
        (data_dir / SERVER_FILE).unlink(missing_ok=True)


def read_server(data_dir: Path, pid: int | None = None) -> RunningServer | None:
    """The recorded server (of lock owner ``pid`` when given), or ``None`` if absent or stale."""
    try:
        data = json.loads((data_dir / SERVER_FILE).read_text(encoding="utf-8"))
        server = RunningServer(int(data["pid"]), str(data["url"]), str(data["token"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return server if pid is None or server.pid == pid else None
