"""The chat page in a real headless Chromium: tool progress, markdown text and a drawn Plotly chart.

Chromium is Debian's ``chromium`` driven by ``chromedriver`` through selenium; the page talks to the
app served by uvicorn on a loopback port, with plotly.js from the installed plotly package.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI

from qdash.testing.fake_llm import FakeLLMServer
from tests.api.api_helpers import LiveServer
from tests.api.test_real_assistant import script_t1_turn

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        CHROMIUM is None or CHROMEDRIVER is None,
        reason="Debian chromium + chromium-driver not found (apt-get install chromium chromium-driver)",
    ),
]


@pytest.fixture
def browser() -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    profile = tempfile.mkdtemp(prefix="qdash-chromium-")
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--window-size=1280,1000",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


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
        browser.find_element(By.ID, "token").send_keys("demo-token-alice")
        browser.find_element(By.ID, "save-token").click()
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
