"""The process pool: episodes played by ``workers`` processes on this machine.

How the workers start (:func:`start_method`):

* on Linux, from a process that runs no other thread (``socialsim run``), they are forked from
  it (``"fork"``): a worker starts in milliseconds with everything the run has imported and
  loaded already (the envs' and agents' modules, word vectors), sharing those pages;
* otherwise (a notebook's threads, an LLM client's, PyTorch loaded: :data:`UNFORKABLE`;
  macOS) from a forkserver
  (``"forkserver"``) that has imported the runner and the modules of the experiment's envs and
  agent kinds once: a clean single-threaded process, so no thread or event loop of the parent
  is inherited, as it would be by a plain fork. Word vectors are then loaded by each worker,
  memory-mapped from a decoded cache (:mod:`socialsim.agents.embedding.vectors`), so every
  worker shares one copy of their pages.

The pool is started once per run: the check episodes and then the others are played by the same
workers.

The parent sends each worker small batches of episodes over a pipe of its own, two at a time (a
long episode does not hold back a static share; the batches shrink towards the end,
:func:`batches`). Each worker plays a batch's synchronous episodes in order, says when each
of the others starts (in its event loop), and sends back each record as the line it encoded (:meth:`~socialsim.records.EpisodeRecord.line`) over another pipe of its own,
written when the episode ends (no feeder thread). The parent, the only writer of the log, waits
on all the pipes and the workers' sentinels at once and writes each line as it is: no record is
decoded or encoded again (only a failed one is decoded, for the failure summary). A worker's
end, however it comes, is seen at once; what then happens to its episodes is the guarantee of
:class:`ProcessPool`. Resume and exactly-once are the log's: a record is logged once, when its
episode ended, and an episode of a killed run has no record and is played by the next run.
"""

from __future__ import annotations

import gc
import multiprocessing
import select
import selectors
import signal
import sys
import threading
from collections import deque
from collections.abc import Sequence
from multiprocessing import util

from socialsim import registry
from socialsim.episode import EpisodeSpec, failed_record
from socialsim.records import EpisodeRecord
from socialsim.runner import OnDone, is_synchronous, play_specs

#: How often an idle worker looks whether the parent is still alive.
PARENT_CHECK_SECONDS = 1.0
#: The most episodes in one batch (a queue read costs a worker about 0.1 ms; a scripted
#: episode a few ms, so a batch of 8 ended late holds the others back a few tens of ms at most).
MOST_PER_BATCH = 8
#: A worker's pipe to the parent: room for a few dozen scripted records (Linux's default
#: pipe-max-size for an unprivileged process is 1 MB).
PIPE_BYTES = 1 << 20
#: Workers that may die in a row, with no episode logged in between, before the pool gives up.
#: (beyond one death per worker of the pool: all of them killed at once is not a loop)
MOST_DEATHS = 2
#: The status of a worker's message that an episode starts (its key; no line).
STARTED = "started"


#: Libraries whose thread pools a fork breaks: once one has run a parallel region (PyTorch's
#: OpenMP, XLA), a forked child that enters another waits for ever on threads it does not have.
UNFORKABLE = ("torch", "tensorflow", "jax")


def start_method() -> str:
    """``"fork"`` on Linux when this process runs no other thread and has loaded none of the
    :data:`UNFORKABLE` libraries, else ``"forkserver"``."""
    if (
        sys.platform == "linux"
        and threading.active_count() == 1
        and not any(name in sys.modules for name in UNFORKABLE)
    ):
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
        self._send((status, line, key))

    def begin(self) -> None:
        """Tell the parent that this worker begins the next batch it was sent."""
        self._send((STARTED, "", None))

    def start(self, spec: EpisodeSpec) -> None:
        """Tell the parent that ``spec``'s episode starts in the event loop (the synchronous
        ones are played in the order they came, so the parent knows which one is playing)."""
        self._send((STARTED, "", spec.key))

    def _send(self, message) -> None:
        try:
            self.pipe.send(message)
        except BrokenPipeError:  # the parent died since: not the episode's failure
            raise SystemExit(1) from None


