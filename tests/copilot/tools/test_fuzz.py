"""Property-based fuzzing of every tool's arguments (built-in and config-declared) on the demo lab.

Arguments are drawn from each tool's own strict schema — plausible identifiers, enum values, bounds ±
a few, nulls — plus wrong types, missing and extra keys. Whatever arrives, the executor must return
JSON under the size cap, and every failure must be a structured error: a ``ToolError`` or a
validation message, never an exception that escaped an implementation (those carry FAILURE_HINT).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from pymongo.database import Database

from qdash.copilot.service import CopilotDataService
from qdash.copilot.tools.catalog import SPECS
from qdash.copilot.tools.executor import FAILURE_HINT
from qdash.copilot.tools.registry import default_registry
from qdash.copilot.tools.spec import ToolContext
from qdash.settings import Settings, load_settings

from .test_schema import CUSTOM

EXAMPLES_PER_TOOL = 10
WORDS = [
    "16", "Q16", "0", "Q00", "qubit 5", "63", "143", "999", "16-22", "Q16-Q22", "0-1", "64Qv3", "144Qv2",
    "t1", "t2_echo", "qubit_frequency", "x90_gate_fidelity", "anharmonicity", "CheckT1", "checkrabi",
    "CheckQubitFrequency", "completed", "failed", "20261023-001", "t1:16:20261023-001:x", "a:b", "", " ",
    "nope", "Q-1", "💥",
]  # fmt: skip
CODE = ["print(1)", "print(sorted(data))", "import os", "result = {'output': 'x', 'chart': None}", "1/0"]
QIDS = ["16", "Q16", "0", "Q00", "qubit 5", "63", "999"]
PARAMS = ["t1", "t2_echo", "qubit_frequency", "x90_gate_fidelity", "anharmonicity", "nope"]
VOCABULARY = {
    "qid": QIDS, "qids": QIDS, "qubit_id": QIDS,
    "coupling_id": ["16-22", "Q16-Q22", "0-1", "1-0", "99-98"],
    "chip_id": ["64Qv3", "144Qv2", "nope"],
    "task_name": ["CheckT1", "checkrabi", "CheckQubitFrequency", "CheckT2Echo", "NoSuchTask"],
    "parameter_name": PARAMS, "param_names": PARAMS,
    "execution_id": ["20261023-001", "nope"], "tags": ["daily", "nope"], "code": CODE,
}  # fmt: skip


@pytest.fixture(scope="module")
def lab(small_lab: Database[dict[str, Any]]) -> tuple[Database[dict[str, Any]], Settings]:
    return small_lab, load_settings(
        database={"mongo_uri": None}, tools={"custom": CUSTOM, "investigation": True}
    )


def _plausible(schema: dict[str, Any], name: str, nullable: bool) -> st.SearchStrategy[Any]:
    """Values a model could well send: ids in any spelling, enum values, integers near the bounds."""
    kinds = schema.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    options: list[st.SearchStrategy[Any]] = [st.none()] if nullable else []
    for branch in schema.get("anyOf", []):
        if branch != {"type": "null"}:
            options.append(_plausible(branch, name, False))
    if "enum" in schema:
        options.append(st.sampled_from([v for v in schema["enum"] if v is not None]))
    elif "string" in kinds:
        options.append(st.sampled_from(VOCABULARY.get(name, WORDS)))
    if "integer" in kinds:
        options.append(st.integers(schema.get("minimum", 0) - 2, schema.get("maximum", 100) + 2))
    if "array" in kinds:
        options.append(st.lists(_plausible(schema.get("items", {"type": "string"}), name, False), max_size=5))
    return st.one_of(options)


def _wild(schema: dict[str, Any], name: str) -> st.SearchStrategy[Any]:
    """Anything: wrong types, huge numbers, random text."""
    junk = st.sampled_from([True, {"x": 1}, [None], 1e308, "5", 2.5, -(10**12)])
    return st.one_of(_plausible(schema, name, True), st.text(max_size=70), junk)


def _arguments(parameters: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    props = parameters["properties"]
    nullable = {
        n: "null" in str(p.get("type")) or {"type": "null"} in p.get("anyOf", []) for n, p in props.items()
    }
    plausible = st.fixed_dictionaries({n: _plausible(p, n, nullable[n]) for n, p in props.items()})
    wild = st.fixed_dictionaries({n: _wild(p, n) for n, p in props.items()})
    dropped = st.sets(st.sampled_from(sorted(props)), max_size=2) if props else st.just(set())
    extra = st.dictionaries(
        st.sampled_from(["project_id", "foo"]), st.sampled_from(["proj-other", 1]), max_size=1
    )
    mangled = st.builds(
        lambda f, d, e: {**{k: v for k, v in f.items() if k not in d}, **e}, wild, dropped, extra
    )
    return st.one_of(plausible, plausible, mangled)


class _Sandbox:
    """A stand-in for the sandbox pool: echoes the data keys (the real one has its own test suite)."""

    class _Reply:
        def __init__(self, output: str) -> None:
            self.output = output

        def to_dict(self) -> dict[str, Any]:
            return {"output": self.output, "error": None, "chart": None}

    async def run(self, code: str, data: dict[str, Any] | None = None) -> _Reply:
        return self._Reply(f"{len(code)} chars over {sorted(data or {})}")


def _check(name: str, text: str, is_error: bool, cap: int) -> None:
    body = json.loads(text)
    assert isinstance(body, dict), (name, text[:200])
    assert len(text) <= cap, (name, len(text))
    assert "Traceback" not in text
    if is_error:
        assert isinstance(body.get("error"), str) and body["error"], (name, body)
        assert body.get("hint") != FAILURE_HINT, f"{name}: an implementation raised: {body['error']}"


@pytest.mark.slow
@pytest.mark.parametrize("name", [spec.name for spec in SPECS] + list(CUSTOM))
def test_fuzz_every_tool(name: str, lab: tuple[Database[dict[str, Any]], Settings]) -> None:
    db, settings = lab
    parameters = default_registry(settings).parameters(name)
    service = CopilotDataService(ToolContext(db, "proj-demo", "alice", settings, sandbox=_Sandbox()))
    loop = asyncio.new_event_loop()

    @hsettings(
        max_examples=EXAMPLES_PER_TOOL, deadline=None, database=None, derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )  # fmt: skip
    @given(_arguments(parameters))
    def run(arguments: dict[str, Any]) -> None:
        output = loop.run_until_complete(service.call(name, arguments))  # a fresh turn
        _check(name, output.model_text, output.is_error, settings.tools.max_result_chars)

    try:
        run()
    finally:
        loop.close()
