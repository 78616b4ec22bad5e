"""Start-up and shutdown of the service: the database is opened once per process.

The work itself (open, index, seed when empty) is ``qdash.bootstrap.prepare_database``, shared with
the commands that run without a server; here it runs in a worker thread so the event loop stays free.
"""

from __future__ import annotations

import gc
import importlib
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio.to_thread
from fastapi import FastAPI
from pymongo.database import Database
from starlette.concurrency import run_in_threadpool

from qdash.api.review_runs import start_resumer, stop_review_jobs
from qdash.bootstrap import prepare_database
from qdash.db import close_database, database_mode, start_warm_up
from qdash.db.server_record import SERVE_URL_ENV, advertise_server, withdraw_server
from qdash.engine.pool import set_tool_threads
from qdash.sandbox import stop_sandbox
from qdash.settings import Settings

__all__ = ["apply_thread_budget", "lifespan", "prepare_database"]
EMBEDDED_THREADS = 4
SERVER_THREADS = 40


def apply_thread_budget(settings: Settings, db: Database[Any]) -> int:
    """Size the two pools of blocking work (Starlette's threadpool, the tool pool) for this database.

    Why by database: embedded calls are Python that holds the GIL, so each extra runnable thread is
    one more 5 ms slice the event loop may wait for (``bench/concurrency.py``: 100 concurrent tool
    pairs, loop lag p99 66–91 ms with 40 + 16 threads, 22–36 ms with 4 + 4); MongoDB calls wait on
    the network with the GIL released, where threads add throughput. ``api.worker_threads``
    overrides. Call on the event loop (the threadpool's limiter belongs to it).
    """
    threads = settings.api.worker_threads or (
        EMBEDDED_THREADS if database_mode(db) == "embedded" else SERVER_THREADS
    )
    anyio.to_thread.current_default_thread_limiter().total_tokens = threads
    set_tool_threads(min(threads, 16))
    return threads


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Open the database unless one was injected (``create_app(db=…)``), and close what we opened.

    A server that opened an embedded store builds the maps of the tools' queries in the background
    (``db/warmup.py``), stopped at shutdown before the store closes. A server that opened its
    database takes over review jobs whose process died; shutdown cancels
    the review jobs running here and releases their leases. The sandbox pool starts on the first
    analysis call (most requests never need it); whatever started it, shutdown stops it so no
    zygote outlives the server. The assistant's model clients hold connection pools: they are
    closed too (test fakes without ``aclose`` are left alone).
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
        # The embedded store's maps of the tools' queries, built in the background (db/warmup.py):
        # the first question of each kind no longer builds them; readiness does not wait for them.
        state.warm_up = start_warm_up(state.db)
    apply_thread_budget(state.settings, state.db)
    copilot = state.settings.copilot
    if copilot.models[copilot.default_model].provider != "demo":
        # The model SDK loads on first use (a server on the demo model never needs it); with a
        # configured provider, load it now so the first question does not wait ~1.5 s for it.
        await run_in_threadpool(importlib.import_module, "openai")
    data_dir = state.settings.database.data_dir
    url = os.environ.get(SERVE_URL_ENV)
    advertised = bool(owned and url and state.settings.database.embedded_persist)
    if advertised and database_mode(state.db) == "embedded":
        # The CLI, refused by the store's lock, works through this server (qdash.remote).
        state.operator_token = advertise_server(data_dir, str(url)).token
    if owned and state.settings.review.auto_resume:
        start_resumer(state)  # review jobs whose server died are taken over (qdash.review.resumer)
    try:
        yield
    finally:
        await stop_review_jobs(state)  # their leases released: another replica takes over at once
        if advertised:
            withdraw_server(data_dir)
        aclose = getattr(getattr(state, "assistant", None), "aclose", None)
        if aclose is not None:
            await aclose()
        await stop_sandbox()
        if owned:
            if state.warm_up is not None:
                await run_in_threadpool(state.warm_up.stop)  # after its current map (≤ 0.3 s at a year)
            await run_in_threadpool(close_database, state.db)
