"""PettingZoo adapters of the four gossip games (see ``socialsim.envs.gossip.core`` for the rules).

Each env is a :class:`pettingzoo.ParallelEnv`; ``env()`` of the shims gives the AEC form by
PettingZoo's own conversion. All four share one pattern:

* **Agents** ``agent_0 .. agent_{N-1}``; with an entrant it is the last one. Every agent is live
  for the whole episode; agents that do not decide at a step get ``infos[a]["decision"] = None``
  and an all-zero action mask, and their actions are ignored.
* **Observation** ``{"observation": float32 vector, "action_mask": int8 vector}``. The vector is
  ``[own resources (cumulative payoff in PD and market), one-hot role this round, one-hot
  counterpart this round, counts of each tone published so far about every agent (N x 5,
  agent-major)]``; the role and counterpart parts are zero for an agent sitting out.
* **Actions** one ``Discrete`` space per game covering every decision; the mask marks the legal
  subset. Language agents may pass a dict instead: ``{"action": index or name,
  "justification": str}`` for a move, ``{"tone": 0-4 or tone name, "message": str}`` for gossip
  (``tone`` indexes ``TONES``, not the action space), ``{"amount": float}`` in the trust game. A
  malformed action is a ``ValueError`` naming the agent, the expected form and what it got, with
  the state unchanged; a well-formed action that the mask forbids gets the decision's fallback
  and ``infos[agent]["invalid_action"] = {"reason", "fallback"}``.
* **Infos** ``{"decision", "round", "role", "counterpart"}`` (``role``/``counterpart`` ``None``
  when sitting out).
* **Bus** (``env.unwrapped.bus``, turn = round): ``rules`` (public, to everyone, once per
  episode at reset, before anything else, turn 1: the settings in force, see below), ``match``
  (private, to the pair, at the start of a round: roles and current resources), ``action``
  (private, to the agent acted upon only), ``gossip`` (to everyone: author, about, tone,
  message). The ``action`` payload's ``action`` is
  ``"cooperate"``/``"defect"`` (donation, to the recipient), ``"C"``/``"D"`` (PD, to each
  player), ``{"invest": I}`` (to the responder, before it decides) and ``{"return": R}`` (to
  the investor), ``"H"``/``"L"`` (to the buyer) and ``"c"``/``"s"``/``"none"`` (to the seller).
* **Rules message** (``kind="rules"``, channel ``"public"``, ``to="*"``): what a player is told
  of the game before it starts, so that agents never need the env's arguments repeated as
  their own options. Payload: ``{"game": "donation"|"prisoners"|"trust"|"market", every
  constructor argument a player needs (``n_agents``; ``cost``, ``benefit``,
  ``initial_resources`` in donation and PD; ``multiplier``, ``initial_resources`` in trust;
  ``n_sellers``, ``n_buyers`` in the market; ``discount``, ``gossip``, ``schedule``,
  ``pairs_per_round`` and ``entrant_round`` where the game has them), "rounds": the number of
  rounds this episode really lasts (an integer, whatever the ``rounds`` argument was),
  "entrant": the entrant's agent id or ``None``, "entrant_mode": ``"isolated"``/``"joins"``/
  ``None`` (peer games only), "agents": [ids]}``. The envs have no display-name option, so the
  payload names no display names (agents choose their own, e.g. the reference's). It carries no
  actor's action, so it reveals nothing the audit of ``action`` messages forbids.
* **Rewards** are the payoffs of the step (undiscounted; ``discount`` is recorded for metrics).
* **AEC form** (:class:`GossipAEC`, the shims' ``env()``): turn-based; only agents with a
  decision are selected, in id order, and the game moves when the last of them has acted. An
  action is checked when given: malformed raises at once, forbidden is flagged at once.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils import wrappers
from socialsim.envs.gossip import core
from socialsim.envs.gossip.norms import TONES

from socialsim.bus import ENV, EVERYONE, MessageBus

TONE_INDEX = {tone: i for i, tone in enumerate(TONES)}
AMOUNT_STEPS = 10  # trust amounts on the action grid are k/10 of the allowed maximum


class GossipEnv(ParallelEnv):
    """Shared adapter. Subclasses set ``metadata``, build ``self.game`` in ``__init__`` and
    define the action table ``ACTIONS`` (index -> (decision, value)) and ``NAMES`` (action name
    -> index) for the ``{"action": name}`` form."""

    metadata: dict[str, Any] = {"name": "", "render_modes": [], "is_parallelizable": True}
    ACTIONS: tuple[tuple[str, Any], ...] = ()
    NAMES: Mapping[str, int] = {}
    FIRST_TONE = 0

    def _setup(self, game: core.GossipGame, params: dict[str, Any], entrant: str | None) -> None:
        self.game = game
        self.params = params
        self.possible_agents = list(game.agents)
        self._index_of = {agent: i for i, agent in enumerate(self.possible_agents)}
        self.agents: list[str] = []
        self.entrant_id = self.possible_agents[-1] if entrant else None
        n = game.n
        self._roles = list(dict.fromkeys(game.roles))
        # the observation column of the role of each position in a pair
        self._role_cols = [1 + self._roles.index(role) for role in game.roles]
        self._seats: list[tuple[int, int]] = []  # (row, column) of this round's one-hots
        self._role_offset = 1
        self._counterpart_offset = 1 + len(self._roles)
        self._tone_offset = self._counterpart_offset + n
        size = self._tone_offset + n * len(TONES)
        n_actions = len(self.ACTIONS)
        self._action_space = spaces.Discrete(n_actions)
        self._observation_space = spaces.Dict(
            {
                "observation": spaces.Box(-np.inf, np.inf, shape=(size,), dtype=np.float32),
                "action_mask": spaces.Box(0, 1, shape=(n_actions,), dtype=np.int8),
            }
        )
        self._masks: dict[str, np.ndarray] = {}
        for index, (decision, _) in enumerate(self.ACTIONS):
            for kind in decision.split("|"):
                mask = self._masks.setdefault(kind, np.zeros(n_actions, dtype=np.int8))
                mask[index] = 1
        self._size = size
        # The observations of the current state, one row per agent, kept up to date as the game
        # moves (seats per round, resources on a payment, tone counts on a gossip) so that a step
        # hands out one copy instead of rebuilding them; the masks start from a zero matrix.
        self._base = np.zeros((n, size), dtype=np.float32)
        self._decisions_of = [tuple(kind.split("|")) for kind, _ in self.ACTIONS]
        self._no_masks = np.zeros((n, n_actions), dtype=np.int8)
        self.bus = MessageBus(self.possible_agents)
        self.turn = 0
        self._rng: np.random.Generator | None = None

    # -- spaces ---------------------------------------------------------------------------------

    def observation_space(self, agent: str) -> spaces.Dict:
        return self._observation_space

    def action_space(self, agent: str) -> spaces.Discrete:
        return self._action_space

    # -- episode --------------------------------------------------------------------------------

    def reset(self, seed: int | None = None, options: Mapping | None = None):
        if seed is not None or self._rng is None:
            self._rng = np.random.default_rng(seed)
        self.game.reset(self._rng)
        self.agents = list(self.possible_agents)
        self._base[:, : self._tone_offset] = 0.0
        self._seats = []
        self._base[:, 0] = self.game.resources
        self._base[:, self._tone_offset :] = self.game.tone_counts.reshape(1, -1)
        self.bus = MessageBus(self.possible_agents)
        self.turn = self.game.round
        self.bus.publish(
            turn=self.turn,
            sender=ENV,
            to=EVERYONE,
            channel="public",
            kind="rules",
            payload=self.rules(),
        )
        self._start_round()
        return self._observe(), self._infos()

    def rules(self) -> dict[str, Any]:
        """The payload of the ``rules`` message of the episode just reset (see the module
        docstring): the settings in force, with the actual number of rounds and the entrant's id."""
        payload: dict[str, Any] = {"game": self.game.game}
        for key, value in self.params.items():
            if key == "entrant":  # the mode; the id goes under "entrant", as in summary()
                payload["entrant_mode"] = value
            else:
                payload[key] = value
        payload["rounds"] = len(self.game.schedule)
        payload["entrant"] = self.entrant_id
        payload["agents"] = list(self.possible_agents)
        return payload

    def step(self, actions: Mapping[str, Any]):
        rewards, flags, done = self._advance(actions)
        observations = self._observe()
        infos = self._infos()
        for agent, flag in flags.items():
            infos[agent]["invalid_action"] = flag
        terminations = dict.fromkeys(self.agents, done)
        truncations = dict.fromkeys(self.agents, False)
        if done:
            self.agents = []
        return observations, rewards, terminations, truncations, infos

    def _advance(
        self, actions: Mapping[str, Any]
    ) -> tuple[dict[str, float], dict[str, dict], bool]:
        """Apply the actions of the agents with a decision and publish what the step reveals;
        return (rewards of every live agent, invalid-action flags by agent id, game over)."""
        game = self.game
        if game.done:
            raise ValueError("step: the episode is over; call reset()")
        pending = game.pending()
        ids = self.possible_agents
        missing = [ids[a] for a in pending if ids[a] not in actions]
        if missing:
            raise ValueError(f"actions: no action for {missing}, who must decide now")
        choices: dict[int, Any] = {}
        flags: dict[int, dict[str, Any]] = {}
        for agent, (decision, _, _) in pending.items():
            choices[agent] = self._decode(agent, decision, actions[ids[agent]], flags)
        return self._apply(choices, flags)

    def _apply(
        self, choices: dict[int, Any], flags: dict[int, dict[str, Any]]
    ) -> tuple[dict[str, float], dict[str, dict], bool]:
        """Play decoded choices (see :meth:`_advance`)."""
        game, ids = self.game, self.possible_agents
        round_before = game.round
        paid, events = game.play(choices, flags)  # checks every choice before changing the state
        base, publish = self._base, self.bus.publish
        for kind, target, payload in events:
            to = EVERYONE if target is None else (ids[target],)
            if kind == "gossip":
                channel = "gossip"
                # tone counts only move by a gossip, and the core publishes every one it counts
                about = self._index_of[payload["about"]]
                tone = TONE_INDEX[payload["tone"]]
                column = self._tone_offset + about * len(TONES) + tone
                base[:, column].fill(game.tone_counts.item(about, tone))  # fill: no broadcasting
            else:
                channel = "private"
            publish(
                turn=round_before, sender=ENV, to=to, channel=channel, kind=kind, payload=payload
            )
        rewards = dict.fromkeys(self.agents, 0.0)
        resources = game.resources
        for agent, amount in paid.items():  # resources only move by a payment
            base[agent, 0] = resources.item(agent)
            rewards[ids[agent]] = float(amount)
        if game.done:
            for row, col in self._seats:  # nobody has a role or a counterpart once it is over
                base[row, col] = 0.0
        else:
            self.turn = game.round
            if game.phase_index == 0:
                self._start_round()
        return rewards, {ids[a]: flag for a, flag in flags.items()} if flags else {}, game.done

    def check_action(self, agent_id: str, action: Any) -> tuple[Any, dict[str, Any] | None]:
        """Check ``agent_id``'s action for the decision due without changing anything: raise
        ``ValueError`` if malformed. Returns the core choice it stands for and the
        ``invalid_action`` flag if the mask forbids it (``(None, None)`` for an agent without a
        decision: its action is ignored)."""
        agent = self._index_of[agent_id]
        due = self.game.pending().get(agent)
        if due is None:
            return None, None
        flags: dict[int, dict[str, Any]] = {}
        choice = self._decode(agent, due[0], action, flags)
        self.game.check(agent, choice)
        return choice, flags.get(agent)

    def _start_round(self) -> None:
        """Tell each pair of the new round who they meet, in which role, and both stocks."""
        game, ids, base = self.game, self.possible_agents, self._base
        roles, role_cols, resources = game.roles, self._role_cols, game.resources
        offset = self._counterpart_offset
        for row, col in self._seats:  # the one-hots of the round before
            base[row, col] = 0.0
        role = self._role = [None] * game.n
        counterpart = self._counterpart = [None] * game.n
        seats = self._seats = []
        for first, second in game.pairs:
            first_id, second_id = ids[first], ids[second]
            role[first], role[second] = roles
            counterpart[first], counterpart[second] = second_id, first_id
            seats += (
                (first, role_cols[0]),
                (first, offset + second),
                (second, role_cols[1]),
                (second, offset + first),
            )
            self.bus.publish(
                turn=game.round,
                sender=ENV,
                to=(first_id, second_id),
                channel="private",
                kind="match",
                payload={
                    "round": game.round,
                    "roles": {first_id: roles[0], second_id: roles[1]},
                    "resources": {
                        first_id: float(resources[first]),
                        second_id: float(resources[second]),
                    },
                },
            )
        for row, col in seats:
            base[row, col] = 1.0

    # -- observations ---------------------------------------------------------------------------

    def _mask(self, agent: int, decision: str) -> np.ndarray:
        return self._masks[decision]

    def _observe(self) -> dict[str, dict[str, np.ndarray]]:
        """One matrix for everyone; each agent gets its own row (a fresh array every step, which
        later steps never write to)."""
        vectors = self._base.copy()
        masks = self._no_masks.copy()
        for index, (decision, _, _) in self.game.pending().items():  # empty once over
            masks[index] = self._mask(index, decision)
        return {
            agent: {"observation": vector, "action_mask": mask}
            # not strict: it would run the array iterators to their end, which costs an IndexError
            for agent, vector, mask in zip(self.possible_agents, vectors, masks, strict=False)
        }

    def observe_one(self, agent_id: str) -> dict[str, np.ndarray]:
        """The observation of one agent now (what :meth:`_observe` gives it), for the AEC form."""
        game = self.game
        index = self._index_of[agent_id]
        vector = np.zeros(self._size, dtype=np.float32)
        vector[self._tone_offset :] = game.tone_counts.ravel()
        vector[0] = game.resources[index]
        mask = np.zeros(len(self.ACTIONS), dtype=np.int8)
        if not game.done:
            role = self._role[index]
            if role is not None:
                vector[self._role_offset + self._roles.index(role)] = 1.0
                vector[
                    self._counterpart_offset + self.possible_agents.index(self._counterpart[index])
                ] = 1.0
            due = game.pending().get(index)
            if due is not None:
                mask[:] = self._mask(index, due[0])
        return {"observation": vector, "action_mask": mask}

    def _infos(self) -> dict[str, dict[str, Any]]:
        game = self.game
        pending = game.pending()
        number = game.round
        if game.done:
            return {
                agent: {"decision": None, "round": number, "role": None, "counterpart": None}
                for agent in self.possible_agents
            }
        ids = self.possible_agents
        infos = {
            agent: {"decision": None, "round": number, "role": role, "counterpart": counterpart}
            for agent, role, counterpart in zip(ids, self._role, self._counterpart, strict=False)
        }
        for index, due in pending.items():
            infos[ids[index]]["decision"] = due[0]
        return infos

    # -- actions --------------------------------------------------------------------------------

    def _expected(self) -> str:
        return (
            f"an action in Discrete({len(self.ACTIONS)}), {{'action': index or name, "
            "'justification': str}} or {'tone': 0-4 or tone name, 'message': str}"
        )

    def _bad(self, agent: int, action: Any) -> ValueError:
        return ValueError(
            f"{self.possible_agents[agent]}: expected {self._expected()}, got {action!r}"
        )

    def _decode(self, agent: int, decision: str, action: Any, flags: dict) -> Any:
        """The core choice an action stands for; a forbidden one becomes the fallback."""
        if type(action) is int and 0 <= action < len(self.ACTIONS):  # the common case first
            index, extra = action, None
        else:
            index, extra = self._index(agent, action)
        kind, value = self.ACTIONS[index]
        if decision not in self._decisions_of[index] or not self._mask(agent, decision)[index]:
            fallback = self.game.fallbacks[decision]
            shown = TONES[fallback[0]] if decision == "gossip" else fallback
            flags[agent] = {
                "reason": f"{self._describe(index)} is not allowed for a {decision} decision",
                "fallback": shown,
            }
            return fallback
        if kind == "gossip":
            return (value, extra)
        return self._value(agent, decision, value, extra)

    def _describe(self, index: int) -> str:
        kind, value = self.ACTIONS[index]
        return f"action {index} ({TONES[value] if kind == 'gossip' else value})"

    def _value(self, agent: int, decision: str, value: Any, extra: Any) -> Any:
        return value

    def _index(self, agent: int, action: Any) -> tuple[int, Any]:
        """``(action index, free text or exact amount)`` of an int or dict action."""
        if isinstance(action, Mapping):
            if "tone" in action:
                tone = action["tone"]
                if isinstance(tone, str) and tone.strip().lower() in TONE_INDEX:
                    tone = TONE_INDEX[tone.strip().lower()]
                if (
                    isinstance(tone, bool)
                    or not isinstance(tone, (int, np.integer))
                    or not 0 <= tone < len(TONES)
                ):
                    raise ValueError(
                        f"{self.possible_agents[agent]}: tone must be an index 0-{len(TONES) - 1} "
                        f"or one of {', '.join(TONES)}, got {tone!r}"
                    )
                message = action.get("message")
                if message is not None and not isinstance(message, str):
                    raise ValueError(
                        f"{self.possible_agents[agent]}: message must be a string, got {message!r}"
                    )
                return self.FIRST_TONE + int(tone), message
            if "action" in action:
                return self._index(agent, self._named(agent, action["action"], action))
            return self._mapping_index(agent, action)
        if (
            isinstance(action, bool)
            or not isinstance(action, (int, np.integer))
            or not 0 <= action < len(self.ACTIONS)
        ):
            raise self._bad(agent, action)
        return int(action), None

    def _named(self, agent: int, value: Any, action: Any) -> int:
        if isinstance(value, str):
            key = value.strip()
            index = self.NAMES.get(key, self.NAMES.get(key.lower()))
            if index is None:
                raise ValueError(
                    f"{self.possible_agents[agent]}: action name must be one of "
                    f"{', '.join(self.NAMES)}, got {value!r}"
                )
            return index
        if (
            isinstance(value, (int, np.integer))
            and not isinstance(value, bool)
            and 0 <= value < self.FIRST_TONE
        ):
            return int(value)
        raise self._bad(agent, action)

    def _mapping_index(self, agent: int, action: Mapping) -> tuple[int, Any]:
        raise self._bad(agent, action)

    # -- the record -----------------------------------------------------------------------------

    def summary(self) -> dict[str, Any]:
        game = self.game
        out: dict[str, Any] = {"game": game.game, **self.params}
        out["agents"] = list(self.possible_agents)
        out["entrant"] = self.entrant_id
        if game.game != "market":
            out["resources"] = {
                a: float(game.resources[i]) for i, a in enumerate(self.possible_agents)
            }
        else:
            out["payoffs"] = {
                a: float(game.resources[i]) for i, a in enumerate(self.possible_agents)
            }
        out["interactions"] = list(getattr(game, "interactions", []))
        return out

    def render(self) -> None:
        return None

    def close(self) -> None:
        return None


