"""Repeated matching pennies, a minimal example of the env contract (see ``socialsim.envs``).

Two players, ``matcher`` and ``mismatcher``, each show heads (0) or tails (1) at the same time,
for ``rounds`` rounds. The matcher wins a round (+1, the mismatcher -1) when the faces match,
otherwise the mismatcher wins. After each round both faces are published to everyone; before
each round the env tells each player privately a seeded "lucky face" (it changes nothing in the
rules; it gives the runner tests a seeded env stream and a private channel).

| | |
|---|---|
| Import | `from socialsim.envs import matching_pennies_v0` |
| Agents | `matcher`, `mismatcher` |
| Action space | `Discrete(2)`: 0 heads, 1 tails; or `{"face": 0 or 1, "message": str}` |
| Observation | `{"observation": Box(0, 2, (2,)) (last faces, 2 = none yet), "action_mask": MultiBinary(2)}` |
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv
from pettingzoo.utils import parallel_to_aec, wrappers

from socialsim.bus import ENV, EVERYONE, MessageBus

AGENTS = ("matcher", "mismatcher")


class raw_env(ParallelEnv):  # noqa: N801 - PettingZoo naming
    metadata = {"name": "matching_pennies_v0", "render_modes": [], "is_parallelizable": True}

    def __init__(self, rounds: int = 10):
        if not isinstance(rounds, int) or isinstance(rounds, bool) or rounds < 1:
            raise ValueError(f"rounds: must be an integer >= 1, got {rounds!r}")
        self.rounds = rounds
        self.render_mode = None
        self.possible_agents = list(AGENTS)
        self.agents: list[str] = []
        self._action_space = spaces.Discrete(2)
        self._observation_space = spaces.Dict(
            {
                "observation": spaces.Box(0, 2, shape=(2,), dtype=np.int8),
                "action_mask": spaces.Box(0, 1, shape=(2,), dtype=np.int8),
            }
        )
        self.bus = MessageBus(AGENTS)
        self.turn = 0

    def observation_space(self, agent: str):
        return self._observation_space

    def action_space(self, agent: str):
        return self._action_space

    def _observe(self) -> dict[str, Any]:
        last = self._last if self._last is not None else (2, 2)
        obs = {
            "observation": np.array(last, dtype=np.int8),
            "action_mask": np.ones(2, dtype=np.int8),
        }
        return {a: obs for a in self.agents}

    def _announce_lucky_faces(self) -> None:
        for agent in self.agents:
            face = int(self._rng.integers(2))
            self.bus.publish(
                turn=self.turn,
                sender=ENV,
                to=[agent],
                channel="private",
                kind="lucky_face",
                payload={"face": face},
            )

    def reset(self, seed: int | None = None, options: Mapping | None = None):
        self._rng = np.random.default_rng(seed)
        self.agents = list(AGENTS)
        self.bus = MessageBus(AGENTS)
        self.turn = 1
        self._last: tuple[int, int] | None = None
        self.score = {a: 0 for a in AGENTS}
        self._announce_lucky_faces()
        return self._observe(), {a: {"decision": "face"} for a in self.agents}

    def _face(self, agent: str, action: Any) -> int:
        value = action.get("face") if isinstance(action, Mapping) else action
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value in (0, 1):
            return int(value)
        raise ValueError(
            f"{agent}: expected an action in Discrete(2) or {{'face': 0|1, 'message': str}}, got {action!r}"
        )

    def step(self, actions: Mapping[str, Any]):
        missing = [a for a in self.agents if a not in actions]
        if missing:
            raise ValueError(
                f"actions: no action for {missing}; every live agent decides each round"
            )
        faces = tuple(self._face(a, actions[a]) for a in AGENTS)  # validate all before any change
        matched = faces[0] == faces[1]
        rewards = {"matcher": 1 if matched else -1, "mismatcher": -1 if matched else 1}
        for agent, reward in rewards.items():
            self.score[agent] += reward
        self.bus.publish(
            turn=self.turn,
            sender=ENV,
            to=EVERYONE,
            channel="public",
            kind="reveal",
            payload={
                "matcher": faces[0],
                "mismatcher": faces[1],
                "winner": "matcher" if matched else "mismatcher",
            },
        )
        self._last = faces
        done = self.turn >= self.rounds
        terminations = {a: done for a in self.agents}
        truncations = {a: False for a in self.agents}
        observations = self._observe()
        infos = {a: {"decision": None if done else "face"} for a in self.agents}
        if done:
            self.agents = []
        else:
            self.turn += 1
            self._announce_lucky_faces()
        return observations, rewards, terminations, truncations, infos

    def summary(self) -> dict[str, Any]:
        return {"score": dict(self.score)}


def parallel_env(**kwargs: Any) -> raw_env:
    return raw_env(**kwargs)


def env(**kwargs: Any):
    aec = parallel_to_aec(raw_env(**kwargs))
    return wrappers.OrderEnforcingWrapper(aec)
