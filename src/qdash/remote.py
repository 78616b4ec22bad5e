"""The CLI's client of a running ``qdash serve``: every request a command sends when ``qdash.route``
finds the embedded store held by that server.

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
from urllib.parse import quote

import httpx2

from qdash.db.server_record import OPERATOR_USER_HEADER, RunningServer

TOOL_TIMEOUT_S = 120.0
CHAT_TIMEOUT_S = 600.0
REVIEWS = "/copilot/reviews"
PAGE = 200


class RemoteError(RuntimeError):
    """The server refused or could not be reached; the message is the server's ``detail``."""


def _detail(response: httpx2.Response) -> str:
    try:
        detail = response.json().get("detail")
    except ValueError:
        detail = None
    if isinstance(detail, list):  # a 422: FastAPI's list of {loc, msg}
        detail = "; ".join(f"{'.'.join(map(str, item.get('loc', [])))}: {item.get('msg')}" for item in detail)
    return str(detail or f"HTTP {response.status_code}")


@dataclass(frozen=True)
class Operator:
    """The CLI acting as ``user`` (in ``project``, default: the user's) on the server's API."""

    server: RunningServer
    user: str
    project: str | None

    def call_tool(
        self, name: str, arguments: dict[str, Any], session: str | None
    ) -> tuple[Any, list[dict[str, Any]], bool]:
        """``POST /copilot/tools/{name}``: the output the model would see, the charts, and is_error."""
        params = {"session_id": session} if session else {}
        response = self._send("POST", f"/copilot/tools/{name}", arguments, params)
        if response.status_code == 404:
            return {"error": _detail(response)}, [], True
        if response.status_code != 200:
            raise RemoteError(_detail(response))
        body = response.json()
        return body["output"], body["charts"], bool(body["is_error"])

    def chat_events(self, body: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
        """``POST /copilot/chat/stream?events=extended``: ``(event, data)`` pairs as they arrive."""
        return self.events("POST", "/copilot/chat/stream", body, params={"events": "extended"})

    def start_review(self, body: dict[str, Any]) -> dict[str, Any]:
        """``POST /copilot/reviews``: the job the server created and runs."""
        job: dict[str, Any] = self.request_json("POST", REVIEWS, body)
        return job

    def resume_review(self, job_id: str) -> dict[str, Any]:
        """``POST …/jobs/{id}/resume`` (409 while a live process holds the job's lease)."""
        job: dict[str, Any] = self.request_json("POST", f"{REVIEWS}/jobs/{job_id}/resume")
        return job

    def cancel_review(self, job_id: str) -> None:
        """``POST …/jobs/{id}/cancel``: the server stops the job after the reviews in flight."""
        self.request_json("POST", f"{REVIEWS}/jobs/{job_id}/cancel")

    def undo_review(self, job_id: str) -> dict[str, Any]:
        """``POST …/jobs/{id}/undo``: the undo's record (restored, skipped, message)."""
        undo: dict[str, Any] = self.request_json("POST", f"{REVIEWS}/jobs/{quote(job_id, safe='')}/undo")
        return undo

    def job_events(self, job_id: str) -> Iterator[tuple[str, dict[str, Any]]]:
        """The job's SSE frames: ``progress`` whenever it changes, then one ``done``."""
        return self.events("GET", f"{REVIEWS}/jobs/{job_id}/events")

    def bundle(self, review_id: str) -> dict[str, Any]:
        """``GET /copilot/reviews/{id}/bundle``: the review's replay bundle."""
        bundle: dict[str, Any] = self.request_json("GET", f"{REVIEWS}/{quote(review_id, safe='')}/bundle")
        return bundle

    def reviews(self, filters: dict[str, Any], *, latest_only: bool, limit: int) -> list[dict[str, Any]]:
        """``GET /copilot/reviews``, page after page until ``limit`` reviews (or the last one)."""
        found: list[dict[str, Any]] = []
        while len(found) < limit:
            size = min(PAGE, limit - len(found))
            params = {**filters, "latest_only": latest_only, "limit": size, "offset": len(found)}
            page = self.request_json("GET", REVIEWS, params=params)["reviews"]
            found.extend(page)
            if len(page) < size:
                break
        return found

    def request_json(
        self, method: str, path: str, body: dict[str, Any] | None = None, params: dict[str, Any] | None = None
    ) -> Any:
        """One request; the decoded JSON answer, or :class:`RemoteError` with the server's ``detail``."""
        response = self._send(method, path, body, params)
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
            raise self._unreachable(exc) from None

    def _send(
        self, method: str, path: str, body: dict[str, Any] | None, params: dict[str, Any] | None
    ) -> httpx2.Response:
        try:
            return httpx2.request(method, **self._request(path, body, params), timeout=TOOL_TIMEOUT_S)
        except httpx2.HTTPError as exc:
            raise self._unreachable(exc) from None

    def _unreachable(self, exc: Exception) -> RemoteError:
        return RemoteError(f"cannot reach the server at {self.server.url} ({type(exc).__name__})")

    def _request(
        self, path: str, body: dict[str, Any] | None, params: dict[str, Any] | None
    ) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {self.server.token}", OPERATOR_USER_HEADER: self.user}
        if self.project:
            headers["X-Project-Id"] = self.project
        return {"url": f"{self.server.url}{path}", "json": body, "params": params, "headers": headers}
