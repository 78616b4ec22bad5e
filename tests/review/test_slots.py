"""Per-project review slots in the database: never more than the cap held across owners (processes),
an expired slot is taken, a released one is free, projects do not share slots, a holder renews.

On the embedded store by default, on a real MongoDB with ``QDASH_TEST_MONGO_URI`` (``mongo_db``).
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pymongo.database import Database

from qdash.db.indexes import find_index
from qdash.review.slot_line import LINE, join_line, nobody_waits, waiters_ahead
from qdash.review.slots import SLOTS, ProjectSlots, SlotsBusyError, release_slot, renew_slot, take_slot
from qdash.settings import ReviewSettings

Db = Database[dict[str, Any]]
LEASE_S = 30.0
PROJECT = "proj-demo"


def _take(db: Db, owner: str, cap: int = 2, project: str = PROJECT, **when: Any) -> Any:
    return take_slot(db, project, cap, owner, lease_s=when.pop("lease_s", LEASE_S), **when)


def test_two_owners_racing_never_hold_more_than_the_cap(mongo_db: Db) -> None:
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch often: a find-then-update race shows at once
    try:
        taken, refused = _race(mongo_db, cap=3, rounds=200)
    finally:
        sys.setswitchinterval(switch)
    assert taken["a"] and taken["b"], "both owners got slots"
    assert refused, "an owner alone asks for 2 < cap: a refusal means the other held slots then"
    docs = list(mongo_db[SLOTS].find({"project_id": PROJECT}))
    assert sorted(doc["_id"] for doc in docs) == [f"{PROJECT}:{n}" for n in range(3)]  # created once
    assert all(doc["owner"] is None for doc in docs), "every slot released at the end"


def _race(db: Db, *, cap: int, rounds: int) -> tuple[dict[str, int], int]:
    """Two owners take slots (2 at a time each, 4 > cap together) and free them again; every hold is
    counted while held, so more than ``cap`` at once would show. Returns the takes per owner and the
    refused takes."""
    held = {"a": 0, "b": 0}
    taken = {"a": 0, "b": 0}
    refused = 0
    holders: dict[str, str] = {}  # slot id → the owner holding it now
    lock = threading.Lock()
    start = threading.Barrier(2)
    errors: list[str] = []

    def owner(name: str) -> None:
        nonlocal refused
        start.wait()
        for _ in range(rounds):
            leases = []
            for _ in range(2):
                lease = _take(db, name, cap)
                with lock:
                    if lease is None:
                        refused += 1
                        continue
                    if lease.slot_id in holders:
                        errors.append(
                            f"{lease.slot_id} taken by {name} while {holders[lease.slot_id]} held it"
                        )
                    holders[lease.slot_id] = name
                    held[name] += 1
                    taken[name] += 1
                    if sum(held.values()) > cap:
                        errors.append(f"{held} held at once with cap {cap}")
                leases.append(lease)
            for lease in leases:
                with lock:
                    held[name] -= 1
                    holders.pop(lease.slot_id, None)
                release_slot(db, lease)

    threads = [threading.Thread(target=owner, args=(name,)) for name in held]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors[:3]
    assert held == {"a": 0, "b": 0}
    return taken, refused


def test_a_released_slot_is_free_and_a_full_project_takes_none(mongo_db: Db) -> None:
    first = _take(mongo_db, "a", cap=1)
    assert first is not None and first.slot_id == f"{PROJECT}:0"
    assert _take(mongo_db, "b", cap=1) is None
    release_slot(mongo_db, first)
    second = _take(mongo_db, "b", cap=1)
    assert second is not None and second.owner == "b"
    release_slot(mongo_db, first)  # a late release of the old hold frees nothing
    assert _take(mongo_db, "a", cap=1) is None


def test_an_expired_slot_is_taken_and_its_old_holder_cannot_renew_it(mongo_db: Db) -> None:
    """A process killed mid-request stops renewing: its slot frees itself after the lease."""
    an_hour_ago = datetime.now(UTC) - timedelta(hours=1)
    dead = _take(mongo_db, "killed", cap=1, now=an_hour_ago)
    assert dead is not None
    live = _take(mongo_db, "replica", cap=1)
    assert live is not None and live.slot_id == dead.slot_id
    assert not renew_slot(mongo_db, dead, LEASE_S)
    assert renew_slot(mongo_db, live, LEASE_S)
    doc = mongo_db[SLOTS].find_one({"_id": live.slot_id})
    assert doc is not None and doc["owner"] == "replica" and doc["lease_id"] == live.lease_id


def test_another_project_has_its_own_slots_and_a_lowered_cap_uses_fewer(mongo_db: Db) -> None:
    assert _take(mongo_db, "a", cap=1) is not None and _take(mongo_db, "a", cap=1) is None
    other = _take(mongo_db, "a", cap=1, project="proj-other")
    assert other is not None and other.slot_id == "proj-other:0"
    wide = [_take(mongo_db, "a", cap=3, project="proj-wide") for _ in range(4)]
    assert [lease is not None for lease in wide] == [True, True, True, False]
    for lease in wide[:3]:
        release_slot(mongo_db, lease)
    narrow = [_take(mongo_db, "a", cap=1, project="proj-wide") for _ in range(2)]
    assert narrow[0] is not None and narrow[0].slot_id == "proj-wide:0" and narrow[1] is None


def _settings(**review: Any) -> ReviewSettings:
    values = {"project_concurrency": 1, "lease_s": 0.4, "lease_renew_s": 0.1, "slot_wait_s": 0.3}
    return ReviewSettings.model_validate(values | review)


async def test_a_holder_renews_past_its_lease_and_frees_the_slot_however_it_ends(mongo_db: Db) -> None:
    settings = _settings()
    replica_a, replica_b = ProjectSlots(mongo_db, settings, "a"), ProjectSlots(mongo_db, settings, "b")
    with pytest.raises(RuntimeError, match="request failed"):
        async with replica_a.hold(PROJECT) as lease:
            await asyncio.sleep(1.0)  # 2.5 leases: only renewals keep the slot
            taken = await asyncio.to_thread(_take, mongo_db, "b", 1, lease_s=0.4)
            assert taken is None, "a renewed slot is not free for another replica"
            raise RuntimeError("request failed")
    async with replica_b.hold(PROJECT) as lease:  # freed at once, no lease to wait out
        assert lease.owner == "b"


async def test_a_busy_project_gives_up_after_the_wait_with_a_clear_error(mongo_db: Db) -> None:
    settings = _settings(slot_wait_s=0.3)
    await asyncio.to_thread(_take, mongo_db, "other replica", 1)
    started = asyncio.get_running_loop().time()
    ticks = 0

    async def ticker() -> None:  # the loop stays free while a holder waits for a slot
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    beat = asyncio.ensure_future(ticker())
    try:
        with pytest.raises(SlotsBusyError, match=r"all 1 model review slots of project proj-demo") as busy:
            async with ProjectSlots(mongo_db, settings, "a").hold(PROJECT):
                pytest.fail("no slot was free")
    finally:
        beat.cancel()
    waited = asyncio.get_running_loop().time() - started
    assert 0.3 <= waited < 2.0 and ticks >= 10
    assert "review.project_concurrency" in str(busy.value) and "review.slot_wait_s" in str(busy.value)


async def test_a_waiter_in_line_is_served_before_a_newcomer_of_the_releasing_process(mongo_db: Db) -> None:
    """Replica B waits for the only slot; replica A frees it and asks again at once: B gets it (without
    the line A's immediate take would beat B's backoff every time, and B would starve)."""
    settings = _settings(lease_s=30, lease_renew_s=10, slot_wait_s=20)
    replica_a, replica_b = ProjectSlots(mongo_db, settings, "a"), ProjectSlots(mongo_db, settings, "b")
    order: list[str] = []

    async def review(slots: ProjectSlots, name: str) -> None:
        async with slots.hold(PROJECT):
            order.append(name)
            await asyncio.sleep(0.2)

    first = await asyncio.to_thread(_take, mongo_db, "a", 1)
    waiting_b = asyncio.ensure_future(review(replica_b, "b"))
    await asyncio.sleep(1.0)  # B has joined the line and backed off
    assert order == [] and mongo_db[LINE].count_documents({"project_id": PROJECT}) == 1
    await asyncio.to_thread(release_slot, mongo_db, first)
    await asyncio.gather(review(replica_a, "a"), waiting_b)
    assert order == ["b", "a"]
    assert mongo_db[LINE].count_documents({}) == 0, "a served waiter leaves the line"


def test_a_waiter_of_a_killed_process_stops_holding_up_the_line(mongo_db: Db) -> None:
    gone = join_line(mongo_db, PROJECT, "killed")
    mongo_db[LINE].update_one({"_id": gone.waiter_id}, {"$set": {"alive_until": datetime.now(UTC)}})
    assert nobody_waits(mongo_db, PROJECT)
    alive = join_line(mongo_db, PROJECT, "replica")
    assert waiters_ahead(mongo_db, alive) == 0 and not nobody_waits(mongo_db, PROJECT)
    time.sleep(0.002)  # joined a millisecond later (the stored precision)
    later = join_line(mongo_db, PROJECT, "replica")
    assert waiters_ahead(mongo_db, later) == 1 and waiters_ahead(mongo_db, alive) == 0
    twins = [join_line(mongo_db, PROJECT, "replica") for _ in range(2)]  # often in later's millisecond
    ahead = sorted(waiters_ahead(mongo_db, waiter) for waiter in (later, *twins))
    assert ahead == [1, 2, 3], "a strict order, ties broken by id"
    assert nobody_waits(mongo_db, "proj-other")


def test_taking_a_slot_and_the_line_are_served_by_indexes() -> None:
    """Every model review takes a slot: the project's free-or-expired slots, by index; waiters count
    the project's line by the time they joined."""
    assert find_index(SLOTS, {"project_id"}, ["until"]) is not None
    assert find_index(LINE, {"project_id"}, ["since"]) is not None
