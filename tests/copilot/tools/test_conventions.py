"""The conventions the prompt states hold in what every tool returns (docs/tools.md, "Conventions").

Why: the prompt said "Fidelities are fractions (0.998 = 99.8 %)" while every tool returned them in
% (91.86); a model that takes the prompt at its word reads 91.86 as 9,186 %. The tools are taken
from the registry, so a new tool cannot skip the check: each is called with its required arguments
(or arguments chosen here) and must state a unit, unless it is named as returning no parameter values.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from pymongo.database import Database

from qdash.copilot.prompts import build_chat_instructions, load_task_knowledge
from qdash.copilot.service import CopilotDataService
from qdash.copilot.tools.registry import default_registry
from qdash.copilot.tools.spec import ToolContext
from qdash.settings import Settings, load_settings
from qdash.units import DISPLAY
from tests.support.turn_tools import one_turn

from .catalog.conftest import sample_arguments

SHOWN_TIME = re.compile(r"^(\d{4}-)?\d{2}-\d{2} \d{2}:\d{2}$")
"""``12-05 03:07`` this year, ``2025-12-05 03:07`` another year (docs/tools.md, Conventions)."""
ISO_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}")
QID, TASK, FIDELITY = "16", "ReadoutClassification", "average_readout_fidelity"

VALUES: dict[str, Any] = {
    "qid": QID,
    "qids": [QID, "17"],
    "task_name": TASK,
    "parameter_name": FIDELITY,
    "metric_name": FIDELITY,
}
"""Every tool's required arguments, by name (``sample_arguments``)."""
CHOSEN: dict[str, dict[str, Any]] = {
    "get_task_history": {"task_name": TASK, "qid": QID, "last_n": 2},
    "get_parameter_timeseries": {"parameter_name": FIDELITY, "qid": QID, "last_n": 3},
    "get_chip_summary": {"param_names": [FIDELITY, "anharmonicity"]},
    "get_coupling_params": {"param_names": ["zx90_gate_fidelity"]},
    "get_execution_history": {"execution_id": "<newest>", "compare_to": "<previous>"},
    "compare_qubits": {"qids": [QID, "17"], "param_names": [FIDELITY]},
    "search_task_results": {"task_name": TASK, "last_n": 3},
    "get_parameter_lineage": {"parameter_name": FIDELITY, "qid": QID, "last_n": 2},
    "get_chip_parameter_timeseries": {"parameter_name": FIDELITY, "last_n": 3},
    "get_degradation_report": {"param_names": [FIDELITY, "x90_gate_fidelity"]},
}
"""Calls chosen instead of a tool's required arguments alone: values that carry units, short outputs."""
NO_PARAMETER_VALUES = {
    "execute_python_analysis",  # prints what the code computes from the stored results
    "get_chip_topology",
    "get_calibration_notes",  # the lab's machine notes, in the calibration software's own shape
    "get_provenance_lineage_graph",
    "list_available_parameters",
    "ask_user",
}


def stated_units(prompt: str) -> dict[str, str]:
    """What the prompt says each family is shown in (``fidelities in %`` → {"fidelities": "%"})."""
    return dict(re.findall(r"(\w+) in ([^\s,;.()]+)", prompt))


def family(name: str) -> str | None:
    """The prompt's word for a parameter with a display unit."""
    if name not in DISPLAY:
        return None
    return "anharmonicity" if name == "anharmonicity" else "fidelities"


def units_in(value: Any, found: list[tuple[str, str, Any]]) -> None:
    """Every (parameter, unit, value) an output states, whatever its shape: ``{name: {value, unit}}``,
    ``units: {name: unit}``, ``{parameter_name|metric_name|parameter: name, unit}``, tables with
    ``parameter`` and ``unit`` columns and rules in words."""
    if isinstance(value, str):  # a rule in words: "anharmonicity bad on 22 (MHz; good ≤ -280, …)"
        rules = re.findall(r"(\w+) [^();]*\(([^\s;()]+); ", value)
        found.extend((name, unit, None) for name, unit in rules if name in DISPLAY)
        return
    if isinstance(value, list):
        for item in value:
            units_in(item, found)
        return
    if not isinstance(value, dict):
        return
    for key, item in value.items():
        if key in DISPLAY and isinstance(item, dict) and isinstance(item.get("unit"), str):
            found.append((key, item["unit"], item.get("value")))
    for name, unit in (value.get("units") or {}).items() if isinstance(value.get("units"), dict) else ():
        if name in DISPLAY and isinstance(unit, str):
            found.append((name, unit, None))
    named = next((value[k] for k in ("parameter_name", "metric_name", "parameter") if k in value), None)
    if named in DISPLAY and isinstance(value.get("unit"), str):
        found.append((named, value["unit"], None))
    cols = value.get("cols")
    if isinstance(cols, list) and "parameter" in cols and "unit" in cols:
        at, unit_at = cols.index("parameter"), cols.index("unit")
        found.extend((row[at], row[unit_at], None) for row in value.get("rows", []) if row[at] in DISPLAY)
    for item in value.values():
        units_in(item, found)


