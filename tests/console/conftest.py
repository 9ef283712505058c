"""A real headless browser for the console tests: Debian's chromium (tests/console/console.mk
installs it), driven by Playwright, pointed at its executable: no browser is downloaded.
Screenshots of each main page go to a git-ignored folder printed at the end of the run."""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from playwright.async_api import Browser, BrowserContext, Page, async_playwright

from tests.conftest import report

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
SCREENSHOTS = Path(__file__).resolve().parents[2] / ".herald" / "console-screenshots"


@pytest_asyncio.fixture(scope="session")
async def browser() -> AsyncIterator[Browser]:
    if shutil.which(CHROMIUM) is None:
        pytest.fail(f"{CHROMIUM} not found: `make console-browser` installs Debian's chromium")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    report(f"console screenshots: {SCREENSHOTS}")
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield launched
        await launched.close()


@pytest_asyncio.fixture
async def context(browser: Browser) -> AsyncIterator[BrowserContext]:
    opened = await browser.new_context(viewport={"width": 1280, "height": 900})
    yield opened
    await opened.close()


@pytest_asyncio.fixture
async def page(context: BrowserContext) -> Page:
    return await context.new_page()


async def shot(page: Page, name: str) -> None:
    await page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


async def sign_in(page: Page, gateway: str, credential: str, where: str = "/console") -> None:
    await page.goto(f"{gateway}{where}/login")
    label = "Operator token" if where.startswith("/admin") else "API key"
    await page.get_by_label(label).fill(credential)
    await page.get_by_role("button", name="Sign in").click()
    await page.wait_for_load_state()


async def unlabelled_controls(page: Page) -> list[str]:
    """Form controls a screen reader could not name (no label, no aria-label, no text)."""
    found: list[str] = await page.evaluate(
        """() => [...document.querySelectorAll('input:not([type=hidden]), select, textarea, button')]
            .filter(el => el.tagName === 'BUTTON'
                ? !el.textContent.trim()
                : !(el.labels && el.labels.length) && !el.getAttribute('aria-label'))
            .map(el => el.outerHTML.slice(0, 80))"""
    )
    return found
