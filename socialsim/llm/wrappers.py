"""Composable wrappers: each takes a :class:`~socialsim.llm.model.ChatModel` and is one.

=====================  ==========================================================================
:class:`Retry`         retries transient failures with exponential backoff and jitter, then
                       raises :class:`ProviderError`
:class:`ConcurrencyLimit`  at most ``limit`` requests in flight per (model, api_base) in an event
                       loop, shared by every wrapper with that key (all episodes of a run)
:class:`CallBudget`    refuses calls past a number of requests, tokens or dollars
:class:`Accounting`    counts calls, requests, cache hits, failures, tokens, latency and cost
:class:`ReplyLimit`    a reply over ``max_reply_chars`` comes back cut, marked ``invalid``
=====================  ==========================================================================

The usual stack, outermost first (what :func:`socialsim.llm.build_model` builds)::

    Accounting(Cache(ReplyLimit(Retry(CallBudget(ConcurrencyLimit(LiteLLMModel(...))))), store))

so a cache hit costs no request and no budget; every retry is a request that counts against the
budget; a request waiting out its backoff does not hold a concurrency slot; and nothing above
the limit (the cache, the record, the next prompt of the chat) ever holds an oversized reply.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
import weakref
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from socialsim.llm.model import (
    BudgetExceeded,
    ChatMessage,
    ChatModel,
    ProviderError,
    Reply,
    Settings,
    TransientProviderError,
    Wrapper,
)

#: characters per token of ``max_tokens`` that :class:`ReplyLimit` allows by default: English
#: runs about 4, so a reply past 16 means the server ignored ``max_tokens``
CHARS_PER_TOKEN = 16
#: the bound when the call sets no ``max_tokens``
DEFAULT_MAX_REPLY_CHARS = 65_536
#: characters of an oversized reply kept (its opening), for the record and the re-prompt
EXCERPT_CHARS = 200


class ReplyLimit(Wrapper):
    """A reply longer than the bound is no answer: it comes back as a :class:`Reply` whose
    ``text`` is its first :data:`EXCERPT_CHARS` characters (at most the bound) and whose ``invalid`` names its
    length and the bound, so that an agent counts it as an invalid answer (re-prompt, then
    the fallback) and neither the record, the cache nor the next prompt holds more than the
    excerpt. Tokens and cost stay those the server reported: the reply was paid for.

    The bound is ``max_chars`` when given (the table's ``max_reply_chars``), else
    :data:`CHARS_PER_TOKEN` times the call's ``max_tokens``, else
    :data:`DEFAULT_MAX_REPLY_CHARS`.
    """

    def __init__(self, inner: ChatModel, max_chars: int | None = None) -> None:
        super().__init__(inner)
        if max_chars is not None and not (
            isinstance(max_chars, int) and not isinstance(max_chars, bool) and max_chars > 0
        ):
            raise ValueError(
                f"max_reply_chars: expected a number of characters > 0 (or absent: "
                f"{CHARS_PER_TOKEN} per token of max_tokens), got {max_chars!r}"
            )
        self.max_chars = max_chars

    def bound(self, settings: Settings) -> int:
        """The longest reply a call with ``settings`` may get."""
        if self.max_chars is not None:
            return self.max_chars
        if settings.max_tokens is not None:
            return CHARS_PER_TOKEN * settings.max_tokens
        return DEFAULT_MAX_REPLY_CHARS

    async def complete(self, messages: Sequence[ChatMessage], **overrides: Any) -> Reply:
        reply = await self.inner.complete(messages, **overrides)
        bound = self.bound(self.settings.with_overrides(overrides))
        if len(reply.text) <= bound:
            return reply
        return dataclasses.replace(
            reply,
            text=reply.text[: min(EXCERPT_CHARS, bound)],
            invalid=(
                f"the reply is {len(reply.text)} characters long, over the bound of {bound} "
                "(max_reply_chars): answer briefly, in the format asked for"
            ),
        )

    def layer(self) -> dict[str, Any]:
        return {"layer": "ReplyLimit", "max_chars": self.max_chars}


class Retry(Wrapper):
    """Retry :class:`TransientProviderError` (429, 5xx, timeouts, connection errors, empty
    replies) up to ``max_retries`` times, then raise :class:`ProviderError` naming the attempts.

    The wait before retry ``n`` (1, 2, ...) is ``d = min(max_delay, base_delay * multiplier**(n-1))``
    drawn uniformly from ``[d/2, d]`` ("equal jitter", so that callers that failed together do
    not retry together), and at least the server's ``Retry-After`` (capped at ``max_delay``).
    The jitter comes from this wrapper's own Generator seeded by ``seed``.
    """

    def __init__(
        self,
        inner: ChatModel,
        max_retries: int = 5,
        *,
        base_delay: float = 1.0,
        max_delay: float = 30.0,
        multiplier: float = 2.0,
        seed: int = 0,
    ) -> None:
        super().__init__(inner)
        if not (isinstance(max_retries, int) and max_retries >= 0):
            raise ValueError(f"max_retries: expected an integer >= 0, got {max_retries!r}")
        if not base_delay >= 0 or not max_delay >= base_delay or not multiplier >= 1:
            raise ValueError(
                f"base_delay={base_delay!r}, max_delay={max_delay!r}, multiplier={multiplier!r}: "
                "need 0 <= base_delay <= max_delay and multiplier >= 1"
            )
        self.max_retries = max_retries
        self.base_delay = float(base_delay)
        self.max_delay = float(max_delay)
        self.multiplier = float(multiplier)
        self.seed = seed
        self._rng = np.random.default_rng(seed)

    def delay(self, retry: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (1-based)."""
        ceiling = min(self.max_delay, self.base_delay * self.multiplier ** (retry - 1))
        wait = ceiling / 2 + float(self._rng.random()) * ceiling / 2
        if retry_after is not None:
            wait = max(wait, min(float(retry_after), self.max_delay))
        return wait

    async def complete(self, messages: Sequence[ChatMessage], **overrides: Any) -> Reply:
        attempt = 1
        while True:
            try:
                reply = await self.inner.complete(messages, **overrides)
            except TransientProviderError as error:
                if attempt > self.max_retries:
                    raise ProviderError(
                        f"gave up after {attempt} attempts ({self.max_retries} retries); last error: {error}",
                        kind=error.kind,
                        model=error.model,
                        status=error.status,
                        attempts=attempt,
                        prompt_hash=error.prompt_hash,
                        request_hash=error.request_hash,
                    ) from error
                await asyncio.sleep(self.delay(attempt, error.retry_after))
                attempt += 1
                continue
            except ProviderError as error:
                error.attempts = attempt  # a permanent error after retries: count every request
                raise
            return (
                reply if reply.attempt == attempt else dataclasses.replace(reply, attempt=attempt)
            )

    def layer(self) -> dict[str, Any]:
        return {
            "layer": "Retry",
            "max_retries": self.max_retries,
            "base_delay": self.base_delay,
            "max_delay": self.max_delay,
            "multiplier": self.multiplier,
            "seed": self.seed,
        }


@dataclass
class _Slots:
    """The shared limit of one key in one event loop."""

    limit: int
    semaphore: asyncio.Semaphore
    in_flight: int = 0
    max_in_flight: int = 0


# One table per event loop: asyncio primitives belong to the loop that first waits on them, and
# the runner may play successive episodes in successive loops (asyncio.run per episode).
_SLOTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[Hashable, _Slots]] = (
    weakref.WeakKeyDictionary()
)


