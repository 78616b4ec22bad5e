"""The README's first steps in a real browser against a real ``qdash serve`` with no API key:
empty page → demo user → suggested question → the demo model's answer with a drawn chart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.api.browser_helpers import BROWSER_MARKS, screenshot
from tests.served import one_chip_lab, seed_lab, served

pytestmark = BROWSER_MARKS


def test_readme_first_answer_from_qdash_serve_without_a_key(
    tmp_path_factory: pytest.TempPathFactory, browser: Any
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    data_dir: Path = tmp_path_factory.mktemp("readme") / "data"
    seed_lab(data_dir, one_chip_lab(days=8))
    with served(data_dir) as port:
        browser.get(f"http://127.0.0.1:{port}/copilot/ui")
        wait = WebDriverWait(browser, 90)
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#demo-user-buttons .chip"))
        screenshot(browser, "served_empty_state")
        browser.find_element(By.CSS_SELECTOR, "#demo-user-buttons .chip").click()  # alice
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#suggestions .chip"))
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#model-list li.ok"))
        assert "demo model: scripted answers" in browser.find_element(By.ID, "model-list").text
        suggestion = browser.find_element(By.CSS_SELECTOR, "#suggestions .chip")
        assert suggestion.text == "Which qubits lost T1 this week?"
        suggestion.click()
        wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, ".msg.assistant .chart svg.main-svg")))
        assert "qubits lost T1" in browser.find_element(By.CSS_SELECTOR, ".msg.assistant .text").text
        browser.set_window_size(1280, 1400)
        screenshot(browser, "served_demo_model_answer")
