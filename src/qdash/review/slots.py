"""Per-project concurrency of model reviews across every job of one process.

Why per project and process-wide: ``review.concurrency`` bounds one job's workers, but a project may
run several jobs at once (the watcher's tick, API jobs, a resumed job); without a shared cap one
project's big selection would take every model slot and starve the other projects' reviews. All of
a project's model reviews in this process share one semaphore of ``review.project_concurrency``.
Guard-only verdicts take no slot. The semaphores are kept per event loop (an asyncio semaphore
belongs to the loop it first waits on), so tests and CLI runs with their own loops never share one.
"""

from __future__ import annotations

import asyncio
from weakref import WeakKeyDictionary

_SLOTS: WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str, int], asyncio.Semaphore]] = (
    WeakKeyDictionary()
)


def project_slot(project_id: str, limit: int) -> asyncio.Semaphore:
    """The running loop's semaphore for ``project_id`` (one per configured ``limit``)."""
    per_loop = _SLOTS.setdefault(asyncio.get_running_loop(), {})
    key = (project_id, limit)
    if key not in per_loop:
        per_loop[key] = asyncio.Semaphore(limit)
    return per_loop[key]
