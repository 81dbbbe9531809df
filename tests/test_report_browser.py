"""report.html and transcripts.html in headless Chromium (Debian's ``/usr/bin/chromium``, driven
by Playwright; never a browser Playwright downloads): every figure loads, and the view selector
changes what the transcript shows."""

from __future__ import annotations

import contextlib
import os

import pytest

from socialsim.cli import main

CHROMIUM = "/usr/bin/chromium"
sync_api = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's chromium")


@contextlib.contextmanager
def chromium():
    """A page of headless Chromium (opened after the run: Playwright's sync API holds an event
    loop, in which the runner could not start its own)."""
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            yield browser.new_page()
        finally:
            browser.close()


def report_of(name: str, tmp_path, capsys, episodes: int):
    out = tmp_path / name
    assert main(["run", name, "--out", str(out), "--quiet", "--set", f"episodes={episodes}"]) == 0
    assert main(["report", str(out)]) == 0
    capsys.readouterr()
    return out


def test_every_figure_of_report_html_loads_in_chromium(tmp_path, capsys):
    out = report_of("align_quickstart", tmp_path, capsys, episodes=2)
    with chromium() as page:
        check_figures(page, out)


def check_figures(page, out):
    page.goto((out / "report.html").as_uri())
    images = page.locator("img")
    pngs = sorted(p.name for p in out.glob("*.png"))
    assert images.count() == len(pngs) == 8  # cooperation_by_agent among them
    widths = page.eval_on_selector_all("img", "imgs => imgs.map(i => i.complete && i.naturalWidth)")
    assert all(w and w > 100 for w in widths), widths
    assert "cooperation_residents" in page.content()


def test_the_transcript_view_selector_shows_what_a_seat_saw(tmp_path, capsys):
    out = report_of("decrypto_quickstart", tmp_path, capsys, episodes=1)
    with chromium() as page:
        check_views(page, out)


def check_views(page, out):
    page.goto((out / "transcripts.html").as_uri())
    rows = page.locator("#log tr.message")
    everyone = rows.count()
    assert everyone > 0
    assert "keywords" in page.locator("#log").inner_text()
    page.select_option("#view", "interceptor")
    seen = rows.count()
    assert 0 < seen < everyone
    log = page.locator("#log").inner_text()
    assert "keywords" not in log and "code" not in [
        rows.nth(i).locator("td").nth(3).inner_text() for i in range(seen)
    ]  # the interceptor never saw the team's keywords or the encoder's code
    assert page.locator("#hints tr").count() == 4  # the hint history, by keyword
    page.select_option("#view", "encoder")
    assert rows.count() > seen  # the encoder also saw the keywords and its codes
