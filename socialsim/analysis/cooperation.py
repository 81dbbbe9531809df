"""Cooperation metrics of the gossip games, as pure functions over episode records.

Every function reads one :class:`~socialsim.records.EpisodeRecord` (its
``summary["interactions"]``, ``summary`` facts, ``returns`` and bus ``messages``) and never
re-runs a game. The records are read through :mod:`~socialsim.analysis.interactions` (the gossip
protocol's typed interaction records); the game names, moves, tones and payoffs are the
protocol's. :mod:`~socialsim.analysis.tables` turns these numbers into tables and
:mod:`~socialsim.analysis.figures` into figures.

| metric | functions | games |
|---|---|---|
| per agent | :func:`average_donation`, :func:`average_donation_ratio`, :func:`agent_returns`, :func:`discounted_returns`, :func:`image_scores` | donation (image score and returns also prisoners) |
| population | :func:`cooperation_by_round`, :func:`cooperation_rate`, :func:`social_welfare`, :func:`gini`, :func:`standard_error` | donation, prisoners |
| beyond the reference | :func:`ostracism`, :func:`reputation_accuracy`, :func:`reputation_accuracy_by_agent`, :func:`tone_distribution`, :func:`tones_by_action` | donation, prisoners (accuracy and tones also market) |
| prisoner's dilemma | :func:`prisoners_cooperation_ratio` (plus the shared ones) | prisoners |
| trust | :func:`total_investment`, :func:`average_investment_ratio`, :func:`total_returned`, :func:`average_returned_ratio`, :func:`average_reward` | trust |
| market | :func:`deal_rate`, :func:`outcome_shares`, :func:`welfare_per_round`, :func:`discounted_welfare` | market |

Definitions follow the reference (ALIGN) where it has one:

* **Return** is final minus initial resources (the sum of the agent's payoffs where a game has no
  resources: prisoners, market).
* **Discounted return** is ``sum_k gamma**k * r_k`` over the agent's *own* k-th interaction
  (k = 0, 1, ...; as donor or recipient), not over the global round index. ``gamma`` is the
  episode's ``discount`` (``summary["discount"]``).
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
  valence (:func:`~socialsim.envs.gossip.norms.valence`: praising good, mocking/complaint/
  criticism bad) agrees with what the donor did (cooperate good, defect bad; a seller's H is
  cooperation). Neutral tones make no claim and are left out.
* **Tone distribution**: shares of the five tones among the gossip published on the bus.

An undefined value (no donor turns for a ratio, no entrant, no tone) is ``nan``, except where
the reference fixes another value (average donation of an agent that never donated is 0).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import cast

import numpy as np

from socialsim.analysis.interactions import (
    COOPERATE,
    DEALS,
    DEFECT,
    HIGH,
    OUTCOMES,
    PLAY_C,
    PLAY_D,
    agents_of,
    discount_of,
    donation_interactions,
    game_of,
    interactions_of,
    market_interactions,
    prisoners_interactions,
    require_game,
    setting,
    trust_interactions,
)
from socialsim.envs.gossip.norms import valence
from socialsim.envs.gossip.protocol import (
    DONATION,
    GOSSIP,
    MARKET,
    PRISONERS,
    TONES,
    TRUST,
    DonationInteraction,
    GossipPayload,
    MarketInteraction,
    PrisonersInteraction,
    TrustInteraction,
    trust_received,
)
from socialsim.records import EpisodeRecord

NAN = float("nan")


def mean_of(values: Sequence[float], empty: float = NAN) -> float:
    """The mean of ``values``, ``empty`` when there are none."""
    return float(np.mean(values)) if len(values) else empty


# -- per agent -------------------------------------------------------------------------------------


def own_rewards(record: EpisodeRecord) -> dict[str, list[float]]:
    """Each agent's payoff in each of its own interactions, in the order it played them."""
    game = game_of(record)
    rewards: dict[str, list[float]] = {agent: [] for agent in agents_of(record)}
    if game == DONATION.name:
        for donation in donation_interactions(record):
            rewards[donation["donor"]].append(-float(donation["donation"]))
            rewards[donation["recipient"]].append(float(donation["benefit"]))
        return rewards
    paid = cast(
        "list[PrisonersInteraction | TrustInteraction | MarketInteraction]",
        interactions_of(record),
    )
    for interaction in paid:
        for agent, payoff in interaction["payoffs"].items():
            rewards[agent].append(float(payoff))
    return rewards