# -- argument checks shared by the peer games ---------------------------------------------------


#: the options of :func:`_peer_options` that the game core's matching takes as they are
MATCHING = ("schedule", "rounds", "pairs_per_round", "entrant", "entrant_round")


def _matching(options: Mapping[str, Any]) -> dict[str, Any]:
    return {key: options[key] for key in MATCHING}


def _peer_options(
    name: str,
    n_agents: Any,
    gossip: Any,
    discount: Any,
    schedule: Any,
    rounds: Any,
    pairs_per_round: Any,
    entrant: Any,
    entrant_round: Any,
) -> dict[str, Any]:
    n = core.check_int("n_agents", n_agents, 2)
    core.check_bool("gossip", gossip)
    core.check_number("discount", discount, 0.0, 1.0)
    if entrant == "none":  # TOML has no null: experiment files and grids write "none"
        entrant = None
    if entrant not in core.ENTRANT_MODES:
        raise ValueError(
            f"entrant: must be one of {', '.join(map(repr, core.ENTRANT_MODES))}, got {entrant!r}"
        )
    if schedule is None:
        schedule = "random" if entrant == "joins" else "align"
    if schedule not in core.SCHEDULES:
        raise ValueError(f"schedule: must be one of {', '.join(core.SCHEDULES)}, got {schedule!r}")
    if entrant == "joins" and schedule != "random":
        raise ValueError(
            "schedule: an entrant that joins needs schedule='random' (or leave schedule unset)"
        )
    if entrant == "isolated" and schedule != "align":
        raise ValueError(
            "schedule: the isolated entrant has its own schedule; leave schedule unset or 'align'"
        )
    if pairs_per_round is not None:
        core.check_int("pairs_per_round", pairs_per_round, 1)
        if schedule != "random":
            raise ValueError("pairs_per_round: only applies to schedule='random'")
    if rounds is not None:
        rounds = core.check_int("rounds", rounds, 1)
    if schedule == "align":
        # both reference orders (align and the circle method) play every pair once
        available = n - 1 if entrant == "isolated" else n * (n - 1) // 2
        if rounds is not None and rounds > available:
            raise ValueError(
                f"rounds: the {name} schedule has {available} rounds for {n} agents, got {rounds}"
            )
    elif rounds is None:
        rounds = core.default_random_rounds(n)
    if entrant_round is not None:
        if entrant != "joins":
            raise ValueError("entrant_round: only applies to entrant='joins'")
        entrant_round = core.check_int("entrant_round", entrant_round, 1)
    elif entrant == "joins":
        entrant_round = core.default_entrant_round(rounds)
    if entrant == "joins" and n < 3:
        raise ValueError(f"n_agents: an entrant that joins needs at least 3 agents, got {n}")
    return {
        "n_agents": n,
        "gossip": gossip,
        "discount": float(discount),
        "schedule": schedule,
        "rounds": rounds,
        "pairs_per_round": pairs_per_round,
        "entrant": entrant,
        "entrant_round": entrant_round,
    }


