"""Whole-chip tools on the demo lab: summary, topology, chip-wide time series."""

from __future__ import annotations

import json
import statistics
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from qdash.copilot.tools.catalog.formatting import sig4
from qdash.copilot.tools.spec import ToolContext

from .conftest import DEMO, OTHER, Call, completed_runs, run_tool


def test_chip_summary_statistics_are_computed_from_the_current_values(call: Call, demo_lab: Any) -> None:
    result = call("get_chip_summary", param_names=["t1", "x90_gate_fidelity"])
    assert (result["chip_id"], result["num_qubits"]) == ("64Qv3", 64)
    assert [row["qid"] for row in result["qubits"]] == [str(q) for q in range(64)]
    assert all(set(row) == {"qid", "t1", "x90_gate_fidelity"} for row in result["qubits"])
    docs = demo_lab.db.qubit.find({"project_id": DEMO, "chip_id": "64Qv3"})
    t1 = [d["data"]["t1"]["value"] for d in docs if "t1" in d.get("data", {})]
    stats = result["statistics"]["t1"]
    assert stats["unit"] == "μs"
    assert stats["count"] == len(t1)
    assert stats["mean"] == sig4(statistics.fmean(t1))
    assert stats["median"] == sig4(statistics.median(t1))
    assert stats["min"][1] == sig4(min(t1))
    assert result["statistics"]["x90_gate_fidelity"]["unit"] == "%"
    assert 90 < result["statistics"]["x90_gate_fidelity"]["max"][1] <= 99.95


def test_chip_summary_errors_for_a_chip_of_another_project(error: Callable[..., str]) -> None:
    assert error("get_chip_summary", project=OTHER, chip_id="144Qv2") == (
        "Chip 144Qv2 not found; chips of this project: 64Qv3"
    )


def test_topology_of_the_64_qubit_chip(call: Call, error: Callable[..., str]) -> None:
    result = call("get_chip_topology")
    assert (result["topology_id"], result["num_qubits"], result["grid_size"]) == (
        "square-lattice-mux-64",
        64,
        8,
    )
    assert len(result["couplings"]) == 112
    assert result["qubit_positions"]["4"] == [0, 2]
    assert result["mux"] == {"enabled": True, "size": 2}
    assert result["direction_convention"] == "checkerboard_cr"
    assert (
        error("get_chip_topology", chip_id="NOPE")
        == "Chip NOPE not found; chips of this project: 64Qv3, 144Qv2"
    )


def _completed_counts(db: Any, project: str, parameter: str) -> dict[str, int]:
    return dict(Counter(doc["qid"] for doc in completed_runs(db, parameter, project)))


def test_chip_timeseries_gives_every_qubit_its_points(call: Call, demo_lab: Any) -> None:
    last_n = 4
    result = call("get_chip_parameter_timeseries", parameter_name="t1", last_n=last_n)
    counts = _completed_counts(demo_lab.db, DEMO, "t1")
    assert result["num_qubits"] == len(counts) == 64
    assert {row["qid"]: row["count"] for row in result["qubits"]} == {
        q: min(last_n, n) for q, n in counts.items()
    }
    times = [point["t"] for point in result["timeseries"]]
    assert times == sorted(times) and "T" in times[0]
    assert len(result["timeseries"]) == sum(row["count"] for row in result["qubits"])
    assert result["unit"] == "μs"
    assert sum(result["trend_counts"].values()) == 64
    assert result["statistics"]["count"] == 64
    lowest = result["extremes"]["lowest"]
    assert len(lowest) == 5 and lowest[0][1] == sig4(min(row["latest"] for row in result["qubits"]))


def test_degrading_qubit_trends_down(call: Call, demo_lab: Any) -> None:
    qid = demo_lab.report.chip(DEMO, "64Qv3").t1_degrading_qubit
    result = call("get_chip_parameter_timeseries", parameter_name="t1", qids=[f"Q{qid}"], last_n=10)
    (row,) = result["qubits"]
    assert row["trend"] == "down" and row["change_pct"] < -20


