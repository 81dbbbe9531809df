"""Cooperation metrics of the gossip games, as pure functions over episode records.

Every function reads one :class:`~socialsim.records.EpisodeRecord` (its
``summary["interactions"]``, ``summary`` facts, ``returns`` and bus ``messages``) and never
re-runs a game. The interaction schema per game is the one of ``env.unwrapped.summary()`` in
the gossip envs (``summary["game"]`` is ``"donation"``, ``"prisoners"``, ``"trust"`` or
``"market"``).

| metric | functions | games |
|---|---|---|
| per agent | :func:`average_donation`, :func:`average_donation_ratio`, :func:`agent_returns`, :func:`discounted_returns`, :func:`image_scores` | donation (image score and returns also prisoners) |
| population | :func:`cooperation_by_round`, :func:`cooperation_rate`, :func:`social_welfare`, :func:`gini`, :func:`standard_error` | donation, prisoners |
| beyond the reference | :func:`ostracism`, :func:`reputation_accuracy`, :func:`reputation_accuracy_by_agent`, :func:`tone_distribution`, :func:`tones_by_action` | donation, prisoners (accuracy and tones also market) |
| prisoner's dilemma | :func:`prisoners_cooperation_ratio` (plus the shared ones) | prisoners |
| trust | :func:`total_investment`, :func:`average_investment_ratio`, :func:`total_returned`, :func:`average_returned_ratio`, :func:`average_reward` | trust |
| market | :func:`deal_rate`, :func:`outcome_shares`, :func:`welfare_per_round`, :func:`discounted_welfare` | market |
| tables and figures | :func:`cooperation_report`, :func:`plot_cooperation` | all |

Definitions follow the reference (ALIGN) where it has one:

* **Return** is final minus initial resources (the sum of the agent's payoffs where a game has no
  resources: prisoners, market).
* **Discounted return** is ``sum_k gamma**k * r_k`` over the agent's *own* k-th interaction
  (k = 0, 1, ...; as donor or recipient), not over the global round index. ``gamma`` is the
  episode's ``discount`` (0.99 when the summary has none).
* **Image score**: +1 per cooperation and -1 per defection as donor (every action in prisoners).
* **Gini**: ``0.5 * mean_{i,j} |x_i - x_j| / mean(x)`` over all ordered pairs, i = j included.
* **Standard error**: ``np.std(x, ddof=0) / sqrt(n)``, as the reference.
* **Discounted welfare** (market) discounts over the *global* round index.

Beyond the reference:

* **Ostracism**: among the donations towards the entrant (``summary["entrant"]``) in rounds after
  its first defection was gossiped, the share that were defections. With gossip off nothing is
  ever gossiped, so the clock starts at its first defection instead: the control in which
  nobody can know.
* **Reputation accuracy**: among the non-neutral tones published about a donor, the share whose
  valence (praising good, mocking/complaint/criticism bad) agrees with what the donor did
  (cooperate good, defect bad). Neutral tones make no claim and are left out.
* **Tone distribution**: shares of the five tones among the gossip published on the bus.

An undefined value (no donor turns for a ratio, no entrant, no tone) is ``nan``, except where
the reference fixes another value (average donation of an agent that never donated is 0).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from socialsim.envs.gossip.norms import TONES, valence
from socialsim.records import EpisodeRecord

DEFAULT_DISCOUNT = 0.99
GAMES = ("donation", "prisoners", "trust", "market")
OUTCOMES = ("Hc", "Hs", "Lc", "Ls")
NAN = float("nan")


# -- reading a record ------------------------------------------------------------------------------


def game_of(record: EpisodeRecord) -> str:
    """The game the record was played in, from ``summary["game"]``."""
    game = record.summary.get("game")
    if game not in GAMES:
        raise ValueError(
            f"record.summary['game']: {game!r} is not a gossip game; allowed: {', '.join(GAMES)}"
        )
    return game


def interactions_of(record: EpisodeRecord) -> list[dict[str, Any]]:
    """The interactions in the order they were played (stable by round)."""
    return sorted(record.summary.get("interactions", []), key=lambda i: i["round"])


def agents_of(record: EpisodeRecord) -> list[str]:
    """Every agent id of the episode, in the env's order."""
    agents = record.summary.get("agents")
    if agents:
        return list(agents)
    return list(record.returns) or list(record.seats)


