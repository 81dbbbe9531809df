"""The browser front end's API, in-process: seat tokens, server-side rules, size limits, the
loopback default, and a whole Decrypto game played through the HTTP API."""

from __future__ import annotations

import json
import time

import pytest

pytest.importorskip("starlette")
from starlette.testclient import TestClient  # noqa: E402

from socialsim import records  # noqa: E402
from socialsim.cli import main  # noqa: E402
from socialsim.web import sessions  # noqa: E402
from socialsim.web.app import MAX_BODY, create_app  # noqa: E402

HOST = "host-secret"
FAILED = {
    "experiment": "x",
    "cell": {},
    "episode": 0,
    "seed": 0,
    "env_id": "decrypto_v0",
    "env_kwargs": {},
    "form": "parallel",
    "seats": {"interceptor": {"kind": "human"}},
}


@pytest.fixture
def client(tmp_path):
    with TestClient(create_app(tmp_path / "results", HOST)) as client:
        yield client


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def create(client, experiment, humans, seed=0) -> dict:
    response = client.post(
        "/api/sessions",
        headers=auth(HOST),
        json={"experiment": experiment, "humans": humans, "seed": seed},
    )
    assert response.status_code == 200, response.text
    data = response.json()
    data["tokens"] = {
        seat: dict(p.split("=") for p in link.split("#")[1].split("&"))["token"]
        for seat, link in data["links"].items()
    }
    return data


def base(data, seat) -> str:
    return f"/api/sessions/{data['session']}/seats/{seat}"


