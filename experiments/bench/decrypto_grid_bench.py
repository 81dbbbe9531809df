"""Benchmark: Decrypto grid cells of 96 games (seeds 0-95) with the word-embedding baselines.

The first cell is the benchmark proper: GloVe encoder, decoder and interceptor on every seat
(goal: at most 10 s for the 96 games, the vectors already loaded). The other cells complete the
baseline grid, embedding vs random on each side:

* GloVe encoder + decoder vs a random interceptor,
* random encoder + decoder vs the GloVe interceptor,
* random vs random.

Printed per cell: wall and CPU time, games/s, ending counts, the interception-loss rate
((intercept + both) / games, the paper's competitive-grid cell), the miscommunication-loss rate
((miscomm + both) / games, its cooperative-grid cell), each also as mean +- SEM over the three
32-game seed blocks, IR% and MR% (tokens / (2 x games) x 100) and the average number of turns.
Nothing is asserted.

Run::

    python experiments/bench/decrypto_grid_bench.py [--games 96]
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

import numpy as np
from socialsim.agents.embedding.vectors import load_vectors

from socialsim.episode import EpisodeSpec
from socialsim.runner import play_episode

GLOVE_TEAM = {"encoder": {"kind": "glove_encoder"}, "decoder": {"kind": "glove_decoder"}}
RANDOM_TEAM = {
    "encoder": {"kind": "decrypto_random_encoder"},
    "decoder": {"kind": "decrypto_random_guesser"},
}
GLOVE_INTERCEPTOR = {"interceptor": {"kind": "glove_interceptor"}}
RANDOM_INTERCEPTOR = {"interceptor": {"kind": "decrypto_random_guesser"}}

CELLS = {
    "glove vs glove": {**GLOVE_TEAM, **GLOVE_INTERCEPTOR},
    "glove vs random": {**GLOVE_TEAM, **RANDOM_INTERCEPTOR},
    "random vs glove": {**RANDOM_TEAM, **GLOVE_INTERCEPTOR},
    "random vs random": {**RANDOM_TEAM, **RANDOM_INTERCEPTOR},
}

BLOCK = 32  # games per env seed in the paper's grids


def play_cell(seats: dict, games: int) -> tuple[float, float, list[dict]]:
    start = time.perf_counter()
    cpu = time.process_time()
    summaries = []
    for seed in range(games):
        record = play_episode(
            EpisodeSpec(env_id="decrypto_v0", seed=seed, seats=seats, episode=seed)
        )
        if record.status != "done":
            raise RuntimeError(f"seed {seed}: {record.error}")
        summaries.append(record.summary)
    return time.perf_counter() - start, time.process_time() - cpu, summaries


def mean_sem(values: list[float]) -> str:
    values_array = np.asarray(values, dtype=float)
    sem = values_array.std(ddof=1) / np.sqrt(len(values_array)) if len(values_array) > 1 else 0.0
    return f"{values_array.mean():.3f} +- {sem:.3f}"


def report(name: str, wall: float, cpu: float, summaries: list[dict]) -> None:
    games = len(summaries)
    endings = Counter(s["ending"] for s in summaries)
    blocks = [summaries[i : i + BLOCK] for i in range(0, games, BLOCK)]

    def rate(group, kinds):
        return sum(s["ending"] in kinds for s in group) / len(group)

    interceptions = sum(s["interceptions"] for s in summaries)
    miscommunications = sum(s["miscommunications"] for s in summaries)
    # CPU time too: on a shared machine the wall time measures the neighbours as well.
    print(
        f"== {name}: {games} games in {wall:.2f} s wall, {cpu:.2f} s CPU ({games / wall:.1f} games/s)"
    )
    print(
        "   endings: "
        + ", ".join(
            f"{k} {endings.get(k, 0)}" for k in ("intercept", "miscomm", "both", "survived")
        )
    )
    print(
        f"   interception-loss rate {rate(summaries, {'intercept', 'both'}):.3f} "
        f"(blocks of {BLOCK}: {mean_sem([rate(b, {'intercept', 'both'}) for b in blocks])})"
    )
    print(
        f"   miscommunication-loss rate {rate(summaries, {'miscomm', 'both'}):.3f} "
        f"(blocks of {BLOCK}: {mean_sem([rate(b, {'miscomm', 'both'}) for b in blocks])})"
    )
    print(
        f"   IR% {100 * interceptions / (2 * games):.1f}, MR% {100 * miscommunications / (2 * games):.1f}, "
        f"average turns {np.mean([s['turns'] for s in summaries]):.2f}, "
        f"team win rate {endings.get('survived', 0) / games:.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=96, help="games per cell (seeds 0..games-1)")
    args = parser.parse_args()

    start = time.perf_counter()
    vectors = load_vectors("glove-6b-50d")
    print(
        f"loaded {len(vectors)} GloVe vectors ({vectors.dim}d) in {time.perf_counter() - start:.2f} s"
    )
    for name, seats in CELLS.items():
        wall, cpu, summaries = play_cell(seats, args.games)
        report(name, wall, cpu, summaries)


if __name__ == "__main__":
    main()
