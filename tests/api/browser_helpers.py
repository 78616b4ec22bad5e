"""Headless Debian Chromium for the chat page's browser tests: the driver, the marks that skip
without it, and screenshots under ``test-artifacts/screenshots/`` (git-ignored; paths printed)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
SCREENSHOTS = ARTIFACTS / "screenshots"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")

BROWSER_MARKS = [
    pytest.mark.browser,
    pytest.mark.skipif(
        CHROMIUM is None or CHROMEDRIVER is None,
        reason="Debian chromium + chromium-driver not found (apt-get install chromium chromium-driver)",
    ),
]


@contextmanager
def chrome() -> Iterator[Any]:
    """A fresh headless Chromium with its own throwaway profile, 1280×1000."""
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


def screenshot(browser: Any, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    browser.save_screenshot(str(path))
    print(f"screenshot: {path}")
    return path


def sign_in(browser: Any, base: str, token: str) -> None:
    """Open the page, sign in with ``token`` (Enter) and wait for the project selector."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(f"{base}/copilot/ui")
    browser.find_element(By.ID, "token").send_keys(token + "\n")
    WebDriverWait(browser, 30).until(lambda d: d.find_element(By.ID, "project").get_attribute("value"))
