"""The four gossip envs: each checks its options, builds its game core and its adapter.

See the shims (``socialsim.envs.donation_v0`` ...) for each env's documentation page.
"""

from __future__ import annotations

import math

import numpy as np
from socialsim.envs.gossip import core, protocol
from socialsim.envs.gossip.env import RENDER_MODES, GossipEnv

#: the options of :func:`protocol.matching_options` that the game core's matching takes
MATCHING = ("schedule", "rounds", "pairs_per_round", "entrant", "entrant_round")


def _ids(n: int) -> list[str]:
    return [f"agent_{i}" for i in range(n)]


def _metadata(name: str) -> dict:
    return {"name": name, "render_modes": list(RENDER_MODES), "is_parallelizable": True}


class DonationEnv(GossipEnv):
    """The donation game with gossip; see ``socialsim.envs.donation_v0``."""

    metadata = _metadata("donation_v0")

    def __init__(
        self,
        n_agents: int = 9,
        cost: float = 1.0,
        benefit: float = 5.0,
        initial_resources: float = 10.0,
        discount: float = 0.99,
        gossip: bool = True,
        schedule: str | None = None,
        rounds: int | None = None,
        entrant: str | None = None,
        entrant_round: int | None = None,
        pairs_per_round: int | None = None,
        render_mode: str | None = None,
    ):
        options = protocol.matching_options(
            "align", n_agents, gossip, discount, schedule, rounds, pairs_per_round, entrant,
            entrant_round,
        )  # fmt: skip
        cost = protocol.check_number("cost", cost)
        benefit = protocol.check_number("benefit", benefit)
        initial_resources = protocol.check_number("initial_resources", initial_resources)
        game = core.DonationGame(
            _ids(options["n_agents"]),
            cost=cost,
            benefit=benefit,
            initial_resources=initial_resources,
            gossip=gossip,
            **{key: options[key] for key in MATCHING},
        )
        params = {"cost": cost, "benefit": benefit, "initial_resources": initial_resources}
        self._setup(game, {**params, **options}, options["entrant"], render_mode)
        self._cannot_give = self._masks["donate"].copy()
        self._cannot_give[protocol.DONATION.action_index("donate", "cooperate")] = 0

    def _mask(self, agent: int, decision: str) -> np.ndarray:
        if decision == "donate" and not self.game.can_donate(agent):
            return self._cannot_give
        return self._masks[decision]


class PrisonersEnv(GossipEnv):
    """The prisoner's dilemma with gossip; see ``socialsim.envs.prisoners_v0``."""

    metadata = _metadata("prisoners_v0")

    def __init__(
        self,
        n_agents: int = 5,
        cost: float = 1.0,
        benefit: float = 5.0,
        initial_resources: float = 0.0,
        discount: float = 0.99,
        gossip: bool = True,
        schedule: str | None = None,
        rounds: int | None = None,
        entrant: str | None = None,
        entrant_round: int | None = None,
        pairs_per_round: int | None = None,
        render_mode: str | None = None,
    ):
        options = protocol.matching_options(
            "circle", n_agents, gossip, discount, schedule, rounds, pairs_per_round, entrant,
            entrant_round,
        )  # fmt: skip
        cost = protocol.check_number("cost", cost)
        benefit = protocol.check_number("benefit", benefit)
        initial_resources = protocol.check_number("initial_resources", initial_resources, -math.inf)
        game = core.PrisonersGame(
            _ids(options["n_agents"]),
            cost=cost,
            benefit=benefit,
            initial_resources=initial_resources,
            gossip=gossip,
            **{key: options[key] for key in MATCHING},
        )
        params = {"cost": cost, "benefit": benefit, "initial_resources": initial_resources}
        self._setup(game, {**params, **options}, options["entrant"], render_mode)


class TrustEnv(GossipEnv):
    """The trust (investment) game with gossip; see ``socialsim.envs.trust_v0``."""

    metadata = _metadata("trust_v0")

    def __init__(
        self,
        n_agents: int = 5,
        multiplier: float = 3.0,
        initial_resources: float = 5.0,
        discount: float = 0.99,
        gossip: bool = True,
        schedule: str | None = None,
        rounds: int | None = None,
        entrant: str | None = None,
        entrant_round: int | None = None,
        pairs_per_round: int | None = None,
        render_mode: str | None = None,
    ):
        options = protocol.matching_options(
            "align", n_agents, gossip, discount, schedule, rounds, pairs_per_round, entrant,
            entrant_round,
        )  # fmt: skip
        multiplier = protocol.check_number("multiplier", multiplier)
        initial_resources = protocol.check_number("initial_resources", initial_resources)
        game = core.TrustGame(
            _ids(options["n_agents"]),
            multiplier=multiplier,
            initial_resources=initial_resources,
            gossip=gossip,
            **{key: options[key] for key in MATCHING},
        )
        params = {"multiplier": multiplier, "initial_resources": initial_resources}
        self._setup(game, {**params, **options}, options["entrant"], render_mode)


class MarketEnv(GossipEnv):
    """The product-choice market with gossip; see ``socialsim.envs.market_v0``."""

    metadata = _metadata("market_v0")

    def __init__(
        self,
        n_sellers: int = 6,
        n_buyers: int = 6,
        discount: float = 0.99,
        gossip: bool = True,
        schedule: str | None = None,
        rounds: int | None = None,
        render_mode: str | None = None,
    ):
        options = protocol.market_options(n_sellers, n_buyers, discount, gossip, schedule, rounds)
        game = core.MarketGame(
            _ids(options["n_agents"]),
            n_sellers=options["n_sellers"],
            gossip=gossip,
            schedule=options["schedule"],
            rounds=options["rounds"],
        )
        self._setup(game, options, None, render_mode)
