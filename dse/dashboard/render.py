"""Open built pages in headless Chromium (Playwright): console problems, charts drawn,
and the time from navigation to the last chart's marks.

Used by ``dse bench dashboard`` (render time of the heaviest page, target <= 3 s) and by
the browser tests (zero console errors on every page).  Chromium and Playwright are
optional: :func:`available` says whether both are there."""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: A page counts as rendered when every ``div.chart`` holds Vega's ``svg.marks``.
CHARTS = "div.chart"
DRAWN = "div.chart svg.marks"
#: Longest wait for a page's charts (ms); a page still drawing then counts as not rendered.
TIMEOUT_MS = 30_000


@dataclass
class Rendered:
    """One page in the browser: seconds to its last chart, charts drawn of charts, and its
    console errors and warnings."""

    seconds: float
    charts: int
    drawn: int
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems and self.drawn == self.charts


def chromium() -> str | None:
    """The Chromium executable on PATH, or None."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


def available() -> bool:
    """Chromium on PATH and Playwright importable."""
    if chromium() is None:
        return False
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return False
    return True


def launch(pw: Any) -> Any:
    """A headless Chromium from a started ``sync_playwright()``."""
    return pw.chromium.launch(executable_path=chromium(), args=["--no-sandbox", "--disable-gpu"])


def render(browser: Any, page_path: Path, width_px: int = 1280, screenshot: Path | None = None) -> Rendered:
    """Open ``page_path`` and wait for its charts; optionally save a screenshot."""
    page = browser.new_page(viewport={"width": width_px, "height": 1400})
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
    t0 = time.perf_counter()
    page.goto(Path(page_path).resolve().as_uri())
    charts = page.locator(CHARTS).count()
    try:
        if charts:
            page.wait_for_function(f"document.querySelectorAll('{DRAWN}').length >= {charts}", timeout=TIMEOUT_MS)
    except Exception:  # Playwright's timeout: counted as charts not drawn
        pass
    seconds = time.perf_counter() - t0
    drawn = page.locator(DRAWN).count()
    if screenshot is not None:
        page.screenshot(path=str(screenshot), full_page=False)
    page.close()
    return Rendered(seconds, charts, drawn, problems)


def render_all(pages: list[Path]) -> dict[str, Rendered]:
    """Every page rendered in one browser, by file name."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = launch(pw)
        try:
            return {Path(p).name: render(browser, Path(p)) for p in pages}
        finally:
            browser.close()
