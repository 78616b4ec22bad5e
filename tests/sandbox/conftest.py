"""Fixtures for the sandbox tests: one zygote per test module, driven from a loop thread.

Why a loop thread: a module-scoped pool must outlive pytest-asyncio's per-test loops; the tests
then call the pool through ``run_sync``, the same path the tool executor threads use.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from qdash.sandbox import SandboxPool
from qdash.settings import SandboxSettings

FAST_LIMITS: dict[str, Any] = {"wall_s": 2.0, "cpu_s": 2, "spares": 2, "max_concurrency": 4}


class LoopThread:
    """An event loop running in a daemon thread, owning one pool."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def call(self, coro: Any, timeout: float = 120.0) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


def start_pool(plain_exec: bool = False, **overrides: Any) -> tuple[LoopThread, SandboxPool]:
    runner = LoopThread()
    pool = SandboxPool(SandboxSettings(**{**FAST_LIMITS, **overrides}), _plain_exec_for_tests=plain_exec)
    runner.call(pool.start())
    return runner, pool


@pytest.fixture(scope="module")
def sandbox() -> Iterator[SandboxPool]:
    """A started pool with 2 s limits, shared by the module."""
    runner, pool = start_pool()
    yield pool
    runner.call(pool.stop())
    runner.close()