def wait_state(client, data, seat, status, timeout=60.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        state = client.get(base(data, seat) + "/state", headers=auth(data["tokens"][seat])).json()
        if state["status"] in status:
            return state
        assert time.monotonic() < deadline, state
        time.sleep(0.02)


DECRYPTO_SCRIPTED = [
    "--with",
    "encoder=decrypto_random_encoder",
]


def test_the_host_token_guards_the_host_api(client):
    assert client.get("/api/experiments").status_code == 403
    assert client.get("/api/experiments", headers=auth("guess")).status_code == 403
    body = {"experiment": "decrypto_quickstart", "humans": ["interceptor"]}
    assert client.post("/api/sessions", json=body).status_code == 403
    offered = client.get("/api/experiments", headers=auth(HOST)).json()["experiments"]
    assert {
        "name": "decrypto_quickstart",
        "game": "decrypto",
        "seats": ["encoder", "decoder", "interceptor"],
        "offered_seat": "interceptor",
    } in offered


def test_the_seat_page_draws_each_game_with_the_board_its_view_module_serves(client):
    boards = client.get("/boards.js")
    assert boards.status_code == 200
    assert boards.headers["content-type"].startswith("text/javascript")
    assert "script-src 'self'" in boards.headers["content-security-policy"]
    assert 'registerBoard("decrypto", {' in boards.text
    assert 'registerBoard("gossip", {' in boards.text
    data = create(client, "decrypto_quickstart", ["interceptor"])
    state = client.get(
        base(data, "interceptor") + "/state", headers=auth(data["tokens"]["interceptor"])
    )
    assert state.json()["board"] == "decrypto"


def test_a_seat_token_opens_that_seat_only(client):
    data = create(client, "decrypto_quickstart", ["decoder", "interceptor"])
    decoder, interceptor = data["tokens"]["decoder"], data["tokens"]["interceptor"]
    # another seat's view with my token, no token, a made-up token, another session: 403
    assert (
        client.get(base(data, "decoder") + "/state", headers=auth(interceptor)).status_code == 403
    )
    assert client.get(base(data, "interceptor") + "/state").status_code == 403
    assert client.get(base(data, "decoder") + "/state", headers=auth("x" * 43)).status_code == 403
    assert client.get(base(data, "encoder") + "/state", headers=auth(decoder)).status_code == 403
    other = create(client, "decrypto_quickstart", ["interceptor"])
    assert (
        client.get(base(other, "interceptor") + "/state", headers=auth(interceptor)).status_code
        == 403
    )
    # the interceptor asking for the keywords: 403; the decoder gets them
    assert (
        client.get(base(data, "interceptor") + "/keywords", headers=auth(interceptor)).status_code
        == 403
    )
    state = wait_state(client, data, "interceptor", {"your_turn"})
    assert "keywords" not in state["view"] and "code" not in state["view"]
    wait_state(client, data, "decoder", {"your_turn"})
    words = client.get(base(data, "decoder") + "/keywords", headers=auth(decoder)).json()[
        "keywords"
    ]
    assert len(words) == 4
    assert not set(words) & set(json.dumps(state).split('"'))  # the interceptor's state holds none
    # answering for another seat: 403; the interceptor's socket with the decoder's token: refused
    answer = {"answer": {"code": "1-2-3"}}
    assert (
        client.post(
            base(data, "decoder") + "/answer", headers=auth(interceptor), json=answer
        ).status_code
        == 403
    )
    with pytest.raises(Exception):  # noqa: B017 - the handshake is refused (HTTP 403)
        with client.websocket_connect(base(data, "interceptor") + f"/live?token={decoder}"):
            pass
    with client.websocket_connect(base(data, "interceptor") + f"/live?token={interceptor}") as ws:
        assert ws.receive_json()["seat"] == "interceptor"


def test_answers_are_checked_with_the_games_rules_and_bodies_are_bounded(client):
    data = create(client, "decrypto_quickstart", ["interceptor"])
    token = data["tokens"]["interceptor"]
    wait_state(client, data, "interceptor", {"your_turn"})
    url = base(data, "interceptor") + "/answer"
    refused = client.post(url, headers=auth(token), json={"answer": {"code": "1-1-2"}})
    assert refused.status_code == 422 and "repeats a digit" in refused.json()["error"]
    assert client.post(url, headers=auth(token), json={"answer": {}}).status_code == 422
    assert client.post(url, headers=auth(token), json=["x"]).status_code == 400
    assert client.post(url, headers=auth(token), content=b"{not json").status_code == 400
    huge = {"answer": {"code": "1" * (MAX_BODY + 1)}}
    assert client.post(url, headers=auth(token), json=huge).status_code == 413
    long = {"answer": {"code": "1" * 1000}}
    assert client.post(url, headers=auth(token), json=long).status_code == 422
    assert (
        client.post(url, headers=auth(token), json={"answer": {"code": "4 3 2"}}).status_code == 200
    )
    again = client.post(url, headers=auth(token), json={"answer": {"code": "4-3-2"}})
    assert again.status_code in (200, 409)  # 409 while nothing is asked of the seat


def test_a_script_in_a_hint_and_in_gossip_is_kept_as_text(client, tmp_path):
    data = create(client, "decrypto_quickstart", ["encoder", "interceptor"], seed=0)
    state = wait_state(client, data, "encoder", {"your_turn"})
    script = "<script>x</script>"
    answer = {"hint_1": script, "hint_2": "<b>bold</b>", "hint_3": "ok"}
    url = base(data, "encoder") + "/answer"
    assert (
        client.post(
            url, headers=auth(data["tokens"]["encoder"]), json={"answer": answer}
        ).status_code
        == 200
    )
    seen = wait_state(client, data, "interceptor", {"your_turn"})
    assert seen["view"]["hints"] == [
        script,
        "<b>bold</b>",
        "ok",
    ]  # JSON text; the page uses text nodes
    assert state["view"]["code"] == "3-1-4"

    gossip = create(client, "align_quickstart", ["agent_0"], seed=0)
    token = gossip["tokens"]["agent_0"]
    for _ in range(200):
        state = wait_state(client, gossip, "agent_0", {"your_turn", "over"})
        if state["status"] == "over":
            break
        fields = [f["name"] for f in state["request"]["fields"]]
        answer = (
            {"tone": "criticism", "message": "<img src=x onerror=alert(1)>"}
            if "tone" in fields
            else {"move": "cooperate"}
        )
        response = client.post(
            base(gossip, "agent_0") + "/answer", headers=auth(token), json={"answer": answer}
        )
        assert response.status_code == 200, response.text
    assert state["status"] == "over"
    lines = (tmp_path / "results").glob("*/episodes.jsonl")
    logged = [json.loads(line) for path in lines for line in path.read_text().splitlines()]
    said = [
        m["payload"]["message"]
        for r in logged
        for m in r["messages"]
        if m["kind"] == "gossip" and m["payload"]["author"] == "agent_0"
    ]
    assert said and set(said) == {"<img src=x onerror=alert(1)>"}


def test_serve_refuses_a_public_address_without_public(capsys):
    assert main(["serve", "--host", "0.0.0.0", "--port", "1"]) == 2
    assert "--public" in capsys.readouterr().err


def test_a_restarted_server_resumes_a_session_from_its_journal(tmp_path):
    results = tmp_path / "results"
    with TestClient(create_app(results, HOST)) as client:
        data = create(client, "decrypto_quickstart", ["interceptor"], seed=0)
        token = data["tokens"]["interceptor"]
        for guess in ("1-2-3", "2-1-4"):
            wait_state(client, data, "interceptor", {"your_turn"})
            url = base(data, "interceptor") + "/answer"
            response = client.post(url, headers=auth(token), json={"answer": {"code": guess}})
            assert response.status_code == 200
    (folder,) = list(results.iterdir())
    assert not (folder / "episodes.jsonl").exists() or not (folder / "episodes.jsonl").read_text()
    assert oct((folder / "session.json").stat().st_mode & 0o777) == "0o600"
    journal = (folder / "answers.jsonl").read_text().splitlines()
    assert [json.loads(line)["answer"]["code"] for line in journal] == ["1-2-3", "2-1-4"]

    guesses = ["1-2-3", "2-1-4"]
    with TestClient(create_app(results, HOST)) as client:  # the same link works again
        while True:
            state = wait_state(client, data, "interceptor", {"your_turn", "over"})
            if state["status"] == "over":
                break
            assert state["view"]["turn"] == len(guesses) + 1  # resumed after the journal
            guesses.append(["3-4-1", "4-3-2", "1-3-4", "2-4-3", "3-1-2", "4-2-1"][len(guesses) - 2])
            url = base(data, "interceptor") + "/answer"
            response = client.post(url, headers=auth(token), json={"answer": {"code": guesses[-1]}})
            assert response.status_code == 200
    (record,) = [json.loads(line) for line in (folder / "episodes.jsonl").read_text().splitlines()]
    played = ["-".join(map(str, t["interceptor_guess"])) for t in record["summary"]["turn_log"]]
    assert played == guesses[: len(played)] and played[:2] == ["1-2-3", "2-1-4"]


def test_the_transcript_shows_a_seat_only_what_it_could_see_and_only_at_the_end(client):
    data = create(client, "align_quickstart", ["agent_0", "agent_1"], seed=0)
    for seat in ("agent_0", "agent_1"):
        url = base(data, seat) + "/transcript"
        assert client.get(url, headers=auth(data["tokens"][seat])).status_code == 409
    done: set[str] = set()
    deadline = time.monotonic() + 60
    while len(done) < 2:  # two people, answering whenever their seat is asked
        assert time.monotonic() < deadline
        for seat in ("agent_0", "agent_1"):
            token = data["tokens"][seat]
            state = client.get(base(data, seat) + "/state", headers=auth(token)).json()
            if state["status"] == "over":
                done.add(seat)
            elif state["status"] == "your_turn":
                fields = [f["name"] for f in state["request"]["fields"]]
                tone = {"tone": "neutral", "message": "ok"}
                answer = tone if "tone" in fields else {"move": "defect"}
                url = base(data, seat) + "/answer"
                client.post(url, headers=auth(token), json={"answer": answer})
        time.sleep(0.01)
    token = data["tokens"]["agent_0"]
    other = client.get(base(data, "agent_1") + "/transcript", headers=auth(token))
    assert other.status_code == 403
    messages = client.get(base(data, "agent_0") + "/transcript", headers=auth(token)).json()[
        "messages"
    ]
    actions = [m["payload"] for m in messages if m["kind"] == "action"]
    assert actions and all(a["target"] == "agent_0" for a in actions)  # private moves: its own
    matches = [m["payload"] for m in messages if m["kind"] == "match"]
    assert all("agent_0" in m["roles"] for m in matches)


def test_serve_binds_a_public_address_only_with_public_and_then_warns(monkeypatch, capsys):
    import uvicorn

    bound = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kwargs: bound.update(kwargs))
    assert main(["serve", "--host", "0.0.0.0", "--port", "8123", "--public"]) == 0
    assert bound["host"] == "0.0.0.0" and bound["port"] == 8123
    assert "warning: serving on 0.0.0.0" in capsys.readouterr().err
    assert main(["serve", "--port", "8124"]) == 0
    assert bound["host"] == "127.0.0.1"
    assert "host page http://127.0.0.1:8124/#host=" in capsys.readouterr().out


