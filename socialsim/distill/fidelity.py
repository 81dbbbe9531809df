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
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from socialsim.distill.decisions import Decision
from socialsim.distill.strategy import Strategy
from socialsim.envs.gossip import norms
from socialsim.envs.gossip.cues import DONATE, GOSSIP, VALENCES

PURPOSES = {DONATE: "donate", GOSSIP: "gossip"}
CHOICES = {DONATE: 2, GOSSIP: 3}


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


def _score(table: np.ndarray, test: Sequence[Decision]) -> tuple[float, float]:
    """Summed log-likelihood and summed accuracy credit of ``test`` under ``table``."""
    loglik = credit = 0.0
    for d in test:
        row = table[d.cues]
        loglik += float(np.log(row[d.choice]))
        best = np.flatnonzero(row == row.max())
        credit += (d.choice in best) / len(best)
    return loglik, credit


def cross_validate(
    decisions: Sequence[Decision], episodes: int, folds: int = 5, smoothing: float = 0.5
) -> dict[str, Any]:
    """The held-out scores of the distilled strategy and its rivals (see the module docstring),
    per purpose: ``{"donate": {"n": N, "models": {name: {"log_likelihood", "accuracy"}}}, ...,
    "nearest_norm": name}``; a purpose without decisions is left out."""
    if episodes < 2:
        raise ValueError(f"episodes: {episodes} read; holding whole episodes out needs at least 2")
    k = min(folds, episodes)
    result: dict[str, Any] = {"episodes": episodes, "folds": k}
    totals: dict[str, float] = {}
    for purpose, label in PURPOSES.items():
        mine = [d for d in decisions if d.purpose == purpose]
        if not mine:
            continue
        sums: dict[str, list[float]] = {}
        for fold in range(k):
            train = [d for d in mine if d.episode % k != fold]
            test = [d for d in mine if d.episode % k == fold]
            if not test:
                continue
            fitted = Strategy.fit("fold", train, smoothing)
            tables = {"distilled": fitted.probabilities(purpose)}
            counts = np.bincount([d.choice for d in train], minlength=CHOICES[purpose])
            constant = (counts + 0.5) / (counts.sum() + 0.5 * len(counts))
            tables["constant"] = np.broadcast_to(constant, (2, 2, CHOICES[purpose]))
            for name, rules in NORM_RULES.items():
                tables[name] = _table(rules[purpose], CHOICES[purpose], train)
            for name, table in tables.items():
                loglik, credit = _score(table, test)
                acc = sums.setdefault(name, [0.0, 0.0])
                acc[0] += loglik
                acc[1] += credit
        n = len(mine)
        result[label] = {
            "n": n,
            "models": {
                name: {"log_likelihood": total / n, "accuracy": hits / n}
                for name, (total, hits) in sums.items()
            },
        }
        for name in NORM_RULES:
            totals[name] = totals.get(name, 0.0) + sums[name][0]
    if totals:
        result["nearest_norm"] = max(totals, key=totals.get)  # the first listed of ties
    return result


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
        cells = "".join(
            f" {fidelity[p]['models'][model]['log_likelihood']:>14.3f}"
            f" {fidelity[p]['models'][model]['accuracy']:>11.3f}"
            for p in purposes
        )
        lines.append(f"  {label:31s}{cells}")
    return "\n".join(lines)
