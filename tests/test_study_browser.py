"""A study end to end in headless Chromium (Debian's /usr/bin/chromium, driven by Playwright):
three participants, each in a browser of their own, arrive at the public link with a panel id,
agree to the consent page, read the instructions, fail the quiz once and pass it, wait in the
lobby until the three form a game, and play the donation game from the seat page; one reloads
mid-game and goes on, one leaves mid-game (the filler takes the seat from that turn on). The
two who stay finish with the completion code; the one who left is told so; the export has
three rows. Set ``SOCIALSIM_SCREENSHOTS=DIR`` to keep screenshots."""

from __future__ import annotations

import csv
import json
import os
import socket
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("starlette")
uvicorn = pytest.importorskip("uvicorn")
sync_api = pytest.importorskip("playwright.sync_api")

from test_study import copy_example  # noqa: E402
from test_web_browser import ARGS, CHROMIUM  # noqa: E402

from socialsim import records  # noqa: E402
from socialsim import study as study_module  # noqa: E402
from socialsim.web.app import create_app  # noqa: E402

HOST = "host-secret-for-tests"
pytestmark = [
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="no Debian chromium"),
    pytest.mark.slow,
]


@pytest.fixture
def study_server(tmp_path):
    path = copy_example(tmp_path, llm=False, wait_seconds="600")
    text = path.read_text().replace(
        'people = ["agent_0", "agent_1"]', 'people = ["agent_0", "agent_1", "agent_2"]'
    )
    text = text.split("[[treatments]]")[0] + "[pages]" + text.split("[pages]")[1]
    path.write_text(text, encoding="utf-8")
    study = study_module.load(path)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    results = tmp_path / "results"
    app_server = uvicorn.Server(
        uvicorn.Config(create_app(results, HOST, study=study), log_level="warning")
    )
    thread = threading.Thread(target=app_server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not app_server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{sock.getsockname()[1]}", results / study.name
    app_server.should_exit = True
    thread.join(timeout=10)
    sock.close()


def shot(page, name: str) -> None:
    folder = os.environ.get("SOCIALSIM_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)


def through_the_quiz(page, url: str, panel_id: str) -> None:
    page.goto(f"{url}/study?PROLIFIC_PID={panel_id}")
    page.wait_for_selector("body[data-stage=consent]")
    page.click("#consent")  # not ticked: refused with a reason, the stage unchanged
    assert "Tick the box" in page.inner_text("#error")
    page.check("#agree")
    page.click("#consent")
    page.wait_for_selector("body[data-stage=instructions]")
    page.click("#read")
    page.wait_for_selector("body[data-stage=quiz]")
    page.check("input[name=q0][value='what you give']")  # wrong
    page.check("input[name=q1][value='yes, through gossip']")
    page.click("#quiz-submit")
    page.wait_for_selector("text=not right, try again")
    page.check("input[name=q0][value='five times what you give']")
    page.check("input[name=q1][value='yes, through gossip']")
    page.click("#quiz-submit")


def move(page) -> None:
    """Answer the request on the seat page: the first choice of each menu, 0 or a word; wait
    until the page has moved on (a newer state)."""
    version = page.evaluate("document.body.dataset.version")
    for select in page.query_selector_all("#form select"):
        select.select_option(index=1)
    for field in page.query_selector_all("#form input"):
        field.fill("0" if field.get_attribute("name") == "amount" else "fair")
    page.click("#submit")
    page.wait_for_function(f"() => document.body.dataset.version !== '{version}'")


def test_three_participants_through_consent_quiz_lobby_and_a_game(study_server, tmp_path):
    url, folder = study_server
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        pages = []
        for i in range(3):
            context = browser.new_context(viewport={"width": 900, "height": 800})
            page = context.new_page()
            page.on("dialog", lambda dialog: dialog.accept())
            through_the_quiz(page, url, f"panel{i}")
            if i < 2:  # the first two wait for a third
                page.wait_for_selector("body[data-stage=lobby]")
            pages.append(page)
        shot(pages[0], "1_lobby")
        for page in pages:  # the third arrival forms the game: every page goes to its seat
            page.wait_for_url("**/seat#*", timeout=20000)
        reloader, stayer, leaver = pages
        moves = {0: 0, 1: 0, 2: 0}
        over = set()
        deadline = time.monotonic() + 120
        while len(over) < 3 and time.monotonic() < deadline:
            for i, page in enumerate(pages):
                if i in over:
                    continue
                status = page.evaluate("document.body.dataset.status")
                if status == "over" or (i == 2 and moves[2] == 1):
                    over.add(i)
                    continue
                if status != "your_turn":
                    continue
                if i == 2 and moves[2] == 1:
                    continue
                move(page)
                moves[i] += 1
                if i == 0 and moves[0] == 1:  # a reload mid-game: the seat is as it was
                    page.reload()
                    page.wait_for_function("() => document.body.dataset.status !== undefined")
                if i == 2 and moves[2] == 1:
                    shot(leaver, "2_before_leaving")
                    leaver.click("#study-leave")
                    leaver.wait_for_url("**/study#token=*")
                    leaver.wait_for_selector("body[data-stage=dropped]")
            time.sleep(0.05)
        for page in (reloader, stayer):
            page.wait_for_selector("#study-back", timeout=60000)
            shot(page, "3_game_over")
            page.click("#study-back")
            page.wait_for_selector("body[data-stage=done]")
            assert page.inner_text("#code") == "C7D0N8"
        shot(reloader, "4_done")
        assert "left the study" in leaver.inner_text("#stage")
        browser.close()
    time.sleep(0.6)  # the export is rewritten within a quarter second of a change
    rows = list(csv.DictReader((folder / "participants.csv").open()))
    assert [(r["panel_id"], r["status"]) for r in rows] == [
        ("panel0", "completed"),
        ("panel1", "completed"),
        ("panel2", "dropped"),
    ]
    assert all(r["quiz_attempts"] == "2" for r in rows)
    (game,) = sorted((folder / "games").glob("g*"))
    facts = json.loads((game / "study_game.json").read_text())
    (record,) = records.read_records(game)
    leaving_seat = next(s for s, p in facts["participants"].items() if p == "P0003")
    (handover,) = [e for e in record.events[leaving_seat] if "handover" in e]
    assert rows[2]["handovers"] == f"{game.name}@turn {handover['turn']}"
