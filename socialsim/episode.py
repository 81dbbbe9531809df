"""One episode being played: :class:`EpisodeSpec` says what determines it, :class:`Episode`
holds its env, its agents and its log while it is played, step by step.

Every game is played by driving an :class:`Episode`: the runner (:mod:`socialsim.runner`) with
its two drivers, :meth:`Episode.play` and :meth:`Episode.aplay`; the RL seat views
(:mod:`socialsim.rl.view`, :mod:`socialsim.rl.seats`) one learner decision at a time; the
terminal and the browser through :meth:`Episode.aplay` with an ``on_deciding`` hook.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from socialsim import registry
from socialsim.agent import RunContext, decides_synchronously
from socialsim.deadline import Deadline
from socialsim.interventions import Interventions
from socialsim.plain_json import canonical_json, jsonable, orjson_text
from socialsim.records import EpisodeRecord, cell_id
from socialsim.seeding import agent_seed


@dataclass(frozen=True)
class EpisodeSpec:
    """Everything that determines one episode."""

    env_id: str
    seed: int
    seats: Mapping[str, Mapping[str, Any]]  # agent id -> agent spec ({"kind": ..., **params})
    env_kwargs: Mapping[str, Any] = field(default_factory=dict)
    form: str = "parallel"
    episode: int = 0
    cell: Mapping[str, Any] = field(default_factory=dict)
    experiment: str = ""
    probes: Sequence[Mapping[str, Any]] = ()  # each {"name": ..., **params}
    #: changes made on the bus while it is played (:mod:`socialsim.interventions`)
    interventions: Sequence[Mapping[str, Any]] = ()
    max_steps: int = 1_000_000
    #: seconds an agent may take to decide, and the episode to be played (None: unbounded;
    #: :mod:`socialsim.deadline`)
    decision_timeout: float | None = None
    episode_timeout: float | None = None

    @property
    def key(self) -> tuple[str, int]:
        """The key of this episode's record (:attr:`EpisodeRecord.key`)."""
        return (cell_id(dict(self.cell)), self.episode)


class SeatError(Exception):
    """An agent raised while deciding: the record names its seat and kind."""

    def __init__(self, seat: str, kind: str, error: Exception, where: str = ""):
        self.seat, self.kind, self.error = seat, kind, error
        super().__init__(f"seat {seat} ({kind}){where}: {type(error).__name__}: {error}")


@dataclass
class ProbeContext:
    """What a probe sees just before the runner asks ``acting`` agents for their actions."""

    turn: int
    acting: list[str]
    agents: Mapping[str, Any]
    observations: Mapping[str, Any]
    infos: Mapping[str, Any]
    env: Any  # the unwrapped env: read it, never step or mutate it
    results: list[dict[str, Any]]

    def record(self, result: Mapping[str, Any]) -> None:
        self.results.append({"turn": self.turn, **result})


def noop_action(space) -> Any:
    """The action passed for an agent that has no decision at an AEC step (it is ignored)."""
    from gymnasium import spaces

    if isinstance(space, spaces.Discrete):
        return int(space.start)
    if isinstance(space, spaces.MultiDiscrete):
        return np.asarray(space.start if hasattr(space, "start") else 0) + np.zeros(
            space.shape, dtype=space.dtype
        )
    if isinstance(space, spaces.MultiBinary):
        return np.zeros(space.shape, dtype=space.dtype)
    if isinstance(space, spaces.Box):
        return np.clip(np.zeros(space.shape, dtype=space.dtype), space.low, space.high)
    raise TypeError(f"no no-op action for a {type(space).__name__} space")


def build_agents(
    spec: EpisodeSpec, agent_ids: Sequence[str], run: RunContext | None = None
) -> dict[str, Any]:
    run = run if run is not None else RunContext()
    agents = {}
    for agent_id in agent_ids:
        seat_spec = spec.seats.get(agent_id)
        if seat_spec is None:
            raise ValueError(
                f"seats: no agent for seat {agent_id!r}; the env's seats are {list(agent_ids)}"
            )
        try:
            agent = registry.build_agent(seat_spec)
            agent.attach(run)
            agent.reset(agent_id, agent_id, agent_seed(spec.seed, agent_id))
        except ValueError:  # a seat's spec refused, naming its key: a configuration error
            raise
        except Exception as error:  # noqa: BLE001 - named after its seat: the episode fails
            raise SeatError(agent_id, str(seat_spec.get("kind", "")), error) from error
        agents[agent_id] = agent
    return agents


