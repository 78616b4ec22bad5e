"""Wire format between the API process and the zygote, shared constants and error texts.

Why a binary header: the zygote treats request and result payloads as opaque bytes (it never
parses user data); the header alone carries what it needs to route them. A frame is
``>I`` total length, one kind byte, ``>Q`` call id, then the payload.

Kinds: ``H`` hello (zygote → API; JSON: ready, layers, reason), ``R`` run (API → zygote; JSON
request bytes for the worker), ``C`` cancel (API → zygote; empty), ``A`` answer (zygote → API;
the worker's reply bytes verbatim), ``E`` error (zygote → API; JSON built by the zygote for
timeouts, crashes and refusals).
"""

from __future__ import annotations

import ast
import json
import struct
from dataclasses import asdict, dataclass, field
from typing import Any

from qdash.sandbox.lockdown import LockdownConfig

HEADER = struct.Struct(">IBQ")
KIND_HELLO = ord("H")
KIND_RUN = ord("R")
KIND_CANCEL = ord("C")
KIND_ANSWER = ord("A")
KIND_ERROR = ord("E")
MAX_FRAME = 64 * 2**20

EXIT_LOCKDOWN = 70

MEMORY_ERROR = "Memory limit exceeded"
OUTPUT_LIMIT = "Output limit exceeded"
RESULT_TOO_LARGE = "Analysis result too large"
UNAVAILABLE = "Sandbox unavailable: "
CRASHED = "Sandbox worker crashed"
CANCELLED = "Analysis cancelled"


def timeout_text(wall_s: float) -> str:
    """``Execution timed out after 5 seconds`` with the configured limit."""
    return f"Execution timed out after {wall_s:g} seconds"


def encode(kind: int, call_id: int, payload: bytes = b"") -> bytes:
    """One frame."""
    return HEADER.pack(HEADER.size - 4 + len(payload), kind, call_id) + payload


@dataclass(frozen=True)
class WorkerOptions:
    """Everything the zygote and its workers are told at start (no secrets in here)."""

    lockdown: LockdownConfig = field(default_factory=LockdownConfig)
    wall_s: float = 5.0
    output_chars: int = 65_536
    result_bytes: int = 2 * 2**20
    spares: int = 2
    prefault: bool = True
    plain_exec: bool = False
    full_warm_up: bool = True
    """False only for a one-shot run of code that imports none of :data:`HEAVY_MODULES`."""

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> WorkerOptions:
        raw: dict[str, Any] = json.loads(text)
        lock = raw.pop("lockdown")
        lock["require"] = tuple(lock["require"])
        lock["read_only_paths"] = tuple(lock["read_only_paths"])
        return cls(lockdown=LockdownConfig(**lock), **raw)


HEAVY_MODULES = frozenset({"numpy", "pandas", "plotly"})
"""Allowed packages whose import and warm-up take most of a zygote's start (seconds of CPU)."""


def imports_heavy_modules(code: str) -> bool:
    """Whether ``code`` has an import statement of one of :data:`HEAVY_MODULES` (or cannot be parsed).

    Restricted code reaches a module only through an import statement (``__import__`` and
    ``importlib`` cannot be named, and no allowed stdlib module hands one out), so code without
    such a statement never holds a numpy, pandas or plotly object. Unparsable code counts as
    importing them: the worker reports its syntax error, and the full warm-up is the safe side.
    """
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return True
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        else:
            continue
        if any(name.partition(".")[0] in HEAVY_MODULES for name in names):
            return True
    return False


def error_reply(text: str) -> dict[str, Any]:
    """A reply that carries only an error: no output, no chart."""
    return {"output": None, "chart": None, "error": text}


def error_payload(text: str) -> bytes:
    """An error reply as sent: the zygote's own (timeouts, crashes), or a worker's whose result cannot
    be sent."""
    return json.dumps(error_reply(text)).encode()
