"""Tables of the analysis: the numbers of :mod:`~socialsim.analysis.cooperation` as rows per
episode, agent, round and tone, and their means and standard errors per grid cell (pandas
DataFrames, written as CSV by ``socialsim report``); also the return table of any game.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from socialsim.analysis import cooperation as co
from socialsim.analysis import entrant as en
from socialsim.analysis.interactions import agents_of, game_of
from socialsim.analysis.stats import bootstrap_ci, replicates, sem, summary
from socialsim.envs.gossip.protocol import DONATION, MARKET, PRISONERS, TRUST
from socialsim.frames import episodes_frame
from socialsim.plain_json import canonical_json
from socialsim.records import EpisodeRecord

NAN = float("nan")


def returns_table(recs: list[EpisodeRecord]) -> pd.DataFrame:
    """Mean and SE of the return per grid cell (its ``cell.<path>`` values and its readable
    ``cell`` label) and seat (games with at most four seats) or agent kind (larger populations),
    by :data:`~socialsim.analysis.stats.CONVENTION`: a kind's return is averaged over its agents
    within each episode first, then over the ``episodes`` (SE ddof 1)."""
    frame = episodes_frame(recs)
    if frame.empty:
        return frame
    cell_cols = [c for c in frame.columns if c.startswith("cell.")]
    frame["cell"] = [
        cell_label({c[len("cell.") :]: row[c] for c in cell_cols})
        for row in frame[cell_cols].to_dict("records")
    ]
    frame[cell_cols] = frame[cell_cols].map(str)  # a grid may cross whole agent tables
    frame["kind"] = frame["kind"].map(str)
    by = ["seat", "kind"] if frame["seat"].nunique() <= 4 else ["kind"]
    keys = [*cell_cols, "cell", *by]
    per_episode = frame.groupby([*keys, "episode"], sort=True)["ret"].mean().reset_index()
    groups = per_episode.groupby(keys, sort=True)["ret"]
    table = groups.agg(episodes="count", mean="mean").reset_index()
    table["sem"] = groups.agg(sem).to_numpy()
    return table


def factor_name(key: str) -> str:
    """The grid factor's short name: the last part of its path (the seat for
    ``seats.SEAT.kind``; ``*`` reads ``all seats``)."""
    path = key.split(".")
    name = path[-2] if key.endswith(".kind") and len(path) > 1 else path[-1]
    return "all seats" if name == "*" else name


def value_label(value: Any) -> str:
    """A grid value as a reader names it: an agent table ``{"kind": "liar", "mode": "invert"}``
    is ``liar(mode=invert)``, the empty table (the seat plays as every other) ``as others``, a
    table of seats ``{"encoder.kind": "x"}`` (as :func:`shorten_cells` leaves it) ``encoder=x``."""
    if isinstance(value, Mapping):
        if not value:
            return "as others"
        if "kind" not in value:
            return ", ".join(f"{_leaf_name(k)}={value_label(v)}" for k, v in value.items())
        params = ", ".join(
            f"{_leaf_name(k)}={value_label(v)}" for k, v in sorted(value.items()) if k != "kind"
        )
        return f"{value['kind']}({params})" if params else str(value["kind"])
    return str(value)


def _leaf_name(path: str) -> str:
    return path[: -len(".kind")] if path.endswith(".kind") else path


def shorten_cells(recs: Sequence[EpisodeRecord]) -> list[EpisodeRecord]:
    """The records with each table-valued grid value cut to the keys that vary between the
    cells (dotted paths; an agent table keeps its ``kind``), so that a cell's label names what
    distinguishes it, never a whole ~600-character agent spec. The factors stay one per axis;
    cells that differed still differ."""
    recs = _name_interventions(recs)
    keys = list(dict.fromkeys(k for r in recs for k in r.cell))
    varying: dict[str, set[str]] = {}
    for key in keys:
        values = [r.cell.get(key) for r in recs]
        if not any(isinstance(v, Mapping) for v in values):
            continue
        leaves = [_flat(v) if isinstance(v, Mapping) else {} for v in values]
        paths = set().union(*leaves)
        varying[key] = {
            p for p in paths if len({repr(leaf.get(p, "(unset)")) for leaf in leaves}) > 1
        }
    if not varying:
        return list(recs)
    out = []
    for record in recs:
        cell = dict(record.cell)
        for key, paths in varying.items():
            value = cell.get(key)
            if isinstance(value, Mapping) and value:
                flat = _flat(value)
                kept = {p: v for p, v in flat.items() if p in paths or p == "kind"}
                cell[key] = kept or {"kind": "(same)"}
        out.append(dataclasses.replace(record, cell=cell))
    return out


def _name_interventions(recs: Sequence[EpisodeRecord]) -> list[EpisodeRecord]:
    """A grid axis over ``interventions`` labelled by their ``label`` (else their action), or
    ``(none)``, when those names tell its values apart."""

    def name(value: Any) -> str:
        return "; ".join(str(t.get("label") or t.get("action")) for t in value) or "(none)"

    values = {
        json.dumps(r.cell["interventions"], sort_keys=True): r.cell["interventions"]
        for r in recs
        if isinstance(r.cell.get("interventions"), list)
    }
    if not values or len({name(v) for v in values.values()}) < len(values):
        return list(recs)
    return [
        dataclasses.replace(r, cell={**r.cell, "interventions": name(r.cell["interventions"])})
        if isinstance(r.cell.get("interventions"), list)
        else r
        for r in recs
    ]


def _flat(table: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in table.items():
        if isinstance(value, Mapping) and value:
            flat.update(_flat(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def readable(value: str) -> str:
    """A grid value stored as text (``"{'kind': 'liar'}"``, ``"True"``) as a reader names it."""
    try:
        return value_label(ast.literal_eval(value))
    except (ValueError, SyntaxError):
        return value


def cell_label(cell: Mapping[str, Any]) -> str:
    """A short readable name for a grid cell, as ``socialsim report`` writes it:
    ``factor=value`` for each grid factor (:func:`factor_name`, :func:`value_label`), ``(all)``
    without a grid."""
    parts = [f"{factor_name(key)}={value_label(value)}" for key, value in cell.items()]
    return ", ".join(parts) or "(all)"


def fingerprint(record: EpisodeRecord) -> str:
    """What the players did and got in one episode (its steps and returns, not its seed): two
    episodes with one fingerprint are the same game, one effective replicate."""
    text = canonical_json({"steps": record.steps, "returns": record.returns})
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def episode_metrics(record: EpisodeRecord) -> dict[str, float]:
    """The population metrics of one episode that apply to its game."""
    game = game_of(record)
    returns = co.agent_returns(record)
    row: dict[str, float] = {
        "social_welfare": co.social_welfare(record),
        "mean_return": co.mean_of(list(returns.values())),
        "se_return": co.standard_error(returns.values()),
    }
    discounted = co.discounted_returns(record)
    row["mean_discounted_return"] = co.mean_of(list(discounted.values()))
    row["se_discounted_return"] = co.standard_error(discounted.values())
    if game in (DONATION.name, PRISONERS.name):
        row.update(en.cooperation_split(record))
        row["cooperation_rate"] = co.cooperation_rate(record)
        row["ostracism"] = co.ostracism(record)
        joins = record.summary.get("entrant_round")
        row["entrant_round"] = float(joins) if joins is not None else NAN
        entrant = record.summary.get("entrant")
        residents = [v for a, v in returns.items() if a != entrant]
        row["entrant_return"] = float(returns[entrant]) if entrant in returns else NAN
        row["residents_return"] = co.mean_of(residents) if entrant in returns else NAN
        final = record.summary.get("resources")
        row["gini"] = co.gini(final.values()) if final else co.gini(returns.values())
    if game == TRUST.name:
        row["gini"] = co.gini(discounted.values())
    if game == MARKET.name:
        row["deal_rate"] = co.deal_rate(record)
        row["welfare_per_round"] = co.welfare_per_round(record)
        row["discounted_welfare"] = co.discounted_welfare(record)
        for outcome, share in co.outcome_shares(record).items():
            row[f"share_{outcome}"] = share
        for outcome, share in co.outcome_shares(record, given_deal=True).items():
            row[f"share_{outcome}_given_deal"] = share
    if game != TRUST.name:
        row["reputation_accuracy"] = co.reputation_accuracy(record)
    return row


def agent_metrics(record: EpisodeRecord) -> dict[str, dict[str, float]]:
    """Agent id -> the per-agent metrics that apply to the record's game."""
    game = game_of(record)
    columns: dict[str, Mapping[str, float]] = {
        "return": co.agent_returns(record),
        "discounted_return": co.discounted_returns(record),
        "average_reward": co.average_reward(record),
    }
    if game == DONATION.name:
        columns["average_donation"] = co.average_donation(record)
        columns["average_donation_ratio"] = co.average_donation_ratio(record)
    if game in (DONATION.name, PRISONERS.name):
        columns["image_score"] = co.image_scores(record)
    if game == PRISONERS.name:
        columns["cooperation_ratio"] = co.prisoners_cooperation_ratio(record)
    if game == TRUST.name:
        columns["total_investment"] = co.total_investment(record)
        columns["average_investment_ratio"] = co.average_investment_ratio(record)
        columns["total_returned"] = co.total_returned(record)
        columns["average_returned_ratio"] = co.average_returned_ratio(record)
    if game != TRUST.name:
        columns["reputation_accuracy"] = co.reputation_accuracy_by_agent(record)
    return {
        agent: {name: float(col[agent]) for name, col in columns.items()}
        for agent in agents_of(record)
    }


