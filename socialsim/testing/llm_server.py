"""A real OpenAI-compatible chat server on 127.0.0.1 for tests and benchmarks, stdlib only.

The LLM tests drive litellm end to end against this server, so the whole path (HTTP, JSON,
status codes, client timeouts) is the one a real provider or a local vLLM/llama.cpp server
exercises, and no test ever touches the network.

==================  ===================================================================
Endpoint            ``POST /v1/chat/completions`` (non-streaming); ``GET /v1/models``
Replies             ``policy(messages, request_json) -> str``, a scripted function
Usage               ``prompt_tokens`` = words in all message contents,
                    ``completion_tokens`` = words in the reply (``str.split``)
Faults              ``"rate_limit"`` (HTTP 429), ``"server_error"`` (HTTP 500),
                    ``"timeout"`` (sleeps ``timeout_sleep_s`` before answering),
                    ``"empty"`` (an empty reply), ``"garbage"`` (a reply of junk words),
                    ``"bad_request"`` (HTTP 400, a permanent error)
Fault choice        first from ``schedule`` (one entry per request, ``None`` = answer
                    normally), then at random by ``fault_rates`` from the server's own
                    seeded ``numpy`` Generator
Out of process      ``python -m socialsim.testing.llm_server --latency 0.2`` prints its
                    URL and serves until killed; ``GET /stats`` returns the counters,
                    ``POST /stats/reset`` zeroes them (a server in its own process keeps
                    the GIL to itself)
Counters            ``requests``, ``in_flight``, ``max_in_flight``, ``faults`` (name ->
                    count), ``refused`` (requests refused for their roles),
                    ``answered`` (request jsons answered with a reply),
                    ``usage`` (prompt, completion) token totals of the replies sent
Server families     ``family`` says who the server claims to be, as real ones do in
                    ``GET /v1/models``: ``"llama_cpp_python"`` (``owned_by: "me"``),
                    ``"llama_cpp"`` (``"llamacpp"``, with ``GET /props`` stating ``n_ctx``),
                    ``"vllm"`` (``"vllm"``, with ``max_model_len``), or a plain one
Structured output   ``structured_formats``: the forms of :mod:`socialsim.llm.structured` the
                    server accepts (None: any, unchecked); a request in another form gets
                    HTTP 500, as llama-cpp-python answers OpenAI's ``json_schema``.
                    :func:`request_schema` gives a policy the schema a request carries
Context window      ``context_window``: a request whose prompt tokens plus ``max_tokens``
                    exceed it gets HTTP 400 ``context_length_exceeded`` with the message
                    llama-cpp-python sends (stating the window)
Strict roles        ``alternating_roles=True``: a request whose roles are not an optional
                    system message then user and assistant turns alternating from a user
                    turn gets HTTP 500 "Conversation roles must alternate ...", as the
                    chat templates of Gemma and Mistral refuse it through llama.cpp or
                    vLLM (counted in ``refused``)
Playground          ``python -m socialsim.testing.llm_server --play`` answers every bundled
                    prompt with a legal move (:mod:`socialsim.testing.playground`), so
                    ``socialsim run`` of any bundled LLM file works offline; ``--garbage
                    0.33`` answers that share with junk, ``--alternating-roles`` is strict
==================  ===================================================================

Example::

    with ScriptedChatServer(policy=lambda messages, request: "ANSWER: {}") as server:
        server.url  # "http://127.0.0.1:PORT/v1": use model "openai/NAME" with this api_base
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

from socialsim.testing.chat_requests import (
    ALTERNATION_ERROR,
    request_format,
    request_schema,
    roles_alternate,
)

Policy = Callable[[list[dict[str, Any]], dict[str, Any]], str]

FAULTS = ("rate_limit", "server_error", "timeout", "empty", "garbage", "bad_request")

GARBAGE_WORDS = ("lorem", "}{", "ANSWER", "::", "null", "maybe", "[[", "purple", "7", "\u2603")


def echo_policy(messages: list[dict[str, Any]], request: dict[str, Any]) -> str:
    """Answer with the last user message, prefixed so a test can tell it came back."""
    last = next((m for m in reversed(messages) if m.get("role") == "user"), messages[-1])
    return f"echo: {last.get('content', '')}"


def count_words(text: str) -> int:
    return len(str(text).split())


OWNERS = {"llama_cpp_python": "me", "llama_cpp": "llamacpp", "vllm": "vllm"}

__all__ = [
    "FAULTS",
    "ScriptedChatServer",
    "echo_policy",
    "main",
    "request_format",
    "request_schema",
]


class ScriptedChatServer:
    """An OpenAI-compatible chat completions server run in a background thread.

    Arguments:
        policy: ``policy(messages, request_json) -> reply text``; :func:`echo_policy` by default.
        latency_s: seconds every answered request waits before replying (models the model).
        fault_rates: fault name -> probability per request, drawn from ``seed``'s Generator.
        schedule: fault names (or ``None`` for a normal answer) used by the first requests,
            one per request, before ``fault_rates`` apply.
        seed: seed of the server's own Generator (fault draws and garbage text).
        timeout_sleep_s: how long a ``"timeout"`` fault sleeps before answering; set it above
            the client's timeout.
        family: who the server says it is (see the module docstring).
        structured_formats: the structured-output forms it accepts; None accepts any.
        context_window: the model's window in tokens (words here); None: unlimited.
        alternating_roles: refuse a request whose roles do not alternate (see above).
        port: the port on 127.0.0.1; 0 (the default) lets the system pick a free one.
        backlog: the listen backlog; raise it for a client that opens hundreds of connections
            at once (the stdlib's 5 refuses a burst; real servers listen with hundreds).
    """

    def __init__(
        self,
        policy: Policy | None = None,
        *,
        latency_s: float = 0.0,
        fault_rates: Mapping[str, float] | None = None,
        schedule: Sequence[str | None] = (),
        seed: int = 0,
        timeout_sleep_s: float = 1.0,
        family: str = "openai_compatible",
        structured_formats: Sequence[str] | None = None,
        context_window: int | None = None,
        alternating_roles: bool = False,
        port: int = 0,
        backlog: int = 128,
    ) -> None:
        self.family = family
        self.structured_formats = None if structured_formats is None else tuple(structured_formats)
        self.context_window = context_window
        self.alternating_roles = alternating_roles
        self.policy: Policy = policy or echo_policy
        self.latency_s = float(latency_s)
        self.fault_rates = dict(fault_rates or {})
        for name, rate in self.fault_rates.items():
            if name not in FAULTS:
                raise ValueError(
                    f"fault_rates: unknown fault {name!r}; the faults are {list(FAULTS)}"
                )
            if not 0.0 <= rate <= 1.0:
                raise ValueError(f"fault_rates[{name!r}]: {rate} is not a probability in [0, 1]")
        if sum(self.fault_rates.values()) > 1.0:
            raise ValueError(f"fault_rates: the rates {self.fault_rates} add up to more than 1")
        self.schedule: list[str | None] = []
        self.set_schedule(schedule)
        self.timeout_sleep_s = float(timeout_sleep_s)
        self.port = int(port)
        self.backlog = int(backlog)
        self._rng = np.random.default_rng(seed)
        self._lock = threading.Lock()
        self.requests = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.faults: Counter[str] = Counter()
        self.refused = 0
        self.answered: list[dict[str, Any]] = []
        self.usage = {"prompt_tokens": 0, "completion_tokens": 0}
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- configuration and counters -------------------------------------------------------

    def set_schedule(self, schedule: Sequence[str | None]) -> None:
        for entry in schedule:
            if entry is not None and entry not in FAULTS:
                raise ValueError(
                    f"schedule: unknown fault {entry!r}; use None or one of {list(FAULTS)}"
                )
        self.schedule = list(schedule)

    def reset_counts(self) -> None:
        with self._lock:
            self.requests = 0
            self.max_in_flight = self.in_flight
            self.faults.clear()
            self.refused = 0
            self.answered.clear()
            self.usage = {"prompt_tokens": 0, "completion_tokens": 0}

    def stats(self) -> dict[str, Any]:
        """The counters as JSON (also served at ``GET /stats`` for a server in another process)."""
        with self._lock:
            return {
                "requests": self.requests,
                "in_flight": self.in_flight,
                "max_in_flight": self.max_in_flight,
                "faults": dict(self.faults),
                "refused": self.refused,
                "answered": len(self.answered),
                "usage": dict(self.usage),
            }

    @property
    def url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("the server is not started")
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    # -- life cycle ------------------------------------------------------------------------

    def start(self) -> ScriptedChatServer:
        server = self

        class Handler(_ChatHandler):
            chat_server = server

        class Listener(ThreadingHTTPServer):
            request_queue_size = server.backlog

        self._httpd = Listener(("127.0.0.1", self.port), Handler)
        self._httpd.daemon_threads = True  # a "timeout" sleeper must not hold up stop()
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.02},
            name="chat-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> ScriptedChatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- request handling (called from handler threads) ---------------------------------

    def _begin(self) -> str | None:
        """Count a request in and choose its fault (None = answer normally)."""
        with self._lock:
            self.requests += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            if self.schedule:
                fault = self.schedule.pop(0)
            elif self.fault_rates:
                draw = float(self._rng.random())
                fault = None
                edge = 0.0
                for name in FAULTS:  # a fixed order, so a seed always gives the same faults
                    edge += self.fault_rates.get(name, 0.0)
                    if draw < edge:
                        fault = name
                        break
            else:
                fault = None
            if fault is not None:
                self.faults[fault] += 1
            return fault

    def _end(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _garbage(self) -> str:
        with self._lock:
            picks = self._rng.integers(0, len(GARBAGE_WORDS), size=6)
        return " ".join(GARBAGE_WORDS[int(i)] for i in picks)

    def _answer(self, request: dict[str, Any], fault: str | None) -> tuple[int, dict[str, Any]]:
        messages = request.get("messages")
        if not isinstance(messages, list) or not messages:
            return 400, _error("messages must be a non-empty list", "invalid_request_error")
        if request.get("stream"):
            return 400, _error("this test server does not stream", "invalid_request_error")
        if self.alternating_roles and not roles_alternate(messages):
            with self._lock:
                self.refused += 1
            return 500, _error(ALTERNATION_ERROR, "server_error")
        if fault == "rate_limit":
            return 429, _error("rate limit reached (injected)", "rate_limit_error")
        if fault == "server_error":
            return 500, _error("internal error (injected)", "server_error")
        if fault == "bad_request":
            return 400, _error("bad request (injected)", "invalid_request_error")
        form = request_format(request)
        if form is not None and self.structured_formats is not None:
            if form not in self.structured_formats:
                return 500, _error(f"unsupported structured output form {form!r}", "server_error")
        if self.context_window is not None:
            asked = sum(count_words(m.get("content") or "") for m in messages)
            wanted = asked + int(request.get("max_tokens") or 0)
            if wanted > self.context_window:
                message = (
                    f"This model's maximum context length is {self.context_window} tokens. "
                    f"However, you requested {wanted} tokens ({asked} in the messages, "
                    f"{wanted - asked} in the completion). Please reduce the length of the "
                    "messages or completion."
                )
                return 400, {
                    "error": {
                        "message": message,
                        "type": "invalid_request_error",
                        "param": "messages",
                        "code": "context_length_exceeded",
                    }
                }
        if fault == "timeout":
            time.sleep(self.timeout_sleep_s)
        elif self.latency_s > 0:
            time.sleep(self.latency_s)
        if fault == "empty":
            text = ""
        elif fault == "garbage":
            text = self._garbage()
        else:
            text = str(self.policy(messages, request))
        prompt_tokens = sum(count_words(m.get("content") or "") for m in messages)
        completion_tokens = count_words(text)
        with self._lock:
            self.answered.append(request)
            self.usage["prompt_tokens"] += prompt_tokens
            self.usage["completion_tokens"] += completion_tokens
            n = len(self.answered)
        body = {
            "id": f"chatcmpl-test-{n}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.get("model", "test"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
        return 200, body


def _error(message: str, kind: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "code": kind}}


class _ChatHandler(BaseHTTPRequestHandler):
    chat_server: ScriptedChatServer
    protocol_version = "HTTP/1.1"  # keep-alive, as real servers do
    # headers and body go out in separate writes: without TCP_NODELAY the body waits for an ACK
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        pass  # keep test output clean

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        if self.path.rstrip("/") == "/stats":
            self._send(200, self.chat_server.stats())
        elif self.path.rstrip("/") == "/v1/models":
            server = self.chat_server
            entry: dict[str, Any] = {"id": "test", "object": "model"}
            if server.family in OWNERS:
                entry["owned_by"] = OWNERS[server.family]
            if server.family == "vllm" and server.context_window is not None:
                entry["max_model_len"] = server.context_window
            self._send(200, {"object": "list", "data": [entry]})
        elif self.path.rstrip("/") == "/props" and self.chat_server.family == "llama_cpp":
            n_ctx = self.chat_server.context_window
            self._send(200, {"default_generation_settings": {"n_ctx": n_ctx}})
        else:
            self._send(404, _error(f"no route {self.path}", "not_found"))

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.path.rstrip("/") == "/stats/reset":
            self.chat_server.reset_counts()
            self._send(200, self.chat_server.stats())
            return
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(404, _error(f"no route {self.path}", "not_found"))
            return
        try:
            request = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._send(400, _error("the body is not JSON", "invalid_request_error"))
            return
        server = self.chat_server
        fault = server._begin()
        try:
            status, body = server._answer(request, fault)
        except Exception as error:  # noqa: BLE001 - a policy bug becomes a 500 the test sees
            status, body = 500, _error(f"policy raised {error!r}", "server_error")
        finally:
            server._end()
        self._send(status, body)

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout fault): nothing to answer


def main(argv: Sequence[str] | None = None) -> None:
    """Serve in the foreground and print the base URL on the first line (with ``--play``, then
    how to point a bundled experiment at it)."""
    import argparse

    parser = argparse.ArgumentParser(description="OpenAI-compatible scripted chat server for tests")
    parser.add_argument("--port", type=int, default=0, help="0 = an ephemeral port")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added per request")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--backlog", type=int, default=128, help="the listen backlog")
    parser.add_argument(
        "--play",
        action="store_true",
        help="answer every bundled LLM prompt with a legal move (default: echo the prompt)",
    )
    parser.add_argument(
        "--garbage", type=float, default=0.0, help="the share of requests answered with junk"
    )
    parser.add_argument(
        "--alternating-roles",
        action="store_true",
        help="refuse chats whose roles do not alternate, as Gemma's and Mistral's templates do",
    )
    args = parser.parse_args(argv)
    policy = None
    if args.play:
        from socialsim.testing.playground import PlayPolicy

        policy = PlayPolicy()
    server = ScriptedChatServer(
        policy,
        latency_s=args.latency,
        seed=args.seed,
        port=args.port,
        backlog=args.backlog,
        fault_rates={"garbage": args.garbage} if args.garbage else None,
        alternating_roles=args.alternating_roles,
    ).start()
    print(server.url, flush=True)
    if args.play:
        print(
            "play any bundled LLM experiment offline against it, e.g.:\n"
            f"  socialsim run llm_decrypto_competitive --set 'seats.*.model.api_base={server.url}' "
            "--set 'seats.*.model.model=openai/play' --set episodes=1 --out results/play",
            flush=True,
        )
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == "__main__":
    main()
