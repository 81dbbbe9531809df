"""The web server against faults that would take it down (issue 38): an upload whose game is too
big, a game that computes for long beside a live session, floods of idle and half-sent
connections under a low descriptor limit, many live sockets on one seat, two servers on one
results directory, an unreadable session, SIGTERM."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("starlette")
uvicorn = pytest.importorskip("uvicorn")
httpx = pytest.importorskip("httpx")
from starlette.testclient import TestClient  # noqa: E402
from starlette.websockets import WebSocketDisconnect  # noqa: E402

from socialsim import directory_lock, registry  # noqa: E402
from socialsim.cli import main  # noqa: E402
from socialsim.web import server  # noqa: E402
from socialsim.web.app import MAX_SOCKETS_PER_SEAT, create_app  # noqa: E402

HOST = "host-secret-for-faults"
ROOT = Path(__file__).resolve().parents[1]


def auth(token: str = HOST) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def donation(players: int, seats: str = "") -> str:
    return (
        textwrap.dedent(f"""\
        name = "big"
        [env]
        id = "donation_v0"
        [env.kwargs]
        n_agents = {players}
        [seats."*"]
        kind = "image_scoring"
        """)
        + seats
    )


def create(client, experiment: str, humans: list[str]) -> dict:
    response = client.post(
        "/api/sessions",
        headers=auth(),
        json={"experiment": experiment, "humans": humans, "seed": 0},
    )
    assert response.status_code == 200, response.text
    data = response.json()
    data["tokens"] = {s: link.rsplit("token=", 1)[1] for s, link in data["links"].items()}
    return data


def state_url(data: dict, seat: str) -> str:
    return f"/api/sessions/{data['session']}/seats/{seat}/state"


@pytest.fixture
def client(tmp_path):
    with TestClient(create_app(tmp_path / "results", HOST, idle_timeout=0)) as client:
        yield client


# -- item 2: a game's size is capped, and a game runs off the server's loop --------------------


def test_an_upload_of_a_3000_player_donation_game_is_refused_naming_its_time_and_the_limit(
    client, tmp_path
):
    for path, body in (
        ("/api/experiments/check", {"upload": donation(3000)}),
        ("/api/sessions", {"upload": donation(3000), "humans": ["agent_0"], "seed": 0}),
    ):
        response = client.post(path, headers=auth(), json=body)
        assert response.status_code == 422
        assert response.json()["error"] == (
            "upload: env.kwargs: a game of 3000 players and 4498500 pairings is about 526163 s "
            "of the server's time; at most 60 s in an upload (fewer players or rounds, or "
            'schedule = "random")'
        )
    assert not (tmp_path / "results").exists() or not any((tmp_path / "results").iterdir())


def test_an_upload_of_a_200_player_donation_game_is_within_the_cap_and_of_300_is_not(client):
    response = client.post("/api/experiments/check", headers=auth(), json={"upload": donation(200)})
    assert response.status_code == 200, response.text
    assert len(response.json()["seats"]) == 200
    response = client.post("/api/experiments/check", headers=auth(), json={"upload": donation(300)})
    assert response.status_code == 422
    assert "a game of 300 players and 44850 pairings is about 89 s" in response.json()["error"]


@contextlib.contextmanager
def served(app):
    """``app`` served as ``socialsim serve`` serves it (its options), on a free port; yields
    its address, and stops it after the block."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        running = uvicorn.Server(uvicorn.Config(app, **server.options()))
        thread = threading.Thread(target=running.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        deadline = time.monotonic() + 30
        while not running.started:
            assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
            time.sleep(0.02)
        try:
            yield f"http://127.0.0.1:{sock.getsockname()[1]}"
        finally:
            running.should_exit = True
            thread.join(timeout=20)
        assert not thread.is_alive()


def test_a_live_session_and_the_host_page_answer_while_another_sessions_agent_computes(
    tmp_path, monkeypatch
):
    """An agent that holds its thread (as a long computation does) in one session: the other
    session's page and the host page still answer, each within a second."""
    computing, release = threading.Event(), threading.Event()
    scripted = registry.agent_class("image_scoring")
    plain_act = scripted.act

    def busy_act(self, observation, messages, info):
        computing.set()
        release.wait(30)  # holds this thread, as a long numpy step or a native call would
        return plain_act(self, observation, messages, info)

    monkeypatch.setattr(scripted, "act", busy_act)
    with served(create_app(tmp_path / "results", HOST)) as url:
        try:
            with httpx.Client(base_url=url, timeout=1.0) as http:
                quiet = create(http, "decrypto_quickstart", ["interceptor"])
                busy = create(http, "align_quickstart", ["agent_8"])
                assert computing.wait(10), "the busy game's agent was never asked"
                for _ in range(5):  # the quiet seat's page and the host page: each within 1 s
                    token = quiet["tokens"]["interceptor"]
                    answer = http.get(state_url(quiet, "interceptor"), headers=auth(token))
                    assert answer.status_code == 200
                    assert http.get("/").status_code == 200
                    token = busy["tokens"]["agent_8"]
                    assert http.get(state_url(busy, "agent_8"), headers=auth(token))
                assert not release.is_set()  # the busy game was held the whole time
        finally:
            release.set()


# -- item 3: idle and slow connections, sockets per seat, a bounded log ------------------------

FLOOD_SERVER = """
import resource, sys
resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
import uvicorn
from socialsim.web import server
from socialsim.web.app import create_app
app = create_app(sys.argv[1], "host")
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), **server.options(head_seconds=1.0))
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def flood_server(tmp_path):
    """``socialsim``'s server in a process whose descriptor limit is 256 (so its connection cap
    is 92) and whose head timeout is 1 s; yields (port, process)."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-c", FLOOD_SERVER, str(tmp_path / "results"), str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
    )
    deadline = time.monotonic() + 60
    while True:
        assert process.poll() is None, process.stderr.read().decode()
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                break
        except OSError:
            assert time.monotonic() < deadline
            time.sleep(0.1)
    yield port, process
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()


