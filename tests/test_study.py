"""Human studies (socialsim.study, serve --study, study-test): the study file's checks, the
payment rule, assignment, the participants' stages through the API, the wait cap's filler, a
handover recorded from its turn, and simulated participants end to end."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from socialsim.agents.scripted.gossip import ImageScoring

from socialsim import records
from socialsim import study as study_module
from socialsim.config import ConfigError

EXAMPLE = Path(__file__).parent.parent / "experiments" / "study_donation"
HOST = "host-secret"
MONITOR = "monitor-secret"


def copy_example(tmp_path: Path, llm: bool = True, **changes: str) -> Path:
    """The example study in ``tmp_path``, its top-level keys ``changes`` rewritten; without
    ``llm``, both treatments play the scripted game (no chat server needed)."""
    folder = tmp_path / "study"
    shutil.copytree(EXAMPLE, folder)
    path = folder / "study.toml"
    text = path.read_text(encoding="utf-8")
    if not llm:
        text = text.replace('"game_llm.toml"', '"game_scripted.toml"')
    lines = text.splitlines()
    for key, value in changes.items():
        lines = [f"{key} = {value}" if line.startswith(f"{key} =") else line for line in lines]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_the_example_study_reads_as_written():
    study = study_module.load(EXAMPLE / "study.toml")
    assert study.people == ("agent_0", "agent_1")
    assert [t.name for t in study.treatments] == ["llm", "scripted"]
    assert study.treatments[0].experiment == str(EXAMPLE.resolve() / "game_llm.toml")
    assert study.payment == study_module.Payment(2.0, 0.05, 6.0, "GBP")
    assert study.id_parameter == "PROLIFIC_PID"
    assert study.quiz[0].answer == "five times what you give"
    assert study.pages["consent"].startswith("# Taking part")


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("assignment", '"alphabetical"', "assignment: 'alphabetical'; allowed: balanced, arrival"),
        ("games", "0", "games: games each participant plays, >= 1, got 0"),
        ("wait_seconds", '"long"', "wait_seconds: expected a number, got 'long'"),
        ("idle_seconds", "0", "idle_seconds: expected a number > 0, got 0"),
        ("filler", '{ kind = "human" }', "filler.kind: the agent that takes a person's seat"),
        ("people", "[]", "people: expected at least 1, got 0"),
        ("experiment", '"../elsewhere/game.toml"', "experiment: '../elsewhere/game.toml': name"),
    ],
)
def test_a_bad_study_key_is_one_line_naming_the_field(tmp_path, key, value, message):
    path = copy_example(tmp_path, **{key: value})
    with pytest.raises(ConfigError) as error:
        study_module.load(path)
    assert str(error.value).startswith(message)
    assert "\n" not in str(error.value)


def test_an_unknown_key_names_the_nearest_and_the_allowed_ones(tmp_path):
    path = copy_example(tmp_path)
    path.write_text(path.read_text().replace("games = 1", "game = 1"), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"^game: unknown key 'game' \(did you mean 'games'"):
        study_module.load(path)


def test_pages_quiz_and_payment_are_checked(tmp_path):
    path = copy_example(tmp_path)
    text = path.read_text()
    cases = [
        (text.replace('consent = "consent.md"', 'consent = "/etc/passwd"'), "pages.consent: '/etc"),
        (text.replace('consent = "consent.md"', 'consent = "gone.md"'), "pages.consent: no file"),
        (text.replace('answer = "yes, through gossip"', 'answer = "maybe"'), "quiz[1].answer: "),
        (text.replace("cap = 6.0", "cap = 1"), "payment.cap: 1 is below the show-up fee 2"),
        (text.replace('id_parameter = "PROLIFIC_PID"', 'id_parameter = "a b"'), "panel.id_param"),
    ]
    for changed, message in cases:
        path.write_text(changed, encoding="utf-8")
        with pytest.raises(ConfigError) as error:
            study_module.load(path)
        assert str(error.value).startswith(message), str(error.value)


def test_payment_is_the_show_up_fee_plus_points_times_rate_capped():
    payment = study_module.Payment(show_up=2.0, per_point=0.05, cap=6.0)
    assert payment.amount(5.0) == 2.25
    assert payment.amount(-3.0) == 2.0  # points below zero take nothing from the fee
    assert payment.amount(1000.0) == 6.0


def test_assignment_balanced_in_turn_and_seeded():
    study = study_module.load(EXAMPLE / "study.toml")
    balanced = study_module.assign
    assert balanced(study, 5, [3, 2], 0.9) == 1  # the fewest still in the study
    assert balanced(study, 5, [2, 2], 0.9) == 0  # a tie: the first listed
    import dataclasses

    arrival = dataclasses.replace(study, assignment="arrival")
    assert [study_module.assign(arrival, i, [0, 0], 0.0) for i in range(4)] == [0, 1, 0, 1]
    random = dataclasses.replace(study, assignment="random")
    assert study_module.assign(random, 0, [0, 0], 0.49) == 0
    assert study_module.assign(random, 0, [0, 0], 0.5) == 1


def test_a_page_shows_raw_html_and_script_links_as_text():
    pytest.importorskip("markdown_it")
    from socialsim.web.study_routes import page_html

    html = page_html("# Hi\n\n<script>alert(1)</script> [x](javascript:alert(1)) **ok**")
    assert "<h1>Hi</h1>" in html and "<strong>ok</strong>" in html
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert 'href="javascript' not in html


# -- the participants' API, in-process -----------------------------------------------------


def app_client(tmp_path, path):
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from socialsim.web.app import create_app

    study = study_module.load(path)
    return TestClient(create_app(tmp_path / "results", HOST, study=study, monitor_token=MONITOR))


def auth(token):
    return {"Authorization": f"Bearer {token}"}


def arrive(client, panel_id="p1"):
    response = client.post("/api/study/arrive", json={"panel_id": panel_id})
    assert response.status_code == 200, response.text
    return response.json()["token"]


def test_a_participant_goes_through_consent_instructions_and_quiz(tmp_path):
    path = copy_example(tmp_path, llm=False, wait_seconds="600")
    with app_client(tmp_path, path) as client:
        assert client.get("/api/study/me").status_code == 403
        assert client.get("/api/study/me", headers=auth("x" * 43)).status_code == 403
        token = arrive(client)
        me = client.get("/api/study/me", headers=auth(token)).json()
        assert me["participant"] == "P0001" and me["stage"] == "consent"
        assert "<h1>Taking part</h1>" in me["page"]
        # the quiz before the consent: 409, the stage unchanged
        early = client.post("/api/study/quiz", headers=auth(token), json={"answers": []})
        assert early.status_code == 409
        client.post("/api/study/consent", headers=auth(token), json={"agree": True})
        state = client.post("/api/study/instructions", headers=auth(token)).json()
        assert state["stage"] == "quiz" and "answer" not in json.dumps(state["quiz"])
        wrong = ["what you give", "yes, through gossip"]
        state = client.post("/api/study/quiz", headers=auth(token), json={"answers": wrong}).json()
        assert (state["stage"], state["wrong"], state["attempts"]) == ("quiz", [0], 1)
        right = ["five times what you give", "yes, through gossip"]
        state = client.post("/api/study/quiz", headers=auth(token), json={"answers": right}).json()
        assert state["stage"] == "lobby"
        # the same panel id again: refused; a malformed one: refused
        again = client.post("/api/study/arrive", json={"panel_id": "p1"})
        assert again.status_code == 422 and "already taken part" in again.json()["error"]
        bad = client.post("/api/study/arrive", json={"panel_id": "<b>"})
        assert bad.status_code == 422 and bad.json()["error"].startswith("PROLIFIC_PID:")
        # the monitor needs its own token: a participant's or the host's is refused
        assert client.get("/api/study/monitor", headers=auth(token)).status_code == 403
        assert client.get("/api/study/monitor", headers=auth(HOST)).status_code == 403
        assert client.get("/api/experiments", headers=auth(MONITOR)).status_code == 403
        monitor = client.get("/api/study/monitor", headers=auth(MONITOR)).json()
        assert monitor["stages"]["lobby"] == 1 and monitor["participants"] == 1
        rows = client.get("/api/study/export", headers=auth(MONITOR)).text.splitlines()
        assert rows[0].startswith("participant,panel_id,treatment,status")
        assert rows[1].startswith("P0001,p1,llm,in progress,,,")


def test_failing_the_quiz_too_often_drops_the_participant_with_the_show_up_fee(tmp_path):
    path = copy_example(tmp_path, llm=False, max_quiz_attempts="2")
    with app_client(tmp_path, path) as client:
        token = arrive(client)
        client.post("/api/study/consent", headers=auth(token), json={"agree": True})
        client.post("/api/study/instructions", headers=auth(token))
        wrong = {"answers": ["nothing", "no, never"]}
        client.post("/api/study/quiz", headers=auth(token), json=wrong)
        state = client.post("/api/study/quiz", headers=auth(token), json=wrong).json()
        assert state["stage"] == "dropped"
        assert state["reason"] == "did not pass the quiz in 2 attempts"
        assert state["payment"] == 2.0 and "code" not in state


def play_until_over(client, seat, leave_token=None, deadline=60.0):
    """Answer every request of ``seat`` (``{session, seat, token}``) with a legal move; with
    ``leave_token``, leave the study at the seat's second request instead."""
    path = f"/api/sessions/{seat['session']}/seats/{seat['seat']}"
    end = time.monotonic() + deadline
    moves = 0
    while time.monotonic() < end:
        state = client.get(path + "/state", headers=auth(seat["token"])).json()
        if state["status"] == "over":
            return state
        if state["status"] == "your_turn":
            if leave_token and moves == 1:
                client.post("/api/study/leave", headers=auth(leave_token))
                leave_token = None
                continue
            answer = {
                f["name"]: (
                    f["choices"][0] if f["choices"] else "0" if f["name"] == "amount" else ""
                )
                for f in state["request"]["fields"]
            }
            client.post(path + "/answer", headers=auth(seat["token"]), json={"answer": answer})
            moves += 1
        time.sleep(0.02)
    raise AssertionError("the game did not end")


