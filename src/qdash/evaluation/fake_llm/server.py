"""``FakeLLMServer``: the fake on a loopback port in a background thread, plus the in-process API.

Why a real socket and a thread: our adapters must run unchanged with the real SDKs (they only get a
``base_url``), and a thread keeps the server alive across sync and async tests alike. The socket is
bound before the thread starts, so the port is known at once and never races another test.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterable
from types import TracebackType
from typing import Any, Literal, TypedDict, Unpack

import openai
import uvicorn

from qdash.evaluation.fake_llm.app import create_app
from qdash.evaluation.fake_llm.records import RecordedRequest, TurnLike
from qdash.evaluation.fake_llm.state import FakeState, ModelSpec, Responder, default_models


class FakeOptions(TypedDict, total=False):
    """How the fake behaves: :class:`FakeState`'s settings, with its defaults."""

    flavour: Literal["openai", "ollama"]
    response_delay_s: float
    require_auth: bool
    responses_done_sentinel: bool
    obfuscation: bool
    paranoid_schema: bool
    ollama_version: str


class FakeLLMServer:
    """A strict fake of the OpenAI and Ollama HTTP APIs, driven by scripted turns.

    ``with FakeLLMServer() as fake:`` starts it; ``fake.script(...)`` queues turns;
    ``fake.requests`` is the request log; ``fake.assert_done()`` fails on mismatches or leftovers.
    """

    def __init__(self, *, models: Iterable[ModelSpec] | None = None, **options: Unpack[FakeOptions]) -> None:
        table = default_models() if models is None else {m.name: m for m in models}
        self.state = FakeState(models=table, **options)
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._port: int | None = None

    # --- lifecycle ------------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>`` (append ``/v1`` for the OpenAI SDK; as-is for ``ollama``)."""
        if self._port is None:
            raise RuntimeError("FakeLLMServer is not started")
        return f"http://127.0.0.1:{self._port}"

    @property
    def openai_base_url(self) -> str:
        return f"{self.base_url}/v1"

    def start(self) -> FakeLLMServer:
        if self._server is not None:
            return self
        # proto=IPPROTO_TCP: asyncio only sets TCP_NODELAY on such sockets; without it every answer
        # waits ~40 ms for a delayed ACK (Nagle), measured.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self._port = sock.getsockname()[1]
        config = uvicorn.Config(
            create_app(self.state),
            log_level="warning",
            lifespan="off",
            access_log=False,
            timeout_graceful_shutdown=1,
        )
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="fake-llm", daemon=True)
        thread.start()
        deadline = time.monotonic() + 10
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("FakeLLMServer did not start")
            time.sleep(0.005)
        self._server, self._thread = server, thread
        return self

    def stop(self) -> None:
        server, thread = self._server, self._thread
        if server is None or thread is None:
            return
        server.should_exit = True
        thread.join(timeout=10)
        self._server = self._thread = None
        self._port = None

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def astart(self) -> FakeLLMServer:
        """Start without blocking the running event loop."""
        return await asyncio.to_thread(self.start)

    async def astop(self) -> None:
        await asyncio.to_thread(self.stop)

    async def __aenter__(self) -> FakeLLMServer:
        return await self.astart()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.astop()

    # --- scripting ------------------------------------------------------------------------------

    def script(self, *turns: TurnLike, session: str | None = None) -> FakeLLMServer:
        """Queue turns (a :class:`Turn`, a str, a part, a list of parts, or a callable)."""
        self.state.add_turns(list(turns), session)
        return self

    def respond_with(self, responder: Responder | None) -> FakeLLMServer:
        """Answer every request that finds the queue empty with ``responder(request)`` (benchmarks)."""
        with self.state.lock:
            self.state.responder = responder
        return self

    def add_model(self, spec: ModelSpec) -> FakeLLMServer:
        with self.state.lock:
            self.state.models[spec.name] = spec
        return self

    def reset(self) -> None:
        self.state.reset()

    # --- inspection -----------------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        with self.state.lock:
            return list(self.state.requests)

    @property
    def peak_in_flight(self) -> int:
        """The most model requests the server handled at once (arrival to reply; a stream's frames
        after its headers are not counted) since start or :meth:`reset`."""
        with self.state.lock:
            return self.state.peak_in_flight

    def requests_to(self, endpoint: str) -> list[RecordedRequest]:
        """Requests to ``responses``, ``chat`` or ``ollama_chat``."""
        return [r for r in self.requests if r.endpoint == endpoint]

    @property
    def last_request(self) -> RecordedRequest:
        found = self.requests
        if not found:
            raise AssertionError("the fake has received no request")
        return found[-1]

    @property
    def mismatches(self) -> list[str]:
        with self.state.lock:
            return list(self.state.mismatches)

    def remaining(self) -> int:
        """Turns still queued (all sessions)."""
        return self.state.remaining()

    def assert_done(self) -> None:
        """Fail when a script mismatch happened or scripted turns were never used."""
        problems = list(self.mismatches)
        left = self.remaining()
        if left:
            problems.append(f"{left} scripted turn(s) were never requested")
        if problems:
            raise AssertionError("fake LLM: " + "; ".join(problems))

    # --- clients --------------------------------------------------------------------------------

    def _client_options(self, options: dict[str, Any]) -> dict[str, Any]:
        return {
            "max_retries": 0,
            "timeout": 5.0,
            "api_key": "sk-test",
            **options,
            "base_url": self.openai_base_url,
        }

    def async_openai(self, **options: Any) -> openai.AsyncOpenAI:
        """An ``openai.AsyncOpenAI`` on this fake (``max_retries=0``, ``timeout=5`` unless given)."""
        return openai.AsyncOpenAI(**self._client_options(options))

    def sync_openai(self, **options: Any) -> openai.OpenAI:
        """A synchronous ``openai.OpenAI`` with the same defaults as :meth:`async_openai`."""
        return openai.OpenAI(**self._client_options(options))
