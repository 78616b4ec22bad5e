"""The chat page's Reviews view in headless Chromium: reviews made by a real bulk job (``POST
/copilot/reviews``, guards then the fake LLM's verdicts) listed with decision badges, filtered by
decision, task, chip and label exactly as ``GET /copilot/reviews`` filters them, and one review opened
with its note and the result's own figure (the demo renderer's PNG, fetched with the token)."""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from pymongo.database import Database

from qdash.evaluation.fake_llm import FakeLLMServer, RecordedRequest
from tests.api.api_helpers import LiveServer, assistant_app, fake_llm_settings
from tests.api.browser_helpers import BROWSER_MARKS, screenshot, sign_in
from tests.served import LOOPBACK

pytestmark = BROWSER_MARKS

ALICE = {"Authorization": "Bearer demo-token-alice"}  # owner of proj-demo: may start reviews
QIDS = [str(q) for q in range(10, 16)]
TASKS = ["CheckT1", "CheckRabi"]
VERDICTS = [("PASS", "CORRECT"), ("PASS_WITH_NOTE", "CORRECT"), ("REVIEW", "SUSPICIOUS"), ("FAIL", "ANOMALY")]


@pytest.fixture
async def reviews_app(
    tmp_path: Path,
    demo_lab: Any,
    lab_db: Database[dict[str, Any]],
    fake_llm: FakeLLMServer,
    monkeypatch: pytest.MonkeyPatch,
) -> AsyncIterator[FastAPI]:
    """The demo lab's CheckT1 and CheckRabi results of six qubits of 64Qv3, in a writable copy."""
    query = {"project_id": "proj-demo", "chip_id": "64Qv3", "name": {"$in": TASKS}, "qid": {"$in": QIDS}}
    lab_db["task_result_history"].insert_many(list(demo_lab.db["task_result_history"].find(query)))
    settings = fake_llm_settings(fake_llm, monkeypatch, tmp_path / "data", analysis={"multimodal": False})
    async with assistant_app(settings, lab_db) as app:
        yield app


def verdicts(fake: FakeLLMServer) -> None:
    """The model's verdicts cycle through the four decisions (guards may still force FAIL/REVIEW)."""
    cycle = itertools.cycle(VERDICTS)
    lock = threading.Lock()

    def respond(_request: RecordedRequest) -> str:
        with lock:
            decision, label = next(cycle)
        verdict = {
            "decision": decision,
            "label": label,
            "accepted_parameters": [],
            "questioned_parameters": [],
            "reason": f"Scripted {decision.lower()} verdict for the page test.",
            "closest_knowledge_case": "none",
            "suggested_labels": [],
            "recommended_action": "Compare with the previous run.",
            "note": "",
        }
        return json.dumps(verdict)

    fake.respond_with(respond)


def run_job(base: str) -> int:
    """A bulk review job over HTTP, waited for; the number of results it reviewed."""
    body = {"chip_id": "64Qv3", "task_names": TASKS, "qids": QIDS}
    started = httpx.post(f"{base}/copilot/reviews", json=body, headers=ALICE, timeout=30)
    assert started.status_code == 202, started.text
    job_url = f"{base}/copilot/reviews/jobs/{started.json()['job_id']}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        job = LOOPBACK.get(job_url, headers=ALICE, timeout=10).json()
        if job["status"] == "completed":
            return int(job["progress"]["done"])
        time.sleep(0.3)
    raise AssertionError(f"review job not done: {job}")


def api_ids(base: str, **filters: str) -> list[str]:
    response = httpx.get(f"{base}/copilot/reviews", params=filters, headers=ALICE, timeout=10)
    return [r["review_id"] for r in response.json()["reviews"]]


ROWS = """return [...document.querySelectorAll('#review-rows tr')].map((tr) => [
  tr.dataset.reviewId, tr.querySelector('.decision').textContent, tr.children[2].textContent])"""


