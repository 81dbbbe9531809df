"""Figures of the gossip games, drawn from the analysis's tables with matplotlib's Agg canvas
through :class:`~matplotlib.figure.Figure` (no pyplot state). Decrypto's are in
:mod:`~socialsim.analysis.decrypto_figures`.

Every figure has a title and labelled axes, and stays readable for any grid: the grid's factors
that vary become facets (:func:`facets`: gossip on/off side by side as columns, the agents'
kind as the hue, the other factors as rows), series that are identical to the last bit are
drawn once and labelled ``a = b``, and the entrant's joining round is marked.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize
from matplotlib.figure import Figure

from socialsim.analysis import gossip_maps
from socialsim.analysis.figure_style import (
    COLUMN,
    FULL,
    STYLE,
    episodes_note,
    figure_legend,
    fill,
    paper,
    save,
    suptitle,
)
from socialsim.analysis.order import in_order, level_key, numeric, ordered
from socialsim.analysis.stats import number
from socialsim.analysis.tables import factor_name, readable


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
        written.append(gossip_maps.plot_tones(by_action, directory / "tones_by_action.png"))
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


#: a factor with more levels is never drawn as a panel per level (it is the hue)
MAX_PANELS = 4
#: the qualitative palette's colours; a numeric hue with more levels takes a sequential map
PALETTE = 10


def facets(frame: pd.DataFrame) -> Facets:
    """The population's strategy (a ``seats.*`` factor: kind or norm) as the hue, gossip (or
    the first other factor) as columns, every other factor that varies as rows; a factor with
    more than :data:`MAX_PANELS` levels (a run's generations) is the hue instead."""
    levels = {c: frame[c].map(str).nunique() for c in frame.columns if c.startswith("cell.")}
    factors = [c for c, n in levels.items() if n > 1]
    many = [f for f in factors if levels[f] > MAX_PANELS]
    population = [f for f in factors if f.startswith("cell.seats.*.")]
    hue = many[0] if many else population[0] if population else None
    column = next((f for f in factors if f.endswith("gossip") and f != hue), None)
    if column is None:
        column = next((f for f in factors if f != hue and levels[f] <= MAX_PANELS), None)
    rest = [f for f in factors if f not in (column, hue)]
    if hue is None and rest:
        hue = rest.pop()
    return Facets(column, hue, tuple(rest))


def _values(frame: pd.DataFrame, factor: str | None) -> list[str]:
    return ordered(frame[factor]) if factor else [""]


def _select(frame: pd.DataFrame, factor: str | None, value: str) -> pd.DataFrame:
    return frame[frame[factor].map(str) == value] if factor else frame


def _entrant_rounds(cells: pd.DataFrame) -> dict[str, float]:
    if "entrant_round" not in cells.columns:
        return {}
    return {c: r for c, r in zip(cells["cell"], cells["entrant_round"], strict=True) if r == r}


def _row_blocks(frame: pd.DataFrame, f: Facets) -> list[tuple[str, pd.DataFrame]]:
    if not f.rows:
        return [("", frame)]
    blocks = [
        (key if isinstance(key, tuple) else (key,), block)
        for key, block in frame.groupby(list(f.rows), sort=False)
    ]
    blocks.sort(key=lambda kb: tuple(level_key(v) for v in kb[0]))
    return [(f.row_label(dict(zip(f.rows, key, strict=True))), b) for key, b in blocks]


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
    colours = hue_colours(_values(rounds, f.hue)) if f.hue else None
    for r, (row_label, row_block) in enumerate(rows):
        for c, col_value in enumerate(columns):
            axes = grid[r][c]
            block = _select(row_block, f.column, col_value)
            _draw_series(axes, block, f, column, colours)
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
            panel = title_text or _constant_label(rounds) or "all episodes"
            axes.set_title(fill(panel, figure, len(columns), 0.75))
            if ylim is not None:
                axes.set_ylim(*ylim)
            axes.set_xlabel("round" if r == len(rows) - 1 else "")
            if c == 0:
                axes.set_ylabel(ylabel)
            axes.grid(alpha=0.3, linewidth=0.4)
    if colours is None:  # a column-wide figure: one legend entry a line
        hue_name = factor_name(f.hue[5:]) if f.hue else None
        figure_legend(figure, hue_name, ncols=1 if len(columns) == 1 else 2)
    else:
        colour_bar(figure, list(grid.ravel()), colours, factor_name(f.hue[5:]))
        title = title.replace("mean ± SE", "mean; a line per level")
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
                "Reputation accuracy by round (mean ± SE):\nnon-neutral tones whose valence "
                "matches the move",
                _entrant_rounds(cells),
                directory / "reputation_accuracy_by_round.png",
                (-0.05, 1.05),
            )
        )
    reputation = dynamics["reputation"]
    if not reputation.empty and reputation["reputation"].abs().sum() > 0:
        note = episodes_note(cells)
        written.append(gossip_maps.plot_reputation(reputation, directory / "reputation.png", note))
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


