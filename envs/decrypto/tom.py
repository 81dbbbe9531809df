"""Theory-of-mind probes for Decrypto: side questions asked during a game, never part of it.

A probe is listed in an experiment file (``[[probes]] name = "piaget"``); the runner calls its
``before_decisions(ctx)`` before the acting agents decide, and stores what it records in the
episode record's ``probes`` list (each entry has the ``turn``). Questions go to
``agent.aanswer(Question(kind, context))``; an answer does not enter the game or, for agents that
keep a history, their history. The scores are computed afterwards from the records by
:mod:`socialsim.analysis.tom`.

| probe | task | asked | question kinds | recorded |
|---|---|---|---|---|
| `piaget` | perspective taking (Piaget's three mountains) | the encoder, each turn the interceptor guesses, after the hints and before the guesses | `predict_interceptor_guess` | `prediction` (a code list, or `None` if the answer was not a code; then `answer` holds it, `None` when there was no answer) |
| `gopnik` | representational change and false belief (the Smarties task) | the interceptor, from turn 2, before its guess | `keywords_now`, `keywords_before_reveal`, `keywords_other_interceptor` (the paper's three), and `keywords_told_interceptor` (ours; off with `told_interceptor = false`) | the answers under those names (lists of 4 strings, or `None` if an answer was not; then `KIND_answer` holds it, `None` when there was no answer), and `told`, the two numbers the told interceptor was given |

Contexts (JSON-like): ``predict_interceptor_guess`` gets ``turn``, ``code``, ``hints``,
``keywords``, ``hint_history``, ``code_history``. The keyword questions get ``turn``,
``hint_history`` (up to the previous turn) and ``code_history``; the last two also get the true
``keywords`` (they are revealed to the interceptor only inside the question), and
``keywords_told_interceptor`` also ``told``: the two keyword numbers (1-4, ascending) a second
interceptor was told, drawn per turn from the keywords and the turn (a hash: the same game gives
the same draw; all six pairs alike). That question asks what this second interceptor, who saw the
game and was told those two keywords only, will think the four keywords are: the told numbers'
keywords, and the interceptor's own belief on the other two. An answer that treats the four
numbers alike (a constant, the revealed keywords, its own belief) is right on half the items
(:func:`socialsim.analysis.tom.told_false_belief`). Every context also
holds ``rules``, the public ``rules`` payload, for an agent asked before its first decision
(the interceptor on turn 2 under the first-round rule) that has not read it from its inbox yet.

The probe names and question kinds are those of :mod:`socialsim.envs.decrypto.protocol`. Both
probes work in the Parallel and the AEC form (each asks once per turn).
"""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any

import numpy as np
from socialsim.envs.decrypto.protocol import (
    GOPNIK,
    GUESS,
    GUESSERS,
    KEYWORD_QUESTIONS,
    KEYWORDS_TOLD_INTERCEPTOR,
    PIAGET,
    PREDICT_INTERCEPTOR_GUESS,
    parse_code,
)

from socialsim.agent import Question

PROBES = {
    PIAGET: "socialsim.envs.decrypto.tom:PerspectiveTaking",
    GOPNIK: "socialsim.envs.decrypto.tom:RepresentationalChange",
}


def _decrypto(env: Any) -> Any:
    """The Parallel env behind ``ctx.env`` (the AEC form keeps it as ``parallel``)."""
    return getattr(env, "parallel", env)


def _game_context(env: Any) -> dict[str, Any]:
    game = env.game
    return {
        "turn": game.turn,
        "hint_history": [list(h) for h in game.hint_history],
        "code_history": [list(c) for c in game.code_history],
        "rules": env.rules().to_payload(),
    }


def _kept(answer: Any) -> str | None:
    """An answer that is not a code or four words, as the record keeps it: None (null) for
    no answer, text as it is, anything else as its repr."""
    return answer if answer is None or isinstance(answer, str) else repr(answer)


def _as_keywords(answer: Any) -> list[str] | None:
    if (
        isinstance(answer, (list, tuple))
        and len(answer) == 4
        and all(isinstance(w, str) for w in answer)
    ):
        return list(answer)
    return None


