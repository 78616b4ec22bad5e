"""The CLI through a running ``qdash serve``: what ``qdash tools call``, ``qdash ask`` and ``qdash review``
do when the embedded store is held by that server.

Why through HTTP: the embedded store belongs to one process (``db/lock.py``), and stopping the
server to ask one question is not a workflow. The server records its URL and an operator token in
``<data_dir>/embedded.server``; the CLI sends that token and names its user in a header, so the
server runs exactly what the dashboard would (same tools, same assistant, same membership checks).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx2

from qdash.db.server_record import RunningServer

OPERATOR_USER_HEADER = "X-QDash-Operator-User"
TOOL_TIMEOUT_S = 120.0
CHAT_TIMEOUT_S = 600.0


class RemoteError(RuntimeError):
    """The server refused or could not be reached; the message is the server's ``detail``."""


def _headers(server: RunningServer, user: str, project: str | None) -> dict[str, str]:
    headers = {"Authorization": f"Bearer {server.token}", OPERATOR_USER_HEADER: user}
    if project:
        headers["X-Project-Id"] = project
    return headers


def _detail(response: httpx2.Response) -> str:
    try:
        detail = response.json().get("detail")
    except ValueError:
        detail = None
    if isinstance(detail, list):  # a 422: FastAPI's list of {loc, msg}
        detail = "; ".join(f"{'.'.join(map(str, item.get('loc', [])))}: {item.get('msg')}" for item in detail)
    return str(detail or f"HTTP {response.status_code}")


def _unreachable(server: RunningServer, exc: Exception) -> RemoteError:
    return RemoteError(f"cannot reach the server at {server.url} ({type(exc).__name__})")


def call_tool(
    server: RunningServer,
    name: str,
    arguments: dict[str, Any],
    *,
    user: str,
    project: str,
    session: str | None,
) -> tuple[Any, list[dict[str, Any]], bool]:
    """``POST /copilot/tools/{name}``: the output the model would see, the charts, and is_error."""
    params = {"session_id": session} if session else {}
    try:
        response = httpx2.post(
            f"{server.url}/copilot/tools/{name}",
            json=arguments,
            params=params,
            headers=_headers(server, user, project),
            timeout=TOOL_TIMEOUT_S,
        )
    except httpx2.HTTPError as exc:
        raise _unreachable(server, exc) from None
    if response.status_code == 404:
        return {"error": _detail(response)}, [], True
    if response.status_code != 200:
        raise RemoteError(_detail(response))
    body = response.json()
    return body["output"], body["charts"], bool(body["is_error"])


def chat_events(
    server: RunningServer, body: dict[str, Any], *, user: str, project: str | None
) -> Iterator[tuple[str, dict[str, Any]]]:
    """``POST /copilot/chat/stream?events=extended``: ``(event, data)`` pairs as they arrive."""
    return Operator(server, user, project).events(
        "POST", "/copilot/chat/stream", body, params={"events": "extended"}
    )


@dataclass(frozen=True)
class Operator:
    """The CLI acting as ``user`` (in ``project``, default: the user's) on the server's API."""

    server: RunningServer
    user: str
    project: str | None

    def request_json(
        self, method: str, path: str, body: dict[str, Any] | None = None, params: dict[str, Any] | None = None
    ) -> Any:
        """One request; the decoded JSON answer, or :class:`RemoteError` with the server's ``detail``."""
        try:
            response = httpx2.request(method, **self._request(path, body, params), timeout=TOOL_TIMEOUT_S)
        except httpx2.HTTPError as exc:
            raise _unreachable(self.server, exc) from None
        if response.status_code >= 400:
            raise RemoteError(_detail(response))
        return response.json()

    def events(
        self, method: str, path: str, body: dict[str, Any] | None = None, params: dict[str, Any] | None = None
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        """A server-sent event stream: ``(event, data)`` pairs as they arrive (pings skipped)."""
        try:
            with httpx2.stream(
                method, **self._request(path, body, params), timeout=CHAT_TIMEOUT_S
            ) as response:
                if response.status_code != 200:
                    response.read()
                    raise RemoteError(_detail(response))
                event = ""
                for line in response.iter_lines():
                    if line.startswith("event: "):
                        event = line[len("event: ") :]
                    elif line.startswith("data: ") and event:
                        yield event, json.loads(line[len("data: ") :])
                        event = ""
        except httpx2.HTTPError as exc:
            raise _unreachable(self.server, exc) from None

    def _request(
        self, path: str, body: dict[str, Any] | None, params: dict[str, Any] | None
    ) -> dict[str, Any]:
        url = f"{self.server.url}{path}"
        return {
            "url": url,
            "json": body,
            "params": params,
            "headers": _headers(self.server, self.user, self.project),
        }
