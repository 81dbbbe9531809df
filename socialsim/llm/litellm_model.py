"""The one place that talks to a provider: :class:`LiteLLMModel`, through ``litellm.acompletion``.

Any model litellm reaches works: a cloud provider by model name (``"openai/gpt-4o-mini"``,
``"anthropic/claude-3-5-haiku-latest"``) with its key in an environment variable, or any
OpenAI-compatible server (vLLM, llama.cpp's server, the test server) by ``api_base`` with the
model named ``"openai/<served name>"``.

litellm is imported on the first call, not at import time (it takes seconds), and with
``LITELLM_LOCAL_MODEL_COST_MAP=True`` so that it reads its bundled price table instead of
fetching one. Retries are this package's business (:class:`~socialsim.llm.wrappers.Retry`), so
the OpenAI SDK's own retries are switched off; errors come out as :class:`ProviderError`
(:class:`TransientProviderError` for those worth retrying).

Unpriced models. For a model whose price litellm does not know (a local server's), litellm
looks the model up about a dozen times per call while pricing and logging the reply, and a
failed lookup is not cached. So once a reply has come back with tokens but no price, the
model's later calls carry an explicit zero per-call price (kept with the call: never written into
litellm's cost map nor sent to the server), which litellm prices by arithmetic; their cost is
still reported as unknown (None). Only models on litellm's OpenAI provider (``openai/...``, as
local servers are named) take this path, since their requests were checked to go out unchanged.
``experiments/bench/litellm_overhead_bench.py`` measures the per-call CPU (figures in its
docstring).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

from socialsim.llm.model import (
    ChatMessage,
    Provider,
    ProviderError,
    Reply,
    TransientProviderError,
    check_messages,
    is_authentication_error,
    prompt_hash,
)
from socialsim.llm.server import is_overflow, is_structure_refusal
from socialsim.llm.structured import wire_fields

#: The key sent to an ``api_base`` endpoint when no ``api_key_env`` is set: local
#: OpenAI-compatible servers want some key but check none.
LOCAL_PLACEHOLDER_KEY = "no-key"

#: Per-call pricing for a model litellm has no price for: zero rates make litellm price the
#: reply by arithmetic instead of failing cost-map searches, and the same rates as the
#: ``model_info`` in ``metadata`` let its zero-cost diagnostic find them without a search.
#: Neither is sent to the server; the reply's cost is still reported as None.
_ZERO_PRICE = {"input_cost_per_token": 0.0, "output_cost_per_token": 0.0}


@cache
def load_litellm() -> Any:
    """Import litellm once, quietly, with its bundled cost map."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True  # no "Give Feedback / Get Help" banner per error
    litellm.telemetry = False
    if "LITELLM_LOG" not in os.environ:
        # Its logging worker warns each time a new event loop starts (one per asyncio.run).
        logging.getLogger("LiteLLM").setLevel(logging.ERROR)
    return litellm


