"""Everything one fake instance remembers: models, turn queues, request log, stored responses, ids.

Why one locked object: tests script turns from their own thread while the server's event loop
consumes them; a single lock around small operations keeps both sides consistent without
making the server code aware of threads.
"""

from __future__ import annotations

import threading
from collections import defaultdict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from qdash.evaluation.fake_llm.records import RecordedRequest, TurnLike
from qdash.evaluation.fake_llm.script import OutputPart, Turn, as_turn


@dataclass(frozen=True)
class ModelSpec:
    """One model the fake serves.

    ``reasoning`` decides whether reasoning parts are rendered (and C10 applies);
    ``capabilities`` is what Ollama's ``/api/show`` reports (``tools``, ``thinking``, ``vision``);
    ``phase`` labels Responses message items ``commentary`` (a message in a turn with calls) or
    ``final_answer``, as OpenAI's gpt-5.3-codex and later do. Servers beyond OpenAI:
    ``chat_reasoning_field`` renders reasoning on Chat under that key (DeepSeek's
    ``reasoning_content``); ``thought_signatures`` puts Gemini's ``thought_signature`` on the first
    call of each answer and refuses a current-turn call sent back without one;
    ``bare_function_calls`` renders Responses function calls with ``status: null`` (vLLM).
    """

    name: str
    reasoning: bool = False
    phase: bool = False
    chat_reasoning_field: str | None = None
    thought_signatures: bool = False
    bare_function_calls: bool = False
    capabilities: tuple[str, ...] = ("completion", "tools")
    context_length: int = 131072
    family: str = "fake"
    parameter_size: str = "8B"


def default_models() -> dict[str, ModelSpec]:
    """OpenAI and Ollama names our configs and tests use."""
    specs = [
        ModelSpec("gpt-5", reasoning=True, capabilities=("completion", "tools", "vision", "thinking")),
        ModelSpec("gpt-5-mini", reasoning=True, capabilities=("completion", "tools", "vision", "thinking")),
        ModelSpec(
            "gpt-5.3-codex", reasoning=True, phase=True, capabilities=("completion", "tools", "thinking")
        ),
        ModelSpec("gpt-5-nano", reasoning=True, capabilities=("completion", "tools", "vision", "thinking")),
        ModelSpec("o4-mini", reasoning=True, capabilities=("completion", "tools", "vision", "thinking")),
        ModelSpec("gpt-4o", capabilities=("completion", "tools", "vision")),
        ModelSpec("deepseek-reasoner", chat_reasoning_field="reasoning_content"),
        ModelSpec("gemini-3-flash-preview", thought_signatures=True),
        ModelSpec("Qwen/Qwen3-8B", bare_function_calls=True),
        ModelSpec("gpt-4o-mini", capabilities=("completion", "tools", "vision")),
        ModelSpec("gpt-4.1", capabilities=("completion", "tools", "vision")),
        ModelSpec("gpt-4.1-mini", capabilities=("completion", "tools", "vision")),
        ModelSpec(
            "qwen3:8b", reasoning=True, capabilities=("completion", "tools", "thinking"), family="qwen3"
        ),
        ModelSpec(
            "gpt-oss:20b", reasoning=True, capabilities=("completion", "tools", "thinking"), family="gptoss"
        ),
        ModelSpec("llama3.2:latest", capabilities=("completion", "tools"), family="llama"),
        ModelSpec("gemma:2b", capabilities=("completion",), family="gemma", parameter_size="3B"),
        ModelSpec("llava:7b", capabilities=("completion", "vision"), family="llama"),
    ]
    return {s.name: s for s in specs}


@dataclass
class Slot:
    """A queued turn and how often its request-level fault has fired."""

    turn: Turn
    fired: int = 0
    from_responder: bool = False


@dataclass
class StoredResponse:
    """A response kept because ``store`` was not false (for ``previous_response_id`` and GET)."""

    context: list[dict[str, Any]]
    output: list[dict[str, Any]]
    body: dict[str, Any]


Responder = Callable[[RecordedRequest], "Turn | str | OutputPart | Sequence[OutputPart]"]


