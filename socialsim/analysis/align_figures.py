"""The ALIGN paper's figures, one ``socialsim report`` away, from the per-cell table of
:func:`~socialsim.analysis.tables.cooperation_report` (each as PNG, PDF and SVG):

* ``cooperation_by_agent``: the agent under test (the grid factor naming the seats' model, kind
  or norm; in a run without one, the other factors that vary, as generations) x gossip on/off: the residents' cooperation (for the donation game, the paper's
  cooperation ratio, equal to the average donation since c = 1), and, with an entrant, the
  residents' cooperation towards it after its exposure and its return. The models are grouped
  (reasoning vs chat) when the experiment's ``model_groups`` table labels them.
* ``trust_gini``: the trust game's Gini coefficient of discounted returns, per cell.
* ``market_outcomes``: the market's deal rate and the shares of the four outcomes (Hc, Hs, Lc,
  Ls) given a deal, per cell.

Every bar is a mean over episodes with its SE (the episode is the unit), n stated.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from socialsim.analysis.figure_style import (
    COLUMN,
    FULL,
    episodes_note,
    figure_legend,
    paper,
    save,
    suptitle,
)
from socialsim.analysis.order import ordered
from socialsim.analysis.tables import factor_name, readable

GOSSIP = "cell.env.kwargs.gossip"
BY_AGENT = (  # metric, panel title, x label, x limits
    ("cooperation_residents", "residents' cooperation", "share of choices", (0, 1.05)),
    (
        "cooperation_to_entrant_after",
        "towards the entrant\nafter its exposure",
        "share of choices",
        (0, 1.05),
    ),
    ("entrant_return", "the entrant's return", "resources", None),
)


def plot_align(
    cells: pd.DataFrame, directory: str | Path, groups: Mapping[str, str] | None = None
) -> list[Path]:
    """Write the figures that apply to ``cells``; return the PNGs' paths."""
    directory = Path(directory)
    written = []
    with paper():
        if (
            "cooperation_residents" in cells.columns
            and cells["cooperation_residents"].notna().any()
        ):
            written.append(_by_agent(cells, groups or {}, directory / "cooperation_by_agent.png"))
        trust = cells[cells["game"] == "trust"] if "game" in cells.columns else cells.iloc[:0]
        if not trust.empty and "gini" in trust.columns:
            written.append(
                _bars(
                    trust,
                    [("gini", "Gini of discounted returns")],
                    "Trust game: inequality of discounted returns",
                    directory / "trust_gini.png",
                )
            )
        market = cells[cells["game"] == "market"] if "game" in cells.columns else cells.iloc[:0]
        if not market.empty and "deal_rate" in market.columns:
            shares = [
                (c, c.removeprefix("share_").removesuffix("_given_deal") + " | deal")
                for c in market.columns
                if c.startswith("share_")
                and c.endswith("_given_deal")
                and "_se" not in c
                and "_ci_" not in c
            ]
            written.append(
                _bars(
                    market,
                    [("deal_rate", "deal rate"), *shares],
                    "Market: deals and the outcome shares given a deal",
                    directory / "market_outcomes.png",
                )
            )
    return written


def agent_factor(cells: pd.DataFrame) -> str | None:
    """The grid factor that names the agent under test: a seats factor that varies (a model
    before a kind before any other parameter)."""
    varying = [
        c for c in cells.columns if c.startswith("cell.seats.") and cells[c].map(str).nunique() > 1
    ]
    for ending in (".model.model", ".model", ".kind"):
        for column in varying:
            if column.endswith(ending):
                return column
    return varying[0] if varying else None


def _agent_names(cells: pd.DataFrame, factor: str | None, others: list[str]) -> list[str]:
    """Each row's name: the agent under test, else the factors other than gossip that vary."""
    if factor is not None:
        return [readable(str(v)) for v in cells[factor]]
    if not others:
        return ["all episodes"] * len(cells)
    return [
        ", ".join(f"{factor_name(c[5:])}={readable(str(row[c]))}" for c in others)
        for _, row in cells.iterrows()
    ]


