"""The chat a model is asked: checked messages, and their canonical encoding when it is needed.

A :class:`Chat` is a tuple of plain message dicts, made once per request (or grown message by
message, :meth:`Chat.then`). Its canonical JSON and prompt hash are computed the first time a
layer asks for them and kept, so the layers it passes through (the cache's hit, the provider's
prompt hash) share one encoding.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from functools import cached_property
from typing import Any

from socialsim.plain_json import canonical_json

#: A chat message as the OpenAI API takes it: ``{"role": "system"|"user"|"assistant", "content": str}``.
ChatMessage = Mapping[str, Any]


def digest(text: str, length: int = 16) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:length]


class Chat(tuple):
    """Checked messages (plain dicts), made by :func:`check_messages`. Immutable, so its
    :attr:`json` and :attr:`prompt_hash`, computed on first use, always describe it."""

    def remember(self, key: object, make: Callable[[], str]) -> str:
        """``make()``, or what it gave the last time for an equal ``key``: one entry, as the
        layers of one call (the cache, then the provider) ask in turn with equal settings."""
        last = self.__dict__.get("_last")
        if last is None or last[0] != key:
            last = self.__dict__["_last"] = (key, make())
        return last[1]

    @cached_property
    def json(self) -> str:
        """The canonical JSON of the messages."""
        return canonical_json(self, allow_nan=False)

    @cached_property
    def prompt_hash(self) -> str:
        """A short hash of :attr:`json`."""
        return digest(self.json)

    def then(self, messages: Sequence[ChatMessage]) -> Chat:
        """This chat followed by ``messages`` (checked). ``Chat(())`` is the empty chat to
        start from (no model takes it)."""
        more = check_messages(messages)
        return Chat((*self, *more)) if self else more


def check_messages(messages: Sequence[ChatMessage]) -> Chat:
    """The messages as a :class:`Chat` of plain dicts, or a ValueError naming the first bad
    one; a Chat is returned as it is (it was checked when made)."""
    if type(messages) is Chat and messages:
        return messages
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence) or not messages:
        raise ValueError(
            f"messages: expected a non-empty list of {{'role', 'content'}} dicts, got {messages!r:.80}"
        )
    plain = []
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping) or "role" not in message or "content" not in message:
            raise ValueError(
                f"messages[{i}]: expected a dict with 'role' and 'content', got {message!r:.80}"
            )
        if message["role"] not in ("system", "user", "assistant", "developer", "tool"):
            raise ValueError(
                f"messages[{i}].role: {message['role']!r} is not one of system, user, assistant, developer, tool"
            )
        plain.append(dict(message))
    return Chat(plain)


def prompt_hash(messages: Sequence[ChatMessage]) -> str:
    """A short hash of the messages alone (the prompt)."""
    chat = messages if type(messages) is Chat else Chat(dict(m) for m in messages)
    return chat.prompt_hash
