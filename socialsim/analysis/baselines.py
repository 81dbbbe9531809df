"""The tricks a theory-of-mind score is read beside: balanced item sets, chance, the answerers
that hold no beliefs, and the score normalised between the best of them and the informed oracle.
Pure functions over scored items (mappings with ``truth``, the answer ``hit`` or ``None`` for an
abstention, and whatever the caller stratifies on); no game is named here.

* **Balance**: :func:`balance` keeps, of each answer class, as many items as of every other
  (and, given a rule's hits, a share ``1/k`` of them where the rule is right), so that every
  constant answer, and the rule, scores exactly chance ``1/k`` on the kept items.
* **Credit**: an abstention is credited with chance (:func:`credited`), so that abstaining
  neither beats nor trails guessing.
* **Normalise**: ``(score - best trick) / (oracle - best trick)``: 0 at the best trick, 1 at the
  oracle; NaN where the oracle does no better than a trick (the items cannot tell a mind from one).
  :func:`best_trick` names the best of a table of tricks.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

Item = TypeVar("Item")


def _spread(items: Sequence[Item], n: int) -> list[Item]:
    """``n`` of ``items``, evenly spaced in their order (deterministic)."""
    if n >= len(items):
        return list(items)
    return [items[(i * len(items)) // n] for i in range(n)]


def _rule_quota(right: list[int], wrong: list[int]) -> tuple[int, list[int]]:
    """The largest ``n`` (items per class) for which ``n`` of the ``k n`` kept items can be ones
    the rule gets right, and how many of each class's are (0 when none)."""
    for n in range(min(r + w for r, w in zip(right, wrong, strict=True)), 0, -1):
        low = [max(0, n - w) for w in wrong]
        high = [min(n, r) for r in right]
        if sum(low) <= n <= sum(high):
            quota, spare = list(low), n - sum(low)
            for i, h in enumerate(high):
                extra = min(spare, h - quota[i])
                quota[i] += extra
                spare -= extra
            return n, quota
    return 0, [0] * len(right)


def balance(
    items: Iterable[Item],
    answer: Callable[[Item], Hashable],
    rule_hit: Callable[[Item], bool] | None = None,
) -> list[Item]:
    """The largest deterministic subset with every answer class equally often (``n`` each of
    ``k`` classes) and, with ``rule_hit``, exactly ``n`` of the ``k n`` items ones the rule gets
    right (none when that cannot be). Fewer than two classes: nothing (no item then separates an
    answerer from a constant). Items keep their order."""
    items = list(items)
    strata: dict[tuple[Hashable, bool], list[Item]] = defaultdict(list)
    for item in items:
        strata[(answer(item), bool(rule_hit(item)) if rule_hit else False)].append(item)
    classes = sorted({c for c, _ in strata}, key=repr)
    if len(classes) < 2:
        return []
    right = [len(strata[(c, True)]) for c in classes]
    wrong = [len(strata[(c, False)]) for c in classes]
    if rule_hit is None:
        n, quota = min(wrong), [0] * len(classes)
    else:
        n, quota = _rule_quota(right, wrong)
    kept = [
        x
        for c, q in zip(classes, quota, strict=True)
        for x in _spread(strata[(c, True)], q) + _spread(strata[(c, False)], n - q)
    ]
    order = {id(x): i for i, x in enumerate(items)}
    return sorted(kept, key=lambda x: order[id(x)])


def chance(truths: Iterable[Hashable]) -> float:
    """1 / the number of answer classes among ``truths`` (NaN for none)."""
    k = len(set(truths))
    return 1 / k if k else math.nan


def best_constant(truths: Sequence[Hashable]) -> float:
    """The score of the best constant answer: the majority class's share."""
    return max(Counter(truths).values()) / len(truths) if truths else math.nan


def credited(hits: Sequence[bool | None], chance_: float) -> float:
    """Right answers, each abstention (``None``) credited ``chance_``, over all items."""
    if not hits:
        return math.nan
    return sum(chance_ if h is None else float(h) for h in hits) / len(hits)


#: below this gap between the oracle and the best trick, a score tells nothing apart
RESOLUTION = 1e-9


def _defined(value: float | None) -> bool:
    return value is not None and not math.isnan(value)


def best_trick(tricks: Mapping[str, float | None]) -> tuple[str | None, float]:
    """The trick with the highest defined score, and that score (``(None, nan)`` if none;
    ties: the first listed)."""
    defined = [(value, name) for name, value in tricks.items() if _defined(value)]
    if not defined:
        return None, math.nan
    value = max(v for v, _ in defined)
    return next(name for v, name in defined if v == value), value


def normalised(score: float | None, best_trick: float | None, oracle: float | None) -> float:
    """0 at the best trick, 1 at the oracle; NaN where any is undefined (``None`` or NaN) or
    the oracle does not beat the best trick by more than :data:`RESOLUTION`."""
    if not (_defined(score) and _defined(best_trick) and _defined(oracle)):
        return math.nan
    if oracle - best_trick <= RESOLUTION:  # type: ignore[operator]
        return math.nan
    return (score - best_trick) / (oracle - best_trick)  # type: ignore[operator]


def trick_scores(
    items: Sequence[Any],
    truth: Callable[[Any], Hashable],
    rule: Callable[[Any], Hashable] | None,
    informed: Callable[[Any], bool],
    words: int,
) -> dict[str, float]:
    """``chance``, the tricks' scores (``constant``: the best one; ``rule``; ``abstainer``;
    ``random``: uniform over ``words`` answers), ``best_trick`` and the informed ``oracle`` (the
    truth where informed, abstaining elsewhere) on ``items``."""
    truths = [truth(x) for x in items]
    base = chance(truths)
    scores = {
        "chance": base,
        "constant": best_constant(truths),
        "rule": credited([rule(x) == t for x, t in zip(items, truths, strict=True)], base)
        if rule
        else math.nan,
        "abstainer": base if items else math.nan,
        "random": 1 / words if items else math.nan,
    }
    tricks = [v for k, v in scores.items() if k != "chance" and not math.isnan(v)]
    scores["best_trick"] = max(tricks) if tricks else math.nan
    scores["oracle"] = credited([True if informed(x) else None for x in items], base)
    return scores
