"""Copilot sessions and data-store entries."""

from __future__ import annotations

from datetime import UTC, datetime

from qdash.models import ChatMessage, CopilotChatSession, CopilotDataStoreEntry


def test_session_counts_its_messages_and_round_trips() -> None:
    session = CopilotChatSession(
        project_id="proj-demo",
        username="alice",
        session_id="s1",
        messages=[
            ChatMessage(role="user", content="T1 of Q16?"),
            ChatMessage(role="assistant", content="45 μs"),
        ],
        message_count=0,
    )
    assert session.message_count == 2
    doc = session.to_mongo()
    assert doc["_id"] == "proj-demo:alice:s1"
    assert CopilotChatSession.from_mongo(doc).messages[1].content == "45 μs"


def test_data_store_entry_keeps_bytes() -> None:
    entry = CopilotDataStoreEntry(
        project_id="proj-demo",
        username="alice",
        session_id="s1",
        key="t1",
        value=b"\x1f\x8b compressed",
        size_bytes=13,
        expires_at=datetime(2026, 2, 28, tzinfo=UTC),
    )
    doc = entry.to_mongo()
    assert doc["_id"] == "proj-demo:alice:s1:t1"
    assert CopilotDataStoreEntry.from_mongo(doc).value == b"\x1f\x8b compressed"