def _worker(tasks, pipe, directory, max_concurrent: int) -> None:
    from socialsim.agent import RunContext

    # Ctrl-C, SIGTERM (to the whole group, as a service manager sends it) and SIGHUP (a closed
    # terminal's, to its foreground group) are the parent's to handle: it sums up the run and
    # ends its workers itself (a worker whose parent is gone ends by itself: _Parent)
    for signum in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if signum is not None:
            signal.signal(signum, signal.SIG_IGN)
    parent = _Parent()
    sink = _ToParent(directory, pipe, parent)
    run = RunContext(directory=directory)  # one per worker: its LLM clients span its episodes
    while (batch := _next_batch(tasks, parent)) is not None:
        sink.begin()
        play_specs(batch, sink, max_concurrent, run=run, on_start=sink.start)


def _next_batch(tasks, parent: _Parent):
    """The next batch of episodes from the parent, or None when it says there is none, or has
    ended (a worker forked after this one holds the write end of this pipe too, so the parent's
    death does not always reach it as an end of file)."""
    while not tasks.poll(PARENT_CHECK_SECONDS):
        if not parent.alive():
            return None
    try:
        return tasks.recv()
    except EOFError:
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


def _synchronous(specs: Sequence[EpisodeSpec], keys: list) -> set[tuple[str, int]]:
    """The keys of ``specs`` played without an event loop (:func:`is_synchronous`), found once
    per distinct seating (the specs of a cell share theirs)."""
    seen: dict[tuple[int, bool], bool] = {}
    out = set()
    for spec, key in zip(specs, keys, strict=True):
        seating = (id(spec.seats), bool(spec.probes))
        if seating not in seen:
            seen[seating] = is_synchronous(spec)
        if seen[seating]:
            out.add(key)
    return out


def death(exitcode: int | None) -> str:
    """How a worker process ended, in words: ``"was killed by signal SIGKILL"``, ``"exited
    with code 3"``."""
    if exitcode is None:
        return "closed its pipe and did not end"
    if exitcode < 0:
        try:
            return f"was killed by signal {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"was killed by signal {-exitcode}"
    return f"exited with code {exitcode}"


class _Worker:
    """One worker process, seen from the parent: its pipes, and the episodes it holds (sent to
    it, not logged yet) with those it has started."""

    def __init__(self, process, tasks, results) -> None:
        self.process, self.tasks, self.results = process, tasks, results
        self.batches: deque[list[tuple[str, int]]] = deque()  # keys sent, by batch, in order
        self.counts: deque[int] = deque()  # of each batch, the episodes not logged yet
        self.held: dict[tuple[str, int], EpisodeSpec] = {}
        self.playing: set[tuple[str, int]] = set()
        self.begun = 0  # batches of self.batches the worker has begun (the first ones)
        self.ended = False  # its results pipe has ended: nothing more comes from it

    def send(self, batch: tuple[list[EpisodeSpec], list[tuple[str, int]]]) -> None:
        specs, keys = batch
        self.batches.append(keys)
        self.counts.append(len(keys))
        self.held.update(zip(keys, specs, strict=True))
        try:
            self.tasks.send(specs)
        except OSError:  # it has ended: seen through its pipe, and another plays what it held
            pass

    def in_play(self, synchronous: set) -> list[tuple[str, int]]:
        """The keys of the episodes this worker is playing now: those it said it started (in
        an event loop), else, in the batch it has begun (the first not all logged), the first
        synchronous one it holds (it plays them first, in order)."""
        if self.playing:
            return sorted(self.playing, key=list(self.held).index)
        if not self.begun:  # between batches, or it died before beginning the one sent
            return []
        return [k for k in self.batches[0] if k in self.held and k in synchronous][:1]

    def unplayed(self) -> tuple[list[EpisodeSpec], list[tuple[str, int]]]:
        """What it holds and has not played, in the order it was sent."""
        keys = [key for batch in self.batches for key in batch if key in self.held]
        return [self.held[key] for key in keys], keys

    def logged(self, key: tuple[str, int]) -> bool:
        """Forget ``key``'s episode, logged; whether the worker has ended its first batch (a
        worker sends the lines of its batches in the order it was sent them)."""
        self.held.pop(key, None)
        self.playing.discard(key)
        if self.counts:
            self.counts[0] -= 1
            if not self.counts[0]:
                self.counts.popleft()
                self.batches.popleft()
                self.begun = max(0, self.begun - 1)
                return True
        return False


