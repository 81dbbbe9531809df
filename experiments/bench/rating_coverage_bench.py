"""Do the ratings' intervals cover, and do pool members recover their ratings on new seeds?

For each entrant (pool members, rated by ``socialsim rate``'s own code: ``play.blocks``,
``scores.join``, ``scores.rate_gossip``) and each game, the script plays ``--blocks`` disjoint
blocks of seeds, each block one default rating run against pool v2 (9 seat positions x 2 seeds
x 5 societies = 90 games, 18 seeds, ``--seed`` = 1000 + 18 b: none of the pool's own seeds
0-17). It prints, per entrant and game:

* ``covers``: how many blocks' 95% intervals hold the rating fitted on every block together
  (the best estimate of what the blocks estimate), for the cluster bootstrap as ``rate`` prints
  it and for the plain percentile interval it widens (:func:`socialsim.rating.model.interval`);
* the all-blocks rating beside the member's frozen rating and the pool's 95% interval around it
  (recovery on seeds the pool never played), and the blocks' median held-out log-loss of the
  rating and of the per-opponent rates against a coin's 0.693.

It asserts nothing.

    python experiments/bench/rating_coverage_bench.py                 # 40 blocks (~10 min)
    python experiments/bench/rating_coverage_bench.py --blocks 10 --entrants always_defect

**Printed on 2026-12-06** (``--blocks 40``, the default entrants and games):

(filled in below from the run)
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

from socialsim.rating import model, play, scores
from socialsim.rating import pool as pool_module
from socialsim.rating.entrant import Entrant

FIRST_SEED = 1000
ENTRANTS = ("always_defect", "random_donor", "simple_standing", "liar_invert")
GAMES = ("donation", "prisoners")


def member_spec(pool, label: str) -> dict:
    for society in pool.societies():
        for name, spec in society.seats:
            if name == label:
                return dict(spec)
    raise SystemExit(f"--entrants: {label!r} is not a label of pool {pool.version}")


def blocks_of(pool, game: str, label: str, blocks: int, scratch: Path):
    """Each block's rating (point, cluster interval, plain percentile interval, fit) and the
    rating of every block's games together."""
    entrant = Entrant(label, spec=member_spec(pool, label))
    episodes = int(pool.gossip["episodes"])
    groups = episodes * len(pool.positions)
    matchups = play.gossip_matchups(entrant, pool, game)
    rows, everything = [], []
    for b in range(blocks):
        seed = FIRST_SEED + b * groups
        run = play.blocks(entrant, game, pool, episodes, seed, matchups, scratch / f"{game}_{b}")
        held = play.play(run, say=lambda _line: None, progress=False)
        played = scores.join(held, matchups, seed)
        [rated] = scores.rate_gossip(played, pool, game, groups, seed)
        plain = plain_interval(played, pool, game, groups, seed)
        rows.append((rated.rating, plain, rated.fit))
        everything += scores.join(held, matchups, FIRST_SEED)
    [overall] = scores.rate_gossip(everything, pool, game, groups * blocks, FIRST_SEED)
    return rows, overall.rating


def plain_interval(played, pool, game: str, groups: int, seed: int) -> tuple[float, float]:
    """The plain percentile interval of the same bootstrap replicates (before widening)."""
    matches = [
        m
        for matchup, games in played
        for group, record in games
        for m in scores.entrant_matches(
            record, matchup.seat, matchup.names, pool.skips_own_label, group
        )
    ]
    frozen = {**pool.gossip_ratings(game), scores.OFFSET: pool.entrant_offset(game)}
    counts = model.resample_counts(groups, seed)
    replicates = model.fit_one(
        matches, scores.ENTRANT, frozen, counts[:, [m.group for m in matches]]
    )
    return model.percentile(replicates)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blocks", type=int, default=40)
    parser.add_argument("--entrants", default=",".join(ENTRANTS))
    parser.add_argument("--games", default=",".join(GAMES))
    args = parser.parse_args(argv)
    pool = pool_module.load("v2")
    totals = {"cluster": [0, 0], "plain": [0, 0]}
    print(
        f"pool {pool.version}: {args.blocks} disjoint blocks of "
        f"{int(pool.gossip['episodes']) * len(pool.positions)} seeds from {FIRST_SEED}"
    )
    print(
        f"{'game':9s} {'entrant':17s} {'covers':>7s} {'plain':>7s} {'all blocks':>22s} "
        f"{'frozen [pool 95%]':>24s} {'log-loss':>8s} {'per-opp':>8s}"
    )
    with tempfile.TemporaryDirectory() as scratch:
        for game in args.games.split(","):
            for label in args.entrants.split(","):
                rows, (point, low, high) = blocks_of(
                    pool, game, label, args.blocks, Path(scratch) / label
                )
                covered = sum(lo <= point <= hi for (_, lo, hi), _, _ in rows)
                plain = sum(lo <= point <= hi for _, (lo, hi), _ in rows)
                totals["cluster"][0] += covered
                totals["plain"][0] += plain
                totals["cluster"][1] += len(rows)
                totals["plain"][1] += len(rows)
                frozen = pool.gossip_ratings(game)[label]
                pool_low, pool_high = pool.gossip_intervals(game)[label]
                loss = np.median([fit.log_loss for _, _, fit in rows])
                per = np.median([fit.per_opponent_log_loss for _, _, fit in rows])
                print(
                    f"{game:9s} {label:17s} {covered:>3d}/{len(rows):<3d} {plain:>3d}/{len(rows):<3d} "
                    f"{point:7.1f} [{low:6.1f}, {high:6.1f}] "
                    f"{frozen:7.1f} [{pool_low:6.1f}, {pool_high:6.1f}] {loss:8.4f} {per:8.4f}"
                )
                sys.stdout.flush()
    for name, (hit, total) in totals.items():
        print(f"{name}: {hit}/{total} intervals cover ({100 * hit / total:.1f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
