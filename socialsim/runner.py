"""One runner for every game: plays PettingZoo episodes (AEC or Parallel) with any agents.

:func:`play_episode` resets the env with the episode seed, asks the agents whose turn it is for
actions (concurrently when several decide at once), steps the env and returns an
:class:`~socialsim.records.EpisodeRecord`. :func:`run_experiment` plays every episode of an
experiment that the log does not hold yet, several at once in one event loop.

An agent that raises (a provider error that outlived its retries, a bug) ends its episode as
``failed`` with the error in the record; the experiment goes on and the episode is retried when
the experiment is run again.
"""

from __future__ import annotations

import asyncio
import os
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np

from socialsim import registry
from socialsim.agent import RunContext
from socialsim.plain_json import jsonable
from socialsim.records import EpisodeRecord, EventLog, done_keys
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
    max_steps: int = 1_000_000


class SeatError(Exception):
    """An agent raised while deciding: the record names its seat and kind."""

    def __init__(self, seat: str, kind: str, error: Exception):
        self.seat, self.kind, self.error = seat, kind, error
        super().__init__(f"seat {seat} ({kind}): {type(error).__name__}: {error}")


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
        agent = registry.build_agent(seat_spec)
        agent.attach(run)
        agent.reset(agent_id, agent_id, agent_seed(spec.seed, agent_id))
        agents[agent_id] = agent
    return agents


class _Episode:
    """The mutable state of one episode being played."""

    def __init__(self, spec: EpisodeSpec, agents: Mapping[str, Any] | None, run: RunContext | None):
        self.spec = spec
        self.env = registry.make_env(spec.env_id, spec.form, **dict(spec.env_kwargs))
        self.unwrapped = self.env.unwrapped
        self.agents = (
            dict(agents)
            if agents is not None
            else build_agents(spec, self.env.possible_agents, run)
        )
        self.probes = [registry.make_probe(**dict(p)) for p in spec.probes]
        self.steps: list[dict[str, Any]] = []
        self.returns: dict[str, float] = {a: 0.0 for a in self.env.possible_agents}
        self.invalid: dict[str, int] = {a: 0 for a in self.env.possible_agents}
        self.probe_results: list[dict[str, Any]] = []

    @property
    def bus(self):
        return getattr(self.unwrapped, "bus", None)

    def turn(self) -> int:
        return int(getattr(self.unwrapped, "turn", len(self.steps)))

    def inbox(self, agent_id: str) -> list:
        bus = self.bus
        return bus.read(agent_id) if bus is not None else []

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
        return SeatError(agent_id, getattr(agent, "kind", "") or type(agent).__name__, error)

    def log_step(
        self, turn: int, actions: Mapping[str, Any], rewards: Mapping[str, float], infos
    ) -> None:
        invalid = {}
        for agent_id in actions:
            flag = (infos.get(agent_id) or {}).get("invalid_action")
            if flag:
                invalid[agent_id] = jsonable(flag)
                self.invalid[agent_id] += 1
        step_rewards = {}
        for agent_id, reward in rewards.items():
            reward = float(reward)
            if reward:
                step_rewards[agent_id] = reward
                self.returns[agent_id] = self.returns.get(agent_id, 0.0) + reward
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

    async def play_parallel(self) -> None:
        env = self.env
        observations, infos = env.reset(seed=self.spec.seed)
        while env.agents:
            acting = [a for a in env.agents if (infos.get(a) or {}).get("decision")]
            if not acting:
                raise RuntimeError(
                    f"{self.spec.env_id}: live agents {env.agents} but none has a decision"
                )
            await self.run_probes(acting, observations, infos)
            turn = self.turn()
            # Every sibling is awaited even when one fails, so that the calls it makes to its
            # model are in the record (and nothing runs on unattended after the episode ends).
            chosen = await asyncio.gather(
                *(self.agents[a].aact(observations[a], self.inbox(a), infos[a]) for a in acting),
                return_exceptions=True,
            )
            for agent_id, result in zip(acting, chosen, strict=True):
                if isinstance(result, BaseException):
                    raise self.seat_error(agent_id, result)
            actions = dict(zip(acting, chosen, strict=True))
            observations, rewards, terminations, truncations, infos = env.step(actions)
            self.log_step(turn, actions, rewards, infos)

    async def play_aec(self) -> None:
        env = self.env
        env.reset(seed=self.spec.seed)
        for agent_id in env.agent_iter(max_iter=self.spec.max_steps):
            observation, _, termination, truncation, info = env.last()
            if termination or truncation:
                env.step(None)
                continue
            if not info.get("decision"):
                turn = self.turn()
                env.step(noop_action(env.action_space(agent_id)))
                # Envs built with parallel_to_aec pay a whole round on its last agent's step,
                # which may be one without a decision.
                self.log_step(turn, {}, env.rewards, env.infos)
                continue
            await self.run_probes([agent_id], {agent_id: observation}, {agent_id: info})
            turn = self.turn()
            try:
                action = await self.agents[agent_id].aact(observation, self.inbox(agent_id), info)
            except Exception as error:  # noqa: BLE001 - named after its seat, then recorded
                raise self.seat_error(agent_id, error) from error
            env.step(action)
            self.log_step(turn, {agent_id: action}, env.rewards, env.infos)

    def record(self, status: str, error: str | None, started: str, wall: float) -> EpisodeRecord:
        spec = self.spec
        bus = self.bus
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
        return EpisodeRecord(
            experiment=spec.experiment,
            cell=dict(spec.cell),
            episode=spec.episode,
            seed=spec.seed,
            env_id=spec.env_id,
            env_kwargs=dict(spec.env_kwargs),
            form=spec.form,
            seats={k: dict(v) for k, v in spec.seats.items()},
            status=status,
            error=error,
            messages=[m.to_json() for m in bus.log] if bus is not None else [],
            steps=self.steps,
            returns=self.returns,
            summary=jsonable(summary()) if callable(summary) and status == "done" else {},
            counters=counters,
            events=events,
            probes=self.probe_results,
            timing={"started": started, "wall_s": round(wall, 6)},
        )