def _ids(n: int) -> list[str]:
    return [f"agent_{i}" for i in range(n)]


_TONE_ACTIONS = tuple(("gossip", i) for i in range(len(TONES)))


class DonationEnv(GossipEnv):
    """The donation game; see ``socialsim.envs.donation_v0``."""

    metadata = {"name": "donation_v0", "render_modes": [], "is_parallelizable": True}
    ACTIONS = (("donate", "defect"), ("donate", "cooperate"), *_TONE_ACTIONS)
    NAMES = {"defect": 0, "cooperate": 1, "D": 0, "C": 1}
    FIRST_TONE = 2

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
    ):
        options = _peer_options(
            "align",
            n_agents,
            gossip,
            discount,
            schedule,
            rounds,
            pairs_per_round,
            entrant,
            entrant_round,
        )
        cost = core.check_number("cost", cost)
        benefit = core.check_number("benefit", benefit)
        initial_resources = core.check_number("initial_resources", initial_resources)
        game = core.DonationGame(
            _ids(options["n_agents"]),
            cost=cost,
            benefit=benefit,
            initial_resources=initial_resources,
            gossip=gossip,
            **_matching(options),
        )
        params = {
            "cost": cost,
            "benefit": benefit,
            "initial_resources": initial_resources,
            **options,
        }
        self._setup(game, params, options["entrant"])
        self._cannot_give = self._masks["donate"].copy()
        self._cannot_give[1] = 0

    def _mask(self, agent: int, decision: str) -> np.ndarray:
        if decision == "donate" and not self.game.can_donate(agent):
            return self._cannot_give
        return self._masks[decision]


