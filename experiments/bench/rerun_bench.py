"""Benchmark: the CPU time of rerunning a finished evolution run, and of resuming one, against
the run itself (issue 39: "a finished ``align_evolution`` reruns in under a quarter of its own
run's CPU time").

Each row is one ``socialsim run`` in a child process (``python -m socialsim.cli run NAME --out
DIR``), its CPU time (user + system) read from ``getrusage(RUSAGE_CHILDREN)`` around it:

* **run**: into a fresh directory, best of ``--trials``;
* **rerun**: the same command again on the finished directory (nothing to play), best of
  ``--trials``;
* **resume after generation k**: a copy of the finished directory cut after generation ``k``
  (``--resume-after``), as a run killed then leaves it: the log's lines of generations 0..k and
  the index of exactly them (what the run wrote after generation k); and the same cut without
  the index (a log copied alone, read whole). Shown beside what is left to play: the run's CPU
  times the share of episodes left.

Every command is run once untimed first, so that Python's bytecode caches exist (the child is
started without ``PYTHONDONTWRITEBYTECODE``). The script prints; it asserts nothing.

    python experiments/bench/rerun_bench.py [--experiment align_evolution] [--trials 3]
                                            [--resume-after 11]

Printed on 2026-12-07 on 2 cores shared with three other helpers' work, ``--trials 3`` (best
of 3), ``align_evolution`` (300 episodes in 15 generations, a 72 MB log). Before: the base
commit a8a2767 (its tree as ``PYTHONPATH``); after: this version; run one after the other by
the same script, twice (01:50 UTC at load average 2.3-3.2, then 01:53 at 1.0-1.7):

| CPU seconds | run | rerun | rerun / run | resume after gen. 11: index / log alone | run x 60/300 |
|---|---|---|---|---|---|
| before (a8a2767) | 4.16 | 1.65 | 0.396 | - / 2.05 | 0.83 |
| after | 3.89 | 0.37 | **0.096** | 1.03 / 1.34 | 0.78 |
| before (a8a2767) | 4.54 | 1.67 | 0.368 | - / 2.23 | 0.91 |
| after | 3.73 | 0.42 | **0.114** | 1.11 / 1.38 | 0.75 |

(Single runs a few minutes earlier, load 2.8-3.5: before run 6.2-7.3 s, rerun 2.05-2.07 s;
after run 3.5-5.0 s, rerun 0.39-0.41 s, resume with its index 1.03-1.06 s: the run's own CPU
moves by a second from run to run on this machine, the rerun's by a few hundredths.)

Where a rerun's time goes. Before (cProfile of ``socialsim run`` on the finished directory, 2.6
s under the profiler): parsing the 72 MB log with orjson 1.28 s, the records' schema checks
0.55 s (``record_checks._message`` on 225,300 messages), imports and interpreter start about
0.4 s, the 15 generations' populations 0.07 s, the config 0.08 s. After (0.37-0.42 s): the imports
about 0.2 s (``python -c "import socialsim.cli, socialsim.results"``: numpy and gymnasium,
which ``import socialsim`` registers its envs with), reading the index 0.05 s of which the
log's SHA-256 0.038 s (blake2b took 0.050 s), the populations and the config about 0.1 s; no
line of the log parsed. litellm is not imported on this path (``-X importtime``). A resume
costs what is left to play plus that read: the lines logged after the index are parsed and
checked (the "log alone" column: the 58 MB before the cut read whole, as a log copied without
its index is). The run got cheaper too: it read back each generation's lines with the
standard ``json`` module to breed the next, keeping them whole; it now uses orjson and keeps
only each record's head.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


def cpu_of(args: list[str]) -> float:
    """User + system CPU seconds of one child process running ``args``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        args,
        check=True,
        env=env,
        cwd=Path(args[-1]).parent,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # in the results' folder: `-m` puts the working directory first on the path
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def run_args(experiment: str, out: Path) -> list[str]:
    return [sys.executable, "-m", "socialsim.cli", "run", experiment, "--out", str(out)]


def cut_after(finished: Path, to: Path, generation: int, index: bool) -> int:
    """``to``: ``finished`` as a run killed after ``generation`` leaves it (with the index of
    its lines, if this version writes one and ``index``); the number of lines kept."""
    to.mkdir()
    shutil.copy(finished / "manifest.json", to / "manifest.json")
    lines = (finished / "episodes.jsonl").read_bytes().splitlines(keepends=True)
    kept = [line for line in lines if json.loads(line)["cell"]["generation"] <= generation]
    (to / "episodes.jsonl").write_bytes(b"".join(kept))
    if index:
        from socialsim import log_index
        from socialsim.society import experiment

        scan = log_index.read(to, experiment.head, experiment.HEAD)
        log_index.write(to, scan, experiment.HEAD)
    return len(kept)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--experiment", default="align_evolution")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--resume-after", type=int, default=11)
    options = parser.parse_args()
    import socialsim

    indexed = (Path(socialsim.__file__).parent / "log_index.py").exists()  # else a version before
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        cpu_of(run_args(options.experiment, root / "warm"))  # bytecode caches, untimed
        runs = [
            cpu_of(run_args(options.experiment, root / f"run-{t}")) for t in range(options.trials)
        ]
        run, finished = min(runs), root / "run-0"
        total = len((finished / "episodes.jsonl").read_bytes().splitlines())
        reruns = [cpu_of(run_args(options.experiment, finished)) for _ in range(options.trials)]
        rerun = min(reruns)
        print(f"{options.experiment}: {total} episodes; CPU seconds (user + system)")
        print(f"run                {run:6.2f}  (trials {', '.join(f'{t:.2f}' for t in runs)})")
        print(f"rerun              {rerun:6.2f}  (trials {', '.join(f'{t:.2f}' for t in reruns)})")
        print(f"rerun / run        {rerun / run:6.3f}")
        g = options.resume_after
        for name, index in (("with its index", True), ("log alone", False)):
            if index and not indexed:
                continue
            times = []
            for trial in range(options.trials):
                cut = root / f"cut-{index}-{trial}"
                kept = cut_after(finished, cut, g, index)
                times.append(cpu_of(run_args(options.experiment, cut)))
            left = run * (total - kept) / total
            print(
                f"resume after generation {g}, {name}: {min(times):.2f} "
                f"(trials {', '.join(f'{t:.2f}' for t in times)}); "
                f"{total - kept} of {total} episodes left: {left:.2f} of the run"
            )


if __name__ == "__main__":
    main()
