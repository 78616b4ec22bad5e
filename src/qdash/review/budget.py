"""Per-project daily token budgets for model reviews, with the ledger in MongoDB.

Why in the database: API processes keep no state and several replicas (plus ``qdash review watch``)
may review the same project at once, so they must share one counter. The ledger is one small
document per project and UTC calendar day (``_id`` = ``project:YYYY-MM-DD``); the day resets at
00:00 UTC for every project, whatever the lab's time zone, so every process agrees on it.

Reserve, then settle: before a model request a runner *reserves* an estimate with one conditional
``$inc`` (it succeeds only while ``spent + estimate <= budget``), and after the request it *settles*
with the request's real usage (``spent += real - estimate``). ``spent`` therefore always counts the
settled tokens plus the reservations in flight, so concurrent runners cannot all pass the last free
tokens; the budget can only be overrun by how much real requests exceed their estimates. The
estimate is the largest real usage the project settled that day (``largest``), and before the first
settled request ``review.reserve_tokens``: a cautious guess that adapts to the model and prompt in use.

A refused reservation is not yet a spent budget: while other requests of the project are in flight,
their reservations may settle lower, so :meth:`TokenBudget.acquire` waits for them (polling the
ledger, at most ``RESERVE_WAIT_S``) and defers only when the *settled* tokens leave no room for one
more request (:attr:`BudgetState.exhausted`). A process killed between reserve and settle leaves its
reservation counted until the day ends: the ledger errs on the side of spending less.

The embedded store applies a filtered update as find-then-write (not atomic across threads); it is
owned by one process, so a process-wide lock makes the ledger's updates atomic there. On MongoDB the
server's per-document atomicity covers every replica.

Guard-only verdicts (a guard ``FAIL``) ask no model and never touch the ledger.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from pymongo import ReturnDocument
from pymongo.database import Database

from qdash.repositories.scope import Doc
from qdash.settings import ReviewSettings

BUDGETS = "copilot_review_budget"
Clock = Callable[[], datetime]
_LEDGER_LOCK = threading.Lock()
RESERVE_POLL_S = 0.2
RESERVE_WAIT_S = 120.0
"""Longest wait for in-flight reservations to settle (longer than one review request takes)."""


def utc_now() -> datetime:
    return datetime.now(UTC)


def budget_day(at: datetime) -> date:
    """The UTC calendar day a budget counts."""
    return at.astimezone(UTC).date()


def next_reset(at: datetime) -> datetime:
    """When the budget of ``at``'s day resets: the next 00:00 UTC."""
    return datetime.combine(budget_day(at) + timedelta(days=1), time(0), tzinfo=UTC)


def request_tokens(usage: Mapping[str, Any]) -> int:
    """Tokens one model request used (input + output), as stored in a review's ``usage``."""
    return int(usage.get("input_tokens") or 0) + int(usage.get("output_tokens") or 0)


@dataclass(frozen=True)
class Reservation:
    """Tokens held for one model request of a project on a day (0 when the project is unlimited)."""

    project_id: str
    day: date
    tokens: int


@dataclass(frozen=True)
class BudgetState:
    """A project's budget on one day, as jobs, the CLI and the API report it."""

    project_id: str
    day: date
    limit: int | None
    used: int
    reserved: int
    estimate: int
    resets_at: datetime

    @property
    def exhausted(self) -> bool:
        """The settled tokens leave no room for one more request of the size the ledger reserves."""
        return self.limit is not None and self.used + self.estimate > self.limit

    def message(self) -> str:
        """What a user reads when model reviews stop: how much, until when, which setting to raise."""
        return (
            f"project {self.project_id} has spent its daily review token budget ({self.used} of "
            f"{self.limit} tokens used on {self.day.isoformat()} UTC, about {self.estimate} needed per "
            "review); the remaining results stay unreviewed "
            f"until the budget resets at {self.resets_at.isoformat()} (guard FAILs still run); raise "
            f"review.project_budgets.{self.project_id} or review.daily_token_budget to continue today"
        )

    def job_doc(self) -> Doc:
        """The ``budget`` field of a job that left results unreviewed for lack of tokens."""
        return {
            "exhausted": True,
            "limit": self.limit,
            "used": self.used,
            "day": self.day.isoformat(),
            "resets_at": self.resets_at,
            "message": self.message(),
        }