def shown(browser: Any) -> list[tuple[str, str, str]]:
    """(review id, decision badge, task) of each listed row, read in one script (the list may be
    rebuilt between two WebDriver calls)."""
    return [tuple(row) for row in browser.execute_script(ROWS)]


def test_reviews_view_lists_filters_and_opens_a_figure(
    reviews_app: FastAPI, fake_llm: FakeLLMServer, browser: Any
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    verdicts(fake_llm)
    wait = WebDriverWait(browser, 30)
    with LiveServer(reviews_app) as base:
        assert run_job(base) >= len(QIDS) * len(TASKS)
        every = api_ids(base)  # the newest review per task and qubit
        assert len(every) == len(QIDS) * len(TASKS)
        sign_in(browser, base, "demo-token-alice")
        browser.find_element(By.ID, "show-reviews").click()
        wait.until(lambda d: len(shown(d)) == len(every))
        assert [row[0] for row in shown(browser)] == every
        assert not browser.find_element(By.ID, "chat-view").is_displayed()
        assert browser.find_element(By.ID, "reviews-status").text == f"{len(every)} reviews"
        decisions = {row[1] for row in shown(browser)}
        assert decisions <= {"PASS", "PASS_WITH_NOTE", "REVIEW", "FAIL"} and len(decisions) >= 3
        screenshot(browser, "reviews_list")

        Select(browser.find_element(By.ID, "review-decision")).select_by_visible_text("REVIEW")
        expected = api_ids(base, decision="REVIEW")
        wait.until(lambda d: [row[0] for row in shown(d)] == expected)
        assert {row[1] for row in shown(browser)} == {"REVIEW"}

        Select(browser.find_element(By.ID, "review-decision")).select_by_index(0)  # any decision
        browser.find_element(By.ID, "review-task").send_keys("CheckRabi")
        browser.find_element(By.ID, "review-chip").send_keys("64Qv3\n")
        expected = api_ids(base, task_name="CheckRabi", chip_id="64Qv3")
        wait.until(lambda d: [row[0] for row in shown(d)] == expected)
        assert {row[2] for row in shown(browser)} == {"CheckRabi"} and len(expected) == len(QIDS)

        Select(browser.find_element(By.ID, "review-label")).select_by_visible_text("MISASSIGNMENT")
        wait.until(
            lambda d: d.find_element(By.ID, "reviews-status").text == "No reviews match these filters."
        )
        assert shown(browser) == [] and api_ids(base, label="MISASSIGNMENT", task_name="CheckRabi") == []
        Select(browser.find_element(By.ID, "review-label")).select_by_index(0)
        wait.until(lambda d: len(shown(d)) == len(QIDS))

        # One review opened: its note and the result's figure.
        row = browser.find_element(By.CSS_SELECTOR, "#review-rows tr")
        row.click()
        detail = browser.find_element(By.ID, "review-detail")
        wait.until(
            lambda d: (
                d.execute_script("return document.querySelector('#review-detail img')?.naturalWidth || 0")
                > 100
            )
        )
        wait.until(lambda d: "AI review" in detail.find_element(By.CSS_SELECTOR, ".note").text)
        assert "selected" in row.get_attribute("class")
        assert detail.find_element(By.CSS_SELECTOR, "h3").text.startswith("CheckRabi · Q")
        assert "Decision:" in detail.find_element(By.CSS_SELECTOR, ".note").text
        screenshot(browser, "reviews_figure")

        browser.set_window_size(420, 900)  # a phone: the list scrolls inside, the page does not
        width = browser.execute_script("return document.documentElement.scrollWidth")
        assert width <= browser.execute_script("return window.innerWidth"), f"page {width} px wide"
        assert browser.find_element(By.ID, "reviews-list").rect["height"] > 100, "the list squeezed away"
        screenshot(browser, "reviews_narrow_420px")

        browser.find_element(By.ID, "show-chat").click()
        assert browser.find_element(By.ID, "composer").is_displayed()
        assert not browser.find_element(By.ID, "reviews-view").is_displayed()
