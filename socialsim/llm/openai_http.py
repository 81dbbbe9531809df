"""A lightweight provider for OpenAI-compatible servers only: :class:`OpenAICompatibleModel`,
one ``POST {api_base}/chat/completions`` per call over a shared ``aiohttp`` session, no litellm.

=====================  ===============================================================================
Reaches                an OpenAI-compatible ``/chat/completions`` endpoint (vLLM, llama.cpp's server,
                       socialsim.testing.llm_server) at ``api_base``, which is required
Chosen by              ``transport = "openai_http"`` in a :func:`~socialsim.llm.build_model` table,
                       the default when the table has an ``api_base`` (``"litellm"`` reaches
                       any provider by name)
Request body           ``model`` (the name without a leading ``openai/`` or ``hosted_vllm/``),
                       ``messages``, ``temperature`` / ``max_tokens`` / ``seed`` when set, then
                       ``params`` as they are, a call's ``schema`` in the table's
                       ``structured_format`` (:mod:`socialsim.llm.structured`);
                       ``Authorization: Bearer <key>`` when ``api_key_env`` is set
Errors                 as :class:`~socialsim.llm.LiteLLMModel` reports them: 429 ``rate_limit``
                       (its ``Retry-After`` honoured), 5xx ``server_error``, ``timeout``,
                       ``connection``, ``empty_reply`` (all transient, so
                       :class:`~socialsim.llm.Retry` retries them); a 400 saying the request
                       exceeds the context window ``context_overflow``; other 4xx (a bad
                       request, an unknown model) ``rejected`` (permanent, never retried); an
                       error answer to a request with a schema that refuses its form
                       ``structured_refused`` (permanent); a 200 whose body is not JSON is a
                       ``server_error``.
                       ``status`` is the HTTP status the server sent, None for a timeout or a
                       connection error (litellm makes up 408 and 500 for those)
Reply                  text, tokens from the server's ``usage``, latency, ``finish_reason``, the same
                       ``prompt_hash`` and ``request_hash`` as litellm's path; ``cost`` is always
                       None (there is no price table on this path, and local models have no price).
                       The body is read as it streams in, and a body over :func:`body_limit`
                       is not read further: an empty reply marked ``invalid`` (re-prompted,
                       then the fallback), the memory it takes bounded
=====================  ===============================================================================

Why. litellm's CPU per call (``experiments/bench/litellm_overhead_bench.py``) caps the calls a
process makes per second; with a local server and many requests in flight that CPU, not the
server, sets the pace. This path does only what an OpenAI-compatible endpoint
needs: build a JSON body, send it, read ``choices[0]`` and ``usage``.

The same request gives the same reply whichever transport sends it, so the transport is not part
of the cache key (:meth:`~socialsim.llm.Settings.request`): a cache filled through litellm serves
this path and the other way round. The model keeps its full name (``openai/test``) in its
settings, events and cache key; only the body sent to the server drops the provider prefix.

Connections. One ``aiohttp.ClientSession`` per event loop, shared by every model of that loop
(HTTP/1.1, keep-alive, no connection cap: :class:`~socialsim.llm.ConcurrencyLimit` is the limit).
Its asyncio objects belong to the loop that made them, and the runner may play successive
episodes in successive loops (``asyncio.run`` each), hence one per loop; the session is closed
when ``asyncio.run`` shuts its loop down. ``timeout`` is the whole request's, connect to last
byte. aiohttp is imported on the first call (it comes with litellm, which uses it too).

Why aiohttp and not httpx: httpx's connection pool (httpcore 1.0) checks every pooled connection
for each request it places, at a syscall each, so its CPU per call grows with the connections
open: against the test server (1000-word prompts, 200 ms latency) 20 ms per call with 60
requests in flight, more than litellm; aiohttp's pool keeps idle connections in a queue and
spent 1.2 ms per call there (600 requests, 60 in flight, the same body through each client).
In the Decrypto benchmark (``experiments/bench/llm_decrypto_bench.py``) this transport spends
under 1 ms of CPU per call, litellm about 14.

Version History

* v0: first version (``transport = "openai_http"``).
"""

from __future__ import annotations

import asyncio
import json
import time
import weakref
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import orjson

from socialsim.llm.model import (
    Chat,
    ChatMessage,
    Provider,
    ProviderError,
    Reply,
    Settings,
    TransientProviderError,
    check_messages,
    is_authentication_error,
    prompt_hash,
    served_name,
)
from socialsim.llm.server import is_overflow, is_structure_refusal
from socialsim.llm.structured import wire_fields
from socialsim.llm.wrappers import CHARS_PER_TOKEN, DEFAULT_MAX_REPLY_CHARS

#: Seconds an idle connection is kept for the next request (see :func:`_session`).
KEEPALIVE_S = 4.0
#: A 200 answer's body is read as it streams in and cut at :func:`body_limit` bytes: at least
#: this many, whatever the call's ``max_tokens``.
MIN_BODY_BYTES = 16 << 20
#: The most bytes a character of the reply's text takes in the JSON body (an escaped surrogate
#: pair, ``\\ud83d\\ude00``).
BYTES_PER_CHAR = 12
#: The most bytes of an error answer's body read (its opening is all an error message shows).
ERROR_BODY_BYTES = 1 << 20
#: Bytes read from the connection at a time.
READ_BYTES = 1 << 16


