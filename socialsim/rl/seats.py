"""Parameter sharing: many seats of a PettingZoo Parallel env as one Stable-Baselines3 ``VecEnv``.

``SharedSeats("donation_v0", n_games=2, learners=[...], others={...}, features=[...], **kwargs)``
plays ``n_games`` copies of the env side by side; each learner seat of each game is one slot of
the ``VecEnv`` (``num_envs = n_games * len(learners)``), so one policy trained on it acts in
every learner seat (parameter sharing) and every env step gives one sample per learner seat.
The other seats are agents built from experiment-style specs, as the runner builds them (its
:func:`~socialsim.episode.build_agents`, with each episode's agent seeds), and play through their
``act``. With ``learners=None`` every seat is a learner. Each game is an
:class:`~socialsim.episode.Episode` driven from here, so each keeps its record
(:meth:`SharedSeats.records`), the one ``socialsim run`` makes of the same seeds and actions.

Why our own and not SuperSuit's ``pettingzoo_env_to_vec_env_v1``: MaskablePPO reads the action
masks through ``env_method("action_masks")``, which SuperSuit's SB3 wrapper does not pass on,
and a seat's policy needs the features (:mod:`socialsim.rl.features`) computed from its bus
inbox, which a wrapper of the numeric observations never sees.

Contract:

* A slot's observation is what a :class:`~socialsim.rl.view.SeatView` gives that seat (its
  observation dict plus one key per feature), or the ``keys`` of it named (``action_mask``
  always among them). Its reward is the seat's reward of the step (``reward="own"``) or the mean
  of the step's rewards of its game's learner seats (``reward="mean"``: the group's welfare per
  seat, a cooperative objective).
* The env steps every game at once. A learner seat without a decision this step has an
  ``action_masks()`` row allowing only the no-op (action 0): MaskablePPO's masked distribution
  gives its sample a constant log-probability, so it moves the value estimate and never the
  policy; the env ignores its action.
* When a game ends, its slots are ``done`` (``info["terminal_observation"]`` is the last
  observation, ``info["TimeLimit.truncated"]`` set on truncation) and the game restarts on the
  next episode seed, drawn from the game's own generator (``np.random.default_rng(seed + g)``,
  ``seed`` given here or by ``VecEnv.seed``), so a seeded run plays the same episodes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv

from socialsim import registry
from socialsim.agent import RunContext
from socialsim.records import EpisodeRecord
from socialsim.rl import features as features_module
from socialsim.rl.games import REWARDS, LearnerGame
from socialsim.rl.view import LEARNER, flat_mask_space, seat_specs


class SharedSeats(VecEnv):
    """Learner seats of ``n_games`` games as one SB3 ``VecEnv`` (see the module docstring)."""

    def __init__(
        self,
        env: str,
        n_games: int = 1,
        learners: Sequence[str] | None = None,
        others: Any = None,
        features: Sequence[Any] = (),
        keys: Sequence[str] | None = None,
        reward: str = "own",
        seed: int = 0,
        run: RunContext | None = None,
        learner: Mapping[str, Any] | None = None,
        **env_kwargs: Any,
    ):
        if isinstance(n_games, bool) or not isinstance(n_games, int) or n_games < 1:
            raise ValueError(f"n_games: must be an integer >= 1, got {n_games!r}")
        if reward not in REWARDS:
            raise ValueError(f"reward: must be one of {', '.join(REWARDS)}, got {reward!r}")
        self.reward = reward
        self.env_id = env
        self.env_kwargs = dict(env_kwargs)
        probe = registry.make_env(env, "parallel", **self.env_kwargs)
        seats = list(probe.possible_agents)
        self.learners = list(seats if learners is None else learners)
        unknown = [seat for seat in self.learners if seat not in seats]
        if unknown or not self.learners:
            raise ValueError(
                f"learners: {self.learners!r} must be seats of {env}, at least one; seats: {seats}"
            )
        rest = [seat for seat in seats if seat not in self.learners]
        self.others = seat_specs(rest, others) if rest else {}
        for agent, spec in self.others.items():
            registry.check_agent_spec(f"others.{agent}", spec)
        self.learner_spec = dict(learner if learner is not None else LEARNER)
        self.feature_specs = list(features)
        self.run = run if run is not None else RunContext()
        built = features_module.build(self.feature_specs)
        raw = probe.observation_space(self.learners[0])
        action_space = probe.action_space(self.learners[0])
        for seat in self.learners[1:]:
            if probe.observation_space(seat) != raw or probe.action_space(seat) != action_space:
                raise ValueError(
                    f"learners: {seat} and {self.learners[0]} have different spaces; one shared "
                    "policy needs one observation and one action space"
                )
        mask_space = flat_mask_space(raw["action_mask"])
        given = {
            "observation": raw["observation"],
            "action_mask": mask_space,
            **{f.name: f.space for f in built},
        }
        self.keys = list(given if keys is None else keys)
        if "action_mask" not in self.keys or any(key not in given for key in self.keys):
            raise ValueError(
                f"keys: {self.keys!r} must include 'action_mask' and name only {list(given)}"
            )
        observation_space = spaces.Dict({key: given[key] for key in self.keys})
        probe.close()
        super().__init__(n_games * len(self.learners), observation_space, action_space)
        self.base_seed = int(seed)
        self.n_games = n_games
        self._games: list[LearnerGame] = []
        self._actions: np.ndarray | None = None

    # -- VecEnv -----------------------------------------------------------------------------------

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        if seed is not None:
            self.base_seed = int(seed)
        return [self.base_seed + g for g in range(self.n_games) for _ in self.learners]

    def reset(self):
        self.close()
        self._games = [
            LearnerGame(
                self.env_id,
                self.env_kwargs,
                self.learners,
                self.others,
                self.feature_specs,
                self.run,
                self.base_seed + g,
                self.learner_spec,
            )
            for g in range(self.n_games)
        ]
        for game in self._games:
            game.reset()
        return self._observe_all()[0]

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions

    def step_wait(self):
        actions = self._actions
        n = len(self.learners)
        rewards = np.zeros(self.num_envs, dtype=np.float32)
        dones = np.zeros(self.num_envs, dtype=bool)
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        ended_games = []
        for g, game in enumerate(self._games):
            chosen = {seat: int(actions[g * n + i]) for i, seat in enumerate(self.learners)}
            step_rewards, ended, truncated = game.step(chosen)
            for i, seat in enumerate(self.learners):
                rewards[g * n + i] = float(step_rewards.get(seat, 0.0))
            if self.reward == "mean":
                rewards[g * n : (g + 1) * n] = rewards[g * n : (g + 1) * n].mean()
            if ended:
                ended_games.append(g)
                for i, seat in enumerate(self.learners):
                    slot = g * n + i
                    dones[slot] = True
                    seen = game.observe(seat)
                    infos[slot]["terminal_observation"] = {k: seen[k] for k in self.keys}
                    infos[slot]["TimeLimit.truncated"] = truncated
                game.reset()
        observations, _ = self._observe_all()
        return observations, rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        """Every slot's legal actions now, as booleans (for MaskablePPO)."""
        return self._masks.astype(bool)

    def env_method(self, method_name: str, *args, indices=None, **kwargs) -> list[Any]:
        if method_name != "action_masks":
            raise AttributeError(f"SharedSeats: no env method {method_name!r}")
        return list(self.action_masks()[list(self._get_indices(indices))])

    def get_attr(self, attr_name: str, indices=None) -> list[Any]:
        if attr_name == "render_mode":  # asked by VecEnv.__init__; the slots do not render
            return [None for _ in self._get_indices(indices)]
        if attr_name != "action_masks":
            raise AttributeError(f"SharedSeats: no env attribute {attr_name!r}")
        return [self.action_masks for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        raise AttributeError(f"SharedSeats: cannot set {attr_name!r}")

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]

    def close(self) -> None:
        for game in self._games:
            game.close()
        self._games = []

    def records(self) -> list[EpisodeRecord | None]:
        """Each game's record of its last episode played to its end (``None`` before one
        ended): the record ``socialsim run`` makes of the same seed, seats and actions."""
        return [game.record for game in self._games]

    # -- observations -----------------------------------------------------------------------------

    def _observe_all(self) -> tuple[dict[str, np.ndarray], None]:
        out = {
            key: np.zeros((self.num_envs, *space.shape), dtype=space.dtype)
            for key, space in self.observation_space.spaces.items()
        }
        slot = 0
        for game in self._games:
            for seat in self.learners:
                seen = game.observe(seat)
                for key, value in out.items():
                    value[slot] = seen[key]
                slot += 1
        self._masks = out["action_mask"]
        return out, None
