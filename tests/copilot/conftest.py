"""Fixtures for the assistant tests: assistants that are closed when their test ends.

An ``Assistant`` builds its model clients lazily; they use aiohttp sessions tied to the test's event
loop, and one dropped unclosed logs "Unclosed client session" / "Unclosed connector" whenever it
happens to be collected, often inside a later test. ``make_assistant`` closes every assistant it
built in the test's own loop, as the server's lifespan does at shutdown.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from qdash.copilot.assistant import Assistant

AssistantFactory = Callable[..., Assistant]


@pytest.fixture
async def make_assistant() -> AsyncIterator[AssistantFactory]:
    """``Assistant(...)`` with the same arguments, closed (``aclose``) at teardown."""
    built: list[Assistant] = []

    def make(*args: Any, **kwargs: Any) -> Assistant:
        assistant = Assistant(*args, **kwargs)
        built.append(assistant)
        return assistant

    yield make
    for assistant in built:
        await assistant.aclose()