def _cell_columns(record: EpisodeRecord) -> dict[str, Any]:
    row = {f"cell.{k}": v for k, v in record.cell.items()}
    row["cell"] = cell_label(record.cell)
    return row


def _kind(record: EpisodeRecord, agent: str) -> str | None:
    return (record.seats.get(agent) or {}).get("kind")


def cooperation_report(records: Iterable[EpisodeRecord]) -> dict[str, pd.DataFrame]:
    """The cooperation tables of an experiment, as pandas DataFrames keyed by table name.

    Every table carries the grid cell (``cell.<path>`` columns and a readable ``cell`` label), so
    each has one block per cell of the experiment grid:

    * ``cells``: per cell, the mean and standard error over episodes of each episode metric;
    * ``episodes``: one row per episode (:func:`episode_metrics`);
    * ``agents``: one row per (episode, agent) with its kind (:func:`agent_metrics`);
    * ``kinds``: per (cell, agent kind), mean and standard error of the per-agent metrics;
    * ``rounds``: per (cell, round), the cooperation rate averaged over episodes (donation, PD);
    * ``tones``: per (cell, tone), the tone count and share over all episodes of the cell;
    * ``tones_by_action``: per (cell, action, tone), the count of the tones published about a
      move, by what the actor actually did (:func:`~socialsim.analysis.cooperation.tones_by_action`).

    Failed episodes are skipped.
    """
    episodes, agents, rounds, tones, by_action = [], [], [], [], []
    for record in records:
        if record.status != "done" or not record.summary:
            continue
        base = {
            **_cell_columns(record),
            "episode": record.episode,
            "seed": record.seed,
            "game": game_of(record),
        }
        episodes.append({**base, "fingerprint": fingerprint(record), **episode_metrics(record)})
        for agent, metrics in agent_metrics(record).items():
            agents.append({**base, "agent": agent, "kind": _kind(record, agent), **metrics})
        if base["game"] in (DONATION.name, PRISONERS.name):
            split = en.cooperation_by_round_split(record)
            for round_, rate in co.cooperation_by_round(record).items():
                groups = {f"cooperation_{g}": v for g, v in split.get(round_, {}).items()}
                rounds.append({**base, "round": round_, "cooperation_rate": rate, **groups})
        for tone, count in co.tone_counts(record).items():
            tones.append({**base, "tone": tone, "count": count})
        for action, counts in co.tones_by_action(record).items():
            for tone, count in counts.items():
                by_action.append({**base, "action": action, "tone": tone, "count": count})

    episodes_df = pd.DataFrame(episodes)
    agents_df = pd.DataFrame(agents)
    return {
        "cells": _mean_and_se(episodes_df, ["cell", "game"], exclude=("episode", "seed")),
        "episodes": episodes_df,
        "agents": agents_df,
        "kinds": _mean_and_se(agents_df, ["cell", "game", "kind"], exclude=("episode", "seed")),
        "rounds": _rounds_table(pd.DataFrame(rounds)),
        "tones": _tones_table(pd.DataFrame(tones)),
        "tones_by_action": _tones_by_action_table(pd.DataFrame(by_action)),
    }