UPLOAD = """
name = "my_decrypto"
[env]
id = "decrypto_v0"
[env.kwargs]
max_turns = 3
[seats."*"]
kind = "decrypto_random_guesser"
[seats.encoder]
kind = "decrypto_random_encoder"
[seats.decoder]
kind = "human"
name = "${HOME}"
"""


def test_a_host_may_upload_an_experiment_file_checked_like_a_run(client):
    check = client.post("/api/experiments/check", headers=auth(HOST), json={"upload": UPLOAD})
    assert check.json() == {
        "name": "my_decrypto",
        "game": "decrypto",
        "seats": ["encoder", "decoder", "interceptor"],
        "offered_seat": "interceptor",
    }
    body = {"upload": UPLOAD, "humans": ["interceptor"], "seed": 0}
    response = client.post("/api/sessions", headers=auth(HOST), json=body)
    assert response.status_code == 200, response.text
    assert response.json()["seats"]["encoder"] == "decrypto_random_encoder"
    bad = UPLOAD.replace('kind = "decrypto_random_encoder"', 'kind = "nobody"')
    refused = client.post("/api/experiments/check", headers=auth(HOST), json={"upload": bad})
    assert refused.status_code == 422
    assert (
        "seats.encoder.kind: 'nobody' is not an agent kind the server offers"
        in (refused.json()["error"])
    )
    wrong = client.post("/api/experiments/check", headers=auth(HOST), json={"upload": "x = ["})
    assert wrong.status_code == 422 and "not valid TOML" in wrong.json()["error"]
    pennies = 'name = "p"\n[env]\nid = "matching_pennies_v0"\n[seats."*"]\nkind = "human"\n'
    other = client.post("/api/experiments/check", headers=auth(HOST), json={"upload": pennies})
    assert other.status_code == 422 and "has no seat page" in other.json()["error"]
    assert client.post("/api/experiments/check", json={"upload": UPLOAD}).status_code == 403