def get_root(port: int) -> int:
    with httpx.Client(timeout=5.0) as http:
        return http.get(f"http://127.0.0.1:{port}/").status_code


def flood(port: int, count: int, first: bytes) -> list[socket.socket]:
    held = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        if first:
            sock.sendall(first)
        held.append(sock)
    return held


def read_until_closed(sock: socket.socket) -> bytes:
    """What the server sends before it closes ``sock`` (a timeout fails: it held it open);
    ``RESET`` when it closed it with what was sent unread (a refused connection)."""
    out = b""
    try:
        while chunk := sock.recv(4096):
            out += chunk
    except ConnectionResetError:
        return RESET
    return out


RESET = b"(reset)"


@pytest.mark.slow
@pytest.mark.parametrize("first", [b"", b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: "])
def test_a_flood_of_idle_or_half_sent_connections_is_capped_and_closed_and_the_log_stays_short(
    flood_server, first
):
    port, process = flood_server
    held = flood(port, 150, first)  # more than the cap (256 descriptors - 164 spare = 92)
    answers = [read_until_closed(sock) for sock in held]  # each closed within 10 s, none held
    for sock in held:
        sock.close()
    refused = [a for a in answers if a in (server._REFUSED, RESET)]
    # past the cap some are refused at once (how many depends on how many the head timeout had
    # closed meanwhile); every other one is closed at the head timeout: none is held
    assert refused and len(answers) == 150
    assert all(a in (b"", server._REFUSED, RESET) for a in answers)
    assert get_root(port) == 200  # the server answers again
    assert process.poll() is None
    process.send_signal(signal.SIGINT)
    process.wait(timeout=20)
    err = process.stderr.read().decode()
    assert "Traceback" not in err
    assert len(err.splitlines()) <= server.LOG_BURST + 5, err


def test_a_log_flood_of_tracebacks_is_cut_to_a_burst_of_one_line_records():
    logger = logging.getLogger("socialsim.test.flood")
    logger.propagate = False
    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record):
            lines.append(self.format(record))

    logger.addHandler(Keep())
    logger.addFilter(server.BoundedLog())
    for _ in range(1000):
        try:
            raise OSError(24, "Too many open files")
        except OSError:
            logger.exception("socket.accept() out of system resource\nsocket: <socket>")
    assert len(lines) == server.LOG_BURST
    assert lines[0] == (
        "socket.accept() out of system resource: OSError: [Errno 24] Too many open files"
    )


def test_a_seat_holds_at_most_eight_live_sockets_and_the_ninth_is_refused(client):
    data = create(client, "decrypto_quickstart", ["interceptor"])
    url = (
        f"/api/sessions/{data['session']}/seats/interceptor/live"
        f"?token={data['tokens']['interceptor']}"
    )
    opened = []
    for _ in range(MAX_SOCKETS_PER_SEAT):
        socket_ = client.websocket_connect(url)
        socket_.__enter__()
        assert socket_.receive_json()["seat"] == "interceptor"
        opened.append(socket_)
    with pytest.raises(WebSocketDisconnect) as refused, client.websocket_connect(url):
        pass
    assert refused.value.code == 1008
    opened.pop().__exit__(None, None, None)  # one closed: one more may open
    with client.websocket_connect(url) as again:
        assert again.receive_json()["seat"] == "interceptor"
    for socket_ in opened:
        socket_.__exit__(None, None, None)


# -- items 4 and 8: one server per directory, an unreadable session, SIGTERM -------------------


def test_a_second_serve_on_one_results_directory_exits_2_naming_the_holder(tmp_path, capsys):
    results = tmp_path / "results"
    with directory_lock.hold(results):  # as a first `socialsim serve` holds it
        assert main(["serve", "--port", "8125", "--results", str(results)]) == 2
    assert capsys.readouterr().err == (
        f"socialsim: error: --results {results}: in use by another socialsim run (pid "
        f"{os.getpid()}, which holds {results / 'run.lock'}); wait for it to end, or choose "
        "another directory\n"
    )


def test_an_unreadable_session_is_named_and_skipped_and_the_server_starts(tmp_path, capsys):
    results = tmp_path / "results"
    with TestClient(create_app(results, HOST, idle_timeout=0)) as client:
        data = create(client, "decrypto_quickstart", ["interceptor"])
    (broken,) = [p for p in results.iterdir() if p.is_dir()]
    (broken / "episodes.jsonl").mkdir()  # reading its log fails (EISDIR), as an unreadable one
    capsys.readouterr()
    with TestClient(create_app(results, HOST, idle_timeout=0)) as client:
        assert client.get("/").status_code == 200
        token = data["tokens"]["interceptor"]
        assert client.get(state_url(data, "interceptor"), headers=auth(token)).status_code == 403
    err = capsys.readouterr().err
    assert err.startswith(f"socialsim: not resuming {broken}: [Errno 21] Is a directory")


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_sigterm_sigint_and_sighup_stop_serve_with_its_summary_and_exit_0(tmp_path, signum):
    port = free_port()
    results = tmp_path / "results"
    process = subprocess.Popen(
        [sys.executable, "-m", "socialsim.cli", "serve", "--port", str(port)]
        + ["--results", str(results)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    first = process.stdout.readline()
    assert first.startswith(f"socialsim: host page http://127.0.0.1:{port}/#host=")
    deadline = time.monotonic() + 60
    while get_root_or_none(port) != 200:
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.1)
    process.send_signal(signum)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert out == (
        f"socialsim: stopped; 0 sessions logged in {results} (0 over, 0 unfinished, every "
        "answer given so far kept)\n"
    )
    assert "Traceback" not in err


def get_root_or_none(port: int) -> int | None:
    try:
        return get_root(port)
    except httpx.HTTPError:
        return None


def test_the_serve_options_name_the_guarded_protocol_and_the_bounds():
    options = server.options(cap=10, head_seconds=2.0)
    assert issubclass(options["http"], server.GuardedH11)
    assert (options["http"].cap, options["http"].head_seconds) == (10, 2.0)
    assert options["timeout_keep_alive"] == 5.0
