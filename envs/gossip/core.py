"""Pure rules and state of the four ALIGN gossip games: no I/O, no bus, no text.

Every game is a sequence of *rounds*; a round pairs agents (one pair per round in the
reference schedules, several disjoint pairs with ``schedule="random"``) and runs through a
fixed list of *phases*. A phase says which member of each pair decides what:

| game        | roles (first, second)    | phases (gossip on)                                      |
|-------------|--------------------------|---------------------------------------------------------|
| `donation`  | donor, recipient         | donor `donate`; recipient `gossip`                      |
| `prisoners` | player, player           | both `play`; both `gossip`                              |
| `trust`     | investor, responder      | investor `invest`; responder `return`; both `gossip`    |
| `market`    | seller, buyer            | seller `sell` and buyer `buy` at once; buyer `gossip`   |

With gossip off the gossip phase is dropped. :meth:`GossipGame.pending` lists the decisions
due now; :meth:`GossipGame.play` takes the choices (already in the game's own terms:
``"cooperate"``, a tone index, an amount...), checks all of them before changing anything, and
returns the step's rewards and the *events* an adapter may publish: ``("action", target,
payload)`` for the agent acted upon only, ``("gossip", None, payload)`` for everyone.

Schedules (``rounds_*`` functions) are pure functions of the agent count and a numpy Generator.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from functools import cache
from itertools import combinations
from typing import Any

import numpy as np
from socialsim.envs.gossip.norms import TONES

Pair = tuple[int, int]
Schedule = list[list[Pair]]

ENTRANT_MODES = (None, "isolated", "joins")
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
SCHEDULES = ("align", "random")
NEUTRAL = TONES.index("neutral")


# -- schedules --------------------------------------------------------------------------------


@cache
def _align_pairs(n: int) -> tuple[Pair, ...]:
    """The reference's donor->recipient order; see :func:`align_schedule`.

    The depth-first search runs on an explicit stack (N(N-1)/2 levels would pass Python's
    recursion limit from N = 46).
    """
    pairs = list(combinations(range(n), 2))
    quota = math.ceil((n - 1) / 2)
    donor_count = [0] * n
    recipient_count = [0] * n
    last = [""] * n  # "D", "R" or "" (not played yet)
    used = [False] * len(pairs)

    def next_move(start: int, turn: int) -> tuple[int, int] | None:
        # Every level scans all pairs from the first one: the reference's search does, and
        # the order it finds depends on it. ``turn`` 0 is (a, b), 1 is (b, a).
        for index in range(start, len(pairs)):
            if used[index]:
                continue
            a, b = pairs[index]
            for orientation in range(turn if index == start else 0, 2):
                donor, recipient = (a, b) if orientation == 0 else (b, a)
                if donor_count[donor] >= quota or recipient_count[recipient] >= quota:
                    continue
                if last[donor] == "D" or last[recipient] == "R":
                    continue
                return index, orientation
        return None

    stack: list[tuple[int, int, str, str]] = []  # (pair index, orientation, saved last roles)
    start, turn = 0, 0
    while len(stack) < len(pairs):
        move = next_move(start, turn)
        if move is None:
            if not stack:  # pragma: no cover - the search succeeds for every n the tests reach
                raise ValueError(f"n_agents: no alternating schedule exists for {n} agents")
            index, orientation, saved_donor, saved_recipient = stack.pop()
            a, b = pairs[index]
            donor, recipient = (a, b) if orientation == 0 else (b, a)
            used[index] = False
            donor_count[donor] -= 1
            recipient_count[recipient] -= 1
            last[donor], last[recipient] = saved_donor, saved_recipient
            start, turn = index, orientation + 1
            continue
        index, orientation = move
        a, b = pairs[index]
        donor, recipient = (a, b) if orientation == 0 else (b, a)
        stack.append((index, orientation, last[donor], last[recipient]))
        used[index] = True
        donor_count[donor] += 1
        recipient_count[recipient] += 1
        last[donor], last[recipient] = "D", "R"
        start, turn = 0, 0
    return tuple(
        (a, b) if o == 0 else (b, a) for a, b, o in ((*pairs[i], o) for i, o, _, _ in stack)
    )


def align_schedule(n: int) -> Schedule:
    """The reference (ALIGN) schedule of the donation and trust games: one pair per round.

    Every unordered pair meets exactly once; each agent's appearances alternate between the
    first role (donor, investor) and the second; nobody takes a role more than
    ``ceil((n - 1) / 2)`` times. The order is the first one a depth-first search finds that
    scans the pairs in ``itertools.combinations`` order and tries ``(a, b)`` before ``(b, a)``.
    """
    return [[pair] for pair in _align_pairs(n)]


def circle_schedule(n: int) -> Schedule:
    """Round-robin by the circle method (the reference's prisoner's dilemma order).

    A bye is added for odd ``n``. Each of the ``m - 1`` circle rounds pairs position ``i`` with
    position ``-(i + 1)``, then everyone but the first rotates one place; the circle rounds are
    flattened to one match per round.
    """
    players: list[int | None] = list(range(n))
    if n % 2:
        players.append(None)
    m = len(players)
    order: Schedule = []
    for _ in range(m - 1):
        for i in range(m // 2):
            a, b = players[i], players[-(i + 1)]
            if a is not None and b is not None:
                order.append([(a, b)])
        players = [players[0], players[-1], *players[1:-1]]
    return order


def isolated_entrant_schedule(n: int) -> Schedule:
    """The reference's entrant schedule: the entrant (the last index) meets each other agent
    once, in index order, taking the first role (donor) in its 1st, 3rd... match and the second
    role in the others; the other agents never meet each other."""
    entrant = n - 1
    return [[(entrant, i) if i % 2 == 0 else (i, entrant)] for i in range(n - 1)]


def random_schedule(
    n: int,
    rounds: int,
    rng: np.random.Generator,
    pairs_per_round: int | None = None,
    entrant_round: int | None = None,
) -> Schedule:
    """Seeded random matching: each round a uniformly random set of disjoint ordered pairs.

    ``pairs_per_round`` defaults to as many as fit. With ``entrant_round`` the last agent sits
    out of rounds ``1 .. entrant_round - 1`` and is matched like everyone else from then on.
    """
    order: Schedule = []
    everyone = np.arange(n)
    before_entry = everyone[:-1]
    for r in range(1, rounds + 1):
        active = before_entry if entrant_round is not None and r < entrant_round else everyone
        shuffled = rng.permutation(active)
        fit = len(shuffled) // 2
        count = fit if pairs_per_round is None else min(pairs_per_round, fit)
        order.append([(int(shuffled[2 * k]), int(shuffled[2 * k + 1])) for k in range(count)])
    return order


def market_schedule(n_sellers: int, n_buyers: int, rng: np.random.Generator) -> Schedule:
    """Every seller meets every buyer once, one pair per round, in a seeded shuffled order.

    Sellers are indices ``0 .. n_sellers - 1`` and buyers the rest (the reference shuffles with
    an unseeded generator; here the episode seed fixes the order).
    """
    pairs = [(s, n_sellers + b) for s in range(n_sellers) for b in range(n_buyers)]
    return [[pairs[int(i)]] for i in rng.permutation(len(pairs))]


def random_market_schedule(
    n_sellers: int, n_buyers: int, rounds: int, rng: np.random.Generator
) -> Schedule:
    """Each round every seller meets a distinct random buyer (as many pairs as fit)."""
    order: Schedule = []
    count = min(n_sellers, n_buyers)
    for _ in range(rounds):
        sellers = rng.permutation(n_sellers)[:count]
        buyers = rng.permutation(n_buyers)[:count]
        order.append([(int(s), n_sellers + int(b)) for s, b in zip(sellers, buyers, strict=True)])
    return order


# -- argument checks ----------------------------------------------------------------------------


def check_int(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name}: must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_number(name: str, value: Any, minimum: float = 0.0, maximum: float = math.inf) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float, np.integer, np.floating))
        or not minimum <= value <= maximum
    ):
        bound = f"in [{minimum}, {maximum}]" if maximum < math.inf else f">= {minimum}"
        raise ValueError(f"{name}: must be a number {bound}, got {value!r}")
    return float(value)


def check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{name}: must be true or false, got {value!r}")
    return value


# -- the games ----------------------------------------------------------------------------------


class GossipGame:
    """State and rules shared by the four games. Subclasses set ``game``, ``roles``,
    ``phases`` and implement :meth:`_resolve` and :meth:`_check_choice`."""

    game = ""
    roles: tuple[str, str] = ("", "")
    #: each phase maps the position in the pair (0 first, 1 second) to the decision due
    phases: tuple[Mapping[int, str], ...] = ()
    #: the choice applied when an agent's action is forbidden for the decision at hand
    fallbacks: Mapping[str, Any] = {}

    def __init__(self, agents: Sequence[str], *, gossip: bool, initial_resources: float):
        self.agents = tuple(agents)
        self.n = len(self.agents)
        self.gossip = gossip
        self.initial_resources = initial_resources
        self.active_phases = tuple(p for p in self.phases if gossip or "gossip" not in p.values())
        self.schedule: Schedule = []

    # -- lifecycle ------------------------------------------------------------------------------

    def make_schedule(self, rng: np.random.Generator) -> Schedule:
        raise NotImplementedError

    def reset(self, rng: np.random.Generator) -> None:
        self.schedule = self.make_schedule(rng)
        self.resources = np.full(self.n, self.initial_resources, dtype=np.float64)
        self.tone_counts = np.zeros((self.n, len(TONES)), dtype=np.int64)
        self.interactions: list[dict[str, Any]] = []
        self._enter_round(0)
        self.phase_index = 0
        self.done = not self.schedule
        self._open: list[dict[str, Any]] = []  # the interaction record of each pair this round
        self._pending: dict[int, tuple[str, int, int]] = {}
        self._fallbacks: Collection[int] = ()
        if not self.done:
            self._start_round()

    def _enter_round(self, index: int) -> None:
        # ``round`` and ``pairs`` are read on every step: plain attributes, set once per round.
        self.round_index = index
        last = min(index, len(self.schedule) - 1)
        self.round = last + 1  # the current round number, from 1 (the last one once over)
        self.pairs: list[Pair] = self.schedule[last] if self.schedule else []

    def role_of(self, agent: int) -> tuple[str, int] | None:
        """``(role, counterpart)`` of ``agent`` this round, or ``None`` if it sits out."""
        for pair in self.pairs:
            if agent in pair:
                position = pair.index(agent)
                return self.roles[position], pair[1 - position]
        return None

    def pending(self) -> dict[int, tuple[str, int, int]]:
        """agent -> ``(decision, counterpart, position in its pair)`` for the decisions due now."""
        return self._pending

    def _start_round(self) -> None:
        self._open = [self._open_interaction(pair) for pair in self.pairs]
        self._set_pending()

    def _set_pending(self) -> None:
        phase = self.active_phases[self.phase_index]
        self._pending = {
            pair[position]: (decision, pair[1 - position], position)
            for pair in self.pairs
            for position, decision in phase.items()
        }

    # -- a step ---------------------------------------------------------------------------------

    def check(self, agent: int, choice: Any) -> Any:
        """Raise ``ValueError`` if ``choice`` is out of range for ``agent``'s pending decision."""
        decision, counterpart, _ = self._pending[agent]
        if decision == "gossip":
            tone, message = choice
            if not (isinstance(tone, int) and 0 <= tone < len(TONES)):
                raise ValueError(
                    f"tone: must be an index 0-{len(TONES) - 1} of {TONES}, got {tone!r}"
                )
            if message is not None and not isinstance(message, str):
                raise ValueError(f"message: must be a string, got {type(message).__name__}")
            return choice
        return self._check_choice(agent, decision, counterpart, choice)

    def _check_choice(self, agent: int, decision: str, counterpart: int, choice: Any) -> Any:
        raise NotImplementedError

    def play(
        self, choices: Mapping[int, Any], fallbacks: Collection[int] = ()
    ) -> tuple[dict[int, float], list[tuple]]:
        """Apply the choices of every agent with a pending decision; return (rewards, events).

        Every choice is checked before any state changes, so a ``ValueError`` leaves the game as
        it was. ``fallbacks`` names the agents whose choice is a fallback for a forbidden action
        (the donation record marks them ``invalid``).
        """
        self._fallbacks = fallbacks
        if self.done:
            raise ValueError("the game is over; reset it before playing again")
        missing = [self.agents[a] for a in self._pending if a not in choices]
        if missing:
            raise ValueError(f"actions: no choice for {missing}, who must decide now")
        checked = {agent: self.check(agent, choices[agent]) for agent in self._pending}
        rewards: dict[int, float] = {}
        events: list[tuple] = []
        phase = self.active_phases[self.phase_index]
        for pair, record in zip(self.pairs, self._open, strict=True):
            picks = {position: checked[pair[position]] for position in phase}
            if "gossip" in phase.values():
                self._gossip(pair, record, picks, events)
            else:
                self._resolve(self.phase_index, pair, record, picks, rewards, events)
        self.phase_index += 1
        if self.phase_index == len(self.active_phases):
            self.interactions.extend(self._open)
            self.phase_index = 0
            self._enter_round(self.round_index + 1)
            if self.round_index == len(self.schedule):
                self.done = True
                self._pending = {}
                return rewards, events
            self._start_round()
        else:
            self._set_pending()
        return rewards, events

    def _gossip(self, pair: Pair, record: dict, picks: Mapping[int, Any], events: list) -> None:
        for position, (tone, message) in picks.items():
            author, about = pair[position], pair[1 - position]
            self.tone_counts[about, tone] += 1
            self._record_tone(record, position, TONES[tone], message)
            payload = {
                "round": self.round,
                "author": self.agents[author],
                "about": self.agents[about],
                "tone": TONES[tone],
                "message": message,
            }
            events.append(("gossip", None, payload))

    def _record_tone(self, record: dict, position: int, tone: str, message: str | None) -> None:
        raise NotImplementedError

    def _open_interaction(self, pair: Pair) -> dict[str, Any]:
        raise NotImplementedError

    def _resolve(
        self,
        phase: int,
        pair: Pair,
        record: dict,
        picks: Mapping[int, Any],
        rewards: dict,
        events: list,
    ) -> None:
        raise NotImplementedError

    def _action_event(self, actor: int, target: int, action: Any, events: list) -> None:
        payload = {
            "round": self.round,
            "actor": self.agents[actor],
            "target": self.agents[target],
            "action": action,
        }
        events.append(("action", target, payload))

    def _pay(self, rewards: dict[int, float], agent: int, amount: float) -> None:
        self.resources[agent] += amount
        rewards[agent] = rewards.get(agent, 0.0) + amount


