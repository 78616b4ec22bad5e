"""Errors as MongoDB reports them: a numeric code and a message, so pymongo raises its usual classes.

pymongo picks the exception class from the code (11000 → ``DuplicateKeyError``, 43 →
``CursorNotFound``, any other → ``OperationFailure``), so the codes here are MongoDB's own.
"""

from __future__ import annotations

from typing import Any

from pymongo.errors import OperationFailure

INTERNAL_ERROR = 1
BAD_VALUE = 2
FAILED_TO_PARSE = 9
TYPE_MISMATCH = 14
NAMESPACE_NOT_FOUND = 26
INDEX_NOT_FOUND = 27
CURSOR_NOT_FOUND = 43
NAMESPACE_EXISTS = 48
COMMAND_NOT_FOUND = 59
INDEX_OPTIONS_CONFLICT = 85
NOT_IMPLEMENTED = 238
DUPLICATE_KEY = 11000

CODE_NAMES = {
    INTERNAL_ERROR: "InternalError",
    BAD_VALUE: "BadValue",
    FAILED_TO_PARSE: "FailedToParse",
    TYPE_MISMATCH: "TypeMismatch",
    NAMESPACE_NOT_FOUND: "NamespaceNotFound",
    INDEX_NOT_FOUND: "IndexNotFound",
    CURSOR_NOT_FOUND: "CursorNotFound",
    NAMESPACE_EXISTS: "NamespaceExists",
    COMMAND_NOT_FOUND: "CommandNotFound",
    INDEX_OPTIONS_CONFLICT: "IndexOptionsConflict",
    NOT_IMPLEMENTED: "NotImplemented",
    DUPLICATE_KEY: "DuplicateKey",
}


class CommandError(Exception):
    """A command failed with a MongoDB error code; becomes ``{ok: 0, code, errmsg}``."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def describe(exc: Exception) -> tuple[int, str, dict[str, Any]]:
    """(code, message, extra fields) for an exception raised while running a command.

    The embedded store raises pymongo's own classes for what MongoDB rejects (their code when they
    carry one, else BadValue), ``NotImplementedError`` for what it lacks, and plain Python errors
    for malformed arguments; anything else is reported as an internal error.
    """
    if isinstance(exc, CommandError):
        return exc.code, str(exc), {}
    if isinstance(exc, OperationFailure):
        details = exc.details or {}
        extra = {key: details[key] for key in ("keyPattern", "keyValue") if key in details}
        message = str(details.get("errmsg") or plain_message(str(exc)))
        return exc.code or BAD_VALUE, message, extra
    if isinstance(exc, NotImplementedError):
        return NOT_IMPLEMENTED, f"not supported by the embedded store: {exc}", {}
    if isinstance(exc, (ValueError, TypeError, KeyError)):
        return BAD_VALUE, f"{type(exc).__name__}: {exc}", {}
    return INTERNAL_ERROR, f"embedded store error: {type(exc).__name__}: {exc}", {}


def plain_message(message: str) -> str:
    """A pymongo error message without the ", full error: {details}" pymongo appends (sent as fields)."""
    return message.partition(", full error: ")[0]


def error_reply(exc: Exception) -> dict[str, Any]:
    """The ``ok: 0`` reply document for ``exc``."""
    code, message, extra = describe(exc)
    return {"ok": 0.0, "errmsg": message, "code": code, "codeName": CODE_NAMES.get(code, "Error"), **extra}
