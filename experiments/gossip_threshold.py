"""The gossip reach q* above which discriminators out-earn defectors, per norm and c/b, drawn
against Nowak & Sigmund's q = c/b (:mod:`socialsim.society.threshold` says how it is measured).

A script, not an experiment file: the file format plays env episodes with full records, and a
threshold read to 0.01 needs 101 reach values x 3 norms x 2 defector shares x 100 seeds of 100
agents for 200 rounds (1.2 x 10^9 agent-rounds) and a crossing computed across cells, which the
numpy society (the env's rules, the same draws) plays in a minute or two and ``socialsim
report`` does not compute.

Design: 100 agents, 10% or 50% always defect, the rest one norm (image scoring, simple
standing, stern judging); q from 0 to 1 in steps of 0.01; 100 seeds (the same at every q), 200
rounds of the random-matching donation game. Written to ``--out`` (default
``results/gossip_threshold``): ``threshold.csv`` (per norm, defector share and c/b of 0.1, 0.2
and 0.5: q* with its 95% bootstrap interval over seeds, 1,000 resamples; ``q_first``, the
smallest q where discriminators out-earn defectors at all; n; and the two theory lines), ``break_even.csv`` (per q, the mean helps differences and the break-even c/b)
and ``threshold.png`` (PDF, SVG): q* against c/b per norm, beside the line q = c/b.

    python experiments/gossip_threshold.py [--replicates 100] [--rounds 200] [--out DIR]

Printed on 2026-12-06 (40 s of CPU; 566 s of wall time at load average 13 on the 2 cores): q*
with its 95% bootstrap interval over the 100 seeds, and the first q where discriminators
out-earn defectors at all where it differs:

| norm | defectors | c/b = 0.1 | c/b = 0.2 | c/b = 0.5 |
|---|---|---|---|---|
| image scoring | 10% | 0.122 [0.117, 0.127] | 0.229 [0.224, 0.233] | 0.535 [0.531, 0.539] |
| simple standing | 10% | 0.124 [0.118, 0.129] | 0.233 [0.228, 0.238] | 0.550 [0.545, 0.554] |
| stern judging | 10% | 0.134 [0.128, 0.140] | 0.257 [0.251, 0.263] | 0.603 [0.597, 0.608] |
| image scoring | 50% | 0.203 [0.199, 0.208] | 0.353 [0.349, 0.356] | 0.977 [0.974, 0.979] (first 0.689) |
| simple standing | 50% | 0.223 [0.218, 0.228] | 0.409 [0.405, 0.414] | 0.818 [0.814, 0.822] |
| stern judging | 50% | 0.269 [0.262, 0.276] | 0.531 [0.524, 0.538] | none (loses at every q) |
| q = c/b (Nowak & Sigmund) | | 0.1 | 0.2 | 0.5 |
| good standing, c / ((1 - d) b + d c) | 10% / 50% | 0.110 / 0.182 | 0.217 / 0.333 | 0.526 / 0.667 |

What holds: q > c/b is the limit of rare defectors. With 10% defectors image scoring and simple
standing need 0.02-0.05 more than c/b, 0.01-0.03 above the good-standing bound;
stern judging needs more (0.257 at c/b = 0.2, 0.603 at 0.5): by the rules, a defector
criticises the judge that rightly refuses it (always-defect recipients gossip by image scoring),
and that judge is then bad to the other judges until it is next praised. With half the population defecting
every norm needs far more than c/b, stern judging loses at c/b = 0.5 whatever the reach, and
image scoring's margin is not monotone in q: at c/b = 0.5 it out-earns defectors for q of about
0.69 to 0.76 (``break_even.csv``), not from there to 0.97, and again from 0.977 on.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from socialsim.envs.gossip.norms import NORMS

from socialsim.analysis import figure_style as fs
from socialsim.society import threshold as th

SHARES = (0.1, 0.5)
RATIOS = (0.1, 0.2, 0.5)
REACH = np.round(np.linspace(0.0, 1.0, 101), 2)
CURVE = np.round(np.linspace(0.01, 0.99, 99), 2)  # the c/b of the drawn curves


def measure(replicates: int, rounds: int, agents: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``threshold.csv`` and ``break_even.csv`` (see the module docstring)."""
    rows, curve_rows = [], []
    for norm in NORMS:
        for share in SHARES:
            received, given = th.play_reach(
                norm, share, REACH, agents=agents, replicates=replicates, rounds=rounds
            )
            even = th.break_even(received, given)
            for q, r, g, e in zip(REACH, received.mean(0), given.mean(0), even, strict=True):
                curve_rows.append(
                    {
                        "norm": norm,
                        "defectors": share,
                        "q": q,
                        "received_difference": r,
                        "given_difference": g,
                        "break_even_cb": e,
                    }
                )
            for ratio in sorted({*RATIOS, *CURVE}):
                low, high = (
                    th.threshold_interval(received, given, REACH, ratio)
                    if ratio in RATIOS
                    else (math.nan, math.nan)
                )
                rows.append(
                    {
                        "norm": norm,
                        "defectors": share,
                        "cb": ratio,
                        "q_star": th.threshold(received, given, REACH, ratio),
                        "q_first": th.threshold(received, given, REACH, ratio, first=True),
                        "ci_low": low,
                        "ci_high": high,
                        "nowak_sigmund": ratio,
                        "good_standing": th.good_standing_threshold(ratio, share),
                        "n_seeds": replicates,
                        "agents": agents,
                        "rounds": rounds,
                        "shown": ratio in RATIOS,
                    }
                )
    return pd.DataFrame(rows), pd.DataFrame(curve_rows)