def _by_agent(cells: pd.DataFrame, groups: Mapping[str, str], path: Path) -> Path:
    factor = agent_factor(cells)
    others = [
        c
        for c in cells.columns
        if c.startswith("cell.") and c not in (factor, GOSSIP) and cells[c].map(str).nunique() > 1
    ]
    frame = cells.assign(agent=_agent_names(cells, factor, others))
    if groups:  # reasoning vs chat: each group's models side by side, the group named
        frame["agent"] = [f"{a} [{groups.get(a, 'unlabelled')}]" for a in frame["agent"]]
        order = {g: i for i, g in enumerate(dict.fromkeys(groups.values()))}
        frame["order"] = [
            order.get(groups.get(a.split(" [")[0], ""), len(order)) for a in frame["agent"]
        ]
        frame = frame.sort_values(["order", "agent"])
    if others and factor is not None:  # every other factor that varies is named: no cell hidden
        frame["agent"] = (
            frame["agent"]
            + " | "
            + frame[others]
            .map(str)
            .apply(
                lambda r: ", ".join(f"{factor_name(c[5:])}={readable(v)}" for c, v in r.items()),
                axis=1,
            )
        )
    agents = list(dict.fromkeys(frame["agent"])) if groups else ordered(frame["agent"])
    gossip = ordered(frame[GOSSIP]) if GOSSIP in frame.columns else [""]
    panels = [m for m in BY_AGENT if m[0] in frame.columns and frame[m[0]].notna().any()]
    figure = Figure(
        figsize=(
            COLUMN if len(panels) == 1 else FULL,
            max(2.2, 1.2 + 0.22 * len(agents) * len(gossip)),
        ),
        layout="constrained",
    )
    grid = figure.subplots(1, len(panels), squeeze=False, sharey=True)[0]
    y = np.arange(len(agents))
    height = 0.8 / len(gossip)
    for axes, (metric, title, xlabel, limits) in zip(grid, panels, strict=True):
        for g, value in enumerate(gossip):
            part = frame[frame[GOSSIP].map(str) == value] if value else frame
            part = part.drop_duplicates("agent").set_index("agent").reindex(agents)
            for yy, v in zip(y + g * height, part[metric], strict=True):
                if v != v or v == 0:  # no bar to see: say whether it is 0 or no such cell
                    text = "0" if v == 0 else "n/a"
                    axes.annotate(
                        text,
                        (0, yy),
                        xytext=(2, 0),
                        textcoords="offset points",
                        va="center",
                        fontsize=5,
                    )
            axes.barh(
                y + g * height,
                part[metric].fillna(0.0),
                height,
                xerr=part.get(f"{metric}_se", pd.Series(0.0, index=part.index)).fillna(0.0),
                label=f"gossip={readable(value)}" if value else "all",
                capsize=1.5,
                error_kw={"linewidth": 0.6},
            )
        axes.set_title(title)
        axes.set_xlabel(xlabel)
        if limits:
            axes.set_xlim(*limits)
        axes.axvline(0.0, color="black", linewidth=0.5)
    grid[0].set_yticks(y + height * (len(gossip) - 1) / 2, agents)
    grid[0].invert_yaxis()
    rows = ", ".join(factor_name(c[5:]) for c in others) if factor is None else ""
    grid[0].set_ylabel(factor_name(factor[5:]) if factor else rows or "cell")
    figure_legend(figure, ncols=len(gossip))
    what = "agent under test" if factor else rows or "cell"
    suptitle(figure, f"By {what} and gossip (mean ± SE; {episodes_note(frame)})")
    return save(figure, path)


def _bars(cells: pd.DataFrame, metrics: list[tuple[str, str]], title: str, path: Path) -> Path:
    labels = list(cells["cell"])
    y = np.arange(len(labels))
    figure = Figure(
        figsize=(FULL, 1.1 + 0.2 * len(labels) * max(1, len(metrics) / 2)),  # long cell labels
        layout="constrained",
    )
    axes = figure.add_subplot()
    height = 0.8 / len(metrics)
    for k, (metric, name) in enumerate(metrics):
        axes.barh(
            y + k * height,
            cells[metric].fillna(0.0),
            height,
            xerr=cells.get(f"{metric}_se", pd.Series(0.0, index=cells.index)).fillna(0.0),
            label=name,
            capsize=1.5,
            error_kw={"linewidth": 0.6},
        )
    axes.set_yticks(y + height * (len(metrics) - 1) / 2, labels)
    axes.invert_yaxis()
    axes.set_xlim(0, 1.05)
    axes.set_xlabel("mean ± SE over episodes")
    figure_legend(figure, ncols=min(3, len(metrics)))
    suptitle(figure, f"{title} ({episodes_note(cells)})")
    return save(figure, path)
