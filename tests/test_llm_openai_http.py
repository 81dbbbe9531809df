"""The openai_http transport: OpenAICompatibleModel against the real OpenAI-compatible test
server on 127.0.0.1, held to the same errors, retries, cache and limits as the litellm path."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from socialsim.episode import EpisodeSpec
from socialsim.llm import (
    Accounting,
    OpenAICompatibleModel,
    ProviderError,
    TransientProviderError,
    build_model,
    transport_of,
)
from socialsim.llm.openai_http import served_name, status_error
from socialsim.runner import play_episode
from socialsim.testing.decrypto_policies import DecryptoPolicy

HELLO = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "say hello please"},
]
KEY_ENV = "SOCIALSIM_OPENAI_HTTP_TEST_KEY"


def config(server, **changes) -> dict:
    """A model on the test server over openai_http: tiny backoff, no cache, no limit."""
    return {
        "model": "openai/test-model",
        "transport": "openai_http",
        "api_base": server.url,
        "timeout": 5,
        "backoff": 0.001,
        "cache": False,
        "concurrency": 0,
        **changes,
    }


def run(coroutine):
    return asyncio.run(coroutine)


@pytest.fixture(autouse=True)
def _fresh(fresh_models):
    yield


# -- a raw server, for what the scripted one cannot send: its received headers, a bad body -------


class RawServer:
    """Answers every POST with ``(status, body bytes)`` and keeps the request headers."""

    def __init__(self, status: int, body: bytes) -> None:
        self.status, self.body = status, body
        self.extra_headers: dict[str, str] = {}
        self.headers: list[dict[str, str]] = []
        raw = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                raw.headers.append({k.lower(): v for k, v in self.headers.items()})
                self.send_response(raw.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw.body)))
                for name, value in raw.extra_headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(raw.body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def raw_server() -> Iterator[RawServer]:
    reply = {
        "choices": [
            {"message": {"role": "assistant", "content": "raw hi"}, "finish_reason": "stop"}
        ]
    }
    server = RawServer(200, json.dumps(reply).encode())
    yield server
    server.stop()


# -- a plain call --------------------------------------------------------------------------------


def test_reply_carries_the_servers_text_usage_and_no_cost(llm_server):
    model = build_model(config(llm_server))
    reply = run(model.complete(HELLO))
    assert reply.text == "echo: say hello please"
    assert (reply.prompt_tokens, reply.completion_tokens) == (6, 4)  # words, as the server counts
    assert (reply.cached, reply.attempt, reply.model, reply.cost) == (
        False,
        1,
        "openai/test-model",
        None,
    )
    assert reply.finish_reason == "stop"
    assert llm_server.requests == 1
    sent = llm_server.answered[0]
    assert sent == {"model": "test-model", "messages": HELLO}  # nothing unset is sent
    assert [layer["layer"] for layer in model.describe()["layers"]][-1] == "OpenAICompatibleModel"


def test_settings_and_provider_params_reach_the_server(llm_server):
    model = build_model(
        config(
            llm_server,
            temperature=0.25,
            max_tokens=77,
            seed=5,
            params={"top_p": 0.5, "stop": ["END"]},
        )
    )
    run(model.complete(HELLO, seed=9, response_format={"type": "json_object"}))
    assert llm_server.answered[0] == {
        "model": "test-model",
        "messages": HELLO,
        "temperature": 0.25,
        "max_tokens": 77,
        "seed": 9,
        "top_p": 0.5,
        "stop": ["END"],
        "response_format": {"type": "json_object"},
    }


@pytest.mark.parametrize(
    ("name", "served"),
    [
        ("openai/test", "test"),
        ("hosted_vllm/Qwen/Qwen2.5-7B", "Qwen/Qwen2.5-7B"),
        ("plain-name", "plain-name"),
        ("anthropic/x", "anthropic/x"),
    ],
)
def test_the_served_name_drops_only_an_openai_compatible_prefix(name, served):
    assert served_name(name) == served


def test_the_key_goes_in_a_bearer_header_only_when_named(raw_server, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-secret-123")
    keyed = OpenAICompatibleModel("openai/x", api_base=raw_server.url, api_key_env=KEY_ENV)
    bare = OpenAICompatibleModel("openai/x", api_base=raw_server.url)
    assert run(keyed.complete(HELLO)).text == "raw hi"
    assert run(bare.complete(HELLO)).text == "raw hi"
    assert raw_server.headers[0]["authorization"] == "Bearer sk-secret-123"
    assert "authorization" not in raw_server.headers[1]
    assert "sk-secret-123" not in json.dumps(keyed.describe())


def test_a_missing_key_variable_is_a_config_error(llm_server, monkeypatch):
    monkeypatch.delenv("SOCIALSIM_NO_SUCH_KEY", raising=False)
    with pytest.raises(ValueError, match="SOCIALSIM_NO_SUCH_KEY"):
        build_model(config(llm_server, api_key_env="SOCIALSIM_NO_SUCH_KEY"))


def test_successive_event_loops_each_get_a_working_client(llm_server):
    model = build_model(config(llm_server))
    assert [run(model.complete(HELLO)).text for _ in range(3)] == ["echo: say hello please"] * 3
    assert llm_server.requests == 3


# -- config -----------------------------------------------------------------------------------


def test_openai_http_without_api_base_names_the_key_and_the_alternative():
    with pytest.raises(ValueError, match="api_base.*transport 'litellm'"):
        build_model({"model": "openai/x", "transport": "openai_http", "cache": False})


def test_an_unknown_transport_names_the_choices():
    with pytest.raises(ValueError, match="transport: expected one of 'litellm', 'openai_http'"):
        build_model({"model": "openai/x", "transport": "grpc", "cache": False})


def test_with_an_api_base_the_default_transport_is_openai_http_and_without_one_litellm(
    llm_server,
):
    unnamed = dict(config(llm_server))
    del unnamed["transport"]
    assert build_model(unnamed).describe()["layers"][-1] == {"layer": "OpenAICompatibleModel"}
    assert transport_of(unnamed) == "openai_http"
    assert transport_of({"model": "openai/gpt-4o-mini"}) == "litellm"
    assert transport_of({**unnamed, "transport": "litellm"}) == "litellm"  # named, it wins
    cloud = build_model({"model": "openai/gpt-4o-mini", "cache": False})
    assert cloud.describe()["layers"][-1] == {"layer": "LiteLLMModel"}


# -- errors: the same kinds as litellm's path ---------------------------------------------------


def error_of(server, transport: str, fault: str | None) -> ProviderError:
    """The error one call with no retries raises over ``transport`` (None: stop the server)."""
    server.timeout_sleep_s = 0.6
    if fault is not None:
        server.set_schedule([fault])
    # only the timeout fault races the client's timeout (the server sleeps 0.6 s); every other
    # fault gets time to arrive, so a slow first call (litellm's, on a busy machine) is no timeout
    timeout = 0.3 if fault == "timeout" else 10.0
    model = build_model(config(server, transport=transport, timeout=timeout, max_retries=0))
    if fault is None:
        server.stop()
    with pytest.raises(ProviderError) as caught:
        run(model.complete(HELLO))
    return caught.value


@pytest.mark.parametrize(
    ("fault", "kind", "status", "transient"),
    [
        ("rate_limit", "rate_limit", 429, True),
        ("server_error", "server_error", 500, True),
        ("timeout", "timeout", None, True),
        ("empty", "empty_reply", None, True),
        ("bad_request", "rejected", 400, False),
    ],
)
def test_each_fault_is_the_same_error_kind_as_through_litellm(
    llm_server, fault, kind, status, transient
):
    ours = error_of(llm_server, "openai_http", fault)
    theirs = error_of(llm_server, "litellm", fault)
    assert ours.kind == theirs.kind == kind
    # The HTTP status where the server sent one; litellm makes up a 408 for a timeout, this
    # transport leaves a status no server sent as None.
    assert ours.status == status
    if status is not None:
        assert theirs.status == status
    assert isinstance(ours, TransientProviderError) is transient
    assert isinstance(theirs, TransientProviderError) is transient
    assert ours.request_hash == theirs.request_hash and ours.prompt_hash == theirs.prompt_hash


def test_a_refused_connection_is_a_connection_error_as_through_litellm(llm_server):
    ours = error_of(llm_server, "openai_http", None)
    llm_server.start()  # on a new port: nothing listens on the old one
    theirs = error_of(llm_server, "litellm", None)
    assert ours.kind == theirs.kind == "connection"
    assert ours.status is None  # litellm reports 500: no server answered


@pytest.mark.parametrize("fault", ["rate_limit", "server_error", "timeout", "empty"])
def test_one_transient_fault_is_retried_and_the_second_attempt_answers(llm_server, fault):
    llm_server.timeout_sleep_s = 0.6
    llm_server.set_schedule([fault])
    reply = run(build_model(config(llm_server, timeout=0.3, max_retries=2)).complete(HELLO))
    assert (reply.text, reply.attempt) == ("echo: say hello please", 2)
    assert llm_server.requests == 2 and llm_server.faults[fault] == 1


def test_every_transient_fault_in_a_row_is_survived_within_the_limit(llm_server):
    llm_server.timeout_sleep_s = 0.6
    llm_server.set_schedule(["rate_limit", "server_error", "timeout", "empty"])
    reply = run(build_model(config(llm_server, timeout=0.3, max_retries=4)).complete(HELLO))
    assert (reply.attempt, llm_server.requests) == (5, 5)


def test_exhausted_retries_raise_provider_error_naming_attempts(llm_server):
    llm_server.set_schedule(["server_error"] * 3)
    with pytest.raises(ProviderError, match="gave up after 3 attempts") as caught:
        run(build_model(config(llm_server, max_retries=2)).complete(HELLO))
    assert (caught.value.kind, caught.value.status, caught.value.attempts) == (
        "server_error",
        500,
        3,
    )


def test_a_bad_request_is_not_retried(llm_server):
    llm_server.set_schedule(["bad_request"])
    with pytest.raises(ProviderError) as caught:
        run(build_model(config(llm_server, max_retries=5)).complete(HELLO))
    assert (caught.value.kind, caught.value.status, caught.value.attempts) == ("rejected", 400, 1)
    assert not isinstance(caught.value, TransientProviderError)
    assert llm_server.requests == 1


def test_a_refused_connection_is_retried_then_reported(llm_server):
    model = build_model(config(llm_server, max_retries=2))
    llm_server.stop()
    with pytest.raises(ProviderError) as caught:
        run(model.complete(HELLO))
    assert (caught.value.kind, caught.value.attempts) == ("connection", 3)


def test_a_200_whose_body_is_not_json_is_a_transient_server_error(raw_server):
    raw_server.body = b"<html>gateway says hi</html>"
    model = OpenAICompatibleModel("openai/x", api_base=raw_server.url)
    with pytest.raises(TransientProviderError) as caught:
        run(model.complete(HELLO))
    assert (caught.value.kind, caught.value.status) == ("server_error", 200)


def test_a_200_with_no_choices_is_an_empty_reply(raw_server):
    raw_server.body = b'{"object": "chat.completion", "choices": []}'
    with pytest.raises(TransientProviderError) as caught:
        run(OpenAICompatibleModel("openai/x", api_base=raw_server.url).complete(HELLO))
    assert caught.value.kind == "empty_reply"


def test_a_404_is_rejected_with_its_status(raw_server):
    raw_server.status, raw_server.body = 404, b'{"error": {"message": "no such route"}}'
    with pytest.raises(ProviderError) as caught:
        run(OpenAICompatibleModel("openai/x", api_base=raw_server.url).complete(HELLO))
    assert (caught.value.kind, caught.value.status) == ("rejected", 404)
    assert not isinstance(caught.value, TransientProviderError)


def test_a_429_carries_its_retry_after_seconds_to_retry(raw_server):
    raw_server.status, raw_server.body = 429, b'{"error": {"message": "slow down"}}'
    raw_server.extra_headers = {"Retry-After": "2.5"}
    with pytest.raises(TransientProviderError) as caught:
        run(OpenAICompatibleModel("openai/x", api_base=raw_server.url).complete(HELLO))
    assert (caught.value.kind, caught.value.status, caught.value.retry_after) == (
        "rate_limit",
        429,
        2.5,
    )


def test_a_retry_after_that_is_not_seconds_is_ignored():
    error = status_error(429, "", {"retry-after": "Wed, 21 Oct 2026 07:28:00 GMT"}, "m", {})
    assert (error.kind, error.retry_after) == ("rate_limit", None)


# -- cache and concurrency --------------------------------------------------------------------


def test_second_identical_call_is_served_from_the_cache_with_zero_requests(llm_server, tmp_path):
    model = build_model(config(llm_server, cache=str(tmp_path / "c.sqlite")))
    first = run(model.complete(HELLO))
    llm_server.reset_counts()
    second = run(model.complete(HELLO))
    assert llm_server.requests == 0
    assert (second.text, second.cached, second.attempt) == (first.text, True, 0)
    assert model.find(Accounting).snapshot()["cache_hits"] == 1


def test_a_reply_cached_through_litellm_is_served_to_openai_http(llm_server, tmp_path):
    path = str(tmp_path / "shared.sqlite")
    through_litellm = build_model(config(llm_server, transport="litellm", cache=path))
    first = run(through_litellm.complete(HELLO))
    llm_server.reset_counts()
    second = run(build_model(config(llm_server, cache=path)).complete(HELLO))
    assert llm_server.requests == 0
    assert (second.text, second.cached, second.request_hash) == (
        first.text,
        True,
        first.request_hash,
    )


def test_concurrency_limit_keeps_at_most_k_requests_in_flight(llm_server):
    llm_server.latency_s = 0.05
    model = build_model(config(llm_server, concurrency=3))

    async def twelve():
        return await asyncio.gather(
            *(model.complete([{"role": "user", "content": f"n{i}"}]) for i in range(12))
        )

    replies = run(twelve())
    assert sorted(r.text for r in replies) == sorted(f"echo: n{i}" for i in range(12))
    assert llm_server.requests == 12
    assert llm_server.max_in_flight <= 3


def test_without_a_limit_requests_overlap(llm_server):
    """The control of the test above: the server holds each request until 4 are waiting."""
    barrier = threading.Barrier(4, timeout=20)
    llm_server.policy = lambda messages, request: f"passed {barrier.wait()}"
    model = build_model(config(llm_server, timeout=30))

    async def eight():
        await asyncio.gather(
            *(model.complete([{"role": "user", "content": f"n{i}"}]) for i in range(8))
        )

    run(eight())
    assert llm_server.max_in_flight >= 4


# -- no litellm ----------------------------------------------------------------------------------

NO_LITELLM = """
import asyncio, sys
from socialsim.llm import build_model
model = build_model({{"model": "openai/test", "transport": "openai_http", "api_base": {url!r},
                      "cache": False}})