def discount_of(record: EpisodeRecord) -> float:
    return float(record.summary.get("discount", DEFAULT_DISCOUNT))


def _require(record: EpisodeRecord, *games: str) -> str:
    game = game_of(record)
    if game not in games:
        raise ValueError(
            f"record: this metric is defined for {', '.join(games)}, not for game {game!r}"
        )
    return game


def _mean(values: Sequence[float], empty: float = NAN) -> float:
    return float(np.mean(values)) if len(values) else empty


# -- per agent -------------------------------------------------------------------------------------


def own_rewards(record: EpisodeRecord) -> dict[str, list[float]]:
    """Each agent's payoff in each of its own interactions, in the order it played them."""
    game = game_of(record)
    rewards: dict[str, list[float]] = {agent: [] for agent in agents_of(record)}
    for interaction in interactions_of(record):
        if game == "donation":
            rewards[interaction["donor"]].append(-float(interaction["donation"]))
            rewards[interaction["recipient"]].append(float(interaction["benefit"]))
        else:
            for agent, payoff in interaction["payoffs"].items():
                rewards[agent].append(float(payoff))
    return rewards


def average_donation(record: EpisodeRecord) -> dict[str, float]:
    """Mean amount each agent gave as donor (0 for an agent that was never donor, as the reference)."""
    _require(record, "donation")
    given: dict[str, list[float]] = {agent: [] for agent in agents_of(record)}
    for interaction in interactions_of(record):
        given[interaction["donor"]].append(float(interaction["donation"]))
    return {agent: _mean(amounts, 0.0) for agent, amounts in given.items()}


def average_donation_ratio(record: EpisodeRecord) -> dict[str, float]:
    """Mean of donation / pre-donation resources over each agent's donor turns."""
    _require(record, "donation")
    ratios: dict[str, list[float]] = {agent: [] for agent in agents_of(record)}
    for interaction in interactions_of(record):
        before = float(interaction["donor_before"])
        ratios[interaction["donor"]].append(
            float(interaction["donation"]) / before if before else 0.0
        )
    return {agent: _mean(values, 0.0) for agent, values in ratios.items()}


def agent_returns(record: EpisodeRecord) -> dict[str, float]:
    """Final minus initial resources; the sum of own payoffs in games without resources."""
    summary = record.summary
    resources = summary.get("resources")
    if resources and "initial_resources" in summary:
        initial = float(summary["initial_resources"])
        return {agent: float(resources[agent]) - initial for agent in agents_of(record)}
    return {agent: float(sum(r)) for agent, r in own_rewards(record).items()}


def discounted_return(rewards: Sequence[float], discount: float) -> float:
    """``sum_k discount**k * rewards[k]``, k counted from 0."""
    total, weight = 0.0, 1.0
    for reward in rewards:
        total += weight * float(reward)
        weight *= discount
    return total


def discounted_returns(record: EpisodeRecord, discount: float | None = None) -> dict[str, float]:
    """Each agent's discounted return over its own k-th interaction (not the global round)."""
    gamma = discount_of(record) if discount is None else float(discount)
    if not 0.0 <= gamma <= 1.0:
        raise ValueError(f"discount: must be in [0, 1], got {discount!r}")
    return {agent: discounted_return(r, gamma) for agent, r in own_rewards(record).items()}


def average_reward(record: EpisodeRecord) -> dict[str, float]:
    """Mean payoff per own interaction (0 for an agent that never played, as the reference)."""
    return {agent: _mean(r, 0.0) for agent, r in own_rewards(record).items()}


def _cooperated(game: str, interaction: Mapping[str, Any], agent: str | None = None) -> bool:
    if game == "donation":
        return interaction["action"] == "cooperate"
    return interaction["actions"][agent] == "C"


