"""Drive an env of either PettingZoo form through an episode, as the contract checks need it.

:class:`ParallelDriver` and :class:`AECDriver` give the two forms one face: ``pending()`` (the
agents the kit must act for now: every agent with a decision in the Parallel form, the selected
agent in the AEC form), ``observation(agent)``, ``info(agent)``, ``step(actions)``, ``over``, and
a ``trace`` of everything the env returned, to compare two runs, and ``after``: the infos of the
agents that acted, read as soon as the step returns. Actions come from a seeded
``numpy`` Generator: :func:`legal_action` picks uniformly among the actions the mask allows,
:func:`forbidden_action` among those it forbids, :func:`malformed_actions` lists values outside
the action space.

A mask is ``observation["action_mask"]`` (or ``info["action_mask"]``, PettingZoo's other place):
one 0/1 entry per action of a ``Discrete`` space; for a ``MultiDiscrete`` space one vector per
sub-action, given as a tuple of vectors (gymnasium's form), one flat vector of ``sum(nvec)``
entries, or a ``(len(nvec), max(nvec))`` array.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces

DONE = object()  # the action of an agent the AEC form selects after its end (``step(None)``)


def mask_of(observation: Any, info: Any) -> Any | None:
    """The action mask an agent was given, or ``None``."""
    if isinstance(observation, Mapping) and "action_mask" in observation:
        return observation["action_mask"]
    if isinstance(info, Mapping) and "action_mask" in info:
        return info["action_mask"]
    return None


def mask_parts(space: spaces.Space, mask: Any) -> list[np.ndarray] | None:
    """``mask`` as one 0/1 vector per sub-action of ``space``; ``None`` if it does not fit."""
    if isinstance(space, spaces.Discrete):
        flat = np.asarray(mask).reshape(-1)
        return [flat] if flat.size == space.n else None
    if isinstance(space, spaces.MultiDiscrete):
        sizes = [int(n) for n in space.nvec.reshape(-1)]
        if isinstance(mask, (tuple, list)):
            parts = [np.asarray(part).reshape(-1) for part in mask]
        else:
            array = np.asarray(mask)
            if array.ndim == 1 and array.size == sum(sizes):
                parts = np.split(array, np.cumsum(sizes)[:-1])
            elif array.ndim == 2 and array.shape[0] == len(sizes):
                parts = [row[:n] for row, n in zip(array, sizes, strict=True)]
            else:
                return None
        if [part.size for part in parts] != sizes:
            return None
        return parts
    return None


def _pick(rng: np.random.Generator, allowed: np.ndarray) -> int:
    return int(rng.choice(np.flatnonzero(allowed)))


def legal_action(
    space: spaces.Space, parts: list[np.ndarray] | None, rng: np.random.Generator
) -> Any:
    """A uniformly random action the mask allows (any action of ``space`` without a mask)."""
    if isinstance(space, spaces.Discrete):
        index = _pick(rng, parts[0]) if parts else int(rng.integers(space.n))
        return space.dtype.type(space.start + index)
    if isinstance(space, spaces.MultiDiscrete):
        nvec = space.nvec.reshape(-1)
        if parts:
            indices = np.array([_pick(rng, part) for part in parts])
        else:
            indices = rng.integers(nvec)
        return (space.start.reshape(-1) + indices).astype(space.dtype).reshape(space.shape)
    space.seed(int(rng.integers(2**31 - 1)))
    return space.sample()


def forbidden_action(
    space: spaces.Space, parts: list[np.ndarray] | None, rng: np.random.Generator
) -> Any | None:
    """A well-formed action the mask forbids (one sub-action forbidden), or ``None`` if none is."""
    if not parts or all(part.all() for part in parts):
        return None
    if isinstance(space, spaces.Discrete):
        return space.dtype.type(space.start + _pick(rng, parts[0] == 0))
    action = np.asarray(legal_action(space, parts, rng)).reshape(-1)
    k = next(i for i, part in enumerate(parts) if not part.all())
    action[k] = space.start.reshape(-1)[k] + _pick(rng, parts[k] == 0)
    return action.reshape(space.shape)


def malformed_actions(space: spaces.Space) -> list[Any]:
    """Values that are not actions of ``space`` (the contract wants a ``ValueError`` for each)."""
    values: list[Any] = ["garbage"]
    if isinstance(space, spaces.Discrete):
        values.append(space.dtype.type(space.start + space.n))
    elif isinstance(space, spaces.MultiDiscrete):
        values.append((space.start + space.nvec).astype(space.dtype))
    return values


def bus_json(env: Any) -> list[dict[str, Any]] | None:
    bus = getattr(env.unwrapped, "bus", None)
    return None if bus is None else [message.to_json() for message in bus.log]


class ParallelDriver:
    """A Parallel env: every agent with a decision acts at each step."""

    form = "parallel"

    def __init__(self, env: Any):
        self.env = env
        self.returned: list[tuple[str, Any, Any]] = []  # (where, object, a copy of it)
        self.trace: list[Any] = []

    def reset(self, seed: int | None) -> None:
        self.observations, self.infos = self.env.reset(seed=seed)
        self.steps = 0
        self._keep("reset", self.observations)
        self.trace = [self.observations]

    def _keep(self, where: str, observations: Mapping[str, Any]) -> None:
        for agent, observation in observations.items():
            self.returned.append((f"{where}, {agent}", observation, copy.deepcopy(observation)))

    @property
    def over(self) -> bool:
        return not self.env.agents

    def live(self) -> list[str]:
        return list(self.env.agents)

    def pending(self) -> list[str]:
        return [a for a in self.env.agents if (self.infos.get(a) or {}).get("decision") is not None]

    def observation(self, agent: str) -> Any:
        return self.observations[agent]

    def info(self, agent: str) -> Any:
        return self.infos.get(agent)

    def step(self, actions: Mapping[str, Any]) -> None:
        observations, rewards, terminations, truncations, infos = self.env.step(dict(actions))
        self.steps += 1
        self.observations, self.infos = observations, infos
        self.after = {agent: infos.get(agent) for agent in actions}
        self._keep(f"step {self.steps}", observations)
        self.trace.append((observations, rewards, terminations, truncations))


class AECDriver:
    """An AEC env: the selected agent acts; agents selected after their end step ``None``."""

    form = "aec"

    def __init__(self, env: Any):
        self.env = env
        self.returned: list[tuple[str, Any, Any]] = []
        self.trace: list[Any] = []

    def reset(self, seed: int | None) -> None:
        self.env.reset(seed=seed)
        self.steps = 0
        self.trace = []
        self._look()

    def _look(self) -> None:
        """Read ``last()`` for the selected agent, stepping ``None`` past agents already done."""
        env = self.env
        while env.agents:
            agent = env.agent_selection
            observation, reward, terminated, truncated, _ = env.last()
            self.returned.append(
                (f"step {self.steps}, {agent}", observation, copy.deepcopy(observation))
            )
            self.trace.append((agent, observation, reward, terminated, truncated))
            self._selected = observation
            if not (terminated or truncated):
                return
            env.step(None)

    @property
    def over(self) -> bool:
        return not self.env.agents

    def live(self) -> list[str]:
        env = self.env
        return [a for a in env.agents if not (env.terminations[a] or env.truncations[a])]

    def pending(self) -> list[str]:
        return [] if self.over else [self.env.agent_selection]

    def observation(self, agent: str) -> Any:
        return self._selected if agent == self.env.agent_selection else self.env.observe(agent)

    def info(self, agent: str) -> Any:
        return self.env.infos.get(agent)

    def step(self, actions: Mapping[str, Any]) -> None:
        env = self.env
        agent = env.agent_selection
        env.step(actions[agent])
        self.steps += 1
        # read before the agents that are done step ``None``: that removes their infos
        self.after = {agent: env.infos.get(agent)}
        self.trace.append(dict(env.rewards))
        self._look()


def driver(env: Any) -> ParallelDriver | AECDriver:
    from pettingzoo import AECEnv

    return AECDriver(env) if isinstance(env, AECEnv) else ParallelDriver(env)


def legal_actions(d: ParallelDriver | AECDriver, rng: np.random.Generator) -> dict[str, Any]:
    """A random legal action for every agent the driver must act for now."""
    actions = {}
    for agent in d.pending():
        actions[agent] = legal_action(d.env.action_space(agent), usable_parts(d, agent), rng)
    return actions


def usable_parts(d: ParallelDriver | AECDriver, agent: str) -> list[np.ndarray] | None:
    """``agent``'s mask as :func:`mask_parts`, or ``None`` if it has none that allows a move."""
    mask = mask_of(d.observation(agent), d.info(agent))
    parts = None if mask is None else mask_parts(d.env.action_space(agent), mask)
    if parts is None or not all(np.asarray(part).any() for part in parts):
        return None  # no usable mask: the masks check reports it; play on unmasked
    return parts


def decision_of(info: Any) -> Any:
    """``info["decision"]``, or ``None`` when the info is no mapping or has no decision."""
    return info.get("decision") if isinstance(info, Mapping) else None