def test_a_waiting_seat_is_told_which_seat_it_waits_for_and_who_plays_it(
    tmp_path, llm_server, monkeypatch, fresh_models
):
    import threading

    from socialsim.testing.decrypto_policies import DecryptoPolicy

    monkeypatch.setenv("SOCIALSIM_WEB_TEST_KEY", "sk-dummy")
    release = threading.Event()
    policy = DecryptoPolicy()

    def slow_encoder(messages, request):
        release.wait(60)  # the model "thinks" until the test has seen the waiting state
        return policy(messages, request)

    llm_server.policy = slow_encoder
    # a model server and a key variable are the operator's to name: an offered file, not an upload
    offered = tmp_path / "slow_encoder.toml"
    offered.write_text(f"""
name = "slow_encoder"
[env]
id = "decrypto_v0"
[seats.encoder]
kind = "llm_decrypto"
model = {{model = "openai/test", api_base = "{llm_server.url}", api_key_env = "SOCIALSIM_WEB_TEST_KEY", cache = false, max_retries = 0, timeout = 90}}
[seats.decoder]
kind = "human"
[seats.interceptor]
kind = "human"
""")
    app = create_app(tmp_path / "results", HOST, offered=[offered])
    with TestClient(app) as client:
        body = {"experiment": "slow_encoder", "humans": ["decoder", "interceptor"], "seed": 0}
        response = client.post("/api/sessions", headers=auth(HOST), json=body)
        assert response.status_code == 200, response.text
        data = response.json()
        data["tokens"] = {
            seat: dict(p.split("=") for p in link.split("#")[1].split("&"))["token"]
            for seat, link in data["links"].items()
        }
        deadline = time.monotonic() + 60
        while True:  # the encoder's model is deciding: both people wait for it, by name
            state = wait_state(client, data, "interceptor", {"waiting"})
            if state["waiting_for"] == "the encoder (llm_decrypto) to give the hints":
                break
            assert time.monotonic() < deadline, state
            time.sleep(0.02)
        decoder = wait_state(client, data, "decoder", {"waiting"})
        assert decoder["waiting_for"] == "the encoder (llm_decrypto) to give the hints"
        release.set()
        wait_state(client, data, "decoder", {"your_turn"})
        wait_state(client, data, "interceptor", {"your_turn"})
        url = base(data, "decoder") + "/answer"
        token = data["tokens"]["decoder"]
        assert client.post(url, headers=auth(token), json={"answer": {"code": "1-2-3"}}).json()
        state = wait_state(client, data, "decoder", {"waiting"})
        assert state["waiting_for"] == "the interceptor (a person) to guess"