def image_scores(record: EpisodeRecord) -> dict[str, int]:
    """+1 per cooperation, -1 per defection, as donor (every own action in prisoners)."""
    game = _require(record, "donation", "prisoners")
    scores = {agent: 0 for agent in agents_of(record)}
    for interaction in interactions_of(record):
        if game == "donation":
            scores[interaction["donor"]] += 1 if _cooperated(game, interaction) else -1
        else:
            for agent in interaction["players"]:
                scores[agent] += 1 if _cooperated(game, interaction, agent) else -1
    return scores


def prisoners_cooperation_ratio(record: EpisodeRecord) -> dict[str, float]:
    """#C / #actions per player."""
    _require(record, "prisoners")
    actions: dict[str, list[bool]] = {agent: [] for agent in agents_of(record)}
    for interaction in interactions_of(record):
        for agent in interaction["players"]:
            actions[agent].append(_cooperated("prisoners", interaction, agent))
    return {agent: _mean(flags) for agent, flags in actions.items()}


# -- population ------------------------------------------------------------------------------------


def _cooperation_flags(record: EpisodeRecord) -> list[tuple[int, bool]]:
    """(round, cooperated) for every cooperate/defect choice of the episode."""
    game = _require(record, "donation", "prisoners")
    flags = []
    for interaction in interactions_of(record):
        if game == "donation":
            flags.append((interaction["round"], _cooperated(game, interaction)))
        else:
            for agent in interaction["players"]:
                flags.append((interaction["round"], _cooperated(game, interaction, agent)))
    return flags


def cooperation_by_round(record: EpisodeRecord) -> dict[int, float]:
    """Round -> share of the round's choices that were cooperation."""
    by_round: dict[int, list[bool]] = defaultdict(list)
    for round_, cooperated in _cooperation_flags(record):
        by_round[round_].append(cooperated)
    return {round_: _mean(flags) for round_, flags in sorted(by_round.items())}


def cooperation_rate(record: EpisodeRecord) -> float:
    """Share of all cooperate/defect choices of the episode that were cooperation."""
    return _mean([cooperated for _, cooperated in _cooperation_flags(record)])


def social_welfare(record: EpisodeRecord) -> float:
    """The sum of every agent's return."""
    return float(sum(agent_returns(record).values()))


def gini(values: Iterable[float]) -> float:
    """``0.5 * mean over all ordered pairs (i = j included) of |x_i - x_j| / mean(x)``.

    0 when every value is equal (zeros included); ``nan`` when the mean is 0 otherwise."""
    x = np.asarray(list(values), dtype=float)
    if x.size == 0:
        raise ValueError("values: gini needs at least one value")
    spread = np.abs(x[:, None] - x[None, :]).mean()
    if spread == 0.0:
        return 0.0
    mean = x.mean()
    return float(0.5 * spread / mean) if mean != 0.0 else NAN


def standard_error(values: Iterable[float]) -> float:
    """``np.std(values, ddof=0) / sqrt(n)``, as the reference (0 for no values)."""
    x = np.asarray(list(values), dtype=float)
    if x.size == 0:
        return 0.0
    return float(np.std(x) / math.sqrt(x.size))


# -- beyond the reference --------------------------------------------------------------------------


def _gossiped(interaction: Mapping[str, Any], author: str | None = None) -> bool:
    if author is None:
        return interaction.get("tone") is not None or interaction.get("message") is not None
    return (interaction.get("tones") or {}).get(author) is not None or (
        interaction.get("messages") or {}
    ).get(author) is not None


