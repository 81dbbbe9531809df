"""Benchmark of the society with evolution: generations of the numpy engine
(:class:`~socialsim.society.generations.EvolvingSociety`) against the Mesa model doing the same
work, and the scale goal of issue 28: 10^6 agents for 10^3 rounds in at most 10 s.

The work: a population of 30% always cooperate, 30% always defect and 40% stern judges,
``gossip_reach`` 0.9, plays generations of 50 rounds; between generations, selection (the top
half survives, each survivor has one child, mutation 0.01 among the three strategies). Mesa
plays the same rules with one ``SocietyModel`` a generation, seeded as the numpy replicate is,
its agents given the generation's strategies, and the same update between generations: before
timing, the script checks that Mesa and numpy give the same generations (statistics equal value
for value). Rows:

* per size (10^3 and 10^4 agents), agent-rounds a second of Mesa (one population), of numpy on
  one population, and of numpy on 100 (10^3) or 10 (10^4) replicates in one array program,
  with the ratios to Mesa;
* the scale goal: 10^6 agents for 10^3 rounds (20 generations), as one population and as 20
  replicates of 5 x 10^4, with the wall time and the CPU time of all threads (and forks).

Trials are interleaved and the best is kept (noise on a shared machine only slows a run down).
The script prints; it asserts nothing.

    python experiments/bench/evolution_bench.py            # all rows (minutes on a busy machine)
    python experiments/bench/evolution_bench.py --quick    # 100 rounds at scale, one trial
    python experiments/bench/evolution_bench.py --rounds 300   # fewer rounds at scale
    python experiments/bench/evolution_bench.py --no-sizes --forms one   # 10^6 x 10^3, one population

Which path ran is printed: the society's kernels compiled by numba (the ``fast`` extra) or
numpy (no numba, or ``SOCIALSIM_NUMBA=0``); both give the same generations. Besides the rows,
the scale run prints each part of a round of 10^6 agents timed alone (wall and CPU).

**Printed on 2026-12-05, 08:41-08:47 UTC, on a quiet machine** (load average 0.4 to 0.9, the
only other work an idle editor), one trial each:

``--no-sizes --forms one`` (10^6 agents, 10^3 rounds, 20 generations of 50, one population):

| 10^6 agents, 10^3 rounds, one population | load | wall | CPU (both threads) | agent-rounds/s |
|---|---|---|---|---|
| compiled (numba 0.68), three runs | 0.4 to 1.0 | **8.7 s**, 9.0 s, 9.1 s | 15.3-15.7 s | 110-114 M |
| numpy (``SOCIALSIM_NUMBA=0``) | 0.7 to 0.9 | 16.8 s | 28.0 s | 59 M |

``--rounds 100 --forms batched`` (the sizes Mesa can play; 2 generations at scale):

| agents | Mesa | numpy, one population | batched (replicates) | numpy / Mesa | batched / Mesa |
|---|---|---|---|---|---|
| 10^3 | 0.874 M/s | 9.2 M/s | 99.0 M/s (100) | 11x | 113x |
| 10^4 | 0.511 M/s | 55.1 M/s | 159.4 M/s (10) | 108x | 312x |

(The same rows from the code before the kernels, d416f47, run just after: numpy 8.0 and
46.6 M/s, batched 100.0 and 119.7 M/s; with ``SOCIALSIM_NUMBA=0`` now: 7.1 and 51.4 M/s, 98.1
and 120.0 M/s. One population of 10^3 is bound by the calls a round makes, not by the work.)
20 x 50,000 at scale: 0.7 s for 100 rounds (145 M agent-rounds/s).

Each part alone, 10^6 agents, printed by the runs above (CPU time; wall the same alone):

| part | compiled | numpy |
|---|---|---|
| draw: the pairs (``shuffle`` of 10^6), a round | 7.2 ms | 10.3 ms |
| draw: the reach (5 x 10^5 uniforms), a round | 0.9 ms | 0.9 ms |
| play, a round | 5.1-5.6 ms | 13.3 ms |
| update (selection), a generation | 40-49 ms | 59 ms |

(Earlier the same day, with five other engineers' test runs on the machine: compiled 32.9 s at
load 4 to 5, numpy 46.2 s; at load 6 to 8 the compiled run took 84 s. On a loaded machine
drawing ahead does not help: every hand-over between the threads waits for a core.)

How one population is played. A round is drawn, then played. The draw is the pairing
permutation, which must stay numpy's (the donation env's random schedule, which the society
follows draw for draw so that both give the same generations): the compiled ``shuffle``
reproduces ``Generator.shuffle`` from the bit generator's raw outputs, and takes 7.4-7.6 ms of
10^6 where numpy's takes 10-12 ms (int32 orders: half the bytes to move; the rejection draws
and the swaps in one loop, as a two-pass version was no faster). The play is one compiled pass
over the pairs (the key, the donation, the tone), 5.2-5.3 ms against about twenty array passes in
12-20 ms. A thread draws the next round's pairs while the main thread draws this round's reach,
plays it and puts its buffer back in order, so the two threads carry about 7.4 and 6.6 ms a
round. Selection is one compiled pass after numpy's partition, with the permutation compiled
too (53-58 ms a generation with its mutation and the draws, 20 a run).

**Verdict on the 10 s goal for one population: met on a quiet machine, with little margin**
(8.7-9.1 s; the numpy path 16.8 s). The shuffle is the floor of a round (the permutation cannot
be drawn by two threads: each shuffle starts where the last left the Generator), so more margin
needs the updates overlapped with the next generation's first draws (its Generators do not
depend on the update: about 1 s of the 9), and, for the serial path, an interleaved [state,
helps received] array (measured 10-15% faster a round; not done, since the play is not the
limit when drawing ahead).
"""

