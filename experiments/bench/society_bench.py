"""Benchmark of the gossip society: the numpy engine against the Mesa model, per interaction.

Plays the same model (``socialsim.society.mesa_model``) with both engines at 10^3, 10^4 and
10^5 agents and prints, per size, the interactions (donor-recipient pairs) played per second
by the numpy engine on one population (``VectorSociety``), by the numpy engine on many
replicates of that population in one array program (``ReplicatedSociety``, where it applies:
100 replicates of 10^3 agents, 10 of 10^4), and by the Mesa model, with the rounds each
played and the ratios. Mesa is slow at the large sizes, so it plays few rounds: what is
compared is the cost per interaction. Trials are interleaved (Mesa, numpy, batched, then
again) and the best of each is kept: noise on a shared machine only slows a run down.
Before timing, the script checks that the engines agree (Mesa and numpy on the same seed;
replicate r of a batch and the single run seeded r). Goals from issue 12: numpy >= 100x Mesa
per interaction at every size; from issue 3: 10^5 agents x 10^3 rounds in <= 60 s (the
10^5 row's numpy column, ``--rounds-1e5 1000``). The script prints; it asserts nothing.

    python experiments/bench/society_bench.py              # all sizes, 3 interleaved trials
    python experiments/bench/society_bench.py --quick      # fewer rounds, one trial
    python experiments/bench/society_bench.py --parallel off   # the numpy engine on one core
    python experiments/bench/society_bench.py --profile    # where a round of 100 x 10^3 goes

``run(parallel=None)`` splits a batch's replicates between this process and a forked one from
``PARALLEL_MIN_WORK`` agent-rounds (replicates x agents x rounds), and has a thread draw a lone
population's next round from ``DRAW_AHEAD_MIN_AGENTS`` agents; ``--parallel on/off`` forces
either. ``--profile`` prints the draws against the play of a batched round of 10^3 agents, each
phase alone, then 100 rounds as ``run`` plays them: all replicates together, in blocks of
agents, and split. The Mesa model reads reputations in O(1) as the numpy engine
does, so the ratio is the cost of playing an interaction as Python objects against arrays, not
an algorithmic gap. Each ratio is printed twice: by wall clock, and by CPU seconds (every
thread of the process and its forks), which a busy machine distorts less and which count the
draw thread and the fork: the CPU ratio of a split batch is below its wall ratio.

**Fourth pass (issue 12), 2026-12-02: blocks that stay in cache, and the replicates split
between two processes.** Two findings, both measured with ``--profile``. First, a round's
draws and play each run about twice as fast alone (20 draws in a row, then 20 plays: 15.7 and
7.4 us per replicate) as they do alternating, as a run plays them (about 27 and 18 us): the
draws' buffers and the play's (about 60 bytes an agent, 6 MB for 100 x 10^3 agents) evict
each other from the core's 1 MB cache. So ``run`` now plays a batch in blocks of
``BLOCK_AGENTS`` (25,000) agents, each block all its rounds before the next (the replicates are
independent): best of 8, 100 rounds of 100 x 10^3 agents, 30-32 us per replicate and round
together, 24-25 us in blocks; no change at 10 x 10^4 (242 against 239 us), where a block is
one or two replicates anyway. Second, drawing ahead in another process does not pay: a
prototype that forked a draw process writing each round's order into shared memory had the
play read it at 15 us a replicate instead of 7 (the other core's writes, read line by line,
about 100 ns a line on this machine) for no net gain (23-24 us against 24-27). Playing half of
the replicates in a fork needs no exchange until the end (its state, round counts and
Generators' states, pickled once): 17-21 us at 100 x 10^3, 148-153 us at 10 x 10^4 (the
fork and hand-back about 10 ms a run). Same records: every replicate is still drawn from its
own Generator in order (tests compare blocks, splits and single steps value for value).

The default command, this engine and the one before it (the thread prefetch, 7015d88)
alternately, twice each, quiet machine (load under 1; Mesa's own rate moved from 135 k to 227 k
interactions a second between runs of the same code):

| agents | numpy, one population, before / after | batched, before / after |
|---|---|---|
| 10^3 | 37x, 47x / 39x, 52x | 58x, 79x / **125x, 146x** |
| 10^4 | 181x, 210x / 152x, 147x | 196x, 221x / 207x, 204x |
| 10^5 | 312x, 262x / 276x, 286x | - |

(The 10^4 and 10^5 single populations draw ahead in a thread, before and after; the swings
between runs of the same code are the machine's.) Later, a third pair and a run alone: batched
92x and 127x after (Mesa at 224 k and 167 k a second) against 89x before: this engine's four
runs of the batched 10^3 row are 125x, 146x, 92x and 127x (the split without the blocks: 120x,
109x, 102x, 100x), and they move with Mesa's own rate, from 135 k to 235 k. The split's fixed cost (fork, hand-back, join: about 35 ms)
weighs on this 0.24 s row; 1,000 rounds of the same 100 x 10^3 batch, twice: 19.8 and 16.3 us a
replicate-round split (35-38 in one process), 123x and 182x Mesa measured beside it. The goal, >= 100x Mesa at every size, is met
at 10^3 by the batched form, the common experiment; a lone population of 10^3 agents stays
near 40x, bound by the Python of ~25 array calls a round (about 70 us, a round of 10^3 agents
costs Mesa about 2 ms).

Where a batched round of 100 x 10^3 agents goes, by instruction count per replicate and round
(valgrind callgrind, ``PYTHONHASHSEED=0``, rounds 12 minus rounds 2 of a throwaway script that
plays 100 x 10^3 agents, ``run`` for the round and ``_play`` alone for the play; deterministic,
so load does not matter). Mesa: 16.87 M per round of 10^3 agents, so 100x needs <= 168.7 k.

| engine | round | play | by instructions |
|---|---|---|---|
| per-agent counters, six ``take``, three ``add.at`` (before 2026-12-01) | 238.5 k | - | 71x |
| one int32 record per agent, one ``bincount`` of the pairs' bins (main, a26e1a2) | 205.3 k | 83.9 k | 82x |
| one int64 state per agent, record and helps given (this engine) | 182.9 k | 61.6 k | 92x |

The rest of a round, 121.4 k in both, is the draws (114.6 k: ``shuffle``'s bounded integers and
PCG64 about 99 k, the ``arange`` reset of the order about 8 k, a ``memcpy`` that valgrind
counts per byte, and the Python of 200 calls) and the round's Python. The last change: the
agent's record in the high half of one int64 and its helps given in the low half, so that a
donor's round is one table lookup and one ``add.at``, not two and two; the key built with
unsigned shifts (numpy's SIMD loops) and the slip as ``bitwise_or(where=)``; ``take`` in mode
``"wrap"`` (about 2 instructions an element fewer than ``"clip"``; every index is in range, so
the modes agree). The play now: four ``take`` about 20 k, two ``add.at`` 19 k (8 k of it
numpy's index check), ``bincount`` 7.8 k, the key 8.5 k, the matmul 1.4 k. Fewer instructions
are not as much less time: both engines' ``_play`` and whole rounds timed alternately in one
process (a throwaway script, best of 40, load about 2), 2026-12-02: play 7.31 against 6.96 us
(-5%), round 24.4 against 22.6 us (-8%); again at load 2.2: -5% and -2%; one population of
10^3 agents (a replicate alone): -3%, -3%; the play's gathers and scatters over 50 k pairs
seem bound by memory more than by instructions. ``--sizes 1000 --trials 5`` alternately on
main's engine (a26e1a2) and this one, five times each (wall clock, batched / Mesa, load 1.6 to
1.8, busy: Mesa's own rate swings from 163 k to 265 k interactions per second between runs):
before 94x, 63x, 101x, 75x, 101x; after 88x, 83x, 88x, 86x, 82x; one population 28-39x
before, 36-39x after. So at 10^3 the goal is still not shown: the change is within this machine's
noise, to be re-measured on a quiet one.

The draws are each replicate's ``Generator.shuffle`` of ``arange`` (= ``permutation``) and
``random``, fixed by the exact seeds and unchanged (what a seed produces is unchanged; the
record hashes too). No exact route is cheaper: ``shuffle``'s bounded integers are masked
rejections on 32-bit halves, sequential, so neither ``integers`` with array bounds (another
algorithm, other bits) nor any array expression reproduces them; and no batched scheme is
cheaper either, measured side by side (us per row of 10^3): ``shuffle`` + ``random`` 23-32,
random 64-bit keys with the index in their low bits + ``np.sort`` + ``random`` 24.6,
``argsort`` of float keys 29 alone. So the numpy engine keeps exactly the Mesa model's draws.

Figures, 2026-12-01 19:18-19:27, a very busy machine (load average 16 to 20 on 2 cores: the
wall-clock ratios swing by 3x between runs and mean little; the CPU ratios are given), the
default command, this script, run alternately on main's engine (before, fc84ed4) and on
this one (after), two runs each, with and without ``--prefetch off``. By CPU, numpy / Mesa
(one population, batched):

| agents | before | after | before, prefetch off | after, prefetch off |
|---|---|---|---|---|
| 10^3 | 32-34x, 70-71x | 34-45x, 85-105x | 37-38x, 64-80x | 28-38x, 61-79x |
| 10^4 | 123-132x, 107-136x | 150-174x, 135-158x | 110-123x, 103-117x | 152-161x, 133-151x |
| 10^5 | 174-230x | 171-188x | 134-147x | 181-199x |

Earlier the same evening at load 15 (wall clock, the script before its CPU column, ``--sizes
1000``, batched / Mesa): before 61x and 73x (auto), 80x and 67x (off); after 67x and 122x
(auto), 94x and 69x (off). So: the play is about a third cheaper and the round about a sixth
(by instructions); the goal still holds from 10^4 and is not shown at 10^3 on this machine:
the draws alone are 56% of a round's instructions and 60% of its time. A second free core
takes them (the draw thread) and is what 10^3 needs; to be re-measured on a quiet machine,
``--prefetch on`` against ``--prefetch off``.

Before this engine's record (main at fc84ed4), 2026-12-01, 2 cores shared with other jobs
(load average 7 to 10), interactions per second, best of 3 interleaved trials:

| agents | numpy, one population | batched (replicates x rounds) | Mesa | numpy / Mesa | batched / Mesa |
|---|---|---|---|---|---|
| 10^3 | 2.7-3.0 M (3,000) | 4.9-5.0 M (100 x 100) | 75-78 k (100) | 36-39x | 63-67x |
| 10^4 | 5.3-5.9 M (500) | 3.7-5.0 M (10 x 100) | 30-53 k (10) | 110-180x | 93-124x |
| 10^5 | 4.2-5.2 M (100) | - | 27-28 k (1) | 151-189x | - |

``--prefetch off`` then: numpy 40-42x, 125-180x, 185-228x; batched 76-77x at 10^3, 109-169x at
10^4. ``--sizes 100000 --rounds-1e5 1000 --trials 1``: 10^5 agents x 10^3 rounds in 10.9 s
(issue 3's goal: <= 60 s), 193x Mesa. On a quiet machine (load average under 1), the default
command: 10^3 agents 36x one population, 72x batched (draw thread on); 10^4 135x and 118x;
10^5 255x. Before the batched engine (466534a): 15x, 89-105x and 139-175x.

Quiet machine (load average under 1), 2026-12-01 late evening. ``--sizes 1000 --trials 7
--prefetch on`` and ``off``, the engine before this change (fc84ed4) and after, alternately,
two rounds (batched / Mesa): before 63x, 69x with the thread and 65x, 68x without; after 73x,
75x with the thread and 77x, 90x without. With a free second core the thread does not pay at
100 x 10^3 agents (each replicate's draw calls are too short to overlap), while it does at 10 x
10^4 (``--sizes 10000 100000 --trials 3``, on / off, two rounds each: batched 187x, 174x / 115x,
139x) and at 10^5 (250x, 265x / 233x, 182x); so ``prefetch=None`` now also asks for
``PREFETCH_MIN_POPULATION`` (10^4) agents per population. The default command then, twice:
10^3 37x and 30x one population, **81x and 72x batched**; 10^4 150x, 117x and 168x, 171x
batched; 10^5 240x, 239x. The goal holds from 10^4 and not at 10^3: the exact per-replicate
draws are about 60% of a batched round of 10^3 agents (see ``--profile``).
"""

