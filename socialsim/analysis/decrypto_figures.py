"""Decrypto's figures, from the report's tables (matplotlib Agg through
:class:`~matplotlib.figure.Figure`, no pyplot state), each as PNG, PDF and SVG
(:mod:`~socialsim.analysis.figure_style`):

* ``decrypto_competitive``: the paper's competitive heatmap (Figure 3, left), team (encoder =
  decoder) x interceptor, coloured by the interception-loss rate; each cell reads the rate ±
  SEM over seed blocks (``n blocks``; no SEM from one block) and the games; per team, the
  interceptors within one SEM of the strongest are outlined. One panel per compared run.
* ``decrypto_cooperative``: the cooperative heatmap (Figure 3, right), encoder x decoder per
  interceptor, coloured by the miscommunication-loss rate, the pairs within one SEM of the best
  outlined; when every interceptor faced one pair, one heatmap of pair x interceptor.
* ``decrypto_outcomes``: the endings' shares per cell, and the loss shares per cell with their
  95% bootstrap intervals over games.
* ``decrypto_tom``: the theory-of-mind scores (± SE) with the answered share, when a probe ran,
  each bar beside its tricks (markers: the answerers that hold no beliefs, scored on the same
  turns, and the oracle; :mod:`socialsim.analysis.decrypto_tricks`) and its normalised score
  (``n=``: 0 at the best trick, 1 at the oracle; ``n=–`` where the tricks reach the oracle).
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from socialsim.analysis.figure_style import COLUMN, FULL, panel_grid, paper, save, suptitle
from socialsim.analysis.stats import number
from socialsim.envs.decrypto.protocol import ENDINGS

RUN = "run"
# the team's win green, its losses warm (both tokens: the darkest)
ENDING_COLOURS = {
    "survived": "tab:green",
    "miscomm": "tab:orange",
    "intercept": "tab:red",
    "both": "tab:purple",
}


def plot_decrypto(
    outcomes: pd.DataFrame,
    competitive: pd.DataFrame,
    cooperative: pd.DataFrame,
    scores: Mapping[str, Mapping[str, Any]],
    directory: str | Path,
    statistics: pd.DataFrame | None = None,
    tricks: pd.DataFrame | None = None,
) -> list[Path]:
    """Write the Decrypto figures in ``directory``; return the PNGs' paths."""
    with paper():
        return _plot_decrypto(
            outcomes, competitive, cooperative, scores, Path(directory), statistics, tricks
        )


