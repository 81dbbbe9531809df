"""Where a run's episodes are played: this process, a pool of worker processes on this machine
(:mod:`socialsim.pool`) or Ray tasks (:mod:`socialsim.ray_backend`).

Every backend plays specs with the runner's :func:`~socialsim.runner.play_specs` (in this
process or in each worker) and writes each record's line to the one log of the run. This module
sits above the runner and the backends, and picks one; the results directory
(:mod:`socialsim.results`) sits above it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from socialsim.episode import EpisodeSpec
from socialsim.records import LineLog
from socialsim.runner import OnDone, play_specs

#: ``play(specs, log, on_done=None)``: plays episodes into a log (what :func:`open_backend`
#: gives).
Play = Callable[..., None]


def run_specs(
    specs: Sequence[EpisodeSpec],
    log: LineLog,
    max_concurrent: int = 1,
    workers: int = 1,
    on_done: OnDone | None = None,
    backend: str = "local",
) -> None:
    """Play ``specs`` in this process (``workers=1``, :func:`~socialsim.runner.play_specs`), in
    ``workers`` processes (:mod:`socialsim.pool`) or as Ray tasks (``backend="ray"``,
    :mod:`socialsim.ray_backend`), writing every record to ``log``.

    Episodes are independent, so processes share nothing but the log, which only this process
    writes (each record as the line its worker encoded): a killed run leaves whole records, and
    the next run plays what is missing. Each process holds its own LLM clients, so a model's
    concurrency limit applies per process.
    """
    with open_backend(specs, max_concurrent, workers, backend, log.directory) as play:
        play(specs, log, on_done)


@contextmanager
def open_backend(
    specs: Sequence[EpisodeSpec],
    max_concurrent: int = 1,
    workers: int = 1,
    backend: str = "local",
    directory=None,
    say: Callable[[str], None] | None = None,
) -> Iterator[Play]:
    """The backend that plays the episodes of one run, ``specs`` or some of them, as
    :func:`run_specs` describes, open for the block: this process, Ray, or worker processes
    started once on entering, so that the check episodes and the rest of a run are played by
    the same workers (Ray is joined on entering, before anything is written; ``say`` hears
    which). It gives its :data:`Play`."""
    if backend == "ray":
        from socialsim.ray_backend import ray_play

        with ray_play(specs, max_concurrent, workers, say) as play:
            yield play
        return
    batches = -(-len(specs) // max(1, max_concurrent))
    if workers <= 1 or batches <= 1:
        yield lambda some, log, on_done=None: play_specs(some, log, max_concurrent, on_done)
        return
    from socialsim.pool import ProcessPool

    with ProcessPool(specs, min(workers, batches), max_concurrent, directory) as pool:
        yield pool.play
