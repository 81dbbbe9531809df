"""A Gymnasium env over any socialsim env: one learner seat, every other seat an agent.

``SeatView("donation_v0", seat="agent_0", others={"kind": "stern_judging"}, n_agents=8)`` is a
``gymnasium.Env`` in which the learner plays ``seat`` and the other seats are agents built from
experiment-style specs, exactly as ``socialsim run`` builds and feeds them: the runner's
:func:`~socialsim.episode.build_agents` builds them with the episode's
:func:`~socialsim.seeding.agent_seed`, and the runner's episode bookkeeping logs every step, so
each episode's :class:`~socialsim.records.EpisodeRecord` is :attr:`SeatView.record` and equals
the runner's for the same seed and agents. Probes are not run.

Contract:

* The episode is an :class:`~socialsim.episode.Episode` driven from here: the view supplies
  the learner's action and asks the episode for the other deciding seats' (``choose``, or
  ``achoose`` when a seat has an ``aact`` of its own).
* ``reset(seed=s)`` plays the episode of seed ``s`` (the runner's episode seed); ``reset()``
  without a seed draws the next episode seed from the view's ``np_random``, so a seeded view
  gives the same episodes, in order, every time.
* Between two learner decisions the view plays the other seats; ``step`` returns the learner's
  next observation and the sum of the learner's rewards since its last action (the first step's
  also holds what was paid before the learner's first decision, so the returns add up to the
  record's). The episode ends
  (``terminated``/``truncated`` as the env says) when the game does, whether or not the learner
  decides again; the final observation's mask allows only the no-op (action 0, ignored).
* **Observation**: the learner's own numeric observation dict of the env, ``{"observation",
  "action_mask"}`` (one flat vector: a ``MultiDiscrete`` space's per-part masks concatenated), plus one
  key per feature in ``features``: a name of :mod:`socialsim.rl.features` or a feature object
  (such as ``socialsim.agents.rl.decrypto.HintHistory``, the embedding features of a Decrypto
  guess). :meth:`action_masks` is the mask as
  booleans, what sb3-contrib's ``MaskablePPO`` reads.
* **Action**: the seat's action space. Gossip games: ``Discrete`` over the game's action table
  (e.g. the donation game's 0 defect, 1 cooperate, 2-6 the tones). Decrypto: the decoder or the
  interceptor picks one of the 24 codes, ``Discrete(24)`` indexing
  ``socialsim.envs.decrypto.protocol.CODES`` (0 is 1-2-3); its observation is the env's integer
  vector (turn, tokens, the seat's keywords if a teammate, the current hints and the hint and
  code history, all as vocabulary indices; see ``socialsim.envs.decrypto_v0``). The encoder's
  hint choice is one ``Discrete`` hint per step, three steps a turn.
* ``info``: the learner's env info (``decision``, ...). :attr:`messages` holds the bus messages
  new in the learner's inbox at its current decision, as an agent would receive them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from socialsim import registry
from socialsim.agent import Agent, RunContext
from socialsim.episode import Episode, EpisodeSpec, build_agents
from socialsim.records import EpisodeRecord
from socialsim.rl import features as features_module
from socialsim.seeding import agent_seed

_SEED_HIGH = 2**31
#: the seat spec recorded for a learner's seat
LEARNER: Mapping[str, Any] = {"kind": "learner"}


def _spec(where: str, spec: Any) -> dict[str, Any]:
    if not isinstance(spec, Mapping):
        raise ValueError(
            f"{where}: expected an agent spec, a table with a 'kind' key (e.g. "
            f"{{'kind': 'stern_judging'}}), got {spec!r}"
        )
    return dict(spec)


def seat_specs(rest: Sequence[str], others: Any) -> dict[str, Mapping[str, Any]]:
    """The agent spec of each seat of ``rest``: ``others`` is one spec for all of them
    (``{"kind": ...}``), a table seat -> spec, or a list of specs in seat order."""
    if isinstance(others, Mapping) and "kind" in others:
        return {agent: dict(others) for agent in rest}
    if isinstance(others, Mapping):
        unknown = sorted(set(others) - set(rest))
        missing = [agent for agent in rest if agent not in others]
        if unknown or missing:
            raise ValueError(
                f"others: a table of seat -> agent spec must name exactly the seats {rest}; "
                f"unknown {unknown}, missing {missing}"
            )
        return {agent: _spec(f"others.{agent}", others[agent]) for agent in rest}
    if isinstance(others, Sequence) and not isinstance(others, str):
        if len(others) != len(rest):
            raise ValueError(
                f"others: a list needs one agent spec per other seat ({len(rest)}: {rest}), "
                f"got {len(others)}"
            )
        return {
            agent: _spec(f"others[{i}]", spec)
            for i, (agent, spec) in enumerate(zip(rest, others, strict=True))
        }
    raise ValueError(
        f"others: expected an agent spec, a table seat -> spec or a list of specs, got {others!r}"
    )


def flat_mask(mask: Any) -> np.ndarray:
    """One int8 mask vector (a tuple of per-position masks is concatenated)."""
    if isinstance(mask, tuple):
        return np.concatenate(mask).astype(np.int8, copy=False)
    return mask


def flat_mask_space(space: spaces.Space) -> spaces.Space:
    """The space of :func:`flat_mask`'s vectors (a tuple of per-position masks as one Box)."""
    if isinstance(space, spaces.Tuple):
        size = sum(int(np.prod(s.shape)) for s in space.spaces)
        return spaces.Box(0, 1, shape=(size,), dtype=np.int8)
    return space


