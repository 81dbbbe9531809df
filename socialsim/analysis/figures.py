"""Figures of the gossip games, drawn from the analysis's tables with matplotlib's Agg canvas
through :class:`~matplotlib.figure.Figure` (no pyplot state). Decrypto's are in
:mod:`~socialsim.analysis.decrypto_figures`.

Every figure has a title and labelled axes, and stays readable for any grid: the grid's factors
that vary become facets (:func:`facets`: gossip on/off side by side as columns, the agents'
kind as the hue, the other factors as rows), series that are identical to the last bit are
drawn once and labelled ``a = b``, and the entrant's joining round is marked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from socialsim.analysis.tables import factor_name, readable
from socialsim.envs.gossip.protocol import TONES

DPI = 110


def plot_cooperation(
    tables: Mapping[str, pd.DataFrame],
    directory: str | Path,
    identical: Sequence[Sequence[str]] = (),
) -> list[Path]:
    """Write the gossip games' figures (:func:`~socialsim.analysis.tables.cooperation_report`)
    as PNG files in ``directory`` and return their paths:

    * ``cooperation_by_round.png``: cooperation among residents by round, mean and standard
      error band over episodes (donation, PD);
    * ``returns_by_kind.png``: mean return per agent kind and cell;
    * ``tones_by_action.png``: the share of each tone published about a move, by the move;
    * ``entrant.png``: the residents' cooperation towards the entrant before and after its
      first gossiped defection, and the entrant's return beside the residents'.

    ``identical`` lists groups of cells whose results are the same (titles say so).
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    rounds = tables["rounds"]
    if not rounds.empty:
        joins = _entrant_rounds(tables["cells"])
        written.append(_plot_rounds(rounds, joins, directory / "cooperation_by_round.png"))
    kinds = tables["kinds"]
    if not kinds.empty and "return" in kinds.columns:
        written.append(_plot_returns(kinds, directory / "returns_by_kind.png"))
    by_action = tables.get("tones_by_action")
    if by_action is not None and not by_action.empty and by_action["count"].sum() > 0:
        written.append(_plot_tones(by_action, directory / "tones_by_action.png"))
    cells = tables["cells"]
    if "cooperation_to_entrant" in cells.columns and cells["cooperation_to_entrant"].notna().any():
        written.append(_plot_entrant(cells, kinds, directory / "entrant.png"))
    return written


# -- facets ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Facets:
    """Which grid factors (``cell.<path>`` columns) make the columns, the hue and the rows."""

    column: str | None
    hue: str | None
    rows: tuple[str, ...]

    def label(self, factor: str | None, value: str) -> str:
        return f"{factor_name(factor[5:])}={readable(value)}" if factor else ""

    def row_label(self, block: pd.Series | Mapping) -> str:
        return ", ".join(self.label(f, str(block[f])) for f in self.rows)


def facets(frame: pd.DataFrame) -> Facets:
    """The population's strategy (a ``seats.*`` factor: kind or norm) as the hue, gossip (or
    the first other factor) as columns, every other factor that varies as rows."""
    factors = [
        c for c in frame.columns if c.startswith("cell.") and frame[c].map(str).nunique() > 1
    ]
    population = [f for f in factors if f.startswith("cell.seats.*.")]
    hue = population[0] if population else None
    column = next((f for f in factors if f.endswith("gossip")), None)
    if column is None:
        column = next((f for f in factors if f != hue), None)
    rest = [f for f in factors if f not in (column, hue)]
    if hue is None and rest:
        hue = rest.pop()
    return Facets(column, hue, tuple(rest))


def _values(frame: pd.DataFrame, factor: str | None) -> list[str]:
    return sorted(frame[factor].map(str).unique()) if factor else [""]


def _select(frame: pd.DataFrame, factor: str | None, value: str) -> pd.DataFrame:
    return frame[frame[factor].map(str) == value] if factor else frame


def _entrant_rounds(cells: pd.DataFrame) -> dict[str, float]:
    if "entrant_round" not in cells.columns:
        return {}
    return {c: r for c, r in zip(cells["cell"], cells["entrant_round"], strict=True) if r == r}


def _row_blocks(frame: pd.DataFrame, f: Facets) -> list[tuple[str, pd.DataFrame]]:
    if not f.rows:
        return [("", frame)]
    return [
        (f.row_label(dict(zip(f.rows, key if isinstance(key, tuple) else (key,), strict=True))), b)
        for key, b in frame.groupby(list(f.rows), sort=True)
    ]


# -- cooperation by round -------------------------------------------------------------------------


