"""RLlib's multi-agent API over socialsim's envs: masked multi-agent training out of the box.

``pip install -e ".[rllib]"`` (Ray's RLlib 2.60 and the CPU build of torch; RLlib pins
gymnasium 1.2.2). Then::

    from socialsim.rl.rllib import RLlibSeats, shared_ppo

    config = shared_ppo({"env": "donation_v0", "reward": "mean", "n_agents": 8}, seed=0)
    algorithm = config.build_algo()
    algorithm.train()

:class:`RLlibSeats` is a ``MultiAgentEnv`` of one socialsim env (``env_config``: ``env``, the env
id; ``learners``, the seats RLlib plays, all by default; ``others``, the agent specs of the other
seats, as :class:`~socialsim.rl.seats.SharedSeats` takes them; ``features``; ``reward``,
``"own"`` or ``"mean"``; ``seed``; every other key is the env's own keyword). Its contract, the
parts RLlib's PettingZoo wrappers get wrong for these games:

* **Action masks.** A learner's observation is ``Dict(action_mask, observations)``, the layout
  of RLlib's action-masking module (``ActionMaskingTorchRLModule``, which :func:`shared_ppo`
  uses): ``action_mask`` the seat's legal actions as floats (a Decrypto encoder's per-hint masks
  joined), ``observations`` the seat's numeric observation with its features appended.
* **Agents without a decision.** After the reset, a learner is observed only when it has a
  decision, and the env steps on (the other seats acting, the learners without a decision
  waiting) until some learner has one, so RLlib is never handed an empty step.
* **Rewards between observations.** Every learner is observed at the reset and at the end, and
  each observation carries the sum of the learner's rewards since its previous one: RLlib drops
  the rewards of an agent before its first observation (a glue that observes only the deciding
  agents trained on returns of 13.6 per seat where random legal play has 20.9). The actions the
  learners without a decision are asked for at the reset (their masks allow only the no-op,
  action 0) are ignored.
* **Seeds.** ``reset(seed=s)`` restarts the env's generator of episode seeds at ``s`` (the env
  runners of ``config.debugging(seed=...)`` do), so a seeded run plays the same episodes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from gymnasium import spaces

try:
    from ray.rllib.env.multi_agent_env import MultiAgentEnv
except ModuleNotFoundError as error:  # RLlib's own dependencies (dm_tree...) come with the extra
    raise ModuleNotFoundError(
        f"socialsim.rl.rllib needs RLlib ({error.name} is missing): pip install -e '.[rllib]'",
        name=error.name,
    ) from error

from socialsim import registry
from socialsim.rl import features as features_module
from socialsim.rl.games import REWARDS, LearnerGame
from socialsim.rl.view import flat_mask_space, seat_specs

#: the one policy of :func:`shared_ppo`
SHARED = "shared"


class RLlibSeats(MultiAgentEnv):
    """The learner seats of one socialsim env for RLlib (see the module docstring)."""

    def __init__(self, config: Mapping[str, Any] | None = None):
        super().__init__()
        config = dict(config or {})
        if "env" not in config:
            raise ValueError("env: required key missing: the socialsim env id (donation_v0, ...)")
        env_id = config.pop("env")
        learners = config.pop("learners", None)
        others = config.pop("others", None)
        self.feature_specs = list(config.pop("features", ()))
        self.reward = config.pop("reward", "own")
        seed = int(config.pop("seed", 0))
        if self.reward not in REWARDS:
            raise ValueError(f"reward: must be one of {', '.join(REWARDS)}, got {self.reward!r}")
        probe = registry.make_env(env_id, "parallel", **config)
        seats = list(probe.possible_agents)
        self.learners = list(seats if learners is None else learners)
        if not self.learners or any(seat not in seats for seat in self.learners):
            raise ValueError(
                f"learners: {self.learners!r} must be seats of {env_id}, at least one; seats: {seats}"
            )
        rest = [seat for seat in seats if seat not in self.learners]
        specs = seat_specs(rest, others) if rest else {}
        for agent, spec in specs.items():
            registry.check_agent_spec(f"others.{agent}", spec)
        built = features_module.build(self.feature_specs)
        self.observation_spaces, self.action_spaces = {}, {}
        for seat in self.learners:
            raw = probe.observation_space(seat)
            mask = flat_mask_space(raw["action_mask"])
            size = int(np.prod(raw["observation"].shape))
            size += sum(int(np.prod(f.space.shape)) for f in built)
            self.observation_spaces[seat] = spaces.Dict(
                {
                    "action_mask": spaces.Box(0.0, 1.0, shape=mask.shape, dtype=np.float32),
                    "observations": spaces.Box(-np.inf, np.inf, shape=(size,), dtype=np.float32),
                }
            )
            self.action_spaces[seat] = probe.action_space(seat)
        probe.close()
        self.possible_agents = list(self.learners)
        self.agents = list(self.learners)
        self.game = LearnerGame(
            env_id, config, self.learners, specs, self.feature_specs, None, seed
        )
        self._owed = dict.fromkeys(self.learners, 0.0)

    def _observe(self, seat: str) -> dict[str, np.ndarray]:
        seen = self.game.observe(seat)
        parts = [np.ravel(seen["observation"])]
        parts += [np.ravel(seen[spec_name(f)]) for f in self.feature_specs]
        return {
            "action_mask": np.asarray(seen["action_mask"], dtype=np.float32),
            "observations": np.concatenate(parts).astype(np.float32),
        }

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            self.game.rng = np.random.default_rng(seed)
        self.game.reset()
        self._owed = dict.fromkeys(self.learners, 0.0)
        self.agents = list(self.learners)
        return {seat: self._observe(seat) for seat in self.learners}, {
            seat: {} for seat in self.learners
        }

    def step(self, action_dict: Mapping[str, Any]):
        actions = {seat: int(a) for seat, a in action_dict.items() if self.game.deciding(seat)}
        while True:
            rewards, ended, truncated = self.game.step(actions)
            got = {seat: float(rewards.get(seat, 0.0)) for seat in self.learners}
            if self.reward == "mean":
                mean = sum(got.values()) / len(got)
                got = dict.fromkeys(got, mean)
            for seat, reward in got.items():
                self._owed[seat] += reward
            if ended:
                observed = list(self.learners)
                break
            observed = [seat for seat in self.learners if self.game.deciding(seat)]
            if observed:
                break
            actions = {}  # only the other seats decide: step on
        observations = {seat: self._observe(seat) for seat in observed}
        paid = {seat: self._owed[seat] for seat in observed}
        for seat in observed:
            self._owed[seat] = 0.0
        done = {seat: ended and not truncated for seat in observed}
        cut = {seat: ended and truncated for seat in observed}
        done["__all__"], cut["__all__"] = ended and not truncated, ended and truncated
        if ended:
            self.agents = []
        return observations, paid, done, cut, {seat: {} for seat in observed}


def spec_name(feature: Any) -> str:
    """The key of a feature given by name or as an object."""
    return feature if isinstance(feature, str) else feature.name


def shared_ppo(env_config: Mapping[str, Any], seed: int = 0, hidden: tuple[int, ...] = (64, 64)):
    """An RLlib ``PPOConfig`` of :class:`RLlibSeats` with ``env_config`` in which one policy
    (:data:`SHARED`, RLlib's action-masking module) plays every learner seat, sampling in the
    driver (no env runner processes), seeded with ``seed``; refine it as any ``PPOConfig``."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import (
        ActionMaskingTorchRLModule,
    )

    module = RLModuleSpec(
        module_class=ActionMaskingTorchRLModule,
        model_config={"head_fcnet_hiddens": list(hidden), "fcnet_hiddens": list(hidden)},
    )
    return (
        PPOConfig()
        .environment(RLlibSeats, env_config=dict(env_config))
        .multi_agent(policies={SHARED}, policy_mapping_fn=lambda agent_id, *a, **k: SHARED)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={SHARED: module}))
        .env_runners(num_env_runners=0)
        .debugging(seed=seed)
    )


