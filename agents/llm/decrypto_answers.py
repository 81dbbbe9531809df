"""The answers of the Decrypto LLM agents: the formats the prompts show, the exact schemas of
constrained answers, how a reply is read, and the fallbacks.

==================  ==========================================================================
Decision            Answer (free: after ``ANSWER:``; constrained: the whole reply, with a
                    ``"reasoning"`` field first)
``hints``           ``{"hints": [h1, h2, h3]}``, checked by
                    :func:`~socialsim.envs.decrypto.core.validate_hints` with the game's hint
                    rules; fallback: the game's blank hint (``no_hint``) three times
``guess``           ``{"guess": "X-Y-Z"}``, three different digits 1-4; fallback: the last code
                    played (``1-2-3`` on turn 1)
keyword questions   ``{"keywords": [w1, w2, w3, w4]}`` (``"unknown"`` for a number with no
                    guess); fallback: ``None`` (unanswered)
==================  ==========================================================================

Valid means the model gave a legal move of its own. So these are invalid answers, never moves:

* a placeholder the prompts show, in any field (the reasoning too), recognised by its text with
  or without its angle brackets (a schema without ``<`` and ``>`` makes a constrained model
  write ``hint 3`` for ``<hint 3>``), quotes, case and trailing punctuation aside;
* the fallback hint (``no_hint``, or the blank this game's keywords leave, see
  :func:`placeholder_hints`) written by the model: it shows in the history wherever a fallback
  was played, and copying it is not a hint.

No prompt shows a legal move (a code, a keyword, a plausible hint): the examples are written
with placeholders (``<keyword 1>``, ``<hint a>``, ``X-Y-Z``), so no answer can be copied into a
score.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from importlib import resources
from typing import Any

from socialsim.agents.llm.base import folded, is_placeholder, placeholders, render
from socialsim.envs.decrypto.core import validate_hints
from socialsim.envs.decrypto.protocol import (
    CODES,
    FALLBACK_HINT,
    GAME,
    GUESS,
    HINTS,
    MAX_HINT_CHARS,
    MAX_HINT_WORDS,
    REFERENCE_HINTS,
    parse_code,
    render_code,
)

from socialsim.llm import AnswerParseError, extract_answer, extract_json

KEYWORDS = "keywords"
#: The moves as the prompts show them: placeholders, never a legal move.
MOVES = {
    HINTS: '"hints": ["<hint 1>", "<hint 2>", "<hint 3>"]',
    GUESS: '"guess": "X-Y-Z"',
    KEYWORDS: '"keywords": ["<word 1>", "<word 2>", "<word 3>", "<word 4>"]',
}
#: The reasoning field of a constrained answer, as the prompts show it.
REASONING = '"reasoning": "<your reasoning, in a sentence or two>"'

#: Blank hints for the fallback: the first that the game's keywords allow is used.
PLACEHOLDER_HINTS = (FALLBACK_HINT, "no hint", "pass", "blank")

#: The longest reasoning a constrained answer may hold (characters), and a keyword guess.
REASONING_CHARS = 200
KEYWORD_CHARS = 40


def answer_format(kind: str, structured: bool) -> str:
    """The answer ``kind`` (``hints``, ``guess``, ``keywords``) as the prompts show it: after
    ``ANSWER:`` when the reply is free text, a bare JSON object with its reasoning first when
    it is constrained to the schema."""
    if structured:
        return f"{{{REASONING}, {MOVES[kind]}}}"
    return f"ANSWER: {{{MOVES[kind]}}}"


def answer_instruction(kind: str, structured: bool) -> str:
    """How to answer, matching the answer format in force: reason then ``ANSWER:`` when the
    reply is free, the JSON object alone (its reasoning inside) when it is constrained."""
    name = "answer_json" if structured else "answer_free"
    return render(GAME, name, format=answer_format(kind, structured))


def answer_rule(structured: bool) -> str:
    """The system prompt's sentence on how to answer, matching the format in force."""
    return render(GAME, "rule_json" if structured else "rule_free")


@cache
def shown_placeholders() -> frozenset[str]:
    """Every placeholder the Decrypto prompts show (the template files and the formats),
    :func:`~socialsim.agents.llm.base.folded`."""
    folder = resources.files("socialsim.agents.llm").joinpath("prompts", GAME)
    texts = [f.read_text(encoding="utf-8") for f in folder.iterdir() if f.name.endswith(".txt")]
    # the guess's placeholder code too (it is no code, so only a reasoning can repeat it)
    return placeholders(*texts, REASONING, *MOVES.values()) | {"x-y-z"}


