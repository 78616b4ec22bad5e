"""The suite's own scheduling lists name modules that exist (a renamed module would silently fall
back to the default order, or off the shared worker)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import HEAVY_FIRST, SHARED_WORKER

ROOT = Path(__file__).resolve().parents[1]


def test_every_scheduled_module_exists() -> None:
    missing = [path for path in (*HEAVY_FIRST, *SHARED_WORKER) if not (ROOT / path).is_file()]
    assert missing == []