class PeerGame(GossipGame):
    """A game among peers (donation, prisoners, trust): who meets whom follows the matching
    options, see :func:`pairwise_schedule`."""

    #: the reference implementation's order of the pairs
    reference_order = staticmethod(align_schedule)

    def __init__(
        self,
        agents: Sequence[str],
        *,
        gossip: bool,
        initial_resources: float,
        schedule: str = "align",
        rounds: int | None = None,
        pairs_per_round: int | None = None,
        entrant: str | None = None,
        entrant_round: int | None = None,
    ):
        super().__init__(agents, gossip=gossip, initial_resources=initial_resources)
        self.schedule_name = schedule
        self.rounds = rounds
        self.pairs_per_round = pairs_per_round
        self.entrant = entrant
        self.entrant_round = entrant_round

    def make_schedule(self, rng: np.random.Generator) -> Schedule:
        return pairwise_schedule(self, rng, self.reference_order)


class DonationGame(PeerGame):
    """The donation game: a donor pays ``cost`` for its recipient to gain ``benefit``, or not."""

    game = "donation"
    roles = ("donor", "recipient")
    phases = ({0: "donate"}, {1: "gossip"})
    fallbacks = {"donate": "defect", "gossip": (NEUTRAL, None)}

    def __init__(
        self,
        agents: Sequence[str],
        *,
        cost: float = 1.0,
        benefit: float = 5.0,
        initial_resources: float = 10.0,
        gossip: bool = True,
        **matching: Any,
    ):
        super().__init__(agents, gossip=gossip, initial_resources=initial_resources, **matching)
        self.cost = cost
        self.benefit = benefit

    def can_donate(self, agent: int) -> bool:
        return self.resources[agent] >= self.cost

    def _check_choice(self, agent: int, decision: str, counterpart: int, choice: Any) -> Any:
        if choice not in ("cooperate", "defect"):
            raise ValueError(f"action: must be 'cooperate' or 'defect', got {choice!r}")
        return choice

    def _open_interaction(self, pair: Pair) -> dict[str, Any]:
        donor, recipient = pair
        return {
            "round": self.round,
            "donor": self.agents[donor],
            "recipient": self.agents[recipient],
            "action": None,
            "donor_before": float(self.resources[donor]),
            "recipient_before": float(self.resources[recipient]),
            "donation": 0.0,
            "benefit": 0.0,
            "ratio": 0.0,
            "tone": None,
            "message": None,
            "invalid": False,
        }

    def _resolve(self, phase, pair, record, picks, rewards, events) -> None:
        donor, recipient = pair
        action = picks[0]
        record["invalid"] = donor in self._fallbacks
        if action == "cooperate" and not self.can_donate(donor):
            action = "defect"  # the adapter masks this; a core caller gets the same fallback
            record["invalid"] = True
        record["action"] = action
        if action == "cooperate":
            before = self.resources[donor]
            self._pay(rewards, donor, -self.cost)
            self._pay(rewards, recipient, self.benefit)
            record["donation"] = self.cost
            record["benefit"] = self.benefit
            record["ratio"] = self.cost / before if before else 0.0
        else:
            rewards.setdefault(donor, 0.0)
            rewards.setdefault(recipient, 0.0)
        self._action_event(donor, recipient, action, events)

    def _record_tone(self, record, position, tone, message) -> None:
        record["tone"] = tone
        record["message"] = message


