"""Shared argument-model machinery: the base model and the identifier field types.

A ``null`` for a field with a default ("use the default": strict-mode schemas make every property
required and nullable) is dropped, and out-of-range integers (non-strict providers send them) are
clamped, by the executor's one validation step for every argument model, this one included.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, get_args

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    WithJsonSchema,
)

from qdash.copilot.tools.catalog.identifiers import (
    MAX_ID_CHARS,
    normalize_coupling_id,
    normalize_parameter_name,
    normalize_qid,
    normalize_target,
)


class ToolArgs(BaseModel):
    """Base of every tool's arguments: unknown keys are errors, text is stripped."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


def _text(raw: Any) -> Any:
    """Accept numbers for id fields (local models send ``16`` for ``"16"``)."""
    return str(raw) if isinstance(raw, int | float) and not isinstance(raw, bool) else raw


def _chip(raw: Any) -> Any:
    if raw is None:
        return None
    text = str(_text(raw)).strip()
    if len(text) > MAX_ID_CHARS:
        raise ValueError(f"at most {MAX_ID_CHARS} characters")
    return text or None


def _limited(max_chars: int) -> BeforeValidator:
    """A length limit enforced here, not in the schema (strict mode rejects ``maxLength``)."""

    def check(raw: Any) -> Any:
        if isinstance(raw, str) and len(raw) > max_chars:
            raise ValueError(f"at most {max_chars} characters")
        return _text(raw)

    return BeforeValidator(check)


def _optional(normalise: Callable[[Any], Any]) -> BeforeValidator:
    return BeforeValidator(lambda v: None if v is None else normalise(v))


_STRING = WithJsonSchema({"type": "string"})
"""Optional strings as ``{"type": "string"}`` (strict normalisation makes them ``["string","null"]``),
half the size of pydantic's ``anyOf`` form: schema size is paid on every model request."""

Qid = Annotated[str, BeforeValidator(lambda v: normalize_qid(_text(v)))]
Target = Annotated[str, BeforeValidator(lambda v: normalize_target(_text(v)))]
ParameterName = Annotated[str, BeforeValidator(lambda v: normalize_parameter_name(str(_text(v))))]
ShortText = Annotated[str, _limited(MAX_ID_CHARS)]
ChipId = Annotated[str | None, BeforeValidator(_chip), _STRING]
OptQid = Annotated[str | None, _optional(lambda v: normalize_qid(_text(v))), _STRING]
OptCouplingId = Annotated[str | None, _optional(lambda v: normalize_coupling_id(str(_text(v)))), _STRING]
OptTarget = Annotated[str | None, _optional(lambda v: normalize_target(_text(v))), _STRING]
OptText = Annotated[str | None, _limited(MAX_ID_CHARS), _STRING]
OptFlag = Annotated[bool | None, WithJsonSchema({"type": "boolean"})]
"""An optional switch, ``null`` = off, in the compact schema form (see ``_STRING``)."""


def optional_choice(literal: Any) -> WithJsonSchema:
    """Schema of an optional ``Literal`` as ``{"type": "string", "enum": [...]}``; strict normalisation
    makes it ``["string", "null"]`` with ``null`` in the enum, a third of pydantic's ``anyOf`` form."""
    return WithJsonSchema({"type": "string", "enum": list(get_args(literal))})


def optional_int(low: int, high: int) -> WithJsonSchema:
    """Schema of an optional bounded integer without ``anyOf`` (see ``optional_choice``)."""
    return WithJsonSchema({"type": "integer", "minimum": low, "maximum": high})


_STRINGS = WithJsonSchema({"type": "array", "items": {"type": "string"}})
"""Schema of a list of strings in the compact form (see ``_STRING``), without its length bound: the
args model enforces it, and no model call nears it."""

ParamNames = Annotated[list[ParameterName] | None, Field(max_length=32), _STRINGS]
TargetList = Annotated[list[Target] | None, Field(max_length=256), _STRINGS]
Tags = Annotated[list[ShortText] | None, Field(max_length=10), _STRINGS]
Qids = Annotated[list[Qid], Field(min_length=1, max_length=64), _STRINGS]
EntityId = Annotated[str, _limited(256)]
Code = Annotated[str, _limited(20_000)]
