"""End to end in headless Chromium (Debian's /usr/bin/chromium, driven by Playwright): a host
creates a game, a person joins as the interceptor and plays a whole Decrypto game against the
GloVe baseline team; the game is in ``episodes.jsonl`` and in ``socialsim report``. A second
game checks that a ``<script>`` hint typed by a human encoder shows as text on the
interceptor's page and never runs. A move or tone menu starts on no choice and cannot be sent
so; the "live" badge ends with the game. Set ``SOCIALSIM_SCREENSHOTS=DIR`` to keep screenshots."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("starlette")
uvicorn = pytest.importorskip("uvicorn")
sync_api = pytest.importorskip("playwright.sync_api")

from socialsim.web.app import create_app  # noqa: E402

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
HOST = "host-secret-for-tests"
pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="no Debian chromium")


@pytest.fixture
def server(tmp_path):
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    results = tmp_path / "results"
    config = uvicorn.Config(create_app(results, HOST), log_level="warning")
    app_server = uvicorn.Server(config)
    thread = threading.Thread(target=app_server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not app_server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}", results
    app_server.should_exit = True
    thread.join(timeout=10)
    sock.close()


@pytest.fixture
def browser():
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield browser
        browser.close()


def shot(page, name: str) -> None:
    folder = os.environ.get("SOCIALSIM_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)


def host_game(browser, url: str, experiment: str, humans: list[str], seed: int) -> dict:
    page = browser.new_page(viewport={"width": 1100, "height": 800})
    page.goto(f"{url}/#host={HOST}")
    page.wait_for_selector(f"option[value={experiment}]", state="attached")
    page.select_option("#experiment", experiment)
    for box in page.query_selector_all("#seats input"):
        box.set_checked(box.get_attribute("value") in humans)
    page.fill("#seed", str(seed))
    page.click("#create")
    page.wait_for_selector("#result:not([hidden])")
    shot(page, f"host_{experiment}")
    links = {seat: page.input_value(f"li[data-seat={seat}] input.link") for seat in humans}
    page.close()
    return links


def test_a_person_intercepts_a_whole_decrypto_game_in_the_browser(server, browser):
    url, results = server
    links = host_game(browser, url, "decrypto_quickstart", ["interceptor"], seed=0)
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    page.goto(links["interceptor"])
    guesses = ["1-2-3", "2-1-4", "3-4-1", "4-3-2", "1-3-4", "2-4-3", "3-1-2", "4-2-1"]
    turn = 0
    while True:
        page.wait_for_function(
            "(turn) => document.querySelector('.status.over') || (document.querySelector("
            "'#action:not([hidden]) #field-code') && document.querySelector('.score .big')"
            ".textContent.startsWith(turn + ' /'))",
            arg=turn + 1,
            timeout=60_000,
        )
        if page.query_selector(".status.over"):
            break
        assert page.query_selector(".keyword.hidden-word")  # the interceptor sees no keyword
        if turn == 0:
            shot(page, "interceptor_turn")
            page.fill("#field-code", "1-1-1")
            page.click("#submit")
            page.wait_for_selector("#action-error:has-text('repeats a digit')")
            shot(page, "interceptor_refused")
        page.fill("#field-code", guesses[turn])
        page.click("#submit")
        turn += 1
    shot(page, "interceptor_over")
    over = page.inner_text(".status.over")
    assert "Game over" in over
    # the badge no longer says "live" once nothing can change
    page.wait_for_function("document.querySelector('#connection').textContent === 'game over'")
    assert page.get_attribute("#connection", "class") == "pill over"
    # the ending links to the transcript of what this seat could see, and offers it as a file
    page.click("#transcript-link")
    assert page.is_visible("#transcript ol.transcript")
    assert page.get_attribute("#transcript-file", "download").endswith("_interceptor.json")
    assert "#host" not in page.url and "token=" in page.url  # the link kept the seat's URL
    shown = [k.inner_text() for k in page.query_selector_all(".keyword")]
    page.close()

    (folder,) = list(results.iterdir())
    (record,) = [json.loads(line) for line in (folder / "episodes.jsonl").read_text().splitlines()]
    assert record["status"] == "done" and record["seats"]["interceptor"]["kind"] == "human"
    assert record["seats"]["encoder"]["kind"] == "glove_encoder"
    played = record["summary"]["turn_log"]
    assert ["-".join(map(str, t["interceptor_guess"])) for t in played] == guesses[: len(played)]
    assert [s.split("\n")[-1] for s in shown] == record["summary"]["keywords"]
    report = subprocess.run(
        [sys.executable, "-m", "socialsim.cli", "report", str(folder), "--no-files"],
        capture_output=True,
        text=True,
    )
    assert report.returncode == 0 and "episodes: 1 done" in report.stdout
    assert "human" in report.stdout


def test_a_script_typed_as_a_hint_is_shown_as_text_and_never_runs(server, browser):
    url, _ = server
    links = host_game(browser, url, "decrypto_quickstart", ["encoder", "interceptor"], seed=0)
    encoder = browser.new_page(viewport={"width": 1100, "height": 900})
    encoder.goto(links["encoder"])
    encoder.wait_for_selector("#field-hint_1")
    assert encoder.inner_text(".code").replace("\n", "") == "314"
    shot(encoder, "encoder_turn")
    script = "<script>window.pwned=1</script>"
    encoder.fill("#field-hint_1", script)
    encoder.fill("#field-hint_2", "<img/src/onerror=pwned=2>")
    encoder.fill("#field-hint_3", "door")
    encoder.click("#submit")
    encoder.wait_for_selector("#action[hidden]", state="attached")
    interceptor = browser.new_page(viewport={"width": 1100, "height": 900})
    interceptor.goto(links["interceptor"])
    interceptor.wait_for_selector("#field-code")
    hints = [h.inner_text() for h in interceptor.query_selector_all(".hints li")]
    assert hints == [script, "<img/src/onerror=pwned=2>", "door"]
    assert interceptor.evaluate("window.pwned") is None
    assert interceptor.query_selector("img") is None
    shot(interceptor, "interceptor_sees_script_as_text")
    encoder.close()
    interceptor.close()


def test_a_person_plays_a_donation_game_and_their_gossip_stays_text(server, browser):
    url, results = server
    links = host_game(browser, url, "align_quickstart", ["agent_0"], seed=0)
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    answers = []  # every answer the page sends
    page.on("request", lambda r: answers.append(r.url) if r.url.endswith("/answer") else None)
    page.goto(links["agent_0"])
    message = "<script>window.pwned=1</script> beware"
    answered = 0
    version = -1
    unchosen = set()
    while True:
        page.wait_for_function(
            "(v) => Number(document.body.dataset.version) > v && "
            "['your_turn', 'over'].includes(document.body.dataset.status)",
            arg=version,
            timeout=60_000,
        )
        version = int(page.evaluate("document.body.dataset.version"))
        if page.query_selector(".status.over"):
            break
        menu = "#field-tone" if page.query_selector("#field-tone") else "#field-move"
        if menu not in unchosen:  # no move or tone is chosen for the person, nor can be sent
            assert page.input_value(menu) == ""
            assert page.eval_on_selector(menu, "m => m.options[m.selectedIndex].disabled")
            if menu == "#field-tone":
                page.fill("#field-message", message)
            shot(page, f"donation_{menu[7:]}_unchosen")
            page.click("#submit")
            assert page.eval_on_selector(menu, "m => m.validity.valueMissing")
            unchosen.add(menu)
        if menu == "#field-tone":
            page.select_option("#field-tone", "criticism")
            page.fill("#field-message", message)
            shot(page, "donation_gossip")
        else:
            shot(page, "donation_move")
            page.select_option("#field-move", "cooperate")
        answered += 1
        with page.expect_response(lambda r: r.url.endswith("/answer")):
            page.click("#submit")
        assert len(answers) == answered  # the unchosen menu sent nothing
    shot(page, "donation_over")
    page.wait_for_function("document.querySelector('#connection').textContent === 'game over'")
    over_text = page.inner_text(".status.over")
    shown_stock = page.inner_text(".score:nth-child(3) .big")
    assert page.evaluate("window.pwned") is None
    (folder,) = list(results.iterdir())
    (record,) = [json.loads(line) for line in (folder / "episodes.jsonl").read_text().splitlines()]
    said = [
        m["payload"]
        for m in record["messages"]
        if m["kind"] == "gossip" and m["payload"]["author"] == "agent_0"
    ]
    assert said and all(g["message"] == message and g["tone"] == "criticism" for g in said)
    assert answered >= 2 and unchosen == {"#field-tone", "#field-move"}
    # the ending's board shows the stock the ranking counts, after the last round
    final = f"{record['summary']['resources']['agent_0']:g}"
    assert f"with {final}." in over_text
    assert shown_stock == str(final)
