"""Browser screenshots of a run figure answer and of the upstream dashboard's suggestion shapes on
the demo model: our chat page, and a page that draws the same answers by each upstream dashboard's
rules (``dashboard_clients``) in a real Chromium, loading the images from
``/api/executions/figure`` with the dashboard's ``access_token`` cookie as an ``<img src>`` does.

Screenshots: ``test-artifacts/screenshots/`` (git-ignored; each path is printed).
"""

from __future__ import annotations

import html
from typing import Any

import httpx
from fastapi import FastAPI

from tests.api.api_helpers import LiveServer
from tests.api.browser_helpers import BROWSER_MARKS, screenshot, sign_in
from tests.api.dashboard_clients import MARKDOWN_IMAGE
from tests.api.test_dashboard_views import FIGURE_CLICK, TOKEN, new_view, old_view

pytestmark = BROWSER_MARKS

IMAGES_LOADED = "return [...document.querySelectorAll('#drawn img')].map(i => i.naturalWidth)"


def test_our_chat_page_shows_the_figure_and_the_compared_qubits(demo_app: FastAPI, browser: Any) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    with LiveServer(demo_app) as base:
        sign_in(browser, base, TOKEN)
        wait = WebDriverWait(browser, 180)  # 21 s alone; over 60 s once beside 3 CI workers on 2 cores
        browser.find_element(By.ID, "input").send_keys(FIGURE_CLICK + "\n")
        loaded = "return document.querySelector('.run-figure img')?.naturalWidth || 0"
        wait.until(lambda d: d.execute_script(loaded) > 100)
        browser.find_element(By.ID, "input").send_keys("Compare Q3 and Q7\n")
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, ".msg.assistant .text table")) >= 1)
        table = browser.find_elements(By.CSS_SELECTOR, ".msg.assistant .text table")[-1]
        assert [th.text for th in table.find_elements(By.CSS_SELECTOR, "th")] == [
            "parameter",
            "Q3",
            "Q7",
            "unit",
        ]
        screenshot(browser, "chat_page_demo_figure_and_compare")


def _drawn(view: list[dict[str, Any]], title: str) -> str:
    """The view as HTML: markdown through the page's renderer (``QMarkdown``), images as ``<img>``."""
    parts = [f"<h3>{html.escape(title)}</h3>"]
    for item in view:
        if item["kind"] == "figures":
            parts.append("".join(f'<img class="strip" src="{html.escape(u)}">' for u in item["images"]))
        elif item["kind"] == "markdown":
            for url in item["images"]:
                parts.append(f'<img class="inline" src="{html.escape(url)}">')
            text = MARKDOWN_IMAGE.sub("", item["text"])
            parts.append(f'<div class="md" data-md="{html.escape(text)}"></div>')
    return "<section>" + "".join(parts) + "</section>"


def test_a_page_draws_the_figure_answer_as_each_dashboard_does(demo_app: FastAPI, browser: Any) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    with LiveServer(demo_app) as base, httpx.Client(base_url=base, timeout=60) as http:
        old = old_view(http, FIGURE_CLICK)
        new = new_view(http, FIGURE_CLICK)
        trend = old_view(http, "Show T1 trend for Q00")
        browser.get(f"{base}/copilot/ui")
        browser.add_cookie({"name": "access_token", "value": TOKEN, "path": "/"})
        page = (
            _drawn(old, "Older dashboard: Latest T1 figure of Q16")
            + _drawn(new, "Newest dashboard: the figure strip above the answer")
            + _drawn(trend, "Older dashboard: Show T1 trend for Q00")
        )
        browser.execute_script(
            'document.body.innerHTML = \'<main id="drawn" style="padding:16px;max-width:900px">\' + '
            "arguments[0] + '</main>';"
            "document.querySelectorAll('#drawn .md')"
            ".forEach(d => d.innerHTML = QMarkdown.render(d.dataset.md));"
            "document.querySelectorAll('#drawn img.strip').forEach(i => i.style.height = '80px');"
            "document.querySelectorAll('#drawn img.inline').forEach(i => i.style.maxWidth = '600px');",
            page,
        )
        WebDriverWait(browser, 60).until(
            lambda d: (w := d.execute_script(IMAGES_LOADED)) and len(w) == 2 and min(w) > 100
        )
        screenshot(browser, "dashboard_figure_answer")
