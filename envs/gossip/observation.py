"""The numeric observation of the gossip envs, built from the game core's state when asked.

``{"observation": float32 vector, "action_mask": int8 vector}``. The vector is ``[own resources
(cumulative payoff in PD and market), one-hot role this round, one-hot counterpart this round,
counts of each tone published so far about every agent (N x 5, agent-major)]``; the role and
counterpart parts are zero for an agent sitting out and once the game is over. The mask marks
the actions legal for the decision due; it is all zeros for an agent without a decision.

Nothing here is kept in step with the game: every observation is computed from the core's
``resources``, ``seats``, ``tone_counts`` and ``pending()`` at the moment it is asked for, into
a fresh array that later steps never write to.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from gymnasium import spaces
from socialsim.envs.gossip import core
from socialsim.envs.gossip.protocol import TONES


class Layout:
    """Where each part of a game's observation vector lies, and how to fill it."""

    def __init__(self, game: core.GossipGame, n_actions: int):
        n = game.n
        roles = list(dict.fromkeys(game.roles))  # the PD's two players share one column
        self.role_column = tuple(1 + roles.index(role) for role in game.roles)
        self.counterpart_offset = 1 + len(roles)
        self.tone_offset = self.counterpart_offset + n
        self.size = self.tone_offset + n * len(TONES)
        self.n_actions = n_actions
        self.space = spaces.Dict(
            {
                "observation": spaces.Box(-np.inf, np.inf, shape=(self.size,), dtype=np.float32),
                "action_mask": spaces.Box(0, 1, shape=(n_actions,), dtype=np.int8),
            }
        )

    def one(
        self, game: core.GossipGame, agent: int, mask: Callable[[int, str], np.ndarray]
    ) -> dict[str, np.ndarray]:
        """One agent's observation now; ``mask(agent, decision)`` gives a decision's mask."""
        vector = np.zeros(self.size, dtype=np.float32)
        vector[0] = game.resources[agent]
        seat = None if game.done else game.seats.get(agent)
        if seat is not None:
            position, counterpart = seat
            vector[self.role_column[position]] = 1.0
            vector[self.counterpart_offset + counterpart] = 1.0
        vector[self.tone_offset :] = game.tone_counts.ravel()
        due = game.pending().get(agent)
        if due is None:
            action_mask = np.zeros(self.n_actions, dtype=np.int8)
        else:
            action_mask = mask(agent, due[0]).copy()
        return {"observation": vector, "action_mask": action_mask}

    def all(
        self, game: core.GossipGame, ids: list[str], mask: Callable[[int, str], np.ndarray]
    ) -> dict[str, dict[str, np.ndarray]]:
        """Every agent's observation now, filled for all of them at once (one row each)."""
        vectors = np.zeros((game.n, self.size), dtype=np.float32)
        vectors[:, 0] = game.resources
        if not game.done and game.seats:
            rows = list(game.seats)
            positions, counterparts = zip(*game.seats.values(), strict=True)
            vectors[rows, [self.role_column[p] for p in positions]] = 1.0
            vectors[rows, [self.counterpart_offset + c for c in counterparts]] = 1.0
        vectors[:, self.tone_offset :] = game.tone_counts.reshape(1, -1)
        masks = np.zeros((game.n, self.n_actions), dtype=np.int8)
        for agent, (decision, _, _) in game.pending().items():
            masks[agent] = mask(agent, decision)
        return {
            agent: {"observation": vector, "action_mask": action_mask}
            for agent, vector, action_mask in zip(ids, vectors, masks, strict=True)
        }
