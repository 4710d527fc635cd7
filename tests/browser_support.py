"""What every browser test launches: Debian's Chromium (``apt-get install chromium
chromium-headless-shell``; Playwright cannot download its own browsers here), headless and with
nothing that reaches the network.

The headless shell (``chromium-headless-shell``, the same Chromium without its windowing
layers) starts and runs on fewer CPU-seconds; the full ``chromium`` serves when it is missing.

:func:`chromium` (a fixture any test may ask for, through tests/conftest.py) is one browser
for a whole test module: each test opens a browser context of its own (its own cookies,
storage and cache, as a fresh browser's), so the tests stay apart while the browser starts
once."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

HEADLESS_SHELL = "/usr/bin/chromium-headless-shell"
FULL_CHROMIUM = "/usr/bin/chromium"
CHROMIUM = HEADLESS_SHELL if os.path.exists(HEADLESS_SHELL) else FULL_CHROMIUM
#: Why a browser test is skipped without a Chromium: the same reason for every one of them.
CHROMIUM_MISSING = f"{CHROMIUM} is missing (apt-get install chromium chromium-headless-shell)"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """One Chromium (Playwright's sync API) for the module's tests; a test opens its own
    context with ``chromium.new_context(…)`` and closes it.

    Playwright's sync API keeps an event loop in this thread for as long as the browser runs,
    across the module's tests and their fixtures: Django's guard against synchronous database
    calls inside an event loop would refuse the tests' own ORM calls and the database's
    set-up and flush between them, all plain synchronous code all the same."""
    from playwright.sync_api import sync_playwright

    with pytest.MonkeyPatch.context() as mp, sync_playwright() as p:
        mp.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
