"""The fake's HTTP surface: model endpoints, model listings, stored responses and ``/_fake/*`` control.

Why Starlette without FastAPI: the fake must answer malformed bodies with the provider's own error
envelopes, so it reads raw requests itself instead of letting a framework validate them.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from qdash.evaluation.fake_llm import errors, ollama_native
from qdash.evaluation.fake_llm.flow import openai_error, serve
from qdash.evaluation.fake_llm.script import Turn
from qdash.evaluation.fake_llm.state import FakeState
from qdash.evaluation.fake_llm.wires import OLLAMA_CHAT, RESPONSES, chat_wire, native_error


def _auth_error(request: Request, state: FakeState) -> Response | None:
    """Optional 401 when no bearer token is sent (any non-empty key is accepted)."""
    if not state.require_auth:
        return None
    header = request.headers.get("authorization", "")
    if header.startswith("Bearer ") and header.removeprefix("Bearer ").strip():
        return None
    error = errors.ApiError(
        401,
        "You didn't provide an API key. You need to provide your API key in an Authorization header "
        "using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
        code="invalid_api_key",
        rule="auth",
    )
    return openai_error(error)


def create_app(state: FakeState) -> Starlette:
    """The ASGI app over one :class:`FakeState`."""

    async def responses(request: Request) -> Response:
        if state.flavour == "ollama" and not ollama_native.version_at_least(state.ollama_version, "0.13.3"):
            return PlainTextResponse("404 page not found", status_code=404)  # before /v1/responses existed
        return _auth_error(request, state) or await serve(request, state, RESPONSES)

    async def chat(request: Request) -> Response:
        return _auth_error(request, state) or await serve(request, state, chat_wire(state))

    async def get_response(request: Request) -> Response:
        rid = request.path_params["rid"]
        with state.lock:
            stored = state.stored.get(rid)
        if stored is None:
            error = errors.ApiError(404, f"Response with id '{rid}' not found.", "response_id", rule="get")
            return openai_error(error)
        return JSONResponse(stored.body)

    async def models(_: Request) -> Response:
        owner = "library" if state.flavour == "ollama" else "openai"
        data = [
            {"id": name, "object": "model", "created": 1_700_000_000, "owned_by": owner}
            for name in state.models
        ]
        return JSONResponse({"object": "list", "data": data})

    async def ollama_chat(request: Request) -> Response:
        return await serve(request, state, OLLAMA_CHAT)

    async def show(request: Request) -> Response:
        try:
            body: Any = json.loads(await request.body())
            spec = ollama_native.lookup(state, body if isinstance(body, dict) else {})
        except ValueError:
            return native_error(errors.ApiError(400, "invalid character in request body", rule="json"))
        except errors.ApiError as error:
            return native_error(error)
        return JSONResponse(ollama_native.show(spec, state.ollama_version))

    async def tags(_: Request) -> Response:
        return JSONResponse(ollama_native.tags(state))

    async def version(_: Request) -> Response:
        return JSONResponse({"version": state.ollama_version})

    async def root(_: Request) -> Response:
        return PlainTextResponse("Ollama is running")

    async def reset(_: Request) -> Response:
        state.reset()
        return JSONResponse({"ok": True})

    async def add_turns(request: Request) -> Response:
        data = json.loads(await request.body())
        turns = [Turn.from_dict(t) for t in (data if isinstance(data, list) else data["turns"])]
        state.add_turns(turns, request.headers.get("x-fake-session"))
        return JSONResponse({"queued": len(turns)})

    async def requests(_: Request) -> Response:
        with state.lock:
            log = [r.summary() for r in state.requests]
        return JSONResponse(log)

    async def mismatches(_: Request) -> Response:
        with state.lock:
            found = list(state.mismatches)
        return JSONResponse(found)

    routes = [
        Route("/v1/responses", responses, methods=["POST"]),
        Route("/v1/responses/{rid}", get_response, methods=["GET"]),
        Route("/v1/chat/completions", chat, methods=["POST"]),
        Route("/v1/models", models, methods=["GET"]),
        Route("/api/chat", ollama_chat, methods=["POST"]),
        Route("/api/show", show, methods=["POST"]),
        Route("/api/tags", tags, methods=["GET"]),
        Route("/api/version", version, methods=["GET"]),
        Route("/", root, methods=["GET", "HEAD"]),
        Route("/_fake/reset", reset, methods=["POST"]),
        Route("/_fake/turns", add_turns, methods=["POST"]),
        Route("/_fake/requests", requests, methods=["GET"]),
        Route("/_fake/mismatches", mismatches, methods=["GET"]),
    ]
    return Starlette(routes=routes)