class TokenBudget:
    """The ledger of every project's daily review tokens (``copilot_review_budget``)."""

    def __init__(self, db: Database[Doc], settings: ReviewSettings, clock: Clock = utc_now) -> None:
        self.db = db
        self.settings = settings
        self.clock = clock

    def reserve(self, project_id: str) -> Reservation | None:
        """Hold the estimate of one model request; ``None`` when the project's budget cannot cover it
        (blocking: call it in a thread)."""
        day = budget_day(self.clock())
        limit = self.settings.budget_for(project_id)
        if limit is None:
            return Reservation(project_id, day, 0)
        key = _key(project_id, day)
        ledger = self.db[BUDGETS]
        with _LEDGER_LOCK:
            doc = ledger.find_one_and_update(
                {"_id": key},
                {"$setOnInsert": _fresh(project_id, day)},
                upsert=True,
                return_document=ReturnDocument.AFTER,
            )
            estimate = self._estimate(doc or {})
            held = ledger.update_one(
                {"_id": key, "spent": {"$lte": limit - estimate}},
                {"$inc": {"spent": estimate, "reserved": estimate}, "$set": {"limit": limit}},
            )
        return Reservation(project_id, day, estimate) if held.modified_count else None

    async def acquire(self, project_id: str) -> Reservation | None:
        """:meth:`reserve`, waiting while the project's requests in flight may still free room;
        ``None`` once the budget is spent."""
        waited = 0.0
        while True:
            reservation = await asyncio.to_thread(self.reserve, project_id)
            if reservation is not None:
                return reservation
            state = await asyncio.to_thread(self.state, project_id)
            if state.exhausted or not state.reserved or waited >= RESERVE_WAIT_S:
                return None
            await asyncio.sleep(RESERVE_POLL_S)
            waited += RESERVE_POLL_S

    def settle(self, reservation: Reservation, usage: Mapping[str, Any]) -> None:
        """Replace the reservation by the request's real usage (``usage`` of the engine; empty when the
        request failed); blocking."""
        real = request_tokens(usage)
        key = _key(reservation.project_id, reservation.day)
        with _LEDGER_LOCK:
            self.db[BUDGETS].update_one(
                {"_id": key},
                {
                    "$setOnInsert": {"project_id": reservation.project_id, "day": str(reservation.day)},
                    "$inc": {
                        "spent": real - reservation.tokens,
                        "reserved": -reservation.tokens,
                        "used": real,
                        "requests": 1 if real else 0,
                    },
                    "$max": {"largest": real},
                    "$set": {"updated_at": utc_now()},
                },
                upsert=True,
            )

    def state(self, project_id: str) -> BudgetState:
        """The project's budget today (blocking)."""
        now = self.clock()
        day = budget_day(now)
        doc = self.db[BUDGETS].find_one({"_id": _key(project_id, day)}) or {}
        return BudgetState(
            project_id,
            day,
            self.settings.budget_for(project_id),
            int(doc.get("used") or 0),
            int(doc.get("reserved") or 0),
            self._estimate(doc),
            next_reset(now),
        )

    def _estimate(self, ledger: Doc) -> int:
        """The day's largest settled request, else ``review.reserve_tokens``."""
        return int(ledger.get("largest") or 0) or self.settings.reserve_tokens


def _key(project_id: str, day: date) -> str:
    return f"{project_id}:{day.isoformat()}"


def _fresh(project_id: str, day: date) -> Doc:
    return {
        "project_id": project_id,
        "day": day.isoformat(),
        "spent": 0,
        "used": 0,
        "reserved": 0,
        "requests": 0,
        "largest": 0,
    }
