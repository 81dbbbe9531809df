"""The web server as a boundary for untrusted input (issue 25): what a holder of the host link
tries, against a real server on 127.0.0.1 and a capture server that records every request
made to it. Nothing reaches an endpoint, a file, a credential or code of the server; nothing is
written outside the results directory; no hostile body gets a 500."""

from __future__ import annotations

import http.client
import http.server
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("starlette")
uvicorn = pytest.importorskip("uvicorn")
httpx = pytest.importorskip("httpx")
from starlette.testclient import TestClient  # noqa: E402

from socialsim.cli import main  # noqa: E402
from socialsim.web import app as web_app  # noqa: E402
from socialsim.web import uploads  # noqa: E402
from socialsim.web.app import create_app  # noqa: E402

HOST = "host-secret-for-attacks"


def auth(token: str = HOST) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


class CaptureServer:
    """An HTTP server on 127.0.0.1 that records every request it gets (and answers 500)."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, str | None]] = []
        capture = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _record(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                capture.requests.append(
                    (self.command, self.path, self.headers.get("authorization"))
                )
                self.send_response(500)
                self.end_headers()

            do_GET = do_POST = do_PUT = _record

            def log_message(self, *args) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def capture():
    server = CaptureServer()
    yield server
    server.close()


@pytest.fixture
def client(tmp_path):
    app = create_app(tmp_path / "results", HOST, idle_timeout=0)
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client


def serve_in_thread(app):
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        assert thread.is_alive(), "the server did not start"
        time.sleep(0.02)
    return server, thread, sock, f"http://127.0.0.1:{sock.getsockname()[1]}"


@pytest.fixture
def live(tmp_path):
    """A real server on 127.0.0.1 (the app's keywords given to ``live(...)``)."""
    started = []

    def start(**kwargs):
        started.append(serve_in_thread(create_app(tmp_path / "results", HOST, **kwargs)))
        return started[-1][3]

    yield start
    for server, thread, sock, _ in started:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def upload(env: str = "", seats: str = "", top: str = 'name = "attack"') -> str:
    return f"""{top}
[env]
id = "decrypto_v0"
{env}
[seats."*"]
kind = "decrypto_random_guesser"
[seats.encoder]
kind = "decrypto_random_encoder"
{seats}
"""


def refused_everywhere(client, text: str, humans=("interceptor",)) -> list[str]:
    """The errors of ``/api/experiments/check`` and ``/api/sessions`` for ``text``: both 422."""
    errors = []
    for path, body in (
        ("/api/experiments/check", {"upload": text}),
        ("/api/sessions", {"upload": text, "humans": list(humans), "seed": 0}),
    ):
        response = client.post(path, headers=auth(), json=body)
        assert response.status_code == 422, (path, response.text)
        errors.append(response.json()["error"])
    return errors


def files_under(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*")} if folder.exists() else set()


def test_an_upload_naming_a_key_variable_and_an_endpoint_is_refused_and_the_endpoint_hears_nothing(
    client, capture, tmp_path
):
    seat = f"""[seats.decoder]
kind = "llm_decrypto"
model = {{model = "openai/x", api_base = "{capture.url}", api_key_env = "HOME", cache = false}}
"""
    for error in refused_everywhere(client, upload(seats=seat)):
        assert error.startswith(
            "upload: seats.decoder.model (model.api_base, model.api_key_env, model.cache): "
            "not allowed in an uploaded experiment (it names a model server and its credentials"
        )
    # the same keys from a grid, and the key variable alone: refused as well
    grid = upload(
        top='name = "attack"\n[grid]\n"seats.decoder.model.api_base" = ["' + capture.url + '"]'
    )
    assert "seats.decoder.model" in refused_everywhere(client, grid)[0]
    assert client.app.state.sessions.by_id == {}  # no game, so no agent that could call out
    assert capture.requests == []
    assert files_under(tmp_path / "results") == set()


def test_an_upload_naming_a_word_list_file_is_refused_and_no_line_of_it_is_served(client, tmp_path):
    text = upload(
        env='[env.kwargs]\nwordlist = "/etc/passwd"',
        seats='[seats.decoder]\nkind = "human"',
    )
    for error in refused_everywhere(client, text, humans=["decoder"]):
        assert error.startswith(
            "upload: env.kwargs.wordlist: not allowed in an uploaded experiment (it names a file"
        )
    assert files_under(tmp_path / "results") == set()  # no session, so no keywords route at all
    # any other path-like text in a plain parameter is refused too
    named = upload(seats='[seats.decoder]\nkind = "human"\nname = "../../etc/passwd"')
    assert "seats.decoder.name: a plain text" in refused_everywhere(client, named)[0]


@pytest.mark.parametrize(
    "name", ["../x", "x/../../y", "a/b", "..", ".hidden", "x\x00y", "n" * 65, "", "a b", "é"]
)
def test_an_upload_whose_name_is_not_a_plain_name_is_refused_and_nothing_is_written(
    client, tmp_path, name
):
    before = files_under(tmp_path)
    text = upload(top=f"name = {json.dumps(name)}")
    for error in refused_everywhere(client, text):
        assert error.startswith("upload: name: a plain name")
    assert files_under(tmp_path) == before


def test_an_upload_naming_a_cache_file_is_refused_and_the_file_is_never_made(client, tmp_path):
    cache = tmp_path / "elsewhere" / "replies.sqlite"
    seat = f'[seats.decoder]\nkind = "human"\nmodel = {{cache = "{cache}"}}'
    assert "seats.decoder.model (model.cache)" in refused_everywhere(client, upload(seats=seat))[0]
    top = upload(top=f'name = "attack"\ncache = "{cache}"')
    assert refused_everywhere(client, top)[0].startswith(
        "upload: cache: not allowed in an uploaded experiment (it names a file"
    )
    assert not cache.parent.exists()


def test_a_module_class_kind_or_env_in_an_upload_is_refused_before_it_is_imported(
    client, tmp_path, monkeypatch
):
    marker = tmp_path / "IMPORTED"
    modules = tmp_path / "modules"
    modules.mkdir()
    (modules / "recorded_import.py").write_text(
        f"open({str(marker)!r}, 'w').write('imported')\n"
        "from socialsim.agent import Agent\n"
        "class Foo(Agent):\n    pass\n"
    )
    monkeypatch.syspath_prepend(str(modules))
    kind = upload(seats='[seats.decoder]\nkind = "recorded_import:Foo"')
    for error in refused_everywhere(client, kind):
        assert error.startswith(
            "upload: seats.decoder.kind: 'recorded_import:Foo' is not an agent kind the server "
            "offers"
        )
        assert error.endswith("(never package.module:Class in an upload)")
    for env_id in ("recorded_import", "recorded_import:raw_env"):
        env = upload().replace('id = "decrypto_v0"', f'id = "{env_id}"')
        assert f"env.id: '{env_id}' has no seat page" in refused_everywhere(client, env)[0]
    assert not marker.exists() and "recorded_import" not in sys.modules


def test_uploads_past_the_caps_are_refused_before_anything_is_built(client):
    episodes = upload(top='name = "big"\nepisodes = 2000000')
    assert len(episodes.encode()) < 200
    assert "episodes: from 1 to 1000 in an upload" in refused_everywhere(client, episodes)[0]
    values = ", ".join(str(i) for i in range(1000))
    grid = upload(top=f'name = "grid"\n[grid]\n"seed" = [{values}]\n"episodes" = [{values}]')
    assert "grid: 1000000 cells; at most 64 in an upload" in refused_everywhere(client, grid)[0]
    players = """name = "crowd"
[env]
id = "donation_v0"
[env.kwargs]
n_agents = 100000
schedule = "random"
rounds = 1
pairs_per_round = 1
[seats."*"]
kind = "image_scoring"
"""
    error = refused_everywhere(client, players, humans=["agent_0"])[0]
    assert error.startswith("upload: env.kwargs: about 190734 MB to build its envs")
    huge = upload(env="[env.kwargs]\nmax_turns = " + "9" * 30)
    assert "env.kwargs.max_turns: expected an integer from" in refused_everywhere(client, huge)[0]


def test_an_upload_is_checked_off_the_event_loop_within_a_time_limit(live, monkeypatch):
    """While an upload's check is held (a check that cannot finish), the server answers other
    requests, and the check itself is answered 422 once its time is up."""
    release = threading.Event()
    started = threading.Event()
    real = uploads.check_upload

    def held(table, env_ids):
        started.set()
        release.wait(60)
        return real(table, env_ids)

    monkeypatch.setattr(uploads, "check_upload", held)
    url = live(check_seconds=1.0)
    answer = {}

    def check() -> None:
        response = httpx.post(
            url + "/api/experiments/check", headers=auth(), json={"upload": upload()}, timeout=60
        )
        answer["check"] = response

    thread = threading.Thread(target=check)
    thread.start()
    try:
        assert started.wait(30)
        other = httpx.get(url + "/api/experiments", headers=auth(), timeout=30)
        assert other.status_code == 200 and not release.is_set()  # answered while held
        thread.join(30)
        response = answer["check"]
        assert response.status_code == 422
        assert response.json()["error"] == (
            "the experiment could not be checked within 1 s; make it smaller"
        )
    finally:
        release.set()
        thread.join(30)


def test_a_body_that_arrives_too_slowly_is_answered_408(live, monkeypatch):
    monkeypatch.setattr(web_app, "BODY_SECONDS", 0.5)
    url = live()
    port = int(url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(
            b"POST /api/experiments/check HTTP/1.1\r\nHost: x\r\n"
            + f"Authorization: Bearer {HOST}\r\n".encode()
            + b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
        )
        answer = http.client.HTTPResponse(sock)
        answer.begin()
        assert answer.status == 408
        assert json.loads(answer.read()) == {"error": "the body must arrive within 0.5 s"}


DEEP = ("[" * 5000 + "]" * 5000).encode()  # 10 KB
HOSTILE_BODIES = {
    "JSON nested 10 KB deep": DEEP,
    "JSON object nested 33 deep": b'{"a":' * 33 + b"1" + b"}" * 33,
    "not JSON": b"{nope",
    "invalid UTF-8": b'{"experiment": "\xff\xfe"}',
    "a bare number": b"3",
    "a huge number": b"9" * 5000,
    "an infinite number": b'{"experiment": "decrypto_quickstart", "humans": [], "seed": 1e400}',
}
HOSTILE_JSON = {
    "experiment as dict": {"experiment": {"a": 1}, "humans": ["interceptor"]},
    "experiment as list": {"experiment": ["decrypto_quickstart"], "humans": ["interceptor"]},
    "experiment as number": {"experiment": 3, "humans": ["interceptor"]},
    "experiment as null": {"experiment": None, "humans": ["interceptor"]},
    "unknown experiment": {"experiment": "../../etc/passwd", "humans": ["interceptor"]},
    "humans as dict": {"experiment": "decrypto_quickstart", "humans": {"a": 1}},
    "humans of dicts": {"experiment": "decrypto_quickstart", "humans": [{"a": 1}]},
    "an unknown seat": {"experiment": "decrypto_quickstart", "humans": ["../x"]},
    "seed 10**30": {"experiment": "decrypto_quickstart", "humans": ["interceptor"], "seed": 10**30},
    "seed -1": {"experiment": "decrypto_quickstart", "humans": ["interceptor"], "seed": -1},
    "seed as text": {"experiment": "decrypto_quickstart", "humans": ["interceptor"], "seed": "1"},
    "seed as true": {"experiment": "decrypto_quickstart", "humans": ["interceptor"], "seed": True},
    "upload as dict": {"upload": {"name": "x"}, "humans": ["interceptor"]},
    "upload as list": {"upload": ["x"], "humans": ["interceptor"]},
    "upload as number": {"upload": 7, "humans": ["interceptor"]},
    "TOML nested 3000 deep": {"upload": "a = " + "[" * 3000 + "]" * 3000, "humans": []},
    "TOML tables nested 900 deep": {"upload": "a = " + "{b = " * 900 + "1" + "}" * 900},
    "episodes 10**30": {"upload": upload(top='name = "x"\nepisodes = ' + "9" * 30)},
    "episodes as text": {"upload": upload(top='name = "x"\nepisodes = "many"')},
    "seed inf in TOML": {"upload": upload(top='name = "x"\nseed = inf')},
    "a float keyword as nan": {"upload": upload(env="[env.kwargs]\nmax_turns = nan")},
    "unknown top-level key": {"upload": upload(top='name = "x"\nbackend = "ray"')},
    "unknown env key": {"upload": upload(env='shape = "x"')},
    "unknown seat key": {"upload": upload(seats='[seats.decoder]\nkind = "human"\nhome = 1')},
    "env as text": {"upload": 'name = "x"\nenv = "decrypto_v0"\n[seats."*"]\nkind = "human"'},
    "seats as list": {"upload": 'name = "x"\nseats = [1]\n[env]\nid = "decrypto_v0"'},
    "seat as text": {"upload": upload(seats='[seats]\ndecoder = "human"')},
    "grid as list": {"upload": upload(top='name = "x"\ngrid = [1]')},
    "grid of a text": {"upload": upload(top='name = "x"\n[grid]\nseed = "x"')},
    "grid over name": {"upload": upload(top='name = "x"\n[grid]\nname = ["a", "b"]')},
    "grid through a text": {"upload": upload(top='name = "x"\n[grid]\n"env.id.x" = [1]')},
    "a name of 10 KB": {"upload": upload(top='name = "' + "n" * 10000 + '"')},
    "no name": {"upload": upload(top="")},
    "a probe": {"upload": upload(top='name = "x"\n[[probes]]\nname = "piaget"')},
    "a human with a grid of kinds": {
        "upload": upload(top='name = "x"\n[grid]\n"seats.*.kind" = ["rl", "llm_gossip"]')
    },
}


def test_no_hostile_body_gets_a_500(client):
    answers = {}
    for label, body in HOSTILE_BODIES.items():
        for path in ("/api/sessions", "/api/experiments/check"):
            answers[label, path] = client.post(path, headers=auth(), content=body).status_code
    for label, body in HOSTILE_JSON.items():
        for path in ("/api/sessions", "/api/experiments/check"):
            answers[label, path] = client.post(path, headers=auth(), json=body).status_code
    not_4xx = {key: status for key, status in answers.items() if not 400 <= status < 500}
    assert not_4xx == {}
    assert answers["JSON nested 10 KB deep", "/api/sessions"] == 400
    deep = client.post("/api/sessions", headers=auth(), content=DEEP).json()["error"]
    assert deep == "the JSON is nested deeper than 32 levels"


def test_a_session_of_a_plain_named_upload_lives_directly_under_the_results_and_is_resumed(
    tmp_path,
):
    results = tmp_path / "results"
    text = upload(top='name = "my.game-1"', seats='[seats.interceptor]\nkind = "human"')
    with TestClient(create_app(results, HOST)) as client:
        body = {"upload": text, "humans": ["interceptor"], "seed": 0}
        response = client.post("/api/sessions", headers=auth(), json=body)
        assert response.status_code == 200, response.text
        sid = response.json()["session"]
    (folder,) = results.iterdir()
    assert folder.name == f"play_my.game-1_{sid}"
    with TestClient(create_app(results, HOST)) as client:
        assert list(client.app.state.sessions.by_id) == [sid]


def test_links_name_the_url_people_reach_else_the_address_the_host_used(monkeypatch, capsys):
    served = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kwargs: served.update(app=app, **kwargs))
    argv = ["serve", "--public", "--host", "0.0.0.0", "--port", "8443"]
    assert main([*argv, "--url", "https://host.example:8443/"]) == 0
    out = capsys.readouterr()
    assert "socialsim: host page https://host.example:8443/#host=" in out.out
    assert "plain HTTP" in out.err and "TLS proxy" in out.err
    token = out.out.split("#host=")[1].split()[0]
    body = {"experiment": "decrypto_quickstart", "humans": ["interceptor"], "seed": 0}
    with TestClient(served["app"]) as client:
        links = client.post("/api/sessions", headers=auth(token), json=body).json()["links"]
    assert links["interceptor"].startswith("https://host.example:8443/seat#session=")
    assert main(argv) == 0  # no --url: the link of the address the host's browser used
    out = capsys.readouterr().out
    assert "127.0.0.1 works on this machine only" in out and "give --url" in out
    token = out.split("#host=")[1].split()[0]
    with TestClient(served["app"], base_url="http://192.0.2.7:8443") as client:
        links = client.post("/api/sessions", headers=auth(token), json=body).json()["links"]
    assert links["interceptor"].startswith("http://192.0.2.7:8443/seat#session=")


@pytest.mark.parametrize(
    "argv, error",
    [
        (["--url", "ftp://x"], "--url: http(s)://HOST[:PORT], got 'ftp://x'"),
        (["--url", "https://x/path"], "--url: the server's root, with no path"),
        (["--certfile", "cert.pem"], "--certfile and --keyfile: give both"),
        (["--certfile", "no.pem", "--keyfile", "no.pem"], "--certfile: no file 'no.pem'"),
        (["--offer", "no.toml"], "--offer: FILE: no experiment file 'no.toml'"),
    ],
)
def test_serve_refuses_a_bad_url_half_a_certificate_or_a_missing_offered_file(capsys, argv, error):
    assert main(["serve", *argv]) == 2
    assert error in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl")
def test_serve_speaks_tls_with_a_certificate_and_ctrl_c_says_how_to_resume(tmp_path):
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"]
        + ["-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"]
        + ["-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    results = tmp_path / "web"
    serve = subprocess.Popen(
        [sys.executable, "-m", "socialsim.cli", "serve", "--port", str(port)]
        + ["--results", str(results), "--certfile", str(cert), "--keyfile", str(key)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        line = serve.stdout.readline()
        assert line.startswith(f"socialsim: host page https://127.0.0.1:{port}/#host="), line
        token = line.split("#host=")[1].strip()
        trusted = ssl.create_default_context(cafile=str(cert))
        deadline = time.monotonic() + 30
        while True:
            try:
                page = httpx.get(f"https://127.0.0.1:{port}/", verify=trusted)
                break
            except httpx.ConnectError:
                assert time.monotonic() < deadline
                time.sleep(0.1)
        assert page.status_code == 200 and "host a game" in page.text
        body = {"experiment": "decrypto_quickstart", "humans": ["interceptor"], "seed": 0}
        created = httpx.post(
            f"https://127.0.0.1:{port}/api/sessions", headers=auth(token), json=body, verify=trusted
        )
        assert created.status_code == 200
        assert created.json()["links"]["interceptor"].startswith(f"https://127.0.0.1:{port}/seat#")
        with pytest.raises(httpx.HTTPError):  # plain HTTP is not served
            httpx.get(f"http://127.0.0.1:{port}/")
        serve.send_signal(signal.SIGINT)
        out, err = serve.communicate(timeout=60)
    finally:
        if serve.poll() is None:
            serve.kill()
            serve.communicate()
    assert serve.returncode == 0, err
    assert out.splitlines()[-2:] == [
        f"socialsim: stopped; 1 session logged in {results} (0 over, 1 unfinished, every "
        "answer given so far kept)",
        f"socialsim: resume them with: socialsim serve --results {results} (their seat links "
        "keep working)",
    ]
    assert "Traceback" not in err
