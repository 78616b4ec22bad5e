"""The chat page as an investigation tool, in headless Chromium against the real assistant and the
fake LLM (a reasoning model on the Responses wire): an answer with its run figure shown inline (the
PNG fetched with the token) and a collapsible trace (reasoning, tool call with arguments, duration,
summary, figures); an ``ask_user`` choice clicked through to the next answer in the same session; a
turn stopped mid-stream that keeps its streamed text; the reopened session's ``stopped`` badge.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from pymongo.database import Database

from qdash.demo.figures import ensure_figure
from qdash.evaluation.fake_llm import Expect, FakeLLMServer, call, reasoning, turn
from tests.api.api_helpers import TOKENS, LiveServer, assistant_app, auth, fake_llm_settings, t1_run
from tests.api.browser_helpers import BROWSER_MARKS, screenshot, sign_in

pytestmark = BROWSER_MARKS

RUN = t1_run("t-ui-fig", ["fig/t1-q16.png"], execution="exec-ui")
LATEST = {"task_name": "CheckT1", "chip_id": "64Qv3", "qid": "16"}
PLAN = "Look up Q16's latest CheckT1 run first."
COMMENTARY = "Fetching the latest CheckT1 run of Q16."
T1_TEXT = {"type": "text", "content": "T1 of Q16 is **41 μs**.", "chart": None}
T1_ANSWER = {"blocks": [T1_TEXT], "assessment": "good"}
ASK = {
    "question": "Last 7 days or since the last cool-down?",
    "options": ["Last 7 days", "Since the cool-down"],
}
DRIFT_TEXT = {"type": "text", "content": "Since the cool-down Q16's T1 drifted by 3 %.", "chart": None}
DRIFT = {"blocks": [DRIFT_TEXT]}
ALICE = {"Authorization": "Bearer demo-token-alice"}
FIGURE_LOADED = "return document.querySelector('.run-figure img')?.naturalWidth || 0"
SLOW_TEXT = "Q16's T1 history since the cool-down shows a slow decline over many runs, " * 6


@pytest.fixture
async def page_app(
    tmp_path: Path, lab_db: Database[dict[str, Any]], fake_llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[FastAPI]:
    """The real app and assistant on the demo lab's tenancy plus one CheckT1 run with a rendered PNG."""
    data_dir = tmp_path / "data"
    lab_db["task_result_history"].insert_one(dict(RUN))
    ensure_figure(data_dir, RUN)  # the demo renderer: a real T1 decay plot
    settings = fake_llm_settings(fake_llm, monkeypatch, data_dir, model="gpt-5-mini")
    async with assistant_app(settings, lab_db) as app:
        yield app


def script(fake: FakeLLMServer) -> None:
    fake.script(
        turn(reasoning(PLAN), COMMENTARY, call("get_latest_task_result", LATEST)),
        turn(reasoning("The run's T1 is within the good range."), json.dumps(T1_ANSWER)),
        turn(call("ask_user", ASK)),
        turn(json.dumps(DRIFT), expect=Expect(last_user_contains="Since the cool-down")),
        turn(SLOW_TEXT, chunk_chars=6, event_delay_s=0.25),  # ~20 s of streaming: stopped long before
    )


def answers(browser: Any) -> list[Any]:
    from selenium.webdriver.common.by import By

    return list(browser.find_elements(By.CSS_SELECTOR, ".msg.assistant"))


def check_figure_and_trace(browser: Any, wait: Any) -> None:
    """The run figure, fetched with the bearer token, inline with its task, qubit and time; the
    trace collapsed, then opened: reasoning of both rounds, round 1's commentary, the call with
    arguments and outcome."""
    from selenium.webdriver.common.by import By

    browser.find_element(By.ID, "input").send_keys("How is Q16's T1?\n")
    wait.until(lambda d: d.execute_script(FIGURE_LOADED) > 100)
    first = answers(browser)[0]
    caption = first.find_element(By.CSS_SELECTOR, ".run-figure figcaption").text
    assert caption == "CheckT1 · Q16 · 64Qv3 · 11-20 10:00"  # the lab timezone: UTC here
    assert first.find_element(By.CSS_SELECTOR, ".run-figure img").get_attribute("src").startswith("blob:")
    assert "41 μs" in first.find_element(By.CSS_SELECTOR, ".body .text").text
    assert first.find_element(By.CSS_SELECTOR, ".badge.good").text == "good"

    trace = first.find_element(By.CSS_SELECTOR, "details.trace")
    assert trace.get_attribute("open") is None
    summary = trace.find_element(By.TAG_NAME, "summary")
    assert re.fullmatch(r"Trace · 1 tool call · 2 reasoning · \d+ ms in tools · [\d,]+ tokens", summary.text)
    summary.click()
    steps = trace.find_elements(By.CSS_SELECTOR, ".steps > li")
    classes = [s.get_attribute("class") for s in steps]
    assert classes == ["step reasoning", "step text", "step tool done", "step reasoning"]
    assert PLAN in steps[0].text
    said = [span.text for span in steps[1].find_elements(By.TAG_NAME, "span")]
    assert said == ["said", COMMENTARY]  # round 1's text: commentary, not the answer
    assert COMMENTARY not in first.find_element(By.CSS_SELECTOR, ".body").text
    tool = steps[2]
    assert tool.find_element(By.CSS_SELECTOR, ".tool-name").text == "get_latest_task_result"
    assert json.loads(tool.find_element(By.CSS_SELECTOR, ".arguments").text) == LATEST
    assert tool.find_element(By.CSS_SELECTOR, ".duration").text.endswith(" ms")
    assert "CheckT1" in tool.find_element(By.CSS_SELECTOR, ".summary").text
    assert tool.find_element(By.CSS_SELECTOR, ".figures").text == "1 figure"
    screenshot(browser, "investigation_figure_and_trace")


