"""The answers of the gossip games' LLM agent: the JSON each decision asks for, how a reply is
read, and the action the env receives.

| decision | JSON answer | action passed to the env | fallback |
|---|---|---|---|
| `donate` | `{"justification", "donor_action": "cooperate" or "defect"}` | `{"action": "cooperate", "justification"}` | defect |
| `play` | `{"justification", "player_action": "C" or "D"}` | `{"action": "C", ...}` | D |
| `invest` | `{"justification", "investor_action": number in [0, own resources]}` | `{"amount": 2.5, ...}` | 0 |
| `return` | `{"justification", "responder_action": number in [0, multiplier x I]}` | `{"amount": ..., ...}` | 0 |
| `sell` | `{"justification", "seller_action": "H" or "L"}` | `{"action": "H", ...}` | L |
| `buy` | `{"justification", "buyer_action": "c", "s" or "none"}` | `{"action": "c", ...}` | none |
| `gossip` | `{"justification", "tone": one of the five, "gossip": under 150 words}` | `{"tone": "praising", "message"}` | neutral, empty message |

The choices and the fallbacks are the protocol's (``Game.move_choices``, ``Game.fallbacks``);
the named choices are listed with the cooperative one first. Choices are matched ignoring case
and surrounding spaces (``" Cooperate"`` is cooperate), but nothing else is guessed:
``"Cooperate!"``, an unknown tone, an amount out of range, a message of ``max_words`` words or
more, an empty gossip message (the fallback's: a gossip of the model's own says something), a
justification or message that repeats the form's placeholder with or without its brackets
(``"<your reasoning, in a few sentences>"`` or ``your reasoning, in a few sentences``), or a
reply without a JSON object is an :class:`~socialsim.llm.AnswerParseError`. With ``structured_output`` the answer is constrained to
:func:`answer_schema` (enums of the choices and tones, length limits).
"""

from __future__ import annotations

import math
from typing import Any

from socialsim.agents.llm.base import is_placeholder, placeholders
from socialsim.agents.llm.gossip_prompts import amount, fragment
from socialsim.envs.gossip.notebook import Meeting
from socialsim.envs.gossip.protocol import GOSSIP, TONES, Game, trust_received

from socialsim.llm import AnswerParseError, extract_json, require_fields

#: decision -> the JSON field of the move (the reference's names)
MOVE_FIELDS = {
    "donate": "donor_action",
    "play": "player_action",
    "invest": "investor_action",
    "return": "responder_action",
    "sell": "seller_action",
    "buy": "buyer_action",
}
REFLECT_WORDS = 120  # the reflection asks for at most this; twice as long is an invalid answer
JUSTIFICATION_CHARS = 400  # the longest justification a constrained answer may hold


def choices(game: Game, decision: str) -> tuple[str, ...]:
    """The named choices of a move, the cooperative one first; empty for an amount."""
    named = game.move_choices(decision)
    if not named:
        return ()
    first = game.cooperative[decision][0]
    return (first, *(c for c in named if c != first))


def limit(decision: str, meeting: Meeting, multiplier: float) -> float:
    """The most an investor or responder may send now."""
    if decision == "invest":
        return max(meeting.own, 0.0)
    return trust_received(meeting.invested, multiplier)


def answer_form(game: Game, decision: str, most: float, max_words: int) -> str:
    """The JSON the prompt asks for (``most``: the largest amount, for an amount decision)."""
    if decision == GOSSIP:
        return fragment("form.gossip", max_words=max_words)
    options = choices(game, decision)
    if not options:
        shown = f"<a number between 0 and {amount(most)}>"
    else:
        quoted_options = [f'"{o}"' for o in options]
        shown = (
            " or ".join(quoted_options)
            if len(options) == 2
            else ", ".join(quoted_options[:-1]) + " or " + quoted_options[-1]
        )
    return fragment("form.move", field=MOVE_FIELDS[decision], options=shown)


def answer_schema(game: Game, decision: str, most: float, max_words: int) -> dict[str, Any]:
    """The exact JSON schema of the answer (the ``schema`` override of a constrained call): a
    short justification, then the move's choices as an enum (or an amount from 0 to ``most``),
    or a gossip's five tones and a message short enough for ``max_words``."""
    # no angle brackets: a small model copies the form's "<your reasoning...>" even when constrained
    properties: dict[str, Any] = {"justification": _own_words(1, JUSTIFICATION_CHARS)}
    if decision == GOSSIP:
        properties["tone"] = {"type": "string", "enum": list(TONES)}
        # about 6 characters a word: a message this long has fewer than max_words words
        properties["gossip"] = _own_words(1, 6 * (max_words - 1))
    else:
        options = choices(game, decision)
        properties[MOVE_FIELDS[decision]] = (
            {"type": "string", "enum": list(options)}
            if options
            else {"type": "number", "minimum": 0, "maximum": most}
        )
    return {
        "name": f"{decision}_answer",
        "schema": {
            "type": "object",
            "properties": properties,
            "required": list(properties),
            "additionalProperties": False,
        },
    }


