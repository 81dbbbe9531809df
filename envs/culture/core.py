"""The culture donor game's rules: pure state and arithmetic, its own Generator, no bus or I/O.

Each round half the agents donate and half receive, each donor to one recipient; the roles
alternate (round 1's donors, drawn at random, receive in round 2, and so on), the pairs drawn
anew each round. Donations are simultaneous: every amount is a fraction of the donor's resources
at the round's start.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from socialsim.envs.culture.protocol import GIVE, PUNISH, Options


@dataclass(frozen=True)
class Interaction:
    """One donor's decision: ``verb`` is ``"give"`` or ``"punish"``; ``amount`` what it cost the
    donor; ``effect`` the recipient's change."""

    round: int
    donor: int
    recipient: int
    verb: str
    fraction: float
    amount: float
    effect: float


class CultureGame:
    def __init__(self, options: Options, seed: int | None):
        self.options = options
        self.rng = np.random.default_rng(seed)
        n = options.n_agents
        self.resources = np.full(n, float(options.initial_resources))
        self.round = 1
        self.history: list[Interaction] = []
        order = self.rng.permutation(n)
        self._donors = np.sort(order[: n // 2])
        self._recipients = np.sort(order[n // 2 :])
        self.pairs = self._pair()

    def _pair(self) -> dict[int, int]:
        """donor -> recipient of the current round: the donors in order, the recipients drawn."""
        return dict(
            zip(self._donors.tolist(), self.rng.permutation(self._recipients).tolist(), strict=True)
        )

    @property
    def over(self) -> bool:
        return self.round > self.options.rounds

    def trace(self, agent: int) -> list[Interaction]:
        """``agent``'s last ``trace_depth`` decisions as a donor, oldest first."""
        depth = self.options.trace_depth
        if depth == 0:
            return []
        mine = [i for i in self.history if i.donor == agent]
        return mine[-depth:]

    def play(self, actions: dict[int, int]) -> list[Interaction]:
        """Apply every donor's action index (already legal) and start the next round."""
        start = self.resources.copy()
        played = []
        for donor, recipient in self.pairs.items():
            action = actions[donor]
            if action < len(GIVE):
                verb, fraction = "give", GIVE[action]
                amount = fraction * start[donor]
                effect = self.options.multiplier * amount
            else:
                verb, fraction = "punish", PUNISH[action - len(GIVE)]
                amount = fraction * start[donor]
                effect = -min(self.options.punishment_loss * amount, start[recipient])
            self.resources[donor] -= amount
            self.resources[recipient] += effect
            played.append(
                Interaction(
                    self.round, donor, recipient, verb, fraction, float(amount), float(effect)
                )
            )
        np.maximum(self.resources, 0.0, out=self.resources)  # a punished stock ends at 0
        self.history.extend(played)
        self.round += 1
        self._donors, self._recipients = self._recipients, self._donors
        if not self.over:
            self.pairs = self._pair()
        return played
