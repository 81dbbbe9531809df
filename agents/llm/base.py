"""What every LLM agent shares: its model, the answer loop, and what it counts and logs.

:meth:`LLMAgent.ask` sends a chat, parses the reply with a role's parser, and on an invalid
answer re-prompts with a short game-master message naming what was wrong, up to
``max_attempts`` times; then it returns the decision's fallback. Everything is counted
(``llm_calls``, ``invalid_answers``, ``fallbacks``) and every call is logged in ``events``, so
that both reach the episode record. A provider error that outlived the model's retries is
re-raised: the runner ends the episode as failed and it is retried when the run resumes.

Prompt templates are text files under ``agents/llm/prompts/<game>/`` read with
:func:`template`; they use ``string.Template`` (``$name``) placeholders.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, TypeVar

from socialsim.agent import Agent, RunContext
from socialsim.llm import AnswerParseError, ProviderError, build_model

T = TypeVar("T")

GAME_MASTER = "[GAME MASTER]"


@cache
def template(game: str, name: str) -> string.Template:
    """The prompt template ``agents/llm/prompts/<game>/<name>.txt``."""
    text = (
        resources.files("socialsim.agents.llm")
        .joinpath("prompts", game, f"{name}.txt")
        .read_text(encoding="utf-8")
    )
    return string.Template(text)


def render(game: str, name: str, **values: Any) -> str:
    return template(game, name).substitute(values).strip()


@dataclass
class Outcome:
    """The result of :meth:`LLMAgent.ask`: the parsed value, whether it is the fallback, and
    the chat as it should be kept (the successful reply appended)."""

    value: Any
    fallback: bool
    chat: list[dict[str, str]]
    attempts: int


class LLMAgent(Agent):
    """Base class of the LLM agents.

    Arguments:
        model: a model config table for :func:`socialsim.llm.build_model` (``model``,
            ``api_base``, ``temperature``, ...), or just a model name.
        max_attempts: answers tried per decision before the fallback.
        drop_failed_attempts: keep only the prompt and the valid reply in the history (the
            Decrypto paper's ``no_error_history``); failed attempts are still logged.
    """

    default_max_attempts = 3

    def __init__(
        self,
        model: str | Mapping[str, Any],
        max_attempts: int | None = None,
        drop_failed_attempts: bool = False,
    ):
        self.model_config = {"model": model} if isinstance(model, str) else dict(model)
        if "model" not in self.model_config:
            raise ValueError(
                f"model: a table with at least 'model' (e.g. 'openai/gpt-4o-mini'), got {model!r}"
            )
        attempts = self.default_max_attempts if max_attempts is None else max_attempts
        if not isinstance(attempts, int) or isinstance(attempts, bool) or attempts < 1:
            raise ValueError(f"max_attempts: must be an integer >= 1, got {max_attempts!r}")
        self.max_attempts = attempts
        self.drop_failed_attempts = drop_failed_attempts
        self.model = None

    def attach(self, run: RunContext) -> None:
        super().attach(run)
        self.model = build_model(self.model_config, run.directory)

    def reset(self, agent_id: str, seat: str, seed: int) -> None:
        super().reset(agent_id, seat, seed)
        if self.model is None:  # used outside a run: no run directory for the cache
            self.attach(RunContext())
        for name in ("llm_calls", "invalid_answers", "fallbacks"):
            self.counters[name] = 0

    async def ask(
        self,
        chat: Sequence[Mapping[str, str]],
        parse: Callable[[str], T],
        *,
        decision: str,
        correction: Callable[[str], str],
        fallback: Callable[[], T],
        **overrides: Any,
    ) -> Outcome:
        """Ask until ``parse`` accepts a reply (it raises ``AnswerParseError`` otherwise).

        ``correction(reason)`` is the game master's re-prompt; ``fallback()`` gives the logged
        fallback value after ``max_attempts`` invalid answers.
        """
        base = [dict(m) for m in chat]
        attempt_chat = list(base)
        for attempt in range(1, self.max_attempts + 1):
            call_overrides = dict(overrides)
            if attempt > 1 and self.drop_failed_attempts:
                # The same prompt again: vary the seed, or a cached or greedy model repeats itself.
                call_overrides.setdefault("seed", self.seed % 2**31 + attempt)
            try:
                reply = await self.model.complete(attempt_chat, **call_overrides)
            except ProviderError as error:
                self.events.append(
                    {**error.event(), "decision": decision, "answer_attempt": attempt}
                )
                raise
            self.count("llm_calls")
            event = {**reply.event(), "decision": decision, "answer_attempt": attempt}
            try:
                value = parse(reply.text)
            except AnswerParseError as error:
                self.count("invalid_answers")
                event["invalid"] = str(error)
                self.events.append(event)
                if not self.drop_failed_attempts:
                    attempt_chat = [
                        *attempt_chat,
                        {"role": "assistant", "content": reply.text},
                        {"role": "user", "content": f"{GAME_MASTER} {correction(str(error))}"},
                    ]
                continue
            self.events.append(event)
            kept = attempt_chat if not self.drop_failed_attempts else base
            return Outcome(
                value, False, [*kept, {"role": "assistant", "content": reply.text}], attempt
            )
        self.count("fallbacks")
        value = fallback()
        self.events.append({"type": "fallback", "decision": decision, "value": value})
        note = f"{GAME_MASTER} No valid answer after {self.max_attempts} attempts; the game used a fallback."
        return Outcome(value, True, [*base, {"role": "user", "content": note}], self.max_attempts)
