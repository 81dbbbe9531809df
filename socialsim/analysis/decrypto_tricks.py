"""Every Decrypto theory-of-mind score beside its tricks: the answerers that hold no beliefs,
scored on the same asked turns as the agent under test, and the informed oracle.

A trick here replaces the probed agent's answers in the records (the game, the truths and the
turns stay) and the very same scoring function reads them, so a trick's number is what that
answerer would have scored on these items. The agent kinds of
:mod:`socialsim.agents.scripted.decrypto_tricks` play the same rules in a seat.

Piaget (the encoder predicts the interceptor's guess):

=========================  =================================================================
answerer                   prediction on each asked turn
=========================  =================================================================
``best constant``          one code every turn: the best of the 24 for each score
``random (expected)``      a uniformly random code: the mean of the 24 constants (exact, each
                           score being linear in the turns' hits)
``predict the code``       the true code (the encoder always predicts an interception)
``predict the last guess`` the interceptor's guess of the previous turn (none: an abstention)
``abstain``                ``"unknown"``, which counts and never hits
``oracle``                 the interceptor's actual guess
=========================  =================================================================

Gopnik (the interceptor's keyword questions; N = its ``keywords_now`` answer):

==============================  ============================================================
answerer                        answers
==============================  ============================================================
``constant list``               one list of four non-keywords to every question (every such
                                list scores the same: it is the best constant)
``a constant list per question``  a different such list for each question
``repeat the first answer``     N, to every question
``copy the revealed keywords``  N, then the revealed keywords wherever they are shown
``abstain``                     ``["unknown"] * 4``
``random words``                four words never said before (never a keyword, never equal
                                to another answer: the limit of a large vocabulary)
``oracle``                      N to every question but the told one: the told numbers'
                                keywords and N elsewhere
==============================  ============================================================

Each score's ``best trick`` is the highest of its tricks (the oracle is none), and
``normalised`` = (score - best trick) / (oracle - best trick), :func:`~socialsim.analysis.
baselines.normalised`: 0 at the trick, 1 at the oracle; ``nan`` where the tricks reach the oracle
(the score cannot tell a mind from a trick) and for the descriptive ``predicted_code`` and
``predicted_code_without_interception``. ``origin`` says which scores are the paper's.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from socialsim.analysis import tom
from socialsim.analysis.baselines import best_trick, normalised
from socialsim.envs.decrypto.protocol import (
    CODES,
    CONSTANT_KEYWORD_LISTS,
    GOPNIK,
    KEYWORD_QUESTIONS,
    KEYWORDS_TOLD_INTERCEPTOR,
    PIAGET,
    UNKNOWN,
)
from socialsim.records import EpisodeRecord

TESTED = "tested"
ORACLE = "oracle"
BEST = "best trick"
NORMALISED = "normalised"
PAPER, OURS, DESCRIPTIVE = "paper", "new", "descriptive"

PIAGET_SCORES = {
    "predicted_interceptor_guess": PAPER,
    "predicted_interceptor_guess_on_interception": PAPER,
    "predicted_code": f"{PAPER}, {DESCRIPTIVE}",
    "predicted_code_without_interception": f"{OURS}, {DESCRIPTIVE}",
    "predicted_interceptor_guess_on_miss": OURS,
    "interception_foresight": OURS,
}
GOPNIK_SCORES = {**dict.fromkeys(tom.GOPNIK_SCORES, PAPER), **dict.fromkeys(tom.TOLD_SCORES, OURS)}
CONSTANT_LISTS = CONSTANT_KEYWORD_LISTS
ALL_QUESTIONS = (*KEYWORD_QUESTIONS, KEYWORDS_TOLD_INTERCEPTOR)


def _replace(
    records: list[EpisodeRecord], name: str, answer: Callable[[EpisodeRecord, dict], dict]
) -> list[EpisodeRecord]:
    """The records with each ``name`` probe entry's answers replaced by ``answer(record, entry)``."""
    out = []
    for record in records:
        probes = [
            {**entry, **answer(record, entry)} if entry.get("probe") == name else entry
            for entry in record.probes
        ]
        out.append(dataclasses.replace(record, probes=probes))
    return out


def _done(records: Iterable[EpisodeRecord]) -> list[EpisodeRecord]:
    return [r for r in records if r.status == "done" and r.summary]


# -- Piaget ---------------------------------------------------------------------------------------


def _turns(record: EpisodeRecord) -> dict[int, dict[str, Any]]:
    return {t["turn"]: t for t in record.summary["turn_log"]}


def _predict(rule: Callable[[dict[int, dict], int], Any]):
    def answer(record: EpisodeRecord, entry: dict) -> dict:
        return {"prediction": rule(_turns(record), entry["turn"])}

    return answer


def _last_guess(turns: dict[int, dict], turn: int) -> Any:
    before = turns.get(turn - 1)
    guess = before.get("interceptor_guess") if before else None
    return list(guess) if guess is not None else UNKNOWN


def _piaget_scores(records: list[EpisodeRecord]) -> dict[str, float]:
    table = tom.perspective_taking(records)
    return {name: table[name] for name in PIAGET_SCORES}


def piaget_tricks(records: Iterable[EpisodeRecord]) -> dict[str, dict[str, float]]:
    """Answerer -> the Piaget scores (see the module docstring), ``tested`` first."""
    games = _done(records)
    constants = [
        _piaget_scores(_replace(games, PIAGET, _predict(lambda _t, _n, c=code: list(c))))
        for code in CODES
    ]
    rules = {
        "predict the code": lambda turns, n: list(turns[n]["code"]),
        "predict the last guess": _last_guess,
        "abstain": lambda _turns, _n: UNKNOWN,
        ORACLE: lambda turns, n: turns[n]["interceptor_guess"],
    }
    scored = {
        name: _piaget_scores(_replace(games, PIAGET, _predict(r))) for name, r in rules.items()
    }
    return {
        TESTED: _piaget_scores(games),
        "best constant": {s: _max(c[s] for c in constants) for s in PIAGET_SCORES},
        "random (expected)": {s: _avg(c[s] for c in constants) for s in PIAGET_SCORES},
        **scored,
    }


