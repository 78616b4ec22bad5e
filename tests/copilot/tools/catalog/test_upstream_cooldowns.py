"""A parameter's history across a thermal cycle is not one trend: tools filter by ``cooldown_id``
and otherwise say where the cool-down changes (and trend only within the newest one)."""

from __future__ import annotations

from typing import Any

import pytest

from qdash.settings import Settings

from .upstream_rows import chip_doc, qubit_doc, tool_caller, upstream_run

FIRST = [20.0, 21.0, 22.0, 23.0, 24.0, 25.0]  # rising in cool-down cd-1
SECOND = [30.0, 29.0, 28.0, 27.0]  # falling in cool-down cd-2 (after a warm-up)


@pytest.fixture
def call(mongo_db: Any, settings: Settings) -> Any:
    runs = [upstream_run("0", m, v, cooldown_id="cd-1") for m, v in enumerate(FIRST)]
    runs += [upstream_run("0", 10 + m, v, cooldown_id="cd-2") for m, v in enumerate(SECOND)]
    runs += [upstream_run("1", m, 50.0 + m, cooldown_id="cd-2") for m in range(3)]
    mongo_db.task_result_history.insert_many(runs)
    mongo_db.chip.insert_one(chip_doc())
    mongo_db.qubit.insert_many([qubit_doc("0"), qubit_doc("1")])
    return tool_caller(mongo_db, settings)


def _column(result: dict[str, Any], name: str) -> list[Any]:
    return [row[result["cols"].index(name)] for row in result["rows"]]


def test_series_says_where_the_cooldown_changes(call: Any) -> None:
    series = call("get_parameter_timeseries", parameter_name="t1", qid="0", last_n=50)
    assert _column(series, "cooldown_id") == ["cd-1"] * 6 + ["cd-2"] * 4
    assert [(c["cooldown_id"], c["points"]) for c in series["cooldowns"]] == [("cd-1", 6), ("cd-2", 4)]
    single = call("get_parameter_timeseries", parameter_name="t1", qid="1")
    assert "cooldowns" not in single  # one cycle: nothing to split


def test_tools_filter_by_cooldown(call: Any) -> None:
    first = call("get_parameter_timeseries", parameter_name="t1", qid="0", last_n=50, cooldown_id="cd-1")
    assert _column(first, "value") == [20, 21, 22, 23, 24, 25] and "cooldowns" not in first
    second = call("get_task_history", task_name="CheckT1", qid="0", last_n=50, cooldown_id="cd-2")
    assert _column(second, "t1") == [27, 28, 29, 30]
    chip = call(
        "get_chip_parameter_timeseries", parameter_name="t1", qids=["0"], cooldown_id="cd-1", last_n=50
    )
    assert [p["v"] for p in chip["timeseries"]] == FIRST
    assert (chip["qubits"][0]["trend"], chip["qubits"][0]["count"]) == ("up", 6)


def test_chip_trend_stays_within_the_newest_cooldown(call: Any) -> None:
    chip = call("get_chip_parameter_timeseries", parameter_name="t1", qids=["0", "1"], last_n=50)
    q0 = chip["qubits"][0]
    # 20 → 27 over both cycles would read "up"; within cd-2 it fell from 30 to 27
    assert (q0["trend"], q0["change_pct"], q0["trend_points"], q0["count"]) == ("down", -10, 4, 10)
    assert "trend_points" not in chip["qubits"][1]


def test_an_unknown_cooldown_is_an_empty_result_naming_it(call: Any) -> None:
    result = call("get_parameter_timeseries", parameter_name="t1", qid="0", cooldown_id="cd-9")
    assert result["count"] == 0 and result["filters"]["cooldown_id"] == "cd-9"
