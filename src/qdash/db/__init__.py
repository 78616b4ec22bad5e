"""The only place that opens a database. Read ``factory.py`` first, then ``indexes.py``.

``fixes.py``/``store.py``/``journal.py``/``lock.py`` are the embedded store's internals; nothing above
this package imports them.
"""

from qdash.db.errors import DatabaseInUseError, DatabaseUnavailableError
from qdash.db.factory import (
    DatabaseMode,
    close_database,
    database_mode,
    not_created,
    open_database,
    ping,
    preflight,
    redact_uri,
)
from qdash.db.warmup import WarmUp, start_warm_up

__all__ = [
    "DatabaseInUseError",
    "DatabaseMode",
    "DatabaseUnavailableError",
    "WarmUp",
    "close_database",
    "database_mode",
    "not_created",
    "open_database",
    "ping",
    "preflight",
    "redact_uri",
    "start_warm_up",
]
