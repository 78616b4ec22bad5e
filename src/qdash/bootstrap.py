"""A ready database for a process: open it, create the indexes, seed the demo lab when empty.

Why a module of its own: the server's lifespan and the commands that work without a server
(``qdash tools call``, ``qdash ask``) need the same start-up, and seeding needs the demo generator,
which sits above the data layer (``qdash.db`` must not import it). Blocking; the API runs it in a
worker thread.
"""

from __future__ import annotations

import time
from typing import Any

from pymongo.database import Database

from qdash.actions.audit import RECOVER_AFTER_S, recover
from qdash.db import close_database, database_mode, open_database
from qdash.db.indexes import ensure_indexes
from qdash.db.ownership import claim_if_empty
from qdash.logging import get_logger
from qdash.repositories.sessions import copy_legacy_sessions, mark_runs_interrupted
from qdash.settings import Settings

log = get_logger(__name__)


def is_empty(db: Database[Any]) -> bool:
    """No document in any collection (indexes alone do not count)."""
    return not any(db[name].estimated_document_count() for name in db.list_collection_names())


def seed_demo_if_empty(db: Database[Any], settings: Settings, was_empty: bool) -> int:
    """Seed the default demo lab into an empty embedded store; return the documents written.

    Only the embedded store is seeded: a ``mongodb://`` database belongs to a lab, and an empty one
    there means "not set up yet", not "show me a demo" (``qdash demo seed`` does that on purpose).
    """
    if not (was_empty and settings.database.seed_demo_on_empty and database_mode(db) == "embedded"):
        return 0
    from qdash.demo import DemoSpec, seed_demo  # numpy & co.: imported only when seeding

    log.info("seeding the demo lab into the empty embedded store (database.seed_demo_on_empty)")
    report = seed_demo(db, DemoSpec.default(), config_dir=settings.config_dir)
    return report.total_documents


def prepare_database(settings: Settings, *, seed: bool = True) -> Database[dict[str, Any]]:
    """Open, index and (when empty and ``seed``) seed the database; the caller closes it
    (``close_database``). A command that only reads passes ``seed=False`` (``route.read_only``)."""
    started = time.perf_counter()
    db = open_database(settings.database)
    try:
        was_empty = is_empty(db)
        owned = claim_if_empty(db)
        built = ensure_indexes(db, policy=settings.database.indexes)
        copied = copy_legacy_sessions(db)
        # The embedded store has one process: turns recorded as running died with the last one.
        interrupted = mark_runs_interrupted(db) if database_mode(db) == "embedded" else 0
        # Lab actions a dead process left half-done are settled from the documents before anything
        # can touch them (at once on the embedded store; after the grace on a shared MongoDB).
        settled = recover(db, grace_s=0 if database_mode(db) == "embedded" else RECOVER_AFTER_S)
        seeded = seed_demo_if_empty(db, settings, was_empty and seed)
    except BaseException:
        close_database(db)
        raise
    log.info(
        "database ready",
        mode=database_mode(db),
        owner="copilot" if owned else "lab (indexes: add-only, non-unique)",
        indexes_built=built,
        sessions_copied=copied,
        turns_interrupted=interrupted,
        actions_settled=settled,
        seeded_documents=seeded,
        startup_s=round(time.perf_counter() - started, 3),
    )
    return db
