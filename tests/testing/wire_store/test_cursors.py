"""Server-side cursors: MongoDB's batch sizes, getMore, killCursors and the idle timeout."""

from __future__ import annotations

import bson
import pytest

from tests.support.wire_store.cursors import DEFAULT_FIRST_BATCH, CursorRegistry
from tests.support.wire_store.errors import CURSOR_NOT_FOUND, CommandError

DOCS = [{"_id": i} for i in range(250)]


def _ids(batch: list[bson.RawBSONDocument]) -> list[int]:
    return [doc["_id"] for doc in batch]


def test_first_batch_is_101_then_getmore_returns_the_rest() -> None:
    registry = CursorRegistry()
    first = registry.open("d.c", DOCS)
    assert _ids(first["firstBatch"]) == list(range(DEFAULT_FIRST_BATCH)) and first["id"] > 0
    more = registry.get_more(first["id"])
    assert _ids(more["nextBatch"]) == list(range(101, 250)) and more["id"] == 0 and more["ns"] == "d.c"
    assert len(registry) == 0


def test_batch_sizes_and_single_batch() -> None:
    registry = CursorRegistry()
    first = registry.open("d.c", DOCS, batch_size=100)
    assert len(registry.get_more(first["id"], batch_size=100)["nextBatch"]) == 100
    assert registry.open("d.c", DOCS, batch_size=0)["firstBatch"] == []
    single = registry.open("d.c", DOCS, batch_size=5, single_batch=True)
    assert len(single["firstBatch"]) == 5 and single["id"] == 0
    with pytest.raises(CommandError, match="batchSize"):
        registry.open("d.c", DOCS, batch_size=-1)


def test_a_batch_stops_at_the_reply_size_limit() -> None:
    big = [{"_id": i, "blob": b"x" * (4 * 1024 * 1024)} for i in range(6)]
    registry = CursorRegistry()
    first = registry.open("d.c", big)
    assert len(first["firstBatch"]) == 3  # 3 x 4 MiB fit in 16 MiB, a 4th does not
    assert len(registry.get_more(first["id"])["nextBatch"]) == 3


def test_kill_and_unknown_ids() -> None:
    registry = CursorRegistry()
    open_id = registry.open("d.c", DOCS)["id"]
    assert registry.kill([open_id, 12345]) == {
        "cursorsKilled": [open_id],
        "cursorsNotFound": [12345],
        "cursorsAlive": [],
        "cursorsUnknown": [],
    }
    with pytest.raises(CommandError) as err:
        registry.get_more(open_id)
    assert err.value.code == CURSOR_NOT_FOUND


def test_idle_cursors_expire() -> None:
    now = [0.0]
    registry = CursorRegistry(idle_timeout_s=60, clock=lambda: now[0])
    cursor_id = registry.open("d.c", DOCS, batch_size=10)["id"]
    now[0] = 59
    assert registry.get_more(cursor_id, batch_size=10)["id"] == cursor_id  # use refreshes the clock
    now[0] = 118
    assert registry.reap() == 0
    now[0] = 120
    assert registry.reap() == 1 and len(registry) == 0
