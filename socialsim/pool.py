"""The process pool: episodes played by ``workers`` processes on this machine.

Workers are forked from a forkserver (``multiprocessing``'s ``"forkserver"`` context) that has
imported the runner and the modules of the experiment's envs and agent kinds once, so a worker
starts without importing anything again; word vectors are memory-mapped from a decoded cache
(:mod:`socialsim.agents.embedding.vectors`), so every worker shares one copy of their pages.
A forkserver is a clean single-threaded process: no thread or event loop of the parent (a
progress bar, an LLM client) is inherited, as it would be by a plain fork.

Workers pull small batches of episodes from one queue (a long episode does not hold back a
static share) and send back each record as the line its worker encoded
(:meth:`~socialsim.records.EpisodeRecord.line`); the parent, the only writer of the log, writes
the line as it is: no record is decoded or encoded again (only a failed one is decoded, for the
failure summary). Resume and exactly-once are the log's: a record is logged once, when its
episode ended, and an episode killed mid-way has no record and is played by the next run.
"""

from __future__ import annotations

import multiprocessing
import queue as queue_module
import sys
from collections.abc import Sequence

from socialsim import registry
from socialsim.records import EpisodeRecord
from socialsim.runner import EpisodeSpec, OnDone, play_specs


def preload_modules(specs: Sequence[EpisodeSpec]) -> list[str]:
    """The modules a worker needs: the runner, and each env's and agent kind's module."""
    modules = {"socialsim.runner": None}
    for spec in {id(s.seats): s for s in specs}.values():
        modules.setdefault(registry.env_module(spec.env_id).__name__)
        for seat in spec.seats.values():
            modules.setdefault(registry.agent_class(seat["kind"]).__module__)
    main = getattr(sys.modules.get("__main__"), "__spec__", None)  # `python -m socialsim.cli`
    if main is not None and main.name:
        modules.setdefault(main.name)
    return ["__main__", *modules]


class _ToParent:
    """What a worker writes its records to: each line goes to the parent, the only writer."""

    def __init__(self, directory, results) -> None:
        self.directory = directory
        self.results = results
        self.parent = multiprocessing.parent_process()

    def write(self, line: str, status: str = "") -> None:
        if self.parent is not None and not self.parent.is_alive():
            raise SystemExit(1)  # the parent was killed: nobody would log this
        self.results.put(("line", status, line))


def _worker(tasks, results, directory, max_concurrent: int) -> None:
    import signal

    from socialsim.agent import RunContext

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    sink = _ToParent(directory, results)
    run = RunContext(directory=directory)  # one per worker: its LLM clients span its episodes
    try:
        while (batch := tasks.get()) is not None:
            play_specs(batch, sink, max_concurrent, run=run)
    finally:
        results.put(("exit", "", ""))


def run_in_processes(
    specs: Sequence[EpisodeSpec],
    log,
    max_concurrent: int = 1,
    workers: int = 2,
    on_done: OnDone | None = None,
) -> None:
    """Play ``specs`` in ``workers`` processes, each playing batches of ``max_concurrent``
    episodes (at once, when they wait on models), writing every record to ``log``."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(preload_modules(specs))  # used when the server starts
    size = max(1, max_concurrent)
    batches = [list(specs[i : i + size]) for i in range(0, len(specs), size)]
    tasks, results = context.Queue(), context.Queue()
    for batch in batches:
        tasks.put(batch)
    count = min(workers, len(batches))
    for _ in range(count):
        tasks.put(None)
    processes = [
        context.Process(
            target=_worker, args=(tasks, results, log.directory, max_concurrent), daemon=True
        )
        for _ in range(count)
    ]
    for process in processes:
        process.start()
    running = count
    try:
        while running:
            try:
                kind, status, line = results.get(timeout=1.0)
            except queue_module.Empty:
                if all(p.exitcode is not None for p in processes):  # died without a word
                    break
                continue
            if kind == "exit":
                running -= 1
                continue
            log.write(line, status)
            if on_done is not None:
                on_done(status, None if status == "done" else EpisodeRecord.from_line(line))
    finally:  # on Ctrl-C too: no worker outlives the only writer of the log
        for process in processes:
            if process.exitcode is None and running:
                process.terminate()
        for process in processes:
            process.join()
        tasks.cancel_join_thread()  # batches left unplayed need not be flushed to anyone
        tasks.close()
        results.close()
