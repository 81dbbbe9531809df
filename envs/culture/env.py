"""The culture donor game as a :class:`~socialsim.envs.aec.DecisionEnv` (the page is the
docstring of :mod:`socialsim.envs.culture_v0`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from socialsim.envs.aec import DecisionEnv, idle_mask
from socialsim.envs.culture import protocol as p
from socialsim.envs.culture.core import CultureGame, Interaction

from socialsim.bus import EVERYONE, MessageBus

RENDER_MODES = ("ansi", "human")


def _trace_entry(i: Interaction, names: list[str]) -> dict[str, Any]:
    return {
        "round": i.round,
        "recipient": names[i.recipient],
        "verb": i.verb,
        "fraction": i.fraction,
        "amount": round(i.amount, 6),
    }


class CultureEnv(DecisionEnv):
    """The culture donor game, Parallel form."""

    metadata = {"name": "culture_v0", "render_modes": list(RENDER_MODES), "is_parallelizable": True}

    def __init__(
        self,
        n_agents: int = 12,
        rounds: int = 12,
        initial_resources: float = 10.0,
        multiplier: float = 2.0,
        trace_depth: int = 3,
        punishment: bool = False,
        punishment_loss: float = 2.0,
        render_mode: str | None = None,
    ):
        self.options = p.Options(
            n_agents,
            rounds,
            initial_resources,
            multiplier,
            trace_depth,
            punishment,
            punishment_loss,
        )
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(
                f"render_mode: must be one of {', '.join(RENDER_MODES)} or None, got {render_mode!r}"
            )
        self.render_mode = render_mode
        self.possible_agents = [f"agent_{i}" for i in range(n_agents)]
        self.agents: list[str] = []
        self._action_space = spaces.Discrete(p.N_ACTIONS)
        # own resources, the recipient's, then (given, punished) fractions of its trace (-1: none)
        size = 2 + 2 * trace_depth
        self._observation_space = spaces.Dict(
            {
                "observation": spaces.Box(-1.0, np.inf, shape=(size,), dtype=np.float64),
                "action_mask": spaces.Box(0, 1, shape=(p.N_ACTIONS,), dtype=np.int8),
            }
        )
        self.state_space = spaces.Box(0.0, np.inf, shape=(n_agents + 1,), dtype=np.float64)
        self.bus = MessageBus(self.possible_agents)
        self.game: CultureGame | None = None
        self.turn = 0
        self.given = 0.0  # the sum of given fractions over every decision, and their count
        self.decisions = 0

    def observation_space(self, agent: str):
        return self._observation_space

    def action_space(self, agent: str):
        return self._action_space

    def begin(self, seed: int | None = None, options: Mapping | None = None):
        self.game = CultureGame(self.options, seed)
        self.agents = list(self.possible_agents)
        self.bus = MessageBus(self.possible_agents)
        self.turn = 1
        self.given, self.decisions = 0.0, 0
        self.bus.post(1, EVERYONE, "public", p.RULES, self.options.rules(tuple(self.agents)))
        self._announce()
        return self._infos()

    def _announce(self) -> None:
        """Tell each donor of the round who its recipient is, and the recipient's trace."""
        game, names = self.game, self.possible_agents
        for donor, recipient in game.pairs.items():
            payload = {
                "round": game.round,
                "recipient": names[recipient],
                "your_resources": round(float(game.resources[donor]), 6),
                "recipient_resources": round(float(game.resources[recipient]), 6),
                "trace": tuple(_trace_entry(i, names) for i in game.trace(recipient)),
            }
            self.bus.post(self.turn, (names[donor],), "private", p.RECIPIENT, payload)

    def _infos(self) -> dict[str, dict[str, Any]]:
        deciding = set(self.deciding())
        return {a: {"decision": p.DECISION if a in deciding else None} for a in self.agents}

    def deciding(self) -> list[str]:
        if self.game is None or self.game.over or not self.agents:
            return []
        return [self.possible_agents[d] for d in self.game.pairs]

    def _mask(self) -> np.ndarray:
        mask = np.zeros(p.N_ACTIONS, dtype=np.int8)
        mask[: len(p.GIVE)] = 1
        if self.options.punishment:
            mask[len(p.GIVE) :] = 1
        return mask

    def check_action(self, agent: str, action: Any):
        value = action.get(p.DECISION) if isinstance(action, Mapping) else action
        strategy = action.get(p.STRATEGY) if isinstance(action, Mapping) else None
        ok = isinstance(value, (int, np.integer)) and not isinstance(value, bool)
        if not ok or not 0 <= value < p.N_ACTIONS or not isinstance(strategy, (str, type(None))):
            raise ValueError(
                f"{agent}: expected an action in Discrete({p.N_ACTIONS}) or "
                f"{{'donate': int, 'strategy': str}}, got {action!r}"
            )
        choice = (int(value), strategy)
        if not self._mask()[int(value)]:
            reason = f"{p.action_name(int(value))}: punishment is off in this game"
            return (p.FALLBACK, strategy), {"reason": reason, "fallback": p.FALLBACK}
        return choice, None

    def apply(self, choices, flags):
        game, names = self.game, self.possible_agents
        for agent, (_, strategy) in choices.items():
            if strategy is not None:  # a newborn's strategy, kept by the record
                self.bus.post(self.turn, (agent,), "private", p.STRATEGY, {"text": strategy})
        before = game.resources.copy()
        index = {name: i for i, name in enumerate(names)}
        played = game.play({index[a]: action for a, (action, _) in choices.items()})
        for i in played:
            self.given += i.fraction if i.verb == "give" else 0.0
            self.decisions += 1
            payload = {
                "round": i.round,
                "donor": names[i.donor],
                "recipient": names[i.recipient],
                "verb": i.verb,
                "fraction": i.fraction,
                "amount": round(i.amount, 6),
                "effect": round(i.effect, 6),
            }
            to = (names[i.donor], names[i.recipient])
            self.bus.post(self.turn, to, "private", p.INTERACTION, payload)
        rewards = {a: float(game.resources[k] - before[k]) for k, a in enumerate(names)}
        done = game.over
        if not done:
            self.turn += 1
            self._announce()
        infos = {a: {"decision": None} for a in self.agents} if done else self._infos()
        return rewards, done, False, infos

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        depth = self.options.trace_depth
        obs = np.full(2 + 2 * depth, -1.0)
        mask = idle_mask(p.N_ACTIONS)
        game = self.game
        if game is not None:
            k = self.possible_agents.index(agent)
            obs[0] = game.resources[k]
            if not game.over and k in game.pairs:
                mask = self._mask()
                recipient = game.pairs[k]
                obs[1] = game.resources[recipient]
                for j, i in enumerate(game.trace(recipient)):
                    given = i.fraction if i.verb == "give" else 0.0
                    obs[2 + 2 * j : 4 + 2 * j] = (given, i.fraction - given)
        return {"observation": obs, "action_mask": mask}

    def state(self) -> np.ndarray:
        """Every agent's resources, then the round."""
        if self.game is None:
            return np.zeros(self.options.n_agents + 1)
        return np.append(self.game.resources, float(self.game.round))

    def render(self) -> str | None:
        if self.render_mode is None:
            return None
        if self.game is None:
            text = "Culture donor game: not started"
        else:
            mean = float(self.game.resources.mean())
            text = (
                f"Culture donor game, round {min(self.game.round, self.options.rounds)} of "
                f"{self.options.rounds}\naverage resources {mean:.2f} "
                f"(ceiling {p.ceiling(self.options):g})"
            )
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def summary(self) -> dict[str, Any]:
        game = self.game
        resources = (
            {}
            if game is None
            else dict(zip(self.possible_agents, game.resources.tolist(), strict=True))
        )
        return {
            "agents": list(self.possible_agents),
            "resources": resources,
            "mean_resources": float(np.mean(list(resources.values()))) if resources else 0.0,
            "donated_fraction": self.given / self.decisions if self.decisions else 0.0,
            "ceiling": p.ceiling(self.options),
        }
