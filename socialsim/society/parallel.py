"""How :meth:`ReplicatedSociety.run <socialsim.society.vectorised.ReplicatedSociety.run>` uses a
second CPU: the replicates split between this process and a fork, or a lone replicate's next
round drawn in a thread. Each replicate's draws are made from its own Generators in order, so
either way gives the results of playing in one process.

Replicates are independent, so a batch parallelises without any exchange between rounds:
``run(parallel=None)``, on Linux with a second CPU and from :data:`PARALLEL_MIN_WORK`
agent-rounds, forks a process that plays the first half of the replicates while this one plays
the second half; at the end the fork sends back its half's state, round counts and Generators'
states. A lone replicate of :data:`DRAW_AHEAD_MIN_AGENTS` agents or more has a thread draw its
next round's pairs while this one draws the round's reach and plays it instead. Each
replicate's draws are made from its own Generator in order, so the results are the same either
way. (Drawing ahead does not pay for
many small replicates: in a thread their draw calls are too short to overlap under the GIL, in
a process reading the other core's draws line by line costs as much as drawing them; see the
benchmark.)
"""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any


def run_drawing_ahead(society: Any, rounds: int) -> None:
    """Play ``rounds`` rounds, a thread drawing each next round's pairs while this one draws
    the round's reach, plays it and puts its buffer back in order for the round after next (the
    shuffle, ``random`` and the compiled kernels release the GIL; the reach and the reordering
    are done here so that the two threads' work is about even)."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="society-draws") as pool:
        pending = pool.submit(society._draw_pairs, 0)
        society._arrange(1)
        for played in range(rounds):
            buffer = played % 2
            society._draw_reach(buffer)
            pending.result()
            if played + 1 < rounds:
                pending = pool.submit(society._draw_pairs, 1 - buffer, True)
            society._play(buffer)
            society._arrange(buffer)


def run_split(society: Any, rounds: int, block_agents: int) -> None:
    """Play ``rounds`` rounds, the first half of the replicates in a forked process."""
    split(society, lambda part: part._play_rounds(rounds, block_agents))


def split(whole: Any, play: Callable[[Any], None]) -> None:
    """``play`` the first half of ``whole``'s replicates in a forked process and the rest
    here: ``whole._part(first, stop)`` makes a part, ``part._played()`` is what it sends back
    (with its Generators' states), ``whole._take(parts)`` takes the parts back in order.

    Forked even when other threads run (a notebook's): the fork only plays its part with
    numpy and its own Generators and writes to a pipe, so it takes no lock another thread
    could hold at the fork (OpenBLAS, for each round's small product, quiesces its threads
    around a fork). Python 3.12 and later warn about any fork of a threaded process.
    """
    forked = (whole.replicates + 1) // 2
    context = multiprocessing.get_context("fork")
    results, results_writer = context.Pipe(duplex=False)
    process = context.Process(
        target=_play_part,
        args=(whole._part(0, forked), play, results_writer),
        name="society-replicates",
        daemon=True,
    )
    try:
        process.start()
    except BaseException:  # no fork: its error as it is, the pipe closed
        results.close()
        raise
    finally:
        results_writer.close()  # the fork's end: EOF here when it ends
    try:
        mine = whole._part(forked, whole.replicates)
        play(mine)
        try:
            theirs = results.recv()
        except EOFError:
            process.join()
            raise RuntimeError(
                f"society: the process playing replicates 0-{forked - 1} ended (exit code"
                f" {process.exitcode}) before sending them back"
            ) from None
    finally:
        results.close()
        if process.is_alive():
            process.terminate()
        process.join()
    whole._take([theirs, mine._played()])


def _play_part(part: Any, play: Callable[[Any], None], results: Any) -> None:
    """The forked process of :func:`split`: play ``part``, send it back."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent's interrupt ends it
    play(part)
    results.send(part._played())