def _plot_rounds(rounds: pd.DataFrame, joins: Mapping[str, float], path: Path) -> Path:
    column = "cooperation_residents" if "cooperation_residents" in rounds else "cooperation_rate"
    if "cooperation_to_entrant" in rounds and rounds["cooperation_to_entrant"].notna().any():
        title = (
            "Cooperation by round: among residents (solid, ± SE over episodes) "
            "and residents towards the entrant (dotted)"
        )
    else:
        title = "Cooperation by round (mean ± SE over episodes)"
    return plot_over_rounds(
        rounds, column, "share of choices that cooperate", title, joins, path, (-0.05, 1.05)
    )


def plot_over_rounds(
    rounds: pd.DataFrame,
    column: str,
    ylabel: str,
    title: str,
    joins: Mapping[str, float],
    path: Path,
    ylim: tuple[float, float] | None = None,
) -> Path:
    """``column`` by round, faceted (:func:`facets`), with its ``<column>_se`` band."""
    f = facets(rounds)
    columns = _values(rounds, f.column)
    rows = _row_blocks(rounds, f)
    figure = Figure(figsize=(5.6 * len(columns), 0.8 + 3.4 * len(rows)), layout="constrained")
    grid = figure.subplots(len(rows), len(columns), squeeze=False, sharey=True)
    for r, (row_label, row_block) in enumerate(rows):
        for c, col_value in enumerate(columns):
            axes = grid[r][c]
            block = _select(row_block, f.column, col_value)
            _draw_series(axes, block, f, column)
            marks = sorted({joins[cell] for cell in block["cell"].unique() if cell in joins})
            for mark in marks:
                axes.axvline(mark, color="grey", linestyle=":", linewidth=1)
                axes.annotate(
                    " entrant joins",
                    (mark, 0.55),
                    fontsize="x-small",
                    color="grey",
                    rotation=90,
                    xycoords=("data", "axes fraction"),
                )
            title_text = ", ".join(t for t in (f.label(f.column, col_value), row_label) if t)
            axes.set_title(title_text or "all episodes", fontsize="small")
            if ylim is not None:
                axes.set_ylim(*ylim)
            axes.set_xlabel("round")
            if c == 0:
                axes.set_ylabel(ylabel)
            axes.grid(alpha=0.3)
    figure.suptitle(title)
    figure.savefig(path, dpi=DPI)
    return path


def plot_dynamics(
    dynamics: Mapping[str, pd.DataFrame],
    cells: pd.DataFrame,
    directory: str | Path,
) -> list[Path]:
    """``gini_by_round.png`` (the Gini coefficient of resources after each round),
    ``reputation_accuracy_by_round.png`` (where gossip was published) and ``reputation.png`` (each agent's net tone valence received so far, by round, for the first
    cells of the grid) from :func:`~socialsim.analysis.tables.dynamics_report`."""
    directory = Path(directory)
    written = []
    table = dynamics["dynamics"]
    if not table.empty:
        written.append(
            plot_over_rounds(
                table,
                "gini",
                "Gini coefficient of resources",
                "Inequality by round: Gini of the agents' resources after each round "
                "(mean ± SE over episodes)",
                _entrant_rounds(cells),
                directory / "gini_by_round.png",
            )
        )
    if not table.empty and table["reputation_accuracy"].notna().any():
        written.append(
            plot_over_rounds(
                table.dropna(subset=["reputation_accuracy"]),
                "reputation_accuracy",
                "share of tones that agree with the move",
                "Reputation accuracy by round: non-neutral tones whose valence matches what "
                "the agent did (mean ± SE over episodes)",
                _entrant_rounds(cells),
                directory / "reputation_accuracy_by_round.png",
                (-0.05, 1.05),
            )
        )
    reputation = dynamics["reputation"]
    if not reputation.empty and reputation["reputation"].abs().sum() > 0:
        written.append(_plot_reputation(reputation, directory / "reputation.png"))
    return written


REPUTATION_PANELS = 6