class PrisonersEnv(GossipEnv):
    """The prisoner's dilemma; see ``socialsim.envs.prisoners_v0``."""

    metadata = {"name": "prisoners_v0", "render_modes": [], "is_parallelizable": True}
    ACTIONS = (("play", "D"), ("play", "C"), *_TONE_ACTIONS)
    NAMES = {"D": 0, "C": 1, "defect": 0, "cooperate": 1}
    FIRST_TONE = 2

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
    ):
        options = _peer_options(
            "circle",
            n_agents,
            gossip,
            discount,
            schedule,
            rounds,
            pairs_per_round,
            entrant,
            entrant_round,
        )
        cost = core.check_number("cost", cost)
        benefit = core.check_number("benefit", benefit)
        initial_resources = core.check_number("initial_resources", initial_resources, -math.inf)
        game = core.PrisonersGame(
            _ids(options["n_agents"]),
            cost=cost,
            benefit=benefit,
            initial_resources=initial_resources,
            gossip=gossip,
            **_matching(options),
        )
        params = {
            "cost": cost,
            "benefit": benefit,
            "initial_resources": initial_resources,
            **options,
        }
        self._setup(game, params, options["entrant"])


class TrustEnv(GossipEnv):
    """The trust (investment) game; see ``socialsim.envs.trust_v0``."""

    metadata = {"name": "trust_v0", "render_modes": [], "is_parallelizable": True}
    ACTIONS = (
        *(("invest|return", k / AMOUNT_STEPS) for k in range(AMOUNT_STEPS + 1)),
        *_TONE_ACTIONS,
    )
    NAMES: Mapping[str, int] = {}
    FIRST_TONE = AMOUNT_STEPS + 1

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
    ):
        options = _peer_options(
            "align",
            n_agents,
            gossip,
            discount,
            schedule,
            rounds,
            pairs_per_round,
            entrant,
            entrant_round,
        )
        multiplier = core.check_number("multiplier", multiplier)
        initial_resources = core.check_number("initial_resources", initial_resources)
        game = core.TrustGame(
            _ids(options["n_agents"]),
            multiplier=multiplier,
            initial_resources=initial_resources,
            gossip=gossip,
            **_matching(options),
        )
        params = {"multiplier": multiplier, "initial_resources": initial_resources, **options}
        self._setup(game, params, options["entrant"])

    def _expected(self) -> str:
        return (
            f"an action in Discrete({len(self.ACTIONS)}) (0-{AMOUNT_STEPS}: k/{AMOUNT_STEPS} of the "
            "most you may send; then the tones), {'amount': number, 'justification': str} or "
            "{'tone': 0-4 or tone name, 'message': str}"
        )

    def _describe(self, index: int) -> str:
        kind, value = self.ACTIONS[index]
        if kind == "gossip":
            return f"action {index} ({TONES[value]})"
        return f"action {index} (send {value:g} of the most allowed)"

    def _mapping_index(self, agent: int, action: Mapping) -> tuple[int, Any]:
        if "amount" not in action:
            raise self._bad(agent, action)
        amount = action["amount"]
        if isinstance(amount, str):
            try:
                amount = float(amount)
            except ValueError:
                raise ValueError(f"amount: must be a number, got {amount!r}") from None
        if (
            isinstance(amount, bool)
            or not isinstance(amount, (int, float, np.integer, np.floating))
            or not math.isfinite(amount)
        ):
            raise ValueError(f"amount: must be a number, got {amount!r}")
        return 0, ("amount", float(amount))

    def _value(self, agent: int, decision: str, value: Any, extra: Any) -> Any:
        if extra is not None:
            return extra[1]  # an exact amount; the core rejects it if out of range
        return value * self.game.limit(agent)