def _cell_keys(frame: pd.DataFrame) -> list[str]:
    return [c for c in frame.columns if c.startswith("cell.")]


def _mean_and_se(frame: pd.DataFrame, keys: list[str], exclude: Sequence[str] = ()) -> pd.DataFrame:
    """Per group of ``keys`` (plus the cell columns): ``n`` (episodes), ``replicates`` (distinct
    episodes) and ``<metric>`` / ``<metric>_se`` / its bootstrap interval, by
    :data:`~socialsim.analysis.stats.CONVENTION`: rows of one episode (a kind's agents) are
    averaged first. A group whose episodes are all identical is one effective replicate: its SE
    and interval are undefined, not 0."""
    if frame.empty:
        return pd.DataFrame()
    keys = _cell_keys(frame) + [k for k in keys if k in frame.columns]
    frame = frame.copy()
    frame[keys] = frame[keys].map(str)  # None kinds and table-valued cells group too
    metrics = [
        c
        for c in frame.columns
        if c not in keys
        and c not in (*exclude, "episode", "seed")
        and pd.api.types.is_numeric_dtype(frame[c])
    ]
    if "episode" in frame.columns:
        by = [*keys, "episode", *(["fingerprint"] if "fingerprint" in frame.columns else [])]
        frame = frame.groupby(by, sort=True)[metrics].mean().reset_index()
    rows = []
    for group, block in frame.groupby(keys, sort=True, dropna=False):
        row = dict(zip(keys, group if isinstance(group, tuple) else (group,), strict=True))
        row["n"] = len(block)
        row["replicates"] = replicates(block[metrics].to_numpy().tolist())
        if "fingerprint" in block.columns:  # the games themselves, not only their measures
            row["replicates"] = int(block["fingerprint"].nunique())
        one = row["replicates"] == 1 and row["n"] > 1
        for metric in metrics:
            values = block[metric].dropna()
            row[metric] = float(values.mean()) if len(values) else NAN
            if not metric.startswith("se_"):  # no standard error of a standard error
                row[f"{metric}_se"] = NAN if one else sem(values)
                low, high = (NAN, NAN) if one else bootstrap_ci(values)
                row[f"{metric}_ci_low"], row[f"{metric}_ci_high"] = low, high
        rows.append(row)
    return pd.DataFrame(rows)


