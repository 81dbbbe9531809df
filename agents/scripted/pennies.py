"""Scripted players for matching pennies (the engine's example game)."""

from __future__ import annotations

import numpy as np

from socialsim.agent import Agent

KINDS = {
    "pennies_random": "socialsim.agents.scripted.pennies:RandomFace",
    "pennies_copycat": "socialsim.agents.scripted.pennies:Copycat",
}


class RandomFace(Agent):
    """Shows heads with probability ``p_heads``, from its own seeded stream."""

    plays = {"pennies": {"*"}}

    def __init__(self, p_heads: float = 0.5):
        if not 0.0 <= p_heads <= 1.0:
            raise ValueError(f"p_heads: must be in [0, 1], got {p_heads!r}")
        self.p_heads = p_heads

    def reset(self, agent_id, seat, seed):
        super().reset(agent_id, seat, seed)
        self.rng = np.random.default_rng(seed)

    def act(self, observation, messages, info):
        return 0 if self.rng.random() < self.p_heads else 1


class Copycat(Agent):
    """Shows the face the other player showed last round; heads first. Reads only the bus."""

    plays = {"pennies": {"*"}}

    def reset(self, agent_id, seat, seed):
        super().reset(agent_id, seat, seed)
        self.face = 0

    def act(self, observation, messages, info):
        other = "mismatcher" if self.agent_id == "matcher" else "matcher"
        for message in messages:
            if message.kind == "reveal":
                self.face = message.payload[other]
        return self.face