def ostracism(record: EpisodeRecord) -> float:
    """Share of defections among the donations to the entrant after its first defection was
    gossiped (after its first defection at all when gossip is off). ``nan`` without an entrant or
    without such donations."""
    game = _require(record, "donation", "prisoners")
    entrant = record.summary.get("entrant")
    if entrant is None:
        return NAN
    gossip_on = bool(record.summary.get("gossip", True))
    since: int | None = None
    towards: list[bool] = []  # did the other side defect against the entrant, after `since`
    for interaction in interactions_of(record):
        round_ = interaction["round"]
        if game == "donation":
            if since is not None and round_ > since and interaction["recipient"] == entrant:
                towards.append(interaction["action"] == "defect")
            if (
                since is None
                and interaction["donor"] == entrant
                and interaction["action"] == "defect"
                and (_gossiped(interaction) or not gossip_on)
            ):
                since = round_
        elif entrant in interaction["players"]:
            other = next(p for p in interaction["players"] if p != entrant)
            if since is not None and round_ > since:
                towards.append(interaction["actions"][other] == "D")
            if (
                since is None
                and interaction["actions"][entrant] == "D"
                and (_gossiped(interaction, other) or not gossip_on)
            ):
                since = round_
    return _mean(towards)


def _tone_events(record: EpisodeRecord) -> list[tuple[str, str, bool]]:
    """(about, tone, about_cooperated) for every tone published about an actor whose choice is
    binary: donors (donation), players (prisoners), sellers (market: H is cooperation)."""
    game = game_of(record)
    events = []
    for interaction in interactions_of(record):
        if game == "donation" and interaction.get("tone") is not None:
            events.append(
                (interaction["donor"], interaction["tone"], _cooperated(game, interaction))
            )
        elif game == "prisoners":
            a, b = interaction["players"]
            for author, about in ((a, b), (b, a)):
                tone = (interaction.get("tones") or {}).get(author)
                if tone is not None:
                    events.append((about, tone, _cooperated(game, interaction, about)))
        elif game == "market" and interaction.get("tone") is not None:
            events.append(
                (interaction["seller"], interaction["tone"], interaction["quality"] == "H")
            )
    return [e for e in events if e[1] in TONES]


def _agrees(tone: str, cooperated: bool) -> bool | None:
    value = valence(tone)
    return None if value == 0 else (value > 0) == cooperated


def reputation_accuracy(record: EpisodeRecord) -> float:
    """Share of the non-neutral tones whose valence agrees with what the agent they are about did."""
    verdicts = [_agrees(tone, cooperated) for _, tone, cooperated in _tone_events(record)]
    return _mean([v for v in verdicts if v is not None])


def reputation_accuracy_by_agent(record: EpisodeRecord) -> dict[str, float]:
    """:func:`reputation_accuracy` restricted to the tones each agent received."""
    verdicts: dict[str, list[bool]] = {agent: [] for agent in agents_of(record)}
    for about, tone, cooperated in _tone_events(record):
        verdict = _agrees(tone, cooperated)
        if verdict is not None:
            verdicts[about].append(verdict)
    return {agent: _mean(v) for agent, v in verdicts.items()}


def tone_counts(record: EpisodeRecord) -> dict[str, int]:
    """How often each tone was published on the bus (``kind="gossip"`` messages)."""
    counts = Counter(m["payload"].get("tone") for m in record.messages if m.get("kind") == "gossip")
    return {tone: counts.get(tone, 0) for tone in TONES}


def tone_distribution(record: EpisodeRecord) -> dict[str, float]:
    """Share of each tone among the published tones (``nan`` each when none was published)."""
    counts = tone_counts(record)
    total = sum(counts.values())
    return {tone: (n / total if total else NAN) for tone, n in counts.items()}


def tones_by_action(record: EpisodeRecord) -> dict[str, dict[str, int]]:
    """Tone counts split by what the agent they are about did: ``{"cooperate": {...}, "defect": {...}}``."""
    counts = {"cooperate": dict.fromkeys(TONES, 0), "defect": dict.fromkeys(TONES, 0)}
    for _, tone, cooperated in _tone_events(record):
        counts["cooperate" if cooperated else "defect"][tone] += 1
    return counts


# -- trust -----------------------------------------------------------------------------------------