class LiteLLMModel(Provider):
    """A chat model reached through litellm.

    Arguments:
        model: litellm's model name, e.g. ``"openai/gpt-4o-mini"``.
        api_base: the endpoint of an OpenAI-compatible server, e.g. ``"http://127.0.0.1:8000/v1"``.
        api_key_env: the name of the environment variable that holds the key (the key itself is
            read at each call and never stored or logged).
        temperature, max_tokens, seed: sent when not None.
        timeout: seconds per request.
        params: other provider parameters sent as they are (``reasoning_effort``,
            ``response_format``, ``top_p``, ``drop_params``...).
    """

    def __init__(self, model: str, **settings: Any) -> None:
        super().__init__(model, **settings)
        # Whether a reply showed litellm has no price for this model, and the size of its cost
        # map then (a model registered since may have a price now, so a change forgets it).
        self._unpriced = False
        self._cost_map_size = -1
        self._may_skip_pricing = model.startswith("openai/")  # see the module docstring

    def _api_key(self) -> str | None:
        # litellm wants some key for a local OpenAI-compatible server, even one that needs none
        key = self.api_key()
        if key is not None:
            return key
        return LOCAL_PLACEHOLDER_KEY if self._settings.api_base else None

    async def complete(self, messages: Sequence[ChatMessage], **overrides: Any) -> Reply:
        plain = check_messages(messages)
        settings = self._settings.with_overrides(overrides)
        hashes = {"prompt_hash": prompt_hash(plain), "request_hash": settings.request_hash(plain)}
        litellm = load_litellm()
        kwargs: dict[str, Any] = {
            "model": settings.model,
            "messages": [dict(m) for m in plain],  # litellm may write into them
            "timeout": settings.timeout,
            "max_retries": 0,  # the OpenAI SDK would retry on its own; Retry does it here
            "num_retries": 0,
        }
        for name in ("api_base", "temperature", "max_tokens", "seed"):
            value = getattr(settings, name)
            if value is not None:
                kwargs[name] = value
        api_key = self._api_key()
        if api_key is not None:
            kwargs["api_key"] = api_key
        kwargs.update(settings.params)
        wire = None
        if settings.schema is not None:
            wire = await self.wire_format(settings)
            fields = wire_fields(wire, settings.schema)
            if "response_format" in fields:
                kwargs["response_format"] = fields.pop("response_format")
            if fields:  # a server's own fields go in the body as they are
                kwargs["extra_body"] = {**kwargs.get("extra_body", {}), **fields}
        unpriced = self._known_unpriced(litellm, kwargs)
        if unpriced:
            kwargs.update(_ZERO_PRICE)
            kwargs["metadata"] = {"model_info": dict(_ZERO_PRICE)}  # fresh: litellm writes into it
        started = time.perf_counter()
        try:
            response = await litellm.acompletion(**kwargs)
        except Exception as error:
            mapped = provider_error(error, settings.model, hashes)
            if mapped.kind == "context_overflow":
                mapped = self.overflow_error(str(mapped), str(error), mapped.status, hashes)
            elif wire is not None and is_structure_refusal(str(error), mapped.status):
                mapped = self.refused_structure(wire, mapped.status, str(error), hashes)
            raise mapped from error
        latency = time.perf_counter() - started
        choice = response.choices[0]
        text = choice.message.content or ""
        if not text.strip():
            raise TransientProviderError(
                f"{settings.model}: empty reply (finish_reason={choice.finish_reason!r})",
                kind="empty_reply",
                model=settings.model,
                **hashes,
            )
        usage = getattr(response, "usage", None)
        prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
        completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
        cost = None if unpriced else completion_cost(litellm, response)
        if cost is None and not unpriced and prompt_tokens + completion_tokens > 0:
            self._unpriced = True  # tokens but no price: litellm has none for this model
        return Reply(
            text=text,
            model=settings.model,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            cost=cost,
            latency_s=latency,
            finish_reason=choice.finish_reason,
            **hashes,
        )

    def layers(self) -> list[dict[str, Any]]:
        return [{"layer": "LiteLLMModel"}]

    def _known_unpriced(self, litellm: Any, kwargs: Mapping[str, Any]) -> bool:
        """Whether an earlier reply showed litellm has no price for this model (and the call
        sets no pricing or metadata of its own, which the zero price would override)."""
        size = len(litellm.model_cost)
        if size != self._cost_map_size:
            self._unpriced = False
            self._cost_map_size = size
        return (
            self._unpriced
            and self._may_skip_pricing
            and not any(name in ("metadata", "model_info") or "cost_per" in name for name in kwargs)
        )


def completion_cost(litellm: Any, response: Any) -> float | None:
    """The call's price in dollars where litellm knows the model's price, else None.

    litellm prices every response it returns (``_hidden_params["response_cost"]``); pricing it
    again costs milliseconds of CPU per call, so that is only the fallback.
    """
    hidden = getattr(response, "_hidden_params", None) or {}
    if isinstance(hidden, dict) and "response_cost" in hidden:
        cost = hidden["response_cost"]
        return float(cost) if isinstance(cost, (int, float)) else None
    try:
        cost = litellm.completion_cost(completion_response=response)
    except Exception:  # noqa: BLE001 - an unknown price is not an error of the call
        return None
    return float(cost) if cost is not None else None


def provider_error(error: Exception, model: str, hashes: Mapping[str, str]) -> ProviderError:
    """Map a litellm / OpenAI SDK exception to this package's errors."""
    name = type(error).__name__
    status = getattr(error, "status_code", None)
    status = int(status) if isinstance(status, int) else None
    message = f"{model}: {name}: {str(error)[:500]}"
    if "Authentication" in name or is_authentication_error(str(error), status):
        return ProviderError(message, kind="authentication", model=model, status=status, **hashes)
    if "ContextWindow" in name or (status in (400, 413, 422) and is_overflow(str(error))):
        return ProviderError(message, kind="context_overflow", model=model, status=status, **hashes)
    if "Timeout" in name:
        kind = "timeout"
    elif name == "RateLimitError" or status == 429:
        kind = "rate_limit"
    elif any("Connect" in type(link).__name__ for link in _chain(error)):
        kind = "connection"  # litellm reports a refused connection as a 500; its cause says so
    elif (
        status is not None
        and status >= 500
        or name in ("InternalServerError", "ServiceUnavailableError")
    ):
        kind = "server_error"
    else:
        return ProviderError(message, kind="rejected", model=model, status=status, **hashes)
    return TransientProviderError(
        message, kind=kind, model=model, status=status, retry_after=retry_after(error), **hashes
    )


def _chain(error: BaseException) -> list[BaseException]:
    """The error and its causes, innermost last."""
    links: list[BaseException] = []
    link: BaseException | None = error
    while link is not None and link not in links and len(links) < 20:
        links.append(link)
        link = link.__cause__ or link.__context__
    return links


def retry_after(error: Exception) -> float | None:
    """The seconds a ``Retry-After`` header asks for, if the error carries one."""
    response = getattr(error, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    try:
        value = headers.get("retry-after")
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None
