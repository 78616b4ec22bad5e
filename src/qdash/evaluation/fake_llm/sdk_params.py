"""Field sets and enums taken from the installed openai SDK's request types.

Why derive them: "unknown parameter" (R1/C9) must follow the SDK we pin (3.54), not a hand-kept
list that drifts; the fake accepts the whole SDK field set.
"""

from __future__ import annotations

import sys
import types
import typing
from typing import Any

from openai.types.chat import completion_create_params
from openai.types.responses import response_create_params, response_input_item_param
from openai.types.responses.response_includable import ResponseIncludable
from openai.types.shared.reasoning_effort import ReasoningEffort


def _literals(tp: Any) -> list[str]:
    """String literals inside a (possibly nested, Optional/Required-wrapped) type."""
    origin = typing.get_origin(tp)
    if origin is typing.Literal:
        return [a for a in typing.get_args(tp) if isinstance(a, str)]
    if origin in (typing.Union, types.UnionType) or str(origin).startswith("typing.Required"):
        return [lit for arg in typing.get_args(tp) for lit in _literals(arg)]
    args = typing.get_args(tp)
    return _literals(args[0]) if args and origin is not None else []


def _item_types() -> list[str]:
    """The ``type`` literals of every member of the SDK's input-item union."""
    found: list[str] = []
    for member in typing.get_args(response_input_item_param.ResponseInputItemParam):
        hint = getattr(member, "__annotations__", {}).get("type")
        if isinstance(hint, typing.ForwardRef):
            hint = hint.__forward_arg__
        if isinstance(hint, str):  # postponed annotation: evaluate in the defining module
            hint = eval(hint, {**vars(typing), **vars(sys.modules[member.__module__])})
        for name in _literals(hint):
            if name not in found:
                found.append(name)
    return found


RESPONSES_FIELDS = frozenset(response_create_params.ResponseCreateParamsBase.__annotations__) | {"stream"}
CHAT_FIELDS = frozenset(completion_create_params.CompletionCreateParamsBase.__annotations__) | {"stream"}
INPUT_ITEM_TYPES = _item_types()
INCLUDABLE = _literals(ResponseIncludable)
REASONING_EFFORTS = _literals(ReasoningEffort)