def _trust_by_agent(record: EpisodeRecord, role: str, value) -> dict[str, list[float]]:
    _require(record, "trust")
    values: dict[str, list[float]] = {agent: [] for agent in agents_of(record)}
    for interaction in interactions_of(record):
        values[interaction[role]].append(value(interaction))
    return values


def total_investment(record: EpisodeRecord) -> dict[str, float]:
    """Sum of the amounts each agent sent as investor."""
    sent = _trust_by_agent(record, "investor", lambda i: float(i["investment"]))
    return {agent: float(sum(v)) for agent, v in sent.items()}


def average_investment_ratio(record: EpisodeRecord) -> dict[str, float]:
    """Mean of investment / pre-investment resources over each agent's investor turns."""

    def ratio(i: Mapping[str, Any]) -> float:
        before = float(i["investor_before"])
        return float(i["investment"]) / before if before else 0.0

    return {agent: _mean(v, 0.0) for agent, v in _trust_by_agent(record, "investor", ratio).items()}


def total_returned(record: EpisodeRecord) -> dict[str, float]:
    """Sum of the amounts each agent returned as responder."""
    returned = _trust_by_agent(record, "responder", lambda i: float(i["returned"]))
    return {agent: float(sum(v)) for agent, v in returned.items()}


def average_returned_ratio(record: EpisodeRecord) -> dict[str, float]:
    """Mean of returned / (multiplier * investment) over responder turns (0 when nothing came in)."""
    multiplier = float(record.summary.get("multiplier", 3.0))

    def ratio(i: Mapping[str, Any]) -> float:
        received = multiplier * float(i["investment"])
        return float(i["returned"]) / received if received else 0.0

    return {
        agent: _mean(v, 0.0) for agent, v in _trust_by_agent(record, "responder", ratio).items()
    }


# -- market ----------------------------------------------------------------------------------------


def deal_rate(record: EpisodeRecord) -> float:
    """Share of the rounds in which the buyer bought (chose ``c`` or ``s``)."""
    _require(record, "market")
    return _mean([i["choice"] != "none" for i in interactions_of(record)])


def outcome_shares(record: EpisodeRecord, given_deal: bool = False) -> dict[str, float]:
    """Shares of Hc/Hs/Lc/Ls among all rounds, or among the rounds with a deal."""
    _require(record, "market")
    rounds = [i for i in interactions_of(record) if not given_deal or i["choice"] != "none"]
    counts = Counter(f"{i['quality']}{i['choice']}" for i in rounds if i["choice"] != "none")
    return {o: (counts.get(o, 0) / len(rounds) if rounds else NAN) for o in OUTCOMES}


def _round_welfare(record: EpisodeRecord) -> list[float]:
    _require(record, "market")
    return [float(sum(i["payoffs"].values())) for i in interactions_of(record)]


def welfare_per_round(record: EpisodeRecord) -> float:
    """Mean of seller + buyer payoff per round."""
    return _mean(_round_welfare(record))


def discounted_welfare(record: EpisodeRecord, discount: float | None = None) -> float:
    """``sum_t gamma**t (seller_t + buyer_t)`` over the global round index t = 0, 1, ..."""
    gamma = discount_of(record) if discount is None else float(discount)
    return discounted_return(_round_welfare(record), gamma)


# -- tables ----------------------------------------------------------------------------------------


def cell_label(cell: Mapping[str, Any]) -> str:
    """A short readable name for a grid cell, as ``socialsim report`` writes it: ``key=value``
    on the last part of each path (the seat for ``seats.SEAT.kind``), ``(all)`` without a grid."""
    parts = []
    for key, value in cell.items():
        path = key.split(".")
        name = path[-2] if key.endswith(".kind") and len(path) > 1 else path[-1]
        parts.append(f"{name}={value}")
    return ", ".join(parts) or "(all)"


