"""Gossip reach: how likely a donor is to know its recipient's reputation (Nowak & Sigmund 1998's
q), a rule of the donation game shared by its core and by the society engines
(:mod:`socialsim.society`), written once here.

With ``gossip_reach`` q < 1 a tone reaches only its author and the agent it is about; as each
round starts, pair ``k``'s donor is told every tone published about its recipient so far (a
private ``reputation`` message, :class:`ReputationPayload`; none while nothing was published)
when draw ``k`` of ``reach.random(pairs)`` is below q, ``reach`` being :func:`reach_generator`
of the game's Generator, so that the schedule's draws are those of q = 1. A donor that is not
told treats its recipient as a stranger. With q = 1 (the default) nothing of this happens:
gossip is public, as it always was.

What q must be for discriminators to out-earn defectors is measured, not assumed
(:mod:`socialsim.society.threshold`; ``experiments/gossip_threshold.py``: 100 agents, 200
rounds, 100 seeds a q, q* the reach from which they out-earn defectors for good). Nowak &
Sigmund's q > c/b is the limit of rare defectors and discriminators who all stay in good
standing. With 10% defectors, image scoring needs q* = 0.229 at c/b = 0.2 and 0.535 at 0.5 (0.03
above c/b, within 0.012 of the good-standing bound c / ((1 - d) b + d c) for a share d of
defectors), simple standing 0.233 and 0.550, and stern judging 0.257 and 0.603: a recipient
gossips by its own norm, and always-defect and always-cooperate recipients judge by image
scoring, so a stern judge's justified refusal of a defector is criticised, and the refuser is
bad to the other judges until it is next praised. With half the population defecting, stern
judging loses at c/b = 0.5 whatever the reach, and image scoring out-earns defectors only in a
window (q of about 0.69-0.76) and from q = 0.977 on.

What each agent's inbox holds of the tones is :attr:`Hearsay.known`, which the numeric
observation counts in place of every tone published: an RL seat sees what a scripted judge reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypedDict

import numpy as np
from socialsim.envs.gossip.protocol import TONES

#: the child of an episode's (or replicate's) Generator that draws who knows whom
REACH_STREAM = 0
REPUTATION = "reputation"


class ReputationPayload(TypedDict):
    """``reputation``: private, to a donor as its round starts (``gossip_reach`` < 1, when its
    draw says it knows): every tone published about its recipient so far, oldest first."""

    round: int
    about: str
    tones: list[str]


def check_gossip_reach(value: Any) -> float:
    """``gossip_reach`` as a float, or ``ValueError``: a probability in [0, 1]."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float, np.integer, np.floating))
        or not 0.0 <= value <= 1.0
    ):
        raise ValueError(f"gossip_reach: must be a number in [0.0, 1.0], got {value!r}")
    return float(value)


def reach_generator(rng: np.random.Generator) -> np.random.Generator:
    """The Generator of the reach draws of a game played with ``rng``: the first child of
    ``rng``'s seed (``rng.spawn(1)[0]`` of a fresh ``rng``), so drawing who knows whom never
    moves ``rng``'s own stream."""
    seed = rng.bit_generator.seed_seq
    return np.random.default_rng(
        np.random.SeedSequence(
            seed.entropy, spawn_key=(*seed.spawn_key, REACH_STREAM), pool_size=seed.pool_size
        )
    )


class Hearsay:
    """The donation core's record of who may know what under a ``gossip_reach`` below 1: the
    tones about each agent in order, each round's told donors, and what each agent's inbox
    holds: ``known[observer, about, tone]``, the tones about ``about`` that reached ``observer``
    (the tones it wrote and those about itself; for an agent it was told about, the tones the
    latest ``reputation`` message listed, which include every earlier one)."""

    def __init__(self, agents: Sequence[str], reach: float, rng: np.random.Generator):
        self.agents, self.reach = agents, reach
        self.rng = reach_generator(rng)
        self.tones_about: list[list[str]] = [[] for _ in agents]
        self.told: list[tuple[int, int]] = []
        n = len(agents)
        # the observation's dtype, as the core's tone counts
        self.known = np.zeros((n, n, len(TONES)), dtype=np.float32)
        self._counts = np.zeros((n, len(TONES)), dtype=np.float32)

    def publish(self, author: int, about: int, tone: int) -> None:
        """A tone reaches its author and the agent it is about."""
        self.tones_about[about].append(TONES[tone])
        self._counts[about, tone] += 1
        self.known[author, about, tone] += 1
        self.known[about, about, tone] += 1

    def draw(self, pairs: Sequence[tuple[int, int]]) -> None:
        """A round starts: draw which of its donors know their recipient's reputation."""
        knows = self.rng.random(len(pairs)) < self.reach
        self.told = [pair for pair, told in zip(pairs, knows, strict=True) if told]

    def events(self, number: int) -> list[tuple]:
        """Round ``number``'s ``reputation`` events, one to each told donor."""
        events = []
        for donor, recipient in self.told:
            if self.tones_about[recipient]:
                payload: ReputationPayload = {
                    "round": number,
                    "about": self.agents[recipient],
                    "tones": list(self.tones_about[recipient]),
                }
                events.append((REPUTATION, donor, payload))
                self.known[donor, recipient] = self._counts[recipient]
        return events
