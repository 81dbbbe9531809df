"""An in-process model that answers from a function: for unit tests of prompts, parsing and
agents that need no HTTP. (End-to-end tests use the real HTTP test server through litellm.)"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from socialsim.llm.model import ChatMessage, ChatModel, Reply, Settings, check_messages, prompt_hash

ScriptedPolicy = Callable[[list[dict[str, Any]], Settings], str]


class ScriptedModel(ChatModel):
    """``policy(messages, settings) -> text``; tokens are counted as words (``str.split``).

    ``calls`` counts the calls; ``received`` keeps the messages of each call.
    """

    def __init__(self, policy: ScriptedPolicy, model: str = "scripted", **settings: Any) -> None:
        self.policy = policy
        self._settings = Settings(model=model, **settings)
        self.calls = 0
        self.received: list[list[dict[str, Any]]] = []

    @property
    def settings(self) -> Settings:
        return self._settings

    async def complete(self, messages: Sequence[ChatMessage], **overrides: Any) -> Reply:
        plain = check_messages(messages)
        settings = self._settings.with_overrides(overrides)
        self.calls += 1
        self.received.append(list(plain))
        text = str(self.policy(plain, settings))
        return Reply(
            text=text,
            model=settings.model,
            prompt_tokens=sum(len(str(m["content"]).split()) for m in plain),
            completion_tokens=len(text.split()),
            cost=None,
            prompt_hash=prompt_hash(plain),
            request_hash=settings.request_hash(plain),
            finish_reason="stop",
        )
