"""Headless Chromium for tests: Debian's ``chromium`` driven by selenium through Debian's
``chromedriver`` (both installed by scripts/install.sh), so selenium downloads nothing.

A fresh profile directory per start, no sandbox (root in CI), no GPU, and none of Chromium's
own network traffic (QUIC, background networking, component updates, sync); the DevTools
endpoint and chromedriver listen on 127.0.0.1 only.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def require_chromium() -> None:
    """Skip (fail in CI, where scripts/install.sh must have installed them) without both."""
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not os.access(p, os.X_OK)]
    if not missing:
        return
    message = (
        f"{' and '.join(missing)} missing: apt-get install chromium chromium-driver "
        "(scripts/install.sh does)"
    )
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@contextmanager
def headless_chromium(profile: Path, width: int = 1280, height: int = 900) -> Iterator[Any]:
    """A selenium WebDriver on a headless Chromium with a fresh profile in ``profile``."""
    require_chromium()
    os.environ.setdefault("SE_OFFLINE", "true")  # selenium-manager: never download a driver
    from selenium import webdriver  # noqa: PLC0415
    from selenium.webdriver.chrome.service import Service  # noqa: PLC0415

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(
        # chromedriver's default: loopback only (an --allowed-ips list would open it wider)
        service=Service(executable_path=CHROMEDRIVER),
        options=options,
    )
    try:
        yield driver
    finally:
        driver.quit()
