"""One API process for the two-process test: the real app on ``QDASH_MONGO_URI`` with the scripted
assistant and the API tests' users (seeded idempotently, so both processes can start together).

Usage: ``python tests/api/scripted_server.py <port>``.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import uvicorn
from pymongo.errors import BulkWriteError, DuplicateKeyError

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from qdash.db import open_database
from qdash.settings import load_settings
from tests.api.api_helpers import FakeAssistant, build_app, seed_tenancy


def main(port: int) -> None:
    settings = load_settings()
    db = open_database(settings.database)
    with contextlib.suppress(DuplicateKeyError, BulkWriteError):  # the other process seeded first
        seed_tenancy(db)
    uvicorn.run(build_app(settings, db, FakeAssistant()), host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main(int(sys.argv[1]))
