"""Shared building blocks of the stored documents: UTC datetimes, ``system_info``, ParameterModel.

Why a common base: every collection is read by tools and written by the demo generator, so one
place decides how a model becomes a Mongo document (natural ``_id``, UTC datetimes, no
``None``-vs-missing surprises) and back.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, ClassVar, Self

from pydantic import AfterValidator, BaseModel, ConfigDict, Field


def _as_utc(value: datetime) -> datetime:
    """BSON datetimes are UTC: a naive value (a client without ``tz_aware``) is read as UTC."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


UtcDatetime = Annotated[datetime, AfterValidator(_as_utc)]
"""A datetime that is always timezone-aware and in UTC after validation."""


def utc_now() -> datetime:
    """Now, timezone-aware UTC, truncated to milliseconds (BSON's resolution) so round trips compare equal."""
    now = datetime.now(UTC)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)


class StoredModel(BaseModel):
    """Base of embedded and top-level stored models.

    ``extra="ignore"``: real (upstream) databases carry fields we do not model; reading them must
    not fail. Field order follows the domain document so dumps are easy to compare.
    """

    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class SystemInfo(StoredModel):
    """Creation and update times of a mutable document."""

    created_at: UtcDatetime = Field(default_factory=utc_now)
    updated_at: UtcDatetime = Field(default_factory=utc_now)


class ParameterModel(StoredModel):
    """One stored value with unit, uncertainty and producer.

    ``value`` is in stored units (GHz, μs, fractions). ``int`` stays ``int`` (pydantic's smart union),
    so run parameters such as ``shots`` round-trip exactly.
    """

    parameter_name: str = ""
    qid_role: str = ""
    value: float | int = 0.0
    value_type: str = "float"
    error: float = 0.0
    unit: str = ""
    description: str = ""
    calibrated_at: UtcDatetime | None = None
    execution_id: str = ""
    task_id: str = ""


class Document(StoredModel):
    """A top-level document of one collection.

    ``id`` maps to Mongo's ``_id``. Upstream documents carry ObjectIds; ours carry a natural string key
    (``natural_id``) so point reads are O(1) on the embedded store and unique on every backend.
    """

    collection: ClassVar[str]
    natural_key: ClassVar[tuple[str, ...]] = ()
    """The fields whose values, joined by ``:``, are the natural ``_id`` (none: set ``id`` explicitly)."""

    id: Any = Field(default=None, alias="_id")

    def __init_subclass__(
        cls, collection: str | None = None, natural_key: tuple[str, ...] | None = None, **kwargs: Any
    ) -> None:
        """``class Chip(Document, collection="chip", natural_key=(...))``: a subclass declares where it
        is stored in its header; what it leaves out it inherits."""
        super().__init_subclass__(**kwargs)
        if collection is not None:
            cls.collection = collection
        if natural_key is not None:
            cls.natural_key = natural_key

    def natural_id(self) -> str:
        """The natural ``_id`` of this document (``natural_key``'s values joined by ``:``)."""
        if not self.natural_key:
            raise NotImplementedError(f"{type(self).__name__} has no natural key; set `id` explicitly")
        return ":".join(str(getattr(self, name)) for name in self.natural_key)

    def to_mongo(self) -> dict[str, Any]:
        """The document as inserted into Mongo: ``_id`` first (natural key when unset), UTC datetimes."""
        body = self.model_dump(mode="python", by_alias=False, exclude={"id"})
        doc_id = self.id if self.id is not None else self.natural_id()
        return {"_id": doc_id, **body}

    @classmethod
    def from_mongo(cls, doc: dict[str, Any]) -> Self:
        """Validate a document read from Mongo (extra upstream fields are ignored)."""
        return cls.model_validate(doc)


# "0:01:23", "1 day, 0:01:23.5", "01:23" (timedelta's str() and the older string column)
_CLOCK = re.compile(
    r"^(?:(?P<days>-?\d+) days?, )?(?:(?P<hours>\d+):)?(?P<minutes>\d+):(?P<seconds>\d+(?:\.\d*)?)$"
)


def elapsed_seconds(value: object) -> float | None:
    """``elapsed_time`` as float seconds: new rows store a float, older ones a string such as
    ``"0:01:23"`` or ``"12.3"`` (or a timedelta); anything unreadable is ``None``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, timedelta):
        return value.total_seconds()
    if not isinstance(value, str):
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        match = _CLOCK.match(text)
        if match is None:
            return None
        days, hours = int(match["days"] or 0), int(match["hours"] or 0)
        seconds = days * 86400 + hours * 3600 + int(match["minutes"]) * 60 + float(match["seconds"])
    return seconds if math.isfinite(seconds) else None