def failed_record(spec: EpisodeSpec, reason: str, timing: Mapping[str, Any] | None = None):
    """The record of ``spec``'s episode that failed before it could be played or say more (an
    agent that could not be built, a worker that died playing it)."""
    return EpisodeRecord(
        experiment=spec.experiment,
        cell=dict(spec.cell),
        episode=spec.episode,
        seed=spec.seed,
        env_id=spec.env_id,
        env_kwargs=dict(spec.env_kwargs),
        form=spec.form,
        seats={k: dict(v) for k, v in spec.seats.items()},
        status="failed",
        error=reason,
        timing=dict(timing or {}),
    )


#: ``await on_deciding(agent_ids)``: told who is deciding now, before the agents of a step are
#: asked and again each time one of them has answered (the front ends say whom a game waits for).
OnDeciding = Callable[[list[str]], Awaitable[None]]


class Episode:
    """One episode being played: a state machine that does no deciding of its own (as h11 does no
    I/O), driven from outside::

        episode = Episode(spec)          # builds the env and the agents: a bad spec raises here
        episode.start()                  # reset(seed); the first decisions are due
        while episode.deciding:          # the agents that must act now (one in the AEC form)
            actions = {a: decide(*episode.view(a)) for a in episode.deciding}
            episode.advance(actions)     # env.step, the step logged, the next decisions found
        record = episode.record("done", None, started, wall)

    Its two drivers are :meth:`play` (each agent's ``act``, no event loop) and :meth:`aplay`
    (each agent's ``aact``, the agents of one step waiting together); a driver that supplies some
    actions itself (the RL seat views) asks the rest of :meth:`choose` or :meth:`achoose`.

    In the AEC form the steps of agents without a decision (a no-op) and of ended agents
    (``None``) are taken by :meth:`start` and :meth:`advance` themselves.
    """

    def __init__(
        self,
        spec: EpisodeSpec,
        agents: Mapping[str, Any] | None = None,
        run: RunContext | None = None,
    ):
        self.spec = spec
        self.env = registry.make_env(spec.env_id, spec.form, **dict(spec.env_kwargs))
        self.unwrapped = self.env.unwrapped
        self.agents = (
            dict(agents)
            if agents is not None
            else build_agents(spec, self.env.possible_agents, run)
        )
        self.probes = [registry.make_probe(**dict(p)) for p in spec.probes]
        self.interventions = Interventions(spec.interventions)
        self.steps: list[dict[str, Any]] = []
        self.returns: dict[str, float] = {a: 0.0 for a in self.env.possible_agents}
        self.invalid: dict[str, int] = {a: 0 for a in self.env.possible_agents}
        self.probe_results: list[dict[str, Any]] = []
        self.deciding: list[str] = []
        self.observations: Mapping[str, Any] = {}
        self.infos: Mapping[str, Any] = {}
        #: the last env step's rewards, terminations and truncations (the Parallel form's)
        self.rewards: Mapping[str, float] = {}
        self.terminations: Mapping[str, bool] = {}
        self.truncations: Mapping[str, bool] = {}
        #: whether every agent decides with a plain ``act`` and no probe asks questions: then
        #: :meth:`play` needs no event loop
        self.synchronous = not self.probes and all(
            decides_synchronously(type(agent)) for agent in self.agents.values()
        )
        self.deadline = Deadline(spec.decision_timeout, spec.episode_timeout)
        self._bounded_decisions = bool(self.deadline)  # read at every decision
        self._aec = spec.form != "parallel"
        self._iterations = 0  # AEC steps taken, bounded by max_steps as agent_iter would be

    @property
    def bus(self):
        return getattr(self.unwrapped, "bus", None)

    @property
    def over(self) -> bool:
        """Whether the game has ended (no live agent)."""
        return not self.env.agents

    def turn(self) -> int:
        return int(getattr(self.unwrapped, "turn", len(self.steps)))

    def inbox(self, agent_id: str) -> list:
        bus = self.bus
        return bus.read(agent_id) if bus is not None else []

    def view(self, agent_id: str) -> tuple[Any, list, Mapping[str, Any]]:
        """What a deciding agent is given: its observation, its new inbox messages (read once:
        the bus's cursor moves on) and its info."""
        return self.observations[agent_id], self.inbox(agent_id), self.infos[agent_id]

    # -- stepping ---------------------------------------------------------------------------------

    def start(self) -> None:
        """Reset the env with the episode's seed; :attr:`deciding` names who acts first."""
        self.deadline.start()
        if self._aec:
            self.env.reset(seed=self.spec.seed)
            self._intervene()
            self._settle()
        else:
            self.observations, self.infos = self.env.reset(seed=self.spec.seed)
            self._intervene()
            self._find_deciders()

    def _intervene(self) -> None:
        """Put the interventions on the bus the reset made (its rules are already sent)."""
        if self.interventions:
            env = getattr(self.unwrapped, "parallel", self.unwrapped)
            self.interventions.install(env.bus)

    def advance(self, actions: Mapping[str, Any]) -> None:
        """Step the env with ``actions`` (one per agent of :attr:`deciding`) and log the step."""
        env = self.env
        turn = self.turn()
        if self._aec:
            (agent_id,) = actions
            self._iterations += 1
            env.step(actions[agent_id])
            self.log_step(turn, actions, env.rewards, env.infos)
            self._settle()
        else:
            (
                self.observations,
                self.rewards,
                self.terminations,
                self.truncations,
                self.infos,
            ) = env.step(actions)
            self.log_step(turn, actions, self.rewards, self.infos)
            self._find_deciders()

    def _find_deciders(self) -> None:
        env, infos = self.env, self.infos
        self.deciding = [a for a in env.agents if (infos.get(a) or {}).get("decision")]
        if env.agents and not self.deciding:
            raise RuntimeError(
                f"{self.spec.env_id}: live agents {env.agents} but none has a decision"
            )

    def _settle(self) -> None:
        """AEC: step ended agents and agents without a decision until one has a decision."""
        env = self.env
        while env.agents and self._iterations < self.spec.max_steps:
            agent_id = env.agent_selection
            observation, _, termination, truncation, info = env.last()
            if termination or truncation:
                self._iterations += 1
                env.step(None)
                continue
            if not info.get("decision"):
                self._iterations += 1
                turn = self.turn()
                env.step(noop_action(env.action_space(agent_id)))
                # Envs built with parallel_to_aec pay a whole round on its last agent's step,
                # which may be one without a decision.
                self.log_step(turn, {}, env.rewards, env.infos)
                continue
            self.deciding = [agent_id]
            self.observations, self.infos = {agent_id: observation}, {agent_id: info}
            return
        self.deciding = []

    # -- deciding: what the drivers ask of the agents -------------------------------------------

    def choose(self, agent_ids: Sequence[str]) -> dict[str, Any]:
        """The actions of ``agent_ids`` (deciding now), each from its agent's ``act``."""
        agents, actions, deadline = self.agents, {}, self.deadline
        for agent_id in agent_ids:
            try:
                if self._bounded_decisions:
                    with deadline.bounding():
                        actions[agent_id] = agents[agent_id].act(*self.view(agent_id))
                else:
                    actions[agent_id] = agents[agent_id].act(*self.view(agent_id))
            except Exception as error:  # noqa: BLE001 - named after its seat, then recorded
                raise self.seat_error(agent_id, error) from error
        return actions

    async def _bounded(self, agent_id: str):
        """``agent_id``'s ``aact`` within the :attr:`deadline` (a synchronous agent's ``act``
        under its alarm)."""
        agent, deadline, view = self.agents[agent_id], self.deadline, self.view(agent_id)
        if getattr(type(agent), "paced_by_person", False):  # a person's own idle bound paces it
            return await agent.aact(*view)
        if not decides_synchronously(type(agent)):
            return await deadline.awaiting(agent.aact(*view))
        if deadline.rings_here():
            with deadline.bounding():
                return agent.act(*view)
        # no alarm off the main thread (a browser game): the decision runs in a thread of its
        # own, left behind when it runs over, and the episode fails naming the seat
        return await deadline.in_own_thread(agent.act, *view)

    async def achoose(
        self, agent_ids: Sequence[str], on_deciding: OnDeciding | None = None
    ) -> dict[str, Any]:
        """The actions of ``agent_ids`` (deciding now), each from its agent's ``aact``, awaited
        together after the probes have asked their questions; ``on_deciding`` hears who is
        still deciding as they answer."""
        acting = list(agent_ids)
        await self.run_probes(acting, self.observations, self.infos)
        agents = self.agents
        if self._bounded_decisions:
            calls = [self._bounded(a) for a in acting]
        else:
            calls = [agents[a].aact(*self.view(a)) for a in acting]
        if on_deciding is not None:
            calls = _told(calls, acting, on_deciding)
            await on_deciding(list(acting))
        # Every sibling is awaited even when one fails, so that the calls it makes to its
        # model are in the record (and nothing runs on unattended after the episode ends).
        chosen = await asyncio.gather(*calls, return_exceptions=True)
        for agent_id, result in zip(acting, chosen, strict=True):
            if isinstance(result, BaseException):
                raise self.seat_error(agent_id, result)
        return dict(zip(acting, chosen, strict=True))

    # -- the two drivers --------------------------------------------------------------------------

    def play(self) -> None:
        """Play the episode to its end with each agent's ``act``, no event loop (see
        :attr:`synchronous`)."""
        self.start()
        while self.deciding:
            self.advance(self.choose(self.deciding))

    async def aplay(self, on_deciding: OnDeciding | None = None) -> None:
        """Play the episode to its end with each agent's ``aact``: the agents that decide at the
        same time wait on their models together."""
        self.start()
        while self.deciding:
            self.advance(await self.achoose(self.deciding, on_deciding))

    async def run_probes(self, acting: list[str], observations, infos) -> None:
        if not self.probes:
            return
        ctx = ProbeContext(
            self.turn(),
            acting,
            self.agents,
            observations,
            infos,
            self.unwrapped,
            self.probe_results,
        )
        for probe in self.probes:
            await probe.before_decisions(ctx)

    def seat_error(self, agent_id: str, error: BaseException) -> BaseException:
        if not isinstance(error, Exception):  # KeyboardInterrupt, cancellation: not a failure
            return error
        agent = self.agents[agent_id]
        where = ""
        if getattr(error, "names_its_decision", False):  # an offline miss: which request it was
            decision = (self.infos.get(agent_id) or {}).get("decision")
            where = f", decision {decision!r} at turn {self.turn()}"
        return SeatError(agent_id, getattr(agent, "kind", "") or type(agent).__name__, error, where)

    def log_step(
        self, turn: int, actions: Mapping[str, Any], rewards: Mapping[str, float], infos
    ) -> None:
        invalid = {}
        for agent_id in actions:
            flag = (infos.get(agent_id) or {}).get("invalid_action")
            if flag:
                invalid[agent_id] = jsonable(flag)
                self.invalid[agent_id] += 1
        step_rewards = {a: float(r) for a, r in rewards.items() if r}
        returns = self.returns
        for agent_id, reward in step_rewards.items():
            returns[agent_id] = returns.get(agent_id, 0.0) + reward
        if not actions and not step_rewards:
            return
        entry = {
            "turn": turn,
            "actions": {a: jsonable(x) for a, x in actions.items()},
            "rewards": step_rewards,
        }
        if invalid:
            entry["invalid"] = invalid
        self.steps.append(entry)
        if len(self.steps) > self.spec.max_steps:
            raise RuntimeError(
                f"max_steps: the episode did not end within {self.spec.max_steps} steps"
            )

    def record(self, status: str, error: str | None, started: str, wall: float) -> EpisodeRecord:
        """The episode's record, made of plain values (the messages thawed)."""
        bus = self.bus
        fields = self._fields(status, error, started, wall)
        fields["summary"] = jsonable(fields["summary"])
        return EpisodeRecord(
            **fields, messages=[m.to_json() for m in bus.log] if bus is not None else []
        )

    def line(self, status: str, error: str | None, started: str, wall: float) -> str:
        """The line of :meth:`record` (:meth:`EpisodeRecord.line`, the same text), encoded from
        the episode as it was played: the bus's plain payloads (:meth:`MessageBus.fields`) and
        the summary are read by the encoder as they are, not copied into plain values first. Where orjson's text is
        kept, it is that of the plain values (:func:`jsonable` and the encoder convert every
        other value alike, and orjson refuses the keys they convert differently)."""
        bus = self.bus
        fields = self._fields(status, error, started, wall)
        fields["messages"] = bus.fields() if bus is not None else []
        text = orjson_text(fields)
        if text is None:  # the standard encoder's text, of the plain summary, as record()'s
            fields["summary"] = jsonable(fields["summary"])
            text = canonical_json(fields)
        return text

    def _fields(self, status: str, error: str | None, started: str, wall: float) -> dict[str, Any]:
        """The record's fields but its messages, the summary as the env returns it."""
        spec = self.spec
        summary = getattr(self.unwrapped, "summary", None)
        counters = {}
        events = {}
        for agent_id, agent in self.agents.items():
            counters[agent_id] = {
                "invalid_actions": self.invalid.get(agent_id, 0),
                **jsonable(getattr(agent, "counters", {})),
            }
            if getattr(agent, "events", None):
                events[agent_id] = jsonable(agent.events)
        return {
            "experiment": spec.experiment,
            "cell": dict(spec.cell),
            "episode": spec.episode,
            "seed": spec.seed,
            "env_id": spec.env_id,
            "env_kwargs": dict(spec.env_kwargs),
            "form": spec.form,
            "seats": {k: dict(v) for k, v in spec.seats.items()},
            "status": status,
            "error": error,
            "steps": self.steps,
            "returns": self.returns,
            "counters": counters,
            "events": events,
            "probes": self.probe_results,
            **({"interventions": self.interventions.applied} if self.interventions else {}),
            "timing": {"started": started, "wall_s": round(wall, 6)},
            "summary": summary() if callable(summary) and status == "done" else {},
        }


def _told(calls: list, acting: list[str], on_deciding: OnDeciding) -> list:
    """``calls`` each followed by telling ``on_deciding`` who is still deciding."""
    still = list(acting)

    async def told(agent_id: str, call):
        try:
            return await call
        finally:
            still.remove(agent_id)
            await on_deciding(list(still))

    return [told(a, c) for a, c in zip(acting, calls, strict=True)]
