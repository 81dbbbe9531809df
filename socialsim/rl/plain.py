"""Wrappers that give any MARL library the plain PettingZoo env it expects, in either form.

socialsim's envs hand each seat rich infos (the decision's name, the round, the counterpart, the
Decrypto history: strings, tuples and ``None``, for language agents), Dict observations
``{"observation", "action_mask"}`` and, in Decrypto, a space per role. Libraries built for
numeric games take none of these. Each wrapper here changes one thing, keeps the form it is
given (a Parallel env stays Parallel, an AEC env AEC), and they stack:

``numeric_infos(env)``
    Every info becomes ``{"deciding": 0/1, "invalid_action": 0/1, "action_mask": (0/1, ...)}``
    (ints, and the mask as a tuple of ints, so that infos compare with ``==`` as PettingZoo's
    ``api_test`` compares them): the same keys and shapes for every agent at every step, for
    libraries that make tensors of the infos (TorchRL), store them in a buffer (Tianshou) or
    read the mask there (AgileRL). ``deciding`` is 1 exactly when the rich info's ``decision`` is not
    ``None``; ``invalid_action`` is 1 when the env played a fallback for the agent's action.
``padded_roles(env)``
    One observation space and one action space for every agent, for one-policy libraries
    (Tianshou's ``PettingZooEnv``, SuperSuit's vector envs): the observation vector padded with
    zeros to the longest and followed by a one-hot of the seat (Decrypto's decoder and
    interceptor share a layout but not a role); the action space the largest ``Discrete``, and
    each mask padded with zeros, so a masked policy never picks an index past its seat's own
    space. A policy that cannot mask and picks one anyway plays its seat's action 0 (the no-op
    of a seat without a decision, a guesser's first code).
``box_observations(env)``
    The observation as one ``float32`` Box, the vector followed by the mask, for code that
    takes only Box observations (SuperSuit's ``black_death_v3``, SB3's ``MlpPolicy``). The mask
    is then only an input: a library that cannot mask picks forbidden actions, which the env
    plays as the decision's fallback (flagged, never a crash).

Stack them in that order, ``box_observations(numeric_infos(padded_roles(env)))``: each reads
the observation the one inside it gives. The rich infos stay the default; these wrappers are for the libraries, and
``docs/marl_libraries.md`` shows each library's tested path.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils.wrappers import BaseParallelWrapper, BaseWrapper


class Transform:
    """What a wrapper changes, seat by seat; the identity by default."""

    def observation_space(self, agent: str, space: spaces.Space) -> spaces.Space:
        return space

    def action_space(self, agent: str, space: spaces.Space) -> spaces.Space:
        return space

    def observation(self, agent: str, observation: Any) -> Any:
        return observation

    def info(self, agent: str, info: Mapping[str, Any], observation: Any) -> Any:
        """``agent``'s info, given its inner (unwrapped by this transform) observation."""
        return info

    def action(self, agent: str, action: Any) -> Any:
        """The action the inner env gets for ``agent``'s ``action``."""
        return action


def _mask(observation: Any) -> np.ndarray | None:
    if isinstance(observation, Mapping) and "action_mask" in observation:
        return np.asarray(observation["action_mask"], dtype=np.int8)
    return None


class NumericInfos(Transform):
    """See :func:`numeric_infos`."""

    def __init__(self, action_mask: bool = True):
        self.action_mask = action_mask

    def info(self, agent: str, info: Mapping[str, Any], observation: Any) -> dict[str, Any]:
        out: dict[str, Any] = {
            "deciding": int(info.get("decision") is not None),
            "invalid_action": int("invalid_action" in info),
        }
        mask = _mask(observation) if self.action_mask else None
        if mask is not None:
            out["action_mask"] = tuple(mask.tolist())
        return out


class PaddedRoles(Transform):
    """See :func:`padded_roles`."""

    def __init__(self, env: Any):
        agents = list(env.possible_agents)
        self.seat = {agent: i for i, agent in enumerate(agents)}
        inner = {a: env.observation_space(a) for a in agents}
        actions = {a: env.action_space(a) for a in agents}
        if not all(isinstance(s, spaces.Discrete) for s in actions.values()):
            raise ValueError("padded_roles: every action space must be Discrete")
        self.own = {agent: int(space.n) for agent, space in actions.items()}
        self.n = max(self.own.values())
        vectors = {a: space["observation"] for a, space in inner.items()}
        self.size = max(int(np.prod(v.shape)) for v in vectors.values())
        dtype = np.result_type(*[v.dtype for v in vectors.values()])
        low = np.zeros(self.size + len(agents), dtype=dtype)
        high = np.ones(self.size + len(agents), dtype=dtype)
        for vector in vectors.values():
            k = int(np.prod(vector.shape))
            low[:k] = np.minimum(low[:k], vector.low.ravel())
            high[:k] = np.maximum(high[:k], vector.high.ravel())
        self.dtype = dtype
        self._observation_space = spaces.Dict(
            {
                "observation": spaces.Box(low, high, dtype=dtype),
                "action_mask": spaces.Box(0, 1, shape=(self.n,), dtype=np.int8),
            }
        )
        self._action_space = spaces.Discrete(self.n)

    def observation_space(self, agent: str, space: spaces.Space) -> spaces.Space:
        return self._observation_space

    def action_space(self, agent: str, space: spaces.Space) -> spaces.Space:
        return self._action_space

    def action(self, agent: str, action: Any) -> Any:
        if isinstance(action, (int, np.integer)) and action >= self.own[agent]:
            return 0
        return action

    def observation(self, agent: str, observation: Any) -> dict[str, np.ndarray]:
        vector = np.zeros(self.size + len(self.seat), dtype=self.dtype)
        inner = np.asarray(observation["observation"]).ravel()
        vector[: inner.size] = inner
        vector[self.size + self.seat[agent]] = 1
        mask = np.zeros(self.n, dtype=np.int8)
        inner_mask = _mask(observation)
        mask[: inner_mask.size] = inner_mask
        return {"observation": vector, "action_mask": mask}


