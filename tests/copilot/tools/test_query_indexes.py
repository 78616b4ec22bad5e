"""Every query the catalogue tools issue is served by an index of ``qdash.db.indexes.INDEXES``, and on
the embedded store by the maps its start-up warm-up builds (``qdash.db.warmup.WARM_QUERIES``).

The tools run on the demo lab through a recording proxy of the pymongo ``Database``; each recorded
query shape (collection, equality fields, sort) must have an index whose prefix is the equality fields
followed by the sort (MongoDB's no-blocking-sort shape), or be a bounded lookup: ``_id`` point reads,
or an index whose equality-matched prefix contains a per-run key (at most one execution's documents
are then filtered and sorted in memory).
At lab scale (365 days × 144 qubits) anything else is a collection scan or an in-memory sort.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import astuple, dataclass
from datetime import UTC, datetime
from typing import Any

import pytest

from qdash.copilot.tools.catalog import SPECS
from qdash.copilot.tools.spec import ToolContext
from qdash.db import close_database, open_database
from qdash.db.indexes import INDEXES, ensure_indexes, find_index
from qdash.db.store import EmbeddedCollectionStore
from qdash.db.warmup import WARM, WarmMaps, warm_up
from qdash.demo import DemoSpec, seed_demo
from qdash.settings import DatabaseSettings, Settings

from .catalog.conftest import DEMO, DEMO_VALUES, OTHER, run_tool, sample_arguments

NARROW_KEYS = {"execution_id", "task_id", "entity_id", "activity_id", "relation_id", "source_id", "target_id"}
EQUALITY_OPERATORS = {"$eq", "$in", "$all"}


@dataclass(frozen=True)
class Shape:
    collection: str
    equality: frozenset[str]
    sort: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.collection}: {sorted(self.equality)} sort {list(self.sort)}"


def _shape(collection: str, query: Mapping[str, Any], sort: Any = None) -> Shape:
    equality = set()
    for key, value in query.items():
        operators = set(value) if isinstance(value, Mapping) else set()
        if not any(op.startswith("$") for op in operators) or operators <= EQUALITY_OPERATORS:
            equality.add(key)
    return Shape(collection, frozenset(equality), tuple(name for name, _ in sort or ()))


class RecordingCollection:
    """Passes calls through to the real collection and records each query's shape."""

    def __init__(self, inner: Any, name: str, log: list[Shape]) -> None:
        self._inner, self._name, self._log = inner, name, log

    def find(self, query: Mapping[str, Any] | None = None, *args: Any, **kwargs: Any) -> Any:
        self._log.append(_shape(self._name, query or {}, kwargs.get("sort")))
        return self._inner.find(query, *args, **kwargs)

    def find_one(self, query: Mapping[str, Any] | None = None, *args: Any, **kwargs: Any) -> Any:
        self._log.append(_shape(self._name, query or {}, kwargs.get("sort")))
        return self._inner.find_one(query, *args, **kwargs)

    def count_documents(self, query: Mapping[str, Any], *args: Any, **kwargs: Any) -> Any:
        self._log.append(_shape(self._name, query))
        return self._inner.count_documents(query, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(f"catalogue code called Collection.{name}; record it in this proxy first")


class RecordingDatabase:
    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.log: list[Shape] = []

    def __getitem__(self, name: str) -> RecordingCollection:
        return RecordingCollection(self._inner[name], name, self.log)


def served(shape: Shape) -> bool:
    """Whether an index of ``INDEXES`` serves the shape (see the module docstring)."""
    if "_id" in shape.equality:
        return True
    if find_index(shape.collection, shape.equality, shape.sort) is not None:
        return True
    return any(
        NARROW_KEYS & set(_equality_prefix(spec.fields, shape)) for spec in INDEXES.get(shape.collection, [])
    )


def _equality_prefix(fields: tuple[str, ...], shape: Shape) -> tuple[str, ...]:
    prefix: list[str] = []
    for name in fields:
        if name not in shape.equality:
            break
        prefix.append(name)
    return tuple(prefix)


CALLS: list[tuple[str, str, dict[str, Any]]] = [
    ("get_latest_task_result", DEMO, {"task_name": "CheckCrossResonance", "qid": "1-0"}),
    ("get_chip_summary", DEMO, {"param_names": ["t1"]}),
    ("get_coupling_params", DEMO, {"coupling_id": "1-0"}),
    ("get_coupling_params", DEMO, {"qubit_id": "5"}),
    ("get_coupling_params", DEMO, {"param_names": ["zx90_gate_fidelity"]}),
    ("get_execution_history", DEMO, {"status": "completed"}),
    ("get_execution_history", DEMO, {"tags": ["1Q"]}),
    ("search_task_results", DEMO, {"status": "failed"}),
    ("search_task_results", DEMO, {"qid": "3"}),
    ("search_task_results", DEMO, {"task_name": "CheckT1", "qid": "3", "status": "completed"}),
    ("search_task_results", DEMO, {"task_name": "CheckT1", "qid": "3"}),
    ("search_task_results", DEMO, {"execution_id": "X", "task_name": "CheckT1"}),
    ("search_task_results", DEMO, {"task_name": "CheckT1"}),
    ("search_task_results", DEMO, {"task_name": "CheckT1", "status": "failed"}),
    ("search_task_results", DEMO, {"qid": "3", "status": "failed"}),
    ("search_task_results", DEMO, {"since": "3d", "last_n": 3}),
    (
        "search_task_results",
        DEMO,
        {"since": "5d", "status": "failed", "task_name": "CheckT1", "group_by": "qid"},
    ),
    # windows are read by the runs' own start_at range: each filter combination needs its index
    ("search_task_results", DEMO, {"since": "5d", "qid": "3", "group_by": "task"}),
    ("search_task_results", DEMO, {"since": "5d", "task_name": "CheckT1", "group_by": "execution"}),
    ("search_task_results", DEMO, {"since": "5d", "task_name": "CheckT1", "qid": "3"}),
    ("search_task_results", DEMO, {"since": "5d", "status": "failed", "qid": "3"}),
    ("search_task_results", DEMO, {"since": "5d", "execution_id": "X"}),
    ("get_execution_history", DEMO, {"status": "completed", "tags": ["1Q"]}),
    ("get_execution_history", DEMO, {"execution_id": "X"}),
    ("get_calibration_notes", DEMO, {"task_id": "master"}),
    ("get_calibration_notes", DEMO, {"qid": "16", "execution_id": "X"}),
    ("generate_chip_heatmap", DEMO, {"metric_name": "t1", "selection_mode": "average", "within_hours": 48}),
    ("get_chip_parameter_timeseries", DEMO, {"parameter_name": "t1", "notable": True}),
    ("get_chip_parameter_timeseries", DEMO, {"parameter_name": "t1", "cooldowns": True}),
    ("get_execution_history", DEMO, {"cooldowns": True}),
    ("get_chip_parameter_timeseries", OTHER, {"parameter_name": "zx90_gate_fidelity"}),
    ("list_available_parameters", DEMO, {"qid": "4"}),
    ("get_degradation_report", DEMO, {"param_names": ["t1", "zx90_gate_fidelity"]}),
    ("get_degradation_report", DEMO, {"within_days": 3, "param_names": ["t1"]}),
]
"""The filter combinations beside each tool's call with its required arguments alone (``_every_call``)."""
# Filter combinations no index of qdash.db.indexes serves (reported to the lead); the test fails when
# an index for one of them is added, so this list stays true.


def _run_all(db: Any, settings: Settings, calls: list[tuple[str, str, dict[str, Any]]]) -> None:
    for name, project, args in calls:
        ctx = ToolContext(db=db, project_id=project, username="alice", settings=settings)
        try:
            run_tool(ctx, name, args)
        except Exception as exc:  # a not-found error still issued its queries
            if type(exc).__name__ != "ToolError":
                raise


def _record(demo_lab: Any, settings: Settings, calls: list[tuple[str, str, dict[str, Any]]]) -> list[Shape]:
    proxy = RecordingDatabase(demo_lab.db)
    _run_all(proxy, settings, calls)
    return proxy.log


FROM_THE_LAB = {"get_provenance_lineage_graph"}
"""Tools whose required arguments only the lab has (``_every_call`` reads them)."""
NO_QUERIES = {"execute_python_analysis"}
"""It reads the session's data store, not the database."""


def _required_only() -> list[tuple[str, str, dict[str, Any]]]:
    """Every catalogue tool called with its required arguments alone: a new tool is checked here."""
    skipped = FROM_THE_LAB | NO_QUERIES
    return [(s.name, DEMO, sample_arguments(s, DEMO_VALUES)) for s in SPECS if s.name not in skipped]


def _every_call(db: Any, settings: Settings) -> list[tuple[str, str, dict[str, Any]]]:
    """Every tool's required-arguments call, ``CALLS``, and the calls whose arguments come from the
    lab: the lineage graph of a version, the newest two executions compared."""
    lineage = run_tool(
        ToolContext(db=db, project_id=DEMO, username="alice", settings=settings),
        "get_parameter_lineage",
        {"parameter_name": "zx90_gate_fidelity", "qid": "0-1", "last_n": 1},
    )
    newest = [e["execution_id"] for e in db.execution_history.find({"project_id": DEMO}).limit(2)]
    return [
        *_required_only(),
        *CALLS,
        ("get_provenance_lineage_graph", DEMO, {"entity_id": lineage["rows"][0][-1]}),
        ("get_execution_history", DEMO, {"execution_id": newest[0], "compare_to": newest[1]}),
    ]


def test_every_tool_is_exercised() -> None:
    exercised = {name for name, _, _ in [*_required_only(), *CALLS]} | FROM_THE_LAB | NO_QUERIES
    assert exercised == {spec.name for spec in SPECS}


def test_every_query_shape_has_an_index(demo_lab: Any, settings: Settings) -> None:
    shapes = _record(demo_lab, settings, _every_call(demo_lab.db, settings))
    assert all("project_id" in shape.equality for shape in shapes)
    unserved = sorted({str(shape) for shape in shapes if not served(shape)})
    assert unserved == []


@pytest.fixture(scope="module")
def embedded_lab() -> Iterator[Any]:
    """The small demo lab in an embedded store of its own, indexed as a server's (its maps are
    cleared and rebuilt here), whichever store the other tests run on: the warm-up is the embedded
    store's."""
    quiet = DatabaseSettings(name="warm_lab", embedded_persist=False, embedded_warn_documents=10**9)
    db = open_database(quiet)
    ensure_indexes(db)
    seed_demo(db, DemoSpec.small(end_at=datetime.now(UTC).replace(minute=0, second=0, microsecond=0)))
    yield db
    close_database(db)


def _clear_maps(db: Any) -> None:
    for name in db.list_collection_names():
        db[name]._store._equality.clear()


def _held(db: Any) -> dict[str, dict[str, int]]:
    """Per collection, the maps and the documents the buckets hold (an empty bucket, of a qid
    spelling no document has, is left out: a query builds it at no cost)."""
    held = {}
    for name in db.list_collection_names():
        inventory = db[name]._store.inventory()
        del inventory["buckets"]
        held[name] = inventory
    return held


def test_the_warm_up_builds_the_maps_every_tool_query_reads(
    embedded_lab: Any, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The maps the tools' queries ask the embedded store for are ``WARM``'s, no more, no fewer: a
    query on a new field fails here until its map is warmed, a map no query reads any more until it
    is removed."""
    calls = _every_call(embedded_lab, settings)
    asked: dict[str, tuple[set[str], set[str], set[str]]] = {}
    build = EmbeddedCollectionStore._build_maps

    def recording(store: EmbeddedCollectionStore, groups: Any, span: Any, ordered_by: Any, *n: Any) -> None:
        equalities, windows, orders = asked.setdefault(store.name, (set(), set(), set()))
        equalities.update(field for group in groups or () for field in group)
        windows.update([span.field] if span else [])
        orders.update([ordered_by] if ordered_by else [])
        build(store, groups, span, ordered_by, *n)

    monkeypatch.setattr(EmbeddedCollectionStore, "_build_maps", recording)
    _run_all(embedded_lab, settings, calls)
    recorded = {name: WarmMaps(*map(_sorted, kinds)) for name, kinds in asked.items()}
    declared = {name: WarmMaps(*map(_sorted, astuple(maps))) for name, maps in WARM.items()}
    assert declared == recorded, "WARM in db/warmup.py should be:\n" + "\n".join(
        f"    {name!r}: {maps!r}," for name, maps in recorded.items()
    )


def _sorted(fields: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted(fields))


def test_after_the_warm_up_no_tool_call_builds_a_map(embedded_lab: Any, settings: Settings) -> None:
    """Every tool's first call finds its maps and buckets built: none grows while they all run."""
    calls = _every_call(embedded_lab, settings)
    _clear_maps(embedded_lab)
    warmed = warm_up(embedded_lab)
    assert warmed["field_maps"] > 0 and warmed["time_maps"] > 0
    before = _held(embedded_lab)
    _run_all(embedded_lab, settings, calls)
    assert _held(embedded_lab) == before
    _clear_maps(embedded_lab)  # the check itself: a collection left out is built by the tools
    warm_up(embedded_lab, {name: maps for name, maps in WARM.items() if name != "parameter_versions"})
    partly = _held(embedded_lab)
    _run_all(embedded_lab, settings, calls)
    assert _held(embedded_lab)["parameter_versions"] != partly["parameter_versions"]


@pytest.mark.parametrize(
    ("shape", "expected"),
    [
        (Shape("task_result_history", frozenset({"project_id", "chip_id", "name"}), ("start_at",)), False),
        (
            Shape("calibration_note", frozenset({"project_id", "chip_id", "execution_id"}), ("timestamp",)),
            True,
        ),
        (Shape("qubit", frozenset({"project_id", "chip_id"}), ()), True),
        (Shape("execution_history", frozenset({"project_id", "chip_id"}), ("start_at",)), True),
        (Shape("execution_history", frozenset({"project_id", "chip_id"}), ("end_at",)), False),
        (
            Shape("task_result_history", frozenset({"project_id", "execution_id", "chip_id"}), ("start_at",)),
            True,
        ),
        (Shape("parameter_versions", frozenset({"project_id", "_id", "entity_id"}), ()), True),
    ],
)
def test_the_checker_itself(shape: Shape, expected: bool) -> None:
    assert served(shape) is expected