class ProcessPool:
    """``workers`` processes that play the batches of episodes sent to them, started once per run
    (the check episodes and then the rest are played by the same processes)::

        with ProcessPool(specs, workers=2) as pool:  # specs: what the workers must import
            pool.play(checks, RecordList())
            pool.play(rest, log, on_done)

    The guarantee: :meth:`play` returns once every episode it was given has exactly one line in
    ``log``, and never waits on a worker that has died. Each worker is sent its batches over a
    pipe of its own (two at a time: the one it plays and the next), so the parent knows which
    episode each worker is playing; its end is seen at once, however it came (``os._exit``, a signal such as the OOM
    killer's SIGKILL, a crash), by its pipe's end of file and its process's sentinel. The
    episodes it was playing are then logged as ``failed``, naming how it ended (``"the worker
    process playing it was killed by signal SIGKILL"``), and those it held but had not started
    are played by the others; a worker is started in its place. An agent that raises in
    ``__init__`` or ``reset`` fails its episode like one that raises while deciding
    (:mod:`socialsim.runner`), and the worker goes on. When more workers than the pool's size
    (by :data:`MOST_DEATHS`) die in a row before any episode is logged, the workers cannot be
    kept alive: the episodes left are logged as failed with the last one's cause, and
    :meth:`play` returns.

    The guarantee holds with one worker as with many: a run's ``workers = 1`` is a pool of one
    wherever a worker can be forked (:func:`socialsim.backends.in_this_process`), so an agent
    that ends its process fails its episode, and the run goes on and counts it.

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
        self.context = multiprocessing.get_context(method)
        if method == "forkserver":
            self.context.set_forkserver_preload(preload_modules(specs))  # used when it starts
        self.size = max(1, max_concurrent)
        self.directory = directory
        self.workers: list[_Worker] = []
        self.selector = selectors.DefaultSelector()
        self._deaths = 0  # workers that died in a row with no episode logged since
        self.most_deaths = max(1, workers) + MOST_DEATHS
        if method == "fork":
            # what the run built before the fork moves out of the collector's reach, so that
            # collections in the workers do not write to (and so copy) the pages they share
            gc.freeze()
        for _ in range(max(1, workers)):
            self._start()
        if method == "fork":
            gc.unfreeze()

    def _start(self) -> _Worker:
        # Two pipes per worker, made just before it starts; the ends that are the worker's are
        # closed here right after, so no later worker inherits them and its results pipe ends
        # (EOF) exactly when it does. Forked workers close the parent's ends they inherit.
        results, writer = self.context.Pipe(duplex=False)
        reader, tasks = self.context.Pipe(duplex=False)
        util.register_after_fork(results, _close)
        util.register_after_fork(tasks, _close)
        _widen(writer)
        _widen(tasks)
        process = self.context.Process(
            target=_worker, args=(reader, writer, self.directory, self.size), daemon=True
        )
        process.start()
        writer.close()
        reader.close()
        worker = _Worker(process, tasks, results)
        self.workers.append(worker)
        self.selector.register(results, selectors.EVENT_READ, (worker, False))
        self.selector.register(process.sentinel, selectors.EVENT_READ, (worker, True))
        return worker

    @property
    def processes(self) -> list:
        """The worker processes running now."""
        return [worker.process for worker in self.workers]

    @property
    def running(self) -> int:
        """Workers that have not ended."""
        return len(self.workers)

    def play(self, specs: Sequence[EpisodeSpec], log, on_done: OnDone | None = None) -> None:
        """Play ``specs`` in the workers, writing each record's line to ``log`` as it comes; return
        when every one has its line (see the class's guarantee)."""
        keys = [spec.key for spec in specs]
        waiting = set(keys)
        synchronous = _synchronous(specs, keys)
        todo = deque()
        start = 0
        for batch in batches(specs, max(1, len(self.workers)), self.size):
            todo.append((batch, keys[start : start + len(batch)]))
            start += len(batch)

        def logged(line: str, status: str, key, record=None) -> None:
            waiting.discard(key)
            self._deaths = 0
            log.write(line, status, key)
            if on_done is not None:
                if record is None and status != "done":
                    record = EpisodeRecord.from_line(line)
                on_done(status, None if status == "done" else record)

        for worker in self.workers:
            for _ in range(2):
                if todo:
                    worker.send(todo.popleft())
        while waiting:
            if not self.workers:
                self._start()
                for _ in range(2):
                    if todo:
                        self.workers[-1].send(todo.popleft())
            for ready, _ in self.selector.select():
                worker, sentinel = ready.data
                if worker not in self.workers:
                    continue  # ended already, seen through its other file
                for status, line, key in self._messages(worker):
                    if status == STARTED:
                        if key is None:
                            worker.begun += 1
                        else:
                            worker.playing.add(key)
                        continue
                    if worker.logged(key) and todo:
                        worker.send(todo.popleft())
                    logged(line, status, key)
                if not (sentinel or worker.ended):
                    continue
                cause = self._bury(worker)
                for key in worker.in_play(synchronous):
                    spec = worker.held.pop(key)
                    record = failed_record(spec, f"the worker process playing it {cause}")
                    logged(record.line(), "failed", key, record)
                left = worker.unplayed()
                if left[0]:
                    todo.appendleft(left)
                self._deaths += 1
                if self._deaths >= self.most_deaths:
                    self._give_up(todo, cause, logged)
                elif todo:
                    replacement = self._start()
                    for _ in range(2):
                        if todo:
                            replacement.send(todo.popleft())
                if not waiting:
                    break

    def _messages(self, worker: _Worker):
        """What ``worker`` has sent and is there to read, without waiting."""
        pipe = worker.results
        while not worker.ended and pipe.poll(0):
            try:
                yield pipe.recv()
            except (EOFError, OSError):  # its end: nothing more comes from it
                worker.ended = True

    def _bury(self, worker: _Worker) -> str:
        """Forget an ended ``worker``; how it ended."""
        process = worker.process
        process.join(PARENT_CHECK_SECONDS)
        if process.exitcode is None:  # its pipe ended but it lives on: end it
            process.kill()
            process.join()
        self.workers.remove(worker)
        self.selector.unregister(process.sentinel)
        self.selector.unregister(worker.results)
        worker.results.close()
        worker.tasks.close()
        return death(process.exitcode)

    def _give_up(self, todo: deque, cause: str, logged) -> None:
        reason = (
            f"no worker process could be kept alive: {self.most_deaths} in a row ended before an "
            f"episode was logged, the last {cause}"
        )
        while todo:
            specs, keys = todo.popleft()
            for spec, key in zip(specs, keys, strict=True):
                record = failed_record(spec, reason)
                logged(record.line(), "failed", key, record)
        for worker in list(self.workers):  # what they hold is logged: they must not send it
            worker.process.kill()
            self._bury(worker)
            for key, spec in worker.held.items():
                record = failed_record(spec, reason)
                logged(record.line(), "failed", key, record)

    def close(self, finished: bool = True) -> None:
        """Let the workers finish (``finished``) or end them now."""
        for worker in self.workers:
            if finished:
                try:
                    worker.tasks.send(None)
                except OSError:  # it has ended already
                    pass
            elif worker.process.exitcode is None:
                worker.process.kill()  # a worker ignores SIGTERM
        for worker in list(self.workers):
            worker.process.join()
            self._bury(worker)
        self.selector.close()

    def __enter__(self) -> ProcessPool:
        return self

    def __exit__(self, kind, *exc: object) -> None:
        self.close(finished=kind is None)