async def play_episode_async(
    spec: EpisodeSpec, agents: Mapping[str, Any] | None = None, run: RunContext | None = None
) -> EpisodeRecord:
    """Play one episode. ``agents`` (agent id -> reset agent) overrides ``spec.seats``; agents
    built from ``spec.seats`` are attached to ``run`` (a fresh context if ``None``)."""
    started = datetime.now(UTC).isoformat(timespec="seconds")
    t0 = time.perf_counter()
    episode = _Episode(spec, agents, run)  # bad env ids, kwargs or seats raise here: a config error
    try:
        if spec.form == "parallel":
            await episode.play_parallel()
        else:
            await episode.play_aec()
    except (KeyboardInterrupt, SystemExit, asyncio.CancelledError):
        raise
    except Exception as error:  # noqa: BLE001 - the record keeps it; the experiment goes on
        if isinstance(error, SeatError):
            detail = str(error)
        else:
            detail = "".join(traceback.format_exception_only(error)).strip()
        return episode.record("failed", detail, started, time.perf_counter() - t0)
    finally:
        episode.env.close()
    return episode.record("done", None, started, time.perf_counter() - t0)


def play_episode(
    spec: EpisodeSpec, agents: Mapping[str, Any] | None = None, run: RunContext | None = None
) -> EpisodeRecord:
    return asyncio.run(play_episode_async(spec, agents, run))


async def run_specs_async(
    specs: Sequence[EpisodeSpec],
    log: EventLog,
    max_concurrent: int = 1,
    on_done: Callable[[EpisodeRecord], None] | None = None,
) -> list[EpisodeRecord]:
    """Play ``specs``, at most ``max_concurrent`` at once, appending each record as it ends.
    All agents of the run share one :class:`RunContext` rooted at the log's directory."""
    limit = asyncio.Semaphore(max(1, max_concurrent))
    run = RunContext(directory=log.directory)
    records: list[EpisodeRecord] = []

    async def one(spec: EpisodeSpec) -> None:
        async with limit:
            record = await play_episode_async(spec, run=run)
        log.append(record)
        records.append(record)
        if on_done is not None:
            on_done(record)

    await asyncio.gather(*(one(spec) for spec in specs))
    return records


