"""Rate limit and concurrent-stream cap: counters live in the database, with exact texts."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from pymongo.database import Database

from qdash.api import limits, runs
from tests.api.api_helpers import FakeAssistant, auth, parse_sse


def _with_api(app: FastAPI, **changes: Any) -> None:
    settings = app.state.settings
    app.state.settings = settings.model_copy(update={"api": settings.api.model_copy(update=changes)})


async def test_rate_limit_with_retry_after(
    client: httpx.AsyncClient, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One window for all of it: on a loaded machine the requests could otherwise straddle a minute.
    middle = (int(time.time() // limits.WINDOW_S) + 0.5) * limits.WINDOW_S
    monkeypatch.setattr(limits, "time", SimpleNamespace(time=lambda: middle))
    _with_api(app, chat_requests_per_minute=2)
    for _ in range(2):
        ok = await client.post("/copilot/chat/stream", json={"message": "hi"}, headers=auth())
        assert ok.status_code == 200
    limited = await client.post("/copilot/chat/stream", json={"message": "hi"}, headers=auth())
    assert limited.status_code == 429
    retry = int(limited.headers["retry-after"])
    assert retry == limits.WINDOW_S // 2
    assert limited.json() == {"detail": f"Too many requests; try again in {retry} s"}
    other_user = await client.post("/copilot/chat/stream", json={"message": "hi"}, headers=auth("bob"))
    assert other_user.status_code == 200


def test_rate_window_rolls_over(db: Database[dict[str, Any]]) -> None:
    for _ in range(3):
        limits.check_rate(db, "u", 3, now=120.0)
    limits.check_rate(db, "u", 3, now=180.0)
    assert db[limits.RATE_COLLECTION].find_one({"_id": "u:3"})["count"] == 1  # type: ignore[index]


async def test_concurrency_cap(
    client: httpx.AsyncClient, app: FastAPI, fake: FakeAssistant, db: Database[dict[str, Any]]
) -> None:
    _with_api(app, max_concurrent_streams_per_user=1)
    fake.behaviour = "slow"
    fake.delay = 0.5
    first = asyncio.create_task(client.post("/copilot/chat/stream", json={"message": "a"}, headers=auth()))
    await asyncio.wait_for(fake.started.wait(), 5)
    second = await client.post("/copilot/chat/stream", json={"message": "b"}, headers=auth())
    assert second.status_code == 429 and second.json() == {"detail": "Too many concurrent requests"}
    assert parse_sse((await first).content)[-1][0] == "result"
    assert db[limits.LEASE_COLLECTION].count_documents({}) == 0
    third = await client.post("/copilot/chat/stream", json={"message": "c"}, headers=auth())
    assert third.status_code == 200


def test_expired_leases_do_not_count(db: Database[dict[str, Any]]) -> None:
    past = datetime.now(UTC) - timedelta(seconds=5)
    db[limits.LEASE_COLLECTION].insert_one(
        {"_id": "crashed-replica", "username": "u", "created_at": past, "expires_at": past}
    )
    fresh = limits.acquire_lease(db, "u", 1, ttl_s=60)
    limits.release_lease(db, fresh)
    assert db[limits.LEASE_COLLECTION].count_documents({"_id": fresh}) == 0


async def test_stop_polls_of_a_process_share_one_query(
    db: Database[dict[str, Any]], monkeypatch: Any
) -> None:
    """Streams polling at the same time read their stop flags in one query; each sees only its own
    stop, and an ended stream's lease is no longer asked for."""
    queries: list[list[str]] = []
    real = limits.stops_requested

    def counted(database: Database[dict[str, Any]], lease_ids: list[str]) -> set[str]:
        queries.append(sorted(lease_ids))
        return real(database, lease_ids)

    monkeypatch.setattr(limits, "stops_requested", counted)
    polls = runs._StopPolls()
    first, second = (limits.acquire_lease(db, user, 1, ttl_s=60, project_id="p") for user in ("u", "v"))
    for lease in (first, second):
        polls.follow(db, lease)
    assert await asyncio.gather(polls.requested(db, first), polls.requested(db, second)) == [False, False]
    assert queries == [sorted([first, second])]
    assert limits.request_stop(db, "v", "p", run_id=second) == 1
    await asyncio.sleep(polls.FRESH_S)
    assert await asyncio.gather(polls.requested(db, first), polls.requested(db, second)) == [False, True]
    assert len(queries) == 2
    polls.forget(db, second)
    await asyncio.sleep(polls.FRESH_S)
    assert await polls.requested(db, first) is False
    assert queries[-1] == [first]
    polls.forget(db, first)
    assert polls.leases == {} and polls.last == {}
