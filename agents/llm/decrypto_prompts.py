"""The text of the Decrypto LLM agents' prompts: the templates of
``agents/llm/prompts/decrypto/`` filled from the env's infos, the rules and the side questions'
contexts (see :mod:`socialsim.agents.llm.decrypto` for the conversation they make up)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from socialsim.agents.llm.base import render
from socialsim.agents.llm.decrypto_answers import (
    KEYWORDS,
    answer_format,
    answer_instruction,
    answer_rule,
)
from socialsim.agents.llm.seat_text import shown
from socialsim.envs.decrypto import protocol
from socialsim.envs.decrypto.protocol import (
    BOARD_GAME_HINTS,
    GUESS,
    HINTS,
    KEYWORDS_TOLD_INTERCEPTOR,
    PREDICT_INTERCEPTOR_GUESS,
    Options,
    render_code,
)

GAME = protocol.GAME  # also the folder of the prompt templates
STYLES = ("plain", "rules", "briefing", "mission", "terse")
DIVIDER = "------"
HINT_LETTERS = "abc"

# -- rendering --------------------------------------------------------------------------------


def hint_limit(max_words: int, max_chars: int, hint_rules: str = protocol.REFERENCE_HINTS) -> str:
    """The hint limit in words, as the prompts say it (with the board game's rules, those too)."""
    words = {1: "a single word", 2: "one or two words"}.get(max_words, f"one to {max_words} words")
    limit = f"{words} (at most {max_chars} characters)"
    if hint_rules == BOARD_GAME_HINTS:
        limit += ", with no keyword in it (not even as a plural) and unlike the turn's other hints"
    return limit


def render_keywords(keywords: Sequence[str]) -> str:
    """``{1: w1, 2: w2, 3: w3, 4: w4}``."""
    return "{" + ", ".join(f"{i}: {w}" for i, w in enumerate(keywords, 1)) + "}"


def render_hints(hints: Sequence[str]) -> str:
    """``{a: h1, b: h2, c: h3}``: the hints as the guessers see them, lettered."""
    return "{" + ", ".join(f"{HINT_LETTERS[i]}: {shown(h)}" for i, h in enumerate(hints)) + "}"


def render_hint_lines(hint_history: Sequence[Sequence[str]]) -> str:
    """One line per keyword number: ``    Keyword 1: h, h`` (nothing after the colon if none)."""
    return "\n".join(
        f"    Keyword {i}:" + (f" {', '.join(map(shown, hints))}" if hints else "")
        for i, hints in enumerate(hint_history, 1)
    )


def render_summary(last: Mapping[str, Any]) -> str:
    """The previous turn's summary, with one line per token given (or a line saying none)."""
    tokens = []
    if last.get("miscommunication"):
        tokens.append(render(GAME, "token_miscommunication"))
    if last.get("interception"):
        tokens.append(render(GAME, "token_interception"))
    return render(
        GAME,
        "turn_summary",
        turn=last["turn"],
        code=render_code(last["code"]),
        hints=", ".join(map(shown, last["hints"])),
        decoder_guess=render_code(last["decoder_guess"]),
        interceptor_guess=render_code(last.get("interceptor_guess")),
        tokens="\n".join(tokens) or render(GAME, "token_none"),
    )


def render_history(info: Mapping[str, Any]) -> str:
    codes = ", ".join(render_code(c) for c in info.get("code_history") or []) or "none"
    return render(
        GAME, "turn_history", hint_lines=render_hint_lines(info["hint_history"]), codes=codes
    )


def turn_prompt(
    role: str, info: Mapping[str, Any], options: Options, structured: bool = False
) -> str:
    """The user message of a turn for ``role``, from the env's ``infos[role]``, with the
    game's ``options`` (the rules message's) and the answer format in force."""
    last = info.get("last_turn")
    if last is None:
        envelope = render(GAME, "turn_first")
    else:
        envelope = f"{render_summary(last)}\n\n{render_history(info)}"
    counters = {
        "turn": info["turn"],
        "miscommunications": info["miscommunications"],
        "interceptions": info["interceptions"],
    }
    if role == "encoder":
        keywords, code = info["keywords"], info["code"]
        part = render(
            GAME,
            "turn_encoder",
            **counters,
            keywords=render_keywords(keywords),
            code=render_code(code),
            code_keywords="{" + ", ".join(f"{d}: {keywords[d - 1]}" for d in code) + "}",
            hint_limit=hint_limit(
                options.max_hint_words, options.max_hint_chars, options.hint_rules
            ),
            answer=answer_instruction(HINTS, structured),
        )
    elif role == "decoder":
        part = render(
            GAME,
            "turn_decoder",
            **counters,
            keywords=render_keywords(info["keywords"]),
            hints=render_hints(info["hints"]),
            answer=answer_instruction(GUESS, structured),
        )
    else:
        part = render(
            GAME,
            "turn_interceptor",
            **counters,
            hints=render_hints(info["hints"]),
            answer=answer_instruction(GUESS, structured),
        )
    return f"{envelope}\n{DIVIDER}\n{part}"


def system_prompt(
    role: str, prompt_style: str, role_style: str, options: Options, structured: bool = False
) -> str:
    """The system message: the rules in ``prompt_style`` with the game's ``options``, then the
    role's part in ``role_style``; how to answer matches the format in force."""
    rules = render(
        GAME,
        f"system_{prompt_style}",
        max_turns=options.max_turns,
        hint_limit=hint_limit(options.max_hint_words, options.max_hint_chars, options.hint_rules),
        answer_rule=answer_rule(structured),
    )
    kind = HINTS if role == "encoder" else GUESS
    part = render(GAME, f"role_{role}_{role_style}", format=answer_format(kind, structured))
    return f"{rules}\n\n{part}"


def question_prompt(kind: str, context: Mapping[str, Any], structured: bool = False) -> str:
    """The user message of a side question (see :mod:`socialsim.envs.decrypto.tom`)."""
    if kind == PREDICT_INTERCEPTOR_GUESS:
        return render(
            GAME,
            "tom_predict_interceptor_guess",
            hints=render_hints(context["hints"]),
            code=render_code(context["code"]),
            answer=answer_instruction(GUESS, structured),
        )
    values = {
        "turn": context["turn"],
        "hint_lines": render_hint_lines(context["hint_history"]),
        "answer": answer_instruction(KEYWORDS, structured),
    }
    if kind != "keywords_now":
        values["keywords"] = render_keywords(context["keywords"])
    if kind == KEYWORDS_TOLD_INTERCEPTOR:
        values["told_numbers"] = " and ".join(str(n) for n in context["told"])
    return render(GAME, f"tom_{kind}", **values)
