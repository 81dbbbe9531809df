"""The gossip games' heat maps, drawn with matplotlib's Agg canvas (no pyplot state):

* ``tones_by_action.png``: the share of each tone published about a move, by the move, a row
  per cell;
* ``reputation.png``: each agent's net tone valence received so far, by round, a panel per
  cell with gossip.

Cells are in :mod:`~socialsim.analysis.order`'s order (numbers as numbers).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from socialsim.analysis.figure_style import COLUMN, FULL, fill, panel_grid, save, suptitle
from socialsim.analysis.order import ordered
from socialsim.analysis.stats import number
from socialsim.envs.gossip.protocol import TONES

# -- tones ----------------------------------------------------------------------------------------


def plot_tones(by_action: pd.DataFrame, path: Path) -> Path:
    cells = ordered(by_action["cell"])
    actions = sorted(by_action["action"].unique())
    matrix = np.full((len(cells), len(actions) * len(TONES)), np.nan)
    totals = []
    for i, cell in enumerate(cells):
        totals.append(int(by_action.loc[by_action["cell"] == cell, "count"].sum()))
        for a, action in enumerate(actions):
            part = by_action[(by_action["cell"] == cell) & (by_action["action"] == action)]
            counts = part.set_index("tone")["count"].reindex(TONES).fillna(0).to_numpy()
            if counts.sum() > 0:
                matrix[i, a * len(TONES) : (a + 1) * len(TONES)] = counts / counts.sum()
    figure = Figure(figsize=(FULL, 1.5 + 0.2 * len(cells)), layout="constrained")
    axes = figure.add_subplot()
    image = axes.imshow(matrix, aspect="auto", cmap="viridis", vmin=0, vmax=1)
    axes.set_xticks(
        range(matrix.shape[1]),
        [f"{tone} after {action}" for action in actions for tone in TONES],
        rotation=90,  # upright labels side by side: slanted ones' boxes overlap
    )
    names = [fill(f"{c} (n = {t} tones)", figure, 3) for c, t in zip(cells, totals, strict=True)]
    lines = max(name.count("\n") + 1 for name in names)
    # an inch of map at least: the colour bar's label is as long as the map is high
    figure.set_figheight(1.5 + max(1.0, (0.1 + 0.1 * lines) * len(cells)))
    axes.set_yticks(range(len(cells)), names)
    for a in range(1, len(actions)):
        axes.axvline(a * len(TONES) - 0.5, color="white", linewidth=2)
    for (i, j), share in np.ndenumerate(matrix if len(cells) <= 20 else []):  # room to read
        if share == share:
            colour = "black" if share > 0.6 else "white"
            axes.text(j, i, number(share, 2), ha="center", va="center", fontsize=5, color=colour)
    for i in range(len(cells)):
        if np.isnan(matrix[i]).all():
            axes.text(matrix.shape[1] / 2 - 0.5, i, "no gossip published", ha="center", va="center")
    figure.colorbar(image, ax=axes, label="share of tones\nabout that move")
    suptitle(figure, "Tones published about a move, by what the donor did (all episodes pooled)")
    return save(figure, path)


#: the reputation figure draws this many cells at most (a heat map each)
MAX_MAPS = 6


def plot_reputation(reputation: pd.DataFrame, path: Path, note: str) -> Path:
    every = ordered(reputation["cell"])
    gossiped = [c for c in every if reputation.loc[reputation["cell"] == c, "reputation"].any()]
    silent = len(every) - len(gossiped)
    cells = gossiped[:MAX_MAPS]
    limit = max(1.0, float(reputation["reputation"].abs().max()))
    nrows, ncols = panel_grid(len(cells), 2)
    figure = Figure(
        figsize=(COLUMN if ncols == 1 else FULL, 0.9 + 1.7 * nrows), layout="constrained"
    )
    panels = figure.subplots(nrows, ncols, squeeze=False).ravel()
    image = None
    for axes, cell in zip(panels, cells, strict=False):
        block = reputation[reputation["cell"] == cell]
        matrix = block.pivot(index="agent", columns="round", values="reputation")
        matrix = matrix.reindex(ordered(matrix.index))  # agent_2 before agent_10
        image = axes.imshow(
            matrix.to_numpy(dtype=float), aspect="auto", cmap="RdBu", vmin=-limit, vmax=limit
        )
        every_nth = -(-len(matrix.index) // 10)  # at most 10 names on a panel's height
        named = list(range(0, len(matrix.index), every_nth))
        axes.set_yticks(named, [matrix.index[i] for i in named], fontsize=5)
        step = max(1, len(matrix.columns) // 6)
        ticks = list(range(0, len(matrix.columns), step))
        axes.set_xticks(ticks, [matrix.columns[i] for i in ticks])
        axes.set_xlabel("round")
        axes.set_title(fill(cell, figure, ncols, 0.7))
    for axes in panels[len(cells) :]:
        axes.set_visible(False)
    if image is not None:
        figure.colorbar(image, ax=list(panels[: len(cells)]), label="net valence", shrink=0.8)
    skipped = f" ({silent} cells without gossip not drawn)" if silent else ""
    if len(gossiped) > len(cells):
        skipped += (
            f"; the first {len(cells)} of {len(gossiped)} drawn (every cell in "
            "cooperation_reputation_by_round.csv)"
        )
    suptitle(
        figure,
        "Reputation by round: net tone valence received so far\n+1 praising; -1 mocking, "
        f"complaint or criticism; mean over episodes, {note}\nevery cell with gossip{skipped}",
    )
    return save(figure, path)
