"""The only place that opens a database. Read ``factory.py`` first."""

from qdash.db.factory import DatabaseUnavailableError, open_database

__all__ = ["DatabaseUnavailableError", "open_database"]
