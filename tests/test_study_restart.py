"""``serve --study`` killed with SIGKILL mid-study and started again: every finished game kept
and counted once, a game under way played on from its journal (a person's answers and a
handover replayed, the seat links still working), every waiting participant back where they
were, and no game number used twice."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

httpx = pytest.importorskip("httpx")
pytest.importorskip("uvicorn")

from test_study import admitted, auth, copy_example, play_until_over, wait_stage  # noqa: E402

from socialsim import records  # noqa: E402

pytestmark = pytest.mark.slow


def start(path, results, port):
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "socialsim",
            "serve",
            "--study",
            str(path),
            "--port",
            str(port),
            "--results",
            str(results),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    )
    line = server.stdout.readline()
    assert "the study's public link" in line, line
    client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30)
    deadline = time.monotonic() + 30
    while True:
        try:
            client.get("/api/study/info")
            return server, client
        except httpx.TransportError:
            assert time.monotonic() < deadline
            time.sleep(0.1)


def answer_once(client, seat):
    path = f"/api/sessions/{seat['session']}/seats/{seat['seat']}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        state = client.get(path + "/state", headers=auth(seat["token"])).json()
        if state["status"] == "your_turn":
            answer = {
                f["name"]: (
                    f["choices"][0] if f["choices"] else "0" if f["name"] == "amount" else ""
                )
                for f in state["request"]["fields"]
            }
            response = client.post(
                path + "/answer", headers=auth(seat["token"]), json={"answer": answer}
            )
            assert response.status_code == 200, response.text
            return
        time.sleep(0.02)
    raise AssertionError("no turn came")


def test_a_study_killed_mid_game_resumes_where_it_was(tmp_path):
    path = copy_example(tmp_path, llm=False, wait_seconds="600", idle_seconds="600")
    results = tmp_path / "results"
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    server, client = start(path, results, port)
    try:
        # a and c play treatment llm's game 1 to its end; b and d start game 2, d leaves
        a, b, c, d = (admitted(client, name) for name in "abcd")
        seat_a = wait_stage(client, a, {"playing"})["seat"]
        seat_c = wait_stage(client, c, {"playing"})["seat"]
        import threading

        other = threading.Thread(
            target=play_until_over,
            args=(httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30), seat_c),
        )
        other.start()
        play_until_over(client, seat_a)
        other.join()
        wait_stage(client, a, {"done"})
        wait_stage(client, c, {"done"})
        seat_b = wait_stage(client, b, {"playing"})["seat"]
        wait_stage(client, d, {"playing"})
        client.post("/api/study/leave", headers=auth(d))
        answer_once(client, seat_b)
        e = admitted(client, "e")  # waits in the lobby
        f = client.post("/api/study/arrive", json={"panel_id": "f"}).json()["token"]  # consent
        time.sleep(0.5)
    finally:
        server.send_signal(signal.SIGKILL)
        server.wait(timeout=10)
    server, client = start(path, results, port)
    try:
        assert wait_stage(client, a, {"done"})["code"] == "C7D0N8"
        assert client.get("/api/study/me", headers=auth(e)).json()["stage"] == "lobby"
        assert client.get("/api/study/me", headers=auth(f)).json()["stage"] == "consent"
        assert client.get("/api/study/me", headers=auth(d)).json()["stage"] == "dropped"
        # b's game goes on with b's own seat link, the filler in d's seat
        assert wait_stage(client, b, {"playing"})["seat"] == seat_b
        play_until_over(client, seat_b)
        assert wait_stage(client, b, {"done"})["stage"] == "done"
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    games = sorted(p.name for p in (results / "study_donation" / "games").glob("g*"))
    assert games == ["g0001_llm", "g0002_scripted"]
    one = records.read_records(results / "study_donation" / "games" / "g0001_llm")
    two = records.read_records(results / "study_donation" / "games" / "g0002_scripted")
    assert len(one) == 1 and len(two) == 1 and two[0].status == "done"
    # each game pooled into the study's folder once, across the kill and the restart
    lines = (results / "study_donation" / records.EPISODES).read_text().splitlines()
    pooled = [json.loads(line) for line in lines]
    assert [(r["cell"], r["episode"]) for r in pooled] == [
        ({"treatment": "llm"}, 0),
        ({"treatment": "scripted"}, 1),
    ]
    d_seat = "agent_1" if seat_b["seat"] == "agent_0" else "agent_0"
    (handover,) = [x for x in two[0].events[d_seat] if "handover" in x]
    assert handover["reason"] == f"the person in {d_seat} left the study"
    rows = (results / "study_donation" / "participants.csv").read_text().splitlines()
    assert len(rows) == 1 + 6
    statuses = [r.split(",")[3] for r in rows[1:]]
    assert statuses == [
        "completed",
        "completed",
        "completed",
        "dropped",
        "in progress",
        "in progress",
    ]
