"""Benchmark: what ``workers = 1`` costs as one supervised worker process (a pool of one,
:func:`socialsim.backends.in_this_process`) against ``workers = 0``, the run's own process.

Each trial is ``socialsim run`` in a fresh process into a new directory; the two settings are
interleaved, ``--trials`` times each, and the medians printed: wall time, and CPU (user + system)
of the run and of the worker forked from it (a child: its CPU is counted).

    python experiments/bench/one_worker_bench.py [--trials 5]

Measured on 2026-12-07 with this script (``--trials 5``) on the 2-core machine, load average
0.9-1.1 (another engineer's jobs alongside), medians:

| run | workers = 0: wall / CPU | workers = 1: wall / CPU |
|---|---|---|
| align_quickstart (20 scripted episodes) | 0.51 / 0.61 s | 0.52 / 0.62 s |
| matching_pennies, episodes = 1000 (2,000 episodes of about 0.5 ms) | 1.08 / 1.17 s | 1.14 / 1.31 s |
| align_evolution (300 episodes, 15 generations: a worker forked per generation) | 4.79 / 4.85 s | 3.99 / 4.16 s |

(Earlier the same day, under a load average of 1.8-3.6: 1.15 / 0.74 against 1.31 / 0.73 s,
1.80 / 1.25 against 2.26 / 1.48 s, 7.26 / 6.48 against 7.96 / 5.40 s.)

The worker costs its fork and, per episode, the record's line sent over a pipe and written by
the parent (about 0.07 ms of CPU: +12% on episodes as short as matching pennies', nothing
measurable on align_quickstart's). The worker's collector passes over the objects frozen
before the fork (``gc.freeze``), so a run whose episodes build much (the evolution run) costs
less CPU in one worker than in the run's own process (``gc.freeze()`` before
``socialsim.run("align_evolution", overrides=["workers=0"])``, two trials: 4.10 and 4.40 s CPU
against 4.77 and 4.60 s without). The wall figures carry the machine's other load.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNS = [
    ("align_quickstart", []),
    ("matching_pennies", ["--set", "episodes=1000"]),
    ("align_evolution", []),
]


def trial(name: str, extra: list[str], workers: int, out: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one ``socialsim run`` with ``workers``."""
    shutil.rmtree(out, ignore_errors=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    command = [sys.executable, "-m", "socialsim", "run", name, *extra, "--quiet"]
    subprocess.run([*command, "--set", f"workers={workers}", "--out", str(out)], check=True,
                   capture_output=True)  # fmt: skip
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for name, extra in RUNS:
            times: dict[int, list[tuple[float, float]]] = {0: [], 1: []}
            for _ in range(args.trials):
                for workers in times:
                    times[workers].append(trial(name, extra, workers, Path(tmp) / name))
            for workers, got in times.items():
                walls, cpus = zip(*got, strict=True)
                print(f"{name} {' '.join(extra)} workers = {workers}: wall "
                      f"{statistics.median(walls):.2f} s, CPU {statistics.median(cpus):.2f} s "
                      f"(median of {args.trials})")  # fmt: skip


if __name__ == "__main__":
    main()