def _max(values: Iterable[float]) -> float:
    defined = [v for v in values if not math.isnan(v)]
    return max(defined) if defined else math.nan


def _avg(values: Iterable[float]) -> float:
    values = list(values)
    return math.nan if any(math.isnan(v) for v in values) else sum(values) / len(values)


# -- Gopnik ---------------------------------------------------------------------------------------


def _gopnik_scores(records: list[EpisodeRecord]) -> dict[str, float]:
    return {
        **{s: tom.representational_change(records)[s] for s in tom.GOPNIK_SCORES},
        **{s: tom.told_false_belief(records)[s] for s in tom.TOLD_SCORES},
    }


def _answers(make: Callable[[EpisodeRecord, dict, list[str] | None], Mapping[str, Any]]):
    """An answerer from ``make(record, entry, now)``, where ``now`` is the tested agent's
    ``keywords_now`` (None when it gave none: then every answer is None, the turn unscored); a
    record without the told question keeps it unasked."""

    def answer(record: EpisodeRecord, entry: dict) -> dict:
        now = entry.get(KEYWORD_QUESTIONS[0])
        made = {kind: None for kind in ALL_QUESTIONS} if now is None else make(record, entry, now)
        return {k: (list(v) if v is not None else None) for k, v in made.items() if k in entry}

    return answer


def _oracle(record: EpisodeRecord, entry: dict, now: list[str]) -> dict[str, Any]:
    truth = record.summary["keywords"]
    told = [truth[j] if j + 1 in entry.get("told", ()) else w for j, w in enumerate(now)]
    return {**dict.fromkeys(KEYWORD_QUESTIONS, now), KEYWORDS_TOLD_INTERCEPTOR: told}


class _Nonces:
    """Words never said before: ``random1``, ``random2``... (no keyword is one)."""

    def __init__(self) -> None:
        self.n = 0

    def __call__(self, record: EpisodeRecord, entry: dict, now: list[str]) -> dict[str, Any]:
        out = {}
        for kind in ALL_QUESTIONS:
            out[kind] = [f"random{self.n + i}" for i in range(4)]
            self.n += 4
        return out


GOPNIK_TRICKS: dict[str, Callable[[EpisodeRecord, dict, list[str]], Mapping[str, Any]]] = {
    "constant list": lambda _r, _e, _n: dict.fromkeys(ALL_QUESTIONS, CONSTANT_LISTS[0]),
    "a constant list per question": lambda _r, _e, _n: dict(
        zip(ALL_QUESTIONS, CONSTANT_LISTS, strict=True)
    ),
    "repeat the first answer": lambda _r, _e, now: dict.fromkeys(ALL_QUESTIONS, now),
    "copy the revealed keywords": lambda record, _e, now: {
        KEYWORD_QUESTIONS[0]: now,
        **dict.fromkeys(ALL_QUESTIONS[1:], record.summary["keywords"]),
    },
    "abstain": lambda _r, _e, _n: dict.fromkeys(ALL_QUESTIONS, [UNKNOWN] * 4),
}


def gopnik_tricks(records: Iterable[EpisodeRecord]) -> dict[str, dict[str, float]]:
    """Answerer -> the Gopnik scores (the paper's five and our told ones), ``tested`` first."""
    games = _done(records)
    makers = {**GOPNIK_TRICKS, "random words": _Nonces(), ORACLE: _oracle}
    return {
        TESTED: _gopnik_scores(games),
        **{
            name: _gopnik_scores(_replace(games, GOPNIK, _answers(make)))
            for name, make in makers.items()
        },
    }


# -- the table ------------------------------------------------------------------------------------


def beside_tricks(
    answerers: Mapping[str, Mapping[str, float]], origins: Mapping[str, str]
) -> list[dict[str, Any]]:
    """One row per score: its origin, every answerer's value, the best trick and the normalised
    score (``nan`` for a descriptive score)."""
    rows = []
    for score, origin in origins.items():
        values = {name: table[score] for name, table in answerers.items()}
        tricks = {n: v for n, v in values.items() if n not in (TESTED, ORACLE)}
        best_name, best_value = best_trick(tricks)
        scaled = (
            math.nan
            if DESCRIPTIVE in origin
            else normalised(values[TESTED], best_value, values[ORACLE])
        )
        rows.append(
            {"score": score, "origin": origin, **values, BEST: best_name, NORMALISED: scaled}
        )
    return rows


def tricks_rows(records: Iterable[EpisodeRecord]) -> list[dict[str, Any]]:
    """The rows of both probes that ran (a probe whose tested agent scored no episode is left
    out), each with ``probe``."""
    games = _done(records)
    rows: list[dict[str, Any]] = []
    if tom.perspective_taking(games)["episodes"]:
        rows += [
            {"probe": "perspective_taking", **row}
            for row in beside_tricks(piaget_tricks(games), PIAGET_SCORES)
        ]
    if tom.representational_change(games)["episodes"] or tom.told_false_belief(games)["episodes"]:
        rows += [
            {"probe": "representational_change", **row}
            for row in beside_tricks(gopnik_tricks(games), GOPNIK_SCORES)
        ]
    return rows
