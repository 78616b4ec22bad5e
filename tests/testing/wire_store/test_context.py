"""Checked access to command fields: wrong types are TypeMismatch, unsupported options NotImplemented."""

from __future__ import annotations

import pytest

from tests.support.wire_store.context import count, document, documents, name_field, reject, sort_spec
from tests.support.wire_store.errors import NOT_IMPLEMENTED, TYPE_MISMATCH, CommandError


def test_valid_fields() -> None:
    command = {"find": "c", "skip": 2.0, "sort": {"a": 1, "b": -1}, "docs": [{}]}
    assert name_field(command, "find") == "c"
    assert count(command, "skip") == 2 and count(command, "limit") == 0
    assert sort_spec(command) == [("a", 1), ("b", -1)] and sort_spec({}) is None
    assert document(command, "filter") is None and documents(command, "docs") == [{}]
    reject({"collation": None}, "collation")


@pytest.mark.parametrize(
    "check",
    [
        lambda: name_field({"find": 1}, "find"),
        lambda: count({"skip": -1}, "skip"),
        lambda: count({"skip": True}, "skip"),
        lambda: document({"filter": [1]}, "filter"),
        lambda: documents({"documents": []}, "documents"),
    ],
)
def test_wrong_types_are_type_mismatch(check: object) -> None:
    with pytest.raises(CommandError) as err:
        check()  # type: ignore[operator]
    assert err.value.code == TYPE_MISMATCH


def test_unsupported_options_are_refused_by_name() -> None:
    with pytest.raises(CommandError, match="'collation'") as err:
        reject({"collation": {"locale": "en"}}, "collation")
    assert err.value.code == NOT_IMPLEMENTED
