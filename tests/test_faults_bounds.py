"""Bounds on memory and time: an LLM reply is read as it streams in and cut at its bound (the
memory a huge body takes stays small), and no agent, of any kind, can hold an episode for ever
(``decision_timeout``, ``episode_timeout``)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator

import pytest

from socialsim.llm.openai_http import MIN_BODY_BYTES

#: the body the server sends: 1.5 GB of one reply, generated as it is sent
HUGE = 1_500_000_000
CHUNK = b"a" * (1 << 20)


class StreamingServer:
    """Answers every request with a 200 whose JSON body holds a reply ``size`` bytes long,
    written a megabyte at a time (never held whole), and counts the bytes it could send."""

    def __init__(self, size: int) -> None:
        self.size, self.sent = size, 0
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/v1"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(connection,), daemon=True).start()

    def _answer(self, connection: socket.socket) -> None:
        head = (
            b'{"choices": [{"finish_reason": "stop", "message": {"role": "assistant", "content": "'
        )
        tail = b'"}}]}'
        with connection:
            request = b""
            while b"\r\n\r\n" not in request:
                request += connection.recv(65536)
            length = len(head) + self.size + len(tail)
            try:
                connection.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    + (b"" if self.chunked else f"Content-Length: {length}\r\n".encode())
                    + b"Connection: close\r\n\r\n"
                    + head
                )
                left = self.size
                while left > 0:
                    piece = CHUNK[: min(left, len(CHUNK))]
                    connection.sendall(piece)
                    self.sent += len(piece)
                    left -= len(piece)
                connection.sendall(tail)
            except OSError:  # the client stopped reading and closed: what we want
                return

    chunked = False  # True: no Content-Length, so the client finds the size while reading

    def stop(self) -> None:
        self.listener.close()


@pytest.fixture(params=[False, True], ids=["content_length", "no_length"])
def huge_server(request) -> Iterator[StreamingServer]:
    server = StreamingServer(HUGE)
    server.chunked = request.param
    yield server
    server.stop()


CLIENT = """
import asyncio, json, resource, sys
from socialsim.llm import build_model
model = build_model({"model": "openai/m", "transport": "openai_http", "api_base": sys.argv[1],
                     "timeout": 120, "cache": False, "concurrency": 0, "max_retries": 0})
reply = asyncio.run(model.complete([{"role": "user", "content": "hi"}]))
print(json.dumps({"text": reply.text, "invalid": reply.invalid,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}))
"""


@pytest.mark.slow
def test_a_multi_gigabyte_reply_is_cut_at_its_bound_while_it_streams_and_memory_stays_small(
    huge_server,
):
    baseline = subprocess.run(
        [sys.executable, "-c", "import resource, socialsim.llm;"
         "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(CLIENT), huge_server.url],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout)
    assert reply["text"] == ""
    assert reply["invalid"].startswith(f"the reply's body is over {MIN_BODY_BYTES} bytes")
    # read no further than the bound (and what the socket buffers held), not the 1.5 GB sent
    assert huge_server.sent < HUGE // 10
    # the client's peak memory: its imports plus at most the bound's worth, not gigabytes
    assert reply["rss_mb"] - int(baseline.stdout) < 3 * MIN_BODY_BYTES // (1 << 20)


# -- decisions and episodes that take too long ---------------------------------------------------


def hanging(how: str, kind: str = "faultlab:Dies", **timeouts) -> dict:
    from socialsim.seeding import agent_seed

    return {
        "name": "hangs",
        "episodes": 4,
        **timeouts,
        "env": {"id": "matching_pennies_v0", "kwargs": {"rounds": 5}},
        "seats": {
            "matcher": {"kind": kind, "how": how, "at": [agent_seed(2, "matcher")]},
            "mismatcher": {"kind": "pennies_copycat"},
        },
    }


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("kind", ["faultlab:Dies", "faultlab:DiesWaiting"], ids=["act", "aact"])
def test_a_hanging_agent_fails_its_episode_at_the_decision_timeout_naming_its_seat(
    tmp_path, workers, kind
):
    from socialsim.results import run

    results = run({**hanging("hang", kind, decision_timeout=0.5), "workers": workers},
                  out=tmp_path / "out")  # fmt: skip
    (failed,) = results.failed
    assert (failed.episode, failed.error) == (
        2,
        f"seat matcher ({kind}): DecisionTimeout: no decision within 0.5 s (decision_timeout)",
    )
    assert len(results.records()) == 3  # the others done, none waiting


def test_a_slow_episode_fails_at_the_episode_timeout(tmp_path):
    from socialsim.results import run

    results = run(hanging("slow", episode_timeout=0.5), out=tmp_path / "out")
    (failed,) = results.failed
    assert failed.episode == 2 and failed.error == (
        "seat matcher (faultlab:Dies): DecisionTimeout: the episode ran out of 0.5 s "
        "(episode_timeout)"
    )
    assert len(results.records()) == 3


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (0, "decision_timeout: must be a number of seconds > 0, got 0"),
        (float("nan"), "decision_timeout: must be a number of seconds > 0, got nan"),
        ("5", "decision_timeout: expected a number, got '5' (str)"),
        (True, "decision_timeout: expected a number, got True (bool)"),
    ],
)
def test_a_bad_decision_timeout_is_a_config_error_naming_it(value, message):
    from socialsim.config import ConfigError, load

    with pytest.raises(ConfigError) as error:
        load({**hanging("hang"), "decision_timeout": value})
    assert str(error.value) == message
