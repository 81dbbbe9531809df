"""Where a run's episodes are played: a pool of worker processes on this machine
(:mod:`socialsim.pool`; one worker too, so that an agent that ends its process fails only its
episode), this process (``workers = 0``, or where no worker can be forked:
:func:`in_this_process`) or Ray tasks (:mod:`socialsim.ray_backend`).

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
    """Play ``specs`` in ``workers`` processes (:mod:`socialsim.pool`; ``workers=0``: in this
    process, :func:`~socialsim.runner.play_specs`) or as Ray tasks (``backend="ray"``,
    :mod:`socialsim.ray_backend`), writing every record to ``log``.

    Episodes are independent, so processes share nothing but the log, which only this process
    writes (each record as the line its worker encoded): a killed run leaves whole records, and
    the next run plays what is missing. Each process holds its own LLM clients, so a model's
    concurrency limit applies per process.
    """
    with open_backend(specs, max_concurrent, workers, backend, log.directory) as play:
        play(specs, log, on_done)


def in_this_process(workers: int, batches: int = 2) -> bool:
    """Whether the local backend plays ``batches`` of episodes in this process rather than in
    supervised worker processes (:class:`~socialsim.pool.ProcessPool`): with ``workers = 0``
    (asked for: a debugger, a profiler, an agent holding this process's state), and with one
    worker (or one batch to play) when no worker can be forked from this process
    (:func:`~socialsim.pool.start_method`: not Linux, other threads running as in a notebook,
    or PyTorch loaded, as by an ``rl`` seat), where a forkserver's start would cost more than
    the episodes; anywhere else, even one worker is a process of its own, so an agent that ends
    its process (``os._exit``, a signal, a native crash) fails its episode, not the run."""
    if workers <= 0 or batches <= 0:  # asked for, or nothing to play
        return True
    if workers > 1 and batches > 1:
        return False
    from socialsim.pool import start_method

    return start_method() != "fork"


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
    :func:`run_specs` describes, open for the block: this process (:func:`in_this_process`),
    Ray, or worker processes started once on entering, so that the check episodes and the rest
    of a run are played by the same workers (Ray is joined on entering, before anything is
    written; ``say`` hears which). It gives its :data:`Play`."""
    if backend == "ray":
        from socialsim.ray_backend import ray_play

        with ray_play(specs, max_concurrent, workers, say) as play:
            yield play
        return
    batches = -(-len(specs) // max(1, max_concurrent))
    if in_this_process(workers, batches):
        yield lambda some, log, on_done=None: play_specs(some, log, max_concurrent, on_done)
        return
    from socialsim.pool import ProcessPool

    with ProcessPool(specs, max(1, min(workers, batches)), max_concurrent, directory) as pool:
        yield pool.play