def shared_slots(key: Hashable, limit: int) -> _Slots:
    """The concurrency slots of ``key`` in the running event loop, created on first use."""
    loop = asyncio.get_running_loop()
    table = _SLOTS.setdefault(loop, {})
    slots = table.get(key)
    if slots is None:
        slots = table[key] = _Slots(limit, asyncio.Semaphore(limit))
    elif slots.limit != limit:
        raise ValueError(
            f"concurrency: {key!r} already has a limit of {slots.limit} requests in flight in this "
            f"event loop; a second limit of {limit} for the same model and api_base conflicts with it"
        )
    return slots


class ConcurrencyLimit(Wrapper):
    """At most ``limit`` requests in flight to one model, counted across every
    ``ConcurrencyLimit`` with the same ``key`` in the running event loop: all the agents and
    episodes of a run that use the model share it.

    ``key`` defaults to ``(settings.model, settings.api_base)``. Two limits that share a key
    must agree on ``limit`` (a conflict raises ValueError on the first call).
    """

    def __init__(self, inner: ChatModel, limit: int, *, key: Hashable | None = None) -> None:
        super().__init__(inner)
        if not (isinstance(limit, int) and not isinstance(limit, bool) and limit >= 1):
            raise ValueError(f"concurrency: expected an integer >= 1, got {limit!r}")
        self.limit = limit
        self.key = key if key is not None else (inner.settings.model, inner.settings.api_base)

    def slots(self) -> _Slots:
        """This key's shared slots in the running loop (``in_flight``, ``max_in_flight``)."""
        return shared_slots(self.key, self.limit)

    async def complete(self, messages: Sequence[ChatMessage], **overrides: Any) -> Reply:
        slots = self.slots()
        async with slots.semaphore:
            slots.in_flight += 1
            slots.max_in_flight = max(slots.max_in_flight, slots.in_flight)
            try:
                return await self.inner.complete(messages, **overrides)
            finally:
                slots.in_flight -= 1

    def layer(self) -> dict[str, Any]:
        return {"layer": "ConcurrencyLimit", "limit": self.limit}


