"""The chat page in a real headless Chromium: tool progress, markdown text and a drawn Plotly chart;
what it says before the first question (demo users, models, suggestions); sign-in errors; 420 px.

Chromium is Debian's ``chromium`` driven by ``chromedriver`` through selenium; the page talks to the
app served by uvicorn on a loopback port, with plotly.js from the installed plotly package.
Screenshots go to ``test-artifacts/screenshots/`` (git-ignored; each path is printed).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI

from qdash.api.app import create_app
from qdash.copilot.demo_model import with_demo_model
from qdash.evaluation.fake_llm import FakeLLMServer
from qdash.settings import load_settings
from tests.api.api_helpers import TOKENS, LiveServer, copy_seeded_lab
from tests.api.browser_helpers import ARTIFACTS, BROWSER_MARKS, screenshot
from tests.api.test_models import _closed_port
from tests.api.test_real_assistant import script_t1_turn

pytestmark = BROWSER_MARKS


def test_chat_page_with_the_real_assistant(real_app: FastAPI, fake_llm: FakeLLMServer, browser: Any) -> None:
    """A question typed into the page runs the real assistant (tool on demo data, fake LLM) and the
    page shows the finished tool, the markdown text, the badge and a drawn Plotly chart."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    script_t1_turn(fake_llm)
    with LiveServer(real_app) as base:
        browser.get(f"{base}/copilot/ui")
        wait = WebDriverWait(browser, 30)
        browser.find_element(By.ID, "token").send_keys("demo-token-alice\n")  # Enter signs in
        wait.until(lambda d: d.find_element(By.ID, "project").get_attribute("value") == "proj-demo")
        assert browser.find_element(By.ID, "auth-status").text == "Signed in as alice"

        browser.find_element(By.ID, "input").send_keys("How is the T1 of Q16?")
        browser.find_element(By.ID, "send").click()

        wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, ".msg.assistant .chart svg.main-svg")))
        done = browser.find_elements(By.CSS_SELECTOR, "#progress .line.done")
        assert [line.get_attribute("data-label") for line in done] == ["Fetching qubit parameters"]
        answer = browser.find_element(By.CSS_SELECTOR, ".msg.assistant")
        assert answer.find_element(By.CSS_SELECTOR, ".text strong").text == "T1"
        assert "looks healthy" in answer.find_element(By.CSS_SELECTOR, ".text").text
        assert answer.find_element(By.CSS_SELECTOR, ".badge.good").text == "good"
        assert answer.find_element(By.CSS_SELECTOR, ".chart .gtitle").text == "T1 (μs)"
        assert (
            browser.execute_script("return document.querySelector('.msg.assistant .chart').data.length") == 1
        )
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#sessions li")) == 1)
        ARTIFACTS.mkdir(exist_ok=True)
        browser.save_screenshot(str(ARTIFACTS / "chat_page.png"))


def test_markdown_renderer_escapes_html(app: FastAPI, browser: Any) -> None:
    with LiveServer(app) as base:
        browser.get(f"{base}/copilot/ui")
        html = browser.execute_script(
            "return QMarkdown.render(arguments[0])",
            "# Title\n<script>alert(1)</script> **b** `<i>`\n\n- one\n- two\n\n1. x\n\n```\n<b>\n```",
        )
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<h1>Title</h1>" in html and "<strong>b</strong>" in html and "<code>&lt;i&gt;</code>" in html
    assert "<ul><li>one</li><li>two</li></ul>" in html and "<ol><li>x</li></ol>" in html
    assert "<pre><code>&lt;b&gt;</code></pre>" in html


