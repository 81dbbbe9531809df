"""The generations of an ``[evolution]`` experiment (:mod:`socialsim.society.experiment`): per
cell and generation, cooperation, mean resources and each strategy's share, over the
replicates (seeds), as ``generations.csv`` and three figures.

A record of generation ``g`` has ``cell["generation"] == g``; its cell without that key is the
grid cell it belongs to (``cell``, labelled as the report labels cells). Per record:
``cooperation`` is the share of its donations that cooperated; ``mean_resources`` the mean
final stock of its seats; ``share_<strategy>`` the share of its seats of that kind (the
strategies of any generation of the cell). ``generations.csv`` gives, per cell and
generation, ``n`` (the seeds) and, for each of these, the mean over seeds, its standard error
(``_se``, ddof=1) and the 95% percentile bootstrap interval (``_low``, ``_high``; 2000
resamples, seed 0: :func:`socialsim.analysis.stats.summary`), which the figures draw as bands.

Records of a game with a ceiling and donated fractions (``culture_v0``: ``summary["ceiling"]``,
``summary["donated_fraction"]``) add ``donated_fraction`` and ``ceiling`` to those columns, the
ceiling drawn on the resources figure, and, per generation and seed (the replicate),
``generations_seeds.csv`` and ``generations_seeds.png``: each seed's average final resources
(log scale, the ceiling drawn) and donated fraction.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from socialsim.analysis import figure_style as fs
from socialsim.analysis import stats
from socialsim.analysis.order import in_order
from socialsim.analysis.tables import cell_label
from socialsim.records import EpisodeRecord

GENERATION = "generation"  # the cell key an evolution run names each record's generation by
FIGURES = {
    "cooperation": ("generations_cooperation.png", "share of donations that cooperated"),
    "mean_resources": ("generations_resources.png", "mean final resources per agent"),
    "donated_fraction": ("generations_donated.png", "mean donated fraction"),
}
SHARES_FIGURE = "generations_shares.png"
FINAL_FIGURE = "generations_final_shares.png"
SEEDS_FIGURE, SEEDS_TABLE = "generations_seeds.png", "generations_seeds.csv"


def record_row(record: EpisodeRecord) -> dict[str, Any]:
    """One generation's numbers as one record gives them."""
    cell = {k: v for k, v in record.cell.items() if k != GENERATION}
    acts = [i["action"] for i in record.summary.get("interactions", ()) if "action" in i]
    stocks = record.summary.get("resources") or record.returns
    kinds = [seat["kind"] for seat in record.seats.values()]
    row = {
        "cell": cell_label(cell),
        GENERATION: int(record.cell[GENERATION]),
        "cooperation": acts.count("cooperate") / len(acts) if acts else np.nan,
        "mean_resources": float(np.mean([float(v) for v in stocks.values()])),
        "donated_fraction": float(record.summary.get("donated_fraction", np.nan)),
        "ceiling": float(record.summary.get("ceiling", np.nan)),
    }
    for kind in sorted(set(kinds)):
        row[f"share_{kind}"] = kinds.count(kind) / len(kinds)
    return row


#: an evolution run draws its figures by round and by cell for this many generations at most
DRAWN_GENERATIONS = 3


