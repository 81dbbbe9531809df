"""What every LLM agent shares: its model, the answer loop, and what it counts and logs.

:meth:`LLMAgent.ask` sends a chat, parses the reply with a role's parser, and on an invalid
answer re-prompts with a short game-master message naming what was wrong, up to
``max_attempts`` times; then it returns the decision's fallback. Everything is counted
(``llm_calls``, ``invalid_answers``, ``fallbacks``) and every call is logged in ``events``, so
that both reach the episode record. A provider error that outlived the model's retries is
re-raised: the runner ends the episode as failed and it is retried when the run resumes.

Every chat goes to the model through :func:`conversation`, the one form every chat template
takes (Gemma's and Mistral's refuse anything else): a system message (or, with
``system_as_user``, its text at the head of the first user message), then user and assistant
turns strictly alternating. An agent keeps its chat in its own form (a system message, then
its turns); a game master's note after a fallback and the next prompt are folded into one user
turn when the chat is sent.

Prompt templates are text files under ``agents/llm/prompts/<game>/`` read with
:func:`template`; they use ``string.Template`` (``$name``) placeholders.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, TypeVar

from socialsim.agent import Agent, RunContext
from socialsim.llm import AnswerParseError, ProviderError, build_model
from socialsim.llm.chat import Chat, check_messages, digest

T = TypeVar("T")

GAME_MASTER = "[GAME MASTER]"
#: the reason logged for a chat too long for the model's window
OVERFLOW = "the chat exceeds the model's context window"
#: tokens per character before the server has said (English BPE is about 1/4: a margin)
INITIAL_TOKENS_PER_CHAR = 1 / 3
#: tokens a chat template adds per message (role markers)
MESSAGE_OVERHEAD = 8
#: what the game master tells a seat whose decision ended with the fallback
FALLBACK_NOTE = f"{GAME_MASTER} No valid answer; the game used a fallback."


#: an angle-bracketed placeholder in a prompt's answer format, ``<hint 1>``
PLACEHOLDER = re.compile(r"<([^<>$]+)>")
#: what is stripped from both ends of a text before it is compared with a placeholder
WRAPPING = " \t\n\r\"'`<>[](){}.,;:!?*_"


def folded(text: str) -> str:
    """``text`` as it is compared with a placeholder: case-folded, without the quotes,
    brackets and punctuation around it, its spaces collapsed (``" <Hint 3>."`` is ``hint 3``)."""
    return " ".join(text.casefold().strip(WRAPPING).split())


def placeholders(*texts: str) -> frozenset[str]:
    """The placeholders (``<...>``) shown in ``texts``, :func:`folded`."""
    return frozenset(folded(found) for text in texts for found in PLACEHOLDER.findall(text))


#: the brackets a whole placeholder comes in (``<your answer>``, ``[your answer]``)
BRACKETS = ("<>", "[]", "{}")


def is_placeholder(text: str, shown: frozenset[str]) -> bool:
    """Whether ``text`` repeats a placeholder of ``shown``, with or without its brackets (a
    model constrained to a schema without ``<`` and ``>`` writes ``hint 3``), or is one itself
    (a whole text in brackets: ``[Your answer]``)."""
    stripped = text.strip()
    return folded(text) in shown or any(
        len(stripped) > 1 and stripped[0] == pair[0] and stripped[-1] == pair[1]
        for pair in BRACKETS
    )


def conversation(messages: Sequence[Mapping[str, str]], system_as_user: bool = False) -> Chat:
    """``messages`` as every chat template takes them: the system messages' text as one system
    message (or, ``system_as_user``, at the head of the first user message), then user and
    assistant turns strictly alternating from a user turn; consecutive messages of one role are
    folded into one, their texts a blank line apart. A chat already in that form is returned
    as it is (a :class:`Chat`). ``ValueError`` for a chat with no user turn or
    whose first turn is the assistant's."""
    roles = [m["role"] for m in messages]
    if not roles:
        return check_messages(messages)  # the error naming the empty chat
    if (
        not system_as_user
        and roles.count("system") == (roles[0] == "system")
        and all(a != b for a, b in zip(roles, roles[1:], strict=False))
        and len(roles) > (roles[0] == "system")
        and roles[roles[0] == "system"] == "user"
    ):
        return check_messages(messages)
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
    turns: list[dict[str, str]] = []
    for message in messages:
        if message["role"] == "system":
            continue
        if turns and turns[-1]["role"] == message["role"]:
            turns[-1] = {**turns[-1], "content": f"{turns[-1]['content']}\n\n{message['content']}"}
        else:
            turns.append({"role": message["role"], "content": message["content"]})
    if not turns or turns[0]["role"] != "user":
        raise ValueError(
            f"messages: a chat must have a user turn before any reply, got roles {roles}"
        )
    if not system:
        return check_messages(turns)
    if system_as_user:
        turns[0] = {"role": "user", "content": f"{system}\n\n{turns[0]['content']}"}
        return check_messages(turns)
    return check_messages([{"role": "system", "content": system}, *turns])


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
    chat: Chat
    attempts: int


