"""One game of a multi-seat trainer: a PettingZoo Parallel env whose learner seats are given
actions from outside and whose other seats are played by agents, as the runner plays them.

Shared by :class:`~socialsim.rl.seats.SharedSeats` (Stable-Baselines3) and
:class:`~socialsim.rl.rllib.RLlibSeats` (RLlib's multi-agent API), so both feed a learner seat
the same observation (its own and its features, computed from its bus inbox) and step the env
alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from socialsim import registry
from socialsim.agent import RunContext
from socialsim.rl import features as features_module
from socialsim.rl.view import flat_mask
from socialsim.runner import EpisodeSpec, build_agents

_SEED_HIGH = 2**31
#: what a learner is rewarded: its seat's own reward, or the mean of its game's learner seats'
REWARDS = ("own", "mean")


class LearnerGame:
    """``env_id`` with ``learners`` acting from outside and ``others`` (seat -> agent spec)
    played by their agents; each reset plays the next episode seed of its own generator
    (``np.random.default_rng(seed)``), so a seeded trainer plays the same episodes."""

    def __init__(
        self,
        env_id: str,
        env_kwargs: Mapping[str, Any],
        learners: Sequence[str],
        others: Mapping[str, Mapping[str, Any]],
        feature_specs: Sequence[Any] = (),
        run: RunContext | None = None,
        seed: int = 0,
    ):
        self.env_id, self.env_kwargs = env_id, dict(env_kwargs)
        self.learners, self.others = list(learners), dict(others)
        self.feature_specs = list(feature_specs)
        self.run = run if run is not None else RunContext()
        self.env = registry.make_env(env_id, "parallel", **self.env_kwargs)
        self.rng = np.random.default_rng(seed)

    def reset(self) -> None:
        seed = int(self.rng.integers(_SEED_HIGH))
        spec = EpisodeSpec(self.env_id, seed, self.others, self.env_kwargs)
        self.agents = build_agents(spec, list(self.others), self.run)
        self.features = {seat: features_module.build(self.feature_specs) for seat in self.learners}
        for seat, built in self.features.items():
            for feature in built:
                feature.reset(seat)
        self.observations, self.infos = self.env.reset(seed=seed)

    @property
    def bus(self):
        return self.env.unwrapped.bus

    def deciding(self, seat: str) -> bool:
        """Whether ``seat`` has a decision now."""
        return bool((self.infos.get(seat) or {}).get("decision")) and seat in self.env.agents

    def observe(self, seat: str) -> dict[str, np.ndarray]:
        """``seat``'s observation, mask (flat) and features; reads its new inbox messages."""
        raw, info = self.observations[seat], self.infos[seat]
        out = {"observation": raw["observation"], "action_mask": flat_mask(raw["action_mask"])}
        messages = self.bus.read(seat)
        for feature in self.features[seat]:
            out[feature.name] = feature(raw, messages, info)
        return out

    def step(self, learner_actions: Mapping[str, Any]) -> tuple[dict[str, float], bool, bool]:
        """One env step: the learners' actions where they decide, the others' own; returns
        ``(rewards, ended, truncated)``."""
        env, infos, observations = self.env, self.infos, self.observations
        actions = {}
        for agent in env.agents:
            if not (infos.get(agent) or {}).get("decision"):
                continue
            if agent in learner_actions:
                actions[agent] = learner_actions[agent]
            else:
                actions[agent] = self.agents[agent].act(
                    observations[agent], self.bus.read(agent), infos[agent]
                )
        self.observations, rewards, terminations, truncations, self.infos = env.step(actions)
        ended = not env.agents
        truncated = ended and any(truncations.values()) and not any(terminations.values())
        return rewards, ended, truncated