def plot(table: pd.DataFrame, path: Path) -> Path:
    """q* against c/b, one panel per defector share, a line per norm; markers with 95%
    intervals at the chosen ratios; the line q = c/b and the good-standing bound."""
    colours = dict(zip(NORMS, ("tab:blue", "tab:orange", "tab:green"), strict=True))
    with fs.paper():
        figure = Figure(figsize=(fs.FULL, 3.0), layout="constrained")
        panels = figure.subplots(1, len(SHARES), sharey=True)
        for axes, share in zip(panels, SHARES, strict=True):
            block = table[table["defectors"] == share]
            line = block[block["norm"] == NORMS[0]]
            axes.plot(line["cb"], line["nowak_sigmund"], "k--", lw=1, label="q = c/b")
            axes.plot(
                line["cb"],
                line["good_standing"],
                ":",
                color="grey",
                lw=1,
                label="good standing: c / ((1-d) b + d c)",
            )
            for norm in NORMS:
                rows = block[block["norm"] == norm]
                finite = rows[np.isfinite(rows["q_star"])]
                axes.plot(
                    finite["cb"],
                    finite["q_star"],
                    color=colours[norm],
                    lw=1.2,
                    label=norm.replace("_", " "),
                )
                split = rows[rows["q_first"] < rows["q_star"] - 1e-9]  # crosses more than once
                axes.plot(split["cb"], split["q_first"], ":", color=colours[norm], lw=1)
                shown = rows[rows["shown"]]
                for row in shown.itertuples():
                    if math.isfinite(row.q_star):
                        high = row.ci_high if math.isfinite(row.ci_high) else 1.0
                        axes.errorbar(
                            row.cb,
                            row.q_star,
                            yerr=[[row.q_star - row.ci_low], [high - row.q_star]],
                            fmt="o",
                            ms=3,
                            color=colours[norm],
                            capsize=2,
                        )
                    else:
                        axes.plot(row.cb, 1.04, "x", color=colours[norm], ms=5)
            axes.axhline(1.0, color="grey", lw=0.5)
            axes.set_xlim(0, 0.6)
            axes.set_ylim(0, 1.08)
            axes.set_xlabel("c/b")
            axes.set_title(f"{share:.0%} defectors")
        panels[0].set_ylabel("threshold reach q*")
        n = int(table["n_seeds"].iloc[0])
        fs.suptitle(
            figure,
            f"gossip reach q* above which discriminators out-earn defectors\n(n = {n} seeds of "
            f"{int(table['agents'].iloc[0])} agents, {int(table['rounds'].iloc[0])} rounds per q; "
            "bars: 95% bootstrap over seeds; x: no q suffices; dotted in a norm's colour: the "
            "first q where they out-earn them, where it is below q*)",
        )
        fs.figure_legend(figure, ncols=5)
        return fs.save(figure, path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--agents", type=int, default=100)
    parser.add_argument("--out", type=Path, default=Path("results/gossip_threshold"))
    args = parser.parse_args()
    started = time.perf_counter()
    table, curves = measure(args.replicates, args.rounds, args.agents)
    args.out.mkdir(parents=True, exist_ok=True)
    shown = table[table["shown"]].drop(columns="shown")
    shown.to_csv(args.out / "threshold.csv", index=False)
    curves.to_csv(args.out / "break_even.csv", index=False)
    figure = plot(table, args.out / "threshold.png")
    print(f"q* (n = {args.replicates} seeds a q; {time.perf_counter() - started:.0f} s)")
    for row in shown.to_dict("records"):
        print(
            f"  {row['norm']:16} defectors {row['defectors']:.0%}  c/b {row['cb']}: q* = "
            f"{row['q_star']:.3f} [{row['ci_low']:.3f}, {row['ci_high']:.3f}], first "
            f"{row['q_first']:.3f}  "
            f"(good standing {row['good_standing']:.3f})"
        )
    print(f"written: {args.out / 'threshold.csv'}, {args.out / 'break_even.csv'}, {figure}")


if __name__ == "__main__":
    main()
