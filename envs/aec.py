"""The one AEC form of every socialsim env: the Parallel env, one agent at a time.

PettingZoo's generic ``parallel_to_aec`` selects every live agent at every step and applies the
actions only when the last of them has stepped, so an idle agent is asked for a no-op and an
invalid-action flag lands on another agent's step. :class:`DecisionAEC` selects only the agents
that have a decision now, in the order :meth:`DecisionEnv.deciding` gives; checks each action
when its agent steps (a malformed one raises ``ValueError`` naming that agent and changes
nothing; a forbidden one is flagged in ``infos[agent]["invalid_action"]`` at once); and moves
the game when the last of them has acted, so agents that decide together (the prisoner's
dilemma, Decrypto's guessers) still do not see each other's action.

A Parallel env takes part by implementing :class:`DecisionEnv`: the Parallel ``step`` is then
"check every action, :meth:`~DecisionEnv.apply`, observe everyone", and the AEC form observes
only the agent asked (:meth:`~DecisionEnv.observe`).

A shim gets all three PettingZoo entry points from :func:`entry_points`: ``raw_env`` (the AEC
class, as in PettingZoo), ``env`` and ``parallel_env``, each with the Parallel class's signature
and docstring. The AEC class keeps the order checks of PettingZoo's ``OrderEnforcingWrapper``
itself (the same errors and warning, raised through PettingZoo's ``EnvLogger``: step, observe,
render, state and ``agent_iter`` before ``reset``, in one ``_check_order``; a step once every
agent is done; a loop over ``agent_iter`` that does not step), so
``env()`` needs no wrapper layer between a training loop and the game.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils.env import AECIterable, AECIterator
from pettingzoo.utils.env_logger import EnvLogger


def idle_mask(size: int) -> np.ndarray:
    """The action mask of an agent without a decision: a new int8 vector of ``size`` allowing
    only the no-op, the space's first action (index 0), which the env ignores."""
    mask = np.zeros(size, dtype=np.int8)
    mask[0] = 1
    return mask


class DecisionEnv(ParallelEnv):
    """A Parallel env whose agents act only when they have a decision (``infos[a]["decision"]``).

    Subclasses implement :meth:`begin` and the four methods after it; :meth:`reset` and
    :meth:`step` are written once here from them.
    """

    #: whether every live agent has a decision at every step (the AEC form then asks each in
    #: a cycle, which PettingZoo's ``aec_to_parallel`` needs: its ``is_parallelizable``)
    simultaneous: bool = False

    def begin(self, seed: int | None = None, options: Mapping[str, Any] | None = None):
        """Start an episode as ``reset`` does and return the infos of its agents, without
        observing anyone (the AEC form observes only the agent it asks). An env that overrides
        :meth:`reset` instead gets this from it."""
        if type(self).reset is DecisionEnv.reset:  # each default calls the other
            raise NotImplementedError(
                f"{type(self).__name__}: a DecisionEnv implements begin() (or reset())"
            )
        return self.reset(seed=seed, options=options)[1]

    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None):
        infos = self.begin(seed=seed, options=options)
        return self.observe_all(), infos

    def deciding(self) -> list[str]:
        """The agents with a decision now, in the order the AEC form asks them."""
        raise NotImplementedError

    def check_action(self, agent: str, action: Any) -> tuple[Any, dict[str, Any] | None]:
        """Check ``agent``'s action for its decision without changing anything.

        Raise ``ValueError`` (naming the agent, the expected form and the value) if malformed;
        otherwise return the checked choice to pass to :meth:`apply` and the invalid-action
        flag ``{"reason", "fallback"}`` if the mask forbids it (the choice is then the fallback).
        """
        raise NotImplementedError

    def apply(
        self, choices: Mapping[str, Any], flags: Mapping[str, dict[str, Any]]
    ) -> tuple[dict[str, float], bool, bool, dict[str, dict[str, Any]]]:
        """Play the checked choices of every deciding agent and publish what the step reveals.

        Return ``(rewards of the live agents, terminated, truncated, infos of the live agents)``.
        ``flags`` are the invalid-action flags of this step (the game may record them); the
        forms add each to its agent's info as ``invalid_action`` and end the episode's
        ``agents`` when it is over.
        """
        raise NotImplementedError

    def observe(self, agent: str) -> Any:
        """``agent``'s observation now: a fresh object that later steps never change."""
        raise NotImplementedError

    def observe_all(self) -> dict[str, Any]:
        """Every live agent's observation; override where one pass over all is cheaper."""
        return {agent: self.observe(agent) for agent in self.agents}

    def step(self, actions: Mapping[str, Any]):
        if not self.agents:
            raise ValueError("step: the episode is over; call reset()")
        if type(actions) is not dict and not isinstance(actions, Mapping):
            raise ValueError(f"actions: expected a dict agent id -> action, got {actions!r}")
        deciding = self.deciding()
        missing = [agent for agent in deciding if agent not in actions]
        if missing:
            raise ValueError(f"actions: no action for {missing}, who must decide now")
        choices: dict[str, Any] = {}
        flags: dict[str, dict[str, Any]] = {}
        for agent in deciding:  # every action is checked before anything changes
            choices[agent], flag = self.check_action(agent, actions[agent])
            if flag is not None:
                flags[agent] = flag
        live = list(self.agents)
        rewards, terminated, truncated, infos = self.apply(choices, flags)
        _flag(infos, flags)
        if terminated or truncated:
            self.agents = []
        observations = self.observe_all() if self.agents else {a: self.observe(a) for a in live}
        return (
            observations,
            rewards,
            dict.fromkeys(live, terminated),
            dict.fromkeys(live, truncated),
            infos,
        )


