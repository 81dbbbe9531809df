"""Figures of the analysis, drawn from its tables with matplotlib's Agg canvas through
:class:`~matplotlib.figure.Figure` (no pyplot state)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure


def plot_cooperation(tables: Mapping[str, pd.DataFrame], directory: str | Path) -> list[Path]:
    """Write the figures of the cooperation tables
    (:func:`~socialsim.analysis.tables.cooperation_report`) as PNG files in ``directory`` and
    return their paths:

    * ``cooperation_by_round.png``: cooperation rate by round (mean and standard error over
      episodes), one line per cell (donation, PD);
    * ``returns_by_kind.png``: mean return per agent kind, one group of horizontal bars per cell.

    Figures grow with the number of cells so that a large grid stays readable.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    if not tables["rounds"].empty:
        written.append(_plot_rounds(tables["rounds"], directory / "cooperation_by_round.png"))
    kinds = tables["kinds"]
    if not kinds.empty and "return" in kinds.columns:
        written.append(_plot_returns(kinds, directory / "returns_by_kind.png"))
    return written


def _plot_rounds(rounds: pd.DataFrame, path: Path) -> Path:
    cells = sorted(rounds["cell"].unique())
    # The legend sits under the axes; each cell's line of legend adds height.
    figure = Figure(figsize=(9, 4 + 0.2 * len(cells)), layout="constrained")
    axes = figure.add_subplot()
    for index, cell in enumerate(cells):
        block = rounds[rounds["cell"] == cell]
        style = ("-", "--", ":", "-.")[index // 10 % 4]  # the colour cycle repeats after 10
        axes.plot(block["round"], block["cooperation_rate"], style, marker=".", label=cell)
        if len(cells) <= 8:  # bands of many cells hide each other
            low = block["cooperation_rate"] - block["cooperation_rate_se"]
            high = block["cooperation_rate"] + block["cooperation_rate_se"]
            axes.fill_between(block["round"], low, high, alpha=0.2)
    axes.set_xlabel("round")
    axes.set_ylabel("cooperation rate")
    axes.set_ylim(-0.05, 1.05)
    figure.legend(
        loc="outside lower center", fontsize="x-small", ncols=1 if len(cells) > 4 else len(cells)
    )
    figure.savefig(path, dpi=120)
    return path


def _plot_returns(kinds: pd.DataFrame, path: Path) -> Path:
    cells = sorted(kinds["cell"].unique())
    kind_names = sorted(kinds["kind"].astype(str).unique())
    height = 0.8 / max(1, len(kind_names))
    bars = len(cells) * max(2, len(kind_names))
    figure = Figure(figsize=(12, min(40.0, 1.5 + 0.1 * bars)), layout="constrained")
    axes = figure.add_subplot()
    for k, kind in enumerate(kind_names):
        block = kinds[kinds["kind"].astype(str) == kind].set_index("cell").reindex(cells)
        positions = np.arange(len(cells)) + k * height
        axes.barh(positions, block["return"], height, xerr=block["return_se"], label=kind)
    axes.set_yticks(np.arange(len(cells)) + 0.4 - height / 2, cells, fontsize="x-small")
    axes.invert_yaxis()  # first cell on top
    axes.set_xlabel("mean return per agent")
    axes.axvline(0.0, color="black", linewidth=0.5)
    figure.legend(loc="outside right upper", fontsize="small")
    figure.savefig(path, dpi=120)
    return path