class PrisonersGame(PeerGame):
    """Both players choose C or D unseen; payoffs are the donation game played both ways."""

    reference_order = staticmethod(circle_schedule)  # round-robin by the circle method

    game = "prisoners"
    roles = ("player", "player")
    phases = ({0: "play", 1: "play"}, {0: "gossip", 1: "gossip"})
    fallbacks = {"play": "D", "gossip": (NEUTRAL, None)}

    def __init__(
        self,
        agents: Sequence[str],
        *,
        cost: float = 1.0,
        benefit: float = 5.0,
        initial_resources: float = 0.0,
        gossip: bool = True,
        **matching: Any,
    ):
        super().__init__(agents, gossip=gossip, initial_resources=initial_resources, **matching)
        self.cost = cost
        self.benefit = benefit

    def make_schedule(self, rng: np.random.Generator) -> Schedule:
        if self.entrant == "isolated":
            # the reference's entrant is always the first player of its matches
            return [[(self.n - 1, i)] for i in range(self.n - 1)][: self.rounds]
        return super().make_schedule(rng)

    def payoff(self, mine: str, theirs: str) -> float:
        return (self.benefit if theirs == "C" else 0.0) - (self.cost if mine == "C" else 0.0)

    def _check_choice(self, agent, decision, counterpart, choice) -> Any:
        if choice not in ("C", "D"):
            raise ValueError(f"action: must be 'C' or 'D', got {choice!r}")
        return choice

    def _open_interaction(self, pair: Pair) -> dict[str, Any]:
        a, b = (self.agents[i] for i in pair)
        return {
            "round": self.round,
            "players": [a, b],
            "actions": {},
            "payoffs": {},
            "tones": {a: None, b: None},
            "messages": {a: None, b: None},
        }

    def _resolve(self, phase, pair, record, picks, rewards, events) -> None:
        a, b = pair
        for position, agent in enumerate(pair):
            mine, theirs = picks[position], picks[1 - position]
            payoff = self.payoff(mine, theirs)
            self._pay(rewards, agent, payoff)
            record["actions"][self.agents[agent]] = mine
            record["payoffs"][self.agents[agent]] = payoff
        self._action_event(a, b, picks[0], events)
        self._action_event(b, a, picks[1], events)

    def _record_tone(self, record, position, tone, message) -> None:
        author = record["players"][position]
        record["tones"][author] = tone
        record["messages"][author] = message


