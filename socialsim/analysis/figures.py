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

from socialsim.analysis.figure_style import (
    COLUMN,
    FULL,
    episodes_note,
    figure_legend,
    panel_grid,
    paper,
    save,
    suptitle,
)
from socialsim.analysis.stats import number
from socialsim.analysis.tables import factor_name, readable
from socialsim.envs.gossip.protocol import TONES


def plot_cooperation(
    tables: Mapping[str, pd.DataFrame],
    directory: str | Path,
    identical: Sequence[Sequence[str]] = (),  # kept for callers; the series say it themselves
) -> list[Path]:
    """Write the gossip games' figures (:func:`~socialsim.analysis.tables.cooperation_report`)
    as PNG, PDF and SVG files in ``directory`` and return the PNGs' paths:

    * ``cooperation_by_round.png``: cooperation among residents by round, mean and standard
      error band over episodes (donation, PD);
    * ``returns_by_kind.png``: mean return per agent kind and cell;
    * ``tones_by_action.png``: the share of each tone published about a move, by the move;
    * ``entrant.png``: the residents' cooperation towards the entrant before and after its
      first gossiped defection, and the entrant's return beside the residents'.

    Series identical to the last bit are drawn once, their labels joined.
    """
    with paper():
        return _plot_cooperation(tables, Path(directory))