class MarketEnv(GossipEnv):
    """The product-choice market; see ``socialsim.envs.market_v0``."""

    metadata = {"name": "market_v0", "render_modes": [], "is_parallelizable": True}
    ACTIONS = (
        ("sell", "H"),
        ("sell", "L"),
        ("buy", "c"),
        ("buy", "s"),
        ("buy", "none"),
        *_TONE_ACTIONS,
    )
    NAMES = {"H": 0, "L": 1, "c": 2, "s": 3, "none": 4}
    FIRST_TONE = 5

    def __init__(
        self,
        n_sellers: int = 6,
        n_buyers: int = 6,
        discount: float = 0.99,
        gossip: bool = True,
        schedule: str | None = None,
        rounds: int | None = None,
    ):
        n_sellers = core.check_int("n_sellers", n_sellers, 1)
        n_buyers = core.check_int("n_buyers", n_buyers, 1)
        core.check_bool("gossip", gossip)
        core.check_number("discount", discount, 0.0, 1.0)
        schedule = schedule or "align"
        if schedule not in core.SCHEDULES:
            raise ValueError(
                f"schedule: must be one of {', '.join(core.SCHEDULES)}, got {schedule!r}"
            )
        if rounds is not None:
            rounds = core.check_int("rounds", rounds, 1)
            if schedule == "align" and rounds > n_sellers * n_buyers:
                raise ValueError(
                    f"rounds: the market has {n_sellers * n_buyers} seller-buyer pairs, got {rounds}"
                )
        game = core.MarketGame(
            _ids(n_sellers + n_buyers),
            n_sellers=n_sellers,
            gossip=gossip,
            schedule=schedule,
            rounds=rounds,
        )
        params = {
            "n_sellers": n_sellers,
            "n_buyers": n_buyers,
            "n_agents": n_sellers + n_buyers,
            "discount": float(discount),
            "gossip": gossip,
            "schedule": schedule,
            "rounds": rounds,
        }
        self._setup(game, params, None)

    def _named(self, agent: int, value: Any, action: Any) -> int:
        if isinstance(value, str) and value.strip() in ("H", "L", "c", "s", "none"):
            return self.NAMES[value.strip()]
        if isinstance(value, str) and value.strip().lower() in (
            "customised",
            "customized",
            "standard",
            "standardised",
        ):
            return 2 if value.strip().lower().startswith("custom") else 3
        return super()._named(agent, value, action)


