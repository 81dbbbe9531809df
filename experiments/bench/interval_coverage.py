"""Coverage of the main job's interval methods: how often a 95% interval from n seeds of
``align_evolution`` holds the true value, at the seed counts the project reports.

The truth: a pool of ``--pool`` seeds (40,000 by default, seeds 1,000,000 on, none of the
headline's) of the file played in the numpy society (:mod:`socialsim.society.companion`: the
env's generations for the same seeds). The quantities, each seed's last generation
(:func:`align_evolution_seeds.last_generation`):

* ``cooperation`` per arm, and the arms' ``difference`` (paired by seed): the 95% percentile
  bootstrap interval of the mean (:func:`socialsim.analysis.stats.bootstrap_ci`, 2,000
  resamples), the method of ``generations.csv``, ``contrasts.csv`` and the headline;
* ``defectors_win`` (the share of seeds where always defect holds a majority): the exact
  Clopper-Pearson interval (:func:`socialsim.analysis.stats.binomial_ci`).

Two checks at each n: **disjoint** blocks of n seeds of the pool (up to ``--blocks``), each
interval against the mean of the pool's other seeds; and **resampled** blocks (``--blocks`` of
n seeds drawn with replacement from the pool, against the pool's mean: coverage when the pool
is the population, tight where the pool holds few disjoint blocks). Each coverage is printed
with its binomial SE; the run exits 1 when a method used by the headline (the 1,000-seed row)
covers less than 93% in either check.

    python experiments/bench/interval_coverage.py [--pool 40000] [--sizes 10 30 1000] [--blocks 1000]

Printed on 2026-12-06 (pool 40,000 seeds an arm, 1,000 blocks; 728 s of wall time at load
average 10 on the 2 cores, the pool 555 s of it), coverage of the 95% intervals, disjoint
blocks / resampled blocks (binomial SE of the resampled 0.006-0.008 at 1,000 seeds):

| quantity (generation 14) | truth (40,000 seeds) | method | n = 10 (the env run) | n = 30 | n = 1,000 (the headline) |
|---|---|---|---|---|---|
| cooperation, gossip=True | 0.8816 | percentile bootstrap | 0.694 / 0.698 | 0.908 / 0.913 | 0.975 (40 blocks) / **0.935** |
| cooperation, gossip=False | 0.0099 | percentile bootstrap | 0.833 / 0.845 | 0.910 / 0.903 | 0.975 / **0.948** |
| difference, False - True | -0.8717 | percentile bootstrap, paired | 0.705 / 0.680 | 0.914 / 0.904 | 0.975 / **0.958** |
| defectors win, gossip=True | 0.0999 | Clopper-Pearson | 0.987 / 0.982 | 0.990 / 0.992 | 0.950 / **0.948** |
| defectors win, gossip=False | 1.0 | Clopper-Pearson | 1.0 / 1.0 | 1.0 / 1.0 | 1.0 / 1.0 |

Ten seeds of this split outcome (defectors win in one seed in ten) give bootstrap intervals that
cover the mean in about 70% of blocks: a block without a defectors' win gives a narrow interval
above the mean. Thirty give 90-91%; the headline's 1,000 give 93.5-97.5% (exit 0). An earlier
run, its resampled blocks drawn from one stream in another order, printed 0.950, 0.965, 0.947
and 0.965 at 1,000 seeds: the percentile interval covers about 94-95% there, a point or so
under its nominal level on this skewed outcome.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import zlib

import numpy as np
import pandas as pd
from socialsim.experiments.align_evolution_seeds import last_generation, play

from socialsim.analysis import stats
from socialsim.config import load
from socialsim.society.companion import arms

POOL_FIRST = 1_000_000  # the pool's first replicate: clear of the headline's seeds
CHUNK = 20_000  # seeds played at once
HEADLINE = 1000  # the headline's seeds (align_evolution_seeds.SEEDS)
FLOOR = 0.93


def pool(file: str, seeds: int) -> dict[str, pd.DataFrame]:
    """Per arm, each pool seed's last generation (:func:`last_generation`)."""
    out = {}
    for arm in arms(load(file)):
        parts = [
            last_generation(play(arm, min(CHUNK, seeds - first), POOL_FIRST + first))
            for first in range(0, seeds, CHUNK)
        ]
        out[arm.label] = pd.concat(parts)
    return out


def quantities(last: dict[str, pd.DataFrame]) -> dict[str, tuple[np.ndarray, str]]:
    """Name -> (one value per pool seed, the interval method)."""
    (base, a), (treated, b) = list(last.items())[:2]
    out = {}
    for label, values in last.items():
        out[f"cooperation, {label}"] = (values["cooperation"].to_numpy(), "bootstrap")
        out[f"defectors win, {label}"] = (values["defectors_win"].to_numpy(), "clopper-pearson")
    difference = b["cooperation"].to_numpy() - a["cooperation"].loc[b.index].to_numpy()
    out[f"difference, {treated} - {base}"] = (difference, "bootstrap")
    return out


def interval(values: np.ndarray, method: str, seed: int) -> tuple[float, float]:
    if method == "clopper-pearson":
        return stats.binomial_ci(int(values.sum()), values.size)
    return stats.bootstrap_ci(values, seed=seed)


def covered(values: np.ndarray, method: str, truth: float, seed: int) -> bool:
    low, high = interval(values, method, seed)
    return bool(low <= truth <= high)


def coverage(values: np.ndarray, method: str, n: int, blocks: int, rng) -> dict[str, float]:
    """Disjoint and resampled coverage of ``method``'s interval from ``n`` seeds."""
    total, count = values.sum(), values.size
    disjoint = min(blocks, count // n)
    hits = 0
    for b in range(disjoint):
        block = values[b * n : (b + 1) * n]
        hits += covered(block, method, (total - block.sum()) / (count - n), seed=b)
    truth = values.mean()
    drawn = [covered(rng.choice(values, n), method, truth, seed=b) for b in range(blocks)]
    return {
        "n": n,
        "disjoint_blocks": disjoint,
        "disjoint": hits / disjoint if disjoint else math.nan,
        "resampled_blocks": blocks,
        "resampled": float(np.mean(drawn)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", default="align_evolution")
    parser.add_argument("--pool", type=int, default=40_000)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 30, HEADLINE])
    parser.add_argument("--blocks", type=int, default=1000)
    args = parser.parse_args()
    started = time.perf_counter()
    last = pool(args.file, args.pool)
    print(f"pool: {args.pool} seeds an arm of {args.file} ({time.perf_counter() - started:.0f} s)")
    rows = []
    for name, (values, method) in quantities(last).items():
        for n in args.sizes:
            rng = np.random.default_rng([zlib.crc32(name.encode()), n])  # the blocks' draws
            row = {"quantity": name, "method": method, "truth": values.mean()}
            rows.append({**row, **coverage(values, method, n, args.blocks, rng)})
    table = pd.DataFrame(rows)
    for check in ("disjoint", "resampled"):
        p = table[check]
        table[f"{check}_se"] = np.sqrt(p * (1 - p) / table[f"{check}_blocks"])
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(table.round(4).to_string(index=False))
    print(f"({time.perf_counter() - started:.0f} s in all)")
    used = table[table["n"] == HEADLINE]
    short = used[(used["disjoint"] < FLOOR) | (used["resampled"] < FLOOR)]
    if len(short):
        print(f"below {FLOOR:.0%} at {HEADLINE} seeds: {', '.join(short['quantity'])}")
        sys.exit(1)


if __name__ == "__main__":
    main()