def _plot_cooperation(tables: Mapping[str, pd.DataFrame], directory: Path) -> list[Path]:
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
    title = "Cooperation by round among residents (mean ± SE)"
    if "cooperation_to_entrant" in rounds and rounds["cooperation_to_entrant"].notna().any():
        title += ";\ndotted: residents towards the entrant"
    return plot_over_rounds(
        rounds, column, "share of cooperative choices", title, joins, path, (-0.05, 1.05)
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
    """``column`` by round, faceted (:func:`facets`), with its ``<column>_se`` band; one legend
    below the panels; the episodes per cell stated."""
    f = facets(rounds)
    columns = _values(rounds, f.column)
    rows = _row_blocks(rounds, f)
    width = COLUMN if len(columns) == 1 else FULL
    figure = Figure(figsize=(width, 0.9 + 1.9 * len(rows)), layout="constrained")
    grid = figure.subplots(len(rows), len(columns), squeeze=False, sharey=True)
    for r, (row_label, row_block) in enumerate(rows):
        for c, col_value in enumerate(columns):
            axes = grid[r][c]
            block = _select(row_block, f.column, col_value)
            _draw_series(axes, block, f, column)
            marks = sorted({joins[cell] for cell in block["cell"].unique() if cell in joins})
            for mark in marks:
                axes.axvline(mark, color="grey", linestyle=":", linewidth=0.8)
                axes.annotate(
                    "entrant joins",
                    (mark, 0.05),
                    xytext=(2, 0),
                    textcoords="offset points",
                    fontsize=5,
                    color="grey",
                    rotation=90,
                    va="bottom",
                    xycoords=("data", "axes fraction"),
                )
            title_text = ", ".join(t for t in (f.label(f.column, col_value), row_label) if t)
            axes.set_title(title_text or _constant_label(rounds) or "all episodes")
            if ylim is not None:
                axes.set_ylim(*ylim)
            axes.set_xlabel("round" if r == len(rows) - 1 else "")
            if c == 0:
                axes.set_ylabel(ylabel)
            axes.grid(alpha=0.3, linewidth=0.4)
    figure_legend(figure, factor_name(f.hue[5:]) if f.hue else None)
    note = episodes_note(rounds)
    if note and "\n" not in title:
        title = f"{title[:-1]}; {note})" if title.endswith(")") else f"{title} ({note})"
    elif note:
        title = f"{title}\n{note}"
    suptitle(figure, title)
    return save(figure, path)


def plot_dynamics(
    dynamics: Mapping[str, pd.DataFrame],
    cells: pd.DataFrame,
    directory: str | Path,
) -> list[Path]:
    """``gini_by_round`` (the Gini coefficient of resources after each round),
    ``reputation_accuracy_by_round`` (where gossip was published) and ``reputation`` (each
    agent's net tone valence received so far, by round, every cell with gossip) from
    :func:`~socialsim.analysis.tables.dynamics_report`, as PNG, PDF and SVG."""
    with paper():
        return _plot_dynamics(dynamics, cells, Path(directory))


def _plot_dynamics(
    dynamics: Mapping[str, pd.DataFrame], cells: pd.DataFrame, directory: Path
) -> list[Path]:
    written = []
    table = dynamics["dynamics"]
    if not table.empty:
        written.append(
            plot_over_rounds(
                table.assign(n=_cell_counts(table, cells)),
                "gini",
                "Gini of resources",
                "Inequality by round: Gini of resources after each round (mean ± SE)",
                _entrant_rounds(cells),
                directory / "gini_by_round.png",
            )
        )
    if not table.empty and table["reputation_accuracy"].notna().any():
        written.append(
            plot_over_rounds(
                table.dropna(subset=["reputation_accuracy"]).assign(
                    n=_cell_counts(table.dropna(subset=["reputation_accuracy"]), cells)
                ),
                "reputation_accuracy",
                "tones agreeing with the move",
                "Reputation accuracy by round (mean ± SE):\nnon-neutral tones whose "
                "valence\nmatches the move",
                _entrant_rounds(cells),
                directory / "reputation_accuracy_by_round.png",
                (-0.05, 1.05),
            )
        )
    reputation = dynamics["reputation"]
    if not reputation.empty and reputation["reputation"].abs().sum() > 0:
        note = episodes_note(cells)
        written.append(_plot_reputation(reputation, directory / "reputation.png", note))
    return written


def _constant_label(frame: pd.DataFrame) -> str:
    """The grid factors that do not vary in ``frame`` (a table filtered to some cells)."""
    fixed = [c for c in frame.columns if c.startswith("cell.") and frame[c].nunique() == 1]
    return ", ".join(f"{factor_name(c[5:])}={readable(str(frame[c].iloc[0]))}" for c in fixed)


def _cell_counts(table: pd.DataFrame, cells: pd.DataFrame) -> list[float]:
    if "n" not in cells.columns:
        return [float("nan")] * len(table)
    n = dict(zip(cells["cell"], cells["n"], strict=True))
    return [n.get(cell, float("nan")) for cell in table["cell"]]


def _plot_reputation(reputation: pd.DataFrame, path: Path, note: str) -> Path:
    every = sorted(reputation["cell"].unique())
    cells = [c for c in every if reputation.loc[reputation["cell"] == c, "reputation"].any()]
    silent = len(every) - len(cells)
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
        image = axes.imshow(
            matrix.to_numpy(dtype=float), aspect="auto", cmap="RdBu", vmin=-limit, vmax=limit
        )
        axes.set_yticks(range(len(matrix.index)), matrix.index, fontsize=5)
        step = max(1, len(matrix.columns) // 6)
        ticks = list(range(0, len(matrix.columns), step))
        axes.set_xticks(ticks, [matrix.columns[i] for i in ticks])
        axes.set_xlabel("round")
        axes.set_title(cell)
    for axes in panels[len(cells) :]:
        axes.set_visible(False)
    if image is not None:
        figure.colorbar(image, ax=list(panels[: len(cells)]), label="net valence", shrink=0.8)
    skipped = f" ({silent} cells without gossip not drawn)" if silent else ""
    suptitle(
        figure,
        "Reputation by round: net tone valence received so far\n+1 praising; -1 mocking, "
        f"complaint or criticism; mean over episodes, {note}\nevery cell with gossip{skipped}",
    )
    return save(figure, path)


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
        (line,) = axes.plot(x, y, "-", marker=".", markersize=2, label=label, zorder=3 - index)
        if se is not None:
            se = se.to_numpy(dtype=float)
            axes.fill_between(x, y - se, y + se, alpha=0.15, color=line.get_color())
        if towards in part and part[towards].notna().any():
            seen = part[part[towards].notna()]
            error = seen.get(f"{towards}_se")
            axes.errorbar(
                seen["round"],
                seen[towards],
                yerr=None if error is None else error.fillna(0.0),
                fmt=":",
                marker="v",
                markersize=2.5,
                elinewidth=0.6,
                capsize=1.0,
                color=line.get_color(),
                label=f"{label} → entrant",
            )


# -- returns --------------------------------------------------------------------------------------


def _plot_returns(kinds: pd.DataFrame, path: Path) -> Path:
    f = facets(kinds)
    columns = _values(kinds, f.column)
    others = [x for x in (*f.rows, f.hue) if x]

    def row_name(r) -> str:
        where = ", ".join(f.label(x, str(r[x])) for x in others)
        return f"{where}: {r['kind']}" if where else str(r["kind"])

    kinds = kinds.assign(label=[row_name(r) for _, r in kinds.iterrows()])
    labels = sorted(kinds["label"].unique())
    colours = {k: f"C{i}" for i, k in enumerate(sorted(kinds["kind"].map(str).unique()))}
    figure = Figure(
        figsize=(COLUMN if len(columns) == 1 else FULL, 1.0 + 0.16 * len(labels)),
        layout="constrained",
    )
    grid = figure.subplots(1, len(columns), squeeze=False, sharey=True, sharex=True)
    y = np.arange(len(labels))
    for c, col_value in enumerate(columns):
        axes = grid[0][c]
        block = _select(kinds, f.column, col_value).set_index("label").reindex(labels)
        axes.barh(
            y,
            block["return"],
            0.7,
            xerr=block.get("return_se"),
            color=[colours.get(str(k), "grey") for k in block["kind"]],
            capsize=1.5,
            error_kw={"linewidth": 0.6},
        )
        axes.set_yticks(y, labels)
        axes.axvline(0.0, color="black", linewidth=0.5)
        axes.set_xlabel("mean return per agent (resources)")
        axes.set_title(f.label(f.column, col_value) or "all episodes")
    grid[0][0].invert_yaxis()
    suptitle(figure, f"Mean return per agent by kind (± SE; {episodes_note(kinds)})")
    return save(figure, path)


# -- tones ----------------------------------------------------------------------------------------


def _plot_tones(by_action: pd.DataFrame, path: Path) -> Path:
    cells = sorted(by_action["cell"].unique())
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
    axes.set_yticks(
        range(len(cells)), [f"{c} (n = {t} tones)" for c, t in zip(cells, totals, strict=True)]
    )
    for a in range(1, len(actions)):
        axes.axvline(a * len(TONES) - 0.5, color="white", linewidth=2)
    for (i, j), share in np.ndenumerate(matrix):
        if share == share:
            colour = "black" if share > 0.6 else "white"
            axes.text(j, i, number(share, 2), ha="center", va="center", fontsize=5, color=colour)
    for i in range(len(cells)):
        if np.isnan(matrix[i]).all():
            axes.text(matrix.shape[1] / 2 - 0.5, i, "no gossip published", ha="center", va="center")
    figure.colorbar(image, ax=axes, label="share of tones about that move")
    axes.set_title("Tones published about a move, by what the donor did (all episodes pooled)")
    return save(figure, path)


# -- the entrant ----------------------------------------------------------------------------------


def _bars(axes, y, frame: pd.DataFrame, column: str, offset: float, label: str, colour=None):
    values = frame.get(column, pd.Series(np.nan, index=frame.index)).to_numpy(dtype=float)
    errors = frame.get(f"{column}_se", pd.Series(np.nan, index=frame.index))
    axes.barh(
        y + offset,
        np.nan_to_num(values),
        0.4,
        xerr=np.nan_to_num(errors.to_numpy(dtype=float)),
        label=label,
        color=colour,
        capsize=1.5,
        error_kw={"linewidth": 0.6},
    )
    return values


def _plot_entrant(cells: pd.DataFrame, kinds: pd.DataFrame, path: Path) -> Path:
    with_entrant = cells[cells["cooperation_to_entrant"].notna()].sort_values("cell")
    labels = list(with_entrant["cell"])
    y = np.arange(len(labels))
    figure = Figure(figsize=(FULL, 1.2 + 0.3 * len(labels)), layout="constrained")
    left, right = figure.subplots(1, 2, sharey=True)
    for offset, (column, name, colour) in enumerate(
        (
            ("cooperation_to_entrant_before", "before", "tab:grey"),
            ("cooperation_to_entrant_after", "after", "tab:orange"),
        )
    ):
        values = _bars(
            left, y, with_entrant, column, 0.4 * offset, f"towards it {name} exposure", colour
        )
        for yy, v in zip(y, values, strict=True):
            if v != v or v < 0.02:  # no bar to see: say what it is (n/a: no such choice)
                text = "n/a" if v != v else number(v, 2)
                left.annotate(text, (0.01, yy + 0.4 * offset), fontsize=5, va="center")
    left.set_xlim(0, 1.05)
    left.set_xlabel("share of residents' choices that cooperate")
    left.set_title("Treatment of the entrant")
    left.set_yticks(y + 0.2, labels)
    left.invert_yaxis()
    _bars(right, y, with_entrant, "entrant_return", 0.0, "entrant's return", "tab:red")
    _bars(right, y, with_entrant, "residents_return", 0.4, "residents' mean return", "tab:blue")
    right.axvline(0.0, color="black", linewidth=0.5)
    right.set_xlabel("return per agent (resources)")
    right.set_title("Does defecting pay?")
    figure_legend(figure, ncols=4)
    suptitle(
        figure,
        "The always-defect entrant: its treatment and its payoff (mean ± SE; "
        f"{episodes_note(with_entrant)})\nexposure: its first gossiped defection (its first "
        "defection with gossip off)",
    )
    return save(figure, path)
