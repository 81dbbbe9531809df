"""The PettingZoo adapter shared by the four gossip games (rules: :mod:`.core`; vocabulary:
:mod:`.protocol`; the four envs: :mod:`.games`).

Each env is a :class:`~socialsim.envs.aec.DecisionEnv` (Parallel); the shims' ``env()`` is the
one AEC form of :mod:`socialsim.envs.aec`, which selects only the agents with a decision, in id
order. All four share one pattern:

* **Agents** ``agent_0 .. agent_{N-1}``; with an entrant it is the last one. Every agent is live
  for the whole episode; agents that do not decide at a step get ``infos[a]["decision"] = None``
  and an action mask allowing only the no-op, action 0; their actions are ignored.
* **Observation**: see :mod:`.observation`. **Actions**: see :mod:`.actions`.
* **Infos** ``{"decision", "round", "role", "counterpart"}`` (``role``/``counterpart`` ``None``
  when sitting out; the agents sitting out a step share one info dict: read it, don't change it).
* **Bus** (``env.unwrapped.bus``, turn = round), payloads typed in :mod:`.protocol`: ``rules``
  (public, to everyone, once per episode at reset, before anything else, turn 1: the settings
  in force), ``match`` (private, to the pair, at the start of a round: roles and current
  resources), ``action`` (private, to the agent acted upon only), ``gossip`` (to everyone:
  author, about, tone, message). The ``rules`` payload carries no actor's action, so it reveals
  nothing the audit of ``action`` messages forbids; the envs have no display-name option, so it
  names no display names (agents choose their own, e.g. the reference's).
* **Rewards** are the payoffs of the step (undiscounted; ``discount`` is recorded for metrics).
* **Render** (``render_mode="ansi"`` returns it, ``"human"`` prints it): the round, the gossip
  published in the last round and the tones published about each agent so far: what the public
  sees (moves are private to the agent acted upon; with ``gossip_reach`` below 1 it still
  shows every tone: a render is the onlooker's view, handed to no seat).
* **State** (:meth:`GossipEnv.state`, for centralised critics): ``[round / rounds, resources
  (N), role one-hot (N x R), counterpart one-hot (N x N), tone counts (N x 5)]`` as float32.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import numpy as np
from gymnasium import spaces
from socialsim.envs.aec import DecisionEnv
from socialsim.envs.gossip import core
from socialsim.envs.gossip.actions import ActionCodec
from socialsim.envs.gossip.observation import Layout
from socialsim.envs.gossip.protocol import (
    GOSSIP,
    TONES,
    GossipSummary,
    RulesPayload,
)

from socialsim.bus import EVERYONE, MessageBus, json_copy, thaw

RENDER_MODES = ("ansi", "human")


def _match_view(payload: dict[str, Any]) -> MappingProxyType:
    """A ``match`` payload read-only: its two mappings of agent ids to scalars wrapped too."""
    return MappingProxyType(
        {
            "round": payload["round"],
            "roles": MappingProxyType(payload["roles"]),
            "resources": MappingProxyType(payload["resources"]),
        }
    )


#: how the bus shows the payloads of the kinds whose shape is fixed (see ``MessageBus``); a
#: ``gossip`` payload holds only scalars; ``action`` (a trust move is a dict) and ``rules`` are
#: inspected
_VIEWS = {"gossip": MappingProxyType, "match": _match_view}


class GossipEnv(DecisionEnv):
    """Shared adapter; a game env builds its core and calls :meth:`_setup` in ``__init__``."""

    metadata: dict[str, Any] = {"name": "", "render_modes": list(RENDER_MODES)}

    def _setup(
        self,
        game: core.GossipGame,
        params: dict[str, Any],
        entrant: str | None,
        render_mode: str | None,
    ) -> None:
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(
                f"render_mode: must be one of {', '.join(RENDER_MODES)} or None, "
                f"got {render_mode!r}"
            )
        self.render_mode = render_mode
        self.game = game
        self.params = params
        # the settings the rules message states, renamed as there (the entrant's mode under
        # "entrant_mode": "entrant" is its id) and made JSON once
        self._settings = thaw(
            json_copy(
                {
                    "game": game.game,
                    **{
                        ("entrant_mode" if key == "entrant" else key): v
                        for key, v in params.items()
                    },
                }
            )
        )
        self.possible_agents = list(game.agents)
        # every agent is live for the whole episode: the rewards of a step start from this copy
        self._no_rewards = dict.fromkeys(self.possible_agents, 0.0)
        self._no_infos: dict[str, Any] = dict.fromkeys(self.possible_agents)
        self._index_of = {agent: i for i, agent in enumerate(self.possible_agents)}
        self.agents: list[str] = []
        self.entrant_id = self.possible_agents[-1] if entrant else None
        self.codec = ActionCodec(game.spec)
        self._masks = game.spec.masks()
        self._layout = Layout(game, len(game.spec.actions))
        self._action_space = spaces.Discrete(len(game.spec.actions))
        n = game.n
        self.state_space = spaces.Box(
            -np.inf, np.inf, shape=(1 + n * (1 + len(self._layout.role_column) + n + len(TONES)),)
        )
        self.bus = MessageBus(self.possible_agents, views=_VIEWS)
        self.turn = 0
        self._rng: np.random.Generator | None = None

    # -- spaces ---------------------------------------------------------------------------------

    def observation_space(self, agent: str) -> spaces.Dict:
        return self._layout.space

    def action_space(self, agent: str) -> spaces.Discrete:
        return self._action_space

    # -- episode --------------------------------------------------------------------------------

    def begin(self, seed: int | None = None, options: Mapping | None = None):
        if seed is not None or self._rng is None:
            self._rng = np.random.default_rng(seed)
        self.game.reset(self._rng)
        self.agents = list(self.possible_agents)
        self.bus = MessageBus(self.possible_agents, views=_VIEWS)
        self.turn = self.game.round
        rules = self.rules()
        rules["agents"] = tuple(rules["agents"])  # as json_copy makes it; the rest is JSON scalars
        self.bus.post(self.turn, EVERYONE, "public", "rules", rules)
        self._announce_round()
        return self._infos()

    def rules(self) -> RulesPayload:
        """The payload of the ``rules`` message of the episode just reset: the settings in
        force, with the actual number of rounds and the entrant's id."""
        return {  # type: ignore[typeddict-item]
            **self._settings,
            "rounds": len(self.game.schedule),  # in its place among the settings
            "entrant": self.entrant_id,
            "agents": list(self.possible_agents),
        }

    # -- the DecisionEnv contract ---------------------------------------------------------------

    def deciding(self) -> list[str]:
        ids = self.possible_agents
        return [ids[agent] for agent in sorted(self.game.pending())]

    def check_action(self, agent: str, action: Any) -> tuple[Any, dict[str, Any] | None]:
        index = self._index_of[agent]
        due = self.game.pending().get(index)
        if due is None:
            return None, None  # an agent without a decision: its action is ignored
        decision = due[0]
        codec = self.codec
        if not codec.amounts:  # the choice is an entry of the game's own action table
            return codec.decode(agent, decision, action, self._mask(index, decision), None)
        game = self.game
        choice, flag = codec.decode(
            agent, decision, action, self._mask(index, decision), lambda: game.limit(index)
        )
        return game.check(index, choice), flag

    def apply(
        self, choices: Mapping[str, Any], flags: Mapping[str, dict[str, Any]]
    ) -> tuple[dict[str, float], bool, bool, dict[str, dict[str, Any]]]:
        game, ids, index_of = self.game, self.possible_agents, self._index_of
        turn = game.round
        fallbacks = [index_of[agent] for agent in flags] if flags else ()
        paid, events = game.advance({index_of[a]: c for a, c in choices.items()}, fallbacks)
        post = self.bus.post
        # the events' payloads are built fresh for their one message, of JSON scalars (and a
        # trust move's flat dict): the bus keeps them as they are
        for kind, target, payload in events:
            if target is None:
                post(turn, EVERYONE, GOSSIP, kind, payload)
            else:
                post(turn, (ids[target],), "private", kind, payload)
        rewards = self._no_rewards.copy()
        for agent, amount in paid.items():
            rewards[ids[agent]] = float(amount)
        if not game.done:
            self.turn = game.round
            if game.phase_index == 0:
                self._announce_round()
        return rewards, game.done, False, self._infos()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        return self._layout.one(self.game, self._index_of[agent], self._mask)

    def observe_all(self) -> dict[str, dict[str, np.ndarray]]:
        return self._layout.all(self.game, self.possible_agents, self._mask)

    # -- what the step reveals -------------------------------------------------------------------

    def _announce_round(self) -> None:
        """Tell each pair of the new round who they meet, in which role, and both stocks."""
        game, ids = self.game, self.possible_agents
        first_role, second_role = game.roles
        resources, number, post = game.resources, game.round, self.bus.post
        for first, second in game.pairs:
            first_id, second_id = ids[first], ids[second]
            payload = {  # the protocol's MatchPayload
                "round": number,
                "roles": {first_id: first_role, second_id: second_role},
                "resources": {
                    first_id: float(resources[first]),
                    second_id: float(resources[second]),
                },
            }
            post(number, (first_id, second_id), "private", "match", payload)

    def _mask(self, agent: int, decision: str) -> np.ndarray:
        """The mask of ``decision`` for ``agent`` now (shared: callers copy it)."""
        return self._masks[decision]

    def _infos(self) -> dict[str, dict[str, Any]]:
        game, ids = self.game, self.possible_agents
        number = game.round
        seats = {} if game.done else game.seats
        if len(seats) == len(ids):  # everyone seated: every entry is made below, in id order
            infos = self._no_infos.copy()
        else:  # each agent sitting out gets an info of its own: no seat changes another's
            infos = {
                agent: {"decision": None, "round": number, "role": None, "counterpart": None}
                for agent in ids
            }
        roles, pending = game.roles, game.pending()
        for index, (position, counterpart) in seats.items():
            due = pending.get(index)
            infos[ids[index]] = {
                "decision": None if due is None else due[0],
                "round": number,
                "role": roles[position],
                "counterpart": ids[counterpart],
            }
        return infos

    # -- views ----------------------------------------------------------------------------------

    def state(self) -> np.ndarray:
        """The global state (see the module docstring)."""
        game, layout = self.game, self._layout
        n = game.n
        roles = np.zeros((n, len(layout.role_column)), dtype=np.float32)
        counterparts = np.zeros((n, n), dtype=np.float32)
        if not game.done:
            for agent, (position, counterpart) in game.seats.items():
                roles[agent, layout.role_column[position] - 1] = 1.0
                counterparts[agent, counterpart] = 1.0
        progress = game.round_index / len(game.schedule) if game.schedule else 1.0
        return np.concatenate(
            [
                np.array([progress], dtype=np.float32),
                np.array(game.resources, dtype=np.float32),
                roles.ravel(),
                counterparts.ravel(),
                game.tone_counts.astype(np.float32).ravel(),
            ]
        )

    def render(self) -> str | None:
        if self.render_mode is None:
            return None
        game = self.game
        lines = [f"{game.spec.title}, round {game.round} of {len(game.schedule)}"]
        recent = [m.payload for m in self.bus.log if m.kind == GOSSIP and m.turn >= game.round - 1]
        if recent:
            lines.append("latest gossip:")
        for gossip in recent:
            said = f' "{gossip["message"]}"' if gossip["message"] else ""
            lines.append(f"  {gossip['author']} about {gossip['about']}: {gossip['tone']}{said}")
        lines.append("tones published so far:" if game.tone_counts.any() else "no gossip yet")
        for agent, row in zip(self.possible_agents, game.tone_counts, strict=True):
            if row.any():
                counts = ", ".join(f"{TONES[t]} {int(c)}" for t, c in enumerate(row) if c)
                lines.append(f"  {agent}: {counts}")
        text = "\n".join(lines)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    # -- the record -----------------------------------------------------------------------------

    def summary(self) -> GossipSummary:
        game = self.game
        out = GossipSummary(game=game.game, **self.params)
        out["agents"] = list(self.possible_agents)
        out["entrant"] = self.entrant_id
        stocks = {a: float(game.resources[i]) for i, a in enumerate(self.possible_agents)}
        out["payoffs" if game.game == "market" else "resources"] = stocks
        out["interactions"] = list(game.interactions)
        return out

    def close(self) -> None:
        return None