class TrustGame(PeerGame):
    """The investor sends I of its resources; the responder gets ``multiplier`` x I and
    returns R of it."""

    game = "trust"
    roles = ("investor", "responder")
    phases = ({0: "invest"}, {1: "return"}, {0: "gossip", 1: "gossip"})
    fallbacks = {"invest": 0.0, "return": 0.0, "gossip": (NEUTRAL, None)}

    def __init__(
        self,
        agents: Sequence[str],
        *,
        multiplier: float = 3.0,
        initial_resources: float = 5.0,
        gossip: bool = True,
        **matching: Any,
    ):
        super().__init__(agents, gossip=gossip, initial_resources=initial_resources, **matching)
        self.multiplier = multiplier

    def limit(self, agent: int) -> float:
        """The most ``agent`` may send for its pending decision (invest or return)."""
        decision, counterpart, position = self._pending[agent]
        if decision == "invest":
            return max(float(self.resources[agent]), 0.0)
        record = self._open[self._pair_index(agent)]
        return self.multiplier * record["investment"]

    def _pair_index(self, agent: int) -> int:
        for index, pair in enumerate(self.pairs):
            if agent in pair:
                return index
        raise KeyError(agent)  # pragma: no cover - only called for agents with a decision

    def _check_choice(self, agent, decision, counterpart, choice) -> Any:
        limit = self.limit(agent)
        if (
            isinstance(choice, bool)
            or not isinstance(choice, (int, float, np.integer, np.floating))
            or not 0.0 <= choice <= limit + 1e-9
        ):
            what = (
                "own resources" if decision == "invest" else f"{self.multiplier:g} x the investment"
            )
            raise ValueError(f"amount: must be a number in [0, {limit:g}] ({what}), got {choice!r}")
        return min(float(choice), limit)

    def _open_interaction(self, pair: Pair) -> dict[str, Any]:
        investor, responder = pair
        i, r = self.agents[investor], self.agents[responder]
        return {
            "round": self.round,
            "investor": i,
            "responder": r,
            "investor_before": float(self.resources[investor]),
            "responder_before": float(self.resources[responder]),
            "investment": 0.0,
            "returned": 0.0,
            "payoffs": {i: 0.0, r: 0.0},
            "tones": {i: None, r: None},
            "messages": {i: None, r: None},
        }

    def _resolve(self, phase, pair, record, picks, rewards, events) -> None:
        investor, responder = pair
        i, r = self.agents[investor], self.agents[responder]
        if phase == 0:
            amount = picks[0]
            self._pay(rewards, investor, -amount)
            self._pay(rewards, responder, self.multiplier * amount)
            record["investment"] = amount
            self._action_event(investor, responder, {"invest": amount}, events)
        else:
            amount = picks[1]
            self._pay(rewards, responder, -amount)
            self._pay(rewards, investor, amount)
            record["returned"] = amount
            record["payoffs"] = {
                i: -record["investment"] + amount,
                r: self.multiplier * record["investment"] - amount,
            }
            self._action_event(responder, investor, {"return": amount}, events)

    def _record_tone(self, record, position, tone, message) -> None:
        author = record["investor"] if position == 0 else record["responder"]
        record["tones"][author] = tone
        record["messages"][author] = message


