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
from api_helpers import TOKENS, FakeAssistant, LiveServer
from fastapi import FastAPI

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


def test_chat_page_streams_tools_text_and_chart(app: FastAPI, fake: FakeAssistant, browser: Any) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    with LiveServer(app) as base:
        browser.get(f"{base}/copilot/ui")
        wait = WebDriverWait(browser, 20)
        browser.find_element(By.ID, "token").send_keys(TOKENS["alice"])
        browser.find_element(By.ID, "save-token").click()
        wait.until(lambda d: d.find_element(By.ID, "project").get_attribute("value") == "proj-a")
        options = [o.text for o in browser.find_elements(By.CSS_SELECTOR, "#project option")]
        assert options == ["Lab A (owner)", "Lab B (viewer)"]

        browser.find_element(By.ID, "input").send_keys("How is the T1 of Q16?")
        browser.find_element(By.ID, "send").click()

        wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, ".msg.assistant .chart svg.main-svg")))
        done = browser.find_elements(By.CSS_SELECTOR, "#progress .line.done")
        assert [line.get_attribute("data-label") for line in done] == ["Fetching qubit parameters"]
        title = browser.find_element(By.CSS_SELECTOR, ".msg.assistant .chart .gtitle")
        assert title.text == "T1 of Q16"
        answer = browser.find_element(By.CSS_SELECTOR, ".msg.assistant")
        assert answer.find_element(By.CSS_SELECTOR, "strong").text == "T1"
        assert [c.text for c in answer.find_elements(By.CSS_SELECTOR, "table td")] == ["16", "40"]
        assert answer.find_element(By.CSS_SELECTOR, ".badge.good").text == "good"
        traces = browser.execute_script("return document.querySelector('.msg.assistant .chart').data.length")
        assert traces == 1
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#sessions li")) == 1)
        ARTIFACTS.mkdir(exist_ok=True)
        browser.save_screenshot(str(ARTIFACTS / "chat_page.png"))
        assert fake.calls[0][1].session_id
        assert browser.execute_script("return localStorage.getItem('qdash.token')") == TOKENS["alice"]


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