class OpenAICompatibleModel(Provider):
    """A chat model on an OpenAI-compatible server, called over HTTP without litellm.

    Arguments (as :class:`~socialsim.llm.LiteLLMModel`'s):
        model: the model's name, e.g. ``"openai/Qwen2.5-7B-Instruct"`` (the prefix is dropped from
            the request).
        api_base: the server's endpoint, e.g. ``"http://127.0.0.1:8000/v1"`` (required).
        api_key_env: the name of the environment variable that holds the key (read at each call,
            never stored or logged); no ``Authorization`` header when None.
        temperature, max_tokens, seed: sent when not None.
        timeout: seconds per connect, write and read.
        params: other request fields sent as they are (``response_format``, ``top_p``, ``stop``...).
    """

    def __init__(self, model: str, *, api_base: str | None = None, **settings: Any) -> None:
        if not isinstance(api_base, str) or not api_base.startswith(("http://", "https://")):
            raise ValueError(
                f"api_base: the openai_http transport needs the server's http(s) endpoint, "
                f"such as 'http://127.0.0.1:8000/v1', got {api_base!r}"
            )
        super().__init__(model, api_base=api_base, **settings)
        self._url = api_base.rstrip("/") + "/chat/completions"
        self._name = served_name(model)

    def layers(self) -> list[dict[str, Any]]:
        return [{"layer": "OpenAICompatibleModel"}]

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        key = self.api_key()
        if key is not None:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _body(self, settings: Settings, chat: Chat, structured_format: str | None) -> bytes:
        body: dict[str, Any] = {"model": self._name, "messages": list(chat)}
        for name in ("temperature", "max_tokens", "seed"):
            value = getattr(settings, name)
            if value is not None:
                body[name] = value
        body.update(settings.params)
        if settings.schema is not None and structured_format is not None:
            body.update(wire_fields(structured_format, settings.schema))
        try:  # the request hash, made before, refused NaN and infinities
            return orjson.dumps(body, option=orjson.OPT_NON_STR_KEYS)
        except TypeError as error:
            raise ValueError(
                f"params: the openai_http transport sends the request as JSON and cannot encode "
                f"it ({error}); give every parameter as plain JSON (e.g. response_format as a dict)"
            ) from error

    async def complete(self, messages: Sequence[ChatMessage], **overrides: Any) -> Reply:
        plain = check_messages(messages)
        settings = self._settings.with_overrides(overrides)
        hashes = {"prompt_hash": prompt_hash(plain), "request_hash": settings.request_hash(plain)}
        model = settings.model
        wire = await self.wire_format(settings) if settings.schema is not None else None
        content = self._body(settings, plain, wire)
        headers = self._headers()
        aiohttp = _aiohttp()
        session = await _session()
        started = time.perf_counter()
        try:
            async with session.post(
                self._url,
                data=content,
                headers=headers,
                timeout=aiohttp.ClientTimeout(total=settings.timeout),
            ) as response:
                status = response.status
                limit = body_limit(settings) if status == 200 else ERROR_BODY_BYTES
                raw = await _read_bounded(response, limit)
                retry_header = response.headers.get("Retry-After")
        except TimeoutError as error:  # asyncio's and aiohttp's timeouts are both TimeoutError
            raise _transient("timeout", model, error, hashes) from error
        except (aiohttp.ClientError, OSError) as error:  # refused, reset, closed mid-reply...
            raise _transient("connection", model, error, hashes) from error
        latency = time.perf_counter() - started
        if raw is None and status == 200:  # no answer: re-prompted, then the fallback
            return Reply(
                text="",
                model=model,
                latency_s=latency,
                invalid=(
                    f"the reply's body is over {limit} bytes, the bound for this call "
                    "(max_tokens): answer briefly, in the format asked for"
                ),
                **hashes,
            )
        if status != 200:
            text = "(a body over the bound)" if raw is None else raw.decode("utf-8", "replace")
            if status in (400, 413, 422) and is_overflow(text):
                raise self.overflow_error(
                    f"{model}: HTTP {status}: {text[:500]}", text, status, hashes
                )
            if wire is not None and is_structure_refusal(text, status):
                raise self.refused_structure(wire, status, text, hashes)
            raise status_error(status, text, {"retry-after": retry_header}, model, hashes)
        try:
            data = json.loads(raw)
        except ValueError as error:
            raise TransientProviderError(
                f"{model}: HTTP 200 with a body that is not JSON: {raw[:200]!r}",
                kind="server_error",
                model=model,
                status=status,
                **hashes,
            ) from error
        choice, text = _first_choice(data)
        finish_reason = choice.get("finish_reason") if isinstance(choice, dict) else None
        if not text.strip():
            if isinstance(data, dict) and "error" in data and not data.get("choices"):
                raise TransientProviderError(
                    f"{model}: HTTP 200 with an error body: {str(data['error'])[:300]}",
                    kind="server_error",
                    model=model,
                    status=status,
                    **hashes,
                )
            raise TransientProviderError(
                f"{model}: empty reply (finish_reason={finish_reason!r})",
                kind="empty_reply",
                model=model,
                **hashes,
            )
        usage = data.get("usage") if isinstance(data, dict) else None
        usage = usage if isinstance(usage, dict) else {}
        return Reply(
            text=text,
            model=model,
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            cost=None,  # no price table on this path
            latency_s=latency,
            finish_reason=finish_reason,
            **hashes,
        )