def _flag(infos: dict[str, dict[str, Any]], flags: Mapping[str, dict[str, Any]]) -> None:
    for agent, flag in flags.items():  # a copy: an env may share one info among agents
        infos[agent] = {**infos[agent], "invalid_action": flag}


class DecisionAEC(AECEnv):
    """The AEC form of a :class:`DecisionEnv` (see the module docstring).

    It forwards the env's episode state (``bus``, ``turn``, ``summary()``, ``state()``,
    ``render()``) so that code written for either form reads the same names; ``unwrapped`` is
    this AEC env, as PettingZoo's AEC wrappers expect; the Parallel env is ``self.parallel``.
    """

    parallel_class: type[DecisionEnv]

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__()
        self.parallel = self.parallel_class(*args, **kwargs)
        # PettingZoo's aec_to_parallel steps every agent once a cycle: only a form that asks
        # everyone at every step can be converted so (the others: turn_based_aec_to_parallel)
        self.metadata = {**self.parallel.metadata, "is_parallelizable": self.parallel.simultaneous}
        self.possible_agents = list(self.parallel.possible_agents)
        self.render_mode = self.parallel.render_mode
        self._has_reset = False
        self._has_updated = False

    # the episode state of the Parallel env, under the same names
    bus = property(lambda self: self.parallel.bus)
    turn = property(lambda self: self.parallel.turn)

    @property
    def state_space(self):
        """The space of :meth:`state`, the Parallel env's."""
        return self.parallel.state_space

    def summary(self) -> dict[str, Any]:
        return self.parallel.summary()

    def _check_order(self, call: str) -> None:
        """PettingZoo's ``OrderEnforcingWrapper`` check before ``call``: its error (through
        PettingZoo's ``EnvLogger``) if the env has not been reset."""
        if not self._has_reset:
            _BEFORE_RESET[call]()

    def state(self) -> Any:
        self._check_order("state")
        return self.parallel.state()

    def render(self) -> str | None:
        self._check_order("render")
        return self.parallel.render()

    def agent_iter(self, max_iter: int = 2**63) -> AECIterable:
        self._check_order("agent_iter")
        return _CheckedIterable(self, max_iter)

    def close(self) -> None:
        self.parallel.close()

    def observation_space(self, agent: str):
        return self.parallel.observation_space(agent)

    def action_space(self, agent: str):
        return self.parallel.action_space(agent)

    def observe(self, agent: str) -> Any:
        self._check_order("observe")
        return self.parallel.observe(agent)

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        agent = self.agent_selection  # an AttributeError before reset, as in PettingZoo
        return (
            self.parallel.observe(agent) if observe else None,
            self._cumulative_rewards[agent],
            self.terminations[agent],
            self.truncations[agent],
            self.infos[agent],
        )

    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None) -> None:
        self._has_reset = self._has_updated = True
        parallel = self.parallel
        self.infos = parallel.begin(seed=seed, options=options)
        self.agents = list(parallel.agents)
        # no agent leaves before the episode ends: one all-zero table, copied to clear rewards
        self._no_rewards = dict.fromkeys(self.agents, 0)
        self.rewards = self._no_rewards.copy()
        self._paid = False
        self._cumulative_rewards = dict.fromkeys(self.agents, 0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self._start_step()

    def _start_step(self) -> None:
        self._queue = self.parallel.deciding()
        self._choices: dict[str, Any] = {}
        self._flags: dict[str, dict[str, Any]] = {}
        self.agent_selection = self._queue[0]

    def step(self, action: Any) -> None:
        self._check_order("step")
        self._has_updated = True
        queue = self._queue
        if not queue:  # nobody is due once the episode is over: its agents leave, all done
            if self.agents:
                self._done_step(action)
            else:  # as PettingZoo's OrderEnforcingWrapper warns
                EnvLogger.warn_step_after_terminated_truncated()
            return
        agent = self.agent_selection
        choice, flag = self.parallel.check_action(agent, action)  # raises before any change
        self._cumulative_rewards[agent] = 0
        self._choices[agent] = choice
        queue.pop(0)
        if flag is not None:
            self._flags[agent] = flag
            if queue:
                self.infos[agent] = {**self.infos[agent], "invalid_action": flag}
        if queue:
            if self._paid:  # the last move's rewards were seen at this step: clear them once
                self.rewards = self._no_rewards.copy()
                self._paid = False
            self.agent_selection = queue[0]
            return
        parallel = self.parallel
        rewards, terminated, truncated, self.infos = parallel.apply(self._choices, self._flags)
        if self._flags:
            _flag(self.infos, self._flags)
        self.rewards = rewards
        self._paid = True
        cumulative = self._cumulative_rewards
        for each, reward in rewards.items():
            cumulative[each] += reward
        if terminated or truncated:
            parallel.agents = []
            self.terminations = dict.fromkeys(self.agents, terminated)
            self.truncations = dict.fromkeys(self.agents, truncated)
            self.agent_selection = self._first_done = self.agents[0]
        else:
            self._start_step()

    def _done_step(self, action: Any) -> None:
        """PettingZoo's ``_was_dead_step`` for an env whose agents all end together: the
        selected agent leaves, the next in order is selected (the first to leave once none is
        left, as there)."""
        if action is not None:
            raise ValueError("when an agent is dead, the only valid action is None")
        agent = self.agent_selection
        for table in (
            self.terminations,
            self.truncations,
            self.rewards,
            self._cumulative_rewards,
            self.infos,
        ):
            del table[agent]
        self.agents.remove(agent)
        self.agent_selection = self.agents[0] if self.agents else self._first_done
        self.rewards = dict.fromkeys(self.agents, 0)


#: PettingZoo's error for each call made before ``reset`` (its ``OrderEnforcingWrapper``'s)
_BEFORE_RESET: Mapping[str, Callable[[], None]] = {
    "step": EnvLogger.error_step_before_reset,
    "observe": EnvLogger.error_observe_before_reset,
    "state": EnvLogger.error_state_before_reset,
    "render": EnvLogger.error_render_before_reset,
    "agent_iter": EnvLogger.error_agent_iter_before_reset,
}


class _CheckedIterable(AECIterable):
    def __iter__(self) -> AECIterator:
        return _CheckedIterator(self.env, self.max_iter)


class _CheckedIterator(AECIterator):
    """``agent_iter``'s iterator, asserting that the loop stepped since the last agent."""

    def __next__(self) -> str:
        env = self.env
        if not env.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        assert env._has_updated, "need to call step() or reset() in a loop over `agent_iter`"
        env._has_updated = False
        return env.agent_selection


def entry_points(
    parallel_class: type[DecisionEnv],
) -> tuple[type[DecisionAEC], Callable[..., AECEnv], Callable[..., DecisionEnv]]:
    """``(raw_env, env, parallel_env)`` of a shim, as PettingZoo's own envs offer them.

    ``raw_env`` is the AEC class (with the order checks built in); ``env`` builds it, as
    PettingZoo's ``env()`` builds the AEC env its users step; ``parallel_env`` builds the
    Parallel env. All three take and show the Parallel class's arguments.
    """
    signature = inspect.signature(parallel_class)
    name = parallel_class.metadata["name"]
    raw_env = type(
        "raw_env",
        (DecisionAEC,),
        {
            "parallel_class": parallel_class,
            "metadata": {
                **parallel_class.metadata,
                "is_parallelizable": parallel_class.simultaneous,
            },
            "__doc__": f"The AEC form of ``{name}`` (see :class:`DecisionAEC`).",
            "__module__": f"socialsim.envs.{name}",
        },
    )
    raw_env.__signature__ = signature

    @functools.wraps(parallel_class, assigned=("__doc__",), updated=())
    def env(*args: Any, **kwargs: Any) -> AECEnv:
        return raw_env(*args, **kwargs)

    @functools.wraps(parallel_class, assigned=("__doc__",), updated=())
    def parallel_env(*args: Any, **kwargs: Any) -> DecisionEnv:
        return parallel_class(*args, **kwargs)

    for function in (env, parallel_env):
        function.__signature__ = signature.replace(return_annotation=inspect.Signature.empty)
        function.__module__ = f"socialsim.envs.{name}"
        function.__qualname__ = function.__name__
    return raw_env, env, parallel_env