def hue_colours(levels: list[str]) -> dict[str, Any] | None:
    """Colours of a numeric hue with more levels than the qualitative palette holds: a
    sequential map in their order (``None``: the palette's colours, one per level)."""
    if len(levels) <= PALETTE or not numeric(levels):
        return None
    cmap = matplotlib.colormaps["viridis"]
    return {v: cmap(i / (len(levels) - 1)) for i, v in enumerate(levels)}


def colour_bar(figure: Figure, panels: list, colours: Mapping[str, Any], label: str) -> None:
    """The colour bar of :func:`hue_colours`: the first, middle and last levels named."""
    levels = list(colours)
    mappable = ScalarMappable(Normalize(0, len(levels) - 1), matplotlib.colormaps["viridis"])
    bar = figure.colorbar(mappable, ax=panels, label=label, shrink=0.9)
    ticks = sorted({0, (len(levels) - 1) // 2, len(levels) - 1})
    bar.set_ticks(ticks, labels=[levels[i] for i in ticks])


def _draw_series(
    axes, block: pd.DataFrame, f: Facets, column: str, colours: Mapping | None = None
) -> None:
    """One line per hue value (cooperation among residents, solid with its SE band; towards
    the entrant, dotted, where it has choices), identical lines drawn once under the joined
    label. With ``colours`` (a hue of many levels: :func:`hue_colours`) each line takes its
    level's colour, with no band and no legend entry (the colour bar names them)."""
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
        if colours is not None:
            level = str(part[f.hue].iloc[0])
            axes.plot(x, y, "-", color=colours[level], label="_level", linewidth=0.8)
            continue
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
    kinds["label"] = [textwrap.fill(x, 60, break_long_words=False) for x in kinds["label"]]
    labels = ordered(kinds["label"])
    colours = {k: f"C{i}" for i, k in enumerate(sorted(kinds["kind"].map(str).unique()))}
    lines = len(labels) * max(label.count("\n") + 1 for label in labels)
    figure = Figure(
        figsize=(COLUMN if len(columns) == 1 else FULL, 1.0 + 0.16 * lines),
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
        axes.set_title(fill(f.label(f.column, col_value) or "all episodes", figure, len(columns)))
    grid[0][0].invert_yaxis()
    figure.supxlabel("mean return per agent (resources)", fontsize=STYLE["axes.labelsize"])
    suptitle(figure, f"Mean return per agent by kind (± SE; {episodes_note(kinds)})")
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
    with_entrant = in_order(cells[cells["cooperation_to_entrant"].notna()])
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
    left.set_xlabel("share of residents'\nchoices that cooperate")
    left.set_title("Treatment of the entrant")
    left.set_yticks(y + 0.2, labels)
    left.invert_yaxis()
    _bars(right, y, with_entrant, "entrant_return", 0.0, "entrant's return", "tab:red")
    _bars(right, y, with_entrant, "residents_return", 0.4, "residents' mean return", "tab:blue")
    right.axvline(0.0, color="black", linewidth=0.5)
    right.set_xlabel("return per agent\n(resources)")
    right.set_title("Does defecting pay?")
    figure_legend(figure, ncols=4)
    suptitle(
        figure,
        "The always-defect entrant: its treatment and its payoff (mean ± SE; "
        f"{episodes_note(with_entrant)})\nexposure: its first gossiped defection (its first "
        "defection with gossip off)",
    )
    return save(figure, path)