def average_donation(record: EpisodeRecord) -> dict[str, float]:
    """Mean amount each agent gave as donor (0 for an agent that was never donor, as the reference)."""
    given: dict[str, list[float]] = {agent: [] for agent in agents_of(record)}
    for donation in donation_interactions(record):
        given[donation["donor"]].append(float(donation["donation"]))
    return {agent: mean_of(amounts, 0.0) for agent, amounts in given.items()}


def average_donation_ratio(record: EpisodeRecord) -> dict[str, float]:
    """Mean of donation / pre-donation resources over each agent's donor turns."""
    ratios: dict[str, list[float]] = {agent: [] for agent in agents_of(record)}
    for donation in donation_interactions(record):
        ratios[donation["donor"]].append(float(donation["ratio"]))
    return {agent: mean_of(values, 0.0) for agent, values in ratios.items()}


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
    return {agent: mean_of(r, 0.0) for agent, r in own_rewards(record).items()}


def _donor_cooperated(donation: DonationInteraction) -> bool:
    return donation["action"] == COOPERATE


def _played_c(interaction: PrisonersInteraction, agent: str) -> bool:
    return interaction["actions"][agent] == PLAY_C


def image_scores(record: EpisodeRecord) -> dict[str, int]:
    """+1 per cooperation, -1 per defection, as donor (every own action in prisoners)."""
    game = require_game(record, DONATION, PRISONERS)
    scores = {agent: 0 for agent in agents_of(record)}
    if game == DONATION.name:
        for donation in donation_interactions(record):
            scores[donation["donor"]] += 1 if _donor_cooperated(donation) else -1
    else:
        for interaction in prisoners_interactions(record):
            for agent in interaction["players"]:
                scores[agent] += 1 if _played_c(interaction, agent) else -1
    return scores


def prisoners_cooperation_ratio(record: EpisodeRecord) -> dict[str, float]:
    """#C / #actions per player."""
    actions: dict[str, list[bool]] = {agent: [] for agent in agents_of(record)}
    for interaction in prisoners_interactions(record):
        for agent in interaction["players"]:
            actions[agent].append(_played_c(interaction, agent))
    return {agent: mean_of(flags) for agent, flags in actions.items()}


# -- population ------------------------------------------------------------------------------------


def _cooperation_flags(record: EpisodeRecord) -> list[tuple[int, bool]]:
    """(round, cooperated) for every cooperate/defect choice of the episode."""
    game = require_game(record, DONATION, PRISONERS)
    if game == DONATION.name:
        return [(d["round"], _donor_cooperated(d)) for d in donation_interactions(record)]
    return [
        (interaction["round"], _played_c(interaction, agent))
        for interaction in prisoners_interactions(record)
        for agent in interaction["players"]
    ]


def cooperation_by_round(record: EpisodeRecord) -> dict[int, float]:
    """Round -> share of the round's choices that were cooperation."""
    by_round: dict[int, list[bool]] = defaultdict(list)
    for round_, cooperated in _cooperation_flags(record):
        by_round[round_].append(cooperated)
    return {round_: mean_of(flags) for round_, flags in sorted(by_round.items())}


def cooperation_rate(record: EpisodeRecord) -> float:
    """Share of all cooperate/defect choices of the episode that were cooperation."""
    return mean_of([cooperated for _, cooperated in _cooperation_flags(record)])


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


def _gossiped_about_donor(donation: DonationInteraction) -> bool:
    return donation["tone"] is not None or donation["message"] is not None


def _gossiped_by(interaction: PrisonersInteraction, author: str) -> bool:
    tone, message = interaction["tones"].get(author), interaction["messages"].get(author)
    return tone is not None or message is not None