def test_a_person_who_makes_no_move_within_the_idle_timeout_ends_the_session(tmp_path):
    results = tmp_path / "results"
    with TestClient(create_app(results, HOST, idle_timeout=0.3)) as client:
        data = create(client, "decrypto_quickstart", ["interceptor"], seed=0)
        state = wait_state(client, data, "interceptor", {"your_turn", "over"})
        assert state["idle_timeout"] == 0.3
        over = wait_state(client, data, "interceptor", {"over"})
        assert (
            over["ending"]["outcome"] == "The game ended: the interceptor gave no answer in 0.3 s."
        )
    (folder,) = list(results.iterdir())
    (record,) = [json.loads(line) for line in (folder / "episodes.jsonl").read_text().splitlines()]
    assert record["status"] == "failed"
    assert record["error"] == (
        "seat interceptor (human): IdleTimeout: the interceptor gave no answer in 0.3 s"
    )
    assert json.loads((folder / "abandoned.json").read_text()) == {
        "seat": "interceptor",
        "idle_timeout": 0.3,
        "reason": "the interceptor gave no answer in 0.3 s",
    }
    with TestClient(create_app(results, HOST, idle_timeout=0.3)) as client:
        assert client.app.state.sessions.by_id == {}  # an abandoned session is not resumed
    assert main(["report", str(folder), "--no-files"]) == 0


def test_a_session_is_abandoned_by_its_abandoned_file_not_by_its_error_text(tmp_path):
    for name, error in (("idled", "a seat idled"), ("crashed", "IdleTimeout: in a message")):
        out = tmp_path / name
        out.mkdir()
        (out / sessions.SESSION).write_text("{}")
        with records.EventLog(out) as log:
            log.append(records.EpisodeRecord(**FAILED, status="failed", error=error))
    (tmp_path / "idled" / sessions.ABANDONED).write_text('{"seat": "interceptor"}')
    assert sessions.abandoned(tmp_path / "idled")
    assert not sessions.abandoned(tmp_path / "crashed")
    assert sessions.census(tmp_path) == (1, 1)  # (over, unfinished)


def test_serve_refuses_a_negative_idle_timeout(capsys):
    assert main(["serve", "--idle-timeout", "-1"]) == 2
    assert "--idle-timeout: seconds >= 0" in capsys.readouterr().err