from __future__ import annotations

import argparse
import os
import time
from collections import Counter

import numpy as np
import pandas as pd
from socialsim.envs.gossip.norms import NORMS

from socialsim.society.evolution import Evolution
from socialsim.society.generations import (
    EvolvingSociety,
    generation_seed,
    generation_statistics,
    shown_strategies,
    statistics_table,
    update_generator,
)
from socialsim.society.kernels import compiled
from socialsim.society.mesa_model import SocietyModel
from socialsim.society.population import STRATEGIES, strategy_names

ROUNDS = 50  # a generation
REACH = 0.9


def population(n_agents: int) -> dict[str, int]:
    cooperators = defectors = n_agents * 3 // 10
    return {
        "always_cooperate": cooperators,
        "always_defect": defectors,
        "stern_judging": n_agents - cooperators - defectors,
    }


def evolution_of(population_: dict[str, int]) -> Evolution:
    return Evolution("selection", survive=0.5, mutation=0.01, pool=tuple(population_))


def mesa_generations(population_: dict[str, int], seed: int, generations: int) -> pd.DataFrame:
    """The same generations played by the Mesa model: one ``SocietyModel`` a generation."""
    evolution = evolution_of(population_)
    strategies = np.asarray([STRATEGIES.index(s) for s in strategy_names(population_)])
    shown = shown_strategies(population_, evolution)
    rows, payoff = [], None
    for generation in range(generations):
        if payoff is not None:
            update = update_generator(generation_seed(seed, generation - 1))
            strategies = evolution.update(strategies, payoff, update).strategies
        names = [STRATEGIES[code] for code in strategies]
        counts = Counter(names)
        model = SocietyModel(
            {s: counts[s] for s in STRATEGIES if counts[s]},
            seed=generation_seed(seed, generation),
            gossip_reach=REACH,
        )
        for agent, name in zip(model.members, names, strict=True):  # the generation's own order
            agent.strategy, agent.norm = name, name if name in NORMS else None
            agent.gossip_norm = agent.norm or "image_scoring"
        for _ in range(ROUNDS):
            model.step()
        given = np.array([agent.helps_given for agent in model.members])
        received = np.array([agent.helps_received for agent in model.members])
        row = generation_statistics(strategies, given, received, ROUNDS, 1.0, 5.0, shown)
        rows.append({name: np.atleast_1d(value) for name, value in row.items()})
        payoff = np.array([agent.payoff for agent in model.members])
    return statistics_table(rows, 1)


def numpy_generations(
    population_: dict[str, int], seeds: range, generations: int, rounds: int = ROUNDS
) -> EvolvingSociety:
    """An evolving society played ``generations`` generations (``run``: split in two
    processes for the whole run when there are replicates and work enough)."""
    run = EvolvingSociety(
        population_,
        seeds=seeds,
        rounds=rounds,
        evolution=evolution_of(population_),
        gossip_reach=REACH,
    )
    run.run(generations)
    return run


def check_agreement() -> None:
    small = population(40)
    for seed in (1, 2):
        mesa = mesa_generations(small, seed, 4)
        run = numpy_generations(small, range(seed, seed + 1), 4)
        pd.testing.assert_frame_equal(mesa, run.statistics(), check_exact=True)
    print("Mesa and numpy give the same generations (40 agents, 4 generations, seeds 1 and 2)")


def timed(play) -> float:
    started = time.perf_counter()
    play()
    return time.perf_counter() - started