def greedy_actions(module: Any, observations: Mapping[str, Mapping[str, np.ndarray]]) -> dict:
    """The most probable legal action of ``module`` (a trained :data:`SHARED` module) for each
    seat of ``observations`` (what :class:`RLlibSeats` hands out)."""
    import torch
    from ray.rllib.core.columns import Columns

    seats = list(observations)
    batch = {
        key: torch.as_tensor(np.stack([observations[s][key] for s in seats]))
        for key in ("action_mask", "observations")
    }
    with torch.no_grad():
        logits = module.forward_inference({Columns.OBS: batch})[Columns.ACTION_DIST_INPUTS]
    return dict(zip(seats, logits.argmax(dim=-1).tolist(), strict=True))


def mean_return(
    env_config: Mapping[str, Any],
    choose: Callable[[Mapping[str, Mapping[str, np.ndarray]]], Mapping[str, int]],
    episodes: int = 10,
    seed: int = 0,
) -> float:
    """The mean return per learner seat over ``episodes`` episodes of :class:`RLlibSeats` with
    ``env_config`` from ``seed`` on, each learner's action chosen by ``choose(observations)``
    (e.g. :func:`greedy_actions` of a trained module, or :func:`random_legal`)."""
    env = RLlibSeats(env_config)
    returns = []
    observations, _ = env.reset(seed=seed)
    for _ in range(episodes):
        total = dict.fromkeys(env.learners, 0.0)
        while True:
            observations, rewards, done, cut, _ = env.step(choose(observations))
            for seat, reward in rewards.items():
                total[seat] += reward
            if done["__all__"] or cut["__all__"]:
                break
        returns.append(sum(total.values()) / len(total))
        observations, _ = env.reset()
    return float(np.mean(returns))


def random_legal(seed: int = 0) -> Callable[[Mapping[str, Mapping[str, np.ndarray]]], dict]:
    """A chooser of a uniformly random legal action per seat (any action where none is legal:
    the env ignores it), from its own generator."""
    rng = np.random.default_rng(seed)

    def choose(observations: Mapping[str, Mapping[str, np.ndarray]]) -> dict[str, int]:
        chosen = {}
        for seat, seen in observations.items():
            legal = np.flatnonzero(seen["action_mask"])
            chosen[seat] = int(rng.choice(legal)) if legal.size else 0
        return chosen

    return choose
