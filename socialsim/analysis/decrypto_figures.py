"""Decrypto's figures, from the report's tables (matplotlib Agg through
:class:`~matplotlib.figure.Figure`, no pyplot state):

* ``decrypto_competitive.png``: the paper's competitive heatmap, team (encoder = decoder) x
  interceptor, coloured by the interception-loss rate, each cell reading the rate ± SEM over
  seed blocks and the average turns ± SEM;
* ``decrypto_cooperative.png``: the cooperative heatmap, encoder x decoder, coloured by the
  miscommunication-loss rate, one panel per interceptor;
* ``decrypto_outcomes.png``: the endings' shares per cell, and IR% / MR% per cell;
* ``decrypto_tom.png``: the theory-of-mind scores, when a probe ran.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from socialsim.analysis.stats import number
from socialsim.envs.decrypto.protocol import ENDINGS

DPI = 110


def plot_decrypto(
    outcomes: pd.DataFrame,
    competitive: pd.DataFrame,
    cooperative: pd.DataFrame,
    scores: Mapping[str, Mapping[str, Any]],
    directory: str | Path,
) -> list[Path]:
    """Write the Decrypto figures in ``directory``; return their paths."""
    directory = Path(directory)
    written = []
    if not competitive.empty:
        path = directory / "decrypto_competitive.png"
        figure = Figure(figsize=(7, 5.5), layout="constrained")
        _heatmap(
            figure.add_subplot(),
            figure,
            competitive,
            "team",
            "interceptor",
            "interception-loss rate",
        )
        figure.suptitle(
            "Competitive grid: interception-loss rate (± SEM over seed blocks)\n"
            "team = encoder = decoder; second line: average turns ± SEM"
        )
        figure.savefig(path, dpi=DPI)
        written.append(path)
    if not cooperative.empty:
        path = directory / "decrypto_cooperative.png"
        interceptors = sorted(cooperative["interceptor"].unique())
        figure = Figure(figsize=(6.5 * len(interceptors), 5.5), layout="constrained")
        panels = figure.subplots(1, len(interceptors), squeeze=False)[0]
        for axes, eve in zip(panels, interceptors, strict=True):
            block = cooperative[cooperative["interceptor"] == eve]
            _heatmap(axes, figure, block, "encoder", "decoder", "miscommunication-loss rate")
            axes.set_title(f"interceptor: {eve}", fontsize="small")
        figure.suptitle(
            "Cooperative grid: miscommunication-loss rate (± SEM over seed blocks)\n"
            "second line: average turns ± SEM"
        )
        figure.savefig(path, dpi=DPI)
        written.append(path)
    if not outcomes.empty:
        written.append(_plot_outcomes(outcomes, directory / "decrypto_outcomes.png"))
    if scores:
        written.append(_plot_tom(scores, directory / "decrypto_tom.png"))
    return written


def _heatmap(axes, figure, frame: pd.DataFrame, row: str, column: str, what: str) -> None:
    rows = sorted(frame[row].unique())
    columns = sorted(frame[column].unique())
    rate = frame.pivot(index=row, columns=column, values="loss_rate").reindex(rows)[columns]
    image = axes.imshow(rate.to_numpy(dtype=float), cmap="Reds", vmin=0, vmax=1)
    indexed = frame.set_index([row, column])
    for i, a in enumerate(rows):
        for j, b in enumerate(columns):
            if (a, b) not in indexed.index:
                axes.text(j, i, "no games", ha="center", va="center", fontsize="small")
                continue
            cell = indexed.loc[(a, b)]
            text = (
                f"{number(cell['loss_rate'], 3)} ± {number(cell['loss_rate_sem'], 2)}\n"
                f"{number(cell['avg_turns'], 3)} ± {number(cell['avg_turns_sem'], 2)} turns\n"
                f"({int(cell['games'])} games)"
            )
            dark = cell["loss_rate"] > 0.6
            axes.text(
                j,
                i,
                text,
                ha="center",
                va="center",
                fontsize="small",
                color="white" if dark else "black",
            )
    axes.set_xticks(range(len(columns)), columns, rotation=20, ha="right")
    axes.set_yticks(range(len(rows)), rows)
    axes.set_xlabel(column)
    axes.set_ylabel(row)
    figure.colorbar(image, ax=axes, label=f"{what} (share of games)", shrink=0.8)


def _plot_outcomes(outcomes: pd.DataFrame, path: Path) -> Path:
    cells = list(outcomes["matchup"] if "matchup" in outcomes else outcomes["cell"])
    y = np.arange(len(cells))
    figure = Figure(figsize=(13, 2.6 + 0.4 * len(cells)), layout="constrained")
    left, right = figure.subplots(1, 2, sharey=True)
    games = outcomes["games"].to_numpy(dtype=float)
    start = np.zeros(len(cells))
    for ending in ENDINGS:
        share = outcomes.get(ending, pd.Series(0, index=outcomes.index)).to_numpy(dtype=float)
        share = share / np.where(games > 0, games, 1)
        left.barh(y, share, left=start, label=ending)
        start += share
    left.set_xlim(0, 1)
    left.set_xlabel("share of games")
    left.set_yticks(y, cells, fontsize="small")
    left.set_ylabel("encoder + decoder vs interceptor")
    left.invert_yaxis()
    left.legend(
        title="ending",
        fontsize="x-small",
        ncols=len(ENDINGS),
        loc="upper center",
        bbox_to_anchor=(0.5, -0.12),
    )
    left.set_title("How the games ended", fontsize="small")
    right.barh(y - 0.2, outcomes["interception_rate"], 0.4, label="IR (interceptions)")
    right.barh(y + 0.2, outcomes["miscommunication_rate"], 0.4, label="MR (miscommunications)")
    right.set_xlim(0, 100)
    right.set_xlabel("% of the two tokens that end a game, per game")
    right.set_title("IR% and MR%", fontsize="small")
    right.legend(fontsize="x-small", ncols=2, loc="upper center", bbox_to_anchor=(0.5, -0.12))
    figure.suptitle("Decrypto outcomes per cell")
    figure.savefig(path, dpi=DPI)
    return path


def _plot_tom(scores: Mapping[str, Mapping[str, Any]], path: Path) -> Path:
    """One row per score, one bar per cell (all cells pooled when there is one)."""
    groups = dict(scores.get("by_cell") or {"all episodes": scores})
    names: list[str] = []
    for table in groups.values():
        for probe, values in table.items():
            for name in values:
                label = f"{probe}: {name}".replace("_", " ")
                counts = "episodes" in name or name == "answered" or name.endswith("_se")
                if not counts and label not in names:
                    names.append(label)
    y = np.arange(len(names))
    height = 0.8 / len(groups)
    figure = Figure(figsize=(10, 1.8 + 0.3 * len(names) * len(groups)), layout="constrained")
    axes = figure.add_subplot()
    for g, (cell, table) in enumerate(groups.items()):
        values, errors = [], []
        for label in names:
            probe, _, name = label.partition(": ")
            scores = table.get(probe.replace(" ", "_"), {})
            value = scores.get(name.replace(" ", "_"))
            error = scores.get(name.replace(" ", "_") + "_se")
            values.append(np.nan if value is None else float(value))
            errors.append(np.nan if error is None else float(error))
        positions = y + g * height
        axes.barh(
            positions,
            np.nan_to_num(values),
            height,
            xerr=np.nan_to_num(errors),
            capsize=2,
            error_kw={"linewidth": 0.8},
            label=cell,
        )
        for yy, v, e in zip(positions, values, errors, strict=True):
            axes.annotate(
                number(v, 3),
                (min(np.nan_to_num(v) + np.nan_to_num(e) + 0.01, 0.93), yy),
                va="center",
                fontsize="x-small",
            )
    axes.set_yticks(y + 0.4 - height / 2, names, fontsize="x-small")
    axes.invert_yaxis()
    axes.set_xlim(0, 1)
    axes.set_xlabel("score (share of answered turns, mean ± SE over episodes)")
    if len(groups) > 1:
        axes.legend(fontsize="x-small", loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=2)
    axes.set_title("Theory-of-mind scores per cell")
    figure.savefig(path, dpi=DPI)
    return path