def _named(notable: dict[str, Any], section: str) -> list[str]:
    return [row[0] for row in notable[section]["rows"]]


def test_notable_view_names_the_changed_qubits_and_few_others(call: Call, demo_lab: Any) -> None:
    """The degrading qubit is a trend, the TLS qubit a dip, and the view names a handful of the 64."""
    chip = demo_lab.report.chip(DEMO, "64Qv3")
    result = call("get_chip_parameter_timeseries", parameter_name="t1", last_n=100, notable=True)
    notable = result["notable"]
    fields = {"chip_id", "parameter_name", "unit", "num_qubits", "window", "notable", "timeseries"}
    assert set(result) == fields
    assert (result["num_qubits"], result["unit"]) == (64, "μs")
    trend = dict(zip(notable["trends"]["cols"], notable["trends"]["rows"][0], strict=True))
    assert trend["qid"] == chip.t1_degrading_qubit and trend["change_pct"] < -40 and trend["per_day"] < 0
    dip = dict(zip(notable["dips"]["cols"], notable["dips"]["rows"][0], strict=True))
    assert dip["qid"] == chip.tls_qubit and dip["depth_pct"] > 50
    assert dip["from_at"][:10].replace("-", "") == chip.tls_days[0]
    named = {qid for section in ("trends", "dips", "shifts", "apart") for qid in _named(notable, section)}
    assert len(named) <= 4, named
    assert len(result["timeseries"]) > 64 * 5  # the points it read stay in the store for the sandbox


def test_notable_view_sets_the_bad_qubits_apart_on_fidelity(call: Call, demo_lab: Any) -> None:
    chip = demo_lab.report.chip(DEMO, "64Qv3")
    result = call(
        "get_chip_parameter_timeseries", parameter_name="x90_gate_fidelity", last_n=100, notable=True
    )
    apart = result["notable"]["apart"]
    assert set(_named(result["notable"], "apart")) == set(chip.bad_qubits)
    assert all(row[3] <= -5 for row in apart["rows"])  # z: far below the chip, not above


def test_notable_view_of_a_quiet_series_lists_nobody(call: Call) -> None:
    result = call("get_chip_parameter_timeseries", parameter_name="qubit_frequency", last_n=100, notable=True)
    assert all(not result["notable"][s]["rows"] for s in ("trends", "dips", "shifts")), result["notable"]


def _anharmonicity_run(qid: str, day: int, value: float) -> dict[str, Any]:
    start = datetime(2026, 3, day, 1, tzinfo=UTC)
    return {
        "project_id": DEMO,
        "chip_id": "X1",
        "task_id": f"t-{qid}-{day}",
        "name": "CheckQubitSpectroscopy",
        "status": "completed",
        "qid": qid,
        "execution_id": f"202603{day:02d}-001",
        "start_at": start,
        "output_parameters": {"anharmonicity": {"value": value, "unit": "GHz", "calibrated_at": start}},
        "output_parameter_names": ["anharmonicity"],
    }


