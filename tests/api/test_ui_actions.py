"""The chat page's approval card in Chromium: the model's proposal shows the label and each
argument with Approve / Decline; Approve sends the decision, the server writes, the card says
"Approved: …" and the trace shows the write. Screenshot: ``test-artifacts/screenshots/``."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from pymongo.database import Database

from qdash.evaluation.fake_llm import FakeLLMServer, call, turn
from tests.api.api_helpers import LiveServer
from tests.api.browser_helpers import BROWSER_MARKS, screenshot, sign_in
from tests.api.conftest import ACTION_TASK

pytestmark = BROWSER_MARKS
DONE = '{"blocks": [{"type": "text", "content": "Excluded from the statistics.", "chart": null}]}'


def test_approval_card_approve(
    actions_app: FastAPI, fake_llm: FakeLLMServer, lab_db: Database[dict[str, Any]], browser: Any
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    fake_llm.script(
        turn(call("exclude_task_result", {"task_id": ACTION_TASK, "reason": "TLS spike at 10:00"})),
        turn(DONE),
    )
    with LiveServer(actions_app) as base:
        sign_in(browser, base, "demo-token-alice")
        wait = WebDriverWait(browser, 30)
        browser.find_element(By.ID, "input").send_keys(
            "Exclude Q16's latest CheckT1 result from the statistics"
        )
        browser.find_element(By.ID, "send").click()

        card = wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, ".msg.assistant .approval")))
        assert card.find_element(By.CSS_SELECTOR, ".approval-label").text.startswith("Exclude CheckT1 on Q16")
        args = [e.text for e in card.find_elements(By.CSS_SELECTOR, ".approval-args dt, .approval-args dd")]
        assert args == ["task_id", ACTION_TASK, "reason", "TLS spike at 10:00"]
        screenshot(browser, "approval_card")
        assert lab_db["task_result_history"].find_one({"task_id": ACTION_TASK}).get("excluded") is None  # type: ignore[union-attr]

        card.find_element(By.CSS_SELECTOR, "button.approve").click()
        wait.until(
            lambda d: (
                "Excluded from the statistics." in d.find_elements(By.CSS_SELECTOR, ".msg.assistant")[-1].text
            )
        )
        assert card.find_element(By.CSS_SELECTOR, ".approval-decided").text.startswith(
            "Approved: Exclude CheckT1"
        )
        assert all(not b.is_enabled() for b in card.find_elements(By.CSS_SELECTOR, "button"))
        assert browser.find_elements(By.CSS_SELECTOR, ".msg.user")[-1].text.startswith(
            "Approved: Exclude CheckT1"
        )
        screenshot(browser, "approval_card_approved")
    assert lab_db["task_result_history"].find_one({"task_id": ACTION_TASK})["excluded"] is True  # type: ignore[index]