def chosen_generations(recs: Sequence[EpisodeRecord]) -> tuple[Sequence[EpisodeRecord], str]:
    """The records the figures by round and by cell draw, and what they leave out: an evolution
    run's first, middle and last generations (a panel or a colour each stays readable), every
    record of any other run (and ``""``)."""
    played = sorted({int(r.cell[GENERATION]) for r in recs if GENERATION in r.cell})
    if len(played) <= DRAWN_GENERATIONS:
        return recs, ""
    chosen = [played[0], played[(len(played) - 1) // 2], played[-1]]
    kept = [r for r in recs if r.cell.get(GENERATION) in chosen]
    return kept, (
        f"the figures by round and by cell draw generations {chosen[0]}, {chosen[1]} and "
        f"{chosen[2]} (first, middle and last of {len(played)}); every generation is in the "
        "CSV files and in the generations_*.png figures"
    )


def seeds_table(recs: Sequence[EpisodeRecord]) -> pd.DataFrame:
    """One row per done record of an evolution run: its cell, generation, seed (the replicate)
    and numbers (:func:`record_row`)."""
    rows = [
        {**record_row(r), "seed": r.episode}
        for r in recs
        if r.status == "done" and GENERATION in r.cell
    ]
    return pd.DataFrame(rows)


def generations_table(recs: Sequence[EpisodeRecord]) -> pd.DataFrame:
    """``generations.csv`` (see the module docstring); empty without evolution records."""
    frame = seeds_table(recs)
    if frame.empty:
        return frame
    frame = frame.drop(columns="seed")
    shares = sorted(c for c in frame.columns if c.startswith("share_"))
    frame[shares] = frame[shares].fillna(0.0)  # a strategy absent from a generation: share 0
    out = []
    for (cell, generation), block in frame.groupby(["cell", GENERATION], sort=True):
        row: dict[str, Any] = {"cell": cell, GENERATION: generation, "n": len(block)}
        for column in ["cooperation", "mean_resources", "donated_fraction", "ceiling", *shares]:
            values = block[column].dropna()
            summary = stats.summary(values)
            # the mean correctly rounded (fsum): ten shares of 0.3 summed in floats give
            # 0.29999999999999993; a constant has no spread, not 1.85e-17
            row[column] = math.fsum(values) / len(values) if len(values) else summary["mean"]
            row[f"{column}_se"] = 0.0 if values.nunique() == 1 else summary["sem"]
            row[f"{column}_low"], row[f"{column}_high"] = summary["ci_low"], summary["ci_high"]
            if values.nunique() == 1:
                row[f"{column}_low"] = row[f"{column}_high"] = row[column]
        out.append(row)
    return in_order(pd.DataFrame(out))


def plot_generations(
    table: pd.DataFrame, directory: Path, seeds: pd.DataFrame | None = None
) -> list[Path]:
    """Cooperation and mean resources by generation, a line per cell (with ``seeds``, each
    seed's own thin line beside the mean: a split result shows as a split), and each cell's
    strategy shares by generation; 95% bootstrap bands over seeds (the report's paper style:
    PNG, PDF and SVG, a column or the page wide)."""
    paths = []
    cells = list(dict.fromkeys(table["cell"]))
    low, high = int(table["n"].min()), int(table["n"].max())
    note = f"n = {low if low == high else f'{low}-{high}'} seeds a generation; mean, 95% bootstrap interval"
    with fs.paper():
        for column, (name, label) in FIGURES.items():
            if table[column].isna().all():  # a game without that measure (culture: no cooperate)
                continue
            figure = Figure(figsize=(fs.COLUMN, 2.9), layout="constrained")
            axes = figure.add_subplot()
            for cell in cells:
                colour = band(axes, table[table["cell"] == cell], column, cell)
                if seeds is not None:
                    for _, rows in seeds[seeds["cell"] == cell].groupby("seed", sort=True):
                        rows = rows.sort_values(GENERATION)
                        axes.plot(rows[GENERATION], rows[column], color=colour, **SEED_LINE)
            if column == "mean_resources" and table["ceiling"].notna().any():
                ceiling(axes, table)
            axes.set_xlabel("generation")
            axes.set_ylabel(label)
            thin = "; thin lines: each seed" if seeds is not None else ""
            fs.suptitle(figure, f"{label} by generation\n({note}{thin})")
            fs.figure_legend(figure, ncols=1)
            paths.append(fs.save(figure, directory / name))
        shares = [
            c
            for c in table.columns
            if c.startswith("share_") and not c.endswith(("_se", "_low", "_high"))
        ]
        columns = min(2, len(cells))
        rows = -(-len(cells) // columns)
        figure = Figure(figsize=(fs.FULL, 2.4 * rows + 0.8), layout="constrained")
        panels = figure.subplots(rows, columns, sharey=True, squeeze=False).ravel()
        for axes, cell in zip(panels, cells, strict=False):
            block = table[table["cell"] == cell]
            for column in shares:
                band(axes, block, column, column[len("share_") :])
            axes.set_title(textwrap.fill(cell, 60))
            axes.set_xlabel("generation")
            axes.set_ylim(-0.02, 1.02)
            axes.set_ylabel("share of the population")
        for axes in panels[len(cells) :]:
            axes.set_visible(False)
        fs.suptitle(figure, f"strategy shares by generation ({note})")
        fs.figure_legend(figure, title="strategy", ncols=4)
        paths.append(fs.save(figure, directory / SHARES_FIGURE))
    return paths


def ceiling(axes: Any, table: pd.DataFrame) -> None:
    for value in sorted(set(table["ceiling"].dropna())):
        axes.axhline(value, color="black", linestyle="--", linewidth=1, label=f"ceiling {value:g}")


def plot_seeds(frame: pd.DataFrame, directory: Path) -> Path:
    """Per generation and seed: average final resources (log scale, the ceiling drawn) and the
    donated fraction, a panel pair per cell, a line per seed."""
    cells = list(dict.fromkeys(frame["cell"]))
    with fs.paper():
        figure = Figure(figsize=(fs.FULL, 2.4 * len(cells) + 0.8), layout="constrained")
        panels = figure.subplots(len(cells), 2, squeeze=False)
        for (left, right), cell in zip(panels, cells, strict=True):
            block = frame[frame["cell"] == cell]
            for seed, rows in block.groupby("seed", sort=True):
                rows = rows.sort_values(GENERATION)
                (line,) = left.plot(
                    rows[GENERATION], rows["mean_resources"], marker=".", label=f"seed {seed}"
                )
                right.plot(
                    rows[GENERATION], rows["donated_fraction"], marker=".", color=line.get_color()
                )
            ceiling(left, block)
            left.set_yscale("log")
            left.set_ylabel("average final resources")
            right.set_ylabel("donated fraction")
            right.set_ylim(-0.02, 1.02)
            for axes in (left, right):
                axes.xaxis.set_major_locator(MaxNLocator(integer=True))  # generations are whole
                axes.set_xlabel("generation")
                axes.set_title(cell)
        fs.suptitle(figure, "per generation and seed (each line one seed)")
        fs.figure_legend(figure, ncols=6)
        return fs.save(figure, directory / SEEDS_FIGURE)


SEED_LINE = {"linewidth": 0.4, "alpha": 0.5, "label": "_seed"}


def plot_final_shares(seeds: pd.DataFrame, directory: Path) -> Path:
    """Each seed's strategy shares in its cell's last generation, a stacked bar per seed and a
    panel per cell: where the mean share hides a split (defectors extinct in half the seeds,
    dominant in the others), the bars show it."""
    shares = sorted(c for c in seeds.columns if c.startswith("share_"))
    cells = list(dict.fromkeys(seeds["cell"]))
    with fs.paper():
        columns = min(2, len(cells))
        rows = -(-len(cells) // columns)
        figure = Figure(figsize=(fs.FULL, 2.0 * rows + 0.9), layout="constrained")
        panels = figure.subplots(rows, columns, sharey=True, squeeze=False).ravel()
        last = {}
        for axes, cell in zip(panels, cells, strict=False):
            block = seeds[seeds["cell"] == cell]
            last[cell] = int(block[GENERATION].max())
            final = block[block[GENERATION] == last[cell]].sort_values("seed")
            x = np.arange(len(final))
            bottom = np.zeros(len(final))
            for k, column in enumerate(shares):
                values = final[column].fillna(0.0).to_numpy(dtype=float)
                label = column[len("share_") :]
                axes.bar(x, values, 0.8, bottom=bottom, color=f"C{k}", label=label)
                bottom += values
            step = max(1, len(final) // 10)
            axes.set_xticks(x[::step], [str(s) for s in final["seed"]][::step])
            axes.set_xlabel("seed (replicate)")
            axes.set_ylim(0, 1.0)
            axes.set_ylabel("share of the population")
            axes.set_title(textwrap.fill(f"{cell}, generation {last[cell]}", 60))
        for axes in panels[len(cells) :]:
            axes.set_visible(False)
        fs.suptitle(figure, "strategy shares in the last generation, a bar per seed")
        fs.figure_legend(figure, title="strategy", ncols=4)
        return fs.save(figure, directory / FINAL_FIGURE)


def band(axes: Any, block: pd.DataFrame, column: str, label: str) -> Any:
    """The mean line with its interval band; returns its colour."""
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))  # generations are whole
    (line,) = axes.plot(block[GENERATION], block[column], marker=".", label=label)
    axes.fill_between(
        block[GENERATION],
        block[f"{column}_low"],
        block[f"{column}_high"],
        color=line.get_color(),
        alpha=0.2,
        linewidth=0,
    )
    return line.get_color()


def generations_report(
    recs: Sequence[EpisodeRecord], out: Path | None
) -> list[tuple[str, pd.DataFrame, str, list[Path]]]:
    """The report's generations section, ``(title, table, note, figures)``, with
    ``generations.csv`` and the figures written to ``out``; none without evolution records."""
    table = generations_table(recs)
    if table.empty:
        return []
    figures = []
    if out is not None:
        table.to_csv(out / "generations.csv", index=False)
        seeds = seeds_table(recs)
        shares = sorted(c for c in seeds.columns if c.startswith("share_"))
        seeds[shares] = seeds[shares].fillna(0.0)
        seeds = in_order(seeds.sort_values([GENERATION, "seed"]))
        figures = plot_generations(table, out, seeds)
        culture = seeds["donated_fraction"].notna().any()
        columns = ["cell", GENERATION, "seed", "cooperation", "mean_resources", *shares]
        if culture:
            columns = ["cell", GENERATION, "seed", "mean_resources", "donated_fraction", "ceiling"]
        seeds[columns].to_csv(out / SEEDS_TABLE, index=False)
        if culture:
            figures.append(plot_seeds(seeds, out))
        else:
            figures.append(plot_final_shares(seeds, out))
    columns = ["cell", GENERATION, "n", "cooperation", "cooperation_se", "mean_resources"]
    if table["donated_fraction"].notna().any():  # the culture donor game: no cooperate/defect
        columns = [
            "cell",
            GENERATION,
            "n",
            "mean_resources",
            "mean_resources_se",
            "donated_fraction",
            "ceiling",
        ]
    shown = table[columns]
    note = (
        "per cell and generation, mean and se (ddof=1) over seeds; every strategy's share and "
        "the 95% bootstrap intervals in generations.csv"
    )
    return [("generations", shown, note, figures)]