def admitted(client, panel_id):
    token = arrive(client, panel_id)
    client.post("/api/study/consent", headers=auth(token), json={"agree": True})
    client.post("/api/study/instructions", headers=auth(token))
    right = ["five times what you give", "yes, through gossip"]
    client.post("/api/study/quiz", headers=auth(token), json={"answers": right})
    return token


def wait_stage(client, token, stages, deadline=30.0):
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        state = client.get("/api/study/me", headers=auth(token)).json()
        if state["stage"] in stages:
            return state
        time.sleep(0.05)
    raise AssertionError(state)


def test_after_the_wait_cap_the_filler_takes_the_empty_seat_and_the_record_says_so(tmp_path):
    path = copy_example(tmp_path, llm=False, wait_seconds="0.3")
    with app_client(tmp_path, path) as client:
        token = admitted(client, "alone")
        state = wait_stage(client, token, {"playing"})
        assert state["seat"]["seat"] == "agent_0"
        # the participant's token is not the seat's: the seat API wants the seat's own
        seat_path = f"/api/sessions/{state['seat']['session']}/seats/agent_0/state"
        assert client.get(seat_path, headers=auth(token)).status_code == 403
        play_until_over(client, state["seat"])
        state = wait_stage(client, token, {"done"})
        assert state["code"] == "C7D0N8"
        out = tmp_path / "results" / "study_donation" / "games" / "g0001_llm"
        facts = json.loads((out / "study_game.json").read_text())
        assert facts["participants"] == {"agent_0": "P0001"}
        assert facts["filled_by_filler"] == ["agent_1"]
        (record,) = records.read_records(out)
        assert record.seats["agent_1"]["kind"] == "image_scoring"
        assert record.seats["agent_0"]["kind"] == "human"
        assert record.seats["agent_0"]["filler"] == {"kind": "image_scoring"}
        points = record.returns["agent_0"]
        assert state["payment"] == study_module.Payment(2.0, 0.05, 6.0).amount(points)