def episode_metrics(record: EpisodeRecord) -> dict[str, float]:
    """The population metrics of one episode that apply to its game."""
    game = game_of(record)
    returns = agent_returns(record)
    row: dict[str, float] = {
        "social_welfare": social_welfare(record),
        "mean_return": _mean(list(returns.values())),
        "se_return": standard_error(returns.values()),
    }
    discounted = discounted_returns(record)
    row["mean_discounted_return"] = _mean(list(discounted.values()))
    row["se_discounted_return"] = standard_error(discounted.values())
    if game in ("donation", "prisoners"):
        row["cooperation_rate"] = cooperation_rate(record)
        row["ostracism"] = ostracism(record)
        final = record.summary.get("resources")
        row["gini"] = gini(final.values()) if final else gini(returns.values())
    if game == "trust":
        row["gini"] = gini(discounted.values())
    if game == "market":
        row["deal_rate"] = deal_rate(record)
        row["welfare_per_round"] = welfare_per_round(record)
        row["discounted_welfare"] = discounted_welfare(record)
        for outcome, share in outcome_shares(record).items():
            row[f"share_{outcome}"] = share
        for outcome, share in outcome_shares(record, given_deal=True).items():
            row[f"share_{outcome}_given_deal"] = share
    if game != "trust":
        row["reputation_accuracy"] = reputation_accuracy(record)
    return row


def agent_metrics(record: EpisodeRecord) -> dict[str, dict[str, float]]:
    """Agent id -> the per-agent metrics that apply to the record's game."""
    game = game_of(record)
    columns: dict[str, Mapping[str, float]] = {
        "return": agent_returns(record),
        "discounted_return": discounted_returns(record),
        "average_reward": average_reward(record),
    }
    if game == "donation":
        columns["average_donation"] = average_donation(record)
        columns["average_donation_ratio"] = average_donation_ratio(record)
    if game in ("donation", "prisoners"):
        columns["image_score"] = image_scores(record)
    if game == "prisoners":
        columns["cooperation_ratio"] = prisoners_cooperation_ratio(record)
    if game == "trust":
        columns["total_investment"] = total_investment(record)
        columns["average_investment_ratio"] = average_investment_ratio(record)
        columns["total_returned"] = total_returned(record)
        columns["average_returned_ratio"] = average_returned_ratio(record)
    if game != "trust":
        columns["reputation_accuracy"] = reputation_accuracy_by_agent(record)
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


def cooperation_report(records: Iterable[EpisodeRecord]) -> dict[str, Any]:
    """The cooperation tables of an experiment, as pandas DataFrames keyed by table name.

    Every table carries the grid cell (``cell.<path>`` columns and a readable ``cell`` label), so
    each has one block per cell of the experiment grid:

    * ``cells``: per cell, the mean and standard error over episodes of each episode metric;
    * ``episodes``: one row per episode (:func:`episode_metrics`);
    * ``agents``: one row per (episode, agent) with its kind (:func:`agent_metrics`);
    * ``kinds``: per (cell, agent kind), mean and standard error of the per-agent metrics;
    * ``rounds``: per (cell, round), the cooperation rate averaged over episodes (donation, PD);
    * ``tones``: per (cell, tone), the tone count and share over all episodes of the cell.

    Failed episodes are skipped.
    """
    import pandas as pd

    episodes, agents, rounds, tones = [], [], [], []
    for record in records:
        if record.status != "done" or not record.summary:
            continue
        base = {
            **_cell_columns(record),
            "episode": record.episode,
            "seed": record.seed,
            "game": game_of(record),
        }
        episodes.append({**base, **episode_metrics(record)})
        for agent, metrics in agent_metrics(record).items():
            agents.append({**base, "agent": agent, "kind": _kind(record, agent), **metrics})
        if base["game"] in ("donation", "prisoners"):
            for round_, rate in cooperation_by_round(record).items():
                rounds.append({**base, "round": round_, "cooperation_rate": rate})
        for tone, count in tone_counts(record).items():
            tones.append({**base, "tone": tone, "count": count})

    episodes_df = pd.DataFrame(episodes)
    agents_df = pd.DataFrame(agents)
    return {
        "cells": _mean_and_se(episodes_df, ["cell", "game"], exclude=("episode", "seed")),
        "episodes": episodes_df,
        "agents": agents_df,
        "kinds": _mean_and_se(agents_df, ["cell", "game", "kind"], exclude=("episode", "seed")),
        "rounds": _rounds_table(pd.DataFrame(rounds)),
        "tones": _tones_table(pd.DataFrame(tones)),
    }


