"""Gossip theory-of-mind scores: each probe entry of a record (:mod:`socialsim.envs.gossip.tom`)
against its ground truth (:mod:`socialsim.envs.gossip.tom_truth`), computed from the same record,
beside the tricks that hold no beliefs (:mod:`socialsim.analysis.baselines`). Pure functions over
:class:`~socialsim.records.EpisodeRecord` lists (records that are not ``done`` are ignored).

One row per probe, item set and asking agent (its label, :func:`socialsim.analysis.tom.agent_label`:
the model's name for an LLM seat). A second-order probe's entries are split into false-belief
and true-belief items (Y's view is not / is what is so); the other probes' are one set, ``all``.
Each set is balanced per row (:func:`~socialsim.analysis.baselines.balance`): every answer class
equally often and, where the items allow, the probe's rule right on a share ``1/k`` of them, so
that no constant answer, nor the rule, beats chance (the best constant scores it exactly); the
tricks are scored on the same items.

| column | what |
|---|---|
| `asked` | entries of the set whose truth the record settles |
| `items` | those kept by the balance (all scores below are over them) |
| `balanced_on` | `answer and rule`, or `answer` where too few items let the rule be balanced too |
| `answered` | the share answered with one of the probe's words; an abstention ("unknown", empty, a refusal, anything else) is not an answer |
| `score` | right answers / answered (NaN when none was answered) |
| `score_over_asked` | right answers / items: abstaining counts as wrong |
| `credited` | right answers, each abstention credited with chance, / items |
| `informed` | the share of items whose answer the seat could know (``tom_truth.informed``) |
| `score_informed` | right answers / answered, over the informed items only: the oracle's is 1.0 |
| `chance` | 1 / the answer classes among the items |
| `constant`, `rule`, `abstainer`, `random` | the tricks' scores (credited) on the same items: the best constant answer, the probe's rule (``tom_truth.rule_answer``), abstaining, a uniform guess |
| `oracle` | the informed oracle: right where informed, abstaining elsewhere (credited) |
| `best_trick` | the best of the four tricks |
| `normalised` | (credited - best_trick) / (oracle - best_trick): 0 at the best trick, 1 at the oracle |
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from socialsim.analysis import baselines
from socialsim.analysis.order import ordered
from socialsim.analysis.tom import agent_label
from socialsim.envs.gossip import tom_truth as truths
from socialsim.records import EpisodeRecord

TRICKS = ("constant", "rule", "abstainer", "random")
COLUMNS = (
    "probe",
    "order",
    "item_set",
    "agent",
    "asked",
    "items",
    "balanced_on",
    "answered",
    "score",
    "score_over_asked",
    "credited",
    "informed",
    "score_informed",
    "chance",
    *TRICKS,
    "oracle",
    "best_trick",
    "normalised",
)


def scored_entries(record: EpisodeRecord) -> list[dict[str, Any]]:
    """The record's gossip probe entries that its truth settles, each with ``truth``, ``hit``
    (``None`` when unanswered), ``informed``, ``item_set`` and ``rule`` (the rule's answer)."""
    out = []
    game, corrected = truths.game_of(record), None
    for entry in record.probes:
        if entry.get("probe") not in truths.GOSSIP_PROBES:
            continue
        if entry["probe"] in truths.SECOND_ORDER:  # as truth() and item_set(), read once
            if corrected is None:
                corrected = truths.true_tones(record.messages, game)
            true, real = truths.second_order(record.messages, game, entry, corrected)
            item_set = truths.FALSE_BELIEF if true != real else truths.TRUE_BELIEF
        else:
            true, item_set = truths.truth(record, entry), truths.ALL
        if true is None:
            continue
        answer = entry.get("answer")
        out.append(
            {
                **entry,
                "truth": true,
                "hit": None if answer is None else answer == true,
                "informed": truths.informed(record, entry),
                "item_set": item_set,
                "rule": truths.rule_answer_of(record, entry),
            }
        )
    return out


def _ratio(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else math.nan


def balanced_items(entries: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], str]:
    """The kept items of one row and what they are balanced on."""

    def answer(e):
        return e["truth"]

    def rule_hit(e):
        return e["rule"] == e["truth"]

    kept = baselines.balance(entries, answer, rule_hit)
    if kept:
        return kept, "answer and rule"
    return baselines.balance(entries, answer), "answer"


def row(probe: str, item_set: str, agent: str, entries: list[dict[str, Any]]) -> dict[str, Any]:
    """One row of the table (see the module) for one group's settled entries."""
    items, balanced_on = balanced_items(entries)
    answered = [e for e in items if e["hit"] is not None]
    hits = sum(bool(e["hit"]) for e in answered)
    informed = [e for e in items if e["informed"]]
    informed_answered = [e for e in informed if e["hit"] is not None]
    tricks = baselines.trick_scores(
        items,
        truth=lambda e: e["truth"],
        rule=lambda e: e["rule"],
        informed=lambda e: e["informed"],
        words=len(truths.ANSWERS[probe]),
    )
    score = baselines.credited([e["hit"] for e in items], tricks["chance"])
    return {
        "probe": probe,
        "order": truths.ORDERS[probe],
        "item_set": item_set,
        "agent": agent,
        "asked": len(entries),
        "items": len(items),
        "balanced_on": balanced_on if items else "",
        "answered": _ratio(len(answered), len(items)),
        "score": _ratio(hits, len(answered)),
        "score_over_asked": _ratio(hits, len(items)),
        "credited": score,
        "informed": _ratio(len(informed), len(items)),
        "score_informed": _ratio(
            sum(bool(e["hit"]) for e in informed_answered), len(informed_answered)
        ),
        **tricks,
        "normalised": baselines.normalised(score, tricks["best_trick"], tricks["oracle"]),
    }


def probe_scores(
    records: Iterable[EpisodeRecord],
    label: Callable[[Mapping[str, Any]], str] = agent_label,
) -> list[dict[str, Any]]:
    """One row per (probe, item set, agent label), in probe then set order, then by label."""
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        if record.status != "done":
            continue
        for entry in scored_entries(record):
            key = (entry["probe"], entry["item_set"], label(record.seats[entry["seat"]]))
            groups[key].append(entry)
    order = {name: i for i, name in enumerate(truths.GOSSIP_PROBES)}
    sets = {name: i for i, name in enumerate(truths.ITEM_SETS)}
    keys = sorted(groups, key=lambda k: (order[k[0]], sets[k[1]], k[2]))
    return [row(*key, groups[key]) for key in keys]


# -- the report's section and figure ----------------------------------------------------------------


def gossip_tom_sections(report: Any, recs: list[EpisodeRecord], out: Any) -> None:
    """Add the gossip probes' table (and, with ``out``, ``gossip_tom.csv`` and the figure) to
    ``report`` (a :class:`~socialsim.analysis.sections.Report`), when a record holds any."""
    import pandas as pd

    from socialsim.analysis.sections import Section

    rows = probe_scores(recs)
    if not rows:
        return
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    report.sections.append(
        Section(
            "gossip theory of mind: probe scores",
            frame,
            note="per probe, item set (false/true belief for the second-order probes) and "
            "asked agent, over items balanced so that no constant answer beats chance; "
            "credited = right / items with each abstention credited chance; the tricks "
            "(best constant, the probe's rule, abstaining, a uniform guess) and the informed "
            "oracle are scored on the same items; normalised = 0 at the best trick, 1 at the "
            "oracle",
        )
    )
    if out is not None:
        frame.to_csv(out / "gossip_tom.csv", index=False)
        report.figures.append(plot_gossip_tom(frame, out))


def plot_gossip_tom(frame: Any, out: Any) -> Any:
    """One bar per (probe and item set, agent): its credited score, with the best trick (a
    black line) and the informed oracle (a triangle) on the same items, the answered share
    written above where at most four agents share a group (``gossip_tom.csv`` has it always)."""
    from matplotlib.figure import Figure

    from socialsim.analysis import figure_style

    groups = list(dict.fromkeys(zip(frame["probe"], frame["item_set"], strict=True)))
    agents = ordered(frame["agent"])
    width = 0.8 / max(len(agents), 1)
    roomy = len(agents) <= 4  # the answered share above each bar only where it fits (else CSV)
    with figure_style.paper():
        figure = Figure(
            figsize=(max(figure_style.FULL, 1.3 * len(groups) + 2), 4.2), layout="constrained"
        )
        axes = figure.add_subplot()
        for k, agent in enumerate(agents):
            mine = frame[frame["agent"] == agent].set_index(["probe", "item_set"])
            for i, group in enumerate(groups):
                if group not in mine.index:
                    continue
                r = mine.loc[group]
                x = i + (k - (len(agents) - 1) / 2) * width
                y = 0.0 if math.isnan(r["credited"]) else r["credited"]
                axes.bar([x], [y], width=width, color=f"C{k % 10}", label=agent if i == 0 else None)
                axes.hlines(r["best_trick"], x - width / 2, x + width / 2, color="black", lw=1)
                axes.plot([x], [r["oracle"]], marker="v", color="black", ms=3)
                axes.annotate(
                    f"{r['answered']:.0%}" if not math.isnan(r["answered"]) and roomy else "",
                    (x, y),
                    ha="center",
                    va="bottom",
                    fontsize=6,
                    xytext=(0, 1),
                    textcoords="offset points",
                )
        labels = [
            p.replace("_", " ") + ("" if s == truths.ALL else "\n" + s.replace("_", " "))
            for p, s in groups
        ]
        axes.set_xticks(range(len(groups)), labels, fontsize=7)
        axes.set_ylim(0, 1.15)
        axes.set_ylabel("credited score (balanced items)")
        figure_style.suptitle(
            figure,
            "Gossip theory-of-mind probes: score per agent, best trick (line), oracle (triangle)",
        )
        figure_style.figure_legend(figure)
        return figure_style.save(figure, out / "gossip_tom.png")