from __future__ import annotations

import argparse
import math
import os
import time

import pandas as pd

from socialsim.society.mesa_model import SocietyModel
from socialsim.society.vectorised import (
    BLOCK_AGENTS,
    DRAW_AHEAD_MIN_AGENTS,
    PARALLEL_MIN_WORK,
    ReplicatedSociety,
    VectorSociety,
)

# Shares of each strategy in the benchmark population: every code path is exercised.
SHARES = {
    "image_scoring": 0.25,
    "simple_standing": 0.25,
    "stern_judging": 0.25,
    "always_cooperate": 0.10,
    "always_defect": 0.15,
}
ERROR = 0.01  # some execution errors, so that the slip draw is timed too
# size -> (numpy rounds, batched replicates, batched rounds, Mesa rounds)
# Mesa plays enough rounds that its timings last about as long as the numpy ones.
PLAN = {
    1_000: (3_000, 100, 100, 100),
    10_000: (500, 10, 100, 10),
    100_000: (100, 0, 0, 1),
}
QUICK = {1_000: (500, 20, 50, 5), 10_000: (50, 4, 20, 1), 100_000: (10, 0, 0, 1)}


def population(n_agents: int) -> dict[str, int]:
    counts = {strategy: int(share * n_agents) for strategy, share in SHARES.items()}
    counts["image_scoring"] += n_agents - sum(counts.values())
    return counts


