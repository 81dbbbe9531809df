"""One runner for every game: plays episode specs in this process, each through an
:class:`~socialsim.episode.Episode` and one of its two drivers.

:func:`play_episode` plays one spec and returns its :class:`~socialsim.records.EpisodeRecord`;
:func:`play_specs` plays many into a log. The backends that spread specs over processes or a
Ray cluster (:mod:`socialsim.backends`) sit above this module and call :func:`play_specs` in
each worker; :func:`socialsim.run` plays an experiment's episodes that its results directory
does not hold yet.

Scripted, embedding and RL seats decide with a plain ``act``: their episodes are played without
an event loop, each call made directly. An episode with an LLM or human seat (an ``aact`` of its
own) or a probe runs in an event loop.

An agent that raises (a provider error that outlived its retries, a bug), in its ``__init__``,
its ``reset`` or while deciding, ends its episode as ``failed`` with the error and its seat in
the record; the experiment goes on and the episode is retried when the experiment is run again.
"""

from __future__ import annotations

import asyncio
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from socialsim import registry
from socialsim.agent import RunContext, decides_synchronously
from socialsim.episode import (
    Episode,
    EpisodeSpec,
    OnDeciding,
    SeatError,
    failed_record,
)
from socialsim.records import EpisodeRecord, LineLog


def _reason(error: Exception) -> str:
    if isinstance(error, SeatError):
        return str(error)
    return "".join(traceback.format_exception_only(error)).strip()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def play_episode(
    spec: EpisodeSpec, agents: Mapping[str, Any] | None = None, run: RunContext | None = None
) -> EpisodeRecord:
    """Play one episode and return its record: without an event loop when every agent is
    synchronous (:attr:`Episode.synchronous`), else in one. ``agents`` (agent id -> reset agent)
    overrides ``spec.seats``; agents built from ``spec.seats`` are attached to ``run``."""
    started, t0 = _now(), time.perf_counter()
    episode = Episode(spec, agents, run)  # bad env ids, kwargs or seats raise here: a config error
    if not episode.synchronous:
        return asyncio.run(_play_async(episode, started, t0))
    error = _play(episode)
    status = "done" if error is None else "failed"
    return episode.record(status, error, started, time.perf_counter() - t0)


def _play(episode: Episode) -> str | None:
    """Play a synchronous episode to its end: ``None``, or the reason it failed."""
    try:
        episode.play()
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as error:  # noqa: BLE001 - the record keeps it; the experiment goes on
        return _reason(error)
    finally:
        episode.env.close()
    return None


def _unbuilt(spec: EpisodeSpec, error: Exception, started: str, t0: float) -> EpisodeRecord:
    """The failed record of an episode whose env or agents could not be made."""
    wall = round(time.perf_counter() - t0, 6)
    return failed_record(spec, _reason(error), {"started": started, "wall_s": wall})


def _log_synchronous(
    spec: EpisodeSpec, log: LineLog, on_done: OnDone | None, run: RunContext
) -> None:
    """Play a synchronous episode and write its line to ``log``: a done episode's line is encoded
    from the episode as played (:meth:`Episode.line`), with no plain copy of its record made; a
    failed one's record is made, for ``on_done``."""
    started, t0 = _now(), time.perf_counter()
    try:
        episode = Episode(spec, run=run)
    except Exception as error:  # noqa: BLE001 - an agent's __init__ or reset: the episode's
        _logged(log, _unbuilt(spec, error, started, t0), on_done)
        return
    error = _play(episode)
    wall = time.perf_counter() - t0
    if error is not None:
        _logged(log, episode.record("failed", error, started, wall), on_done)
        return
    log.write(episode.line("done", None, started, wall), "done", spec.key)
    if on_done is not None:
        on_done("done", None)