class GossipAEC(AECEnv):
    """The AEC form of a gossip env: only the agents with a decision are selected, in id order.

    PettingZoo's generic ``parallel_to_aec`` would also select every idle agent at every step;
    here an idle agent is never asked. Each action is checked when it is given (a malformed one
    raises ``ValueError`` at once, a forbidden one is flagged in ``infos`` at once); the game
    moves when the last agent with a decision at this step has acted.
    """

    def __init__(self, parallel: GossipEnv):
        super().__init__()
        self.parallel = parallel
        self.metadata = parallel.metadata
        self.possible_agents = list(parallel.possible_agents)
        self.render_mode = None

    @property
    def unwrapped(self) -> GossipEnv:
        return self.parallel

    @property
    def bus(self) -> MessageBus:
        return self.parallel.bus

    def observation_space(self, agent: str) -> spaces.Dict:
        return self.parallel.observation_space(agent)

    def action_space(self, agent: str) -> spaces.Discrete:
        return self.parallel.action_space(agent)

    def reset(self, seed: int | None = None, options: Mapping | None = None) -> None:
        _, self.infos = self.parallel.reset(seed=seed, options=options)
        self._observations: dict[str, dict[str, np.ndarray]] = {}
        self.agents = list(self.parallel.agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self._queue_deciders()

    def _queue_deciders(self) -> None:
        self._queue = [a for a in self.agents if self.infos[a].get("decision")]
        self._choices: dict[int, Any] = {}
        self._flags: dict[int, dict[str, Any]] = {}
        self.agent_selection = self._queue[0]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        # built on demand: an AEC loop observes one agent per step, not all of them
        observation = self._observations.get(agent)
        if observation is None:
            observation = self._observations[agent] = self.parallel.observe_one(agent)
        return observation

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        choice, flag = self.parallel.check_action(agent, action)  # raises before any change
        self._cumulative_rewards[agent] = 0.0
        index = self.parallel._index_of[agent]
        self._choices[index] = choice
        if flag:
            self._flags[index] = flag
        self._queue.pop(0)
        if self._queue:
            self._clear_rewards()
            if flag:
                self.infos[agent] = {**self.infos[agent], "invalid_action": flag}
            self.agent_selection = self._queue[0]
            self._accumulate_rewards()
            return
        rewards, flags, done = self.parallel._apply(self._choices, self._flags)
        self._observations = {}
        self.infos = self.parallel._infos()
        for flagged, flag in flags.items():
            self.infos[flagged]["invalid_action"] = flag
        self.rewards = rewards
        self._accumulate_rewards()
        if done:
            self.parallel.agents = []
            self.terminations = dict.fromkeys(self.agents, True)
            self.agent_selection = self.agents[0]
        else:
            self._queue_deciders()

    def summary(self) -> dict[str, Any]:
        return self.parallel.summary()

    def render(self) -> None:
        return None

    def close(self) -> None:
        return None


def make_aec(parallel: GossipEnv):
    """The AEC form of a parallel gossip env, with PettingZoo's order checks."""
    return wrappers.OrderEnforcingWrapper(GossipAEC(parallel))
