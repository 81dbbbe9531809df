"""Embedding features of the hints for a Decrypto guesser, so that a small policy can read them.

The feature ``hint_history`` (float32, 100 values) is what a GloVe interceptor knows at a guess,
laid out so that a policy over the 24 codes can weigh it linearly. With ``S[i, j]`` the cosine
of hint ``i`` with the mean vector of keyword ``j``'s past hints (the GloVe interceptor's matrix,
:func:`socialsim.agents.embedding.baselines.history_means`) and ``M[i, j]`` its largest cosine
with any single one of them (both 0 where keyword ``j`` has no past hint):

=========  ====================================================================================
values     content
=========  ====================================================================================
0-11       ``S`` (3 x 4, row-major)
12-23      ``M``
24-27      the number of past hints of each keyword, over ``max_turns``
28-51      1 for each code already played (codes never repeat within a game), in ``CODES`` order
52-75      each code's score ``sum_i S[i, code[i] - 1]`` (the GloVe interceptor takes the best)
76-99      each code's score ``sum_i M[i, code[i] - 1]``
=========  ====================================================================================

It is computed from the seat's info alone (``hints``, ``hint_history``, ``code_history``), as
any agent at a guess gets it, so the ``rl`` kind rebuilds it exactly; all zeros without a guess
to make. Out-of-vocabulary hints get the vectors' all-ones vector, as in the baselines.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from socialsim.agents.embedding.baselines import cosine_to, history_means
from socialsim.agents.embedding.vectors import load_vectors
from socialsim.envs.decrypto.protocol import CODE_INDEX, CODES, GUESS, MAX_TURNS

_POSITIONS = np.arange(3)
_DIGITS = np.array(CODES) - 1  # 24 x 3: the keyword slot of each position of each code


class HintHistory:
    """The ``hint_history`` feature (see the module docstring)."""

    name = "hint_history"
    space = spaces.Box(-np.inf, np.inf, shape=(100,), dtype=np.float32)

    def __init__(self, vectors: str = "glove-6b-50d", max_turns: int = MAX_TURNS):
        self.vectors = load_vectors(vectors)
        self.max_turns = max_turns

    def reset(self, agent_id: str) -> None:
        self.agent_id = agent_id

    def __call__(
        self, observation: Any, messages: Sequence[Any], info: Mapping[str, Any]
    ) -> np.ndarray:
        value = np.zeros(self.space.shape, dtype=np.float32)
        if info.get("decision") != GUESS:
            return value
        history = info["hint_history"]
        hints = self.vectors.unit_vectors(info["hints"])  # 3 x dim
        mean = cosine_to(hints, history_means(self.vectors, history))
        best = np.zeros((3, 4), dtype=np.float32)
        for slot, past in enumerate(history):
            if len(past):
                best[:, slot] = (hints @ self.vectors.unit_vectors(past).T).max(axis=1)
        value[0:12] = mean.ravel()
        value[12:24] = best.ravel()
        value[24:28] = [len(past) / self.max_turns for past in history]
        for code in info["code_history"]:
            value[28 + CODE_INDEX[tuple(int(d) for d in code)]] = 1.0
        value[52:76] = mean[_POSITIONS, _DIGITS].sum(axis=1)
        value[76:100] = best[_POSITIONS, _DIGITS].sum(axis=1)
        return value