def test_a_person_who_leaves_mid_game_hands_the_seat_over_from_that_turn(tmp_path):
    path = copy_example(tmp_path, llm=False, wait_seconds="600")
    path.write_text(path.read_text().replace('name = "llm"', 'name = "first"'))
    with app_client(tmp_path, path) as client:
        one, two = admitted(client, "one"), admitted(client, "two")
        # balanced: one in each treatment; a third and fourth join them
        three, four = admitted(client, "three"), admitted(client, "four")
        seat_one = wait_stage(client, one, {"playing"})["seat"]
        seat_three = wait_stage(client, three, {"playing"})["seat"]
        assert seat_one["session"] == seat_three["session"]
        import threading

        other = threading.Thread(target=play_until_over, args=(client, seat_three))
        other.start()
        play_until_over(client, seat_one, leave_token=one)
        other.join()
        state = wait_stage(client, one, {"dropped"})
        assert state["reason"] == "left the study" and state["payment"] == 2.0
        assert wait_stage(client, three, {"done"})["stage"] == "done"
        (record,) = records.read_records(
            tmp_path / "results" / "study_donation" / "games" / "g0001_first"
        )
        assert record.status == "done"
        seat = seat_one["seat"]
        (handover,) = [e for e in record.events[seat] if "handover" in e]
        assert handover["handover"] == "image_scoring"
        assert handover["reason"] == f"the person in {seat} left the study"
        assert record.counters[seat]["handed_over_at_turn"] == handover["turn"]
        row = client.get("/api/study/export", headers=auth(MONITOR)).text.splitlines()[1]
        assert f"g0001_first@turn {handover['turn']}" in row and ",dropped,playing," in row
        del two, four


