"""The four gossip envs: each checks its options, builds its game core and its adapter.

See the shims (``socialsim.envs.donation_v0`` ...) for each env's documentation page.
"""

from __future__ import annotations

import math

import numpy as np
from socialsim.envs.gossip import core, market, protocol
from socialsim.envs.gossip.env import RENDER_MODES, GossipEnv
from socialsim.envs.gossip.options import check_number, market_options, matching_options
from socialsim.envs.gossip.reach import check_gossip_reach

#: the options of :func:`.options.matching_options` that the game core's matching takes
MATCHING = ("schedule", "rounds", "pairs_per_round", "entrant", "entrant_round")


def _ids(n: int) -> list[str]:
    return [f"agent_{i}" for i in range(n)]


def _metadata(name: str) -> dict:
    return {"name": name, "render_modes": list(RENDER_MODES), "is_parallelizable": True}


class PeerEnv(GossipEnv):
    """A game among peers (donation, prisoners, trust): the matching options, then the game's
    own numbers, checked in that order, build the core."""

    def _setup_peer(
        self,
        game_class: type[core.PeerGame],
        reference: str,
        numbers: dict[str, tuple[float, float]],
        matching: dict,
        render_mode: str | None,
        stated: dict | None = None,
    ) -> None:
        """``numbers`` maps each of the game's own options to ``(value, least allowed)``;
        ``stated`` holds checked options that the rules state only when given (so that the
        records of the games without them stay as they were)."""
        options = matching_options(reference, **matching)
        checked = {
            name: check_number(name, value, least) for name, (value, least) in numbers.items()
        }
        checked.update(stated or {})
        game = game_class(
            _ids(options["n_agents"]),
            gossip=options["gossip"],
            **checked,
            **{key: options[key] for key in MATCHING},
        )
        self._setup(game, {**checked, **options}, options["entrant"], render_mode)


class DonationEnv(PeerEnv):
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
        gossip_reach: float = 1.0,
        render_mode: str | None = None,
    ):
        reach = check_gossip_reach(gossip_reach)
        self._setup_peer(
            core.DonationGame,
            "align",
            {
                "cost": (cost, 0.0),
                "benefit": (benefit, 0.0),
                "initial_resources": (initial_resources, 0.0),
            },
            dict(
                n_agents=n_agents,
                gossip=gossip,
                discount=discount,
                schedule=schedule,
                rounds=rounds,
                pairs_per_round=pairs_per_round,
                entrant=entrant,
                entrant_round=entrant_round,
            ),
            render_mode,
            {"gossip_reach": reach} if reach < 1 else None,
        )
        self._cannot_give = self._masks["donate"].copy()
        self._cannot_give[protocol.DONATION.action_index("donate", "cooperate")] = 0

    def _mask(self, agent: int, decision: str) -> np.ndarray:
        if decision == "donate" and not self.game.can_donate(agent):
            return self._cannot_give
        return self._masks[decision]


class PrisonersEnv(PeerEnv):
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
        self._setup_peer(
            core.PrisonersGame,
            "circle",
            {
                "cost": (cost, 0.0),
                "benefit": (benefit, 0.0),
                "initial_resources": (initial_resources, -math.inf),
            },
            dict(
                n_agents=n_agents,
                gossip=gossip,
                discount=discount,
                schedule=schedule,
                rounds=rounds,
                pairs_per_round=pairs_per_round,
                entrant=entrant,
                entrant_round=entrant_round,
            ),
            render_mode,
        )


class TrustEnv(PeerEnv):
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
        self._setup_peer(
            core.TrustGame,
            "align",
            {"multiplier": (multiplier, 0.0), "initial_resources": (initial_resources, 0.0)},
            dict(
                n_agents=n_agents,
                gossip=gossip,
                discount=discount,
                schedule=schedule,
                rounds=rounds,
                pairs_per_round=pairs_per_round,
                entrant=entrant,
                entrant_round=entrant_round,
            ),
            render_mode,
        )


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
        options = market_options(n_sellers, n_buyers, discount, gossip, schedule, rounds)
        game = market.MarketGame(
            _ids(options["n_agents"]),
            n_sellers=options["n_sellers"],
            gossip=gossip,
            schedule=options["schedule"],
            rounds=options["rounds"],
        )
        self._setup(game, options, None, render_mode)
