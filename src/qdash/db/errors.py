"""Errors of the data layer; their messages say what to do."""

from __future__ import annotations


class DatabaseUnavailableError(RuntimeError):
    """The configured database cannot be reached or opened; the message says what to check."""


class DatabaseInUseError(DatabaseUnavailableError):
    """Another process owns the embedded data directory."""
