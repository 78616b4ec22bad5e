"""Response models of the HTTP API, so the OpenAPI document describes every answer exactly.

Request bodies the assistant also takes live in ``qdash.copilot.requests``; these are the shapes
only the HTTP layer produces.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
)

INT64 = 2**63


def storable(value: Any) -> Any:
    """Reject what MongoDB cannot store, so it is a 422 and not a failed write.

    Integers beyond 64 bits, lone surrogates (valid JSON escapes, invalid UTF-8), NUL in keys and
    ``$``-prefixed keys all make BSON encoding or the server fail.
    """
    if isinstance(value, bool) or value is None or isinstance(value, float):
        return value
    if isinstance(value, int):
        if not -INT64 <= value < INT64:
            raise ValueError("integers must fit in 64 bits")
        return value
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("text must be valid Unicode (no lone surrogates)") from None
        return value
    if isinstance(value, list):
        for item in value:
            storable(item)
        return value
    if isinstance(value, dict):
        for key, item in value.items():
            storable(key)
            if "\x00" in key or key.startswith("$"):
                raise ValueError("keys must not contain NUL or start with '$'")
            storable(item)
        return value
    return value


def storable_datetime(value: datetime) -> datetime:
    """A client's datetime as UTC, or a ValueError when it falls outside the stored range.

    MongoDB stores UTC milliseconds between the years 1 and 9999; an edge value with an offset
    (``0001-01-01T00:00:00+14:00``) lies before year 1 in UTC and made the write fail. Naive
    values are read as UTC, as the dashboard sends UTC.
    """
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise ValueError("datetime must lie between 0001-01-01 and 9999-12-31 in UTC") from None


StorableText = Annotated[str, AfterValidator(storable)]
StorableDatetime = Annotated[datetime, AfterValidator(storable_datetime)]
StorableObject = Annotated[dict[str, Any], AfterValidator(storable)]


class SessionMessage(BaseModel):
    model_config = ConfigDict(extra="ignore")

    role: Literal["user", "assistant"]
    content: StorableText
    attached_image: str | None = None
    created_at: StorableDatetime | None = None
    state: Literal["running", "interrupted", "stopped"] | None = Field(
        None, description="a turn that is still running, was interrupted by a crash, or was stopped"
    )

    @model_serializer(mode="wrap")
    def _without_empty_state(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Finished turns carry no ``state`` key at all: the dashboard's messages stay as they were."""
        data: dict[str, Any] = handler(self)
        if data.get("state") is None:
            data.pop("state", None)
        return data


class SessionSummary(BaseModel):
    session_id: str
    title: str
    context: dict[str, Any] | None
    message_count: int
    created_at: datetime
    updated_at: datetime


class SessionList(BaseModel):
    sessions: list[SessionSummary]


class SessionDetail(BaseModel):
    session_id: str
    title: str
    context: dict[str, Any] | None
    messages: list[SessionMessage]
    created_at: datetime
    updated_at: datetime


class SessionCreate(BaseModel):
    model_config = ConfigDict(extra="ignore")

    session_id: StorableText = Field(min_length=1, max_length=200)
    title: StorableText = Field("New Chat", max_length=500)
    context: StorableObject | None = None
    messages: list[SessionMessage] = Field(default_factory=list)


class SessionPatch(BaseModel):
    model_config = ConfigDict(extra="ignore")

    title: StorableText | None = Field(None, max_length=500)
    context: StorableObject | None = None
    messages: list[SessionMessage] | None = None


class RatedTool(BaseModel):
    tool: str
    args: Any = None
    status: str | None = None


class RatedAnswer(BaseModel):
    """A thumbs-down answer (``qdash.repositories.feedback``)."""

    project_id: str
    session_id: str
    username: str
    title: str
    context: dict[str, Any] | None
    index: int = Field(description="position of the answer in the session's messages")
    rated_at: datetime = Field(description="when the session was last written (the rating came with a PATCH)")
    question: str
    answer: str
    tools: list[RatedTool] | None = Field(description="tool steps of the stored trace; null: no trace stored")


class FeedbackList(BaseModel):
    feedback: list[RatedAnswer]


class Deleted(BaseModel):
    deleted: Literal[True] = True


class ErrorBody(BaseModel):
    """FastAPI's error shape: ``{"detail": "<text>"}``."""

    detail: str


Responses = dict[int | str, dict[str, Any]]
"""A route's OpenAPI ``responses``."""


def errors(described: Mapping[int, str], base: Responses | None = None) -> Responses:
    """``base`` (the bearer-token errors unless given) and each status answered with an ``ErrorBody``,
    with what it means."""
    extra: Responses = {code: {"model": ErrorBody, "description": text} for code, text in described.items()}
    return {**(ERROR_RESPONSES if base is None else base), **extra}


ERROR_RESPONSES: Responses = errors(
    {401: "missing or invalid bearer token", 403: "disabled user or not a member of the project"}, {}
)
