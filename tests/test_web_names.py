"""In headless Chromium: a person in a mixed donation game (LLM seats on the test server, a
trained RL policy, a scripted norm) sees every agent under the name the LLM seats use in their
prompts and gossip, beside the id of the record ("John (agent_0)")."""

from __future__ import annotations

import json
import re
import shutil
import socket
import threading
import time
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("starlette")
uvicorn = pytest.importorskip("uvicorn")
sync_api = pytest.importorskip("playwright.sync_api")
pytest.importorskip("sb3_contrib")

from sb3_contrib import MaskablePPO  # noqa: E402

from socialsim.rl.view import SeatView  # noqa: E402
from socialsim.testing.gossip_policies import GossipPolicy  # noqa: E402
from socialsim.web.app import create_app  # noqa: E402

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
HOST = "host-secret-for-names"
KEY_ENV = "SOCIALSIM_TEST_NAMES_KEY"
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="no Debian chromium"),
]

EXPERIMENT = """\
name = "mixed_names"
[env]
id = "donation_v0"
kwargs = {{ n_agents = 5, gossip = true, rounds = 5 }}
[seats."*"]
kind = "llm_gossip"
model = {{ model = "openai/test", api_base = "{url}", api_key_env = "{key}", cache = false, timeout = 10, max_retries = 1 }}
[seats.agent_0]
kind = "rl"
path = "donor.zip"
[seats.agent_4]
kind = "stern_judging"
"""
#: "Kate (agent_1)" as the pages show an agent
SHOWN = re.compile(r"\b([A-Z][a-z]+) \((agent_\d+)\)")
#: GossipPolicy's gossip names the agent it is about first ("Kate treated me well.")
SAID = re.compile(r"^([A-Z][a-z]+) (?:treated me well|exploited me)")


@pytest.fixture
def serve(tmp_path):
    """Starts the web server offering the operator's files given (models are theirs to name);
    returns its address."""
    started = []

    def start(offered: list[Path]) -> str:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        app = create_app(tmp_path / "results", HOST, offered=offered)
        app_server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
        thread = threading.Thread(target=app_server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        started.append((app_server, thread, sock))
        while not app_server.started:
            time.sleep(0.05)
        return f"http://127.0.0.1:{sock.getsockname()[1]}"

    yield start
    for app_server, thread, sock in started:
        app_server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def mixed_game(tmp_path, url: str) -> Path:
    """The experiment file: an untrained (seeded) RL donor in agent_0, LLM seats, a stern
    judge in agent_4; the policy's path is relative to the file."""
    folder = tmp_path / "lab"
    folder.mkdir()
    view = SeatView(
        "donation_v0", "agent_0", {"kind": "stern_judging"}, n_agents=5, gossip=True, rounds=5
    )
    MaskablePPO("MultiInputPolicy", view, n_steps=16, batch_size=16, seed=0, device="cpu").save(
        folder / "donor.zip"
    )
    path = folder / "mixed_names.toml"
    path.write_text(EXPERIMENT.format(url=url, key=KEY_ENV))
    return path


def create_session(url: str, experiment: str, humans: list[str]) -> dict:
    request = urllib.request.Request(
        f"{url}/api/sessions",
        data=json.dumps({"experiment": experiment, "humans": humans, "seed": 0}).encode(),
        headers={"Authorization": f"Bearer {HOST}", "Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def test_a_person_in_a_mixed_game_sees_the_names_the_llm_seats_use(
    tmp_path, serve, llm_server, fresh_models, monkeypatch
):
    llm_server.policy = GossipPolicy()
    monkeypatch.setenv(KEY_ENV, "dummy-key")
    url = serve([mixed_game(tmp_path, llm_server.url)])  # the operator offers the file
    created = create_session(url, "mixed_names", ["agent_1"])
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        page = browser.new_page(viewport={"width": 1100, "height": 900})
        page.goto(created["links"]["agent_1"])  # an absolute link
        shown_texts = []
        version = -1
        while True:
            page.wait_for_function(
                "(v) => Number(document.body.dataset.version) > v && "
                "['your_turn', 'over'].includes(document.body.dataset.status)",
                arg=version,
                timeout=60_000,
            )
            version = int(page.evaluate("document.body.dataset.version"))
            shown_texts.append(page.inner_text("body"))
            if page.query_selector(".status.over"):
                break
            if page.query_selector("#field-tone"):
                page.select_option("#field-tone", "praising")
                page.fill("#field-message", "fine")
            else:
                page.select_option("#field-move", "cooperate")
            page.click("#submit")
        browser.close()
    (folder,) = list((tmp_path / "results").iterdir())
    (record,) = [json.loads(line) for line in (folder / "episodes.jsonl").read_text().splitlines()]
    assert record["status"] == "done"
    assert {record["seats"][a]["kind"] for a in record["seats"]} == {
        "rl",
        "human",
        "llm_gossip",
        "stern_judging",
    }
    # the names the LLM seats gave the agents they gossiped about
    llm_names = {}
    for message in record["messages"]:
        payload = message["payload"]
        if (
            message["kind"] == "gossip"
            and record["seats"][payload["author"]]["kind"] == "llm_gossip"
        ):
            said = SAID.match(payload.get("message") or "")
            assert said, payload
            llm_names.setdefault(payload["about"], set()).add(said.group(1))
    assert all(len(names) == 1 for names in llm_names.values()), llm_names  # one name each
    shown = {}
    for text in shown_texts:
        for name, agent in SHOWN.findall(text):
            shown.setdefault(agent, set()).add(name)
    assert all(len(names) == 1 for names in shown.values()), shown  # one name each on the page
    both = sorted(set(shown) & set(llm_names))
    assert "agent_1" in both  # the person, about whom the LLM seats gossiped
    assert {a: shown[a] for a in both} == {a: llm_names[a] for a in both}
    assert any(f"you are {next(iter(shown['agent_1']))} (agent_1)" in t for t in shown_texts)
