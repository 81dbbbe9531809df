"""The vocabulary of the four ALIGN gossip games, written once.

Everything that crosses a wall is here: the roles and the decisions of each phase, the action
table of each game's ``Discrete`` space (index <-> decision <-> choice), the fallbacks, the
payoff functions, the typed bus payloads (``rules``, ``match``, ``action``, ``gossip``) and the
interaction records that the analysis reads. The constructor options are checked by
:mod:`.options`; what one seat learns from the payloads is read by the one parser
:mod:`.notebook`. The core, the env adapter, every agent family and the analysis import it;
nothing restates it. Pure data and functions: no bus, no I/O.

| game        | roles (first, second)  | phases (gossip on)                                   | moves               |
|-------------|------------------------|------------------------------------------------------|---------------------|
| `donation`  | donor, recipient       | donor `donate`; recipient `gossip`                   | cooperate, defect   |
| `prisoners` | player, player         | both `play`; both `gossip`                           | C, D                |
| `trust`     | investor, responder    | investor `invest`; responder `return`; both `gossip` | an amount           |
| `market`    | seller, buyer          | seller `sell` and buyer `buy` at once; buyer `gossip` | H, L / c, s, none   |

Gossip is one of five :data:`TONES`; its choice is ``(tone index, message or None)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypedDict

import numpy as np

TONES: tuple[str, ...] = ("praising", "neutral", "mocking", "complaint", "criticism")
TONE_INDEX: Mapping[str, int] = {tone: i for i, tone in enumerate(TONES)}
NEUTRAL = TONE_INDEX["neutral"]
GOSSIP = "gossip"

#: trust amounts on the action grid are k / AMOUNT_STEPS of the most the seat may send
AMOUNT_STEPS = 10
#: the share of what it received that a cooperative responder returns (2I of the reference's 3I)
COOPERATIVE_RETURN_SHARE = 2 / 3

#: the reference's display names for agent_0, agent_1, ... and for its entrant
REFERENCE_NAMES = (
    "John",
    "Kate",
    "Jack",
    "Emma",
    "Luke",
    "Mary",
    "Alice",
    "Bob",
    "Charlie",
    "David",
    "Eve",
    "Frank",
)
REFERENCE_ENTRANT_NAME = "Max"

#: (seller, buyer) payoffs of the product-choice market: price minus cost, value minus price
MARKET_PAYOFFS: Mapping[tuple[str, str], tuple[float, float]] = {
    ("H", "c"): (2.0, 3.0),
    ("H", "s"): (0.0, 2.0),
    ("L", "c"): (3.0, 0.0),
    ("L", "s"): (1.0, 1.0),
    ("H", "none"): (0.0, 0.0),
    ("L", "none"): (0.0, 0.0),
}


# -- the games --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Game:
    """One game's rules of play. ``actions[i]`` is ``(decisions, choice)`` of action index ``i``:
    the decisions it answers and the core choice it stands for (a trust entry's choice is the
    fraction of the most the seat may send)."""

    name: str
    title: str
    roles: tuple[str, str]
    #: each phase maps the position in the pair (0 first, 1 second) to the decision due
    phases: tuple[Mapping[int, str], ...]
    moves: tuple[tuple[tuple[str, ...], Any], ...]
    #: other spellings of a move's choice, accepted in ``{"action": name}``
    aliases: Mapping[str, str]
    #: the choice applied when an agent's action is forbidden for the decision at hand
    fallbacks: Mapping[str, Any]
    #: decision -> (cooperative choice, defecting choice), for the moves that have a name
    cooperative: Mapping[str, tuple[str, str]]
    actions: tuple[tuple[tuple[str, ...], Any], ...] = field(init=False)

    def __post_init__(self) -> None:
        tones = tuple(((GOSSIP,), i) for i in range(len(TONES)))
        object.__setattr__(self, "actions", self.moves + tones)

    @property
    def first_tone(self) -> int:
        """The action index of tone 0 (the tones follow the moves)."""
        return len(self.moves)

    @property
    def decisions(self) -> tuple[str, ...]:
        """Every decision of the game, in phase order."""
        return tuple(dict.fromkeys(d for phase in self.phases for d in phase.values()))

    def move_choices(self, decision: str) -> tuple[Any, ...]:
        """The named choices of a move decision (empty for an amount)."""
        return tuple(
            c for ds, c in self.moves if decision in ds and isinstance(c, str) and c is not None
        )

    def action_index(self, decision: str, choice: Any) -> int:
        """The action index of a named move or a tone name."""
        if decision == GOSSIP:
            return self.first_tone + TONE_INDEX[choice]
        choice = self.aliases.get(choice, choice)
        for index, (decisions, value) in enumerate(self.moves):
            if decision in decisions and value == choice:
                return index
        raise ValueError(
            f"action: {choice!r} is not a {decision} choice of the {self.name} game; "
            f"allowed: {', '.join(map(str, self.move_choices(decision)))}"
        )

    def masks(self) -> dict[str, np.ndarray]:
        """decision -> the int8 action mask allowing its actions."""
        out = {d: np.zeros(len(self.actions), dtype=np.int8) for d in self.decisions}
        for index, (decisions, _) in enumerate(self.actions):
            for decision in decisions:
                out[decision][index] = 1
        return out

    def role_decisions(self, gossip: bool) -> dict[str, tuple[str, ...]]:
        """role -> the decisions it makes, in phase order."""
        out: dict[str, list[str]] = {}
        for phase in self.phases:
            for position, decision in phase.items():
                if gossip or decision != GOSSIP:
                    out.setdefault(self.roles[position], []).append(decision)
        return {role: tuple(ds) for role, ds in out.items()}


_TONE_FALLBACK = (NEUTRAL, None)

DONATION = Game(
    name="donation",
    title="donation game",
    roles=("donor", "recipient"),
    phases=({0: "donate"}, {1: GOSSIP}),
    moves=((("donate",), "defect"), (("donate",), "cooperate")),
    aliases={"D": "defect", "C": "cooperate"},
    fallbacks={"donate": "defect", GOSSIP: _TONE_FALLBACK},
    cooperative={"donate": ("cooperate", "defect")},
)
PRISONERS = Game(
    name="prisoners",
    title="prisoner's dilemma",
    roles=("player", "player"),
    phases=({0: "play", 1: "play"}, {0: GOSSIP, 1: GOSSIP}),
    moves=((("play",), "D"), (("play",), "C")),
    aliases={"defect": "D", "cooperate": "C"},
    fallbacks={"play": "D", GOSSIP: _TONE_FALLBACK},
    cooperative={"play": ("C", "D")},
)
TRUST = Game(
    name="trust",
    title="trust game",
    roles=("investor", "responder"),
    phases=({0: "invest"}, {1: "return"}, {0: GOSSIP, 1: GOSSIP}),
    moves=tuple((("invest", "return"), k / AMOUNT_STEPS) for k in range(AMOUNT_STEPS + 1)),
    aliases={},
    fallbacks={"invest": 0.0, "return": 0.0, GOSSIP: _TONE_FALLBACK},
    cooperative={},
)
MARKET = Game(
    name="market",
    title="product-choice market",
    roles=("seller", "buyer"),
    phases=({0: "sell", 1: "buy"}, {1: GOSSIP}),
    moves=(
        (("sell",), "H"),
        (("sell",), "L"),
        (("buy",), "c"),
        (("buy",), "s"),
        (("buy",), "none"),
    ),
    aliases={
        "customised": "c",
        "customized": "c",
        "standard": "s",
        "standardised": "s",
    },
    fallbacks={"sell": "L", "buy": "none", GOSSIP: _TONE_FALLBACK},
    cooperative={"sell": ("H", "L"), "buy": ("c", "s")},
)
GAMES: Mapping[str, Game] = {g.name: g for g in (DONATION, PRISONERS, TRUST, MARKET)}
#: role -> game (the prisoner's dilemma's "player" is unique to it)
GAME_OF_ROLE: Mapping[str, str] = {role: g.name for g in GAMES.values() for role in g.roles}


# -- payoffs ----------------------------------------------------------------------------------


def help_terms(rules: Mapping[str, Any]) -> tuple[float, float] | None:
    """``(cost, benefit)`` of one unit of help in the game a rules payload describes: the
    donation game's and the dilemma's ``cost`` and ``benefit``; in the trust game a unit invested
    costs the investor one and is worth ``multiplier`` to the responder; ``None`` in the market,
    where no move is a gift."""
    game = rules.get("game")
    if game in (DONATION.name, PRISONERS.name):
        return float(rules["cost"]), float(rules["benefit"])
    if game == TRUST.name:
        return 1.0, float(rules["multiplier"])
    return None


def donation_payoffs(action: str, cost: float, benefit: float) -> tuple[float, float]:
    """(donor, recipient) of a donation decision."""
    return (-cost, benefit) if action == "cooperate" else (0.0, 0.0)


def prisoners_payoff(mine: str | None, theirs: str | None, cost: float, benefit: float) -> float:
    """A player's payoff: the donation game played both ways (``None``: no move yet)."""
    return (benefit if theirs == "C" else 0.0) - (cost if mine == "C" else 0.0)


