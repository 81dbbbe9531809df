"""Benchmark: ``workers = 2`` against ``workers = 1`` (goal >= 1.8x on 2 cores), and the Ray
backend's overhead, on the scripted gossip grid and the GloVe Decrypto grid.

Each trial is a fresh Python process (as a user's ``socialsim run`` is) that times
:func:`socialsim.run` into a new directory: the config check, the check episodes, the workers'
start (or Ray's), every episode and the log; the interpreter's own start is not counted. Each
trial also prints the CPU time of this process and of the workers forked from it (a forkserver's
workers are not its children: their CPU is not seen). Trials of the backends are interleaved;
best of ``--trials``. With ``--ray`` the Ray backend (2 CPUs) is timed too, ``ray.init``
reported apart from the play.

    python experiments/bench/workers_bench.py [--trials 3] [--ray] [--only align_donation_grid]
        [--against /work/wt/base]   # also time that worktree's code, interleaved (helpers' shim)

Measured on 2026-12-01 on 2 cores shared with four other engineers (load average 8-11 all
along: browsers, a llama.cpp server, other benches and test suites), so every 2-worker figure
is depressed by the others' load and none reaches the goal here; best wall of 2-3 trials:

| run | align_donation_grid (540) 1 / 2 workers | decrypto_baselines (768) 1 / 2 workers |
|---|---|---|
| main (spawned workers re-importing, GloVe decoded per worker, parent re-encoding) | 16.98 / 18.80 s, 0.90x | 21.00 / 36.92 s, 0.57x |
| this version (forkserver, mmap vectors, lines written as encoded) | 9.74 / 10.38 s, 0.94x | 13.64 / 14.58 s, 0.94x |
| this version, Ray with 2 CPUs (``ray.init`` 11.5-14.7 s apart) | 10.54 s, +0.8 ms/episode over the pool | 17.44 s, -0.35 ms/episode |

Later the same day (``--trials 2``, main and this version run one after the other by the same
command, load average 7-11 throughout: figures for their ratio, not for the goal):

| run | align_donation_grid (540) 1 / 2 workers | decrypto_baselines (768) 1 / 2 workers |
|---|---|---|
| before (466534a: a pool of its own for the check episodes, workers from a forkserver) | 15.35 / 18.65 s, 0.82x | 31.62 / 32.76 s, 0.97x |
| after (one pool per run; workers forked from the run, GloVe already loaded) | 24.44 / 17.00 s, 1.44x | 27.96 / 16.80 s, 1.66x |

This version once more (``--trials 2``, load average 8-9), with the CPU split: donation grid
8.43 / 6.45 s, 1.31x (this process 0.51-0.60 s with 2 workers, the forked workers 5.39-5.41 s
together; 5.52-5.97 s for the whole 1-worker run); decrypto_baselines 6.21 / 5.99 s, 1.04x (this
process 1.23-1.38 s with 2 workers, the workers 4.32-5.19 s; 4.27-5.49 s for the whole 1-worker
run). The workers' CPU is about the 1-worker run's episodes: the episodes scale, and the wall
lost is the others' load and the serial part. On Decrypto the serial part (imports with scipy,
the config check building a GloVe agent and so loading the vectors, once for both worker
counts) is about a quarter of the work, which bounds the speed-up near 1.6x whatever the pool
does; a lighter check (vectors found, not loaded, in the parent) would only move the load into
each worker.

Where the time went before: the check episodes started and stopped a pool of their own (a
forkserver importing every module, each worker loading GloVe) before the run's pool did it all
again; an episode's own time in a worker barely grows with two (thread CPU per GloVe episode
7.1 ms alone, 7.5-7.8 ms with a second process playing beside it). Now the workers are forked
from the run once, on Linux when it runs no other thread (:func:`socialsim.pool.start_method`):
they start with the modules imported and the vectors loaded by the config check, and play the
check episodes and then the rest. What stays serial is the parent's imports and config check,
paid by both worker counts alike.

On a quiet machine (load average under 1, no other job), 2026-12-01 evening, ``--trials 3``,
best wall, each a separate run of the script:

| code | align_donation_grid 1 / 2 workers | decrypto_baselines 1 / 2 workers |
|---|---|---|
| the day's merges (one pool, forked workers; scipy still imported) | 4.96 / 4.48 s, 1.11x (a test suite ran alongside) | 4.93 / 4.22 s, 1.17x (same) |
| + our own assignment instead of ``scipy.optimize`` (0.84 s less serial import) | 4.44 / 2.94 s, 1.51x | 5.01 / 2.71 s, 1.85x |
| + ``gc.freeze()`` before the fork (the workers' CPU 4.9-5.2 -> 4.5-4.8 s) | 4.87 / 2.65 s, 1.84x; 4.34 / 2.64 s, 1.64x | 4.94 / 2.76 s, 1.79x |
| the same, ``--trials 5 --only align_donation_grid`` | 4.49 / 2.39 s, 1.88x | |

The parent's own CPU with 2 workers is 0.42-0.44 s (donation) and 0.59-0.67 s (Decrypto): the
imports (numpy, gymnasium, the envs) and the config check, which bound the speed-up near 1.8x.

What the parent itself spends (``/usr/bin/time`` of ``socialsim run align_donation_grid
--set workers=2``): 0.82 s of user CPU here (imports, config check, writing the lines), where
main's parent and its spawned workers spent 9.79 s together against 6.56 s for the whole
1-worker run, the difference being the workers' re-imports and the parent's decoding and
re-encoding of every record.

Late evening (main 743e82b, the envs' and the runner's steps cheaper), quiet machine, three
runs: ``--trials 3`` donation 4.28 / 2.72 s, 1.57x and Decrypto 5.30 / 3.18 s, 1.66x;
``--trials 3 --only align_donation_grid`` 4.54 / 2.17 s, 2.10x; ``--trials 5`` donation 3.69 /
2.11 s, **1.75x** and Decrypto 3.98 / 2.35 s, **1.69x**. The same code's 1-worker time moved
from 3.69 to 4.70 s between trials of one run, so single ratios are loose. The episodes got
faster (Decrypto's 768 on one worker 4.0-5.3 s, against 4.9-5.0 s before), while the parent's
serial part stayed 0.33-0.55 s CPU, so it bounds the speed-up lower than before: about 1.7x,
short of the 1.8x goal.

Where the 2-worker run lost against half the 1-worker one (issue 12), measured on 20967b7 with
phase timestamps of the parent and the workers (a scratch copy of this script that stamps
``perf_counter``, ``process_time`` and ``thread_time`` at each phase), and callgrind for counts
that do not depend on the load: (1) the parent's start before it forks, 0.55 G instructions for
the donation grid and 1.08 G for Decrypto beyond ``import socialsim.results``: the config check
built every cell's env (108 envs for 6 distinct ones in the donation grid, and ``specs()`` 54
more) and, for Decrypto, the GloVe agents loaded the vectors, whose dict of 400,000 words took
0.16-0.2 s to build (80 % of the load); (2) the workers idled while the last check episodes
ended and the parent wrote the manifest (``git rev-parse``, package versions), 20-50 ms; (3) the
parent's work per record is 0.2 ms of CPU (the queue, the write, an fsync per 64), taken from
the workers' cores, and each worker builds the hint vocabulary (0.06-0.1 s) at its first GloVe
episode. The pool itself adds little: a fork is 6-10 ms, copy-on-write faults 2-5 thousand per
worker, the workers' queue gets and puts 0.03-0.05 s each per run.

What changed: the config check builds each distinct env, seat spec and fit once per experiment;
the vectors are found in a sorted table memory-mapped from the decoded cache (``load_vectors``
of GloVe 5-8 ms instead of 0.19-0.3 s; each process remembers the words it looked up, and
its hint vocabulary's 20,000 lookups in the table cost 0.1-0.13 s against 0.06 s with the
dict, per worker, at its first GloVe episode); the
check episodes go to the workers first and the rest right after them, the lines that end first
held until the last check is done (:class:`socialsim.results._AfterChecks`). The parent's start
before the fork is now 0.39 G instructions (donation) and 0.38 G (Decrypto); the rest is imports
(every agent family's module, for the kind table; here without ``.pyc`` files, as
``PYTHONDONTWRITEBYTECODE`` is set).

On 2026-12-01 night, on a busy machine (load average 5-8: another helper's callgrind and
benchmarks), ``--trials 3 --against`` a checkout of 20967b7, best wall of 3; the walls are the
others' load more than ours, so the CPU columns are the figures to read:

| code | donation 1 / 2 workers | parent CPU, 2 workers | Decrypto 1 / 2 workers | parent CPU, 2 workers |
|---|---|---|---|---|
| 20967b7 | 3.86 / 3.46 s, 1.11x | 0.39-0.44 s | 6.50 / 5.51 s, 1.18x | 0.67-0.68 s |
| this version | 4.57 / 3.76 s, 1.21x | 0.24-0.34 s | 7.41 / 5.16 s, 1.44x | 0.29-0.35 s |

The parent's serial start before the fork, from ``run()`` to the workers' first episode (the
phase stamps, same machine): donation 0.30 -> 0.20 s, Decrypto 0.47 -> 0.15 s.

Quiet machine (load average about 1, no other job), 2026-12-01 22:26-22:32, main with the
workers3, decrypto3 and record-encoding (orjson) changes; best wall of 3 trials per run:

| run | donation 1 / 2 workers | Decrypto 1 / 2 workers |
|---|---|---|
| ``--trials 3 --against`` 20967b7: 20967b7 | 3.68 / 2.20 s, 1.67x | 4.08 / 2.58 s, 1.58x |
| the same run: this version | 3.23 / 1.89 s, **1.71x** | 4.30 / 2.52 s, **1.71x** |
| ``--trials 3``, four more runs of this version | 1.81x, 1.81x, 1.80x, 1.66x | 1.87x, 1.70x, 1.82x, 1.74x |

Two of those four runs had the repository's ``.pyc`` files compiled first (``PYTHONDONTWRITEBYTECODE``
is set on this machine, so every process compiles our modules from source, as a normal install
does not): 1.81x/1.70x and 1.66x/1.74x with them, 1.80x/1.82x without; no difference shows. The
same code's 1-worker best moves from 3.21 to 3.54 s (donation) and from 4.04 to 4.96 s
(Decrypto) between runs, so one run's ratio is loose by about 0.1. Medians of the five runs of
this version: donation 1.80x, Decrypto 1.74x; the goal (>= 1.8x) is met for donation in the
median, not for Decrypto. In a 2-worker run the parent uses 0.31-0.33 s of CPU (the start
before the fork about 0.15 s of it: the config check, mostly imports; then about 0.2 ms per
record and the manifest, 47 ms, while the workers play), and the two workers together use
3.9-4.1 s against 3.85-4.1 s for the whole 1-worker run.

**The pool's own overhead removed** (2026-12-02): each worker sends its records over a pipe of
its own as each episode ends (no feeder thread, no shared results queue), the parent waits on
all pipes with one selector, and the batches shrink towards the end (:func:`socialsim.pool.batches`,
up to 8 episodes, so a worker reads the queue about 40 times a run instead of 270). Per worker
the time outside the episodes went from about 0.09 s (0.05 s the feeder thread, 0.04 s queue
reads) to about 0.01 s. Quiet machine (load average about 1), best wall of 3:

| run | donation 1 / 2 workers | Decrypto 1 / 2 workers |
|---|---|---|
| ``--against`` a26e1a2, 00:59: a26e1a2 | 3.13 / 2.10 s, 1.49x | 4.13 / 2.76 s, 1.49x |
| the same run: this version | 3.72 / 1.65 s, 2.26x | 4.27 / 2.23 s, 1.92x |
| ``--against`` a26e1a2, 01:41: a26e1a2 | 3.26 / 2.03 s, 1.61x | 4.31 / 2.37 s, 1.82x |
| the same run: this version | 2.87 / 1.58 s, **1.82x** | 4.15 / 2.50 s, **1.66x** |
| ``--trials 3``, 01:42: this version | 3.08 / 1.62 s, **1.90x** | 4.43 / 2.17 s, **2.04x** |

The 2-worker walls are what changed (donation 1.58-1.65 s against 2.03-2.10 s; Decrypto
2.17-2.50 s against 2.37-2.76 s); the 1-worker runs do not use the pool, and their best moves
by 0.3-0.9 s between runs of the same code. Five of these six ratios reach the goal (>= 1.8x).

2026-12-02, a quiet machine about three times faster than the day before (a 1-worker run of
either grid in 1.1-1.6 s), ``--trials 3`` from ``/tmp``: main (9978ac4, through a second venv
pointed at a detached checkout) donation 1.88x, 1.83x and Decrypto **1.69x, 1.71x**; with the
untracked bus log (d7d913b) donation 1.75x, 1.83x and Decrypto 1.74x, 1.75x. On the faster
machine the part that does not shrink with two workers weighs more: the parent's start (imports
compiled from source here, the config check: about 0.11 s of CPU), and in each worker its
first GloVe episode's hint vocabulary, 20,000 words looked up in the vectors' table (about
65-80 ms a process, paid by both workers at once). The vocabulary is now kept looked up beside
the decoded vectors and memory-mapped (7 ms a process). Two rounds of main and this change
alternately: donation 1.78x, 1.85x (main) -> 1.75x, 1.84x; Decrypto **1.71x, 1.67x -> 1.76x,
1.79x** (2 workers 0.90-0.93 s -> 0.87-0.88 s). The workers' CPU together is 1.60-1.69 s
against about 1.4 s of episodes in a 1-worker run: two processes on the two cores slow each
other's episodes (caches, memory), which with the parent's serial start bounds this short
grid near 1.8x. The goal (>= 1.8x) is met for donation and, on this machine, not quite for
Decrypto.

Then Decrypto's episodes got cheaper, and so its ratio lower: a Decrypto env is built in 85
us instead of 440-580 (its word tables made once per process, its spaces when asked for), and
the runner builds one an episode (1 worker 1.43-1.56 s -> 1.15-1.28 s). Limiting each worker's
BLAS threads to its share of the cores (``threadpoolctl``) was tried and dropped: interleaved
runs of the limit set in the workers, set in the parent before the fork, and no limit gave
Decrypto 2 workers 0.75, 0.75 / 0.73, 0.72 / 0.70, 0.76 s and donation 0.69, 0.67 / 0.64, 0.66 /
0.64, 0.69 s, no difference beyond the machine's drift. Two rounds of main (9978ac4) and this
version alternately, ``--trials 3``: Decrypto 1.52 / 0.90 s, **1.69x**; 1.43 / 0.83 s,
**1.71x** (main) -> 1.15-1.30 / 0.70-0.77 s, **1.58x-1.73x** over six runs; donation 1.10 /
0.60 s, 1.81x; 1.04 / 0.57 s, 1.83x -> 1.13-1.17 / 0.64-0.69 s, **1.65x-1.83x**. What does not
shrink with two workers: the parent's start (55-90 ms to the fork by phase stamps: imports, the
config check), and the two workers' contention for the caches and memory: together they spend
1.30-1.36 s of CPU on the episodes that one worker plays in about 1.13 s (their GloVe turns
stream the 4 MB hint-vocabulary matrix through ``einsum``), where two pure-Python loops on the
two cores run as fast together as alone (a scratch check). The donation grid's workers spend
1.13-1.16 s against 1.04-1.12 s on main's: its readers now make the messages they read. With
two workers Decrypto ends sooner in seconds than on main (0.70-0.77 s against 0.83-0.90 s) and
donation a little later (0.64-0.69 s against 0.57-0.63 s); the ratio goal (>= 1.8x) is
met for donation in some runs (1.83x at best), for Decrypto in none on this machine.

2026-12-02 evening, a new machine of this kind (quiet, load under 1; slower than the morning's:
a 1-worker run of either grid in 2.2-2.4 s), main d3164b7, ``--trials 3`` from ``/tmp``, six
runs: donation **1.91x, 1.85x, 1.84x, 1.90x, 1.93x, 1.90x** and Decrypto **1.79x, 1.83x,
1.83x, 1.85x, 1.82x, 1.76x** (best walls 2.16-2.42 / 1.13-1.33 s), listed from source first; the last three listed (run
alternately with the others) had our modules' ``.pyc`` compiled first (``python -m compileall socialsim envs agents experiments``;
this machine sets ``PYTHONDONTWRITEBYTECODE``, so otherwise every process compiles them from
source, as an installed package never does): no difference beyond the runs' spread. What the
2-worker run still pays, by phase stamps (a scratch copy of :func:`socialsim.results.run`'s
steps timed with ``perf_counter``): the parent's start to the workers' first queue read, 88-90
ms from source and 54-58 ms from ``.pyc`` (the config's load and checks 71-108 ms from source
and 42-45 ms from ``.pyc``: imports, 13 ms of it the scan of every installed package's entry
points, then the checks; the fork of both workers 5-9 ms); the workers then wait on the queue
9-15 ms in all and play 1.14-1.27 s each. The contention found on the faster machine does not
show here: the episodes' own wall (their records' ``timing.wall_s``) sums to 2.072 s with one
worker and 2.057 s with two, and outside its episodes each worker spends about 0.12 s (the
runner's building of envs and agents, the records' encoding, the pipe), as the 1-worker run
spends 0.19 s. The parent's CPU while the workers play is 0.05-0.10 s (768 records received
and written, 12 fsyncs); reading the pipes at most every 10 ms (several records a wake-up) was
tried and dropped: 0.054-0.103 s against 0.069-0.085 s, no difference. So the 2-worker wall is
the serial start plus half the play: (0.09 + 2.2) / (0.09 + 1.1), about 1.9x at most, and the
goal (>= 1.8x) is met for donation in all six runs and for Decrypto in five.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

EXPERIMENTS = ("align_donation_grid", "decrypto_baselines")


def one_trial(name: str, workers: int, backend: str) -> dict:
    import resource

    from socialsim.results import run

    overrides = [f"workers={workers}", f"backend={backend}"]
    extra = {}
    if backend == "ray":
        import ray

        start = time.perf_counter()
        ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
        extra["ray_init_s"] = time.perf_counter() - start
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryDirectory() as out:
        start, cpu = time.perf_counter(), time.process_time()
        results = run(name, out=out, overrides=overrides)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # Workers forked from this process are its children, reaped by the pool: their CPU is here.
    workers_cpu = (after.ru_utime + after.ru_stime) - (children.ru_utime + children.ru_stime)
    return {
        "wall_s": wall,
        "parent_cpu_s": cpu,
        "workers_cpu_s": workers_cpu,
        "episodes": results.total,
        "failed": len(results.failed),
        **extra,
    }


def trial(name: str, workers: int, backend: str, root: str | None = None) -> dict:
    """One trial in a fresh process; ``root``: the worktree whose code it runs (the shim that
    maps the installed package onto ``$SOCIALSIM_ROOT``), else this environment's."""
    env = None if root is None else {**os.environ, "SOCIALSIM_ROOT": root}
    code = (
        "import json, sys; sys.argv[0] = 'workers_bench'; "
        "from workers_bench import one_trial; "
        f"print(json.dumps(one_trial({name!r}, {workers}, {backend!r})))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=__file__.rsplit("/", 1)[0],
        env=env,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--ray", action="store_true", help="time the Ray backend too")
    parser.add_argument("--only", nargs="*", help="experiment names")
    parser.add_argument(
        "--against",
        metavar="ROOT",
        help="also time the code of the worktree ROOT (e.g. a detached checkout of main), "
        "its trials interleaved with these ones (needs the helpers' SOCIALSIM_ROOT shim)",
    )
    args = parser.parse_args()
    setups = [("1 worker", 1, "local", None), ("2 workers", 2, "local", None)]
    if args.ray:
        setups.append(("ray, 2 CPUs", 2, "ray", None))
    if args.against:
        setups += [(f"{label} @ROOT", w, b, args.against) for label, w, b, _ in list(setups)]
    for name in args.only or EXPERIMENTS:
        best: dict[str, dict] = {}
        for number in range(args.trials):
            for label, workers, backend, root in setups:
                result = trial(name, workers, backend, root)
                if label not in best or result["wall_s"] < best[label]["wall_s"]:
                    best[label] = result
                init = f", ray.init {result['ray_init_s']:.2f} s" if "ray_init_s" in result else ""
                print(
                    f"{name} trial {number + 1} {label}: {result['wall_s']:.2f} s (CPU: this "
                    f"process {result['parent_cpu_s']:.2f} s, forked workers "
                    f"{result['workers_cpu_s']:.2f} s){init}"
                )
        print(f"{name}: {best['1 worker']['episodes']} episodes, best of {args.trials}")
        for label, result in best.items():
            one = best["1 worker @ROOT" if label.endswith("@ROOT") else "1 worker"]
            per = result["wall_s"] / result["episodes"] * 1e3
            print(
                f"  {label:18s} {result['wall_s']:7.2f} s  {per:6.2f} ms/episode  "
                f"speed-up {one['wall_s'] / result['wall_s']:.2f}x"
            )
        if "ray, 2 CPUs" in best:
            ray, pool = best["ray, 2 CPUs"], best["2 workers"]
            overhead = (ray["wall_s"] - pool["wall_s"]) / ray["episodes"] * 1e3
            print(
                f"  Ray overhead over the pool: {overhead:+.2f} ms/episode "
                f"(ray.init {ray['ray_init_s']:.2f} s, not in the wall)"
            )


if __name__ == "__main__":
    main()
