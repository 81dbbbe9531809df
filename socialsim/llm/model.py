"""The language-model interface: settings, replies, errors and the wrapper base class.

Everything here is provider-free; the one implementation that talks to a provider is
:class:`socialsim.llm.litellm_model.LiteLLMModel`, and the wrappers in
:mod:`socialsim.llm.wrappers` and :mod:`socialsim.llm.cache` add behaviour around any
:class:`ChatModel` without changing its interface.
"""

from __future__ import annotations

import abc
import asyncio
import dataclasses
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

# the chat's names are this interface's too (re-exported: the layers import them from here)
from socialsim.llm.chat import Chat as Chat
from socialsim.llm.chat import ChatMessage as ChatMessage
from socialsim.llm.chat import check_messages as check_messages
from socialsim.llm.chat import digest as digest
from socialsim.llm.chat import prompt_hash as prompt_hash
from socialsim.llm.server import (
    ServerInfo,
    known_info,
    learned_window,
    overflow_window,
    server_info,
)
from socialsim.llm.structured import check_format, check_schema
from socialsim.plain_json import canonical_json

#: The settings a call may override, besides provider parameters. ``schema`` asks for structured
#: output (see :mod:`socialsim.llm.structured`).
OVERRIDABLE = ("temperature", "max_tokens", "seed", "timeout", "schema")

#: Settings fixed per model: a call cannot change which model or endpoint it reaches.
FIXED = ("model", "api_base", "api_key_env", "messages", "api_key")


#: Provider prefixes litellm wants on an OpenAI-compatible server's model name; the server itself
#: knows the model by the rest.
MODEL_PREFIXES = ("openai/", "hosted_vllm/")


def served_name(model: str) -> str:
    """The name the server knows the model by: ``"openai/test"`` -> ``"test"``."""
    for prefix in MODEL_PREFIXES:
        if model.startswith(prefix):
            return model[len(prefix) :]
    return model


