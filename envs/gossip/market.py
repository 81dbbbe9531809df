"""Pure rules and state of the product-choice market (see :mod:`.core` for what the four gossip
games share): sellers offer quality H or L; buyers, who cannot see it, choose customised,
standard or none; payoffs by :data:`~socialsim.envs.gossip.protocol.MARKET_PAYOFFS`. No I/O, no
bus, no text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from socialsim.envs.gossip import protocol, schedules
from socialsim.envs.gossip.core import GossipGame
from socialsim.envs.gossip.schedules import Pair, Schedule


class MarketGame(GossipGame):
    """Sellers choose quality H or L; buyers, unseeing, choose customised, standard or none."""

    spec = protocol.MARKET

    def __init__(
        self,
        agents: Sequence[str],
        *,
        n_sellers: int = 6,
        gossip: bool = True,
        schedule: str = "align",
        rounds: int | None = None,
    ):
        super().__init__(agents, gossip=gossip, initial_resources=0.0)
        self.n_sellers = n_sellers
        self.n_buyers = len(agents) - n_sellers
        self.schedule_name = schedule
        self.rounds = rounds

    def make_schedule(self, rng: np.random.Generator) -> Schedule:
        if self.schedule_name == "random":
            return schedules.random_market_schedule(
                self.n_sellers, self.n_buyers, self.rounds or self.n_buyers, rng
            )
        return schedules.market_schedule(self.n_sellers, self.n_buyers, rng)[: self.rounds]

    def _check_choice(self, agent, decision, counterpart, choice) -> Any:
        allowed = self.spec.move_choices(decision)
        if choice not in allowed:
            raise ValueError(
                f"action: a {decision} choice must be one of {allowed}, got {choice!r}"
            )
        return choice

    def _open_interaction(self, pair: Pair) -> protocol.MarketInteraction:
        seller, buyer = pair
        record: protocol.MarketInteraction = {
            "round": self.round,
            "seller": self.agents[seller],
            "buyer": self.agents[buyer],
            "quality": None,
            "choice": None,
            "payoffs": {},
            "tone": None,
            "message": None,
        }
        return record

    def _resolve(self, phase, pair, record, checked, rewards, events) -> None:
        seller, buyer = pair
        quality, choice = checked[seller], checked[buyer]
        seller_payoff, buyer_payoff = protocol.market_payoffs(quality, choice)
        self._pay(rewards, seller, seller_payoff)
        self._pay(rewards, buyer, buyer_payoff)
        record.update(
            quality=quality,
            choice=choice,
            payoffs={self.agents[seller]: seller_payoff, self.agents[buyer]: buyer_payoff},
        )
        self._action_event(seller, buyer, quality, events)
        self._action_event(buyer, seller, choice, events)

    def _record_tone(self, record, position, tone, message) -> None:
        record["tone"] = tone
        record["message"] = message