def _runs(frame: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    if RUN not in frame.columns:
        return [("", frame)]
    return [(f"run {run}", block) for run, block in frame.groupby(RUN, sort=False)]


def _plot_decrypto(outcomes, competitive, cooperative, scores, directory, statistics, tricks):
    written = []
    if not competitive.empty:
        panels = _runs(competitive)
        figure = _figure(
            len(panels), competitive["team"].nunique(), competitive["interceptor"].nunique()
        )
        for axes, (title, block) in zip(figure.axes[:], panels, strict=False):
            _heatmap(axes, block, "team", "interceptor", "max")
            axes.set_title(title)
        _colourbar(figure, "interception-loss rate")
        suptitle(
            figure,
            "Competitive grid: interception-loss rate (± SEM over seed blocks)\n"
            "team = encoder = decoder; outlined: within one SEM of the strongest interceptor",
        )
        written.append(save(figure, directory / "decrypto_competitive.png"))
    if not cooperative.empty:
        written.append(_plot_cooperative(cooperative, directory / "decrypto_cooperative.png"))
    if not outcomes.empty:
        written.append(_plot_outcomes(outcomes, statistics, directory / "decrypto_outcomes.png"))
    if scores:
        written.append(_plot_tom(scores, directory / "decrypto_tom.png", tricks))
    return written


def _figure(panels: int, rows: int, columns: int = 2) -> Figure:
    """A figure of ``panels`` heatmaps (two a row: no panel squeezed to a sliver)."""
    narrow = panels == 1 and columns <= 2
    grid_rows, grid_columns = panel_grid(panels, 2)
    figure = Figure(
        # three rows at least: the colour bar's two-line label needs their height
        figsize=(COLUMN if narrow else FULL, 0.9 + grid_rows * (0.5 + 0.55 * max(rows, 3))),
        layout="constrained",
    )
    axes = figure.subplots(grid_rows, grid_columns, squeeze=False).ravel()
    for extra in axes[panels:]:
        extra.remove()
    return figure


def _colourbar(figure: Figure, what: str) -> None:
    """One colour bar for every panel (all share the 0-1 scale)."""
    image = figure.axes[0].images[0]
    figure.colorbar(image, ax=figure.axes, label=f"{what}\n(share of games)", shrink=0.8)


def _plot_cooperative(cooperative: pd.DataFrame, path: Path) -> Path:
    single = (
        cooperative.groupby([c for c in (RUN, "interceptor") if c in cooperative.columns])
        .size()
        .eq(1)
        .all()
    )
    if single:  # one pair per interceptor: one heatmap, the pair against each interceptor
        frame = cooperative.assign(pair=cooperative["encoder"] + " → " + cooperative["decoder"])
        if RUN in frame.columns:
            frame["pair"] = frame[RUN] + ": " + frame["pair"]
        figure = _figure(1, frame["pair"].nunique(), frame["interceptor"].nunique())
        _heatmap(figure.axes[0], frame, "pair", "interceptor", "min")
        figure.axes[0].set_ylabel("encoder → decoder")
    else:
        keys = [c for c in (RUN, "interceptor") if c in cooperative.columns]
        groups = list(cooperative.groupby(keys, sort=True))
        figure = _figure(
            len(groups), cooperative["encoder"].nunique(), cooperative["decoder"].nunique()
        )
        for axes, (key, block) in zip(figure.axes[:], groups, strict=False):
            _heatmap(axes, block, "encoder", "decoder", "min")
            key = key if isinstance(key, tuple) else (key,)
            axes.set_title(", ".join(f"{k}: {v}" for k, v in zip(keys, key, strict=True)))
    _colourbar(figure, "miscommunication-loss rate")
    suptitle(
        figure,
        "Cooperative grid: miscommunication-loss rate (± SEM over seed blocks)\n"
        "outlined: within one SEM of the best pair",
    )
    return save(figure, path)


def _heatmap(axes, frame: pd.DataFrame, row: str, column: str, best: str):
    rows = sorted(frame[row].unique())
    columns = sorted(frame[column].unique())
    rate = frame.pivot(index=row, columns=column, values="loss_rate").reindex(rows)[columns]
    axes.imshow(rate.to_numpy(dtype=float), cmap="Reds", vmin=0, vmax=1, aspect="auto")
    indexed = frame.set_index([row, column])
    marked = _within_one_sem(frame, row, column, best == "max", best)
    for i, a in enumerate(rows):
        for j, b in enumerate(columns):
            if (a, b) not in indexed.index:
                axes.text(j, i, "no games", ha="center", va="center")
                continue
            cell = indexed.loc[(a, b)]
            blocks = int(cell["blocks"])
            spread = (
                f" ± {number(cell['loss_rate_sem'], 2)}"
                if cell["loss_rate_sem"] == cell["loss_rate_sem"]
                else ""
            )
            text = (
                f"{number(cell['loss_rate'], 3)}{spread}\n{int(cell['games'])} games\n"
                f"{blocks} seed block{'s' if blocks != 1 else ''}"
            )
            dark = cell["loss_rate"] > 0.6
            axes.text(
                j, i, text, ha="center", va="center", fontsize=5, color="white" if dark else "black"
            )
            if (a, b) in marked:
                axes.add_patch(
                    Rectangle((j - 0.48, i - 0.48), 0.96, 0.96, fill=False, linewidth=1.2)
                )
    # an agent's parameters on a line of their own: upright labels that fit their column
    crowded = {"rotation": 60, "ha": "right", "rotation_mode": "anchor"} if len(columns) > 4 else {}
    axes.set_xticks(range(len(columns)), [_tick(c, 18) for c in columns], **crowded)
    axes.set_yticks(range(len(rows)), [_tick(r, 28) for r in rows])
    axes.set_xlabel(column)
    axes.set_ylabel(row)


def _within_one_sem(
    frame: pd.DataFrame, row: str, column: str, per_row: bool, best: str
) -> set[tuple[str, str]]:
    """The cells whose rate is within one SEM (theirs or the best's) of the best cell, per row
    (``per_row``) or in the whole panel; the best alone when no SEM is defined."""
    marked: set[tuple[str, str]] = set()
    groups = frame.groupby(row) if per_row else [(None, frame)]
    for _, block in groups:
        block = block.dropna(subset=["loss_rate"])
        if block.empty:
            continue
        rates = block["loss_rate"]
        top = block.loc[rates.idxmax() if best == "max" else rates.idxmin()]
        for _, cell in block.iterrows():
            sems = [s for s in (cell["loss_rate_sem"], top["loss_rate_sem"]) if s == s]
            reach = max(sems) if sems else 0.0
            if abs(cell["loss_rate"] - top["loss_rate"]) <= reach + 1e-12:
                marked.add((cell[row], cell[column]))
    return marked


def _tick(label: object, width: int) -> str:
    """An agent's label on lines of ``width`` characters at most (its parameters after its
    kind): an upright tick label that fits its column."""
    kind, _, params = str(label).partition("(")
    lines = (
        [kind, *textwrap.wrap(f"({params}", width, break_long_words=False)] if params else [kind]
    )
    return "\n".join(lines)


def _plot_outcomes(outcomes: pd.DataFrame, statistics: pd.DataFrame | None, path: Path) -> Path:
    cells = list(outcomes["cell"])
    games = outcomes["games"].to_numpy(dtype=float)
    # a cell's label on lines of a third of the page: the panels keep two thirds
    names = [
        textwrap.fill(f"{c} ({int(g)} games)", 48, break_long_words=False)
        for c, g in zip(cells, games, strict=True)
    ]
    lines = max(n.count("\n") + 1 for n in names) if names else 1
    y = np.arange(len(cells))
    figure = Figure(figsize=(FULL, 1.5 + (0.18 + 0.12 * lines) * len(cells)), layout="constrained")
    left, right = figure.subplots(1, 2, sharey=True)
    start = np.zeros(len(cells))
    for ending in ENDINGS:
        share = outcomes.get(ending, pd.Series(0, index=outcomes.index)).to_numpy(dtype=float)
        share = share / np.where(games > 0, games, 1)
        colour = ENDING_COLOURS.get(ending)
        left.barh(y, share, left=start, label=f"ending: {ending}", height=0.7, color=colour)
        start += share
    left.set_xlim(0, 1)
    left.set_xlabel("share of games")
    left.set_yticks(y, names)
    left.invert_yaxis()
    left.set_title("How the games ended")
    losses = (
        ("interception_loss", "lost to interceptions"),
        ("miscommunication_loss", "lost to miscommunications"),
    )
    for offset, (metric, label) in enumerate(losses):
        if statistics is None or statistics.empty:
            break
        block = statistics[statistics["metric"] == metric].set_index("cell").reindex(cells)
        mean = block["mean"].to_numpy(dtype=float)
        low = np.clip(mean - block["ci_low"].to_numpy(dtype=float), 0, None)
        high = np.clip(block["ci_high"].to_numpy(dtype=float) - mean, 0, None)
        right.barh(
            y - 0.2 + 0.4 * offset,
            np.nan_to_num(mean),
            0.4,
            xerr=np.nan_to_num(np.vstack([low, high])),
            label=label,
            capsize=1.5,
            error_kw={"linewidth": 0.6},
            color=f"C{5 + offset}",
        )
    right.set_xlim(0, 1)
    right.set_xlabel("share of games\n(95% bootstrap CI over games)")
    right.set_title("Losses (a game ending\nin both counts twice)")
    handles: dict[str, object] = {}
    for axes in (left, right):
        for handle, label in zip(*axes.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, handle)
    figure.legend(
        list(handles.values()), list(handles), loc="outside lower center", ncols=3, frameon=False
    )
    suptitle(figure, "Decrypto outcomes per cell")
    return save(figure, path)


TRICK_MARKERS = {  # answerer -> marker (the oracle: a black bar)
    "best constant": "s",
    "constant list": "s",
    "a constant list per question": "D",
    "random (expected)": "x",
    "random words": "x",
    "predict the code": "^",
    "predict the last guess": "v",
    "repeat the first answer": "<",
    "copy the revealed keywords": ">",
    "abstain": "o",
    "oracle": "|",
}


def _number(row, key: str) -> bool:
    value = row.get(key) if key in row.index else None
    return isinstance(value, float | int) and value == value


def _trick_lookup(tricks: pd.DataFrame | None, groups: Mapping[str, Any]) -> dict:
    """(cell, probe, score) -> the tricks row; the pooled group takes a lone cell's rows."""
    if tricks is None or tricks.empty:
        return {}
    lookup = {(r["cell"], r["probe"], r["score"]): r for _, r in tricks.iterrows()}
    cells = set(tricks["cell"])
    if list(groups) == ["all episodes"] and len(cells) == 1:
        lookup = {("all episodes", p, n): r for (_, p, n), r in lookup.items()}
    return lookup


def _mark_tricks(axes, row, y: float, drawn: set[str]) -> float:
    """The tricks of one score at height ``y``; returns the rightmost value drawn."""
    right = 0.0
    for name, marker in TRICK_MARKERS.items():
        value = row.get(name) if name in row.index else None
        if value is None or value != value:
            continue
        label = None if name in drawn else ("oracle" if name == "oracle" else f"trick: {name}")
        drawn.add(name)
        style = {"color": "black", "s": 30} if name == "oracle" else {"s": 10, "color": "0.25"}
        if marker == "o":
            style = {"facecolors": "none", "edgecolors": "0.25", "s": 10}
        axes.scatter([value], [y], marker=marker, linewidths=0.6, zorder=3, label=label, **style)
        right = max(right, float(value))
    return right


def _plot_tom(
    scores: Mapping[str, Mapping[str, Any]], path: Path, tricks: pd.DataFrame | None = None
) -> Path:
    """One row per score, one bar per cell (all cells pooled when there is one), ± SE over
    episodes, with its tricks as markers and its normalised score; the legend names each cell's
    answered share and whether the reference scores its probed agent."""
    groups = dict(scores.get("by_cell") or {"all episodes": scores})
    lookup = _trick_lookup(tricks, groups)
    drawn: set[str] = set()
    low = 0.0
    names: list[str] = []
    for table in groups.values():
        for probe, values in table.items():
            for name, value in values.items():
                label = f"{probe}: {name}".replace("_", " ")
                skip = name in ("episodes", "answered", "abstained", "probed") or name.endswith(
                    ("_se", "_told", "_untold")  # the told items' parts: in the JSON
                )
                if not skip and isinstance(value, float | int) and not isinstance(value, bool):
                    if "episodes" not in name and label not in names:
                        names.append(label)
    y = np.arange(len(names))
    height = 0.8 / len(groups)
    figure = Figure(figsize=(FULL, 1.2 + 0.16 * len(names) * len(groups)), layout="constrained")
    axes = figure.add_subplot()
    for g, (cell, table) in enumerate(groups.items()):
        values, errors = [], []
        for label in names:
            probe, _, name = label.partition(": ")
            found = table.get(probe.replace(" ", "_"), {})
            value = found.get(name.replace(" ", "_"))
            error = found.get(name.replace(" ", "_") + "_se")
            values.append(np.nan if value is None else float(value))
            errors.append(np.nan if error is None else float(error))
        answered = ", ".join(
            f"answered {number(t.get('answered'), 2)}, n = {t.get('episodes')} episodes"
            + ("" if t.get("reference_scores_it", True) else "; a baseline the reference skips")
            for t in table.values()
        )
        positions = y + g * height
        axes.barh(
            positions,
            np.nan_to_num(values),
            height,
            xerr=np.nan_to_num(errors),
            capsize=1.5,
            error_kw={"linewidth": 0.6},
            label=f"{cell} ({answered})",
        )
        for label, yy, v, e in zip(names, positions, values, errors, strict=True):
            x = np.nan_to_num(v) + np.nan_to_num(e) + 0.01  # a 0 bar is still read
            probe, _, name = label.partition(": ")
            row = lookup.get((cell, probe.replace(" ", "_"), name.replace(" ", "_")))
            text = number(v, 2)
            if row is not None:
                x = max(x, _mark_tricks(axes, row, yy, drawn) + 0.02)
                scaled = row["normalised"]
                text += f"  n={number(scaled, 2) if scaled == scaled else '–'}"
                low = min([low, *(float(row[k]) for k in TRICK_MARKERS if _number(row, k))])
            low = min(low, float(np.nan_to_num(v)))
            axes.annotate(text, (x, yy), va="center", fontsize=5)
    axes.set_yticks(y + 0.4 - height / 2, names)
    axes.invert_yaxis()
    axes.set_xlim(min(0.0, low - 0.05), 1.3 if lookup else 1.05)
    axes.set_xlabel(
        "score (share of eligible turns, mean ± SE over episodes)\nmarkers: its tricks on the "
        "same turns; n: normalised (0 best trick, 1 oracle)"
        if lookup
        else "score (share of eligible turns, mean ± SE over episodes)"
    )
    # the rows, and the legend below them: a line per cell and per trick drawn
    entries = len(axes.get_legend_handles_labels()[0])
    figure.set_size_inches(FULL, 1.2 + 0.16 * len(names) * len(groups) + 0.18 * entries)
    figure.legend(loc="outside lower center", ncols=1, frameon=False)
    suptitle(figure, "Theory-of-mind scores per cell")
    return save(figure, path)
