"""Request bodies over ``api.max_body_bytes`` get a short 413 before they are read whole (uploads
have ``uploads.max_bytes``), and a 422 never sends a large input back.

Over a real loopback socket (uvicorn), because the point is what crosses the wire: the 100 MB body
is written in chunks while the server may already have answered. Sizes and times are printed
(``-s``), not asserted.
"""

from __future__ import annotations

import json
import socket
import time
from urllib.parse import urlparse

import httpx
from fastapi import FastAPI

from qdash.api.body_limit import UPLOAD_PATH
from qdash.api.setup import MAX_ECHO_CHARS
from tests.api.api_helpers import LiveServer, auth

MB = 1024 * 1024
CHUNK = b"x" * MB


def raw_post(
    base: str, path: str, total: int, *, chunked: bool = False, content_type: str = "application/json"
) -> tuple[int, bytes, int]:
    """POST ``total`` bytes (with Content-Length, or chunked without it) and read the answer; the
    server may answer and close before the body is written. Returns (status, body, bytes sent)."""
    url = urlparse(base)
    with socket.create_connection((url.hostname, url.port), timeout=30) as sock:
        length = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {total}"
        token = auth()["Authorization"]
        head = f"POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: {token}\r\n{length}\r\n"
        sock.sendall(f"{head}Content-Type: {content_type}\r\nConnection: close\r\n\r\n".encode())
        sent = 0
        try:
            while sent < total:
                piece = CHUNK[: total - sent]
                sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
                sent += len(piece)
            if chunked:
                sock.sendall(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered and closed: what it said is still in the receive buffer
        response = b""
        try:
            while data := sock.recv(65536):
                response += data
        except ConnectionResetError:
            pass
    head_bytes, _, body = response.partition(b"\r\n\r\n")
    status = int(head_bytes.split(b" ")[1])
    if b"transfer-encoding: chunked" in head_bytes.lower():
        size, _, rest = body.partition(b"\r\n")
        body = rest[: int(size, 16)]
    return status, body, sent


def test_a_100_mb_body_gets_a_short_413_before_it_is_read(app: FastAPI) -> None:
    limit = app.state.settings.api.max_body_bytes
    with LiveServer(app) as base:
        for chunked in (False, True):
            started = time.perf_counter()
            status, body, sent = raw_post(base, "/copilot/chat/stream", 100 * MB, chunked=chunked)
            elapsed = time.perf_counter() - started
            print(
                f"100 MB {'chunked' if chunked else 'Content-Length'} body: {status}, response body "
                f"{len(body)} bytes, {sent / MB:.0f} MB written before the answer, {elapsed:.2f} s"
            )
            assert status == 413
            assert json.loads(body) == {"detail": "Content Too Large"}
            if chunked:
                assert sent < 100 * MB
            assert limit < 100 * MB


def test_a_body_at_the_limit_is_still_read(app: FastAPI) -> None:
    """A session PATCH just under 12 MiB passes the body limit and meets the session's own (8 MiB)."""
    limit = app.state.settings.api.max_body_bytes
    message = {"role": "user", "content": "x" * 200_000}
    body = json.dumps({"messages": [message] * ((limit - 1024) // 200_020)})
    assert 11 * MB < len(body) < limit
    with LiveServer(app) as base, httpx.Client(base_url=base, headers=auth(), timeout=30) as http:
        assert http.post("/copilot/chat/sessions", json={"session_id": "big"}).status_code == 200
        answer = http.patch(
            "/copilot/chat/sessions/big", content=body, headers={"Content-Type": "application/json"}
        )
    assert answer.status_code == 413 and answer.json() == {"detail": "Session too large"}


def test_a_validation_error_does_not_echo_a_large_input(app: FastAPI) -> None:
    huge = "x" * (10 * 1000 * 1000)
    with LiveServer(app) as base, httpx.Client(base_url=base, headers=auth(), timeout=30) as http:
        started = time.perf_counter()
        answer = http.post("/copilot/chat/stream", json={"message": huge})
        elapsed = time.perf_counter() - started
        small = http.post("/copilot/chat/stream", json={"message": ""})
    print(f"10 MB message: {answer.status_code}, response {len(answer.content)} bytes, {elapsed:.2f} s")
    assert answer.status_code == 422 and len(answer.content) < 1000
    (error,) = answer.json()["detail"]
    assert error["loc"] == ["body", "message"] and "input" not in error
    (short,) = small.json()["detail"]
    assert short["input"] == "" and len(json.dumps(short["input"])) <= MAX_ECHO_CHARS


def test_uploads_keep_their_own_limit(app: FastAPI) -> None:
    """Uploads over ``api.max_body_bytes`` but within ``uploads.max_bytes`` are read; a 100 MB one
    is refused from its Content-Length."""
    settings = app.state.settings
    assert settings.uploads.max_bytes > settings.api.max_body_bytes
    row = b"1," + b"x" * 97 + b"\n"
    csv = b"a,b\n" + row * ((settings.api.max_body_bytes + MB) // len(row))
    with LiveServer(app) as base, httpx.Client(base_url=base, headers=auth(), timeout=60) as http:
        stored = http.post(
            "/copilot/uploads", data={"session_id": "s1"}, files={"file": ("big.csv", csv, "text/csv")}
        )
        started = time.perf_counter()
        multipart = "multipart/form-data; boundary=b"
        status, body, sent = raw_post(base, UPLOAD_PATH, 100 * MB, content_type=multipart)
        elapsed = time.perf_counter() - started
    print(f"100 MB upload: {status}, {sent / MB:.0f} MB written before the answer, {elapsed:.2f} s")
    assert stored.status_code == 201, stored.text
    assert status == 413 and json.loads(body) == {"detail": "Content Too Large"}
