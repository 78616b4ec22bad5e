"""The one process-wide thread pool for blocking tool work, sized in one place.

Why one: synchronous tools of any agent and the copilot's tool work (queries, data-store writes)
compete for the same cores and the same GIL; two pools would each need sizing and together hold
twice the threads. The default ``to_thread`` pool is not used because it grows under load. The
server sizes the pool once at start-up (``api.worker_threads``, ``qdash.api.lifespan``).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

DEFAULT_THREADS = 16
T = TypeVar("T")

_threads = DEFAULT_THREADS
_pool: ThreadPoolExecutor | None = None


def tool_pool() -> ThreadPoolExecutor:
    """The pool, created on first use with the size last set."""
    global _pool  # noqa: PLW0603 - one pool per process, created on first use
    if _pool is None:
        _pool = ThreadPoolExecutor(max_workers=_threads, thread_name_prefix="qdash-tool")
    return _pool


def set_tool_threads(workers: int) -> None:
    """Size the pool (server start-up); a pool of another size is replaced, its calls finish."""
    global _pool, _threads  # noqa: PLW0603 - the process-wide pool above
    if workers == _threads:
        return
    _threads = workers
    if _pool is not None:
        old, _pool = _pool, None
        old.shutdown(wait=False)


async def run_blocking(func: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run ``func(*args, **kwargs)`` on the pool, keeping the caller's context variables (the
    request id in log lines), without blocking the event loop."""
    call = functools.partial(contextvars.copy_context().run, func, *args, **kwargs)
    return await asyncio.get_running_loop().run_in_executor(tool_pool(), call)
