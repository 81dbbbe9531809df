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

Measured (2026-12-07, this 2-core machine at load average 1.0-1.4, numba installed,
``--agents 1000000 --rounds 100 --repeats 2``), this code and the one before it (a8a2767)
alternately, five runs of each (ns per agent-round; the ratio is to the scripted society of the
same run):

    before: scripted 11.1-23.6;  exact 33.5-53.0 (2.02x, 2.25x);  mixed 45.4, 51.2 (2.73x, 2.17x)
    after:  scripted 11.2-17.5;  exact 14.1-18.9 (1.07x-1.26x);   mixed 13.5-19.2 (1.00x-1.24x)
    agent seeds: 58-77 ns per agent per generation (unchanged)

The goal is at most 1.5x; the worst ratio of this code seen on any run was 1.44x (exact) and
1.37x (mixed), earlier the same day. What changed: a distilled agent's draws are made in a pass
over the agents in their order (:mod:`socialsim.society.decide`, about 0.6 ms a round for 10^6
agents: one pass per distilled strategy, so that every threshold is a constant and the loop is
vector code; with the thresholds read from a table the pass took 4.8 ms) and its decisions kept
in a byte of its own state, so a pair reads no seeds: a round reads as many random words as one
without draws (it read five: both agents' seeds beside their states and the recipient's helps).
Both rounds now read a chunk of 256 pairs' states and helps received before playing it; that
made no difference to the scripted round that these runs could see (it did to the distilled
one's: 7.3 against 4.2 ms for its kernel, timed alone). What is left of the difference: the
decide pass, the rules' two reads of small tables and the larger effect tables (6 x 4,096 keys).
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
