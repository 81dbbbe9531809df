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

    python experiments/bench/rating_coverage_bench.py                 # 30 blocks (~35 min busy)
    python experiments/bench/rating_coverage_bench.py --blocks 10 --entrants always_defect

**Printed on 2026-12-06, 22:52-23:26 UTC** by the first command (the defaults: 30 blocks, these
three entrants, both games; 16,200 games on a machine shared by eight jobs, load about 10).
``covers``: the interval ``rate`` prints; ``plain``: the percentile interval before widening;
``log-loss``, ``per-opp``: the blocks' medians::

    game      entrant            covers   plain             all blocks        frozen [pool 95%] log-loss  per-opp
    donation  always_defect      30/30   29/30    -68.1 [ -81.1,  -55.8]   -91.7 [-136.3,  -52.4]   0.6707   0.6588
    donation  random_donor       28/30   27/30     -9.1 [ -25.3,    7.6]    -6.0 [ -38.8,   26.1]   0.6951   0.6968
    donation  simple_standing    28/30   27/30     48.3 [  33.0,   63.9]    31.2 [  11.6,   51.8]   0.6687   0.6501
    prisoners always_defect      27/30   26/30   -116.6 [-128.3, -104.0]  -124.7 [-179.1,  -79.8]   0.6184   0.5836
    prisoners random_donor       30/30   29/30    -17.1 [ -30.5,   -2.1]   -44.3 [ -85.2,   -9.2]   0.6871   0.6826
    prisoners simple_standing    28/30   26/30     75.4 [  61.3,   90.6]    71.5 [  45.2,  108.0]   0.6295   0.5804
    cluster: 171/180 intervals cover (95.0%)
    plain: 164/180 intervals cover (91.1%)

So: the widened cluster-bootstrap interval (``rate``'s) covers in 95.0% of 180 blocks, the plain
percentile interval in 91.1% (the reason for the widening). On 540 seeds the pool never played,
each of the three members' ratings lands inside the 95% interval of its frozen rating (the
pool's own sampling error), though not always inside the all-blocks interval: the frozen
ratings are estimates from 18 seeds (always_defect in donation -68.1 against -91.7). The rating
predicts a block's held-out seeds better than a coin (0.693) but for random_donor, which stays
near it (0.6951, 0.6871); the per-opponent rates predict better still for always_defect and
simple_standing, which beat some members and lose to others against the ratings' order.

**Every member, printed on 2026-12-06, 23:35-23:53 UTC** (``--blocks 10 --entrants
always_cooperate,always_defect,entrant,image_scoring,liar_invert,random_donor,reputation_seeker,
simple_standing,stern_judging``; with 10 blocks each block is a tenth of the rating it is
checked against, so these coverages run high)::

    game      entrant            covers   plain             all blocks        frozen [pool 95%] log-loss  per-opp
    donation  always_cooperate   10/10   10/10      4.7 [ -27.1,   37.0]    25.3 [ -16.1,   68.0]   0.6994   0.6872
    donation  always_defect      10/10    9/10    -62.0 [ -83.5,  -40.1]   -91.7 [-136.3,  -52.4]   0.6737   0.6632
    donation  entrant            10/10    9/10    -87.6 [-110.6,  -66.9]   -97.3 [-159.0,  -39.9]   0.6637   0.6509
    donation  image_scoring      10/10    9/10     16.1 [ -12.7,   46.8]    17.0 [ -12.7,   47.8]   0.6715   0.6573
    donation  liar_invert        10/10   10/10     79.7 [  48.4,  110.5]    72.1 [  34.9,  107.9]   0.6750   0.6688
    donation  random_donor       10/10   10/10     -9.8 [ -39.0,   19.1]    -6.0 [ -38.8,   26.1]   0.6955   0.6966
    donation  reputation_seeker  10/10   10/10     46.3 [  17.9,   76.4]    23.0 [   0.3,   47.2]   0.6733   0.6628
    donation  simple_standing    10/10   10/10     46.0 [  18.2,   75.9]    31.2 [  11.6,   51.8]   0.6661   0.6564
    donation  stern_judging      10/10   10/10     39.7 [  12.2,   69.9]    26.4 [   4.6,   50.0]   0.6768   0.6641
    prisoners always_cooperate   10/10   10/10     26.6 [   0.7,   53.3]     0.8 [ -18.2,   20.7]   0.6803   0.6236
    prisoners always_defect      10/10    9/10   -104.6 [-127.2,  -82.2]  -124.7 [-179.1,  -79.8]   0.6384   0.5923
    prisoners entrant            10/10   10/10   -140.9 [-164.0, -116.4]  -160.4 [-243.9,  -93.8]   0.6087   0.5638
    prisoners image_scoring      10/10   10/10     20.2 [  -2.0,   42.8]    18.0 [  -0.8,   38.7]   0.6386   0.6039
    prisoners liar_invert        10/10   10/10    144.4 [ 116.4,  173.7]   109.2 [  72.7,  155.2]   0.6637   0.6001
    prisoners random_donor       10/10   10/10     -5.3 [ -31.1,   20.5]   -44.3 [ -85.2,   -9.2]   0.6931   0.6841
    prisoners reputation_seeker  10/10   10/10     78.5 [  50.3,  106.4]    69.3 [  38.2,  108.1]   0.6422   0.5868
    prisoners simple_standing    10/10    9/10     77.0 [  49.8,  105.4]    71.5 [  45.2,  108.0]   0.6295   0.5641
    prisoners stern_judging      10/10   10/10     70.4 [  43.2,   97.3]    60.5 [  28.9,  102.2]   0.6453   0.5823
    cluster: 180/180 intervals cover (100.0%)
    plain: 175/180 intervals cover (97.2%)

On these 180 new seeds 16 of the 18 all-blocks ratings land inside their member's frozen
interval; prisoners' always_cooperate (26.6 against 0.8 [-18.2, 20.7]) and random_donor (-5.3
against -44.3 [-85.2, -9.2]) do not, though their distances (25.8, 39.0) are within both
intervals' half-widths added in quadrature (33, 46): the all-blocks rating has its own error.
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
ENTRANTS = ("always_defect", "random_donor", "simple_standing")
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
    parser.add_argument("--blocks", type=int, default=30)
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
                counts = f"{covered:>3d}/{len(rows):<3d} {plain:>3d}/{len(rows):<3d}"
                print(
                    f"{game:9s} {label:17s} {counts} "
                    f"{point:7.1f} [{low:6.1f}, {high:6.1f}] "
                    f"{frozen:7.1f} [{pool_low:6.1f}, {pool_high:6.1f}] {loss:8.4f} {per:8.4f}"
                )
                sys.stdout.flush()
    for name, (hit, total) in totals.items():
        print(f"{name}: {hit}/{total} intervals cover ({100 * hit / total:.1f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
