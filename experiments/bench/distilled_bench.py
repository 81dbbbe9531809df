"""What a distilled strategy costs the numpy society, beside the scripted norm it stands for.

    python experiments/bench/distilled_bench.py [--agents 1000000] [--rounds 100] [--repeats 3]

Three societies of ``--agents`` agents, half defectors, one replicate, one process
(``parallel=False``), played ``--rounds`` rounds each, alternately, ``--repeats`` times (the
fastest of each is shown, in CPU time per agent-round):

* ``scripted``: stern judges (the pair tables, no draws);
* ``distilled (exact)``: stern judging's tables as a distilled strategy, which plays the same
  rounds (a check below) but draws twice per pair (:mod:`socialsim.society.distilled`);
* ``distilled (mixed)``: a strategy that chooses by chance in every cell.

The distilled societies also compute their agents' seeds once per generation (the env seats'
seeds, SeedSequence on arrays): printed apart, per agent.

Measured (2026-12-06, this 2-core machine at load average 8-10 from other work, numba
installed, ``--agents 1000000 --rounds 100 --repeats 2``):

    agents 1,000,000, rounds 100, compiled True
    scripted            : 29.5 ns per agent-round
    distilled (exact)   : 57.4 ns per agent-round  (1.94x the scripted; the same rounds: True)
    distilled (mixed)   : 53.6 ns per agent-round  (1.82x)
    agent seeds         : 61 ns per agent per generation

The goal of at most 1.5x is not met. A round's two draws per pair (a splitmix64 finaliser of
the agent's seed each) and three more table reads leave fewer of the state's random reads in
flight: the kernel alone took 36 ms a round against the scripted 16 ms (after reading the pairs
a chunk at a time, which took it from 50 ms). Tried without gain: the seeds stored beside the
states (56.2 against 56.3 ns per agent-round), the draws made for every agent in a pass of
their own and packed two to a word (33 ms for the kernel).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from socialsim.distill.strategy import Strategy
from socialsim.society.kernels import compiled
from socialsim.society.vectorised import ReplicatedSociety


def stern_judging() -> Strategy:
    strategy = Strategy("stern", smoothing=0.0)
    strategy.donate[:, 0, 1] = strategy.donate[:, 1, 0] = 5
    strategy.gossip[1, 0, 0] = strategy.gossip[0, 1, 0] = 5
    strategy.gossip[1, 1, 2] = strategy.gossip[0, 0, 2] = 5
    return strategy


def mixed() -> Strategy:
    strategy = Strategy("mixed")
    strategy.donate[:] = [[[2, 9], [6, 4]], [[7, 3], [9, 1]]]
    strategy.gossip[:] = [[[1, 2, 8], [5, 1, 3]], [[9, 1, 1], [3, 3, 4]]]
    return strategy


def society(kind: str, agents: int) -> ReplicatedSociety:
    half = agents // 2
    if kind == "scripted":
        return ReplicatedSociety({"stern_judging": half, "always_defect": half}, seeds=[1])
    name, strategy = ("stern", stern_judging()) if kind == "exact" else ("mixed", mixed())
    return ReplicatedSociety(
        {name: half, "always_defect": half}, seeds=[1], distilled={name: strategy}
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    society("exact", 1000).play(2)  # compile before timing
    best = {kind: float("inf") for kind in ("scripted", "exact", "mixed")}
    played = {}
    seeds = float("inf")
    for _ in range(args.repeats):
        for kind in best:
            start = time.process_time()
            run = society(kind, args.agents)
            built = time.process_time()
            run.play(args.rounds, parallel=False)
            best[kind] = min(best[kind], time.process_time() - built)
            if kind == "exact":
                seeds = min(seeds, built - start)
            played[kind] = run.helps_given.copy()
    per = {k: v / (args.agents * args.rounds) * 1e9 for k, v in best.items()}
    same = bool(np.array_equal(played["scripted"], played["exact"]))
    print(f"agents {args.agents:,}, rounds {args.rounds}, compiled {compiled() is not None}")
    print(f"scripted            : {per['scripted']:.1f} ns per agent-round")
    print(
        f"distilled (exact)   : {per['exact']:.1f} ns per agent-round  "
        f"({per['exact'] / per['scripted']:.2f}x the scripted; the same rounds: {same})"
    )
    print(
        f"distilled (mixed)   : {per['mixed']:.1f} ns per agent-round  "
        f"({per['mixed'] / per['scripted']:.2f}x)"
    )
    print(f"agent seeds         : {seeds / args.agents * 1e9:.0f} ns per agent per generation")


if __name__ == "__main__":
    main()
