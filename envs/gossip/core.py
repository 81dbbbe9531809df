"""Pure rules and state of the four ALIGN gossip games: no I/O, no bus, no text.

(The base and the three peer games here, the market, whose pairs are a seller and a buyer, in
:mod:`.market`; who meets whom is in :mod:`.schedules`.)

Every game is a sequence of *rounds*; a round pairs agents (one pair per round in the
reference schedules, several disjoint pairs with ``schedule="random"``; see
:mod:`~socialsim.envs.gossip.schedules`) and runs through the fixed list of *phases* of its
:class:`~socialsim.envs.gossip.protocol.Game`. A phase says which member of each pair decides
what:

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
payload)`` for the agent acted upon only, ``("gossip", None, payload)`` for everyone. The
payoffs, payloads and interaction records are the protocol's.

* donation: cooperating costs the donor ``cost`` and gives the recipient ``benefit``; a donor
  whose stock is below ``cost`` cannot cooperate.
* prisoner's dilemma: each player's payoff is ``benefit`` if the other played C, minus ``cost``
  if it played C itself.
* trust: the investor sends ``I`` of its stock; the responder receives ``multiplier * I`` and
  returns ``R`` of it (at most what it received).
* market: sellers offer H or L; buyers, unseeing, choose c, s or none; payoffs by
  :data:`~socialsim.envs.gossip.protocol.MARKET_PAYOFFS`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np
from socialsim.envs.gossip import protocol, schedules
from socialsim.envs.gossip.protocol import GOSSIP, TONES
from socialsim.envs.gossip.reach import Hearsay
from socialsim.envs.gossip.schedules import Pair, Schedule


class GossipGame:
    """State and rules shared by the four games. Subclasses set ``spec`` (the game's
    :class:`~socialsim.envs.gossip.protocol.Game`: roles, phases, fallbacks) and implement
    :meth:`_resolve` and :meth:`_check_choice`."""

    spec: protocol.Game

    def __init__(self, agents: Sequence[str], *, gossip: bool, initial_resources: float):
        self.agents = tuple(agents)
        self.n = len(self.agents)
        self.gossip = gossip
        self.initial_resources = initial_resources
        self.game = self.spec.name
        self.roles = self.spec.roles
        self.fallbacks = self.spec.fallbacks
        self.active_phases = tuple(
            p for p in self.spec.phases if gossip or GOSSIP not in p.values()
        )
        self.schedule: Schedule = []
        self.hearsay: Hearsay | None = None  # only with the donation game's gossip_reach < 1

    # -- lifecycle ------------------------------------------------------------------------------

    def make_schedule(self, rng: np.random.Generator) -> Schedule:
        raise NotImplementedError

    def reset(self, rng: np.random.Generator) -> None:
        self.schedule = self.make_schedule(rng)
        # stocks change one at a time: Python floats, whose arithmetic numpy scalars only slow
        self.resources = [float(self.initial_resources)] * self.n
        # counts (exact in float32 up to 2**24), in the observation's dtype: it copies them whole
        self.tone_counts = np.zeros((self.n, len(TONES)), dtype=np.float32)
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
        last = index if index < len(self.schedule) else len(self.schedule) - 1
        self.round = last + 1  # the current round number, from 1 (the last one once over)
        self.pairs: list[Pair] = self.schedule[last] if self.schedule else []
        #: agent -> (position in its pair, counterpart) this round; absent when sitting out
        self.seats: dict[int, tuple[int, int]] = {}
        seats = self.seats
        for first, second in self.pairs:
            seats[first] = (0, second)
            seats[second] = (1, first)

    def pending(self) -> dict[int, tuple[str, int, int]]:
        """agent -> ``(decision, counterpart, position in its pair)`` for the decisions due now."""
        return self._pending

    def _start_round(self) -> None:
        self._open = [self._open_interaction(pair) for pair in self.pairs]
        if self.hearsay is not None:
            self.hearsay.draw(self.pairs)
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
        if decision == GOSSIP:
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
        if self.done:
            raise ValueError("the game is over; reset it before playing again")
        missing = [self.agents[a] for a in self._pending if a not in choices]
        if missing:
            raise ValueError(f"actions: no choice for {missing}, who must decide now")
        checked = {agent: self.check(agent, choices[agent]) for agent in self._pending}
        return self.advance(checked, fallbacks)

    def advance(
        self, checked: Mapping[int, Any], fallbacks: Collection[int] = ()
    ) -> tuple[dict[int, float], list[tuple]]:
        """:meth:`play` for choices that :meth:`check` returned, one per pending decision."""
        self._fallbacks = fallbacks
        rewards: dict[int, float] = {}
        events: list[tuple] = []
        phase = self.active_phases[self.phase_index]
        # one record per pair, made together in _start_round (zip's strict= costs a kwargs call)
        matches = zip(self.pairs, self._open)  # noqa: B905
        if GOSSIP in phase.values():
            for pair, record in matches:
                self._gossip(pair, record, phase, checked, events)
        else:
            for pair, record in matches:
                self._resolve(self.phase_index, pair, record, checked, rewards, events)
        self.phase_index += 1
        if self.phase_index == len(self.active_phases):
            self.interactions += self._open
            self.phase_index = 0
            self._enter_round(self.round_index + 1)
            if self.round_index == len(self.schedule):
                self.done = True
                self._pending = {}
                return rewards, events
            self._start_round()
            if self.hearsay is not None:
                events += self.hearsay.events(self.round)
        else:
            self._set_pending()
        return rewards, events

    def _gossip(
        self, pair: Pair, record: dict, phase: Mapping[int, str], checked: Mapping, events: list
    ) -> None:
        for position in phase:
            author, about = pair[position], pair[1 - position]
            tone, message = checked[author]
            self.tone_counts[about, tone] += 1
            self._record_tone(record, position, TONES[tone], message)
            payload: protocol.GossipPayload = {
                "round": self.round,
                "author": self.agents[author],
                "about": self.agents[about],
                "tone": TONES[tone],
                "message": message,
            }
            if self.hearsay is None:
                events.append((GOSSIP, None, payload))
            else:  # to the author and the agent it is about, one payload per message
                self.hearsay.publish(author, about, tone)
                events += [(GOSSIP, agent, dict(payload)) for agent in (author, about)]

    def _record_tone(self, record: dict, position: int, tone: str, message: str | None) -> None:
        raise NotImplementedError

    def _open_interaction(self, pair: Pair) -> dict[str, Any]:
        raise NotImplementedError

    def _resolve(
        self,
        phase: int,
        pair: Pair,
        record: dict,
        checked: Mapping[int, Any],
        rewards: dict,
        events: list,
    ) -> None:
        """Play phase ``phase`` of ``pair``'s match with the choices ``checked`` (by agent)."""
        raise NotImplementedError

    def _action_event(self, actor: int, target: int, action: Any, events: list) -> None:
        payload: protocol.ActionPayload = {
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
    reference_order = staticmethod(schedules.align_schedule)

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
        return schedules.pairwise_schedule(self, rng, self.reference_order)


class DonationGame(PeerGame):
    """The donation game: a donor pays ``cost`` for its recipient to gain ``benefit``, or not."""

    spec = protocol.DONATION

    def __init__(
        self,
        agents: Sequence[str],
        *,
        cost: float = 1.0,
        benefit: float = 5.0,
        initial_resources: float = 10.0,
        gossip: bool = True,
        gossip_reach: float = 1.0,
        **matching: Any,
    ):
        super().__init__(agents, gossip=gossip, initial_resources=initial_resources, **matching)
        self.cost = cost
        self.benefit = benefit
        self.gossip_reach = gossip_reach  # see :mod:`.reach`

    def reset(self, rng: np.random.Generator) -> None:
        if self.gossip_reach < 1:
            self.hearsay = Hearsay(self.agents, self.gossip_reach, rng)
        super().reset(rng)

    def can_donate(self, agent: int) -> bool:
        return self.resources[agent] >= self.cost

    def _check_choice(self, agent: int, decision: str, counterpart: int, choice: Any) -> Any:
        if choice not in ("cooperate", "defect"):
            raise ValueError(f"action: must be 'cooperate' or 'defect', got {choice!r}")
        return choice

    def _open_interaction(self, pair: Pair) -> protocol.DonationInteraction:
        donor, recipient = pair
        record: protocol.DonationInteraction = {
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
        return record

    def _resolve(self, phase, pair, record, checked, rewards, events) -> None:
        donor, recipient = pair
        action = checked[donor]
        record["invalid"] = donor in self._fallbacks
        if action == "cooperate" and not self.can_donate(donor):
            action = "defect"  # the adapter masks this; a core caller gets the same fallback
            record["invalid"] = True
        record["action"] = action
        if action == "cooperate":
            before = self.resources[donor]
            paid, gained = protocol.donation_payoffs(action, self.cost, self.benefit)
            self._pay(rewards, donor, paid)
            self._pay(rewards, recipient, gained)
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

    reference_order = staticmethod(schedules.circle_schedule)  # round-robin by the circle method
    spec = protocol.PRISONERS

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

    def _check_choice(self, agent, decision, counterpart, choice) -> Any:
        if choice not in ("C", "D"):
            raise ValueError(f"action: must be 'C' or 'D', got {choice!r}")
        return choice

    def _open_interaction(self, pair: Pair) -> protocol.PrisonersInteraction:
        a, b = self.agents[pair[0]], self.agents[pair[1]]
        record: protocol.PrisonersInteraction = {
            "round": self.round,
            "players": [a, b],
            "actions": {},
            "payoffs": {},
            "tones": {a: None, b: None},
            "messages": {a: None, b: None},
        }
        return record

    def _resolve(self, phase, pair, record, checked, rewards, events) -> None:
        a, b = pair
        moves = checked[a], checked[b]
        for position, agent in enumerate(pair):
            mine, theirs = moves[position], moves[1 - position]
            payoff = protocol.prisoners_payoff(mine, theirs, self.cost, self.benefit)
            self._pay(rewards, agent, payoff)
            record["actions"][self.agents[agent]] = mine
            record["payoffs"][self.agents[agent]] = payoff
        self._action_event(a, b, moves[0], events)
        self._action_event(b, a, moves[1], events)

    def _record_tone(self, record, position, tone, message) -> None:
        author = record["players"][position]
        record["tones"][author] = tone
        record["messages"][author] = message


class TrustGame(PeerGame):
    """The investor sends I of its resources; the responder gets ``multiplier`` x I and
    returns R of it."""

    spec = protocol.TRUST

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
        return protocol.trust_received(self._record_of(agent)["investment"], self.multiplier)

    def _record_of(self, agent: int) -> dict[str, Any]:
        for pair, record in zip(self.pairs, self._open, strict=True):
            if agent in pair:
                return record
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

    def _open_interaction(self, pair: Pair) -> protocol.TrustInteraction:
        investor, responder = pair
        i, r = self.agents[investor], self.agents[responder]
        record: protocol.TrustInteraction = {
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
        return record

    def _resolve(self, phase, pair, record, checked, rewards, events) -> None:
        investor, responder = pair
        i, r = self.agents[investor], self.agents[responder]
        if phase == 0:
            amount = checked[investor]
            self._pay(rewards, investor, -amount)
            self._pay(rewards, responder, protocol.trust_received(amount, self.multiplier))
            record["investment"] = amount
            self._action_event(investor, responder, {"invest": amount}, events)
        else:
            amount = checked[responder]
            self._pay(rewards, responder, -amount)
            self._pay(rewards, investor, amount)
            record["returned"] = amount
            investor_payoff, responder_payoff = protocol.trust_payoffs(
                record["investment"], amount, self.multiplier
            )
            record["payoffs"] = {i: investor_payoff, r: responder_payoff}
            self._action_event(responder, investor, {"return": amount}, events)

    def _record_tone(self, record, position, tone, message) -> None:
        author = record["investor"] if position == 0 else record["responder"]
        record["tones"][author] = tone
        record["messages"][author] = message
