"""The chip's cool-downs (``get_execution_history`` ``cooldowns``) and a parameter per cool-down
(``get_chip_parameter_timeseries`` ``cooldowns``), checked against the demo lab's raw documents and
against upstream-shaped rows without execution documents (excluded runs, another project)."""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from datetime import timedelta
from typing import Any

import pytest
from bson import ObjectId

from qdash.repositories.cooldowns import PAGE, chip_cooldowns, newest_executions
from qdash.repositories.scope import ProjectScope
from qdash.settings import Settings

from .conftest import DEMO, OTHER, Call
from .upstream_rows import CHIP, PROJECT, START, chip_doc, excluded, qubit_doc, tool_caller, upstream_run


def _table(section: dict[str, Any]) -> list[dict[str, Any]]:
    return [dict(zip(section["cols"], row, strict=True)) for row in section["rows"]]


def _runs_per_cooldown(demo_lab: Any, query: dict[str, Any] | None = None) -> dict[str, list[dict[str, Any]]]:
    """The demo chip's runs per cool-down in start order, cool-downs by their first run."""
    found: dict[str, list[dict[str, Any]]] = defaultdict(list)
    wanted = {"project_id": DEMO, "chip_id": "64Qv3", **(query or {})}
    for run in demo_lab.db.task_result_history.find(wanted).sort("start_at", 1):
        found[run["cooldown_id"]].append(run)
    return dict(found)


def test_the_cooldowns_of_the_chip_with_their_executions(call: Call, demo_lab: Any) -> None:
    runs = _runs_per_cooldown(demo_lab)
    result = call("get_execution_history", cooldowns=True)
    rows = _table(result["cooldowns"])
    assert [row["cooldown_id"] for row in rows] == list(runs) and len(runs) == 2 == result["count"]
    for row in rows:
        executions = {run["execution_id"] for run in runs[row["cooldown_id"]]}
        assert row["executions"] == len(executions)
        statuses = [
            doc["status"]
            for doc in demo_lab.db.execution_history.find(
                {"project_id": DEMO, "execution_id": {"$in": list(executions)}}
            )
        ]
        assert row["failed"] == statuses.count("failed")
    assert rows[0]["from"] < rows[0]["to"] < rows[1]["from"] < rows[1]["to"]