def ostracism(record: EpisodeRecord) -> float:
    """Share of defections among the donations to the entrant after its first defection was
    gossiped (after its first defection at all when gossip is off). ``nan`` without an entrant or
    without such donations."""
    game = require_game(record, DONATION, PRISONERS)
    entrant = record.summary.get("entrant")
    if entrant is None:
        return NAN
    gossip_on = bool(record.summary.get("gossip", True))
    since: int | None = None
    towards: list[bool] = []  # did the other side defect against the entrant, after `since`
    if game == DONATION.name:
        for donation in donation_interactions(record):
            round_ = donation["round"]
            if since is not None and round_ > since and donation["recipient"] == entrant:
                towards.append(donation["action"] == DEFECT)
            if (
                since is None
                and donation["donor"] == entrant
                and donation["action"] == DEFECT
                and (_gossiped_about_donor(donation) or not gossip_on)
            ):
                since = round_
        return mean_of(towards)
    for interaction in prisoners_interactions(record):
        if entrant not in interaction["players"]:
            continue
        round_ = interaction["round"]
        other = next(p for p in interaction["players"] if p != entrant)
        if since is not None and round_ > since:
            towards.append(interaction["actions"][other] == PLAY_D)
        if (
            since is None
            and interaction["actions"][entrant] == PLAY_D
            and (_gossiped_by(interaction, other) or not gossip_on)
        ):
            since = round_
    return mean_of(towards)


def _tone_events(record: EpisodeRecord) -> list[tuple[str, str, bool]]:
    """(about, tone, about_cooperated) for every tone published about an actor whose choice is
    binary: donors (donation), players (prisoners), sellers (market: H is cooperation)."""
    game = game_of(record)
    events: list[tuple[str, str, bool]] = []
    if game == DONATION.name:
        for donation in donation_interactions(record):
            tone = donation["tone"]
            if tone is not None:
                events.append((donation["donor"], tone, _donor_cooperated(donation)))
    elif game == PRISONERS.name:
        for interaction in prisoners_interactions(record):
            a, b = interaction["players"]
            for author, about in ((a, b), (b, a)):
                tone = interaction["tones"].get(author)
                if tone is not None:
                    events.append((about, tone, _played_c(interaction, about)))
    elif game == MARKET.name:
        for sale in market_interactions(record):
            tone = sale["tone"]
            if tone is not None:
                events.append((sale["seller"], tone, sale["quality"] == HIGH))
    return [e for e in events if e[1] in TONES]


def _agrees(tone: str, cooperated: bool) -> bool | None:
    value = valence(tone)
    return None if value == 0 else (value > 0) == cooperated


def reputation_accuracy(record: EpisodeRecord) -> float:
    """Share of the non-neutral tones whose valence agrees with what the agent they are about did."""
    verdicts = [_agrees(tone, cooperated) for _, tone, cooperated in _tone_events(record)]
    return mean_of([v for v in verdicts if v is not None])


def reputation_accuracy_by_agent(record: EpisodeRecord) -> dict[str, float]:
    """:func:`reputation_accuracy` restricted to the tones each agent received."""
    verdicts: dict[str, list[bool]] = {agent: [] for agent in agents_of(record)}
    for about, tone, cooperated in _tone_events(record):
        verdict = _agrees(tone, cooperated)
        if verdict is not None:
            verdicts[about].append(verdict)
    return {agent: mean_of(v) for agent, v in verdicts.items()}


def tone_counts(record: EpisodeRecord) -> dict[str, int]:
    """How often each tone was published on the bus (``kind="gossip"`` messages)."""
    published: list[GossipPayload] = [
        m["payload"] for m in record.messages if m.get("kind") == GOSSIP
    ]
    counts = Counter(payload["tone"] for payload in published)
    return {tone: counts.get(tone, 0) for tone in TONES}


def tone_distribution(record: EpisodeRecord) -> dict[str, float]:
    """Share of each tone among the published tones (``nan`` each when none was published)."""
    counts = tone_counts(record)
    total = sum(counts.values())
    return {tone: (n / total if total else NAN) for tone, n in counts.items()}