def answer_schema(
    kind: str, *, max_words: int = MAX_HINT_WORDS, max_chars: int = MAX_HINT_CHARS
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
                # no angle brackets, as the hints: a small model copies "<your reasoning...>"
                "reasoning": {
                    "type": "string",
                    "maxLength": REASONING_CHARS,
                    "pattern": f"^[^<>]{{0,{REASONING_CHARS}}}$",
                },
                **answer,
            },
            "required": ["reasoning", *answer],
            "additionalProperties": False,
        },
    }


# -- reading answers --------------------------------------------------------------------------


def read_answer(text: str, structured: bool) -> dict[str, Any]:
    """The answer object: the reply's JSON when constrained, else the JSON after ``ANSWER:``;
    a reasoning field that repeats its placeholder is an invalid answer."""
    answer = extract_json(text) if structured else extract_answer(text)
    reasoning = answer.get("reasoning")
    if isinstance(reasoning, str) and is_placeholder(reasoning, shown_placeholders()):
        raise AnswerParseError(
            f'the field "reasoning" repeats the placeholder {reasoning!r}: write your own reasoning'
        )
    return answer


def parse_hints(
    text: str,
    keywords: Sequence[str],
    *,
    max_words: int = MAX_HINT_WORDS,
    max_chars: int = MAX_HINT_CHARS,
    structured: bool = False,
    hint_rules: str = REFERENCE_HINTS,
) -> list[str]:
    """Three valid hints of the model's own from an encoder's reply, or ``AnswerParseError``
    saying why not."""
    answer = read_answer(text, structured)
    if "hints" not in answer:
        if "guess" in answer:
            raise AnswerParseError(
                'you are the Encoder: answer with three hints, {"hints": [...]}, not a guess'
            )
        raise AnswerParseError('the answer lacks the field "hints"')
    reasons = validate_hints(
        answer["hints"], keywords, max_words=max_words, max_chars=max_chars, hint_rules=hint_rules
    )
    if reasons:
        raise AnswerParseError("; ".join(reasons))
    hints = [h.strip() for h in answer["hints"]]
    copied = [h for h in hints if is_placeholder(h, shown_placeholders())]
    if copied:
        raise AnswerParseError(
            f"{copied[0]!r} is the answer format's placeholder: write your own hints instead"
        )
    blank = {
        _blank(FALLBACK_HINT),
        _blank(placeholder_hints(keywords, max_words=max_words, max_chars=max_chars)[0]),
    }
    blanks = [h for h in hints if _blank(h) in blank]
    if blanks:
        raise AnswerParseError(
            f"{blanks[0]!r} is the game's blank hint, played when no valid hint was given: "
            "write a hint of your own"
        )
    return hints


def _blank(hint: str) -> str:
    """A hint as it is compared with the blank hint: ``No-Hint`` and ``no hint`` are ``no_hint``."""
    return "_".join(folded(hint).replace("-", " ").replace("_", " ").split())


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
    copied = [w for w in words if is_placeholder(w, shown_placeholders())]
    if copied:
        raise AnswerParseError(
            f'{copied[0]!r} is the answer format\'s placeholder: write a word (or "unknown")'
        )
    return [w.strip() for w in words]


def placeholder_hints(keywords: Sequence[str], *, max_words: int, max_chars: int) -> list[str]:
    """Three blank hints that say nothing: the first of :data:`PLACEHOLDER_HINTS` the keywords
    allow (the game's blank is exempt from the board game's rule against repeated hints)."""
    for word in PLACEHOLDER_HINTS:
        hints = [word] * 3
        if not validate_hints(hints, keywords, max_words=max_words, max_chars=max_chars):
            return hints
    raise ValueError(  # only a keyword list holding every placeholder gets here
        f"keywords: {list(keywords)} rule out every placeholder hint {PLACEHOLDER_HINTS}"
    )


def fallback_guess(code_history: Sequence[Sequence[int]]) -> list[int]:
    """A legal code that cannot be this turn's: the last code played (codes never repeat).
    Turn 1 has no history: ``1-2-3``."""
    return list(code_history[-1]) if code_history else list(CODES[0])
