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
| `gopnik` | representational change and false belief (the Smarties task) | the interceptor, from turn 2, before its guess | `keywords_now`, `keywords_before_reveal`, `keywords_other_interceptor` | the three answers under those names (lists of 4 strings, or `None` if an answer was not; then `KIND_answer` holds it, `None` when there was no answer) |

Contexts (JSON-like): ``predict_interceptor_guess`` gets ``turn``, ``code``, ``hints``,
``keywords``, ``hint_history``, ``code_history``. The keyword questions get ``turn``,
``hint_history`` (up to the previous turn) and ``code_history``; the last two also get the true
``keywords`` (they are revealed to the interceptor only inside the question). Every context also
holds ``rules``, the public ``rules`` payload, for an agent asked before its first decision
(the interceptor on turn 2 under the first-round rule) that has not read it from its inbox yet.

The probe names and question kinds are those of :mod:`socialsim.envs.decrypto.protocol`. Both
probes work in the Parallel and the AEC form (each asks once per turn).
"""

from __future__ import annotations

import asyncio
from typing import Any

from socialsim.envs.decrypto.protocol import (
    GOPNIK,
    GUESS,
    GUESSERS,
    KEYWORD_QUESTIONS,
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


class RepresentationalChange:
    """Asks the interceptor, from turn ``from_turn`` (2), the three keyword questions.

    ``seat`` is the interceptor's agent id (default ``"interceptor"``).
    """

    name = GOPNIK

    def __init__(self, seat: str = "interceptor", from_turn: int = 2):
        if not isinstance(from_turn, int) or from_turn < 1:
            raise ValueError(f"from_turn: must be an integer >= 1, got {from_turn!r}")
        self.seat = seat
        self.from_turn = from_turn
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
        answers = await asyncio.gather(
            agent.aanswer(Question(now, blind)),
            agent.aanswer(Question(before_reveal, told)),
            agent.aanswer(Question(other_interceptor, told)),
        )
        entry: dict[str, Any] = {"probe": self.name}
        for kind, answer in zip(KEYWORD_QUESTIONS, answers, strict=True):
            entry[kind] = _as_keywords(answer)
            if entry[kind] is None:  # kept for inspection (null when unanswered); not scored
                entry[f"{kind}_answer"] = _kept(answer)
        ctx.record(entry)
