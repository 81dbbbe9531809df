"""Repeated matching pennies as a :class:`~socialsim.envs.aec.DecisionEnv` (the page is the
docstring of :mod:`socialsim.envs.matching_pennies_v0`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from socialsim.envs.aec import DecisionEnv, idle_mask

from socialsim.bus import EVERYONE, MessageBus

AGENTS = ("matcher", "mismatcher")
FACES = ("heads", "tails")
DECISION = "face"
RENDER_MODES = ("ansi", "human")
NONE_YET = 2  # the observation's value of a face before the first round


class PenniesEnv(DecisionEnv):
    """Matching pennies, Parallel form."""

    simultaneous = True  # both players choose at every step
    metadata = {
        "name": "matching_pennies_v0",
        "render_modes": list(RENDER_MODES),
        "is_parallelizable": True,
    }

    def __init__(self, rounds: int = 10, render_mode: str | None = None):
        if not isinstance(rounds, int) or isinstance(rounds, bool) or rounds < 1:
            raise ValueError(f"rounds: must be an integer >= 1, got {rounds!r}")
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(
                f"render_mode: must be one of {', '.join(RENDER_MODES)} or None, got {render_mode!r}"
            )
        self.rounds = rounds
        self.render_mode = render_mode
        self.possible_agents = list(AGENTS)
        self.agents: list[str] = []
        self._action_space = spaces.Discrete(2)
        self._observation_space = spaces.Dict(
            {
                "observation": spaces.Box(0, NONE_YET, shape=(2,), dtype=np.int8),
                "action_mask": spaces.Box(0, 1, shape=(2,), dtype=np.int8),
            }
        )
        #: the global state of :meth:`state`
        self.state_space = spaces.Box(0, max(rounds, NONE_YET), shape=(3,), dtype=np.int64)
        self.bus = MessageBus(AGENTS)
        self.turn = 0
        self._last: tuple[int, int] | None = None
        self.over = True  # no game until reset
        self.score = dict.fromkeys(AGENTS, 0)

    def observation_space(self, agent: str):
        return self._observation_space

    def action_space(self, agent: str):
        return self._action_space

    def rules(self) -> dict[str, Any]:
        """The payload of the ``rules`` message."""
        return {"game": "matching_pennies", "rounds": self.rounds, "agents": list(AGENTS)}

    def begin(self, seed: int | None = None, options: Mapping | None = None):
        self._rng = np.random.default_rng(seed)
        self.agents = list(AGENTS)
        self.bus = MessageBus(AGENTS)
        self.turn = 1
        self._last = None
        self.over = False
        self.score = dict.fromkeys(AGENTS, 0)
        rules = self.rules()
        rules["agents"] = tuple(rules["agents"])  # the bus's plain form (see bus.post)
        self.bus.post(1, EVERYONE, "public", "rules", rules)
        self._announce_lucky_faces()
        return self._infos()

    def _announce_lucky_faces(self) -> None:
        for agent in self.agents:
            face = int(self._rng.integers(2))
            self.bus.post(self.turn, (agent,), "private", "lucky_face", {"face": face})

    def _infos(self) -> dict[str, dict[str, Any]]:
        return {a: {"decision": None if self.over else DECISION} for a in AGENTS}

    # -- the DecisionEnv methods ----------------------------------------------------------------

    def deciding(self) -> list[str]:
        return [] if self.over else list(AGENTS)

    def check_action(self, agent: str, action: Any) -> tuple[int, None]:
        value = action.get("face") if isinstance(action, Mapping) else action
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value in (0, 1):
            return int(value), None
        raise ValueError(
            f"{agent}: expected an action in Discrete(2) or {{'face': 0|1, 'message': str}}, got {action!r}"
        )

    def apply(self, choices, flags):
        faces = (choices["matcher"], choices["mismatcher"])
        matched = faces[0] == faces[1]
        rewards = {"matcher": 1 if matched else -1, "mismatcher": -1 if matched else 1}
        for agent, reward in rewards.items():
            self.score[agent] += reward
        winner = "matcher" if matched else "mismatcher"
        reveal = {"matcher": faces[0], "mismatcher": faces[1], "winner": winner}
        self.bus.post(self.turn, EVERYONE, "public", "reveal", reveal)
        self._last = faces
        done = self.over = self.turn >= self.rounds
        if not done:
            self.turn += 1
            self._announce_lucky_faces()
        return rewards, done, False, self._infos()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        last = self._last if self._last is not None else (NONE_YET, NONE_YET)
        return {
            "observation": np.array(last, dtype=np.int8),
            "action_mask": idle_mask(2) if self.over else np.ones(2, dtype=np.int8),
        }

    # -- global views ---------------------------------------------------------------------------

    def state(self) -> np.ndarray:
        """``[round, matcher's last face, mismatcher's last face]`` (2 = none yet)."""
        last = self._last if self._last is not None else (NONE_YET, NONE_YET)
        return np.array([self.turn, *last], dtype=np.int64)

    def render(self) -> str | None:
        if self.render_mode is None:
            return None
        if self._last is None:
            shown = "no round played yet"
        else:
            matcher, mismatcher = (FACES[f] for f in self._last)
            shown = f"last round: matcher {matcher}, mismatcher {mismatcher}"
        text = (
            f"Matching pennies, round {self.turn} of {self.rounds}\n{shown}\n"
            f"score: matcher {self.score['matcher']}, mismatcher {self.score['mismatcher']}"
        )
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def summary(self) -> dict[str, Any]:
        return {"score": dict(self.score)}
