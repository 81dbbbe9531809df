"""The process pool: episodes played by ``workers`` processes on this machine.

How the workers start (:func:`start_method`):

* on Linux, from a process that runs no other thread (``socialsim run``), they are forked from
  it (``"fork"``): a worker starts in milliseconds with everything the run has imported and
  loaded already (the envs' and agents' modules, word vectors), sharing those pages;
* otherwise (a notebook's threads, an LLM client's, macOS) from a forkserver
  (``"forkserver"``) that has imported the runner and the modules of the experiment's envs and
  agent kinds once: a clean single-threaded process, so no thread or event loop of the parent
  is inherited, as it would be by a plain fork. Word vectors are then loaded by each worker,
  memory-mapped from a decoded cache (:mod:`socialsim.agents.embedding.vectors`), so every
  worker shares one copy of their pages.

The pool is started once per run: the check episodes and then the others are played by the same
workers.

Workers pull small batches of episodes from one queue (a long episode does not hold back a
static share) and send back each record as the line its worker encoded
(:meth:`~socialsim.records.EpisodeRecord.line`); the parent, the only writer of the log, writes
the line as it is: no record is decoded or encoded again (only a failed one is decoded, for the
failure summary). Resume and exactly-once are the log's: a record is logged once, when its
episode ended, and an episode killed mid-way has no record and is played by the next run.
"""

from __future__ import annotations

import gc
import multiprocessing
import queue as queue_module
import sys
import threading
from collections.abc import Sequence

from socialsim import registry
from socialsim.records import EpisodeRecord
from socialsim.runner import EpisodeSpec, OnDone, play_specs

#: How often an idle worker looks whether the parent is still alive.
PARENT_CHECK_SECONDS = 1.0


def start_method() -> str:
    """``"fork"`` on Linux when this process runs no other thread, else ``"forkserver"``."""
    if sys.platform == "linux" and threading.active_count() == 1:
        return "fork"
    return "forkserver"


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

    def __init__(self, directory, results, parent) -> None:
        self.directory = directory
        self.results = results
        self.parent = parent

    def write(self, line: str, status: str = "", key: tuple[str, int] | None = None) -> None:
        if self.parent is not None and not self.parent.is_alive():
            raise SystemExit(1)  # the parent was killed: nobody would log this
        self.results.put(("line", status, line, key))


def _worker(tasks, results, directory, max_concurrent: int) -> None:
    import signal

    from socialsim.agent import RunContext

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    parent = multiprocessing.parent_process()
    sink = _ToParent(directory, results, parent)
    run = RunContext(directory=directory)  # one per worker: its LLM clients span its episodes
    try:
        while (batch := _next_batch(tasks, parent)) is not None:
            play_specs(batch, sink, max_concurrent, run=run)
    finally:
        if parent is None or parent.is_alive():
            results.put(("exit", "", "", None))
        else:  # nobody reads the results any more: exit without waiting to flush them
            results.cancel_join_thread()


def _next_batch(tasks, parent):
    """The next batch of episodes, or None when there is none or the parent was killed (a
    worker blocked on the queue would otherwise wait for ever: it holds the queue's write end
    itself, so the parent's death never reaches it as an end of file)."""
    while True:
        try:
            return tasks.get(timeout=PARENT_CHECK_SECONDS)
        except queue_module.Empty:
            if parent is not None and not parent.is_alive():
                return None


class ProcessPool:
    """``workers`` processes that play the batches of episodes sent to them, started once per run
    (the check episodes and then the rest are played by the same processes)::

        with ProcessPool(specs, workers=2) as pool:  # specs: what the workers must import
            pool.play(checks, RecordList())
            pool.play(rest, log, on_done)

    Leaving the block on an exception (Ctrl-C, :class:`~socialsim.results.RunStopped`) ends the
    workers at once: none outlives the only writer of the log.
    """

    def __init__(
        self,
        specs: Sequence[EpisodeSpec],
        workers: int = 2,
        max_concurrent: int = 1,
        directory=None,
    ):
        method = start_method()
        context = multiprocessing.get_context(method)
        if method == "forkserver":
            context.set_forkserver_preload(preload_modules(specs))  # used when it starts
        self.size = max(1, max_concurrent)
        self.tasks, self.results = context.Queue(), context.Queue()
        self.processes = [
            context.Process(
                target=_worker,
                args=(self.tasks, self.results, directory, max_concurrent),
                daemon=True,
            )
            for _ in range(max(1, workers))
        ]
        if method == "fork":
            # what the run built before the fork moves out of the collector's reach, so that
            # collections in the workers do not write to (and so copy) the pages they share
            gc.freeze()
        for process in self.processes:
            process.start()
        if method == "fork":
            gc.unfreeze()
        self.running = len(self.processes)

    def play(self, specs: Sequence[EpisodeSpec], log, on_done: OnDone | None = None) -> None:
        """Play ``specs`` in the workers, writing each record's line to ``log`` as it comes; return
        when every one is logged (or every worker has died)."""
        for i in range(0, len(specs), self.size):
            self.tasks.put(list(specs[i : i + self.size]))
        waiting = len(specs)
        while waiting and self.running:
            try:
                kind, status, line, key = self.results.get(timeout=1.0)
            except queue_module.Empty:
                if all(p.exitcode is not None for p in self.processes):  # died without a word
                    self.running = 0
                continue
            if kind == "exit":
                self.running -= 1
                continue
            waiting -= 1
            log.write(line, status, key)
            if on_done is not None:
                on_done(status, None if status == "done" else EpisodeRecord.from_line(line))

    def close(self, finished: bool = True) -> None:
        """Let the workers finish (``finished``) or end them now."""
        if finished:
            for _ in range(self.running):
                self.tasks.put(None)
        for process in self.processes:
            if not finished and process.exitcode is None:
                process.terminate()
        for process in self.processes:
            process.join()
        self.tasks.cancel_join_thread()  # batches left unplayed need not be flushed to anyone
        self.tasks.close()
        self.results.close()

    def __enter__(self) -> ProcessPool:
        return self

    def __exit__(self, kind, *exc: object) -> None:
        self.close(finished=kind is None)
