"""Per-turn guards: the timeseries rate limit and the identical-call breaker."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from pymongo.database import Database

from qdash.copilot.tools.wrappers.breaker import check_breaker
from qdash.copilot.tools.wrappers.rate_limit import check_rate_limit
from qdash.settings import Settings

from .test_executor import make_service, tools_by_name

RATE_LIMIT_TEXT = (
    "Too many get_parameter_timeseries calls (4). Use get_chip_parameter_timeseries instead — it returns "
    "per-qubit timeseries arrays (value + timestamp, suitable for plotting), stats, and trends for ALL "
    "qubits in one call."
)


async def test_fourth_timeseries_call_gets_the_exact_error(
    mongo_db: Database[dict[str, Any]], settings: Settings
) -> None:
    tool = tools_by_name(make_service(mongo_db, settings))["get_parameter_timeseries"]
    for qid in ("1", "2", "3"):
        assert not (await tool({"parameter_name": "t1", "qid": qid})).is_error
    out = await tool({"parameter_name": "t1", "qid": "4"})
    assert out.is_error
    assert json.loads(out.model_text) == {"error": RATE_LIMIT_TEXT}
    fifth = json.loads((await tool({"parameter_name": "t1", "qid": "5"})).model_text)
    assert fifth["error"].startswith("Too many get_parameter_timeseries calls (5).")


async def test_counters_are_per_turn(mongo_db: Database[dict[str, Any]], settings: Settings) -> None:
    service = make_service(mongo_db, settings)
    for _ in range(2):  # two turns: each may call three times
        tool = tools_by_name(service)["get_parameter_timeseries"]
        results = [await tool({"parameter_name": "t1", "qid": str(q)}) for q in range(3)]
        assert not any(r.is_error for r in results)


async def test_third_identical_call_trips_the_breaker(
    mongo_db: Database[dict[str, Any]], settings: Settings
) -> None:
    service = make_service(mongo_db, settings)
    echo = tools_by_name(service)["echo"]
    first = await echo({"qid": "16", "last_n": 5})
    second = await echo({"qid": "16", "last_n": None})  # null means the default: the same call
    assert not first.is_error and not second.is_error
    third = await echo({"last_n": 5, "qid": "16"})
    assert third.is_error
    assert json.loads(third.model_text) == {
        "error": "Repeated identical call to echo (3 times this turn). "
        "Use the earlier result instead of calling again."
    }
    assert third.stop_reason == "Detected repeated identical tool calls"
    other = await echo({"qid": "17", "last_n": 5})
    assert not other.is_error


async def test_the_rate_limit_counts_every_call_of_the_turn_a_breaker_refusal_included(
    mongo_db: Database[dict[str, Any]], settings: Settings
) -> None:
    """The engine counts a turn's calls (``RunContext.calls``); the breaker's refusal ends the turn
    anyway (``stop_reason``), so only a call in the same batch can follow it, and it is counted."""
    tool = tools_by_name(make_service(mongo_db, settings))["get_parameter_timeseries"]
    same = {"parameter_name": "t1", "qid": "1"}
    await tool(same)
    await tool(same)
    assert (await tool(same)).stop_reason is not None
    fourth = json.loads((await tool({"parameter_name": "t1", "qid": "2"})).model_text)
    assert fourth["error"].startswith("Too many get_parameter_timeseries calls (4).")


def test_breaker_alone_counts_normalised_signatures_per_turn() -> None:
    turn: Counter[str] = Counter()
    args = {"qid": "16", "last_n": 5}
    assert check_breaker(turn, "echo", args, 2) is None
    assert check_breaker(turn, "echo", dict(reversed(args.items())), 2) is None  # key order is not a call
    refusal = check_breaker(turn, "echo", args, 2)
    assert refusal is not None and refusal["error"].startswith("Repeated identical call to echo (3 times")
    assert check_breaker(turn, "echo", {"qid": "17", "last_n": 5}, 2) is None
    assert check_breaker(Counter(), "echo", args, 2) is None  # a new turn starts over


def test_rate_limit_alone_refuses_from_the_call_after_the_limit() -> None:
    name = "get_parameter_timeseries"
    assert [check_rate_limit(count, name, 2) is None for count in (1, 2, 3)] == [True, True, False]