@dataclass(frozen=True)
class Settings:
    """How a model is called. ``params`` are extra provider parameters passed as they are
    (``reasoning_effort``, ``response_format``, ``top_p``, ``stop``...).

    ``timeout`` and ``context_window`` do not change the reply, so they are left out of
    :meth:`request`, the cache key. ``schema`` (a call's, see :mod:`socialsim.llm.structured`)
    and ``structured_format`` (how it goes on the wire) enter the key only when a schema is set.
    """

    model: str
    api_base: str | None = None
    api_key_env: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    timeout: float = 60.0
    params: Mapping[str, Any] = field(default_factory=dict)
    structured_format: str = "auto"
    context_window: int | None = None
    schema: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        check_format(self.structured_format)
        if self.context_window is not None and not (
            isinstance(self.context_window, int)
            and not isinstance(self.context_window, bool)
            and self.context_window > 0
        ):
            raise ValueError(
                f"context_window: expected a number of tokens > 0 or None (read from the server), "
                f"got {self.context_window!r}"
            )
        if self.schema is not None:
            object.__setattr__(self, "schema", check_schema(self.schema))
        if not isinstance(self.model, str) or not self.model:
            raise ValueError(
                f"model: expected a non-empty model name such as 'openai/gpt-4o-mini', got {self.model!r}"
            )
        if self.temperature is not None and not (
            isinstance(self.temperature, (int, float)) and self.temperature >= 0
        ):
            raise ValueError(
                f"temperature: expected a number >= 0 or None, got {self.temperature!r}"
            )
        if self.max_tokens is not None and not (
            isinstance(self.max_tokens, int) and self.max_tokens > 0
        ):
            raise ValueError(
                f"max_tokens: expected a positive integer or None, got {self.max_tokens!r}"
            )
        if self.seed is not None and (
            not isinstance(self.seed, int) or isinstance(self.seed, bool)
        ):
            raise ValueError(f"seed: expected an integer or None, got {self.seed!r}")
        if not (isinstance(self.timeout, (int, float)) and self.timeout > 0):
            raise ValueError(f"timeout: expected a number of seconds > 0, got {self.timeout!r}")
        if not isinstance(self.params, Mapping):
            raise ValueError(
                f"params: expected a table of provider parameters, got {self.params!r}"
            )
        for name in self.params:
            if name in FIXED or name in OVERRIDABLE:
                raise ValueError(
                    f"params.{name}: set {name!r} as a setting of its own, not as a provider parameter"
                )
        object.__setattr__(self, "params", dict(self.params))

    def with_overrides(self, overrides: Mapping[str, Any]) -> Settings:
        """These settings with a call's overrides: ``temperature``, ``max_tokens``, ``seed``,
        ``timeout`` replace the setting; any other name is a provider parameter."""
        if not overrides:
            return self
        fixed = [name for name in overrides if name in FIXED]
        if fixed:
            raise ValueError(
                f"{fixed[0]}: fixed per model and cannot be overridden per call; overridable: {list(OVERRIDABLE)} and provider parameters"
            )
        direct = {k: v for k, v in overrides.items() if k in OVERRIDABLE}
        params = {**self.params, **{k: v for k, v in overrides.items() if k not in OVERRIDABLE}}
        return dataclasses.replace(self, **direct, params=params)

    def request(self, messages: Sequence[ChatMessage]) -> dict[str, Any]:
        """Everything that determines the reply: the explicit cache key of a call."""
        request = {
            "model": self.model,
            "api_base": self.api_base,
            "messages": [dict(m) for m in messages],
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "params": dict(self.params),
        }
        if self.schema is not None:
            request["schema"] = self.schema
            request["structured_format"] = self.structured_format
        return request

    def request_json(self, messages: Sequence[ChatMessage]) -> str:
        """The canonical JSON of :meth:`request`: the text whose hash is the cache key."""
        return canonical_json(self.request(messages), allow_nan=False)

    def request_hash(self, messages: Sequence[ChatMessage]) -> str:
        """The SHA-256 of :meth:`request_json`: the cache key. A :class:`Chat` remembers it with
        these settings, so that the layers of one call encode the request once."""
        if type(messages) is not Chat:
            return digest(self.request_json(messages), 64)
        return messages.remember(self, lambda: digest(self.request_json(messages), 64))

    def describe(self) -> dict[str, Any]:
        """JSON-able, for manifests (names the key's environment variable, never the key)."""
        return {
            "model": self.model,
            "api_base": self.api_base,
            "api_key_env": self.api_key_env,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "timeout": self.timeout,
            "params": json.loads(canonical_json(self.params, allow_nan=False)),
            "structured_format": self.structured_format,
            "context_window": self.context_window,
        }


@dataclass(frozen=True)
class Reply:
    """One answered call.

    ``attempt`` is the provider request that succeeded (1 = first try; 0 = served from the
    cache, no request). ``cost`` is in US dollars when litellm knows the model's price, else
    None. A cached reply keeps the tokens and cost of the call that produced it, and its
    ``latency_s`` is the time of the cache lookup. ``invalid`` says why the layer already knows
    the text is no answer (a reply over ``max_reply_chars``, :class:`~socialsim.llm.ReplyLimit`,
    whose ``text`` is then only its opening): an agent counts it as an invalid answer.
    """

    text: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None
    latency_s: float = 0.0
    cached: bool = False
    attempt: int = 1
    prompt_hash: str = ""
    request_hash: str = ""
    finish_reason: str | None = None
    invalid: str | None = None

    def event(self) -> dict[str, Any]:
        """The per-call log entry an agent appends to its ``events``."""
        return {
            "type": "llm_call",
            "model": self.model,
            "prompt_hash": self.prompt_hash,
            "request_hash": self.request_hash,
            "reply": self.text,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost": self.cost,
            "latency_s": round(self.latency_s, 6),
            "cached": self.cached,
            "attempt": self.attempt,
            "finish_reason": self.finish_reason,
            "error": None,
        }


class LLMError(Exception):
    """Base class of this package's errors."""