class PerspectiveTaking:
    """Asks the encoder which code it predicts the interceptor will guess.

    ``seat`` is the encoder's agent id (default ``"encoder"``).
    """

    name = PIAGET

    def __init__(self, seat: str = "encoder"):
        self.seat = seat
        self._asked: set[int] = set()

    async def before_decisions(self, ctx: Any) -> None:
        env = _decrypto(ctx.env)
        if env.phase != GUESS or "interceptor" not in env.deciding():
            return  # not the guessing step, or no interceptor guess this turn (first-round rule)
        if not any(a in GUESSERS for a in ctx.acting) or ctx.turn in self._asked:
            return
        self._asked.add(ctx.turn)
        game = env.game
        context = {
            **_game_context(env),
            "code": list(game.code),
            "hints": list(env.hints),
            "keywords": list(game.keywords),
        }
        answer = await ctx.agents[self.seat].aanswer(Question(PREDICT_INTERCEPTOR_GUESS, context))
        try:
            prediction: list[int] | None = list(parse_code(answer))
        except ValueError:
            prediction = None
        entry: dict[str, Any] = {"probe": self.name, "prediction": prediction}
        if prediction is None:  # kept for inspection (null when unanswered); not scored
            entry["answer"] = _kept(answer)
        ctx.record(entry)


def told_numbers(keywords: Any, turn: int) -> list[int]:
    """The two keyword numbers (1-4, ascending) the told interceptor is given on ``turn``: drawn
    uniformly from the six pairs by a generator seeded with a hash of the keywords and the turn,
    so a game and its replay draw the same, and no global or agent stream is touched."""
    key = hashlib.sha256(("|".join(map(str, keywords)) + f"#{turn}").encode()).digest()[:8]
    rng = np.random.default_rng(int.from_bytes(key, "little"))
    return sorted(int(n) + 1 for n in rng.choice(4, size=2, replace=False))


class RepresentationalChange:
    """Asks the interceptor, from turn ``from_turn`` (2), the three keyword questions, and with
    ``told_interceptor`` (default true) the fourth, ``keywords_told_interceptor``.

    ``seat`` is the interceptor's agent id (default ``"interceptor"``).
    """

    name = GOPNIK

    def __init__(
        self, seat: str = "interceptor", from_turn: int = 2, told_interceptor: bool = True
    ):
        if not isinstance(from_turn, int) or from_turn < 1:
            raise ValueError(f"from_turn: must be an integer >= 1, got {from_turn!r}")
        if not isinstance(told_interceptor, bool):
            raise ValueError(f"told_interceptor: must be true or false, got {told_interceptor!r}")
        self.seat = seat
        self.from_turn = from_turn
        self.told_interceptor = told_interceptor
        self._asked: set[int] = set()

    async def before_decisions(self, ctx: Any) -> None:
        env = _decrypto(ctx.env)
        if self.seat not in ctx.acting or env.phase != GUESS or ctx.turn < self.from_turn:
            return
        if ctx.turn in self._asked:
            return
        self._asked.add(ctx.turn)
        game = env.game
        blind = _game_context(env)
        told = {**blind, "keywords": list(game.keywords)}
        agent = ctx.agents[self.seat]
        now, before_reveal, other_interceptor = KEYWORD_QUESTIONS
        questions = [
            Question(now, blind),
            Question(before_reveal, told),
            Question(other_interceptor, told),
        ]
        numbers = told_numbers(game.keywords, ctx.turn) if self.told_interceptor else None
        if numbers is not None:
            questions.append(Question(KEYWORDS_TOLD_INTERCEPTOR, {**told, "told": numbers}))
        answers = await asyncio.gather(*(agent.aanswer(q) for q in questions))
        entry: dict[str, Any] = {"probe": self.name}
        for question, answer in zip(questions, answers, strict=True):
            kind = question.kind
            entry[kind] = _as_keywords(answer)
            if entry[kind] is None:  # kept for inspection (null when unanswered); not scored
                entry[f"{kind}_answer"] = _kept(answer)
        if numbers is not None:
            entry["told"] = numbers
        ctx.record(entry)
