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
static share; the batches shrink towards the end, :func:`batches`). Each worker sends back each
record as the line it encoded (:meth:`~socialsim.records.EpisodeRecord.line`) over a pipe of its
own, written when the episode ends (no feeder thread). The parent, the only writer of the log,
waits on all the pipes at once and writes each line as it is: no record is decoded or encoded
again (only a failed one is decoded, for the failure summary). A worker's pipe at its end of
file is the worker gone, ended or killed. Resume and exactly-once are the log's: a record is
logged once, when its episode ended, and an episode killed mid-way has no record and is played
by the next run.
"""

from __future__ import annotations

import gc
import multiprocessing
import queue as queue_module
import select
import selectors
import sys
import threading
from collections.abc import Sequence
from multiprocessing import util

from socialsim import registry
from socialsim.episode import EpisodeSpec
from socialsim.records import EpisodeRecord
from socialsim.runner import OnDone, play_specs

#: How often an idle worker looks whether the parent is still alive.
PARENT_CHECK_SECONDS = 1.0
#: The most episodes in one batch (a queue read costs a worker about 0.1 ms; a scripted
#: episode a few ms, so a batch of 8 ended late holds the others back a few tens of ms at most).
MOST_PER_BATCH = 8
#: A worker's pipe to the parent: room for a few dozen scripted records (Linux's default
#: pipe-max-size for an unprivileged process is 1 MB).
PIPE_BYTES = 1 << 20


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


class _Parent:
    """Whether the process that started this worker still runs: its sentinel polled by one
    ``poll`` object made once (``parent_process().is_alive()`` builds a selector per call)."""

    def __init__(self) -> None:
        parent = multiprocessing.parent_process()
        self._poll = select.poll()
        if parent is not None:
            self._poll.register(parent.sentinel, select.POLLIN)  # readable once it has ended

    def alive(self) -> bool:
        return not self._poll.poll(0)


class _ToParent:
    """What a worker writes its records to: each line goes to the parent, the only writer, as
    the episode ends (the pipe's write is the worker's own: no feeder thread to hand it to)."""

    def __init__(self, directory, pipe, parent: _Parent) -> None:
        self.directory = directory
        self.pipe = pipe
        self.parent = parent

    def write(self, line: str, status: str = "", key: tuple[str, int] | None = None) -> None:
        if not self.parent.alive():
            raise SystemExit(1)  # the parent was killed: nobody would log this
        try:
            self.pipe.send((status, line, key))
        except BrokenPipeError:  # it died since: the same, and not the episode's failure
            raise SystemExit(1) from None


def _worker(tasks, pipe, directory, max_concurrent: int) -> None:
    import signal

    from socialsim.agent import RunContext

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    parent = _Parent()
    sink = _ToParent(directory, pipe, parent)
    run = RunContext(directory=directory)  # one per worker: its LLM clients span its episodes
    while (batch := _next_batch(tasks, parent)) is not None:
        play_specs(batch, sink, max_concurrent, run=run)


def _next_batch(tasks, parent: _Parent):
    """The next batch of episodes, or None when there is none or the parent was killed (a
    worker blocked on the queue would otherwise wait for ever: it holds the queue's write end
    itself, so the parent's death never reaches it as an end of file)."""
    while True:
        try:
            return tasks.get(timeout=PARENT_CHECK_SECONDS)
        except queue_module.Empty:
            if not parent.alive():
                return None


def batches(specs: Sequence[EpisodeSpec], workers: int, least: int = 1) -> list[list]:
    """``specs`` cut into batches for ``workers``, by guided self-scheduling: each batch a share
    of what is left (from ``least`` to :data:`MOST_PER_BATCH` episodes), so the queue is read
    once for several short episodes while the last batches are small enough for the workers to
    end together."""
    out, start = [], 0
    while start < len(specs):
        size = max(least, min(MOST_PER_BATCH, (len(specs) - start) // (4 * workers)))
        out.append(list(specs[start : start + size]))
        start += size
    return out


def _widen(pipe) -> None:
    """Give the pipe room for many records (Linux; 64 KB otherwise), so that a worker sending
    one does not wait for a parent that a busy machine has not scheduled yet."""
    try:
        import fcntl

        fcntl.fcntl(pipe.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except (ImportError, AttributeError, OSError):  # not Linux, or above its pipe-max-size
        pass


def _close(pipe) -> None:
    pipe.close()


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
        self.tasks = context.Queue()
        self.processes: list = []
        # One pipe per worker, made just before it starts and its write end closed here right
        # after: no later worker inherits it, so the pipe ends (EOF) exactly when its worker does.
        # Forked workers close the read ends they inherit: a worker writing to a parent killed
        # then gets EPIPE, instead of blocking on a full pipe that it itself holds open.
        self.pipes = selectors.DefaultSelector()
        if method == "fork":
            # what the run built before the fork moves out of the collector's reach, so that
            # collections in the workers do not write to (and so copy) the pages they share
            gc.freeze()
        for _ in range(max(1, workers)):
            reader, writer = context.Pipe(duplex=False)
            util.register_after_fork(reader, _close)
            _widen(writer)
            process = context.Process(
                target=_worker, args=(self.tasks, writer, directory, max_concurrent), daemon=True
            )
            process.start()
            writer.close()
            self.processes.append(process)
            self.pipes.register(reader, selectors.EVENT_READ)
        if method == "fork":
            gc.unfreeze()

    @property
    def running(self) -> int:
        """Workers whose pipe has not ended."""
        return len(self.pipes.get_map())

    def play(self, specs: Sequence[EpisodeSpec], log, on_done: OnDone | None = None) -> None:
        """Play ``specs`` in the workers, writing each record's line to ``log`` as it comes; return
        when every one is logged (or every worker has ended)."""
        for batch in batches(specs, len(self.processes), self.size):
            self.tasks.put(batch)
        waiting = len(specs)
        while waiting and self.running:
            for ready, _ in self.pipes.select():
                try:
                    status, line, key = ready.fileobj.recv()
                except EOFError:  # its worker has ended: nothing more comes from it
                    self._forget(ready.fileobj)
                    continue
                waiting -= 1
                log.write(line, status, key)
                if on_done is not None:
                    on_done(status, None if status == "done" else EpisodeRecord.from_line(line))
                if not waiting:
                    break

    def _forget(self, pipe) -> None:
        self.pipes.unregister(pipe)
        pipe.close()

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
        for pipe in list(self.pipes.get_map().values()):
            self._forget(pipe.fileobj)
        self.pipes.close()
        self.tasks.cancel_join_thread()  # batches left unplayed need not be flushed to anyone
        self.tasks.close()

    def __enter__(self) -> ProcessPool:
        return self

    def __exit__(self, kind, *exc: object) -> None:
        self.close(finished=kind is None)