def trust_received(investment: float, multiplier: float) -> float:
    """What the responder receives of an investment."""
    return multiplier * investment


def trust_payoffs(investment: float, returned: float, multiplier: float) -> tuple[float, float]:
    """(investor, responder) net payoffs of one trust interaction."""
    return returned - investment, trust_received(investment, multiplier) - returned


def market_payoffs(quality: str, choice: str) -> tuple[float, float]:
    """(seller, buyer) payoffs of a sale."""
    return MARKET_PAYOFFS[quality, choice]


# -- bus payloads -----------------------------------------------------------------------------


class GameOptions(TypedDict, total=False):
    """The constructor options in force, as the rules message and the summary state them."""

    game: str
    agents: list[str]
    entrant: str | None  # the entrant's agent id
    n_agents: int
    cost: float
    benefit: float
    multiplier: float
    initial_resources: float
    n_sellers: int
    n_buyers: int
    discount: float
    gossip: bool
    gossip_reach: float  # the donation game's, stated only when below 1: see :mod:`.reach`
    schedule: str
    pairs_per_round: int | None
    entrant_round: int | None


class RulesPayload(GameOptions, total=False):
    """``rules``: public, to everyone, first message of an episode (turn 1). The settings a
    player is told: ``game``, the constructor options in force (``entrant`` renamed
    ``entrant_mode``), ``rounds`` the episode really lasts, ``entrant`` (id or None), ``agents``."""

    entrant_mode: str | None
    rounds: int