def test_the_listing_reads_a_few_executions_not_all(
    call: Call, demo_lab: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Point reads and counts: the documents read grow with the cool-downs (and the log of the
    executions between their changes), not with every execution the chip ran."""
    read: list[str] = []
    find = ProjectScope.find

    def counting(scope: ProjectScope, collection: str, *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        found = find(scope, collection, *args, **kwargs)
        read.extend(collection for _ in found)
        return found

    monkeypatch.setattr(ProjectScope, "find", counting)
    result = call("get_execution_history", cooldowns=True)
    executions = sum(row[3] for row in result["cooldowns"]["rows"])
    chip = {"project_id": DEMO, "chip_id": "64Qv3"}
    assert executions == demo_lab.db.execution_history.count_documents(chip)
    assert 0 < read.count("execution_history") <= 20 < executions
    assert read.count("task_result_history") == read.count("execution_history")  # one run per execution


def _execution(minute: int, status: str = "completed") -> dict[str, Any]:
    start = START + timedelta(minutes=minute)
    return {
        "_id": ObjectId(),
        "project_id": PROJECT,
        "chip_id": CHIP,
        "execution_id": f"20260301-{minute:03d}",
        "name": "1Q-Calibration",
        "status": status,
        "start_at": start,
        "end_at": start + timedelta(minutes=5),
    }


def test_executions_without_runs_count_where_they_started(mongo_db: Any, settings: Settings) -> None:
    """An execution without runs inside a cool-down's span ran in it (counted, failed here); one
    between two cool-downs, or after the last run, is in none."""
    with_runs = {0: "cd-1", 10: "cd-1", 30: "cd-1", 50: "cd-2", 60: "cd-2"}
    statuses = {20: "failed", 50: "failed"}
    mongo_db.execution_history.insert_many(
        [_execution(m, statuses.get(m, "completed")) for m in (0, 10, 20, 30, 40, 50, 60, 70)]
    )
    mongo_db.task_result_history.insert_many(
        [upstream_run(qid, m, 20.0, cooldown_id=c) for m, c in with_runs.items() for qid in ("0", "1")]
    )
    mongo_db.chip.insert_one(chip_doc())
    listed = tool_caller(mongo_db, settings)("get_execution_history", cooldowns=True)
    rows = [[row[0], row[1][-11:], row[2][-11:], *row[3:]] for row in listed["cooldowns"]["rows"]]
    assert rows == [
        ["cd-1", "03-01 00:00", "03-01 00:35", 4, 1],
        ["cd-2", "03-01 00:50", "03-01 01:05", 2, 1],
    ]


def test_a_cooldowns_executions_newest_first_page_by_page(mongo_db: Any) -> None:
    """More executions than two pages, the last of the first page starting at the same instant as
    another: each comes once, newest first."""
    minutes = list(range(2 * PAGE + 5))
    shared = minutes[-PAGE]  # the first page's oldest
    tie = {**_execution(shared), "_id": ObjectId(), "execution_id": "20260301-tie"}
    mongo_db.execution_history.insert_many([*map(_execution, minutes), tie])
    runs = [upstream_run("0", m, 20.0, cooldown_id="cd-1") for m in minutes]
    mongo_db.task_result_history.insert_many(runs)
    scope = ProjectScope(mongo_db, PROJECT)
    [cooldown] = chip_cooldowns(scope, CHIP)
    assert (cooldown.cooldown_id, cooldown.executions) == ("cd-1", len(minutes) + 1)
    ids = [e["execution_id"] for e in newest_executions(scope, CHIP, cooldown)]
    expected = [f"20260301-{m:03d}" for m in reversed(minutes)]
    assert [i for i in ids if i != "20260301-tie"] == expected
    assert sorted(ids) == sorted([*expected, "20260301-tie"])
    assert abs(ids.index("20260301-tie") - ids.index(f"20260301-{shared:03d}")) == 1


def test_the_other_project_has_its_own_single_cooldown(call: Call, demo_lab: Any) -> None:
    ids = demo_lab.db.task_result_history.distinct("cooldown_id", {"project_id": OTHER})
    result = call("get_execution_history", project=OTHER, cooldowns=True)
    assert [row[0] for row in result["cooldowns"]["rows"]] == ids and len(ids) == 1


def _medians(runs: list[dict[str, Any]], last_n: int) -> dict[str, float]:
    """Each qubit's median of its newest ``last_n`` completed T1 values (``runs`` in start order)."""
    per_qubit: dict[str, list[float]] = defaultdict(list)
    for run in reversed(runs):
        if len(per_qubit[run["qid"]]) < last_n:
            per_qubit[run["qid"]].append(run["output_parameters"]["t1"]["value"])
    return {qid: statistics.median(values) for qid, values in per_qubit.items()}


@pytest.mark.parametrize("last_n", [1, 10])
def test_the_chip_median_per_cooldown(call: Call, demo_lab: Any, last_n: int) -> None:
    runs = _runs_per_cooldown(demo_lab, {"status": "completed", "output_parameter_names": "t1"})
    result = call("get_chip_parameter_timeseries", parameter_name="t1", cooldowns=True, last_n=last_n)
    assert result["unit"] == "μs" and "newest" in result["per_cooldown"]
    rows = _table(result["cooldowns"])
    assert [row["cooldown_id"] for row in rows] == list(runs)
    for row in rows:
        medians = _medians(runs[row["cooldown_id"]], last_n)
        assert row["qubits"] == len(medians) > 50
        assert row["median"] == pytest.approx(statistics.median(medians.values()), rel=5e-4)
        low, high = min(medians, key=medians.__getitem__), max(medians, key=medians.__getitem__)
        assert [row["min"][0], row["max"][0]] == [low, high]  # the extremes are named
        assert (row["min"][1], row["max"][1]) == pytest.approx((medians[low], medians[high]), rel=5e-4)


def test_one_qubit_per_cooldown_in_the_display_unit(call: Call, demo_lab: Any) -> None:
    runs = _runs_per_cooldown(demo_lab, {"status": "completed", "qid": "3", "output_parameter_names": "t1"})
    result = call("get_chip_parameter_timeseries", parameter_name="t1", qids=["Q03"], cooldowns=True)
    assert result["cooldowns"]["cols"] == ["cooldown_id", "from", "to", "3", "values"]
    shown = [row[-2] for row in result["cooldowns"]["rows"]]
    assert shown == pytest.approx([_medians(r, 10)["3"] for r in runs.values()], rel=5e-4)
    fidelity = call(
        "get_chip_parameter_timeseries", parameter_name="x90_gate_fidelity", qids=["3"], cooldowns=True
    )
    assert fidelity["unit"] == "%" and all(90 < row[-2] <= 100 for row in fidelity["cooldowns"]["rows"])


@pytest.fixture
def upstream(mongo_db: Any, settings: Settings) -> Any:
    """Upstream rows without execution documents: qubit 0 in cd-1 then cd-2 (one run excluded),
    qubit 1 only in cd-2, and a row of another project in a cool-down of its own."""
    runs = [upstream_run("0", m, 20.0 + m, cooldown_id="cd-1") for m in range(3)]
    runs += [upstream_run("0", 10 + m, v, cooldown_id="cd-2") for m, v in enumerate([30.0, 40.0, 50.0])]
    runs += [upstream_run("1", 20, 60.0, cooldown_id="cd-2")]
    runs[-2] = excluded(runs[-2])  # qubit 0's 50.0
    mongo_db.task_result_history.insert_many(
        [*runs, {**upstream_run("0", 30, 9.0), "project_id": "x", "cooldown_id": "cd-x"}]
    )
    mongo_db.chip.insert_one(chip_doc())
    mongo_db.qubit.insert_many(
        [qubit_doc("0", {"t1": {"value": 40.0}}), qubit_doc("1", {"t1": {"value": 60.0}})]
    )
    return tool_caller(mongo_db, settings)


def test_cooldowns_of_imported_rows_without_executions(upstream: Any) -> None:
    listed = upstream("get_execution_history", cooldowns=True)
    assert listed["cooldowns"]["cols"] == ["cooldown_id", "from", "to", "executions"]  # no status known
    assert [(row[0], row[3]) for row in listed["cooldowns"]["rows"]] == [("cd-1", 3), ("cd-2", 4)]
    values = upstream("get_chip_parameter_timeseries", parameter_name="t1", cooldowns=True)
    rows = _table(values["cooldowns"])
    # cd-2: qubit 0's median of 30 and 40 (50 excluded), qubit 1's 60 → the chip's median 47.5
    assert [(r["cooldown_id"], r["qubits"], r["median"]) for r in rows] == [
        ("cd-1", 1, 21),
        ("cd-2", 2, 47.5),
    ]
    assert values["excluded"] == 1


def test_a_chip_without_the_parameter_is_an_empty_result(call: Call) -> None:
    result = call("get_chip_parameter_timeseries", parameter_name="t1", qids=["9999"], cooldowns=True)
    assert result["count"] == 0 and result["filters"]["cooldowns"] is True


def test_each_median_states_its_sample_and_the_default_it_applied(call: Call, demo_lab: Any) -> None:
    """ "median of 22 values", and "newest 10 (default)" when the call did not choose 10."""
    runs = _runs_per_cooldown(demo_lab, {"status": "completed", "output_parameter_names": "t1"})
    chosen = call("get_chip_parameter_timeseries", parameter_name="t1", cooldowns=True, last_n=2)
    assert "newest 2 values" in chosen["per_cooldown"] and "default" not in chosen["per_cooldown"]
    default = call("get_chip_parameter_timeseries", parameter_name="t1", cooldowns=True)
    assert "newest 10 values (default last_n)" in default["per_cooldown"]
    for row in _table(chosen["cooldowns"]):
        per_qid = Counter(run["qid"] for run in runs[row["cooldown_id"]])
        assert row["values"] == sum(min(2, n) for n in per_qid.values())
    one = call(
        "get_chip_parameter_timeseries", parameter_name="t1", qids=["3", "5"], cooldowns=True, last_n=3
    )
    assert one["cooldowns"]["cols"] == ["cooldown_id", "from", "to", "3", "5", "values"]
    for row in _table(one["cooldowns"]):
        per_qid = Counter(run["qid"] for run in runs[row["cooldown_id"]] if run["qid"] in ("3", "5"))
        assert row["values"] == [min(3, per_qid["3"]), min(3, per_qid["5"])]