def _cell_keys(frame) -> list[str]:
    return [c for c in frame.columns if c.startswith("cell.")]


def _mean_and_se(frame, keys: list[str], exclude: Sequence[str] = ()):
    """Per group of ``keys`` (plus the cell columns): ``n`` and ``<metric>`` / ``<metric>_se``."""
    import pandas as pd

    if frame.empty:
        return pd.DataFrame()
    keys = _cell_keys(frame) + [k for k in keys if k in frame.columns]
    frame = frame.copy()
    frame[keys] = frame[keys].astype(str)  # None kinds and list-valued cells group too
    metrics = [
        c
        for c in frame.columns
        if c not in keys and c not in exclude and pd.api.types.is_numeric_dtype(frame[c])
    ]
    rows = []
    for group, block in frame.groupby(keys, sort=True, dropna=False):
        row = dict(zip(keys, group if isinstance(group, tuple) else (group,), strict=True))
        row["n"] = len(block)
        for metric in metrics:
            values = block[metric].dropna()
            row[metric] = float(values.mean()) if len(values) else NAN
            if not metric.startswith("se_"):  # no standard error of a standard error
                row[f"{metric}_se"] = standard_error(values) if len(values) else NAN
        rows.append(row)
    return pd.DataFrame(rows)


def _rounds_table(frame):
    import pandas as pd

    if frame.empty:
        return pd.DataFrame(
            columns=["cell", "round", "cooperation_rate", "cooperation_rate_se", "n"]
        )
    keys = _cell_keys(frame) + ["cell", "round"]
    frame = frame.copy()
    frame[_cell_keys(frame)] = frame[_cell_keys(frame)].astype(str)
    table = (
        frame.groupby(keys, sort=True)["cooperation_rate"]
        .agg(cooperation_rate="mean", cooperation_rate_se=standard_error, n="size")
        .reset_index()
    )
    return table


def _tones_table(frame):
    import pandas as pd

    if frame.empty:
        return pd.DataFrame(columns=["cell", "tone", "count", "share"])
    keys = _cell_keys(frame) + ["cell"]
    frame = frame.copy()
    frame[_cell_keys(frame)] = frame[_cell_keys(frame)].astype(str)
    table = frame.groupby(keys + ["tone"], sort=False)["count"].sum().reset_index()
    totals = table.groupby(keys)["count"].transform("sum")
    table["share"] = (table["count"] / totals.where(totals > 0)).astype(float)
    return table


# -- figures ---------------------------------------------------------------------------------------


def plot_cooperation(records: Iterable[EpisodeRecord], directory: str | Path) -> list[Path]:
    """Write the cooperation figures as PNG files in ``directory`` and return their paths:

    * ``cooperation_by_round.png``: cooperation rate by round (mean and standard error over
      episodes), one line per cell (donation, PD);
    * ``returns_by_kind.png``: mean return per agent kind, one group of horizontal bars per cell.

    Figures grow with the number of cells so that a large grid stays readable. Uses matplotlib's
    Agg canvas through :class:`~matplotlib.figure.Figure` (no pyplot state).
    """
    report = cooperation_report(records)
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    if not report["rounds"].empty:
        written.append(_plot_rounds(report["rounds"], directory / "cooperation_by_round.png"))
    kinds = report["kinds"]
    if not kinds.empty and "return" in kinds.columns:
        written.append(_plot_returns(kinds, directory / "returns_by_kind.png"))
    return written


def _plot_rounds(rounds, path: Path) -> Path:
    from matplotlib.figure import Figure

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


def _plot_returns(kinds, path: Path) -> Path:
    from matplotlib.figure import Figure

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
