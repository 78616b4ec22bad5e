"""One API process for the two-process test: the real app on ``QDASH_MONGO_URI`` with the scripted
assistant and the API tests' users (seeded idempotently, so both processes can start together).

Usage: ``python tests/api/scripted_server.py <port> [behaviour]`` (a ``FakeAssistant`` behaviour).
Without ``QDASH_MONGO_URI`` it starts on the embedded store the way ``qdash serve`` does
(``prepare_database``: lock, journal, indexes, interrupted turns marked).
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import uvicorn
from pymongo.errors import BulkWriteError, DuplicateKeyError

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from qdash.bootstrap import prepare_database
from qdash.db import open_database
from qdash.settings import load_settings
from tests.api.api_helpers import FakeAssistant, build_app, seed_tenancy


def main(port: int, behaviour: str) -> None:
    settings = load_settings()
    shared = settings.database.mongo_uri is not None
    db = open_database(settings.database) if shared else prepare_database(settings)
    with contextlib.suppress(DuplicateKeyError, BulkWriteError):  # the other process seeded first
        seed_tenancy(db)
    app = build_app(settings, db, FakeAssistant(behaviour=behaviour))
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else "ok")
