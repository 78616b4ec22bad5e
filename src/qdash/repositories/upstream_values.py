"""Tolerant readers for values upstream QDash stored in more than one form over its versions.

Why here: a lab's database holds documents from several upstream releases, and every tool must read
them the same way; one place converts the older forms to what the tools expect.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, tzinfo

EPOCH = datetime.min.replace(tzinfo=UTC)
"""Sorts before every stored time (missing times last in a newest-first sort)."""


def as_utc(value: object) -> datetime | None:
    """A stored datetime as an aware one (naive values from the store are UTC), else ``None``."""
    if not isinstance(value, datetime):
        return None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def lab_moment(value: object, lab_zone: tzinfo) -> datetime | None:
    """A stored timestamp as an aware datetime.

    Datetimes read from MongoDB are UTC (naive ones too: BSON dates carry no zone). Strings are what
    the Qubex backend writes into calibration notes: naive local time of the lab's workers, so a
    naive string is read in ``lab_zone`` (the ``lab.timezone`` setting); a string with an offset
    keeps it.
    """
    if not isinstance(value, str):
        return as_utc(value)
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=lab_zone)


_LABELLED_QUBIT = re.compile(r"^[Qq]?0*(\d+)$")


def canonical_qid(stored: object) -> str:
    """A stored qid in our form: ``"Q40"``/``"Q05"``/``"05"`` → ``"40"``/``"5"``/``"5"``,
    ``"Q16-Q22"`` → ``"16-22"``.

    Upstream's task executor writes ``"40"``; versions imported from a Qubex seed carry the Qubex
    label (``"Q40"``) and its seed import writes qubit ``"Q05"`` as ``"05"``. Anything else is
    returned unchanged.
    """
    text = "" if stored is None else str(stored)
    parts = text.split("-")
    matches = [_LABELLED_QUBIT.match(part) for part in parts]
    if len(parts) > 2 or not all(matches):
        return text
    return "-".join(str(int(m.group(1))) for m in matches if m is not None)


def stored_qid_spellings(qids: list[str]) -> list[str]:
    """Every form the ids ``qids`` (ours: ``"5"``, ``"16-22"``) may be stored under: as given, with
    Qubex labels, plain (``"Q5"``) and zero-padded (``"Q05"``), and zero-padded bare (``"05"``)."""
    found: list[str] = []
    for qid in qids:
        parts = qid.split("-")
        found.append(qid)
        if all(part.isdigit() for part in parts):
            found.append("-".join(f"Q{part}" for part in parts))
            found.append("-".join(f"Q{int(part):02d}" for part in parts))
            found.append("-".join(f"{int(part):02d}" for part in parts))
    return list(dict.fromkeys(found))
