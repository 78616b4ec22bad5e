"""Argument models: ids are normalised, limits hold; through the executor's validation step null
means the default (it also clamps integers)."""

from __future__ import annotations

from typing import cast

import pytest
from pydantic import Field, ValidationError

from qdash.copilot.tools.catalog.args import ChipId, OptTarget, ParamNames, Qid, ShortText, ToolArgs
from qdash.copilot.tools.executor import validate_arguments


class Example(ToolArgs):
    qid: Qid
    chip_id: ChipId = None
    target: OptTarget = None
    names: ParamNames = None
    text: ShortText = "x"
    last_n: int = Field(10, ge=1, le=50)


def test_null_means_default_and_ids_are_normalised() -> None:
    validated = validate_arguments(
        "example",
        Example,
        {"qid": "Q016", "chip_id": None, "target": "Q22-Q16", "names": ["T1"], "last_n": None},
    )
    assert isinstance(validated, tuple)
    args = cast(Example, validated[0])
    assert validated[1] == {}
    assert (args.qid, args.chip_id, args.target, args.names, args.last_n) == ("16", None, "22-16", ["t1"], 10)


def test_limits_and_unknown_keys_are_errors() -> None:
    with pytest.raises(ValidationError, match="at most 64 characters"):
        Example.model_validate({"qid": 1, "text": "x" * 65})
    with pytest.raises(ValidationError, match="at most 64 characters"):
        Example.model_validate({"qid": 1, "chip_id": "c" * 65})
    with pytest.raises(ValidationError, match="Extra inputs"):
        Example.model_validate({"qid": 1, "project_id": "other"})
    with pytest.raises(ValidationError):
        Example.model_validate({"qid": 1, "names": ["t1"] * 33})


def test_optional_strings_have_the_compact_schema() -> None:
    schema = Example.model_json_schema()["properties"]
    assert schema["chip_id"]["type"] == "string"
    names = {k: v for k, v in schema["names"].items() if k != "title"}
    assert names == {"type": "array", "items": {"type": "string"}, "default": None}  # bound: validation
    assert schema["last_n"]["maximum"] == 50
