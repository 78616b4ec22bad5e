"""Sandboxed Python analysis: a pre-forked, locked-down worker per call (read README.md first).

Public API: :class:`SandboxPool` (``await pool.run(code, data)`` → :class:`SandboxResult`) and a
process-wide lifecycle for the API lifespan and the CLI: :func:`start_sandbox`,
:func:`stop_sandbox`, :func:`get_sandbox`. The client classes are imported on first use: the
zygote (``python -m qdash.sandbox.zygote``) runs this file too, and must not pay for the client's
settings and logging imports (about a third of its start-up) that it never uses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from qdash.sandbox.client import SandboxPool, SandboxResult, SandboxUnavailableError
    from qdash.settings import SandboxSettings

__all__ = [
    "SandboxPool",
    "SandboxResult",
    "SandboxUnavailableError",
    "get_sandbox",
    "start_sandbox",
    "stop_sandbox",
]


_CLIENT_NAMES = frozenset({"SandboxPool", "SandboxResult", "SandboxUnavailableError"})


def __getattr__(name: str) -> Any:
    if name in _CLIENT_NAMES:
        from qdash.sandbox import client

        return getattr(client, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _Holder:
    """The process-wide pool (a holder instead of a ``global`` statement)."""

    pool: SandboxPool | None = None


async def start_sandbox(settings: SandboxSettings) -> SandboxPool:
    """Start the process-wide pool (idempotent). Raises SandboxUnavailableError, pool kept for
    its ``unavailable_reason`` so stray calls are answered with ``Sandbox unavailable: …``."""
    from qdash.sandbox.client import SandboxPool

    pool = _Holder.pool
    if pool is None:
        pool = _Holder.pool = SandboxPool(settings)
        await pool.start()
    elif pool.zygote_pid is None:
        await pool.start()  # another task is starting it: wait for that start
    return pool


async def stop_sandbox() -> None:
    """Stop the process-wide pool, if any (API shutdown, CLI exit)."""
    pool, _Holder.pool = _Holder.pool, None
    if pool is not None:
        await pool.stop()


def get_sandbox() -> SandboxPool:
    """The running pool; raises SandboxUnavailableError when :func:`start_sandbox` was not called."""
    if _Holder.pool is None:
        from qdash.sandbox.client import SandboxUnavailableError

        raise SandboxUnavailableError("Sandbox unavailable: the sandbox has not been started")
    return _Holder.pool
