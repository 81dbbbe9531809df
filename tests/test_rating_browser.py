"""The leaderboard page in headless Chromium (Debian's /usr/bin/chromium, driven by
Playwright): it renders each game's table with intervals and the pool version, and a click on a
header sorts that table, a second click reverses it. Set ``SOCIALSIM_SCREENSHOTS=DIR`` to keep
a screenshot."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from socialsim.rating import leaderboard, model

sync_api = pytest.importorskip("playwright.sync_api")

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="no Debian chromium")


def entry(name: str, rating: float, win_rate: float, game: str = "decrypto") -> dict:
    return {
        "entrant": name, "spec": {"kind": name}, "game": game,
        "role": "decoder" if game == "decrypto" else game, "pool": "v1",
        "model": model.DESCRIPTION, "seed": 0, "episodes": 4, "games": 48,
        "rating": [rating, rating - 40, rating + 40],
        "scores": {"win_rate": [win_rate, win_rate - 0.1, win_rate + 0.1]}, "results": "x",
    }  # fmt: skip


@pytest.fixture
def board(tmp_path) -> Path:
    path = tmp_path / "ratings.jsonl"
    leaderboard.append(
        path,
        [
            entry("glove_decoder", 273.0, 0.39),
            entry("random_decoder", -1453.0, 0.0),
            entry("decrypto_llm", 120.0, 0.61),
            entry("always_cooperate", -17.0, 0.0, game="donation"),
        ],
    )
    html_path, _ = leaderboard.write(path)
    return html_path


def column(page, table: int, index: int) -> list[str]:
    return page.eval_on_selector_all(
        f"table.board >> nth={table} >> tbody tr",
        f"rows => rows.map(r => r.cells[{index}].textContent.split(' [')[0])",
    )


def test_leaderboard_renders_and_sorts_by_a_clicked_header(board):
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 700})
            page.goto(board.as_uri())
            assert page.locator("h2").all_text_contents() == ["decrypto", "donation"]
            assert "Reference pool: v1" in page.locator("p.note").first.text_content()
            # first shown by rating, best first
            assert column(page, 0, 0) == ["glove_decoder", "decrypto_llm", "random_decoder"]
            assert (
                page.locator(
                    "table.board >> nth=0 >> tbody tr >> nth=0 >> .ci"
                ).first.text_content()
                == "[233, 313]"
            )
            page.get_by_role("button", name="Win rate").first.click()
            assert column(page, 0, 0) == ["decrypto_llm", "glove_decoder", "random_decoder"]
            assert (
                page.locator("th", has_text="Win rate").first.get_attribute("aria-sort")
                == "descending"
            )
            page.get_by_role("button", name="Win rate").first.click()
            assert column(page, 0, 0) == ["random_decoder", "glove_decoder", "decrypto_llm"]
            page.get_by_role("button", name="Entrant").first.click()  # text, descending first
            assert column(page, 0, 0) == ["random_decoder", "glove_decoder", "decrypto_llm"]
            page.get_by_role("button", name="Entrant").first.click()
            assert column(page, 0, 0) == ["decrypto_llm", "glove_decoder", "random_decoder"]
            assert column(page, 1, 0) == ["always_cooperate"]  # the other table is untouched
            folder = os.environ.get("SOCIALSIM_SCREENSHOTS")
            if folder:
                Path(folder).mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(Path(folder) / "leaderboard.png"), full_page=True)
        finally:
            browser.close()
