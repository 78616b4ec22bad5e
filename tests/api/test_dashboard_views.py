"""What a user of each upstream dashboard sees for a run figure and for the newest dashboard's own
suggestion buttons, on the demo lab with the demo model (no key), over a loopback socket.

Each dashboard's stream handling and drawing rules are ``dashboard_clients`` (from the researched
upstream sources). An image counts as seen only when the URL the dashboard would load answers a
PNG: the newest dashboard's proxy turns ``/api/executions/figure`` into ``/executions/figure`` with
the session cookie's token as a bearer header; an older rewrite keeps ``/api/…`` and forwards the
cookie itself.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

import httpx
from fastapi import FastAPI

from tests.api.dashboard_clients import (
    NewDashboardTurn,
    OldDashboardTurn,
    images,
    new_dashboard_view,
    old_dashboard_view,
    visible_text,
)
from tests.api.test_upstream_dialect import new_body
from tests.copilot.demo_model.test_demo_model import UPSTREAM_SUGGESTIONS

TOKEN = "demo-token-alice"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
FIGURE_CLICK = "Latest T1 figure of Q16"
"""The demo's own option after "Show me the latest T1 figure" (a click sends it as the message)."""


def turn(http: httpx.Client, body: dict[str, Any], client: NewDashboardTurn | OldDashboardTurn) -> str:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    with http.stream("POST", "/copilot/chat/stream", json=body, headers=headers) as response:
        assert response.status_code == 200, response.read()
        client.consume(list(response.iter_raw()))
    (saved,) = client.saved
    return saved


def old_view(http: httpx.Client, message: str) -> list[dict[str, Any]]:
    """The older dashboard's page: ``{message, conversation_history}`` only."""
    return old_dashboard_view(
        turn(http, {"message": message, "conversation_history": []}, OldDashboardTurn())
    )


def new_view(http: httpx.Client, message: str) -> list[dict[str, Any]]:
    body = {**new_body(message), "session_id": f"s-{uuid.uuid4().hex[:8]}"}
    return new_dashboard_view(turn(http, body, NewDashboardTurn()))


def load_old(http: httpx.Client, url: str) -> httpx.Response:
    """An ``<img src>`` of the older dashboard: rewritten as is, with the browser's cookie."""
    return http.get(url, headers={"Cookie": f"access_token={TOKEN}"})


def load_new(http: httpx.Client, url: str) -> httpx.Response:
    """An ``<img src>`` of the newest dashboard through its catch-all proxy."""
    return http.get(url.removeprefix("/api"), headers={"Authorization": f"Bearer {TOKEN}"})


def test_a_run_figure_is_seen_in_both_dashboards(demo_app: FastAPI) -> None:
    from tests.api.api_helpers import LiveServer

    with LiveServer(demo_app) as base, httpx.Client(base_url=base, timeout=60) as http:
        old = old_view(http, FIGURE_CLICK)
        new = new_view(http, FIGURE_CLICK)
        for view, load in ((old, load_old), (new, load_new)):
            text = visible_text(view)
            assert "**CheckT1** on Q16" in text and "figure is shown with this answer" in text
            (url,) = images(view)
            assert url.startswith("/api/executions/figure?path=")
            shown = load(http, url)
            assert shown.status_code == 200 and shown.content.startswith(PNG_MAGIC)
            assert shown.headers["content-type"] == "image/png"
        # The older dashboard draws the image inside the answer, with its caption under it.
        assert re.search(
            r"!\[Run figure: CheckT1 · 16 · \w+ · [^\]]+\]\(/api/executions/figure", text := visible_text(old)
        )
        assert "\n\nRun figure: CheckT1 · 16" in text
        # The newest one draws the strip of the tool steps' figures above the answer.
        assert new[0]["kind"] == "figures"
        # Another user without the project sees nothing.
        (url,) = images(new)
        assert http.get(url, headers={"Cookie": "access_token=demo-token-bob"}).status_code == 404


ASKED = [
    ("Show T1 trend for Q00", r"\*\*T1 of Q0\*\*", r"First to last: [+-]\d"),
    ("What are Q00's current parameters?", r"\*\*Q0\*\* on chip", r"\| t1 \| [\d.]+ μs"),
    ("Compare T1 and T2 for Q01", r"\*\*T1 and T2 echo of Q1\*\*", r"\| T2 echo \| \d+ \|"),
    ("Show gate fidelity history for Q00", r"X90 gate fidelity", r"\| X180 gate fidelity \| \d+ \|"),
    ("Compare Q3 and Q7", r"\*\*Q3 vs Q7\*\*", r"\| T1 \| [\d.]+ \| [\d.]+ \| μs \|"),
]


def test_the_newest_dashboards_suggestions_are_answered_as_asked_in_both(demo_app: FastAPI) -> None:
    """The newest dashboard's own buttons, verbatim, and a two-qubit comparison: each answer is the
    one asked for (one qubit's trend, two parameters, a history, two qubits), seen in both."""
    assert [asked for asked, _, _ in ASKED[:4]] == list(UPSTREAM_SUGGESTIONS)
    from tests.api.api_helpers import LiveServer

    with LiveServer(demo_app) as base, httpx.Client(base_url=base, timeout=60) as http:
        for asked, title, detail in ASKED:
            for view in (old_view(http, asked), new_view(http, asked)):
                text = visible_text(view)
                assert re.search(title, text) and re.search(detail, text), (asked, text)
                assert "qubits lost" not in text and "I cannot answer" not in text, (asked, text)
        q3_q7 = visible_text(old_view(http, "Compare Q3 and Q7"))
        assert "Q7" in q3_q7.splitlines()[0] and "| parameter | Q3 | Q7 | unit |" in q3_q7


def test_a_question_it_cannot_answer_says_so_and_lists_what_it_can(demo_app: FastAPI) -> None:
    from tests.api.api_helpers import LiveServer

    with LiveServer(demo_app) as base, httpx.Client(base_url=base, timeout=60) as http:
        for view in (
            old_view(http, "Why is Q3 worse than last month?"),
            new_view(http, "Summarise the fridge log"),
        ):
            text = visible_text(view)
            assert text.startswith("I cannot answer that one") and "Compare T1 and T2 for Q16" in text
            assert json.dumps(view)  # drawn: plain markdown only