class MatchPayload(TypedDict):
    """``match``: private, to the pair, at the start of a round: roles and both stocks."""

    round: int
    roles: dict[str, str]
    resources: dict[str, float]


class ActionPayload(TypedDict):
    """``action``: private, to the agent acted upon only. ``action`` is the move's choice
    (``"cooperate"``, ``"C"``, ``"H"``, ``"c"``...) or, in the trust game, ``{"invest": I}``
    (to the responder, before it decides) and ``{"return": R}`` (to the investor)."""

    round: int
    actor: str
    target: str
    action: Any


class GossipPayload(TypedDict):
    """``gossip``: to everyone: who said what about whom, in which tone."""

    round: int
    author: str
    about: str
    tone: str
    message: str | None


#: what each game's rules message must state for a player to know the game
RULES_NEEDED: Mapping[str, tuple[str, ...]] = {
    "donation": (
        "gossip",
        "discount",
        "n_agents",
        "rounds",
        "cost",
        "benefit",
        "initial_resources",
    ),
    "prisoners": ("gossip", "discount", "n_agents", "rounds", "cost", "benefit"),
    "trust": ("gossip", "discount", "n_agents", "rounds", "multiplier", "initial_resources"),
    "market": ("gossip", "discount", "n_agents", "rounds", "n_sellers"),
}


def check_rules(payload: Mapping[str, Any]) -> RulesPayload:
    """The rules payload, checked to name a game and state what its players need."""
    game = payload.get("game")
    if game not in GAMES:
        raise ValueError(f"rules message: game must be one of {', '.join(GAMES)}, got {game!r}")
    missing = [key for key in RULES_NEEDED[game] if key not in payload]
    if missing:
        raise ValueError(f"rules message: the {game} game's rules lack {', '.join(missing)}")
    return RulesPayload(**payload)  # type: ignore[typeddict-item]


# -- interaction records (``summary()["interactions"]``, read by the analysis) ----------------


class DonationInteraction(TypedDict):
    round: int
    donor: str
    recipient: str
    action: str | None
    donor_before: float
    recipient_before: float
    donation: float
    benefit: float
    ratio: float  # the donation as a share of the donor's stock before it
    tone: str | None
    message: str | None
    invalid: bool  # the action was a fallback


class PrisonersInteraction(TypedDict):
    round: int
    players: list[str]
    actions: dict[str, str]
    payoffs: dict[str, float]
    tones: dict[str, str | None]
    messages: dict[str, str | None]


class TrustInteraction(TypedDict):
    round: int
    investor: str
    responder: str
    investor_before: float
    responder_before: float
    investment: float
    returned: float
    payoffs: dict[str, float]
    tones: dict[str, str | None]
    messages: dict[str, str | None]


class MarketInteraction(TypedDict):
    round: int
    seller: str
    buyer: str
    quality: str | None
    choice: str | None
    payoffs: dict[str, float]
    tone: str | None
    message: str | None


Interaction = DonationInteraction | PrisonersInteraction | TrustInteraction | MarketInteraction


class GossipSummary(GameOptions, total=False):
    """An episode's ``summary()`` (the record's ``summary``): ``game``, the constructor options in
    force (as the rules message states them, ``entrant`` being the entrant's id), the final
    ``resources`` (``payoffs`` in the market) by agent, and the ``interactions`` in order."""

    rounds: int | None  # the option as given (the rules message states the real count)
    resources: dict[str, float]
    payoffs: dict[str, float]
    interactions: list[Interaction]