def _rounds_table(frame: pd.DataFrame) -> pd.DataFrame:
    if frame.empty:
        return pd.DataFrame(
            columns=["cell", "round", "cooperation_rate", "cooperation_rate_se", "n"]
        )
    keys = _cell_keys(frame) + ["cell", "round"]
    frame = frame.copy()
    frame[_cell_keys(frame)] = frame[_cell_keys(frame)].map(str)
    groups = frame.groupby(keys, sort=True)
    table = (
        groups["cooperation_rate"]
        .agg(cooperation_rate="mean", cooperation_rate_se=sem, n="size")
        .reset_index()
    )
    for column in [
        c for c in frame.columns if c.startswith("cooperation_") and c != "cooperation_rate"
    ]:
        table[column] = groups[column].mean().to_numpy()
        table[f"{column}_se"] = groups[column].agg(sem).to_numpy()
    return table


def _tones_by_action_table(frame: pd.DataFrame) -> pd.DataFrame:
    if frame.empty:
        return pd.DataFrame(columns=["cell", "action", "tone", "count"])
    keys = _cell_keys(frame) + ["cell", "action", "tone"]
    frame = frame.copy()
    frame[_cell_keys(frame)] = frame[_cell_keys(frame)].map(str)
    return frame.groupby(keys, sort=False)["count"].sum().reset_index()


