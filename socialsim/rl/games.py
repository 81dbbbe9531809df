"""One game of a multi-seat trainer: an :class:`~socialsim.episode.Episode` whose learner seats
are given actions from outside and whose other seats are played by their agents.

Shared by :class:`~socialsim.rl.seats.SharedSeats` (Stable-Baselines3) and
:class:`~socialsim.rl.rllib.RLlibSeats` (RLlib's multi-agent API), so both feed a learner seat
the same observation (its own and its features, computed from its bus inbox), play the game
through the one episode machine and keep the record ``socialsim run`` makes of the same seed,
seats and actions.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np

from socialsim.agent import RunContext
from socialsim.episode import Episode, EpisodeSpec
from socialsim.records import EpisodeRecord
from socialsim.rl import features as features_module
from socialsim.rl.view import LEARNER, flat_mask, learner_episode

_SEED_HIGH = 2**31
#: what a learner is rewarded: its seat's own reward, or the mean of its game's learner seats'
REWARDS = ("own", "mean")


class LearnerGame:
    """``env_id`` with ``learners`` acting from outside and ``others`` (seat -> agent spec)
    played by their agents; each reset plays the next episode seed of its own generator
    (``np.random.default_rng(seed)``), so a seeded trainer plays the same episodes.
    ``learner`` is the spec recorded for the learners' seats."""

    def __init__(
        self,
        env_id: str,
        env_kwargs: Mapping[str, Any],
        learners: Sequence[str],
        others: Mapping[str, Mapping[str, Any]],
        feature_specs: Sequence[Any] = (),
        run: RunContext | None = None,
        seed: int = 0,
        learner: Mapping[str, Any] | None = None,
    ):
        self.env_id, self.env_kwargs = env_id, dict(env_kwargs)
        self.learners, self.others = list(learners), dict(others)
        self.feature_specs = list(feature_specs)
        self.learner_spec = dict(learner if learner is not None else LEARNER)
        self.run = run if run is not None else RunContext()
        self.rng = np.random.default_rng(seed)
        self.episodes = 0
        self.episode: Episode | None = None
        #: the last episode played to its end, when it started and its wall time
        self.finished: tuple[Episode, str, float] | None = None
        self._record: EpisodeRecord | None = None

    def reset(self) -> None:
        seed = int(self.rng.integers(_SEED_HIGH))
        seats = {**dict.fromkeys(self.learners, self.learner_spec), **self.others}
        spec = EpisodeSpec(self.env_id, seed, seats, self.env_kwargs, episode=self.episodes)
        self.episodes += 1
        self.close()
        self.episode = learner_episode(spec, self.learners, self.run)
        self.started = datetime.now(UTC).isoformat(timespec="seconds")
        self.t0 = time.perf_counter()
        self.features = {seat: features_module.build(self.feature_specs) for seat in self.learners}
        for seat, built in self.features.items():
            for feature in built:
                feature.reset(seat)
        self.episode.start()

    @property
    def env(self):
        return self.episode.env

    @property
    def infos(self) -> Mapping[str, Any]:
        return self.episode.infos

    def deciding(self, seat: str) -> bool:
        """Whether ``seat`` has a decision now."""
        return seat in self.episode.deciding

    def observe(self, seat: str) -> dict[str, np.ndarray]:
        """``seat``'s observation, mask (flat) and features; reads its new inbox messages."""
        episode = self.episode
        raw, info = episode.observations[seat], episode.infos[seat]
        out = {"observation": raw["observation"], "action_mask": flat_mask(raw["action_mask"])}
        messages = episode.inbox(seat)
        for feature in self.features[seat]:
            out[feature.name] = feature(raw, messages, info)
        return out

    def step(self, learner_actions: Mapping[str, Any]) -> tuple[Mapping[str, float], bool, bool]:
        """One env step: the learners' actions where they decide, the others' own; returns
        ``(rewards, ended, truncated)``."""
        episode = self.episode
        deciding = episode.deciding
        chosen = episode.choose([a for a in deciding if a not in learner_actions])
        episode.advance(
            {a: learner_actions[a] if a in learner_actions else chosen[a] for a in deciding}
        )
        ended = episode.over
        truncated = (
            ended and any(episode.truncations.values()) and not any(episode.terminations.values())
        )
        if ended:
            episode.env.close()
            self.finished = (episode, self.started, time.perf_counter() - self.t0)
            self._record = None
        return episode.rewards, ended, truncated

    def close(self) -> None:
        if self.episode is not None:
            self.episode.env.close()

    @property
    def record(self) -> EpisodeRecord | None:
        """The record of the last episode played to its end (made when first asked)."""
        if self._record is None and self.finished is not None:
            episode, started, wall = self.finished
            self._record = episode.record("done", None, started, wall)
        return self._record