def check_choice(browser: Any, wait: Any) -> None:
    """ask_user: one button per option; a click is the next message of the same session."""
    from selenium.webdriver.common.by import By

    browser.find_element(By.ID, "input").send_keys("Did Q16 drift?\n")
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, ".choices .choice")) == 2)
    choices = answers(browser)[1].find_element(By.CSS_SELECTOR, ".choices")
    assert ASK["question"] in choices.text
    screenshot(browser, "investigation_choices")
    choices.find_elements(By.CSS_SELECTOR, ".choice")[1].click()
    wait.until(lambda d: len(answers(d)) == 3 and "drifted by 3 %" in answers(d)[2].text)
    users = [m.text for m in browser.find_elements(By.CSS_SELECTOR, ".msg.user")]
    assert users == ["How is Q16's T1?", "Did Q16 drift?", "Since the cool-down"]
    chosen = choices.find_element(By.CSS_SELECTOR, ".choice.chosen")
    assert chosen.text == "Since the cool-down" and not chosen.is_enabled()
    wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#sessions li").text.endswith("(6)"))
    assert len(browser.find_elements(By.CSS_SELECTOR, "#sessions li")) == 1


def check_stop(browser: Any, wait: Any) -> None:
    """The Stop button shows while a turn runs; the streamed text stays, marked Stopped."""
    from selenium.webdriver.common.by import By

    def streaming(d: Any) -> bool:
        return len(answers(d)) == 4 and len(answers(d)[3].find_element(By.CSS_SELECTOR, ".live").text) > 20

    assert not browser.find_element(By.ID, "stop").is_displayed()
    browser.find_element(By.ID, "input").send_keys("Why is it declining?\n")
    wait.until(streaming)
    browser.find_element(By.ID, "stop").click()
    wait.until(lambda d: "stopped" in answers(d)[3].get_attribute("class"))
    stopped = answers(browser)[3]
    assert stopped.find_element(By.CSS_SELECTOR, ".turn-state.stopped").text == "Stopped"
    kept = stopped.find_element(By.CSS_SELECTOR, ".live").text
    assert SLOW_TEXT.startswith(kept) and len(kept) < len(SLOW_TEXT) - 1
    wait.until(lambda d: not d.find_element(By.ID, "stop").is_displayed())
    screenshot(browser, "investigation_stopped")


def check_reopened_session(browser: Any, wait: Any) -> None:
    """The session reopened from the list: the stopped turn (question and answer) carries its badge."""
    from selenium.webdriver.common.by import By

    wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#sessions li").text.endswith("(8)"))
    browser.find_element(By.ID, "new-chat").click()
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#sessions li:not(.active)"))  # reloaded
    assert browser.find_elements(By.CSS_SELECTOR, ".msg") == []
    browser.find_element(By.CSS_SELECTOR, "#sessions li").click()
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, ".msg .turn-state"))
    badged = browser.find_elements(By.CSS_SELECTOR, ".msg:has(> .turn-state)")
    assert [m.get_attribute("class") for m in badged] == ["msg user", "msg assistant"]
    assert [m.find_element(By.CSS_SELECTOR, ".turn-state").text for m in badged] == ["Stopped"] * 2
    assert "Why is it declining?" in badged[0].text
    assert "Stopped by the user before the answer was complete" in badged[1].text
    wait.until(lambda d: d.execute_script(FIGURE_LOADED) > 100)  # the reopened answer's figure too
    screenshot(browser, "investigation_reopened_session")