def _own_words(low: int, high: int) -> dict[str, Any]:
    return {
        "type": "string",
        "minLength": low,
        "maxLength": high,
        "pattern": f"^[^<>]{{{low},{high}}}$",
    }


def _check_own_words(answer: dict[str, Any], form: str, *names: str) -> None:
    """A field repeating a placeholder of the form (``"<your reasoning, ...>"``, with or
    without its brackets) is no answer."""
    shown = placeholders(form)
    for name in names:
        text = answer[name].strip()
        if is_placeholder(text, shown):
            raise AnswerParseError(
                f'the field "{name}" repeats the placeholder {text!r}: write your own words'
            )


def parse_answer(
    game: Game, decision: str, text: str, most: float, max_words: int
) -> tuple[Any, str]:
    """``(choice, justification)`` of a reply, or :class:`AnswerParseError`. A gossip's choice
    is ``(tone, message)``; an amount is at most ``most``."""
    answer = extract_json(text)
    form = answer_form(game, decision, most, max_words)
    if decision == GOSSIP:
        answer = require_fields(answer, {"justification": str, "tone": str, "gossip": str})
        _check_own_words(answer, form, "justification", "gossip")
        if not answer["gossip"].strip():
            raise AnswerParseError(
                'the field "gossip" is empty: write your public message about the other agent'
            )
        tone = answer["tone"].strip().lower()
        if tone not in TONES:
            allowed = ", ".join(f'"{t}"' for t in TONES)
            raise AnswerParseError(
                f'the field "tone" must be one of {allowed}, not "{answer["tone"]}"'
            )
        words = len(answer["gossip"].split())
        if words >= max_words:
            raise AnswerParseError(
                f'the field "gossip" has {words} words; it must have fewer than {max_words}'
            )
        return (tone, answer["gossip"].strip()), answer["justification"]
    field_name = MOVE_FIELDS[decision]
    options = choices(game, decision)
    if not options:
        answer = require_fields(answer, {"justification": str, field_name: (int, float, str)})
        _check_own_words(answer, form, "justification")
        value = answer[field_name]
        if isinstance(value, str):
            try:
                value = float(value.strip())
            except ValueError:
                raise AnswerParseError(
                    f'the field "{field_name}" must be a number, not "{answer[field_name]}"'
                ) from None
        if not math.isfinite(value) or not 0.0 <= value <= most + 1e-9:
            raise AnswerParseError(
                f'the field "{field_name}" must be a number between 0 and {amount(most)}, '
                f"not {value:g}"
            )
        return min(float(value), most), answer["justification"]
    answer = require_fields(answer, {"justification": str, field_name: str})
    _check_own_words(answer, form, "justification")
    by_lower = {o.lower(): o for o in options}
    choice = by_lower.get(answer[field_name].strip().lower())
    if choice is None:
        allowed = " or ".join(f'"{o}"' for o in options)
        raise AnswerParseError(
            f'the field "{field_name}" must be {allowed}, not "{answer[field_name]}"'
        )
    return choice, answer["justification"]


def parse_reflection(text: str) -> str:
    """The summary of a reflection reply, or :class:`AnswerParseError`."""
    words = len(text.split())
    if words == 0:
        raise AnswerParseError("the reply is empty")
    if words > 2 * REFLECT_WORDS:
        raise AnswerParseError(
            f"the summary has {words} words; it must have at most {REFLECT_WORDS}"
        )
    return text.strip()


def fallback(game: Game, decision: str) -> Any:
    """The protocol's fallback of ``decision`` as a choice (a gossip's as ``(tone, "")``)."""
    choice = game.fallbacks[decision]
    if decision == GOSSIP:
        tone, message = choice
        return TONES[tone], message or ""
    return choice


def to_action(decision: str, choice: Any, justification: str) -> dict[str, Any]:
    """The env's language-form action dict."""
    if decision == GOSSIP:
        tone, message = choice
        return {"tone": tone, "message": message}
    if isinstance(choice, str):
        return {"action": choice, "justification": justification}
    return {"amount": float(choice), "justification": justification}