def learner_episode(
    spec: EpisodeSpec, learners: Sequence[str], run: RunContext | None = None
) -> Episode:
    """The episode of ``spec`` with ``learners``' seats played from outside: each a bare
    :class:`~socialsim.agent.Agent` in the record (its counters and no events), every other seat
    the agent its spec builds."""
    agents = build_agents(spec, [a for a in spec.seats if a not in learners], run)
    for seat in learners:
        learner = Agent()
        learner.reset(seat, seat, agent_seed(spec.seed, seat))
        agents[seat] = learner
    return Episode(spec, agents, run)


class SeatView(gymnasium.Env):
    """One learner seat of a socialsim env as a Gymnasium env (see the module docstring).

    Arguments: ``env`` (a socialsim env id, e.g. ``"donation_v0"``), ``seat`` (the learner's
    agent id), ``others`` (the other seats' agent specs), ``features`` (extra observation keys),
    ``learner`` (the spec recorded for the learner's seat in :attr:`record`), ``experiment``
    (the name recorded), ``run`` (the :class:`~socialsim.agent.RunContext` the agents share),
    ``render_mode`` (``"ansi"``) and the env's own keyword arguments.
    """

    metadata = {"render_modes": ["ansi"]}

    def __init__(
        self,
        env: str,
        seat: str,
        others: Any,
        features: Sequence[str] = (),
        learner: Mapping[str, Any] | None = None,
        experiment: str = "",
        run: RunContext | None = None,
        render_mode: str | None = None,
        **env_kwargs: Any,
    ):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode: must be 'ansi' or None, got {render_mode!r}")
        self.env_id = env
        self.render_mode = render_mode
        self.env_kwargs = dict(env_kwargs, **({"render_mode": render_mode} if render_mode else {}))
        probe = registry.make_env(env, "parallel", **self.env_kwargs)  # bad ids and kwargs raise
        if seat not in probe.possible_agents:
            raise ValueError(
                f"seat: {seat!r} is not a seat of {env}; seats: {probe.possible_agents}"
            )
        self.seat = seat
        self.others = seat_specs([a for a in probe.possible_agents if a != seat], others)
        for agent, spec in self.others.items():
            registry.check_agent_spec(f"others.{agent}", spec)
        self.learner_spec = dict(learner if learner is not None else LEARNER)
        self.experiment = experiment
        self.run = run if run is not None else RunContext()
        self._features = features_module.build(features)
        self.feature_names = tuple(f.name for f in self._features)
        raw = probe.observation_space(seat)
        mask_space = flat_mask_space(raw["action_mask"])
        self.observation_space = spaces.Dict(
            {
                "observation": raw["observation"],
                "action_mask": mask_space,
                **{f.name: f.space for f in self._features},
            }
        )
        self.action_space = probe.action_space(seat)
        self._discrete = isinstance(self.action_space, spaces.Discrete)
        probe.close()
        self.episodes = 0
        self.messages: list[Any] = []
        self._episode: Episode | None = None
        self._record: EpisodeRecord | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    # -- the Gymnasium API -----------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: Mapping[str, Any] | None = None):
        super().reset(seed=seed)
        episode_seed = seed if seed is not None else int(self.np_random.integers(_SEED_HIGH))
        spec = EpisodeSpec(
            env_id=self.env_id,
            seed=int(episode_seed),
            seats={self.seat: self.learner_spec, **self.others},
            env_kwargs=self.env_kwargs,
            episode=self.episodes,
            experiment=self.experiment,
        )
        self.episodes += 1
        if self._episode is not None:
            self._episode.env.close()
        self._episode = episode = learner_episode(spec, [self.seat], self.run)
        self._record = None
        self._started = datetime.now(UTC).isoformat(timespec="seconds")
        self._t0 = time.perf_counter()
        for feature in self._features:
            feature.reset(self.seat)
        episode.start()
        # rewards paid before the learner's first decision (a donation it received) come with
        # its first step, so the view's return is the record's
        self._carry = self._play_others()
        if episode.over:
            raise RuntimeError(
                f"{self.env_id}: the episode of seed {spec.seed} ended before {self.seat} "
                "had a decision"
            )
        return self._observe(), dict(episode.infos[self.seat])

    def step(self, action: Any):
        episode = self._episode
        if episode is None or episode.over:
            raise RuntimeError("step: the episode is over; call reset()")
        if self._discrete and isinstance(action, np.integer | np.ndarray):
            action = int(action)  # the env's fast path takes a plain int
        reward = self._advance({self.seat: action}) + self._carry
        self._carry = 0.0
        if not episode.over:
            reward += self._play_others()
        terminated, truncated = (False, False)
        if episode.over:
            terminated = bool(episode.terminations.get(self.seat, True))
            truncated = bool(episode.truncations.get(self.seat, False))
        return self._observe(), reward, terminated, truncated, dict(episode.infos[self.seat])

    def action_masks(self) -> np.ndarray:
        """The legal actions of the learner's decision now, as booleans (for MaskablePPO)."""
        return self._mask.astype(bool)

    @property
    def record(self) -> EpisodeRecord | None:
        """The record of the episode just finished (``None`` while it is being played)."""
        episode = self._episode
        if episode is None or not episode.over:
            return None
        if self._record is None:
            self._record = episode.record(
                "done", None, self._started, time.perf_counter() - self._t0
            )
        return self._record

    def render(self) -> str | None:
        if self.render_mode is None or self._episode is None:
            return None
        return self._episode.env.render()

    def close(self) -> None:
        if self._episode is not None:
            self._episode.env.close()
        if self._loop is not None:
            self._loop.close()
            self._loop = None

    # -- playing: the learner's episode driven one learner decision at a time -----------------

    def _play_others(self) -> float:
        """Play steps without the learner until it has a decision or the episode ends; the
        learner's rewards of those steps."""
        episode, seat, reward = self._episode, self.seat, 0.0
        while episode.deciding and seat not in episode.deciding:
            reward += self._advance({})
        return reward

    def _advance(self, actions: dict[str, Any]) -> float:
        """One step: ``actions`` plus those of every other deciding seat; the learner's reward."""
        episode = self._episode
        others = [a for a in episode.deciding if a not in actions]
        if episode.synchronous or not others:
            actions.update(episode.choose(others))
        else:  # language agents wait on their models together, as in the runner
            actions.update(self._event_loop().run_until_complete(episode.achoose(others)))
        episode.advance(actions)
        return float(episode.rewards.get(self.seat, 0.0))

    def _observe(self) -> dict[str, np.ndarray]:
        """The learner's observation now; reads its inbox as an agent's turn would."""
        episode = self._episode
        raw = episode.observations[self.seat]
        info = episode.infos[self.seat]
        self.messages = episode.inbox(self.seat) if not episode.over else []
        self._mask = flat_mask(raw["action_mask"])
        out = {"observation": raw["observation"], "action_mask": self._mask}
        for feature in self._features:
            out[feature.name] = feature(raw, self.messages, info)
        return out

    def _event_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        return self._loop
