"""Exceptions → MongoDB error replies (code, message, key details)."""

from __future__ import annotations

import pytest
from pymongo.errors import DuplicateKeyError, OperationFailure

from tests.support.wire_store.errors import CommandError, error_reply


@pytest.mark.parametrize(
    ("exc", "code", "message"),
    [
        (CommandError(59, "no such command: 'x'"), 59, "no such command: 'x'"),
        (OperationFailure("unknown operator: $x"), 2, "unknown operator: $x"),
        (
            NotImplementedError("$setWindowFields"),
            238,
            "not supported by the embedded store: $setWindowFields",
        ),
        (ValueError("Must either update or remove"), 2, "ValueError: Must either update or remove"),
        (RuntimeError("boom"), 1, "embedded store error: RuntimeError: boom"),
    ],
)
def test_codes_and_messages(exc: Exception, code: int, message: str) -> None:
    reply = error_reply(exc)
    assert (reply["ok"], reply["code"], reply["errmsg"]) == (0.0, code, message)


def test_duplicate_key_keeps_its_key_and_drops_pymongos_suffix() -> None:
    exc = DuplicateKeyError(
        "E11000 Duplicate Key Error", 11000, {"keyPattern": {"a": 1}, "keyValue": {"a": 2}}
    )
    assert error_reply(exc) == {
        "ok": 0.0,
        "errmsg": "E11000 Duplicate Key Error",
        "code": 11000,
        "codeName": "DuplicateKey",
        "keyPattern": {"a": 1},
        "keyValue": {"a": 2},
    }
