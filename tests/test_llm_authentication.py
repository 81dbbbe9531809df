"""Refused or missing credentials are not retried: no retry can heal them."""

import asyncio
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from socialsim.llm.build import build_model, forget_models
from socialsim.llm.litellm_model import provider_error
from socialsim.llm.model import ProviderError, TransientProviderError


class Refuses(BaseHTTPRequestHandler):
    requests = 0

    def do_POST(self):  # noqa: N802 - http.server's name
        type(self).requests += 1
        self.rfile.read(int(self.headers.get("content-length", 0)))
        body = (
            b'{"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}'
        )
        self.send_response(401)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def refusing_server():
    Refuses.requests = 0
    server = ThreadingHTTPServer(("127.0.0.1", 0), Refuses)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("transport", ["openai_http", "litellm"])
def test_a_401_is_an_authentication_error_sent_once(refusing_server, transport):
    forget_models()
    model = build_model(
        {
            "model": "openai/test",
            "api_base": refusing_server,
            "transport": transport,
            "max_retries": 4,
            "cache": False,
        }
    )
    with pytest.raises(ProviderError) as error:
        asyncio.run(model.complete([{"role": "user", "content": "hi"}]))
    assert not isinstance(error.value, TransientProviderError)
    assert error.value.kind == "authentication"
    assert Refuses.requests == 1
    forget_models()


def test_missing_credentials_reported_as_a_500_are_not_transient():
    # what litellm raises for openai/... without OPENAI_API_KEY: its InternalServerError, 500
    class InternalServerError(Exception):
        status_code = 500

    error = InternalServerError(
        "litellm.InternalServerError: OpenAIException - Missing credentials. Please pass an "
        "`api_key`, or set the `OPENAI_API_KEY` environment variable."
    )
    mapped = provider_error(error, "openai/gpt-4o-mini", {})
    assert type(mapped) is ProviderError
    assert mapped.kind == "authentication"
    assert "Missing credentials" in str(mapped)


def test_a_run_whose_credentials_are_refused_stops_at_the_first_failure(
    refusing_server, tmp_path, capsys
):
    from socialsim.cli import main

    forget_models()
    path = tmp_path / "exp.toml"
    path.write_text(
        f"""
name = "refused"
episodes = 6
[env]
id = "decrypto_v0"
[seats."*"]
kind = "llm_decrypto"
[seats."*".model]
model = "openai/test"
api_base = "{refusing_server}"
cache = false
transport = "openai_http"
"""
    )
    assert main(["run", str(path), "--out", str(tmp_path / "out"), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "refused: stopped, as no retry can heal this: seat encoder (llm_decrypto): " in err
    assert "HTTP 401" in err and "0/6 episodes done" in err
    assert Refuses.requests == 1  # one call: no retry, no second episode
    forget_models()