async def _read_bounded(response: Any, limit: int) -> bytes | None:
    """The body of ``response`` read as it streams in, or None as soon as it is over ``limit``
    bytes (said by its ``Content-Length`` or found while reading): no more of it is read, and
    the connection is dropped, not reused."""
    declared = response.content_length
    if declared is not None and declared > limit:
        return None
    chunks, size = [], 0
    async for chunk in response.content.iter_chunked(READ_BYTES):
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def body_limit(settings: Settings) -> int:
    """The most bytes of a 200 answer read for a call: room for the longest reply the call may
    give (:class:`~socialsim.llm.ReplyLimit`'s bound without a ``max_reply_chars``, every
    character written as a 12-byte JSON escape), and never less than :data:`MIN_BODY_BYTES`."""
    chars = (
        CHARS_PER_TOKEN * settings.max_tokens
        if settings.max_tokens is not None
        else DEFAULT_MAX_REPLY_CHARS
    )
    return max(MIN_BODY_BYTES, BYTES_PER_CHAR * chars)


def _first_choice(data: Any) -> tuple[Any, str]:
    """``choices[0]`` and its message's text ("" where any of it is missing)."""
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices:
        return None, ""
    choice = choices[0]
    message = choice.get("message") if isinstance(choice, dict) else None
    text = message.get("content") if isinstance(message, dict) else None
    return choice, text if isinstance(text, str) else ""


def status_error(
    status: int, text: str, headers: Mapping[str, str], model: str, hashes: Mapping[str, str]
) -> ProviderError:
    """The error of a non-200 answer: refused credentials are permanent, 429 and 5xx are
    transient, the rest is a rejection."""
    message = f"{model}: HTTP {status}: {text[:500]}"
    if is_authentication_error(text, status):
        return ProviderError(message, kind="authentication", model=model, status=status, **hashes)
    if status == 429:
        return TransientProviderError(
            message,
            kind="rate_limit",
            model=model,
            status=status,
            retry_after=_seconds(headers.get("retry-after")),
            **hashes,
        )
    if status >= 500 and "response_format" in text and "validation" in text.lower():
        # the server refused the structured-output form (llama-cpp-python answers 500): no
        # retry can change that
        return ProviderError(message, kind="rejected", model=model, status=status, **hashes)
    if status >= 500:
        return TransientProviderError(
            message,
            kind="server_error",
            model=model,
            status=status,
            retry_after=_seconds(headers.get("retry-after")),
            **hashes,
        )
    return ProviderError(message, kind="rejected", model=model, status=status, **hashes)


def _transient(
    kind: str, model: str, error: Exception, hashes: Mapping[str, str]
) -> TransientProviderError:
    return TransientProviderError(
        f"{model}: {type(error).__name__}: {str(error)[:500]}", kind=kind, model=model, **hashes
    )


def _seconds(value: str | None) -> float | None:
    """A ``Retry-After`` in seconds (an HTTP date is not worth parsing here: None)."""
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        return None


_AIOHTTP: Any = None


def _aiohttp() -> Any:
    global _AIOHTTP  # noqa: PLW0603 - a lazy import, done once
    if _AIOHTTP is None:
        import aiohttp

        _AIOHTTP = aiohttp
    return _AIOHTTP


# loop -> (session, the suspended generator that closes it when asyncio.run shuts the loop down)
_SESSIONS: weakref.WeakKeyDictionary[Any, tuple[Any, Any]] = weakref.WeakKeyDictionary()


async def _session() -> Any:
    """The running loop's shared session, made on first use."""
    loop = asyncio.get_running_loop()
    entry = _SESSIONS.get(loop)
    if entry is None:
        aiohttp = _aiohttp()
        # limit=0: no cap on connections (ConcurrencyLimit is the limit). An idle connection is
        # dropped before the 5 s after which uvicorn (vLLM) and llama.cpp's server close theirs,
        # so a request is never sent down a connection the server is closing.
        session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=0, keepalive_timeout=KEEPALIVE_S)
        )
        # An async generator left suspended is closed by the loop's shutdown_asyncgens (which
        # asyncio.run calls), inside the loop: the one place to close the session cleanly.
        closer = _close_at_shutdown(session)
        await closer.__anext__()
        entry = _SESSIONS[loop] = (session, closer)
    return entry[0]


async def _close_at_shutdown(session: Any) -> AsyncIterator[None]:
    try:
        yield
    finally:
        await session.close()