async def play_episode_async(
    spec: EpisodeSpec,
    agents: Mapping[str, Any] | None = None,
    run: RunContext | None = None,
    on_deciding: OnDeciding | None = None,
) -> EpisodeRecord:
    """:func:`play_episode` inside a running event loop (every agent through ``aact``);
    ``on_deciding`` is told who is deciding (:meth:`Episode.aplay`)."""
    started, t0 = _now(), time.perf_counter()
    return await _play_async(Episode(spec, agents, run), started, t0, on_deciding)


async def _play_async(
    episode: Episode, started: str, t0: float, on_deciding: OnDeciding | None = None
) -> EpisodeRecord:
    try:
        await episode.aplay(on_deciding)
    except (KeyboardInterrupt, SystemExit, asyncio.CancelledError):
        raise
    except Exception as error:  # noqa: BLE001 - the record keeps it; the experiment goes on
        return episode.record("failed", _reason(error), started, time.perf_counter() - t0)
    finally:
        episode.env.close()
    return episode.record("done", None, started, time.perf_counter() - t0)


def is_synchronous(spec: EpisodeSpec) -> bool:
    """Whether ``spec``'s episode needs no event loop: no probe, and every seat's kind decides
    with a plain ``act`` (LLM and human seats have an ``aact`` of their own)."""
    if spec.probes:
        return False
    return all(
        decides_synchronously(registry.agent_class(seat["kind"])) for seat in spec.seats.values()
    )


#: ``on_done(status, record)``: called as each episode is logged; ``record`` is the failed
#: episode's record, ``None`` for a done one (a worker's done record is never decoded again).
OnDone = Callable[[str, EpisodeRecord | None], None]
#: ``on_start(spec)``: called as each episode played in the event loop starts (a pool worker
#: tells its parent; the synchronous ones are played one after the other, in order).
OnStart = Callable[[EpisodeSpec], None]


def _logged(log: LineLog, record: EpisodeRecord, on_done: OnDone | None) -> None:
    log.write(record.line(), record.status, record.key)
    if on_done is not None:
        on_done(record.status, None if record.status == "done" else record)


def play_specs(
    specs: Sequence[EpisodeSpec],
    log: LineLog,
    max_concurrent: int = 1,
    on_done: OnDone | None = None,
    run: RunContext | None = None,
    on_start: OnStart | None = None,
) -> None:
    """Play ``specs`` in this process, writing each record's line to ``log`` as it ends
    (``on_start`` hears each one played in the event loop start).

    Synchronous episodes (:func:`is_synchronous`, e.g. scripted seats) are played one after the
    other with no event loop; the others together in one event loop, at most ``max_concurrent``
    at once (LLM agents wait on their models concurrently). All agents share one
    :class:`RunContext` rooted at the log's directory."""
    run = run if run is not None else RunContext(directory=log.directory)
    waiting = []
    for spec in specs:
        if is_synchronous(spec):
            _log_synchronous(spec, log, on_done, run)
        else:
            waiting.append(spec)
    if waiting:
        asyncio.run(run_specs_async(waiting, log, max_concurrent, on_done, run, on_start))


async def run_specs_async(
    specs: Sequence[EpisodeSpec],
    log: LineLog,
    max_concurrent: int = 1,
    on_done: OnDone | None = None,
    run: RunContext | None = None,
    on_start: OnStart | None = None,
) -> list[EpisodeRecord]:
    """Play ``specs`` in the running event loop, at most ``max_concurrent`` at once, writing
    each record to ``log`` as it ends; return the records."""
    run = run if run is not None else RunContext(directory=log.directory)
    limit = asyncio.Semaphore(max(1, max_concurrent))
    records: list[EpisodeRecord] = []

    async def one(spec: EpisodeSpec) -> None:
        async with limit:
            if on_start is not None:
                on_start(spec)
            started, t0 = _now(), time.perf_counter()
            try:
                episode = Episode(spec, run=run)
            except Exception as error:  # noqa: BLE001 - an agent's __init__ or reset
                record = _unbuilt(spec, error, started, t0)
            else:
                record = await _play_async(episode, started, t0)
        _logged(log, record, on_done)
        records.append(record)

    await asyncio.gather(*(one(spec) for spec in specs))
    return records
