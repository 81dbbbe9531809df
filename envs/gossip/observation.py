"""The numeric observation of the gossip envs, built from the game core's state when asked.

``{"observation": float32 vector, "action_mask": int8 vector}``. The vector is ``[own resources
(cumulative payoff in PD and market), one-hot role this round, one-hot counterpart this round,
counts of each tone published so far about every agent (N x 5, agent-major)]``; with the
donation game's ``gossip_reach`` below 1 the counts are of the tones that reached the agent
(``Hearsay.known``: its own, those about it, those a ``reputation`` message told it); the role and
counterpart parts are zero for an agent sitting out and once the game is over. The mask marks
the actions legal for the decision due; for an agent without a decision it allows only the
no-op, action 0, which the env ignores (:func:`socialsim.envs.aec.idle_mask`).

Nothing here is kept in step with the game: every observation is computed from the core's
``resources``, ``seats``, ``tone_counts`` and ``pending()`` at the moment it is asked for, into
a fresh array that later steps never write to; the role and counterpart one-hots are rows of a
constant table indexed by a seat's ``(position, counterpart)``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from gymnasium import spaces
from socialsim.envs.aec import idle_mask
from socialsim.envs.gossip import core
from socialsim.envs.gossip.protocol import TONES


def tones_seen(game: core.GossipGame) -> np.ndarray:
    """The tone counts the observations hold, one row of ``N x 5`` per agent, or one row that
    every agent sees when gossip is public (no ``Hearsay``)."""
    if game.hearsay is None:
        return game.tone_counts.reshape(1, -1)
    return game.hearsay.known.reshape(game.n, -1)


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
        # the vector's head (a 0 for the resources, the role and counterpart one-hots): row 0
        # for an agent sitting out, row 1 + position * n + counterpart for a seat of the core's
        # ``seats`` (``heads[position, counterpart]`` is that row)
        self.seat_table = np.zeros((1 + 2 * n, self.tone_offset), dtype=np.float32)
        self.heads = self.seat_table[1:].reshape(2, n, self.tone_offset)
        for position, column in enumerate(self.role_column):
            for counterpart in range(n):
                row = self.heads[position, counterpart]
                row[column] = row[self.counterpart_offset + counterpart] = 1.0
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
        seat = None if game.done else game.seats.get(agent)
        head = self.seat_table[0] if seat is None else self.heads[seat]
        tones = game.tone_counts if game.hearsay is None else game.hearsay.known[agent]
        vector = np.concatenate((head, tones.ravel()))
        vector[0] = game.resources[agent]
        due = game.pending().get(agent)
        if due is None:
            action_mask = idle_mask(self.n_actions)
        else:
            action_mask = mask(agent, due[0]).copy()
        return {"observation": vector, "action_mask": action_mask}

    def all(
        self, game: core.GossipGame, ids: list[str], mask: Callable[[int, str], np.ndarray]
    ) -> dict[str, dict[str, np.ndarray]]:
        """Every agent's observation now, filled for all of them at once (one row each)."""
        vectors = np.empty((game.n, self.size), dtype=np.float32)
        if game.done:
            vectors[:, : self.tone_offset] = self.seat_table[0]
        else:  # each agent's row of the seat table: 0 sitting out, else its seat's
            rows, n = [0] * game.n, game.n
            for agent, (position, counterpart) in game.seats.items():
                rows[agent] = 1 + position * n + counterpart
            vectors[:, : self.tone_offset] = self.seat_table.take(rows, axis=0)
        vectors[:, 0] = game.resources
        vectors[:, self.tone_offset :] = tones_seen(game)  # one row: the same for everyone
        masks = np.zeros((game.n, self.n_actions), dtype=np.int8)
        masks[:, 0] = 1  # the no-op of every agent without a decision (idle_mask)
        for agent, (decision, _, _) in game.pending().items():
            masks[agent] = mask(agent, decision)
        return {
            agent: {"observation": vector, "action_mask": action_mask}
            for agent, vector, action_mask in zip(ids, list(vectors), list(masks), strict=True)
        }
