"""Values upstream QDash stored in more than one form: ``elapsed_time`` and naive note timestamps."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from qdash.models.common import elapsed_seconds
from qdash.repositories.upstream_values import canonical_qid, lab_moment, stored_qid_spellings


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


def test_qubex_labelled_qids_read_as_ours() -> None:
    assert [canonical_qid(q) for q in ("Q40", "Q05", "q5", "Q16-Q22", "16", "0-1", "", None, "05")] == [
        "40", "5", "5", "16-22", "16", "0-1", "", "", "5",
    ]  # fmt: skip
    assert canonical_qid("QA") == "QA" and canonical_qid("Q1-Q2-Q3") == "Q1-Q2-Q3"
    assert stored_qid_spellings(["5"]) == ["5", "Q5", "Q05", "05"]
    assert stored_qid_spellings(["16-22", "22-16"]) == ["16-22", "Q16-Q22", "22-16", "Q22-Q16"]