class _QueueLog:
    """What a worker process appends to: its records go to the parent, the only writer."""

    def __init__(self, directory, queue, parent: int):
        self.directory = directory
        self.queue = queue
        self.parent = parent

    def append(self, record: EpisodeRecord) -> None:
        if os.getppid() != self.parent:  # the parent was killed: nobody would log this
            raise SystemExit(1)
        self.queue.put(("record", record.to_json()))


def _worker(
    specs: Sequence[EpisodeSpec], directory, max_concurrent: int, queue, parent: int
) -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    try:
        asyncio.run(run_specs_async(specs, _QueueLog(directory, queue, parent), max_concurrent))
    finally:
        queue.put(("exit", None))


def run_specs(
    specs: Sequence[EpisodeSpec],
    log: EventLog,
    max_concurrent: int = 1,
    workers: int = 1,
    on_done: Callable[[EpisodeRecord], None] | None = None,
    backend: str = "local",
) -> None:
    """Play ``specs`` in this process (``workers=1``) or spread over ``workers`` processes,
    each playing up to ``max_concurrent`` episodes at once in its own event loop.

    Episodes are independent, so processes share nothing but the log, which only this process
    writes: a killed run leaves whole records, and the next run plays what is missing. Each
    process holds its own LLM clients, so a model's concurrency limit applies per process.
    ``backend="ray"`` plays them as Ray tasks instead (:mod:`socialsim.ray_backend`).
    """
    if backend == "ray":
        from socialsim.ray_backend import run_on_ray

        run_on_ray(specs, log, max_concurrent, workers, on_done)
        return
    if workers <= 1 or len(specs) <= 1:
        asyncio.run(run_specs_async(specs, log, max_concurrent, on_done))
        return
    import multiprocessing
    import queue as queue_module

    context = multiprocessing.get_context("spawn")  # no inherited threads or event loops
    results = context.Queue()
    shares = [list(specs[i::workers]) for i in range(min(workers, len(specs)))]
    processes = [
        context.Process(
            target=_worker,
            args=(share, log.directory, max_concurrent, results, os.getpid()),
            daemon=True,
        )
        for share in shares
    ]
    for process in processes:
        process.start()
    running = len(processes)
    try:
        while running:
            try:
                kind, data = results.get(timeout=1.0)
            except queue_module.Empty:
                if all(p.exitcode is not None for p in processes):  # died without a word
                    break
                continue
            if kind == "exit":
                running -= 1
                continue
            record = EpisodeRecord.from_json(data)
            log.append(record)
            if on_done is not None:
                on_done(record)
    finally:  # on Ctrl-C too: no worker outlives the only writer of the log
        for process in processes:
            if process.exitcode is None and running:
                process.terminate()
        for process in processes:
            process.join()


class RecordList:
    """A log that keeps its records in memory (for the check episodes, written later)."""

    directory = None

    def __init__(self) -> None:
        self.records: list[EpisodeRecord] = []

    def append(self, record: EpisodeRecord) -> None:
        self.records.append(record)


def check_specs(specs: Sequence[EpisodeSpec]) -> list[EpisodeSpec]:
    """The episodes to play before a run writes anything: the first of each cell among
    ``specs`` whose seats call no model (a seat with a ``model`` table would make requests).
    A seat whose agent cannot make a decision of the env fails its check episode."""
    from socialsim.records import cell_id

    first: dict[str, EpisodeSpec] = {}
    for spec in specs:
        if any("model" in seat for seat in spec.seats.values()):
            continue
        first.setdefault(cell_id(dict(spec.cell)), spec)
    return list(first.values())


def pending(specs: Sequence[EpisodeSpec], directory) -> list[EpisodeSpec]:
    """The specs whose episode has no ``done`` record in ``directory`` yet."""
    from socialsim.records import cell_id

    done = done_keys(directory)
    return [s for s in specs if (cell_id(dict(s.cell)), s.episode) not in done]
