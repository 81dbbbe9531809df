"""Reading a gossip game's episode record through the protocol's types.

The interaction records are those the game core writes into ``summary()["interactions"]``
(:mod:`socialsim.envs.gossip.protocol`): :func:`donation_interactions` and its siblings check the
record's game and return its interactions typed as the protocol's records, so that reading a key
the core does not write is a type error. The moves that count as cooperation are the protocol's
too.
"""

from __future__ import annotations

from typing import Any, cast

from socialsim.envs.gossip.protocol import (
    DONATION,
    GAMES,
    MARKET,
    PRISONERS,
    TRUST,
    DonationInteraction,
    Game,
    Interaction,
    MarketInteraction,
    PrisonersInteraction,
    TrustInteraction,
)
from socialsim.records import EpisodeRecord

COOPERATE, DEFECT = DONATION.cooperative["donate"]
PLAY_C, PLAY_D = PRISONERS.cooperative["play"]
#: the seller's cooperative quality (H) and the buyer's choices that make a deal (c, s)
HIGH = MARKET.cooperative["sell"][0]
DEALS = MARKET.cooperative["buy"]
#: quality + deal choice of every market sale: Hc, Hs, Lc, Ls
OUTCOMES = tuple(quality + choice for quality in MARKET.cooperative["sell"] for choice in DEALS)


def game_of(record: EpisodeRecord) -> str:
    """The game the record was played in, from ``summary["game"]``."""
    game = record.summary.get("game")
    if not isinstance(game, str) or game not in GAMES:
        raise ValueError(
            f"record.summary['game']: {game!r} is not a gossip game; allowed: {', '.join(GAMES)}"
        )
    return game


def interactions_of(record: EpisodeRecord) -> list[Interaction]:
    """The interactions in the order they were played (stable by round)."""
    return sorted(record.summary.get("interactions", []), key=lambda i: i["round"])


def donation_interactions(record: EpisodeRecord) -> list[DonationInteraction]:
    """The donations, in the order played (a ``ValueError`` for a record of another game)."""
    require_game(record, DONATION)
    return cast("list[DonationInteraction]", interactions_of(record))


def prisoners_interactions(record: EpisodeRecord) -> list[PrisonersInteraction]:
    """The prisoner's dilemma's matches, in the order played (a ``ValueError`` for a record of another game)."""
    require_game(record, PRISONERS)
    return cast("list[PrisonersInteraction]", interactions_of(record))


def trust_interactions(record: EpisodeRecord) -> list[TrustInteraction]:
    """The trust game's exchanges, in the order played (a ``ValueError`` for a record of another game)."""
    require_game(record, TRUST)
    return cast("list[TrustInteraction]", interactions_of(record))


def market_interactions(record: EpisodeRecord) -> list[MarketInteraction]:
    """The market's sales, in the order played (a ``ValueError`` for a record of another game)."""
    require_game(record, MARKET)
    return cast("list[MarketInteraction]", interactions_of(record))


def agents_of(record: EpisodeRecord) -> list[str]:
    """Every agent id of the episode, in the env's order."""
    agents = record.summary.get("agents")
    if agents:
        return list(agents)
    return list(record.returns) or list(record.seats)


def setting(record: EpisodeRecord, key: str) -> Any:
    """A constructor option the env recorded in the summary."""
    if key not in record.summary:
        raise ValueError(
            f"record.summary: no {key!r}; the {game_of(record)} env's summary states it"
        )
    return record.summary[key]


def discount_of(record: EpisodeRecord) -> float:
    return float(setting(record, "discount"))


def require_game(record: EpisodeRecord, *games: Game) -> str:
    """The record's game name, if it is one of ``games`` (a ``ValueError`` naming them if not)."""
    game = game_of(record)
    if game not in [g.name for g in games]:
        raise ValueError(
            f"record: this metric is defined for {', '.join(g.name for g in games)}, "
            f"not for game {game!r}"
        )
    return game