def cpu_seconds() -> float:
    """CPU seconds of this process and of its children that have ended (a batch's fork)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def clocked(play) -> tuple[float, float]:
    """Wall and CPU seconds (every thread of the process and its forks) of ``play()``."""
    wall, cpu = time.perf_counter(), cpu_seconds()
    play()
    return time.perf_counter() - wall, cpu_seconds() - cpu


def time_numpy(n_agents: int, rounds: int, seed: int, parallel: bool | None):
    """Seconds (wall, CPU) for ``rounds`` rounds of one population, the table included."""
    society = VectorSociety(population(n_agents), error=ERROR, seed=seed)
    return clocked(lambda: society.run(rounds, parallel=parallel))


def time_batched(n_agents: int, replicates: int, rounds: int, seed: int, parallel: bool | None):
    """Seconds (wall, CPU) for ``rounds`` rounds of ``replicates`` replicates, the table too."""
    seeds = range(seed, seed + replicates)
    batch = ReplicatedSociety(population(n_agents), error=ERROR, seeds=seeds)
    return clocked(lambda: batch.run(rounds, parallel=parallel))


def time_mesa(n_agents: int, rounds: int, seed: int):
    """Seconds (wall, CPU) for ``rounds`` steps of the Mesa model (its construction not
    counted)."""
    model = SocietyModel(population(n_agents), error=ERROR, seed=seed)
    return clocked(lambda: [model.step() for _ in range(rounds)])


def profile_round(n_agents: int, replicates: int, trials: int) -> None:
    """Print where a batched round goes, per replicate and round, best of ``trials``: its
    draws (every replicate's Generator) and its play (the array program) each timed alone over
    20 rounds; then 100 rounds as ``run`` plays them, all replicates together, in blocks of
    agents, and split between two processes."""
    batch = ReplicatedSociety(population(n_agents), error=ERROR, seeds=range(replicates))
    batch.run(2, parallel=False)
    best = {"draws": float("inf"), "play": float("inf")}
    for _ in range(trials):
        start = time.perf_counter()
        for _ in range(20):
            batch._draw()
        middle = time.perf_counter()
        for _ in range(20):
            batch._play()
        best["draws"] = min(best["draws"], middle - start)
        best["play"] = min(best["play"], time.perf_counter() - middle)
    per = {part: seconds / 20 / replicates * 1e6 for part, seconds in best.items()}
    print(
        f"a round of {replicates} x {n_agents:,} agents, per replicate: draws {per['draws']:.1f}"
        f" us, play {per['play']:.1f} us ({per['draws'] / sum(per.values()):.0%} draws), each"
        " phase alone"
    )
    ways = {"together": (replicates * n_agents, False)}
    ways |= {f"blocks of {block:,}": (block, False) for block in (50_000, 25_000, 10_000)}
    ways |= {f"split, blocks of {BLOCK_AGENTS:,}": (BLOCK_AGENTS, True)}
    rounds, times = 100, dict.fromkeys(ways, float("inf"))
    for _ in range(trials):
        for way, (block, parallel) in ways.items():
            batch = ReplicatedSociety(population(n_agents), error=ERROR, seeds=range(replicates))
            start = time.perf_counter()
            batch.run(rounds, parallel=parallel, block_agents=block)
            times[way] = min(times[way], time.perf_counter() - start)
    print(
        f"{rounds} rounds as run() plays them, per replicate and round: "
        + ", ".join(f"{way} {t / rounds / replicates * 1e6:.1f} us" for way, t in times.items())
    )


def check_agreement(seed: int) -> None:
    n_agents, rounds, seeds = 1_001, 15, [seed, seed + 1, seed + 2]
    model = SocietyModel(population(n_agents), error=ERROR, seed=seed)
    for _ in range(rounds):
        model.step()
    single = VectorSociety(population(n_agents), error=ERROR, seed=seed).run(rounds)
    batch = ReplicatedSociety(population(n_agents), error=ERROR, seeds=seeds).run(rounds)
    others = [VectorSociety(population(n_agents), error=ERROR, seed=s).run(rounds) for s in seeds]
    print(
        f"engines agree on {n_agents:,} agents x {rounds} rounds, error {ERROR}:"
        f" Mesa = numpy {model.statistics().equals(single)};"
        f" batch of {len(seeds)} = single runs"
        f" {all(batch.loc[r].equals(frame) for r, frame in enumerate(others))}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds and one trial")
    parser.add_argument("--sizes", type=int, nargs="+", help="agents per population [all]")
    parser.add_argument("--trials", type=int, help="interleaved trials, best kept [3; quick 1]")
    parser.add_argument("--rounds-1e5", type=int, help="numpy rounds at 10^5 agents [100]")
    parser.add_argument("--parallel", choices=("auto", "on", "off"), default="auto")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--profile", action="store_true", help="draws vs play of a round, then exit"
    )
    args = parser.parse_args(argv)
    plan = dict(QUICK if args.quick else PLAN)
    if args.rounds_1e5:
        plan[100_000] = (args.rounds_1e5, *plan[100_000][1:])
    sizes = args.sizes or list(plan)
    trials = args.trials or (1 if args.quick else 3)
    parallel = {"auto": None, "on": True, "off": False}[args.parallel]

    cpus = len(os.sched_getaffinity(0))
    print(f"gossip society benchmark; cpus available: {cpus}; error {ERROR}; trials {trials}")
    print(
        f"parallel {args.parallel} (auto: a batch split between two processes from"
        f" {PARALLEL_MIN_WORK:,} agent-rounds, a lone population drawing ahead in a thread from"
        f" {DRAW_AHEAD_MIN_AGENTS:,} agents)"
    )
    if args.profile:
        profile_round(1_000, 100, trials)
        return
    check_agreement(args.seed)

    rows = []
    for n_agents in sizes:
        rounds, replicates, batch_rounds, mesa_rounds = plan.get(n_agents, (100, 0, 0, 2))
        half = n_agents // 2
        inf = (float("inf"), float("inf"))
        best = {"numpy": inf, "batched": inf, "mesa": inf}  # (wall, CPU) seconds
        for trial in range(trials):
            seed = args.seed + trial
            timed = {
                "mesa": time_mesa(n_agents, mesa_rounds, seed),
                "numpy": time_numpy(n_agents, rounds, seed, parallel),
            }
            if replicates:
                timed["batched"] = time_batched(n_agents, replicates, batch_rounds, seed, parallel)
            for engine, seconds in timed.items():
                best[engine] = tuple(map(min, best[engine], seconds))
        # interactions per second, by wall and by CPU
        # (a CPU clock ticks in ms: a --quick trial may read 0 s, a rate it cannot measure)
        mesa = [mesa_rounds * half / t if t else math.nan for t in best["mesa"]]
        numpy = [rounds * half / t if t else math.nan for t in best["numpy"]]
        batched = [replicates * batch_rounds * half / t if t else math.nan for t in best["batched"]]
        rows.append(
            {
                "agents": f"{n_agents:,}",
                "numpy int/s": f"{numpy[0]:,.0f}",
                "rounds": f"{rounds:,}",
                "batched int/s": f"{batched[0]:,.0f}" if replicates else "-",
                "replicates x rounds": f"{replicates} x {batch_rounds}" if replicates else "-",
                "mesa int/s": f"{mesa[0]:,.0f}",
                "mesa rounds": mesa_rounds,
                "numpy / mesa": f"{numpy[0] / mesa[0]:,.0f}x",
                "batched / mesa": f"{batched[0] / mesa[0]:,.0f}x" if replicates else "-",
                "by CPU": f"{numpy[1] / mesa[1]:,.0f}x"
                + (f", {batched[1] / mesa[1]:,.0f}x" if replicates else ""),
            }
        )
        print(
            f"{n_agents:>7,} agents: numpy {rounds} rounds in {best['numpy'][0]:.2f} s;"
            f" Mesa {mesa_rounds} rounds in {best['mesa'][0]:.2f} s",
            flush=True,
        )
    print(
        "interactions per second (best of the trials, wall clock); goal numpy / mesa >= 100x;"
        " 'by CPU': the same ratios in CPU seconds (numpy, batched)"
    )
    print(pd.DataFrame(rows).to_string(index=False))


if __name__ == "__main__":
    main()
