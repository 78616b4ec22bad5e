"""The embedded store's start-up warm-up: the maps the tools' queries read are built in a background
thread when the server starts, instead of by the first question of each kind.

Why: the embedded store builds a query's field maps and time maps (``equality.py``, ``ranges.py``)
on the first query that needs them, over the whole collection. At a year of a 64-qubit chip (119,513
runs, 172,723 parameter versions) that first query paid for them: a qubit's latest result 2.0 s, a
parameter's time series 0.7 s, its lineage 0.6 s, where the same calls answer in milliseconds once
they exist. MongoDB serves the same queries from its indexes: there is nothing to do there
(``start_warm_up`` returns ``None``).

What is built: :data:`WARM`, per collection, a field map per field the tools' queries select on by
equality, a time map per field they bound by a window and per field a sorted read with a limit orders
by (``EmbeddedCollectionStore.warm``). The time-ordered buckets (``buckets.py``) stay per value
asked: built from these maps, a qubit's costs milliseconds; building every value's at start-up
measured twice the CPU time and ~50 MB more at a year, to save those milliseconds.
``tests/copilot/tools/test_query_indexes.py`` runs every tool, records what its queries ask the
store for and fails, printing the dict to paste, when it differs from :data:`WARM` (a new query
field, or one no query reads any more); and checks that after the warm-up no tool call builds a map.

Never on the event loop and never waited for: readiness does not depend on it. It gives way to
queries: a map is built only once no query has asked for maps for 0.2 s, so a question that arrives
meanwhile waits for at most the one map being built (under the store's write lock) and builds the
ones it still needs itself, as without a warm-up; writes between maps are tracked as usual. Its time
and memory: docs/data-layer.md.
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pymongo.database import Database

from qdash.db.factory import database_mode
from qdash.db.store import WARM_QUIET_S, EmbeddedCollectionStore
from qdash.logging import get_logger

log = get_logger(__name__)


@dataclass(frozen=True)
class WarmMaps:
    """The maps of one collection the tools' queries read: a field map per field a plain
    equality selects on (a filter's own, or a ``$or`` branch's), a time map per datetime field a
    window bounds, a time (or number: a version) map per field a sorted read with a limit orders
    by."""

    equalities: tuple[str, ...] = ()
    windows: tuple[str, ...] = ()
    orders: tuple[str, ...] = ()


P = "project_id"
WARM: dict[str, WarmMaps] = {  # the largest first: what a first question most likely reads
    "task_result_history": WarmMaps(
        (P, "chip_id", "execution_id", "name", "output_parameter_names", "qid", "status", "task_id"),
        windows=("start_at",),
        orders=("start_at",),
    ),
    "parameter_versions": WarmMaps((P, "chip_id", "parameter_name", "qid"), orders=("version",)),
    "execution_history": WarmMaps(
        (P, "chip_id", "execution_id", "status"), windows=("start_at",), orders=("start_at",)
    ),
    "calibration_note": WarmMaps((P, "chip_id", "execution_id", "task_id")),
    "chip": WarmMaps((P, "chip_id"), orders=("installed_at",)),
    "qubit": WarmMaps((P, "chip_id", "qid")),
    "coupling": WarmMaps((P, "chip_id")),
}


def warm_up(
    db: Database[Any],
    maps: Mapping[str, WarmMaps] = WARM,
    stop: Callable[[], bool] = lambda: False,
    quiet_s: float = WARM_QUIET_S,
) -> dict[str, int]:
    """Build the embedded store's ``maps`` (blocking: run it off the event loop), each once no
    query has asked for maps for ``quiet_s`` (``EmbeddedCollectionStore.warm``); return what the
    store then holds in those collections (``EqualityIndex.inventory``, summed); on MongoDB
    nothing, ``{}``. ``stop`` is asked between maps."""
    if database_mode(db) != "embedded":
        return {}
    for name, wanted in maps.items():
        if stop():
            break
        _store(db, name).warm(wanted.equalities, wanted.windows, wanted.orders, stop, quiet_s)
    totals: dict[str, int] = {}
    for name in maps:
        for kind, count in _store(db, name).inventory().items():
            totals[kind] = totals.get(kind, 0) + count
    return totals


def _store(db: Database[Any], name: str) -> EmbeddedCollectionStore:
    collection: Any = db[name]  # an EmbeddedCollection (fixes.py)
    store: EmbeddedCollectionStore = collection._store
    return store


class WarmUp:
    """``warm_up`` in a daemon thread; ``stop`` asks it to stop after its current step and waits."""

    def __init__(self, db: Database[Any], maps: Mapping[str, WarmMaps] = WARM) -> None:
        self._db, self._maps = db, maps
        self._stopping = threading.Event()
        self.done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="qdash-store-warm-up", daemon=True)

    def start(self) -> WarmUp:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Blocking (up to one step): call it off the event loop, before closing the database."""
        self._stopping.set()
        self._thread.join()

    def _run(self) -> None:
        started, cpu = time.perf_counter(), time.thread_time()
        try:
            built = warm_up(self._db, self._maps, self._stopping.is_set)
            if self._stopping.is_set():
                return
            # The maps live as long as the store: out of the collector's full passes, as the store
            # itself is (api/lifespan.py); they hold ~120,000 tracked objects at a year (a run's
            # output parameters), a 130-160 ms pass each time.
            gc.freeze()
            log.info(
                "embedded store warmed",
                wall_s=round(time.perf_counter() - started, 3),
                cpu_s=round(time.thread_time() - cpu, 3),
                **built,
            )
        except Exception as exc:  # a failed warm-up costs speed only: queries build what they need
            log.warning("embedded store warm-up failed", error=f"{type(exc).__name__}: {exc}")
        finally:
            self.done.set()


def start_warm_up(db: Database[Any]) -> WarmUp | None:
    """Start the warm-up of an embedded store (``None`` on MongoDB: its indexes serve)."""
    return WarmUp(db).start() if database_mode(db) == "embedded" else None