def _plot_reputation(reputation: pd.DataFrame, path: Path) -> Path:
    cells = [
        c
        for c in sorted(reputation["cell"].unique())
        if reputation.loc[reputation["cell"] == c, "reputation"].abs().sum() > 0
    ][:REPUTATION_PANELS]
    limit = max(1.0, float(reputation["reputation"].abs().max()))
    figure = Figure(figsize=(12, 0.6 + 2.6 * len(cells)), layout="constrained")
    panels = figure.subplots(len(cells), 1, squeeze=False)[:, 0]
    for axes, cell in zip(panels, cells, strict=True):
        block = reputation[reputation["cell"] == cell]
        matrix = block.pivot(index="agent", columns="round", values="reputation")
        image = axes.imshow(
            matrix.to_numpy(dtype=float), aspect="auto", cmap="RdBu", vmin=-limit, vmax=limit
        )
        axes.set_yticks(range(len(matrix.index)), matrix.index, fontsize="x-small")
        step = max(1, len(matrix.columns) // 12)
        ticks = list(range(0, len(matrix.columns), step))
        axes.set_xticks(ticks, [matrix.columns[i] for i in ticks], fontsize="x-small")
        axes.set_xlabel("round")
        axes.set_title(cell, fontsize="small")
        figure.colorbar(image, ax=axes, label="net valence", shrink=0.9)
    figure.suptitle(
        "Reputation by round: net tone valence received so far\n(+1 praising, -1 mocking, "
        f"complaint or criticism; mean over episodes; the first {len(cells)} cells with gossip)"
    )
    figure.savefig(path, dpi=DPI)
    return path


def _draw_series(axes, block: pd.DataFrame, f: Facets, column: str) -> None:
    """One line per hue value (cooperation among residents, solid with its SE band; towards
    the entrant, dotted, where it has choices), identical lines drawn once under the joined
    label."""
    towards = "cooperation_to_entrant"
    series: dict[tuple, list[str]] = {}
    data: dict[tuple, pd.DataFrame] = {}
    for hue_value in _values(block, f.hue):
        part = _select(block, f.hue, hue_value).sort_values("round")
        if part.empty:
            continue
        key = tuple(np.round(part[column].fillna(-1).to_numpy(dtype=float), 12))
        key += tuple(part["round"])
        if towards in part:
            key += tuple(np.round(part[towards].fillna(-1).to_numpy(dtype=float), 12))
        series.setdefault(key, []).append(readable(hue_value) if f.hue else "all")
        data[key] = part
    for index, (key, names) in enumerate(series.items()):
        part = data[key]
        label = " = ".join(names) + (" (identical)" if len(names) > 1 else "")
        x = part["round"].to_numpy()
        y = part[column].to_numpy(dtype=float)
        se = part.get(f"{column}_se", part.get("cooperation_rate_se"))
        (line,) = axes.plot(x, y, "-", marker=".", markersize=3, label=label, zorder=3 - index)
        if se is not None:
            se = se.to_numpy(dtype=float)
            axes.fill_between(x, y - se, y + se, alpha=0.15, color=line.get_color())
        if towards in part and part[towards].notna().any():
            seen = part[part[towards].notna()]
            axes.plot(
                seen["round"],
                seen[towards],
                ":",
                marker="v",
                markersize=4,
                color=line.get_color(),
                label=f"{label} → entrant",
            )
    axes.legend(
        title=factor_name(f.hue[5:]) if f.hue else None,
        title_fontsize="x-small",
        fontsize="x-small",
        loc="upper center",
        bbox_to_anchor=(0.5, -0.2),
        frameon=False,
    )


# -- returns --------------------------------------------------------------------------------------


def _plot_returns(kinds: pd.DataFrame, path: Path) -> Path:
    f = facets(kinds)
    columns = _values(kinds, f.column)
    others = [x for x in (*f.rows, f.hue) if x]
    labels = sorted({" | ".join(readable(str(r[x])) for x in others) for _, r in kinds.iterrows()})
    kind_names = sorted(kinds["kind"].map(str).unique())
    height = 0.8 / max(1, len(kind_names))
    figure = Figure(
        figsize=(5.5 * len(columns) + 2, 1.6 + 0.28 * len(labels) * max(1, len(kind_names)) / 1.5),
        layout="constrained",
    )
    grid = figure.subplots(1, len(columns), squeeze=False, sharey=True, sharex=True)
    for c, col_value in enumerate(columns):
        axes = grid[0][c]
        block = _select(kinds, f.column, col_value).copy()
        block["label"] = [
            " | ".join(readable(str(r[x])) for x in others) for _, r in block.iterrows()
        ]
        for k, kind in enumerate(kind_names):
            part = block[block["kind"].map(str) == kind].set_index("label").reindex(labels)
            positions = np.arange(len(labels)) + k * height
            axes.barh(
                positions, part["return"], height, xerr=part["return_se"], label=kind, capsize=2
            )
        axes.set_yticks(np.arange(len(labels)) + 0.4 - height / 2, labels, fontsize="x-small")
        axes.axvline(0.0, color="black", linewidth=0.5)
        axes.set_xlabel("mean return per agent (resources)")
        axes.set_title(f.label(f.column, col_value) or "all episodes", fontsize="small")
    grid[0][0].invert_yaxis()
    if others:
        grid[0][0].set_ylabel(" | ".join(factor_name(x[5:]) for x in others), fontsize="small")
    # outside the axes, so that no bar hides behind it
    figure.legend(
        *grid[0][0].get_legend_handles_labels(),
        title="agent kind",
        fontsize="x-small",
        title_fontsize="x-small",
        loc="outside right upper",
        frameon=False,
    )
    figure.suptitle("Mean return per agent by kind (± SE over agents)")
    figure.savefig(path, dpi=DPI)
    return path


# -- tones ----------------------------------------------------------------------------------------


def _plot_tones(by_action: pd.DataFrame, path: Path) -> Path:
    cells = sorted(by_action["cell"].unique())
    actions = sorted(by_action["action"].unique())
    matrix = np.full((len(cells), len(actions) * len(TONES)), np.nan)
    for i, cell in enumerate(cells):
        for a, action in enumerate(actions):
            part = by_action[(by_action["cell"] == cell) & (by_action["action"] == action)]
            counts = part.set_index("tone")["count"].reindex(TONES).fillna(0).to_numpy()
            if counts.sum() > 0:
                matrix[i, a * len(TONES) : (a + 1) * len(TONES)] = counts / counts.sum()
    figure = Figure(figsize=(11, 2.2 + 0.26 * len(cells)), layout="constrained")
    axes = figure.add_subplot()
    image = axes.imshow(matrix, aspect="auto", cmap="viridis", vmin=0, vmax=1)
    axes.set_xticks(
        range(matrix.shape[1]),
        [f"{tone}\nafter {action}" for action in actions for tone in TONES],
        fontsize="x-small",
        rotation=45,
        ha="right",
    )
    axes.set_yticks(range(len(cells)), cells, fontsize="x-small")
    for a in range(1, len(actions)):
        axes.axvline(a * len(TONES) - 0.5, color="white", linewidth=2)
    for i in range(len(cells)):
        if np.isnan(matrix[i]).all():
            axes.text(matrix.shape[1] / 2 - 0.5, i, "no gossip published", ha="center", va="center")
    figure.colorbar(image, ax=axes, label="share of the tones about that move")
    axes.set_title("Tones published about a move, by what the donor actually did")
    figure.savefig(path, dpi=DPI)
    return path


# -- the entrant ----------------------------------------------------------------------------------


def _plot_entrant(cells: pd.DataFrame, kinds: pd.DataFrame, path: Path) -> Path:
    with_entrant = cells[cells["cooperation_to_entrant"].notna()].sort_values("cell")
    labels = list(with_entrant["cell"])
    y = np.arange(len(labels))
    figure = Figure(figsize=(13, 2.6 + 0.3 * len(labels)), layout="constrained")
    left, right = figure.subplots(1, 2, sharey=True)
    for offset, (column, name) in enumerate(
        (("cooperation_to_entrant_before", "before"), ("cooperation_to_entrant_after", "after"))
    ):
        values = with_entrant.get(column, pd.Series(np.nan, index=with_entrant.index))
        left.barh(
            y + 0.4 * offset, values.fillna(0), 0.4, label=f"{name} its first gossiped defection"
        )
        for yy, v in zip(y, values, strict=True):
            text = "n/a" if v != v else f"{v:.2f}"
            where = 0.01 if v != v else min(float(v) + 0.01, 0.95)
            left.annotate(text, (where, yy + 0.4 * offset), fontsize="xx-small", va="center")
    left.set_xlim(0, 1.05)
    left.set_xlabel("share of residents' choices towards the entrant that were cooperation")
    left.set_title("Treatment of the entrant", fontsize="small")
    left.set_yticks(y + 0.2, labels, fontsize="x-small")
    left.invert_yaxis()
    left.legend(fontsize="x-small", loc="upper center", bbox_to_anchor=(0.5, -0.12), ncols=2)
    entrant = kinds[kinds["kind"] == "entrant"].set_index("cell")["return"]
    residents = kinds[kinds["kind"] != "entrant"].groupby("cell")["return"].mean()
    right.barh(y, entrant.reindex(labels), 0.4, label="entrant", color="tab:red")
    right.barh(y + 0.4, residents.reindex(labels), 0.4, label="residents (mean)", color="tab:blue")
    right.axvline(0.0, color="black", linewidth=0.5)
    right.set_xlabel("mean return per agent (resources)")
    right.set_title("Does defecting pay?", fontsize="small")
    right.legend(fontsize="x-small", loc="upper center", bbox_to_anchor=(0.5, -0.12), ncols=2)
    figure.suptitle("The always-defect entrant: its treatment and its payoff")
    figure.savefig(path, dpi=DPI)
    return path