class ProviderError(LLMError):
    """The provider did not answer usefully: a permanent error (bad request, authentication,
    unknown model) or a transient one that outlived its retries.

    ``kind`` is one of ``rate_limit``, ``server_error``, ``timeout``, ``connection``,
    ``empty_reply`` (transient), ``authentication``, ``rejected`` (a bad request, an unknown
    model: permanent), ``structured_refused`` (the server refused the structured output the run
    resolved at its start: permanent, and the run stops) or ``context_overflow`` (the request does not fit the model's window:
    permanent, and an LLM agent's invalid answer rather than a failed episode); ``status`` is
    the HTTP status if any.
    """

    def __init__(
        self,
        message: str,
        *,
        kind: str,
        model: str,
        status: int | None = None,
        attempts: int = 1,
        prompt_hash: str = "",
        request_hash: str = "",
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.model = model
        self.status = status
        self.attempts = attempts
        self.prompt_hash = prompt_hash
        self.request_hash = request_hash
        self.retry_after = retry_after

    def event(self) -> dict[str, Any]:
        """The per-call log entry of a failed call (same keys as :meth:`Reply.event`)."""
        return {
            "type": "llm_call",
            "model": self.model,
            "prompt_hash": self.prompt_hash,
            "request_hash": self.request_hash,
            "reply": None,
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "cost": None,
            "latency_s": None,
            "cached": False,
            "attempt": self.attempts,
            "finish_reason": None,
            "error": f"{self.kind}: {self}",
        }


_CREDENTIALS = re.compile(
    r"missing credentials|api[_ -]?key|authenticat|unauthori[sz]ed|permission denied", re.I
)


def is_authentication_error(text: str, status: int | None = None) -> bool:
    """Whether an error says the credentials are missing or refused: no retry can heal it
    (some providers report a missing key as a 500)."""
    return status in (401, 403) or bool(_CREDENTIALS.search(text))


class TransientProviderError(ProviderError):
    """A failure worth retrying (rate limit, 5xx, timeout, connection, empty reply)."""


class BudgetExceeded(LLMError):
    """A :class:`~socialsim.llm.wrappers.CallBudget` refused a call."""


class ChatModel(abc.ABC):
    """Anything that answers a chat: ``await model.complete(messages, **overrides) -> Reply``.

    ``overrides`` change ``temperature``, ``max_tokens``, ``seed`` or ``timeout`` for one call, or
    add provider parameters (e.g. ``response_format``); they are part of the cache key.
    """

    @property
    @abc.abstractmethod
    def settings(self) -> Settings: ...

    @abc.abstractmethod
    async def complete(self, messages: Sequence[ChatMessage], **overrides: Any) -> Reply: ...

    def describe(self) -> dict[str, Any]:
        """JSON-able description of the model and its wrappers, outermost first, for manifests."""
        return {**self.settings.describe(), "layers": self.layers()}

    def layers(self) -> list[dict[str, Any]]:
        return [{"layer": type(self).__name__}]

    async def context_window(self) -> int | None:
        """The model's context window in tokens: the table's ``context_window``, else what the
        server says (:mod:`socialsim.llm.server`), else None (unknown)."""
        return None

    async def constrains_by_default(self) -> bool:
        """Whether an agent's ``structured_output = "auto"`` constrains this model's answers:
        when the table names a ``structured_format``, or the server at its ``api_base`` is a
        self-hosted one that takes a schema (:data:`~socialsim.llm.server.CONSTRAINED_FAMILIES`).
        Not through a provider by name: the papers' models answered in free text."""
        return False

    def find(self, kind: type) -> Any:
        """The first layer of type ``kind`` in this stack (outermost first), or None."""
        layer: Any = self
        while layer is not None:
            if isinstance(layer, kind):
                return layer
            layer = getattr(layer, "inner", None)
        return None


class Wrapper(ChatModel):
    """A model around an ``inner`` model with the same interface; subclasses override
    :meth:`complete` and :meth:`layer` (their own part of :meth:`describe`)."""

    def __init__(self, inner: ChatModel) -> None:
        if not isinstance(inner, ChatModel):
            raise TypeError(f"inner: expected a ChatModel, got {type(inner).__name__}")
        self.inner = inner

    @property
    def settings(self) -> Settings:
        return self.inner.settings

    async def complete(self, messages: Sequence[ChatMessage], **overrides: Any) -> Reply:
        return await self.inner.complete(messages, **overrides)

    def layer(self) -> dict[str, Any]:
        return {"layer": type(self).__name__}

    def layers(self) -> list[dict[str, Any]]:
        return [self.layer(), *self.inner.layers()]

    async def context_window(self) -> int | None:
        return await self.inner.context_window()

    async def constrains_by_default(self) -> bool:
        return await self.inner.constrains_by_default()


class Provider(ChatModel):
    """A model that sends the requests itself (the innermost layer of a stack): it holds its
    :class:`Settings` and reads its key from the environment variable ``api_key_env`` names."""

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key_env: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
        timeout: float = 60.0,
        params: Mapping[str, Any] | None = None,
        structured_format: str = "auto",
        context_window: int | None = None,
        server: Mapping[str, Any] | None = None,
    ) -> None:
        self._settings = Settings(
            model=model,
            api_base=api_base,
            api_key_env=api_key_env,
            temperature=temperature,
            max_tokens=max_tokens,
            seed=seed,
            timeout=timeout,
            params=dict(params or {}),
            structured_format=structured_format,
            context_window=context_window,
        )
        if api_key_env is not None and not os.environ.get(api_key_env):
            raise ValueError(
                f"api_key_env: the environment variable {api_key_env!r} is not set (or empty)"
            )
        #: what the server is, as the run resolved it once (the table's ``server``): never asked
        self.server = None if server is None else ServerInfo.from_facts(server)

    @property
    def settings(self) -> Settings:
        return self._settings

    async def _server(self) -> ServerInfo | None:
        if self.server is not None:
            return self.server
        api_base = self._settings.api_base
        if not api_base:
            return None
        name = served_name(self._settings.model)
        info = known_info(api_base, name)
        if info is None:  # asked once; a blocking GET must not hold up the loop
            # a busy server (one slot, a long generation) answers late: give it the call's time
            timeout = self._settings.timeout
            info = await asyncio.to_thread(server_info, api_base, name, timeout)
        return info

    async def wire_format(self, settings: Settings) -> str:
        """The structured format a call goes out in: ``"auto"`` is the server's own form when
        there is an ``api_base`` to ask, else OpenAI's (litellm translates it per provider)."""
        if settings.structured_format != "auto":
            return settings.structured_format
        info = await self._server()
        return info.structured_format if info is not None else "openai"

    async def constrains_by_default(self) -> bool:
        if self._settings.structured_format != "auto":
            return True
        info = await self._server()
        return info is not None and info.constrains

    async def context_window(self) -> int | None:
        settings = self._settings
        if settings.context_window is not None:
            return settings.context_window
        learned = learned_window(settings.api_base, settings.model)
        if learned is not None:
            return learned
        info = await self._server()
        return info.context_window if info is not None else None

    def overflow_error(
        self, message: str, text: str, status: int | None, hashes: Mapping[str, str]
    ) -> ProviderError:
        """The permanent error of a request too long for the window (the stated window is
        remembered for the next requests)."""
        overflow_window(self._settings.api_base, self._settings.model, text)
        return ProviderError(
            message, kind="context_overflow", model=self._settings.model, status=status, **hashes
        )

    def refused_structure(
        self, wire: str, status: int | None, text: str, hashes: Mapping[str, str]
    ) -> ProviderError:
        """The permanent error of a server that refuses the structured output the run resolved
        at its start: the run never goes on with unconstrained answers in its place."""
        model = self._settings.model
        return ProviderError(
            f"{model} at {self._settings.api_base}: the server refused structured output in the "
            f"form {wire!r}, which this run resolved at its start (HTTP {status}: {text[:300]}); "
            "a run never switches to unconstrained answers midway: serve the model as it was "
            "served at the start of the run, or run into a new directory",
            kind="structured_refused",
            model=model,
            status=status,
            **hashes,
        )

    def api_key(self) -> str | None:
        """The key, read at each call (never stored); None when no variable is named."""
        name = self._settings.api_key_env
        if name is None:
            return None
        key = os.environ.get(name)
        if not key:
            raise ProviderError(
                f"{self._settings.model}: the environment variable {name!r} (api_key_env) is not set",
                kind="rejected",
                model=self._settings.model,
            )
        return key