def strings_in(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict | list):
        for item in value.values() if isinstance(value, dict) else value:
            yield from strings_in(item)


def keys_in(value: Any, key: str) -> int:
    """How often ``key`` is a key anywhere in ``value``."""
    if isinstance(value, list):
        return sum(keys_in(item, key) for item in value)
    if isinstance(value, dict):
        return (key in value) + sum(keys_in(item, key) for item in value.values())
    return 0


@pytest.fixture
def investigating(settings: Settings) -> Settings:
    return load_settings(database=settings.database.model_dump(), tools={"investigation": True})


def sample_calls(settings: Settings) -> dict[str, dict[str, Any]]:
    """Every registered tool that returns parameter values, with its chosen or derived arguments."""
    return {
        spec.name: CHOSEN[spec.name] if spec.name in CHOSEN else sample_arguments(spec, VALUES)
        for spec in default_registry(settings)
        if spec.name not in NO_PARAMETER_VALUES
    }


async def _model_views(db: Database[dict[str, Any]], settings: Settings) -> dict[str, Any]:
    service = CopilotDataService(ToolContext(db, "proj-demo", "alice", settings))
    tools = one_turn(service, chat=True)
    listed = json.loads((await tools["get_execution_history"]({"last_n": 50})).model_text)
    daily = [row[0] for row in listed["rows"] if row[listed["cols"].index("name")] == "1Q-Calibration"]
    ids = {"<newest>": daily[0], "<previous>": daily[1]}
    views: dict[str, Any] = {}
    for name, args in sample_calls(settings).items():
        out = await tools[name]({key: ids.get(v, v) if isinstance(v, str) else v for key, v in args.items()})
        assert not out.is_error, (name, out.model_text)
        views[name] = json.loads(out.model_text)
    return views


def test_every_registered_tool_is_checked(investigating: Settings) -> None:
    names = set(default_registry(investigating).names)
    assert set(sample_calls(investigating)) == names - NO_PARAMETER_VALUES
    assert set(CHOSEN) | NO_PARAMETER_VALUES <= names  # no stale entries


async def test_the_prompt_states_the_units_every_tool_returns(
    small_lab: Database[dict[str, Any]], investigating: Settings
) -> None:
    stated = stated_units(build_chat_instructions(investigating))
    assert {"fidelities", "anharmonicity"} <= set(stated), stated
    calls = sample_calls(investigating)
    for name, view in (await _model_views(small_lab, investigating)).items():
        found: list[tuple[str, str, Any]] = []
        units_in(view, found)
        named = calls[name].get("metric_name")  # the heatmap does not echo its argument
        if named and isinstance(view.get("unit"), str):
            found.append((named, view["unit"], None))
        assert found, f"{name} states no unit of a fidelity or anharmonicity"
        for parameter, unit, value in found:
            assert unit == stated[str(family(parameter))], (name, parameter, unit, stated)
            if family(parameter) == "fidelities" and isinstance(value, int | float):
                assert 1 < value <= 100, (name, parameter, value)  # a percentage, not a fraction


def test_task_knowledge_quotes_values_in_the_stated_units(settings: Settings) -> None:
    """The packaged knowledge is read beside the tools' numbers: "≥ 0.95" next to 95.83 % misleads."""
    stated = stated_units(build_chat_instructions(settings))
    for task, entry in load_task_knowledge(settings.config_dir).items():
        quoted = re.findall(r"(\w+) [≥≤<>]? ?(-?[\d.]+)(?: to -?[\d.]+)? ?(%|\w+)?", entry.good)
        for name, number, unit in quoted:
            if family(name) is not None:
                assert unit == stated[str(family(name))], (task, name, number, unit)


async def test_times_are_shown_one_way_with_their_zone_once_per_output(
    small_lab: Database[dict[str, Any]], investigating: Settings
) -> None:
    zone = investigating.copilot.timezone
    with_times = 0
    for name, view in (await _model_views(small_lab, investigating)).items():
        texts = list(strings_in(view))
        assert not [text for text in texts if ISO_TIME.match(text)], name
        if any(SHOWN_TIME.match(text) for text in texts):
            with_times += 1
            assert view.get("timezone") == zone and keys_in(view, "timezone") == 1, (name, view)
    assert with_times >= 5