def size_rows(trials: int) -> None:
    # size -> (Mesa generations, numpy generations, replicates, batched generations)
    sizes = {1_000: (2, 20, 100, 4), 10_000: (1, 20, 10, 8)}
    print(
        "\n| agents | Mesa | numpy, one population | batched (replicates) | numpy / Mesa |"
        " batched / Mesa |\n|---|---|---|---|---|---|"
    )
    for n, (mesa_g, numpy_g, replicates, batched_g) in sizes.items():
        pop = population(n)
        best = {"mesa": np.inf, "numpy": np.inf, "batched": np.inf}
        plays = {
            "mesa": lambda pop=pop, g=mesa_g: mesa_generations(pop, 0, g),
            "numpy": lambda pop=pop, g=numpy_g: numpy_generations(pop, range(1), g),
            "batched": lambda pop=pop, r=replicates, g=batched_g: numpy_generations(
                pop, range(r), g
            ),
        }
        for _ in range(trials):  # interleaved
            for name, play in plays.items():
                best[name] = min(best[name], timed(play))
        rate = {
            "mesa": n * ROUNDS * mesa_g / best["mesa"],
            "numpy": n * ROUNDS * numpy_g / best["numpy"],
            "batched": replicates * n * ROUNDS * batched_g / best["batched"],
        }
        print(
            f"| 10^{len(str(n)) - 1} | {rate['mesa'] / 1e6:.3f} M/s | {rate['numpy'] / 1e6:.1f} M/s"
            f" | {rate['batched'] / 1e6:.1f} M/s ({replicates}) | {rate['numpy'] / rate['mesa']:.0f}x"
            f" | {rate['batched'] / rate['mesa']:.0f}x |"
        )


FORMS = {"one": (1, 1_000_000), "batched": (20, 50_000)}


def cpu_seconds() -> float:
    """CPU time of this process's threads and its ended children (the split's fork)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def scale_rows(rounds: int, trials: int, forms: list[str]) -> None:
    generations = rounds // ROUNDS
    print(
        f"\n10^6 agents, {rounds} rounds ({generations} generations of {ROUNDS}); goal for 10^3"
        " rounds: <= 10 s\n\n| form | wall | CPU (all threads) | agent-rounds/s |\n|---|---|---|---|"
    )
    for replicates, n in (FORMS[form] for form in forms):
        best = (np.inf, np.inf)
        for _ in range(trials):
            cpu = cpu_seconds()
            wall = timed(
                lambda r=replicates, n=n: numpy_generations(population(n), range(r), generations)
            )
            best = min(best, (wall, cpu_seconds() - cpu))
        form = "one population" if replicates == 1 else f"{replicates} x {n:,}"
        rate = replicates * n * rounds / best[0] / 1e6
        print(f"| {form} | {best[0]:.1f} s | {best[1]:.1f} s | {rate:.0f} M |")
    component_rows()


def component_rows(trials: int = 3, rounds: int = 20) -> None:
    """Each part of a round of one population of 10^6, and an update, timed alone (best of
    ``trials``; wall and this process's CPU time)."""
    run = numpy_generations(population(1_000_000), range(1), 1)
    evolution, society = run.evolution, run.society
    parts = {
        "draw: the pairs (shuffle), a round": lambda: society._draw_pairs(0),
        "draw: the reach, a round": lambda: society._draw_reach(0),
        "play, a round": lambda: society._play(0),
    }
    print("\n| part (10^6 agents, timed alone) | wall | CPU |\n|---|---|---|")
    for name, part in parts.items():
        best = (np.inf, np.inf)
        for _ in range(trials):
            started, cpu = time.perf_counter(), time.process_time()
            for _ in range(rounds):
                part()
            best = min(best, (time.perf_counter() - started, time.process_time() - cpu))
        print(f"| {name} | {best[0] / rounds * 1e3:.1f} ms | {best[1] / rounds * 1e3:.1f} ms |")
    best = (np.inf, np.inf)
    for _ in range(trials):
        started, cpu = time.perf_counter(), time.process_time()
        evolution.update(society.strategy[0], society.payoff[0], np.random.default_rng(0))
        best = min(best, (time.perf_counter() - started, time.process_time() - cpu))
    print(f"| update (selection), a generation | {best[0] * 1e3:.0f} ms | {best[1] * 1e3:.0f} ms |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100 rounds at scale, one trial")
    parser.add_argument("--rounds", type=int, default=1000, help="rounds at scale (default 1000)")
    parser.add_argument("--forms", default="one,batched", help="at scale: one, batched or both")
    parser.add_argument("--no-sizes", action="store_true", help="only the scale rows")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}, {len(os.sched_getaffinity(0))} CPUs")
    kernels = compiled()
    print(f"society kernels: {'compiled by numba' if kernels else 'numpy (no numba)'}")
    numpy_generations(population(1_000), range(1), 2)  # loads (or compiles) the kernels
    trials = 1 if args.quick else 2
    if not args.no_sizes:
        check_agreement()
        size_rows(trials)
    scale_rows(100 if args.quick else args.rounds, 1, args.forms.split(","))
    print(f"\nload average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