def tones_by_action(record: EpisodeRecord) -> dict[str, dict[str, int]]:
    """Tone counts split by what the agent they are about did: ``{"cooperate": {...}, "defect": {...}}``."""
    counts = {COOPERATE: dict.fromkeys(TONES, 0), DEFECT: dict.fromkeys(TONES, 0)}
    for _, tone, cooperated in _tone_events(record):
        counts[COOPERATE if cooperated else DEFECT][tone] += 1
    return counts


# -- trust -----------------------------------------------------------------------------------------


def _trust_by_agent(
    record: EpisodeRecord,
    who: Callable[[TrustInteraction], str],
    value: Callable[[TrustInteraction], float],
) -> dict[str, list[float]]:
    values: dict[str, list[float]] = {agent: [] for agent in agents_of(record)}
    for interaction in trust_interactions(record):
        values[who(interaction)].append(value(interaction))
    return values


def total_investment(record: EpisodeRecord) -> dict[str, float]:
    """Sum of the amounts each agent sent as investor."""
    sent = _trust_by_agent(record, lambda i: i["investor"], lambda i: float(i["investment"]))
    return {agent: float(sum(v)) for agent, v in sent.items()}


def average_investment_ratio(record: EpisodeRecord) -> dict[str, float]:
    """Mean of investment / pre-investment resources over each agent's investor turns."""

    def ratio(i: TrustInteraction) -> float:
        before = float(i["investor_before"])
        return float(i["investment"]) / before if before else 0.0

    ratios = _trust_by_agent(record, lambda i: i["investor"], ratio)
    return {agent: mean_of(v, 0.0) for agent, v in ratios.items()}


def total_returned(record: EpisodeRecord) -> dict[str, float]:
    """Sum of the amounts each agent returned as responder."""
    returned = _trust_by_agent(record, lambda i: i["responder"], lambda i: float(i["returned"]))
    return {agent: float(sum(v)) for agent, v in returned.items()}


def average_returned_ratio(record: EpisodeRecord) -> dict[str, float]:
    """Mean of returned / received (``multiplier`` x investment) over responder turns (0 when
    nothing came in)."""
    require_game(record, TRUST)
    multiplier = float(setting(record, "multiplier"))

    def ratio(i: TrustInteraction) -> float:
        received = trust_received(float(i["investment"]), multiplier)
        return float(i["returned"]) / received if received else 0.0

    ratios = _trust_by_agent(record, lambda i: i["responder"], ratio)
    return {agent: mean_of(v, 0.0) for agent, v in ratios.items()}


# -- market ----------------------------------------------------------------------------------------


def deal_rate(record: EpisodeRecord) -> float:
    """Share of the rounds in which the buyer bought (chose ``c`` or ``s``)."""
    return mean_of([sale["choice"] in DEALS for sale in market_interactions(record)])


def outcome_shares(record: EpisodeRecord, given_deal: bool = False) -> dict[str, float]:
    """Shares of Hc/Hs/Lc/Ls among all rounds, or among the rounds with a deal."""
    sales = market_interactions(record)
    rounds = [s for s in sales if not given_deal or s["choice"] in DEALS]
    counts = Counter(f"{s['quality']}{s['choice']}" for s in rounds if s["choice"] in DEALS)
    return {o: (counts.get(o, 0) / len(rounds) if rounds else NAN) for o in OUTCOMES}


def _round_welfare(record: EpisodeRecord) -> list[float]:
    return [float(sum(sale["payoffs"].values())) for sale in market_interactions(record)]


def welfare_per_round(record: EpisodeRecord) -> float:
    """Mean of seller + buyer payoff per round."""
    return mean_of(_round_welfare(record))


def discounted_welfare(record: EpisodeRecord, discount: float | None = None) -> float:
    """``sum_t gamma**t (seller_t + buyer_t)`` over the global round index t = 0, 1, ..."""
    gamma = discount_of(record) if discount is None else float(discount)
    return discounted_return(_round_welfare(record), gamma)