@pytest.fixture
def alice_page(page_app: FastAPI, browser: Any) -> Iterator[str]:
    """The page served and signed in as alice; the server's base URL."""
    with LiveServer(page_app) as base:
        sign_in(browser, base, "demo-token-alice")
        yield base


def test_figure_trace_choice_and_stop_in_the_page(
    alice_page: str, fake_llm: FakeLLMServer, browser: Any
) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    script(fake_llm)
    wait = WebDriverWait(browser, 30)
    check_figure_and_trace(browser, wait)
    check_choice(browser, wait)
    check_stop(browser, wait)
    check_reopened_session(browser, wait)


def test_stop_when_the_server_has_no_running_turn_closes_the_stream(
    alice_page: str, fake_llm: FakeLLMServer, browser: Any
) -> None:
    """``POST /copilot/chat/stop`` refused (here: made to fail in the page): the page closes the
    stream itself, which cancels the run on the server, and still shows what was streamed."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    fake_llm.script(turn(SLOW_TEXT, chunk_chars=6, event_delay_s=0.25))
    wait = WebDriverWait(browser, 30)
    browser.find_element(By.ID, "input").send_keys("Why is it declining?\n")
    wait.until(lambda d: len(d.find_element(By.CSS_SELECTOR, ".msg.assistant .live").text) > 20)
    browser.execute_script("QApi.post = () => Promise.reject(new Error('No running turn'))")
    browser.find_element(By.ID, "stop").click()
    wait.until(lambda d: "stopped" in answers(d)[0].get_attribute("class"))
    kept = answers(browser)[0].find_element(By.CSS_SELECTOR, ".live").text
    assert SLOW_TEXT.startswith(kept) and len(kept) < len(SLOW_TEXT) - 1
    assert answers(browser)[0].find_element(By.CSS_SELECTOR, ".turn-state").text == "Stopped"
    assert not browser.find_element(By.ID, "stop").is_displayed()
    session = browser.execute_script("return state.sessionId")
    stop = {"url": f"{alice_page}/copilot/chat/stop", "json": {"session_id": session}, "headers": ALICE}
    wait.until(lambda _: httpx.post(**stop, timeout=5).status_code == 404)  # the run is gone


def test_reopened_sessions_show_turn_states_and_only_the_newest_choices_are_live(
    app: FastAPI, db: Database[dict[str, Any]], browser: Any
) -> None:
    """Sessions as a crash, a running turn and a question left them: each message with a ``state``
    gets its badge; an older answer's options are shown but disabled, the newest answer's are live."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    choices = {"question": ASK["question"], "options": ASK["options"]}
    asked = json.dumps({"blocks": [{"type": "choices", "content": ASK["question"], "choices": choices}]})
    messages = [
        {"role": "user", "content": "Did Q16 drift?"},
        {"role": "assistant", "content": asked},
        {"role": "user", "content": "Why did Q16 drop?"},
        {"role": "assistant", "content": "Error: interrupted (the server stopped mid-turn)"},
        {"role": "user", "content": "Compare with Q17"},
    ]
    older = {"session_id": "older", "title": "Older", "messages": messages}
    newest = {"session_id": "asked", "title": "Asked", "messages": messages[:2]}
    with LiveServer(app) as base:
        for body in (older, newest):
            created = httpx.post(f"{base}/copilot/chat/sessions", json=body, headers=auth(), timeout=10)
            assert created.status_code == 200, created.text
        # States are the server's own record (a client cannot send them): as a crash left them.
        states = {
            "messages.2.state": "interrupted",
            "messages.3.state": "interrupted",
            "messages.4.state": "running",
        }
        db["copilot_project_chat_session"].update_one({"session_id": "older"}, {"$set": states})
        sign_in(browser, base, TOKENS["alice"])
        wait = WebDriverWait(browser, 30)
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#sessions li")) == 2)
        browser.find_element(By.CSS_SELECTOR, "#sessions li[data-session-id='older']").click()
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, ".msg")) == len(messages))
        badges = browser.execute_script(
            "return [...document.querySelectorAll('.msg')]"
            ".map((m) => m.querySelector('.turn-state')?.textContent || '')"
        )
        assert badges == ["", "", "Interrupted", "Interrupted", "Running"]
        assert [b.is_enabled() for b in browser.find_elements(By.CSS_SELECTOR, ".choice")] == [False, False]
        screenshot(browser, "session_turn_states")

        browser.find_element(By.CSS_SELECTOR, "#sessions li[data-session-id='asked']").click()
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, ".msg")) == 2)
        assert [b.is_enabled() for b in browser.find_elements(By.CSS_SELECTOR, ".choice")] == [True, True]