def identical_cells(episodes: pd.DataFrame) -> list[list[str]]:
    """Groups of two or more cells whose every episode has the same metrics, to the last bit
    (e.g. three norms that never disagree in a population with one defector)."""
    if episodes.empty or "cell" not in episodes.columns:
        return []
    metrics = [
        c
        for c in episodes.columns
        if not c.startswith("cell")
        and c not in ("game", "seed")
        and pd.api.types.is_numeric_dtype(episodes[c])
    ]
    by_content: dict[tuple, list[str]] = {}
    for cell, block in episodes.groupby("cell", sort=True):
        content = tuple(map(tuple, block.sort_values("episode")[metrics].fillna(-1e300).to_numpy()))
        by_content.setdefault(content, []).append(str(cell))
    return [cells for cells in by_content.values() if len(cells) > 1]


def _tones_table(frame: pd.DataFrame) -> pd.DataFrame:
    if frame.empty:
        return pd.DataFrame(columns=["cell", "tone", "count", "share"])
    keys = _cell_keys(frame) + ["cell"]
    frame = frame.copy()
    frame[_cell_keys(frame)] = frame[_cell_keys(frame)].map(str)
    table = frame.groupby(keys + ["tone"], sort=False)["count"].sum().reset_index()
    totals = table.groupby(keys)["count"].transform("sum")
    table["share"] = (table["count"] / totals.where(totals > 0)).astype(float)
    return table


def dynamics_report(records: Iterable[EpisodeRecord]) -> dict[str, pd.DataFrame]:
    """Round-by-round tables of the donation game and prisoner's dilemma
    (:mod:`~socialsim.analysis.dynamics`), over the episodes of each cell:

    * ``dynamics``: per (cell, round), the mean and standard error of the Gini coefficient of
      resources after the round, of the round's reputation accuracy, and the mean resources;
    * ``reputation``: per (cell, agent, round), the mean net tone valence received so far.
    """
    from socialsim.analysis import dynamics as dy

    rows, reputation = [], []
    for record in records:
        if record.status != "done" or not record.summary:
            continue
        if game_of(record) not in (DONATION.name, PRISONERS.name):
            continue
        base = {**_cell_columns(record), "episode": record.episode}
        accuracy = dy.reputation_accuracy_by_round(record)
        for round_, held in dy.resources_by_round(record).items():
            rows.append(
                {
                    **base,
                    "round": round_,
                    "gini": co.gini(held.values()),
                    "reputation_accuracy": accuracy.get(round_, NAN),
                    "mean_resources": co.mean_of(list(held.values())),
                }
            )
        for round_, net in dy.reputation_by_round(record).items():
            for agent, value in net.items():
                reputation.append({**base, "agent": agent, "round": round_, "reputation": value})
    frame, rep = pd.DataFrame(rows), pd.DataFrame(reputation)
    if frame.empty:
        return {"dynamics": frame, "reputation": rep}
    keys = _cell_keys(frame) + ["cell", "round"]
    frame[_cell_keys(frame)] = frame[_cell_keys(frame)].map(str)
    groups = frame.groupby(keys, sort=True)
    table = groups[["gini", "reputation_accuracy", "mean_resources"]].mean().reset_index()
    for column in ("gini", "reputation_accuracy"):
        table[f"{column}_se"] = groups[column].agg(sem).to_numpy()
    rep = rep.groupby(["cell", "agent", "round"], sort=True)["reputation"].mean().reset_index()
    return {"dynamics": table, "reputation": rep}


def cell_statistics(episodes: pd.DataFrame, metrics: list[str]) -> pd.DataFrame:
    """Per (cell, metric): n (episodes where it is defined), ``replicates`` (distinct games, by
    :func:`fingerprint`), mean, SEM (ddof=1) and the 95% bootstrap confidence interval of the
    mean (:func:`~socialsim.analysis.stats.summary`); a cell whose games are all the same is one
    effective replicate, its SEM and interval undefined."""
    rows = []
    for cell, block in episodes.groupby("cell", sort=True):
        distinct = (
            int(block["fingerprint"].nunique()) if "fingerprint" in block.columns else len(block)
        )
        for metric in metrics:
            if metric in block.columns:
                row = {"cell": cell, "metric": metric, **summary(block[metric])}
                row["replicates"] = distinct
                if distinct == 1 and len(block) > 1:
                    row.update(sem=NAN, ci_low=NAN, ci_high=NAN)
                rows.append(row)
    return pd.DataFrame(rows)
