"""A real headless Chromium driven by selenium: Debian's `chromium` and `chromium-driver`
(`.ci/run` installs them through apt). Nothing here downloads a browser or a driver.

Screenshots go to build/screenshots/ (git-ignored); docs/console/ holds committed copies.
"""

from __future__ import annotations

import base64
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from selenium import webdriver
from selenium.common.exceptions import (
    NoSuchElementException,
    StaleElementReferenceException,
    WebDriverException,
)
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import Select

CHROMIUM = os.environ.get("MNEMO_TEST_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("MNEMO_TEST_CHROMEDRIVER", "/usr/bin/chromedriver")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
)
WIDTH, HEIGHT = 1360, 900
SCREENSHOTS = Path(__file__).resolve().parents[2] / "build" / "screenshots"


DETACHED = "does not belong to the document"


@dataclass
class Browser:
    driver: webdriver.Chrome

    def open(self, url: str) -> None:
        self.driver.get(url)

    @property
    def url(self) -> str:
        return str(self.driver.current_url)

    def find(self, css: str) -> WebElement:
        return self.driver.find_element(By.CSS_SELECTOR, css)

    def find_all(self, css: str) -> list[WebElement]:
        return list(self.driver.find_elements(By.CSS_SELECTOR, css))

    def text(self, css: str = "main") -> str:
        return str(self.find(css).text)

    def fill(self, css: str, value: str) -> None:
        field = self.find(css)
        field.clear()
        field.send_keys(value)

    def choose(self, css: str, value: str) -> None:
        Select(self.find(css)).select_by_value(value)

    def click(self, css: str, attempts: int = 3) -> None:
        """Click `css`; an element that an htmx swap replaced meanwhile is looked up again."""
        for attempt in range(attempts):
            try:
                self.find(css).click()
                return
            except StaleElementReferenceException:
                if attempt == attempts - 1:
                    raise

    def wait_until(self, check: Callable[[], bool], what: str, timeout: float = 15) -> None:
        """Poll `check` (DOM lookups may race htmx swaps) until it holds."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                if check():
                    return
            except (NoSuchElementException, StaleElementReferenceException):
                pass
            except WebDriverException as exc:
                # Chromium reports a node htmx just swapped out this way, not as stale.
                if DETACHED not in str(exc):
                    raise
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"timed out waiting for {what}; page text:\n{self.text('body')}"
                )
            time.sleep(0.1)

    def replaced(self, css: str, action: Callable[[], None], timeout: float = 15) -> None:
        """Do `action` and wait until htmx has swapped out the element at `css`."""
        old = self.find(css)
        action()

        def gone() -> bool:
            try:
                old.is_enabled()
            except StaleElementReferenceException:
                return True
            return False

        self.wait_until(gone, f"htmx to replace {css}", timeout)

    def wait_for_text(self, text: str, css: str = "main", timeout: float = 15) -> None:
        self.wait_until(lambda: text in self.text(css), f"{text!r} in {css}", timeout)

    def screenshot(self, name: str) -> Path:
        """The whole page (beyond the viewport) as build/screenshots/<name>.png."""
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        size = self.driver.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]
        clip = {"x": 0, "y": 0, "width": size["width"], "height": min(size["height"], 6000)}
        shot = self.driver.execute_cdp_cmd(
            "Page.captureScreenshot",
            {"format": "png", "captureBeyondViewport": True, "clip": {**clip, "scale": 1}},
        )
        path = SCREENSHOTS / f"{name}.png"
        path.write_bytes(base64.b64decode(shot["data"]))
        return path

    def clear_cookies(self) -> None:
        self.driver.delete_all_cookies()


def _require(path: str, package: str) -> None:
    if not (Path(path).exists() or shutil.which(path)):
        raise RuntimeError(
            f"{path} is missing: install Debian's browser with "
            f"`apt-get install -y chromium chromium-driver` ({package}); .ci/run does this"
        )


@contextmanager
def start_browser() -> Iterator[Browser]:
    _require(CHROMIUM, "chromium")
    _require(CHROMEDRIVER, "chromium-driver")
    os.environ.setdefault("SE_OFFLINE", "true")  # selenium must never fetch a driver
    profile = tempfile.mkdtemp(prefix="mnemo-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*FLAGS, f"--user-data-dir={profile}", f"--window-size={WIDTH},{HEIGHT}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    try:
        driver.set_page_load_timeout(30)
        yield Browser(driver)
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