@pytest.mark.slow
def test_study_test_runs_simulated_participants_through_the_real_server(tmp_path):
    pytest.importorskip("websockets")
    from socialsim.web.study_test import study_test

    path = copy_example(tmp_path, wait_seconds="1", idle_seconds="3")
    summary = study_test(path, 12, tmp_path / "results", seed=0, chat_server=True)
    assert summary["ok"], summary["text"]
    rows = summary["rows"]
    assert [r["participant"] for r in rows] == [f"P{i:04d}" for i in range(1, 13)]
    assert {r["status"] for r in rows} <= {"completed", "dropped"}
    by_treatment = [sum(r["treatment"] == t for r in rows) for t in ("llm", "scripted")]
    assert by_treatment == [6, 6]
    # seed 0: participant 1 leaves at their second request, participant 8 declines consent
    assert rows[0]["status"] == "dropped" and rows[0]["reason"] == "left the study"
    assert rows[7]["reason"] == "declined consent" and rows[7]["payment"] == "0.00"
    for row in rows:
        if row["status"] == "completed":
            paid = study_module.Payment(2.0, 0.05, 6.0).amount(float(row["points"]))
            assert row["payment"] == f"{paid:.2f}"
    for game in summary["games"]:
        (record,) = records.read_records(game)
        assert record.status == "done"


def test_a_paused_lobby_forms_no_game_and_an_ended_study_turns_arrivals_away(tmp_path):
    path = copy_example(tmp_path, llm=False, wait_seconds="600")
    with app_client(tmp_path, path) as client:
        assert client.get("/monitor").status_code == 200  # the page; its API needs the token
        assert client.post("/api/study/monitor", json={"paused": True}).status_code == 403
        paused = client.post("/api/study/monitor", headers=auth(MONITOR), json={"paused": True})
        assert paused.json()["paused"] is True
        one, two, three = (admitted(client, p) for p in ("a", "b", "c"))
        time.sleep(0.6)  # a few of the lobby's rounds
        assert client.get("/api/study/me", headers=auth(three)).json()["stage"] == "lobby"
        client.post("/api/study/monitor", headers=auth(MONITOR), json={"paused": False})
        assert wait_stage(client, three, {"playing"})["stage"] == "playing"  # a and c: llm
        ended = client.post("/api/study/monitor", headers=auth(MONITOR), json={"end": True})
        assert ended.json()["ended"] is True
        late = client.post("/api/study/arrive", json={"panel_id": "late"})
        assert late.status_code == 422 and late.json()["error"] == "the study has ended; thank you"
        del one, two


class CountingFiller(ImageScoring):
    """An image scorer that counts its moves (a filler whose counters the record keeps)."""

    def act(self, observation, messages, info):
        self.count("moves")
        return super().act(observation, messages, info)


def test_a_person_silent_at_a_move_past_idle_seconds_hands_the_seat_to_the_filler(tmp_path):
    path = copy_example(tmp_path, llm=False, wait_seconds="0.2", idle_seconds="0.5")
    text = path.read_text().replace(
        'filler = { kind = "image_scoring" }',
        'filler = { kind = "test_study:CountingFiller" }',
    )
    path.write_text(text, encoding="utf-8")
    with app_client(tmp_path, path) as client:
        token = admitted(client, "silent")
        wait_stage(client, token, {"playing"})
        state = wait_stage(client, token, {"dropped"})  # never answers
        assert state["reason"] == "the agent_0 gave no answer in 0.5 s"
        out = tmp_path / "results" / "study_donation" / "games" / "g0001_llm"
        (record,) = records.read_records(out)
        assert record.status == "done"
        (handover,) = [e for e in record.events["agent_0"] if "handover" in e]
        assert handover["handover"] == "test_study:CountingFiller"
        counters = record.counters["agent_0"]
        assert counters["handed_over_at_turn"] == 1 == handover["turn"]
        moves = [s for s in record.steps if "agent_0" in s.get("actions", {})]
        assert counters["filler_moves"] == len(moves) > 0  # every move of the seat: the filler's
        journal = (out / "answers.jsonl").read_text().splitlines()
        assert json.loads(journal[-1]) == {
            "seat": "agent_0",
            "handover": "the agent_0 gave no answer in 0.5 s",
        }


def test_balanced_assignment_replaces_a_participant_who_left_before_playing(tmp_path):
    path = copy_example(tmp_path, llm=False, wait_seconds="600")
    with app_client(tmp_path, path) as client:
        first = arrive(client, "first")
        client.post("/api/study/consent", headers=auth(first), json={"agree": False})
        second, third = arrive(client, "second"), arrive(client, "third")
        rows = client.get("/api/study/export", headers=auth(MONITOR)).text.splitlines()[1:]
        assert [r.split(",")[2:4] for r in rows] == [
            ["llm", "dropped"],
            ["llm", "in progress"],  # in the place of the first, who declined
            ["scripted", "in progress"],
        ]
        del second, third
