"""Benchmark of the gossip society: the numpy engine at scale against the Mesa model.

Plays the same model (``socialsim.society.mesa_model``) with both engines and prints, for
each, the seconds taken and the interactions (donor-recipient pairs) played per second, then
the ratio per interaction. Goals from issue 3: the numpy engine plays 10^5 agents x 10^3 rounds
in <= 60 s on 2 cores, and is >= 100x faster than the Mesa loop per interaction. The script
prints the figures; it asserts nothing.

    python experiments/bench/society_bench.py            # 10^5 x 10^3 numpy, 10^3 x 10^2 Mesa
    python experiments/bench/society_bench.py --quick    # 10^4 x 10^2 numpy, 200 x 20 Mesa

The Mesa model reads reputations in O(1) per read as the numpy engine does, so the ratio is
the cost of playing an interaction as Python objects against arrays, not an algorithmic gap.
The numpy engine uses two cores: a second thread draws the next round's pairing permutation
while the main thread plays the current round (``VectorSociety.run(prefetch=True)``); the
draws and results are the same as without it. ``--no-prefetch`` times one core.
"""

from __future__ import annotations

import argparse
import os
import time

import pandas as pd

from socialsim.society.mesa_model import SocietyModel
from socialsim.society.vectorised import VectorSociety

# Shares of each strategy in the benchmark population: every code path is exercised.
SHARES = {
    "image_scoring": 0.25,
    "simple_standing": 0.25,
    "stern_judging": 0.25,
    "always_cooperate": 0.10,
    "always_defect": 0.15,
}
ERROR = 0.01  # some execution errors, so that the slip draw is timed too


def population(n_agents: int) -> dict[str, int]:
    counts = {strategy: int(share * n_agents) for strategy, share in SHARES.items()}
    counts["image_scoring"] += n_agents - sum(counts.values())
    return counts


def time_numpy(
    n_agents: int, rounds: int, seed: int, prefetch: bool = True
) -> tuple[float, int, pd.DataFrame]:
    society = VectorSociety(population(n_agents), error=ERROR, seed=seed)
    start = time.perf_counter()
    stats = society.run(rounds, prefetch=prefetch)
    return time.perf_counter() - start, rounds * (n_agents // 2), stats


def time_mesa(n_agents: int, rounds: int, seed: int) -> tuple[float, int, pd.DataFrame]:
    model = SocietyModel(population(n_agents), error=ERROR, seed=seed)
    start = time.perf_counter()
    for _ in range(rounds):
        model.step()
    seconds = time.perf_counter() - start
    return seconds, rounds * (n_agents // 2), model.statistics()


def report(engine: str, n_agents: int, rounds: int, seconds: float, interactions: int) -> float:
    rate = interactions / seconds
    print(
        f"{engine:>6}: {n_agents:>7,} agents x {rounds:>5,} rounds = {interactions:>11,} interactions"
        f" in {seconds:8.2f} s -> {rate:14,.0f} interactions/s"
    )
    return rate


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    parser.add_argument("--agents", type=int, help="numpy engine agents [10^5; quick 10^4]")
    parser.add_argument("--rounds", type=int, help="numpy engine rounds [10^3; quick 10^2]")
    parser.add_argument("--mesa-agents", type=int, help="Mesa model agents [10^3; quick 200]")
    parser.add_argument("--mesa-rounds", type=int, help="Mesa model rounds [10^2; quick 20]")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-prefetch", action="store_true", help="numpy engine on one thread")
    args = parser.parse_args(argv)
    agents = args.agents or (10_000 if args.quick else 100_000)
    rounds = args.rounds or (100 if args.quick else 1_000)
    mesa_agents = args.mesa_agents or (200 if args.quick else 1_000)
    mesa_rounds = args.mesa_rounds or (20 if args.quick else 100)

    print(
        f"gossip society benchmark; cpus available: {len(os.sched_getaffinity(0))}; error {ERROR}"
    )
    print(f"population shares: {SHARES}")

    # Same model, same seed, small N: the engines must agree before their speed means anything.
    small_mesa = time_mesa(mesa_agents, min(mesa_rounds, 20), args.seed)[2]
    small_numpy = VectorSociety(population(mesa_agents), error=ERROR, seed=args.seed).run(
        min(mesa_rounds, 20)
    )
    print(
        f"engines agree on {mesa_agents} agents x {min(mesa_rounds, 20)} rounds: {small_mesa.equals(small_numpy)}"
    )

    # Best of three for Mesa: a conservative ratio (machine noise only ever slows a run down).
    mesa_seconds, mesa_interactions, _ = min(
        (time_mesa(mesa_agents, mesa_rounds, args.seed + trial) for trial in range(3)),
        key=lambda timed: timed[0],
    )
    mesa_rate = report("mesa", mesa_agents, mesa_rounds, mesa_seconds, mesa_interactions)
    numpy_seconds, numpy_interactions, stats = time_numpy(
        agents, rounds, args.seed, prefetch=not args.no_prefetch
    )
    numpy_rate = report("numpy", agents, rounds, numpy_seconds, numpy_interactions)

    print(f"numpy engine: {numpy_seconds:.2f} s for {agents:,} x {rounds:,} (goal <= 60 s)")
    print(f"ratio per interaction, numpy / mesa: {numpy_rate / mesa_rate:,.0f}x (goal >= 100x)")
    last = stats.iloc[-max(1, rounds // 10) :].mean()
    print("numpy run, mean over the last tenth of the rounds:")
    for column, value in last.items():
        print(f"  {column:<28} {value: .4f}")


if __name__ == "__main__":
    main()