@dataclass
class FakeState:
    """State of one fake instance (shared by the HTTP app and the in-process API)."""

    flavour: Literal["openai", "ollama"] = "openai"
    models: dict[str, ModelSpec] = field(default_factory=default_models)
    response_delay_s: float = 0.0
    require_auth: bool = False
    responses_done_sentinel: bool = False
    obfuscation: bool = False
    paranoid_schema: bool = False
    ollama_version: str = "0.13.3"
    lock: threading.RLock = field(default_factory=threading.RLock)
    """Re-entrant: a dynamic turn runs under it and may read the log (``fake.requests``)."""
    queues: dict[str | None, deque[TurnLike | Slot]] = field(default_factory=lambda: defaultdict(deque))
    responder: Responder | None = None
    requests: list[RecordedRequest] = field(default_factory=list)
    mismatches: list[str] = field(default_factory=list)
    stored: dict[str, StoredResponse] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    preceded_by: dict[str, str] = field(default_factory=dict)
    """Output item id → the reasoning item id the fake rendered just before it (R12)."""
    encrypted: dict[str, str] = field(default_factory=dict)
    """``encrypted_content`` tokens the fake issued → reasoning item id."""
    in_flight: int = 0
    """Model requests being handled now (arrived, reply not yet handed to the transport)."""
    peak_in_flight: int = 0
    """The most requests handled at once since the start or the last reset."""

    # --- script ---------------------------------------------------------------------------------

    def add_turns(self, turns: Sequence[TurnLike], session: str | None = None) -> None:
        checked = [t if callable(t) else as_turn(t) for t in turns]  # shape errors raise here, at once
        with self.lock:
            self.queues[session].extend(checked)

    def remaining(self) -> int:
        with self.lock:
            return sum(len(q) for q in self.queues.values())

    def next_slot(self, session: str | None, request: RecordedRequest) -> Slot | None:
        """The head of the session's queue (resolving a callable turn once), or the responder's."""
        with self.lock:
            queue = self.queues[session]
            if queue:
                head = queue[0]
                if isinstance(head, Slot):
                    return head
                try:
                    slot = Slot(as_turn(head(request) if callable(head) else head))
                except Exception:
                    queue.popleft()  # a broken dynamic turn is used up, not retried forever
                    raise
                queue[0] = slot
                return slot
            responder = self.responder
        if responder is None:
            return None
        return Slot(as_turn(responder(request)), from_responder=True)

    def consume(self, session: str | None, slot: Slot) -> None:
        if slot.from_responder:
            return
        with self.lock:
            queue = self.queues[session]
            if queue and queue[0] is slot:
                queue.popleft()

    # --- log and ids ------------------------------------------------------------------------------

    def record(self, request: RecordedRequest) -> None:
        with self.lock:
            self.requests.append(request)

    def entered(self) -> None:
        """A request arrived: count it in flight (a client's concurrency shows at the server)."""
        with self.lock:
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)

    def left(self) -> None:
        with self.lock:
            self.in_flight -= 1

    def mismatch(self, reason: str) -> None:
        with self.lock:
            self.mismatches.append(reason)

    def new_id(self, prefix: str) -> str:
        """Deterministic ids: ``resp_fake_0001``; ``chatcmpl`` uses dashes like the real one."""
        with self.lock:
            self.counters[prefix] += 1
            n = self.counters[prefix]
        if prefix == "chatcmpl":
            return f"chatcmpl-fake-{n:04d}"
        return f"{prefix}_fake_{n:04d}"

    def ollama_call_id(self) -> str:
        """Ollama's shape: ``call_`` + 8 ``[a-z0-9]``."""
        with self.lock:
            self.counters["ollama_call"] += 1
            n = self.counters["ollama_call"]
        return f"call_{n:08d}"

    def reset(self) -> None:
        """Forget queue, log, mismatches and stored responses (``POST /_fake/reset``)."""
        with self.lock:
            self.queues.clear()
            self.responder = None
            self.requests.clear()
            self.mismatches.clear()
            self.stored.clear()
            self.preceded_by.clear()
            self.encrypted.clear()
            self.peak_in_flight = self.in_flight

    def find_model(self, name: str) -> ModelSpec | None:
        """Exact name, or an Ollama name without tag (``llama3.2`` → ``llama3.2:latest``)."""
        if name in self.models:
            return self.models[name]
        if ":" not in name:
            return self.models.get(f"{name}:latest")
        return None
