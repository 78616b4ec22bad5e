"""Errors of the data layer; their messages say what to do."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from qdash.db.server_record import RunningServer


class DatabaseUnavailableError(RuntimeError):
    """The configured database cannot be reached or opened; the message says what to check."""


class DatabaseInUseError(DatabaseUnavailableError):
    """Another process owns the embedded data directory; ``server`` is set when it is ``qdash serve``."""

    def __init__(self, message: str, *, server: RunningServer | None = None) -> None:
        super().__init__(message)
        self.server = server