class LLMAgent(Agent):
    """Base class of the LLM agents.

    Arguments:
        model: a model config table for :func:`socialsim.llm.build_model` (``model``,
            ``api_base``, ``temperature``, ...), or just a model name; the class's
            ``generation_defaults`` (``temperature``, ``max_tokens``) fill what it leaves out.
        max_attempts: answers tried per decision before the fallback.
        drop_failed_attempts: keep only the prompt and the valid reply in the history (the
            Decrypto paper's ``no_error_history``); failed attempts are still logged.
        retry_temperature: the temperature of the re-prompts of a decision asked at
            temperature 0 (greedy decoding repeats itself); 0 or ``None`` keeps 0. Either way, at
            temperature 0 a reply that repeats an earlier one of the same decision ends it
            with the fallback (the next would repeat it again).
        system_as_user: send the system prompt at the head of the first user message, for
            models and chat templates without a system role (o1/R1 style, or llama-cpp-python's
            ``gemma`` format, which drops a system message without a word).

    Structured output (the subclasses' ``structured_output`` argument): ``True`` constrains
    every answer to its decision's JSON schema, ``False`` never, ``"auto"`` (the default) when
    the model is served by a self-hosted server that takes a schema (llama-cpp-python,
    llama.cpp, vLLM: small models need it) or its table names a ``structured_format``, not
    through a provider by name (:meth:`~socialsim.llm.ChatModel.constrains_by_default`),
    resolved once per episode (:meth:`constrained`).

    Each request carries a seed drawn from the episode's seed, the decision's number in the
    episode and the attempt (:meth:`call_seed`): part of the cache key, so episodes sample
    independently and a rerun replays exactly.

    Context safety: before each request the chat's size is estimated (characters times the
    tokens per character the server's last ``prompt_tokens`` showed, 1/3 before any) against
    the model's window (:meth:`~socialsim.llm.ChatModel.context_window`) less ``max_tokens``;
    failed attempts are trimmed (all but the last, then all) to fit, and a prompt that cannot
    fit, or a ``context_overflow`` error from the server, is an invalid answer: trimmed and
    asked again, or the fallback. Never a failed episode.
    """

    default_max_attempts = 3
    #: filled into the model table where it says nothing
    generation_defaults: Mapping[str, Any] = {}

    def __init__(
        self,
        model: str | Mapping[str, Any],
        max_attempts: int | None = None,
        drop_failed_attempts: bool = False,
        retry_temperature: float | None = 0.7,
        structured_output: bool | str = "auto",
        system_as_user: bool = False,
    ):
        table = {"model": model} if isinstance(model, str) else dict(model)
        if "model" not in table:
            raise ValueError(
                f"model: a table with at least 'model' (e.g. 'openai/gpt-4o-mini'), got {model!r}"
            )
        self.model_config = {**self.generation_defaults, **table}
        attempts = self.default_max_attempts if max_attempts is None else max_attempts
        if not isinstance(attempts, int) or isinstance(attempts, bool) or attempts < 1:
            raise ValueError(f"max_attempts: must be an integer >= 1, got {max_attempts!r}")
        if retry_temperature is not None and not (
            isinstance(retry_temperature, (int, float))
            and not isinstance(retry_temperature, bool)
            and retry_temperature >= 0
        ):
            raise ValueError(
                f"retry_temperature: must be a number >= 0 (0: stay greedy), got {retry_temperature!r}"
            )
        if not (isinstance(structured_output, bool) or structured_output == "auto"):
            raise ValueError(
                f"structured_output: must be true, false or 'auto', got {structured_output!r}"
            )
        if not isinstance(system_as_user, bool):
            raise ValueError(f"system_as_user: must be true or false, got {system_as_user!r}")
        self.system_as_user = system_as_user
        self.structured_output = structured_output
        self._constrained: bool | None = None
        self.max_attempts = attempts
        self.drop_failed_attempts = drop_failed_attempts
        self.retry_temperature = retry_temperature
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
        self.decisions_asked = 0
        self._constrained = None
        self.tokens_per_char = INITIAL_TOKENS_PER_CHAR

    async def constrained(self) -> bool:
        """Whether this episode's answers are constrained to their schemas (see the class)."""
        if self._constrained is None:
            setting = self.structured_output
            self._constrained = (
                await self.model.constrains_by_default() if setting == "auto" else setting
            )
        return self._constrained

    def call_seed(self, decision: int, attempt: int) -> int:
        """The seed of a request: the table's ``seed``, the episode's, the decision's number
        and the attempt, mixed (31 bits suit every server)."""
        table_seed = self.model_config.get("seed") or 0
        return int(digest(f"{table_seed}:{self.seed}:{decision}:{attempt}", 8), 16) % 2**31

    def estimate_tokens(self, chat: Sequence[Mapping[str, str]]) -> int:
        chars = sum(len(str(m.get("content", ""))) for m in chat)
        return int(chars * self.tokens_per_char) + MESSAGE_OVERHEAD * len(chat)

    def fit(
        self,
        base: Sequence[Mapping[str, str]],
        chat: Sequence[Mapping[str, str]],
        budget: int | None,
    ) -> Sequence[Mapping[str, str]] | None:
        """``chat``, or it with its failed attempts trimmed, within ``budget`` tokens; None
        when even ``base`` (the prompt alone) does not fit."""
        if budget is None:
            return chat
        for candidate in (chat, [*base, *chat[len(base) :][-2:]], base):
            if len(candidate) <= len(chat) and self.estimate_tokens(candidate) <= budget:
                return candidate
        return None

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
        fallback value after ``max_attempts`` invalid answers (or a repeated reply at
        temperature 0, or a prompt too long for the window).
        """
        # checked once: the first attempt's chat goes to the model as it is
        base = check_messages(chat)
        attempt_chat: Sequence[Mapping[str, str]] = base
        self.decisions_asked += 1
        number = self.decisions_asked
        settings = self.model.settings
        temperature = overrides.get("temperature", settings.temperature)
        max_tokens = overrides.get("max_tokens", settings.max_tokens) or 0
        window = await self.model.context_window()
        replies: set[str] = set()
        for attempt in range(1, self.max_attempts + 1):
            call = {"seed": self.call_seed(number, attempt), **overrides}
            greedy = temperature == 0
            if attempt > 1 and greedy and self.retry_temperature:
                call["temperature"] = self.retry_temperature
                greedy = False
            fitted = self.fit(base, attempt_chat, None if window is None else window - max_tokens)
            marks = {"decision": decision, "answer_attempt": attempt}
            if fitted is None:
                self.count("invalid_answers")
                self.events.append(
                    {"type": "context_overflow", **marks, "window": window, "invalid": OVERFLOW}
                )
                break
            attempt_chat = fitted
            try:
                reply = await self.model.complete(
                    conversation(attempt_chat, self.system_as_user), **call
                )
            except ProviderError as error:
                event = {**error.event(), **marks}
                if error.kind != "context_overflow":
                    self.events.append(event)
                    raise
                self.count("invalid_answers")
                self.events.append({**event, "invalid": OVERFLOW})
                if len(attempt_chat) == len(base):
                    break  # nothing left to trim
                attempt_chat = base
                window = await self.model.context_window()  # the error may have stated it
                continue
            self.count("llm_calls")
            if reply.prompt_tokens > 0 and not reply.cached:
                chars = sum(len(str(m.get("content", ""))) for m in attempt_chat)
                self.tokens_per_char = max(reply.prompt_tokens / max(chars, 1), 0.05) * 1.1
            event = {**reply.event(), **marks}
            try:
                if reply.invalid is not None:  # the model layer's verdict (an oversized reply)
                    raise AnswerParseError(reply.invalid)
                value = parse(reply.text)
            except AnswerParseError as error:
                self.count("invalid_answers")
                event["invalid"] = str(error)
                self.events.append(event)
                if greedy and reply.text in replies:
                    break  # greedy decoding gave the same reply again: it would again
                replies.add(reply.text)
                if not self.drop_failed_attempts:
                    attempt_chat = check_messages(attempt_chat).then(
                        [
                            {"role": "assistant", "content": reply.text},
                            {"role": "user", "content": f"{GAME_MASTER} {correction(str(error))}"},
                        ]
                    )
                continue
            self.events.append(event)
            kept = attempt_chat if not self.drop_failed_attempts else base
            answered = check_messages(kept).then([{"role": "assistant", "content": reply.text}])
            return Outcome(value, False, answered, attempt)
        self.count("fallbacks")
        value = fallback()
        self.events.append({"type": "fallback", "decision": decision, "value": value})
        # the note joins the unanswered prompt's user turn (and the next prompt, once sent)
        return Outcome(
            value, True, base.then([{"role": "user", "content": FALLBACK_NOTE}]), attempt
        )
