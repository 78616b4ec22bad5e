"""The curried signature notation for config-declared tools.

``(qid::Text)==>(last_n::Int {default:5, min:1, max:50})==>(::[Object])`` declares a tool taking a
required text ``qid`` and an optional integer ``last_n`` and returning a list of objects. Why a
notation: lab staff add a simple tool in YAML with one line, and the line becomes the same pydantic
args model (hence the same strict JSON Schema) as a hand-written tool.

Grammar::

    signature := group ("==>" group)*        the last group is the return type
    group     := "(" [name] "::" type [options] ")"
    type      := Text | Int | Double | Bool | Object | "[" type "]"
    options   := "{" key ":" JSON-value ("," key ":" JSON-value)* "}"   keys: default, min, max

A parameter with a ``default`` is optional (nullable in the schema; ``null`` means the default).
Every ``Int`` is bounded (``min``/``max``, else 0–10,000) because strict schemas must bound integers;
lists hold at most 64 items; texts at most 256 characters. ``Object`` is only a return type: a strict
schema cannot describe an open object argument. A malformed signature raises ``SignatureError``
naming the column and the group.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, create_model

SCALARS = ("Text", "Int", "Double", "Bool", "Object")
INT_BOUNDS = (0, 10_000)
MAX_ITEMS = 64
MAX_TEXT = 256
_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
_OPTION_KEYS = ("default", "min", "max")


class SignatureError(ValueError):
    """A malformed signature; ``column`` is 1-based, ``group`` the 1-based group number."""

    def __init__(self, message: str, column: int, group: int) -> None:
        super().__init__(f"at column {column} (group {group}): {message}")
        self.column = column
        self.group = group


@dataclass(frozen=True)
class TypeExpr:
    """``Text`` or ``[Int]`` etc.: ``name`` is the scalar, ``depth`` the number of list brackets."""

    name: str
    depth: int = 0

    def __str__(self) -> str:
        return "[" * self.depth + self.name + "]" * self.depth


@dataclass(frozen=True)
class Param:
    name: str
    type: TypeExpr
    optional: bool = False
    default: Any = None
    minimum: float | None = None
    maximum: float | None = None


@dataclass(frozen=True)
class Signature:
    params: tuple[Param, ...]
    returns: TypeExpr

    def args_model(self, tool: str) -> type[BaseModel]:
        """The pydantic args model (extra keys forbidden) the executor validates against."""
        fields: dict[str, Any] = {}
        for param in self.params:
            annotation = _python_type(param)
            if param.optional:
                # Plain type + default: the strict schema makes it nullable, and the executor turns
                # a null into "use the default" (so ``{default:null}`` simply means "no filter").
                fields[param.name] = (annotation, Field(param.default))
            else:
                fields[param.name] = (annotation, Field(...))
        model_name = "".join(part.capitalize() for part in tool.split("_")) + "Args"
        model: type[BaseModel] = create_model(model_name, __config__=ConfigDict(extra="forbid"), **fields)
        return model


def _python_type(param: Param) -> Any:
    """The annotated Python type: bounds on every Int/Double (also inside lists), lengths on texts/lists."""
    name = param.type.name
    if name == "Int":
        low = param.minimum if param.minimum is not None else INT_BOUNDS[0]
        high = param.maximum if param.maximum is not None else INT_BOUNDS[1]
        base: Any = Annotated[int, Field(ge=low, le=high)]
    elif name == "Double":
        base = Annotated[float, Field(ge=param.minimum, le=param.maximum)]
    elif name == "Text":
        base = Annotated[str, Field(max_length=MAX_TEXT)]
    else:
        base = bool
    for _ in range(param.type.depth):
        base = Annotated[list[base], Field(max_length=MAX_ITEMS)]
    return base


def parse_signature(text: str) -> Signature:
    """Parse the notation; raise SignatureError with the position of the first problem."""
    return _Parser(text).parse()


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.group = 1

    def fail(self, message: str, pos: int | None = None) -> SignatureError:
        return SignatureError(message, (self.pos if pos is None else pos) + 1, self.group)

    def skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def expect(self, token: str, what: str) -> None:
        self.skip()
        if not self.text.startswith(token, self.pos):
            found = self.text[self.pos : self.pos + 8] or "end of text"
            raise self.fail(f"expected '{token}' {what}, found '{found}'")
        self.pos += len(token)

    def parse(self) -> Signature:
        if not self.text.strip():
            raise self.fail("empty signature; write e.g. (qid::Text)==>(::Object)")
        groups: list[tuple[str, TypeExpr, dict[str, Any], int]] = []
        while True:
            start = self.pos
            name, expr, options = self.parse_group()
            groups.append((name, expr, options, start))
            self.skip()
            if self.pos >= len(self.text):
                break
            self.expect("==>", "between groups")
            self.group += 1
        *params, (ret_name, ret_type, ret_options, ret_start) = groups
        self.group = len(groups)
        if ret_name or ret_options:
            raise self.fail(
                "the last group is the return type and must be '(::Type)' without a name or options",
                ret_start,
            )
        return Signature(tuple(self.make_params(params)), ret_type)

    def make_params(self, groups: list[tuple[str, TypeExpr, dict[str, Any], int]]) -> list[Param]:
        seen: set[str] = set()
        params: list[Param] = []
        for index, (name, expr, options, start) in enumerate(groups, start=1):
            self.group = index
            if not name:
                raise self.fail(
                    "a parameter needs a name before '::' (only the last group is the return type)", start
                )
            if name in seen:
                raise self.fail(f"parameter '{name}' is declared twice", start)
            seen.add(name)
            if expr.name == "Object":
                raise self.fail(
                    "Object is only allowed as the return type (strict schemas cannot "
                    "describe an open object argument)",
                    start,
                )
            bounds = [options.get("min"), options.get("max")]
            if any(b is not None for b in bounds) and (expr.depth or expr.name not in ("Int", "Double")):
                raise self.fail("min/max apply only to Int and Double", start)
            if any(b is not None and not isinstance(b, int | float) for b in bounds):
                raise self.fail("min/max must be numbers", start)
            if None not in bounds and bounds[0] > bounds[1]:  # type: ignore[operator]
                raise self.fail("min is greater than max", start)
            params.append(
                Param(name, expr, "default" in options, options.get("default"), bounds[0], bounds[1])
            )
        return params

    def parse_group(self) -> tuple[str, TypeExpr, dict[str, Any]]:
        self.expect("(", "to open a group")
        self.skip()
        match = _NAME.match(self.text, self.pos)
        name = ""
        if match:
            name = match.group(0)
            self.pos = match.end()
        elif self.pos < len(self.text) and self.text[self.pos] not in ":":
            raise self.fail("parameter names are lower snake_case (a-z, 0-9, _), at most 64 characters")
        self.expect("::", "after the parameter name")
        expr = self.parse_type()
        self.skip()
        options: dict[str, Any] = {}
        if self.text.startswith("{", self.pos):
            options = self.parse_options()
        self.expect(")", "to close the group")
        return name, expr, options

    def parse_type(self) -> TypeExpr:
        self.skip()
        depth = 0
        while self.text.startswith("[", self.pos):
            depth += 1
            self.pos += 1
            self.skip()
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos].isalpha():
            self.pos += 1
        word = self.text[start : self.pos]
        if word not in SCALARS:
            raise self.fail(f"unknown type '{word}'; use one of {', '.join(SCALARS)} or [T]", start)
        for _ in range(depth):
            self.expect("]", "to close the list type")
        return TypeExpr(word, depth)

    def parse_options(self) -> dict[str, Any]:
        start = self.pos
        end = self.text.find("}", start)
        if end < 0:
            raise self.fail("options '{' is never closed")
        body = self.text[start + 1 : end]
        quoted = re.sub(r"(^|,)\s*([a-z_]+)\s*:", r'\1"\2":', body)
        try:
            options = json.loads("{" + quoted + "}")
        except json.JSONDecodeError as exc:
            raise self.fail(f"options must be key:JSON-value pairs ({exc.msg})", start) from None
        unknown = sorted(set(options) - set(_OPTION_KEYS))
        if unknown:
            raise self.fail(f"unknown option '{unknown[0]}'; allowed: {', '.join(_OPTION_KEYS)}", start)
        self.pos = end + 1
        return dict(options)