print(asyncio.run(model.complete([{{"role": "user", "content": "ping"}}])).text)
print("litellm" in sys.modules)
"""


def test_a_process_using_only_openai_http_never_imports_litellm(llm_server):
    done = subprocess.run(
        [sys.executable, "-c", NO_LITELLM.format(url=llm_server.url)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["echo: ping", "False"]


# -- a whole game -------------------------------------------------------------------------------


def test_full_decrypto_game_over_openai_http_ends_as_through_litellm(llm_server, monkeypatch):
    # The game of test_llm_decrypto's seed-0 test: the scripted players intercept on turn 3.
    monkeypatch.setenv(KEY_ENV, "sk-dummy")
    llm_server.policy = DecryptoPolicy()
    model = {
        "model": "openai/test",
        "transport": "openai_http",
        "api_base": llm_server.url,
        "api_key_env": KEY_ENV,
        "cache": False,
        "max_retries": 0,
    }
    seats = ("encoder", "decoder", "interceptor")
    seat = {"kind": "llm_decrypto", "model": model}
    record = play_episode(EpisodeSpec(env_id="decrypto_v0", seed=0, seats={s: seat for s in seats}))
    assert record.status == "done", record.error
    summary = record.summary
    assert (summary["ending"], summary["turns"]) == ("intercept", 3)
    assert [t["interceptor_guess"] for t in summary["turn_log"]] == [
        [1, 2, 3],
        [3, 4, 1],
        [1, 4, 2],
    ]
    assert record.returns == {"encoder": -1.0, "decoder": -1.0, "interceptor": 1.0}
    assert llm_server.requests == 9
    for name in seats:
        assert record.counters[name]["llm_calls"] == 3
        assert all(e["cost"] is None and e["prompt_tokens"] > 0 for e in record.events[name])
    first = llm_server.answered[0]
    assert (first["model"], first["temperature"], first["max_tokens"]) == ("test", 0.6, 750)
