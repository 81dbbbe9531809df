"""The chat a model is asked: checked messages and their one canonical encoding.

A :class:`Chat` is made once per request (or grown message by message, :meth:`Chat.then`) and
carries its canonical JSON and prompt hash, so the layers it passes through (the cache's key,
the hit's prompt hash, the provider's hashes and wire body) read that text instead of encoding
the chat again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from socialsim.plain_json import canonical_json

#: A chat message as the OpenAI API takes it: ``{"role": "system"|"user"|"assistant", "content": str}``.
ChatMessage = Mapping[str, Any]


def digest(text: str, length: int = 16) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:length]


class Chat(tuple):
    """Checked messages (plain dicts) with their canonical JSON, encoded once: the prompt hash,
    the cache key and the provider's request hash all come from that one text, so a long chat is
    not encoded again by each layer it passes through. Made by :func:`check_messages`; a tuple,
    so that the text cannot fall out of step with the messages."""

    json: str
    prompt_hash: str

    def __new__(cls, messages: Sequence[dict[str, Any]]) -> Chat:
        chat = super().__new__(cls, messages)
        chat.json = canonical_json(chat, allow_nan=False)
        chat.prompt_hash = digest(chat.json)
        return chat

    def then(self, messages: Sequence[ChatMessage]) -> Chat:
        """This chat followed by ``messages`` (checked): only they are encoded, and spliced
        onto this chat's text, so a conversation kept as a Chat is encoded once as it grows.
        ``Chat(())`` is the empty chat to start from (no model takes it)."""
        more = check_messages(messages)
        if not self:
            return more
        chat = tuple.__new__(Chat, (*self, *more))
        chat.json = f"{self.json[:-1]},{more.json[1:]}"
        chat.prompt_hash = digest(chat.json)
        return chat


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


def chat_json(messages: Sequence[ChatMessage]) -> str:
    """The canonical JSON of the messages: a :class:`Chat`'s own, else encoded now."""
    if type(messages) is Chat:
        return messages.json
    return canonical_json([dict(m) for m in messages], allow_nan=False)


def prompt_hash(messages: Sequence[ChatMessage]) -> str:
    """A short hash of the messages alone (the prompt)."""
    if type(messages) is Chat:
        return messages.prompt_hash
    return digest(chat_json(messages))
