"""The token-budget ledger: atomic reservations, settled with real usage, per project and UTC day.

On the embedded store by default, on a real MongoDB with ``QDASH_TEST_MONGO_URI``.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from pymongo.database import Database

from qdash.review.budget import BUDGETS, TokenBudget, next_reset
from qdash.settings import ReviewSettings

NOON = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)


class Clock:
    """A settable clock: tests move it to the next day."""

    def __init__(self, at: datetime) -> None:
        self.at = at

    def __call__(self) -> datetime:
        return self.at


@pytest.fixture
def db(mongo_db: Database[dict[str, Any]]) -> Database[dict[str, Any]]:
    """A fresh database: the embedded store, or a real MongoDB with ``QDASH_TEST_MONGO_URI``."""
    return mongo_db


def usage(tokens: int) -> dict[str, int]:
    return {"input_tokens": tokens - tokens // 10, "output_tokens": tokens // 10}


def test_concurrent_reservations_never_pass_the_budget(
    db: Database[dict[str, Any]],
) -> None:
    """16 threads race for 1000 one-token reservations; switching threads every microsecond makes a
    non-atomic check-then-increment show (without the ledger's lock the embedded store lets 1001 pass)."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    budget = TokenBudget(db, ReviewSettings(daily_token_budget=1000, reserve_tokens=1), Clock(NOON))
    held: list[object] = []

    def grab() -> None:
        for _ in range(100):
            if budget.reserve("p1") is not None:
                held.append(1)

    try:
        threads = [threading.Thread(target=grab) for _ in range(16)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(previous)
    doc = db[BUDGETS].find_one({"_id": "p1:2026-11-25"})
    assert len(held) == 1000
    assert doc is not None and doc["spent"] == doc["reserved"] == 1000 and doc["used"] == 0


def test_settling_replaces_the_estimate_by_real_usage(db: Database[dict[str, Any]]) -> None:
    budget = TokenBudget(db, ReviewSettings(daily_token_budget=10_000, reserve_tokens=6000), Clock(NOON))
    first = budget.reserve("p1")
    assert first is not None and first.tokens == 6000
    assert budget.reserve("p1") is None, "6000 held, 4000 left: a second 6000 estimate does not fit"
    budget.settle(first, usage(3000))
    state = budget.state("p1")
    assert (state.used, state.reserved, state.estimate) == (3000, 0, 3000)
    second = budget.reserve("p1")  # the estimate is now the day's largest real request
    assert second is not None and second.tokens == 3000
    budget.settle(second, usage(2500))
    third = budget.reserve("p1")
    assert third is not None and third.tokens == 3000
    budget.settle(third, {})  # the request failed: its reservation is released, nothing counted
    assert (budget.state("p1").used, budget.state("p1").reserved) == (5500, 0)
    fourth = budget.reserve("p1")
    assert fourth is not None and budget.reserve("p1") is None
    assert not budget.state("p1").exhausted, "refused while 3000 are in flight: they may settle lower"
    budget.settle(fourth, usage(3000))
    state = budget.state("p1")
    assert state.exhausted and state.used == 8500 and budget.reserve("p1") is None
    assert "review.project_budgets.p1" in state.message() and "review.daily_token_budget" in state.message()
    assert "2026-11-26T00:00:00+00:00" in state.message()


def test_budgets_are_per_project_and_per_utc_day(db: Database[dict[str, Any]]) -> None:
    clock = Clock(NOON)
    settings = ReviewSettings(daily_token_budget=1000, reserve_tokens=1000, project_budgets={"big": 5000})
    budget = TokenBudget(db, settings, clock)
    spent = budget.reserve("p1")
    assert spent is not None and budget.reserve("p1") is None
    budget.settle(spent, usage(1000))
    assert budget.state("p1").exhausted
    assert not budget.state("p2").exhausted and budget.reserve("p2") is not None
    assert [budget.reserve("big") is not None for _ in range(6)] == [True] * 5 + [False]
    clock.at = datetime(2026, 11, 25, 23, 59, 59, tzinfo=UTC)
    assert budget.reserve("p1") is None
    clock.at = datetime(2026, 11, 26, 0, 0, tzinfo=UTC)  # a new UTC day: a fresh budget
    assert not budget.state("p1").exhausted and budget.reserve("p1") is not None
    assert budget.state("p1").day == date(2026, 11, 26)
    assert db[BUDGETS].count_documents({"project_id": "p1"}) == 2


def test_an_unlimited_project_reserves_nothing_but_its_usage_is_recorded(
    db: Database[dict[str, Any]],
) -> None:
    budget = TokenBudget(db, ReviewSettings(project_budgets={"capped": 0}), Clock(NOON))
    assert budget.reserve("capped") is None, "a budget of 0 allows no model review"
    reservation = budget.reserve("free")
    assert reservation is not None and reservation.tokens == 0
    budget.settle(reservation, usage(4200))
    state = budget.state("free")
    assert state.limit is None and state.used == 4200 and not state.exhausted


def test_settings_and_reset_time() -> None:
    settings = ReviewSettings(daily_token_budget=100, project_budgets={"a": 7})
    assert (settings.budget_for("a"), settings.budget_for("b")) == (7, 100)
    assert ReviewSettings().budget_for("a") is None
    late = datetime(2026, 11, 25, 23, 30, tzinfo=UTC).astimezone(datetime.now().astimezone().tzinfo)
    assert next_reset(late) == datetime(2026, 11, 26, tzinfo=UTC)
    assert next_reset(NOON) - NOON == timedelta(hours=12)
    with pytest.raises(ValueError, match="greater than or equal to 0"):
        ReviewSettings(project_budgets={"a": -1})


async def test_acquire_waits_for_requests_in_flight_and_defers_only_a_spent_budget(
    db: Database[dict[str, Any]],
) -> None:
    budget = TokenBudget(db, ReviewSettings(daily_token_budget=10_000, reserve_tokens=6000), Clock(NOON))
    first = await budget.acquire("p1")
    assert first is not None

    async def settle_soon() -> None:
        await asyncio.sleep(0.3)
        await asyncio.to_thread(budget.settle, first, usage(1000))

    settling = asyncio.create_task(settle_soon())
    second = await budget.acquire("p1")  # 6000 + 6000 > 10000 until the first settles at 1000
    await settling
    assert second is not None and second.tokens == 1000
    budget.settle(second, usage(8500))
    assert budget.state("p1").exhausted
    assert await budget.acquire("p1") is None
