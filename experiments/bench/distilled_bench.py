"""What a distilled strategy costs the numpy society, beside the scripted norm it stands for.

    python experiments/bench/distilled_bench.py [--agents 1000000] [--rounds 100] [--repeats 3]

Three societies of ``--agents`` agents, half defectors, one replicate, one process
(``parallel=False``), played ``--rounds`` rounds each, alternately, ``--repeats`` times (the
fastest of each is shown, in CPU time per agent-round):

* ``scripted``: stern judges (the pair tables, no draws);
* ``distilled (exact)``: stern judging's tables as a distilled strategy, which plays the same
  rounds (a check below) but draws for every agent each round (:mod:`socialsim.society.decide`);
* ``distilled (mixed)``: a strategy that chooses by chance in every cell.

The distilled societies also compute their agents' seeds once per generation (the env seats'
seeds, SeedSequence on arrays): printed apart, per agent.

Measured (2026-12-07, this 2-core machine, numba installed, ``--agents 1000000 --rounds 100``),
at load average 0.8 (``--repeats 2``) and at 3.6 from other work (``--repeats 3``):

    scripted            : 11.2 ns per agent-round            18.6 ns
    distilled (exact)   : 16.0 ns per agent-round  (1.44x)   20.8 ns (1.12x)
    distilled (mixed)   : 15.3 ns per agent-round  (1.37x)   22.4 ns (1.20x)
    agent seeds         : 63 ns per agent per generation     51 ns

The goal is at most 1.5x. Before (2026-12-06, the same command at load 0.8): scripted 19.7 ns,
distilled 46.8 ns (2.37x) and 44.7 ns (2.27x). What changed: (1) a distilled agent's draws are
made in a pass over the agents in their order (:mod:`socialsim.society.decide`, about 0.6 ms a
round for 10^6 agents, one pass per distilled strategy so that every threshold is a constant
and the loop is vector code; with the thresholds read from a table the pass took 4.8 ms) and
its decisions kept in a byte of its own state, so a pair reads no seeds: the round reads as
many random words as one without draws (it read five, the seeds of both agents beside their
states and the recipient's helps); (2) both rounds read a chunk of 256 pairs' states and helps
received before playing it, which keeps many random reads in flight: the scripted round's
kernel went from about 16 ms to about 3 ms at its fastest (hence the scripted figure above,
19.7 -> 11.2 ns), the distilled round's to about 4.6 ms. What is left of the difference: the
decide pass, the rules' two reads of small tables and larger effect tables (6 x 4,096 keys).
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