@pytest.fixture
def no_key_app(demo_lab: Any, mongo_db: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FastAPI:
    """What the README's first command serves with no API key and no Ollama: the whole small demo
    lab (copied, so the chat may write), the default model catalogue, the demo-model fallback."""
    copy_seeded_lab(demo_lab, mongo_db)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    settings = load_settings(
        database={"mongo_uri": None, "data_dir": str(tmp_path / "data")},
        copilot={"models": {"ollama": {"base_url": f"http://127.0.0.1:{_closed_port()}/v1"}}},
    )
    return create_app(with_demo_model(settings), db=mongo_db)


def test_first_answer_with_no_key_from_a_demo_user_and_a_suggestion(
    no_key_app: FastAPI, browser: Any
) -> None:
    """Empty state → one click on a demo user → the demo model listed → one click on a suggestion →
    an answer with a drawn chart; a wrong token then clears the conversation and shows the detail."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    with LiveServer(no_key_app) as base:
        browser.get(f"{base}/copilot/ui")
        wait = WebDriverWait(browser, 60)
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#demo-user-buttons .chip"))
        users = [b.text for b in browser.find_elements(By.CSS_SELECTOR, "#demo-user-buttons .chip")]
        assert users == ["alice", "bob", "carol"]  # dave is disabled
        assert "pick a demo user" in browser.find_element(By.ID, "welcome").text
        screenshot(browser, "empty_state")

        browser.find_element(By.CSS_SELECTOR, "#demo-user-buttons .chip").click()
        wait.until(lambda d: d.find_element(By.ID, "auth-status").text == "Signed in as alice")
        assert browser.find_element(By.ID, "token").get_attribute("value") == "demo-token-alice"
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#model-list li.ok"))
        models = browser.find_element(By.ID, "model-list").text
        assert "demo (default): demo model: scripted answers" in models
        assert not browser.find_element(By.ID, "model-help").is_displayed()
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#suggestions .chip"))
        questions = [b.text for b in browser.find_elements(By.CSS_SELECTOR, "#suggestions .chip")]
        assert questions[0] == "Which qubits lost T1 this week?"
        screenshot(browser, "signed_in_empty_state")

        browser.find_element(By.CSS_SELECTOR, "#suggestions .chip").click()
        wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, ".msg.assistant .chart svg.main-svg")))
        answer = browser.find_element(By.CSS_SELECTOR, ".msg.assistant")
        assert "qubits lost T1" in answer.find_element(By.CSS_SELECTOR, ".text strong").text
        assert answer.find_elements(By.CSS_SELECTOR, ".text table tr")
        done = [
            e.get_attribute("data-label")
            for e in browser.find_elements(By.CSS_SELECTOR, "#progress .line.done")
        ]
        assert done == ["Fetching chip-wide parameter timeseries", "Executing Python analysis"]
        assert not browser.find_element(By.ID, "welcome").is_displayed()
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#sessions li")) == 1)
        browser.set_window_size(1280, 1400)  # the whole answer, chart included
        screenshot(browser, "demo_model_answer")

        token = browser.find_element(By.ID, "token")
        token.clear()
        token.send_keys("not-a-token\n")
        wait.until(lambda d: d.find_element(By.ID, "auth-status").text == "Invalid access token")
        assert browser.find_elements(By.CSS_SELECTOR, ".msg") == []
        assert (
            browser.find_elements(By.CSS_SELECTOR, "#sessions li, #project option, #suggestions .chip") == []
        )
        assert not browser.find_element(By.ID, "models").is_displayed()


def test_no_reachable_model_says_how_to_add_one_and_errors_show_the_detail(
    app: FastAPI, browser: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only an OpenAI model without its key: the page says how to add a key or an Ollama model; a
    refused request shows the server's detail, never a bare HTTP status."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    app.state.settings = load_settings(
        database={"mongo_uri": None, "data_dir": str(tmp_path)},
        copilot={"models": {"ollama": {"base_url": f"http://127.0.0.1:{_closed_port()}/v1"}}},
    )
    with LiveServer(app) as base:
        browser.get(f"{base}/copilot/ui")
        wait = WebDriverWait(browser, 30)
        assert not browser.find_element(By.ID, "demo-users").is_displayed()  # not the demo lab
        browser.find_element(By.ID, "token").send_keys(TOKENS["alice"] + "\n")
        wait.until(lambda d: d.find_element(By.ID, "model-help").is_displayed())
        assert "OPENAI_API_KEY" in browser.find_element(By.ID, "model-help").text
        assert "ollama pull" in browser.find_element(By.ID, "model-help").text
        browser.execute_script("localStorage.setItem('qdash.project', 'proj-nope')")
        browser.find_element(By.ID, "input").send_keys("hello\n")
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, ".msg.assistant.error"))
        error = browser.find_element(By.CSS_SELECTOR, ".msg.assistant.error").text
        assert error == "Error: Not a member of project proj-nope"


def test_layout_fits_a_420_px_window(app: FastAPI, browser: Any) -> None:
    from selenium.webdriver.common.by import By

    browser.set_window_size(420, 900)
    with LiveServer(app) as base:
        browser.get(f"{base}/copilot/ui")
        width = browser.execute_script("return document.documentElement.scrollWidth")
        inner = browser.execute_script("return window.innerWidth")
        assert width <= inner, f"horizontal scroll at 420 px: content {width} px wide"
        sidebar = browser.find_element(By.ID, "sidebar").rect
        composer = browser.find_element(By.ID, "composer").rect
        assert composer["y"] > sidebar["y"] + sidebar["height"] - 1, "the sidebar stacks above the chat"
        assert browser.find_element(By.ID, "send").is_displayed()
        height = browser.execute_script("return window.innerHeight")
        assert composer["y"] + composer["height"] <= height + 1, "question box off screen"
        screenshot(browser, "narrow_420px")
