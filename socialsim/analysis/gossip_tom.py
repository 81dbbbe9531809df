"""Gossip theory-of-mind scores: each probe entry of a record (:mod:`socialsim.envs.gossip.tom`)
against its ground truth, computed from the same record. Pure functions over
:class:`~socialsim.records.EpisodeRecord` lists (records that are not ``done`` are ignored).

Per probe and per asking agent (its label, :func:`socialsim.analysis.tom.agent_label`: the
model's name for an LLM seat):

| column | what |
|---|---|
| `asked` | entries whose truth the record settles (others are not counted) |
| `answered` | the share of those answered with one of the probe's words; an abstention ("unknown", empty, a refusal, anything else) is not an answer and never scores |
| `score` | right answers / answered (NaN when none was answered) |
| `score_over_asked` | right answers / asked: abstaining counts as wrong |
| `informed` | the share of asked entries whose answer was in the seat's inbox when asked |
| `score_informed` | right answers / answered, over the informed entries only: the oracle's is 1.0 |
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from socialsim.analysis.order import ordered
from socialsim.analysis.tom import agent_label
from socialsim.envs.gossip import tom
from socialsim.records import EpisodeRecord

COLUMNS = (
    "probe",
    "order",
    "agent",
    "asked",
    "answered",
    "score",
    "score_over_asked",
    "informed",
    "score_informed",
)


def scored_entries(record: EpisodeRecord) -> list[dict[str, Any]]:
    """The record's gossip probe entries that its truth settles, each with ``truth``, ``hit``
    (``None`` when unanswered) and ``informed``."""
    out = []
    for entry in record.probes:
        if entry.get("probe") not in tom.GOSSIP_PROBES:
            continue
        true = tom.truth(record, entry)
        if true is None:
            continue
        answer = entry.get("answer")
        out.append(
            {
                **entry,
                "truth": true,
                "hit": None if answer is None else answer == true,
                "informed": tom.informed(record, entry),
            }
        )
    return out


def _ratio(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else math.nan


def probe_scores(
    records: Iterable[EpisodeRecord],
    label: Callable[[Mapping[str, Any]], str] = agent_label,
) -> list[dict[str, Any]]:
    """One row per (probe, agent label), in probe order then by label (see the module)."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        if record.status != "done":
            continue
        for entry in scored_entries(record):
            groups[(entry["probe"], label(record.seats[entry["seat"]]))].append(entry)
    rows = []
    order = {name: i for i, name in enumerate(tom.GOSSIP_PROBES)}
    for (probe, agent), entries in sorted(
        groups.items(), key=lambda kv: (order[kv[0][0]], kv[0][1])
    ):
        answered = [e for e in entries if e["hit"] is not None]
        hits = sum(bool(e["hit"]) for e in answered)
        informed = [e for e in entries if e["informed"]]
        informed_answered = [e for e in informed if e["hit"] is not None]
        rows.append(
            {
                "probe": probe,
                "order": tom.ORDERS[probe],
                "agent": agent,
                "asked": len(entries),
                "answered": _ratio(len(answered), len(entries)),
                "score": _ratio(hits, len(answered)),
                "score_over_asked": _ratio(hits, len(entries)),
                "informed": _ratio(len(informed), len(entries)),
                "score_informed": _ratio(
                    sum(bool(e["hit"]) for e in informed_answered), len(informed_answered)
                ),
            }
        )
    return rows


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
            note="per probe and asked agent; asked = questions the record settles; answered = "
            "share answered with one of the probe's words (abstaining never scores); score = "
            "right / answered; score_over_asked = right / asked; informed = share whose answer "
            "was in the seat's inbox; score_informed = right / answered over those",
        )
    )
    if out is not None:
        frame.to_csv(out / "gossip_tom.csv", index=False)
        report.figures.append(plot_gossip_tom(frame, out))


def plot_gossip_tom(frame: Any, out: Any) -> Any:
    """One bar per (probe, agent): its score, the answered share written above it."""
    from matplotlib.figure import Figure

    from socialsim.analysis import figure_style

    probes = [p for p in tom.GOSSIP_PROBES if p in set(frame["probe"])]
    agents = ordered(frame["agent"])
    width = 0.8 / max(len(agents), 1)
    with figure_style.paper():
        figure = Figure(figsize=(figure_style.FULL, 3.2), layout="constrained")
        axes = figure.add_subplot()
        for k, agent in enumerate(agents):
            mine = frame[frame["agent"] == agent].set_index("probe")
            xs, ys, shares = [], [], []
            for i, probe in enumerate(probes):
                if probe in mine.index:
                    score = mine.loc[probe, "score"]
                    xs.append(i + (k - (len(agents) - 1) / 2) * width)
                    ys.append(0.0 if math.isnan(score) else score)
                    shares.append(mine.loc[probe, "answered"])
            axes.bar(xs, ys, width=width, label=agent)
            for x, y, share in zip(xs, ys, shares, strict=True):
                axes.annotate(
                    f"{share:.0%}",
                    (x, y),
                    ha="center",
                    va="bottom",
                    fontsize=6,
                    xytext=(0, 1),
                    textcoords="offset points",
                )
        axes.set_xticks(range(len(probes)), [p.replace("_", " ") for p in probes])
        axes.set_ylim(0, 1.15)
        axes.set_ylabel("score (right / answered)")
        figure_style.suptitle(
            figure, "Gossip theory-of-mind probes: score per agent (answered share above)"
        )
        figure_style.figure_legend(figure)
        return figure_style.save(figure, out / "gossip_tom.png")