#: (seller, buyer) payoffs of the product-choice market: price minus cost, value minus price
MARKET_PAYOFFS: dict[tuple[str, str], tuple[float, float]] = {
    ("H", "c"): (2.0, 3.0),
    ("H", "s"): (0.0, 2.0),
    ("L", "c"): (3.0, 0.0),
    ("L", "s"): (1.0, 1.0),
    ("H", "none"): (0.0, 0.0),
    ("L", "none"): (0.0, 0.0),
}


class MarketGame(GossipGame):
    """Sellers choose quality H or L; buyers, unseeing, choose customised, standard or none."""

    game = "market"
    roles = ("seller", "buyer")
    phases = ({0: "sell", 1: "buy"}, {1: "gossip"})
    fallbacks = {"sell": "L", "buy": "none", "gossip": (NEUTRAL, None)}

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
            return random_market_schedule(
                self.n_sellers, self.n_buyers, self.rounds or self.n_buyers, rng
            )
        return market_schedule(self.n_sellers, self.n_buyers, rng)[: self.rounds]

    def _check_choice(self, agent, decision, counterpart, choice) -> Any:
        allowed = ("H", "L") if decision == "sell" else ("c", "s", "none")
        if choice not in allowed:
            raise ValueError(
                f"action: a {decision} choice must be one of {allowed}, got {choice!r}"
            )
        return choice

    def _open_interaction(self, pair: Pair) -> dict[str, Any]:
        seller, buyer = pair
        return {
            "round": self.round,
            "seller": self.agents[seller],
            "buyer": self.agents[buyer],
            "quality": None,
            "choice": None,
            "payoffs": {},
            "tone": None,
            "message": None,
        }

    def _resolve(self, phase, pair, record, picks, rewards, events) -> None:
        seller, buyer = pair
        quality, choice = picks[0], picks[1]
        seller_payoff, buyer_payoff = MARKET_PAYOFFS[quality, choice]
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


def pairwise_schedule(game: Any, rng: np.random.Generator, reference) -> Schedule:
    """The schedule of a game among ``n`` peers (donation, prisoners, trust), by its options."""
    n = game.n
    if game.entrant == "isolated":
        order = isolated_entrant_schedule(n)
    elif game.schedule_name == "random":
        rounds = game.rounds if game.rounds is not None else default_random_rounds(n)
        entry = game.entrant_round if game.entrant == "joins" else None
        return random_schedule(n, rounds, rng, game.pairs_per_round, entry)
    else:
        order = reference(n)
    return order[: game.rounds] if game.rounds is not None else order


def default_random_rounds(n: int) -> int:
    """Random matching lasts ``2 (n - 1)`` rounds unless told otherwise."""
    return 2 * (n - 1)


def default_entrant_round(rounds: int) -> int:
    """An entrant that joins does so half way through."""
    return rounds // 2 + 1