class CallBudget(Wrapper):
    """Refuse calls once the budget is spent: ``max_calls`` requests passed through, or
    ``max_tokens`` prompt + completion tokens, or ``max_cost`` dollars (of replies whose price
    is known). Raises :class:`BudgetExceeded`, which is not retried.

    Requests already in flight when the budget runs out still complete, so tokens and cost can
    overshoot by what those requests use; ``max_calls`` is exact.
    """

    def __init__(
        self,
        inner: ChatModel,
        *,
        max_calls: int | None = None,
        max_tokens: int | None = None,
        max_cost: float | None = None,
    ) -> None:
        super().__init__(inner)
        for name, value in (
            ("max_calls", max_calls),
            ("max_tokens", max_tokens),
            ("max_cost", max_cost),
        ):
            if value is not None and not (
                isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0
            ):
                raise ValueError(f"budget.{name}: expected a number >= 0 or None, got {value!r}")
        if max_calls is None and max_tokens is None and max_cost is None:
            raise ValueError("budget: give at least one of max_calls, max_tokens, max_cost")
        self.max_calls = max_calls
        self.max_tokens = max_tokens
        self.max_cost = max_cost
        self.calls = 0
        self.tokens = 0
        self.cost = 0.0

    def _refusal(self) -> str | None:
        if self.max_calls is not None and self.calls >= self.max_calls:
            return f"{self.calls} requests made, the limit is max_calls={self.max_calls}"
        if self.max_tokens is not None and self.tokens >= self.max_tokens:
            return f"{self.tokens} tokens used, the limit is max_tokens={self.max_tokens}"
        if self.max_cost is not None and self.cost >= self.max_cost:
            return f"${self.cost:.6f} spent, the limit is max_cost={self.max_cost}"
        return None

    async def complete(self, messages: Sequence[ChatMessage], **overrides: Any) -> Reply:
        refusal = self._refusal()
        if refusal is not None:
            raise BudgetExceeded(f"{self.settings.model}: call budget exhausted: {refusal}")
        self.calls += 1  # counted before the await, so concurrent callers cannot overshoot it
        reply = await self.inner.complete(messages, **overrides)
        self.tokens += reply.prompt_tokens + reply.completion_tokens
        if reply.cost is not None:
            self.cost += reply.cost
        return reply

    def layer(self) -> dict[str, Any]:
        return {
            "layer": "CallBudget",
            "max_calls": self.max_calls,
            "max_tokens": self.max_tokens,
            "max_cost": self.max_cost,
        }


class Accounting(Wrapper):
    """Counts what passes through. Put it outermost to see cache hits.

    ``calls``: calls answered (cached or not); ``cache_hits``; ``requests``: provider requests
    (every attempt, failed ones included); ``failures``: calls that raised; ``prompt_tokens``,
    ``completion_tokens``, ``latency_s`` (summed request latencies), ``wall_s`` (summed time
    from call to reply, waits for slots and retries included) and ``cost``: of the replies that
    were not cached; ``unpriced``: fresh replies whose price litellm does not know (their cost is not in
    ``cost``).
    """

    FIELDS = (
        "calls",
        "cache_hits",
        "requests",
        "failures",
        "prompt_tokens",
        "completion_tokens",
        "latency_s",
        "wall_s",
        "cost",
        "unpriced",
    )

    def __init__(self, inner: ChatModel) -> None:
        super().__init__(inner)
        self.reset()

    def reset(self) -> None:
        self.calls = 0
        self.cache_hits = 0
        self.requests = 0
        self.failures = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.latency_s = 0.0
        self.wall_s = 0.0
        self.cost = 0.0
        self.unpriced = 0

    async def complete(self, messages: Sequence[ChatMessage], **overrides: Any) -> Reply:
        started = time.perf_counter()
        try:
            reply = await self.inner.complete(messages, **overrides)
        except ProviderError as error:
            self.failures += 1
            self.requests += error.attempts
            raise
        except Exception:
            self.failures += 1
            raise
        self.calls += 1
        if reply.cached:
            self.cache_hits += 1
            return reply
        self.requests += max(1, reply.attempt)
        self.prompt_tokens += reply.prompt_tokens
        self.completion_tokens += reply.completion_tokens
        self.latency_s += reply.latency_s
        self.wall_s += time.perf_counter() - started
        if reply.cost is None:
            self.unpriced += 1
        else:
            self.cost += reply.cost
        return reply

    def snapshot(self) -> dict[str, Any]:
        """The counters as a JSON-able dict."""
        data: dict[str, Any] = {name: getattr(self, name) for name in self.FIELDS}
        data["latency_s"] = round(self.latency_s, 6)
        data["wall_s"] = round(self.wall_s, 6)
        return data

    def layer(self) -> dict[str, Any]:
        return {"layer": "Accounting"}
