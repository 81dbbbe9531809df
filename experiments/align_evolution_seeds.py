"""The main job's headline from enough seeds: ``align_evolution`` played in the numpy society.

``socialsim run align_evolution`` keeps every record of 10 replicates a cell; 10 seeds of this
split outcome (defectors win in about one seed in ten) give bootstrap intervals that cover the
true mean in 69-70% of seed blocks, 1,000 seeds in 93.5-97.5%
(``experiments/bench/interval_coverage.py``). This script plays the
same file's cells in the numpy society (:mod:`socialsim.society.companion`: the same
generations for the same seeds; its first 10 seeds are the env run's 10 replicates, value for
value) for ``--seeds`` seeds (1,000 by default, a few seconds), and prints the headline of the
last generation, every figure with its n, its unit (the seed: one run of 15 generations) and
its interval method:

* per arm, cooperation (the share of the last generation's donations that helped): the mean
  over seeds with its 95% percentile bootstrap interval (2,000 resamples, seed 0:
  :func:`socialsim.analysis.stats.summary`);
* per arm, the seeds where defectors win (always defect holds a majority of the last
  generation's seats): k of n with the exact Clopper-Pearson 95% interval
  (:func:`socialsim.analysis.stats.binomial_ci`);
* the arms' difference of cooperation (the second arm minus the first, the file's baseline),
  paired by seed: mean, 95% percentile bootstrap interval and sign-flip permutation p-value
  (5,000 flips: :func:`socialsim.analysis.stats.contrast`).

Written to ``--out`` (default ``results/align_evolution_seeds``): ``seeds.csv`` (every arm,
seed and generation: cooperation, mean payoff, strategy shares) and ``headline.csv``.

    python experiments/align_evolution_seeds.py [--seeds 1000] [--out DIR] [--file align_evolution]

Printed on 2026-12-06 (1,000 seeds an arm: 11.8 s of wall time, 5.4 s of CPU, at load average 13
on the 2 cores):

| arm | n | cooperation, generation 14 [95% bootstrap] | defectors win, k/n [95% Clopper-Pearson] |
|---|---|---|---|
| gossip=True | 1000 | 0.8724 [0.8533, 0.8901] | 107/1000 = 0.107 [0.0885, 0.1278] |
| gossip=False | 1000 | 0.0116 [0.0101, 0.0131] | 1000/1000 = 1.0 [0.9963, 1.0] |

difference (gossip=False - gossip=True, the file's first value the baseline), paired by seed:
-0.8608 [-0.8787, -0.8414], p = 0.0002 (the permutation test's floor, 1/5001). The 10 seeds of the env run (``generations.csv``):
0.749 [0.486, 0.956] and 0.027 [0.000, 0.059], defectors winning in 2 of 10 with gossip.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from socialsim.analysis import stats
from socialsim.config import load
from socialsim.society.companion import Arm, arms

SEEDS = 1000
DEFECTORS = "share_always_defect"


def play(arm: Arm, seeds: int, first: int = 0) -> pd.DataFrame:
    """Every generation of ``seeds`` seeds of ``arm``, one row per seed and generation."""
    table = arm.run(seeds, first).reset_index()
    table.insert(0, "arm", arm.label)
    table.insert(2, "seed", table["replicate"] + arm.first_seed + first)
    return table


def last_generation(table: pd.DataFrame) -> pd.DataFrame:
    """Each seed's last generation, indexed by seed: ``cooperation`` and ``defectors_win``
    (always defect holds more than half of the seats, 1.0 or 0.0)."""
    last = table[table["generation"] == table["generation"].max()].set_index("seed")
    win = last[DEFECTORS] > 0.5 if DEFECTORS in last else pd.Series(False, index=last.index)
    return pd.DataFrame({"cooperation": last["cooperation"], "defectors_win": win.astype(float)})


def headline(last: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The rows of ``headline.csv`` from each arm's :func:`last_generation`."""
    rows = []
    for label, values in last.items():
        cell = stats.summary(values["cooperation"])
        wins, n = int(values["defectors_win"].sum()), len(values)
        low, high = stats.binomial_ci(wins, n)
        rows.append(
            {
                "arm": label,
                "n_seeds": n,
                "cooperation": cell["mean"],
                "cooperation_low": cell["ci_low"],
                "cooperation_high": cell["ci_high"],
                "cooperation_method": "95% percentile bootstrap over seeds, 2000 resamples",
                "defectors_win": wins,
                "defectors_win_share": wins / n,
                "defectors_win_low": low,
                "defectors_win_high": high,
                "defectors_win_method": "exact Clopper-Pearson 95%",
            }
        )
    (base, a), (treated, b) = list(last.items())[:2]
    row = stats.contrast(a["cooperation"].to_dict(), b["cooperation"].to_dict())
    exact = row["n_treatment"] <= stats.EXACT_SIGN_FLIPS
    flips = "every sign pattern" if exact else f"{stats.PERMUTATIONS} random sign flips"
    rows.append(
        {
            "arm": f"{treated} - {base}",
            "n_seeds": row["n_treatment"],
            "cooperation": row["difference"],
            "cooperation_low": row["ci_low"],
            "cooperation_high": row["ci_high"],
            "cooperation_method": "paired by seed: 95% percentile bootstrap, "
            f"permutation p = {stats.number(row['p_value'])} ({flips})",
        }
    )
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=SEEDS)
    parser.add_argument("--file", default="align_evolution", help="an [evolution] file")
    parser.add_argument("--out", type=Path, default=Path("results/align_evolution_seeds"))
    args = parser.parse_args()
    if args.seeds < 2:
        parser.error(f"--seeds: must be at least 2, got {args.seeds}")
    started = time.perf_counter()
    tables = {arm.label: play(arm, args.seeds) for arm in arms(load(args.file))}
    elapsed = time.perf_counter() - started
    table = headline({label: last_generation(t) for label, t in tables.items()})
    args.out.mkdir(parents=True, exist_ok=True)
    pd.concat(tables.values(), ignore_index=True).to_csv(args.out / "seeds.csv", index=False)
    table.to_csv(args.out / "headline.csv", index=False)
    print(f"{args.file} in the numpy society: {args.seeds} seeds an arm ({elapsed:.1f} s)")
    for row in table.to_dict("records"):
        text = (
            f"{row['arm']} (n = {row['n_seeds']} seeds): cooperation "
            f"{_interval(row, 'cooperation')} ({row['cooperation_method']})"
        )
        if not np.isnan(row.get("defectors_win_share", np.nan)):
            text += (
                f"; defectors win in {int(row['defectors_win'])}/{row['n_seeds']} seeds = "
                f"{_interval(row, 'defectors_win_share', 'defectors_win')} "
                f"({row['defectors_win_method']})"
            )
        print(f"  {text}")
    print(f"written: {args.out / 'headline.csv'}, {args.out / 'seeds.csv'}")


def _interval(row: dict, column: str, prefix: str | None = None) -> str:
    prefix = prefix or column
    low, high = row[f"{prefix}_low"], row[f"{prefix}_high"]
    return f"{row[column]:.4f} [{low:.4f}, {high:.4f}]"


if __name__ == "__main__":
    main()