def test_negative_quantity_trend_follows_the_sign_of_the_change(mongo_db: Any, settings: Any) -> None:
    """-0.30 → -0.33 GHz is a 10 % decrease ("down"); upstream divided by the signed oldest value."""
    series = {"0": [-0.30, -0.31, -0.33], "1": [-0.33, -0.32, -0.30], "2": [-0.300, -0.301, -0.302]}
    mongo_db.task_result_history.insert_many(
        [
            _anharmonicity_run(qid, day + 1, v)
            for qid, values in series.items()
            for day, v in enumerate(values)
        ]
    )
    mongo_db.qubit.insert_many(
        [
            {"project_id": DEMO, "chip_id": "X1", "qid": q, "data": {"anharmonicity": {"value": -0.3}}}
            for q in series
        ]
    )
    ctx = ToolContext(db=mongo_db, project_id=DEMO, username="alice", settings=settings)
    result = run_tool(
        ctx, "get_chip_parameter_timeseries", {"chip_id": "X1", "parameter_name": "anharmonicity"}
    )
    rows = {row["qid"]: (row["trend"], row["change_pct"], row["latest"]) for row in result["qubits"]}
    rows = {qid: (trend, pct, sig4(latest)) for qid, (trend, pct, latest) in rows.items()}  # in MHz
    assert rows == {"0": ("down", -10.0, -330), "1": ("up", 9.091, -300), "2": ("stable", -0.6667, -302)}
    assert result["trend_counts"] == {"up": 1, "down": 1, "stable": 1}
    assert result["extremes"]["lowest"][0] == ["0", -330]


def test_chip_timeseries_is_scoped_by_project(call: Call, demo_lab: Any) -> None:
    result = call(
        "get_chip_parameter_timeseries", project=OTHER, chip_id="64Qv3", parameter_name="t1", last_n=100
    )
    assert {row["qid"]: row["count"] for row in result["qubits"]} == _completed_counts(
        demo_lab.db, OTHER, "t1"
    )


def test_144_qubits_by_30_runs_reach_the_model_as_a_table_in_under_2600_tokens(
    mongo_db: Any, settings: Any
) -> None:
    """The stored result is summarised for the model, which still sees
    every qubit's latest value and change; every qubit keeps 30 points in the store."""
    import bpe_openai

    from qdash.copilot.tools.wrappers.compaction import compact
    from qdash.copilot.tools.wrappers.data_store import summarise

    runs = [
        {**_anharmonicity_run(str(q), day, -0.3 - q * 1e-4 - day * 1e-5), "task_id": f"{q}-{day}"}
        for q in range(144)
        for day in range(1, 31)
    ]
    mongo_db.task_result_history.insert_many(runs)
    mongo_db.qubit.insert_many(
        [
            {"project_id": DEMO, "chip_id": "X1", "qid": str(q), "data": {"anharmonicity": {}}}
            for q in range(144)
        ]
    )
    ctx = ToolContext(db=mongo_db, project_id=DEMO, username="alice", settings=settings)
    args = {"chip_id": "X1", "parameter_name": "anharmonicity", "last_n": 30}
    result = run_tool(ctx, "get_chip_parameter_timeseries", args)
    assert {row["count"] for row in result["qubits"]} == {30} and len(result["qubits"]) == 144
    assert len(result["timeseries"]) == 144 * 30
    assert result["trend_counts"] == {"up": 0, "down": 0, "stable": 144}
    view = compact(summarise(result, "anharmonicity", ["anharmonicity"]))
    assert view["table"]["cols"] == ["qid", "latest", "change_pct"] and len(view["table"]["rows"]) == 144
    assert view["table"]["rows"][143] == [
        "143",
        sig4((-0.3 - 143e-4 - 30e-5) * 1000),  # MHz
        round(-29e-5 / (0.3 + 143e-4 + 1e-5) * 100, 1),
    ]
    text = json.dumps(view, ensure_ascii=False, separators=(",", ":"))
    tokens = len(bpe_openai.get_encoding("o200k_base").encode(text))
    assert tokens <= 2600, tokens


def test_the_window_says_what_each_view_measured(call: Call, demo_lab: Any) -> None:
    """Changes and trends never span a cool-down: the window says so when the points do."""
    wide = call("get_chip_parameter_timeseries", parameter_name="t1", last_n=100)
    assert wide["window"]["changes"] == "within each qubit's newest cool-down"
    notable = call("get_chip_parameter_timeseries", parameter_name="t1", last_n=100, notable=True)
    assert notable["window"]["points"] == "each qubit's newest cool-down, of its newest 100 values"
    assert notable["window"]["from"] > wide["window"]["from"]
