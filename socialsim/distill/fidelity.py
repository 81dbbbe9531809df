"""How well a distilled strategy explains the decisions it was distilled from, measured on
episodes it did not see, beside the explanations that need no fitting.

Cross-validation over whole episodes: episode ``i`` of the records read (in key order) is in
fold ``i % k``; each fold is held out once, the strategy fitted on the others, and every held-out
decision scored. Per decision (donations and gossip apart): the mean log-likelihood (natural
log) of what the seat chose, and the accuracy of the most probable choice (a tie between the
most probable choices earns the chosen one's share). The rivals, fitted on the same folds:

* ``constant``: the choices' overall shares (add-``alpha``), the best answer that reads no cue;
* each scripted strategy (``image_scoring``, ``simple_standing``, ``stern_judging``,
  ``always_cooperate``, ``always_defect``, the last two gossiping honestly as they do in the
  env) with a tremble: its choice with probability ``1 - e``, the others sharing ``e``, ``e``
  its add-half error rate on the training folds (at most even: a rule that is always wrong
  is scored as a coin, not as its opposite). The ``nearest norm`` is the one of these with
  the highest held-out log-likelihood over both decisions.

The distilled row is the strategy over the cues it was asked for (``--cues``, base by
default). Beside it, on the same folds, the cue table: the strategy over the base cues alone
(what the numpy society plays), with each extra cue added (stock, round, last experience,
:data:`socialsim.envs.gossip.cues.EXTRA`), and with all of them, each with its number of cells
per decision and how many of them are sparse (fewer than :data:`SPARSE` decisions in the
whole run). A cue that raises the held-out log-likelihood explains the seats' decisions beyond
what the society-playable strategy says; one that lowers it only spreads the decisions over
more cells.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from socialsim.distill.decisions import Decision
from socialsim.distill.strategy import Strategy
from socialsim.envs.gossip import norms
from socialsim.envs.gossip.cues import (
    DONATE,
    EXTRA,
    EXTRA_LABELS,
    GOSSIP,
    VALENCES,
    cue_columns,
    cue_shape,
)

PURPOSES = {DONATE: "donate", GOSSIP: "gossip"}
CHOICES = {DONATE: 2, GOSSIP: 3}
#: a cell with fewer decisions than this is sparse
SPARSE = 5
#: the rows of the cue table: label -> the extra cues
CUE_SETS = {
    "base": (),
    **{f"+ {EXTRA_LABELS[name]}": (name,) for name in EXTRA},
    "+ all": tuple(EXTRA),
}


def _norm_donate(norm: str) -> Callable[[tuple[int, int]], int]:
    if norm in ("always_cooperate", "always_defect"):
        return lambda cues: int(norm == "always_cooperate")
    reading = 0 if norm == "image_scoring" else 1  # bad image, or bad standing
    return lambda cues: int(norms.decide(norm, -1 if cues[reading] else 1) == "cooperate")


def _norm_gossip(norm: str) -> Callable[[tuple[int, int]], int]:
    judge = norm if norm in norms.NORMS else "image_scoring"  # honest reports

    def choice(cues: tuple[int, int]) -> int:
        action = "cooperate" if cues[0] else "defect"
        tone = norms.assess(judge, action, -1 if cues[1] else 1)
        return VALENCES.index(norms.valence(tone))

    return choice


#: the scripted strategies a distilled one is compared with: purpose -> cues -> choice
NORM_RULES = {
    name: {DONATE: _norm_donate(name), GOSSIP: _norm_gossip(name)}
    for name in ("image_scoring", "simple_standing", "stern_judging", "always_cooperate")
    + ("always_defect",)
}


def _table(rule: Callable[[tuple[int, int]], int], k: int, train: Sequence[Decision]) -> np.ndarray:
    """A scripted rule as a probability table ``[cue, cue, choice]`` with its tremble."""
    misses = sum(rule(d.cues) != d.choice for d in train)
    # a rule no better than chance is chance: its tremble never passes the even share
    tremble = min((misses + 0.5) / (len(train) + 1), (k - 1) / k)
    table = np.full((2, 2, k), tremble / (k - 1))
    for cues in np.ndindex(2, 2):
        table[cues][rule(cues)] = 1.0 - tremble
    return table


def _score(table: np.ndarray, rows: np.ndarray, choices: np.ndarray) -> tuple[float, float]:
    """Summed log-likelihood and summed accuracy credit of the decisions whose cells (one row
    of cue values each, in the table's axes) are ``rows`` and whose choices are ``choices``."""
    chosen = np.arange(len(choices))
    p = table[tuple(rows.T)]
    best = p == p.max(axis=1, keepdims=True)
    credit = best[chosen, choices] / best.sum(axis=1)
    with np.errstate(divide="ignore"):  # a choice of probability 0 (smoothing 0): -inf
        loglik = float(np.log(p[chosen, choices]).sum())
    return loglik, float(credit.sum())


def cross_validate(
    decisions: Sequence[Decision],
    episodes: int,
    folds: int = 5,
    smoothing: float = 0.5,
    extras: tuple[str, ...] = (),
) -> dict[str, Any]:
    """The held-out scores of the distilled strategy (over the base cues and ``extras``) and
    its rivals (see the module docstring), per purpose: ``{"donate": {"n": N, "models": {name:
    {"log_likelihood", "accuracy"}}}, ..., "nearest_norm": name, "cues": {label: {"extras":
    [...], "donate": {"log_likelihood", "accuracy", "cells", "sparse"}, ...}}}``; a purpose
    without decisions is left out."""
    if episodes < 2:
        raise ValueError(f"episodes: {episodes} read; holding whole episodes out needs at least 2")
    k = min(folds, episodes)
    result: dict[str, Any] = {"episodes": episodes, "folds": k}
    cue_sets = {label: {"extras": list(chosen)} for label, chosen in CUE_SETS.items()}
    totals: dict[str, float] = {}
    for purpose, label in PURPOSES.items():
        mine = [d for d in decisions if d.purpose == purpose]
        if not mine:
            continue
        full = np.array([d.full for d in mine], dtype=np.intp)
        choices = np.array([d.choice for d in mine], dtype=np.intp)
        fold_of = np.array([d.episode % k for d in mine])
        sums: dict[str, list[float]] = {}
        gains: dict[str, list[float]] = {}

        def add(into: dict[str, list[float]], name: str, score: tuple[float, float]) -> None:
            acc = into.setdefault(name, [0.0, 0.0])
            acc[0] += score[0]
            acc[1] += score[1]

        for fold in range(k):
            held = fold_of == fold
            if not held.any():
                continue
            train = [d for d, out in zip(mine, held, strict=True) if not out]
            test, chose = full[held], choices[held]
            fitted = Strategy.fit("fold", train, smoothing, extras).probabilities(purpose)
            tables = {"distilled": (fitted, cue_columns(extras))}
            counts = np.bincount(choices[~held], minlength=CHOICES[purpose])
            constant = (counts + 0.5) / (counts.sum() + 0.5 * len(counts))
            tables["constant"] = (np.broadcast_to(constant, (2, 2, CHOICES[purpose])), (0, 1))
            for name, rules in NORM_RULES.items():
                tables[name] = (_table(rules[purpose], CHOICES[purpose], train), (0, 1))
            for name, (table, columns) in tables.items():
                add(sums, name, _score(table, test[:, columns], chose))
            for name, chosen in CUE_SETS.items():
                table = Strategy.fit("fold", train, smoothing, chosen).probabilities(purpose)
                add(gains, name, _score(table, test[:, cue_columns(chosen)], chose))
        n = len(mine)
        result[label] = {
            "n": n,
            "models": {
                name: {"log_likelihood": total / n, "accuracy": hits / n}
                for name, (total, hits) in sums.items()
            },
        }
        for name, chosen in CUE_SETS.items():
            whole = Strategy.fit("all", mine, smoothing, chosen)
            seen = (whole.donate if purpose == DONATE else whole.gossip).sum(axis=-1)
            cue_sets[name][label] = {
                "log_likelihood": gains[name][0] / n,
                "accuracy": gains[name][1] / n,
                "cells": int(np.prod(cue_shape(chosen))),
                "sparse": int((seen < SPARSE).sum()),
            }
        for name in NORM_RULES:
            totals[name] = totals.get(name, 0.0) + sums[name][0]
    if totals:
        result["nearest_norm"] = max(totals, key=totals.get)  # the first listed of ties
        result["cues"] = cue_sets
    return result


def cue_table_text(name: str, fidelity: dict[str, Any]) -> str:
    """What each extra cue adds to the base cues, as a plain-text table."""
    cue_sets = fidelity.get("cues")
    if not cue_sets:
        return ""
    purposes = [p for p in PURPOSES.values() if p in fidelity]
    lines = [
        f"strategy {name}: the cues beside the base ones (held out alike; cells per decision, "
        f"sparse: fewer than {SPARSE} decisions)"
    ]
    lines.append(
        f"  {'cues':19s}"
        + "".join(
            f" {p + ' log-lik':>14s} {'accuracy':>8s} {'cells':>5s} {'sparse':>6s}"
            for p in purposes
        )
    )
    columns = (("log_likelihood", ">14.3f"), ("accuracy", ">8.3f"), ("cells", ">5d"))
    for label, entry in cue_sets.items():
        cells = _cells([entry[p] for p in purposes], (*columns, ("sparse", ">6d")))
        lines.append(f"  {label:19s}{cells}")
    return "\n".join(lines)


def _cells(entries: list[dict[str, Any]], columns: tuple[tuple[str, str], ...]) -> str:
    """A table row's cells: each entry's ``columns`` (key, format), entry after entry."""
    return "".join(f" {entry[key]:{spec}}" for entry in entries for key, spec in columns)


def table_text(name: str, fidelity: dict[str, Any]) -> str:
    """The fidelity of one strategy as a plain-text table."""
    lines = [
        f"strategy {name}: {fidelity['episodes']} episodes, {fidelity['folds']}-fold "
        "cross-validation over whole episodes (held-out log-likelihood per decision, accuracy)"
    ]
    purposes = [p for p in PURPOSES.values() if p in fidelity]
    header = f"  {'model':31s}" + "".join(
        f" {p + ' (n=' + str(fidelity[p]['n']) + ')':>26s}" for p in purposes
    )
    lines.append(header)
    names = list(fidelity[purposes[0]]["models"]) if purposes else []
    nearest = fidelity.get("nearest_norm")
    for model in names:
        label = model + (" (nearest norm)" if model == nearest else "")
        scores = [fidelity[p]["models"][model] for p in purposes]
        cells = _cells(scores, (("log_likelihood", ">14.3f"), ("accuracy", ">11.3f")))
        lines.append(f"  {label:31s}{cells}")
    return "\n".join(lines)