class BoxObservations(Transform):
    """See :func:`box_observations`."""

    def observation_space(self, agent: str, space: spaces.Space) -> spaces.Space:
        vector, mask = space["observation"], space["action_mask"]
        low = np.concatenate([vector.low.ravel(), mask.low.ravel()]).astype(np.float32)
        high = np.concatenate([vector.high.ravel(), mask.high.ravel()]).astype(np.float32)
        return spaces.Box(low, high, dtype=np.float32)

    def observation(self, agent: str, observation: Any) -> np.ndarray:
        parts = [np.asarray(observation["observation"]).ravel(), _mask(observation)]
        return np.concatenate(parts).astype(np.float32)


class TransformedParallel(BaseParallelWrapper):
    """A Parallel env seen through a :class:`Transform`."""

    def __init__(self, env: ParallelEnv, transform: Transform):
        super().__init__(env)
        self.transform = transform
        self._spaces: dict[str, tuple[spaces.Space, spaces.Space]] = {}

    def _space(self, agent: str) -> tuple[spaces.Space, spaces.Space]:
        if agent not in self._spaces:  # the same objects at every call, as PettingZoo asks
            t, env = self.transform, self.env
            self._spaces[agent] = (
                t.observation_space(agent, env.observation_space(agent)),
                t.action_space(agent, env.action_space(agent)),
            )
        return self._spaces[agent]

    def observation_space(self, agent: str) -> spaces.Space:
        return self._space(agent)[0]

    def action_space(self, agent: str) -> spaces.Space:
        return self._space(agent)[1]

    def _wrap(self, observations: dict, infos: dict) -> tuple[dict, dict]:
        t = self.transform
        infos = {a: t.info(a, info, observations.get(a)) for a, info in infos.items()}
        return {a: t.observation(a, o) for a, o in observations.items()}, infos

    def reset(self, seed: int | None = None, options: dict | None = None):
        observations, infos = self.env.reset(seed=seed, options=options)
        self.agents = self.env.agents
        return self._wrap(observations, infos)

    def step(self, actions: dict):
        t = self.transform
        actions = {agent: t.action(agent, action) for agent, action in actions.items()}
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        self.agents = self.env.agents
        observations, infos = self._wrap(observations, infos)
        return observations, rewards, terminations, truncations, infos


class TransformedAEC(BaseWrapper):
    """An AEC env seen through a :class:`Transform`."""

    def __init__(self, env: AECEnv, transform: Transform):
        super().__init__(env)
        self.transform = transform
        self._spaces: dict[str, tuple[spaces.Space, spaces.Space]] = {}

    _space = TransformedParallel._space
    observation_space = TransformedParallel.observation_space
    action_space = TransformedParallel.action_space

    def observe(self, agent: str) -> Any:
        return self.transform.observation(agent, self.env.observe(agent))

    def step(self, action: Any) -> None:
        if action is not None:  # None: an agent that is done leaves
            action = self.transform.action(self.env.agent_selection, action)
        self.env.step(action)

    @property
    def infos(self) -> dict[str, Any]:
        env, t = self.env, self.transform
        return {a: t.info(a, info, env.observe(a)) for a, info in env.infos.items()}

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, Any]:
        observation, reward, termination, truncation, info = self.env.last(observe=True)
        agent = self.env.agent_selection
        info = self.transform.info(agent, info, observation)
        seen = self.transform.observation(agent, observation) if observe else None
        return seen, reward, termination, truncation, info


def _wrap(env: Any, transform: Transform) -> Any:
    if isinstance(env, AECEnv):
        return TransformedAEC(env, transform)
    if isinstance(env, ParallelEnv):
        return TransformedParallel(env, transform)
    raise ValueError(f"env: expected a PettingZoo AEC or Parallel env, got {env!r}")


def numeric_infos(env: Any, action_mask: bool = True) -> Any:
    """``env`` (either form) with plain numeric infos (see the module docstring); without the
    mask with ``action_mask=False``, for a library that reads it from the observation only and
    refuses it in both places (TorchRL)."""
    return _wrap(env, NumericInfos(action_mask))


def padded_roles(env: Any) -> Any:
    """``env`` (either form) with one observation and one action space for every seat."""
    return _wrap(env, PaddedRoles(env))


def box_observations(env: Any) -> Any:
    """``env`` (either form) with Box observations: the vector, then the action mask."""
    return _wrap(env, BoxObservations())
