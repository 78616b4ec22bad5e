"""Start-up and shutdown of the service: the database is opened once per process.

The work itself (open, index, seed when empty) is ``qdash.bootstrap.prepare_database``, shared with
the commands that run without a server; here it runs in a worker thread so the event loop stays free.
"""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from starlette.concurrency import run_in_threadpool

from qdash.bootstrap import prepare_database
from qdash.copilot.sandbox import stop_sandbox
from qdash.db import close_database

__all__ = ["lifespan", "prepare_database"]


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Open the database unless one was injected (``create_app(db=…)``), and close what we opened.

    The sandbox pool starts on the first analysis call (most requests never need it); whatever
    started it, shutdown stops it so no zygote outlives the server. The assistant's model clients
    hold connection pools: they are closed too (test fakes without ``aclose`` are left alone).
    """
    state = app.state
    owned = getattr(state, "db", None) is None
    if owned:
        state.db = await run_in_threadpool(prepare_database, state.settings)
        # What exists now (in embedded mode: every document of the store, as Python objects) lives
        # as long as the server: keep it out of the collector's full passes, which otherwise walk
        # it all while holding the GIL — a 150–190 ms stall of the event loop per gen-2 pass with
        # the small demo lab, ~50 ms after freezing (bench/concurrency.py). Later objects are
        # collected as usual; no gc.collect() first, so start-up (and tests) stay fast.
        gc.freeze()
    try:
        yield
    finally:
        aclose = getattr(getattr(state, "assistant", None), "aclose", None)
        if aclose is not None:
            await aclose()
        await stop_sandbox()
        if owned:
            await run_in_threadpool(close_database, state.db)
