"""Values upstream QDash stored in more than one form: ``elapsed_time`` and naive note timestamps."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from qdash.repositories.upstream_values import elapsed_seconds, lab_moment


@pytest.mark.parametrize(
    ("stored", "seconds"),
    [
        (12.5, 12.5),
        (3, 3.0),
        ("12.3", 12.3),
        ("0:01:23", 83.0),
        ("01:23", 83.0),
        ("1:00:00.5", 3600.5),
        ("1 day, 0:00:10", 86410.0),
        (timedelta(minutes=2), 120.0),
        ("soon", None),
        (None, None),
        (True, None),
        (float("nan"), None),
    ],
)
def test_elapsed_time_in_every_stored_form(stored: object, seconds: float | None) -> None:
    assert elapsed_seconds(stored) == seconds


def test_naive_note_strings_are_lab_local_and_datetimes_utc() -> None:
    tokyo = ZoneInfo("Asia/Tokyo")
    assert lab_moment("2026-03-01 18:00:00", tokyo) == datetime(2026, 3, 1, 9, tzinfo=UTC)
    assert lab_moment("2026-03-01T18:00:00+00:00", tokyo) == datetime(2026, 3, 1, 18, tzinfo=UTC)
    assert lab_moment(datetime(2026, 3, 1, 18), tokyo) == datetime(2026, 3, 1, 18, tzinfo=UTC)
    assert lab_moment("yesterday", tokyo) is None
