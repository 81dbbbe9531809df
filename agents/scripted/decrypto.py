"""Random Decrypto players: the chance baselines of a study.

* ``decrypto_random_encoder`` gives three random hints from a hint vocabulary (by default the
  env's ``rl_hints.txt``), redrawing any hint that :func:`~socialsim.envs.decrypto.core.validate_hints`
  rejects under the hint limits of the env's ``rules`` message (read from its inbox; an inbox
  without one before its first decision is a ``ValueError``), so it never needs the env's
  fallback.
* ``decrypto_random_guesser`` (decoder or interceptor) guesses one of the 24 codes uniformly at
  random. A random interceptor intercepts 1/24 of turns; a random decoder miscommunicates 23/24.

Both answer the theory-of-mind side questions deterministically (see
:mod:`socialsim.envs.decrypto.tom`): ``predict_interceptor_guess`` with a random code, and the
keyword questions with ``["unknown"] * 4`` (an abstainer). Answers come from a second Generator, so
asking questions never changes the agent's moves.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from socialsim.envs.decrypto.core import validate_hints
from socialsim.envs.decrypto.protocol import (
    CODES,
    GUESS,
    HINTS,
    PREDICT_INTERCEPTOR_GUESS,
    SIDE_QUESTIONS,
    UNKNOWN,
    Rules,
)
from socialsim.envs.decrypto.words import hint_vocabulary

from socialsim.agent import Agent, Question
from socialsim.bus import Message

KINDS = {
    "decrypto_random_encoder": "socialsim.agents.scripted.decrypto:RandomEncoder",
    "decrypto_random_guesser": "socialsim.agents.scripted.decrypto:RandomGuesser",
}


class _RandomAnswers(Agent):
    """Deterministic answers to the side questions, from their own seeded stream."""

    def reset(self, agent_id: str, seat: str, seed: int) -> None:
        super().reset(agent_id, seat, seed)
        moves, answers = np.random.SeedSequence(seed).spawn(2)
        self.rng = np.random.default_rng(moves)
        self.answer_rng = np.random.default_rng(answers)

    def answer(self, question: Question) -> Any:
        if question.kind == PREDICT_INTERCEPTOR_GUESS:
            return list(CODES[int(self.answer_rng.integers(len(CODES)))])
        if question.kind in SIDE_QUESTIONS["interceptor"]:
            return [UNKNOWN] * 4
        raise NotImplementedError(
            f"{type(self).__name__} does not answer {question.kind!r} questions"
        )


class RandomEncoder(_RandomAnswers):
    """Three random valid hints per turn, as ``{"hints": [...]}``.

    ``vocabulary``: path of a word list (default: the env's RL hint vocabulary). The hint limits
    are the env's, from its ``rules`` message.
    """

    plays = {"decrypto": {HINTS}}

    def __init__(self, vocabulary: str | os.PathLike | None = None):
        self.vocabulary = hint_vocabulary(vocabulary)

    def reset(self, agent_id: str, seat: str, seed: int) -> None:
        super().reset(agent_id, seat, seed)
        self.rules: Rules | None = None

    def act(
        self, observation: Any, messages: Sequence[Message], info: Mapping[str, Any]
    ) -> dict[str, list[str]]:
        self.rules = Rules.from_messages(messages) or self.rules
        if self.rules is None:
            raise ValueError(
                f"{self.agent_id}: no 'rules' message reached this agent before its first "
                "decision; the hint limits come from it"
            )
        limits = (self.rules.max_hint_words, self.rules.max_hint_chars)
        keywords = info.get("keywords", [])
        hints: list[str] = []
        while len(hints) < 3:
            word = self.vocabulary[int(self.rng.integers(len(self.vocabulary)))]
            # one at a time, so that a rejected word costs one draw and the others stay
            if not validate_hints([word] * 3, keywords, *limits):
                hints.append(word)
            else:
                self.count("rejected_hints")
                if self.counters["rejected_hints"] > 10_000:
                    raise RuntimeError(
                        f"vocabulary: no valid hint found for keywords {list(keywords)}"
                    )
        return {"hints": hints}


class RandomGuesser(_RandomAnswers):
    """A uniformly random code index in ``Discrete(24)`` at every guess."""

    plays = {"decrypto": {GUESS}}

    def act(self, observation: Any, messages: Sequence[Message], info: Mapping[str, Any]) -> int:
        return int(self.rng.integers(len(CODES)))
