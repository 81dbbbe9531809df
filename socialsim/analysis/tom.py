"""Decrypto metrics: outcomes, the paper's competitive and cooperative grids, and the
theory-of-mind scores. Pure functions over :class:`~socialsim.records.EpisodeRecord` lists
(records that are not ``done`` are ignored); nothing here replays a game.

| function | what |
|---|---|
| :func:`outcomes` | ending counts, win rate, average turns, average interception / miscommunication turn, IR% and MR% |
| :func:`competitive_grid` | encoder = decoder agent A vs interceptor B: (intercept + both) / games, mean +- SEM over seed blocks |
| :func:`cooperative_grid` | one interceptor, every encoder x decoder: (miscomm + both) / games, mean +- SEM over seed blocks |
| :func:`perspective_taking` | the Piaget probe's scores |
| :func:`representational_change` | the Gopnik probe's scores (the paper's five) |
| :func:`told_false_belief` | the Gopnik probe's told-interceptor items (ours) |
| :func:`invalid_action_rates` | invalid actions per decision, per seat |

Seed blocks: episode seed ``s`` is in block ``s // episodes_per_block``. With the paper's 32
episodes per env seed and base seed 0, seeds 0-95 form the blocks 0, 1, 2 (its env seeds).
An agent is named by :func:`agent_label`: its kind without a seat suffix (``glove_encoder`` and
``glove_decoder`` are both ``glove``) plus its parameters.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from socialsim.analysis.stats import sem
from socialsim.envs.decrypto.protocol import (
    ENDINGS,
    GOPNIK,
    KEYWORD_QUESTIONS,
    KEYWORDS_TOLD_INTERCEPTOR,
    PIAGET,
    SEATS,
    UNKNOWN,
)
from socialsim.records import EpisodeRecord

SEAT_SUFFIXES = ("_encoder", "_decoder", "_interceptor", "_guesser")
EPISODES_PER_BLOCK = 32


def _done(records: Iterable[EpisodeRecord]) -> list[EpisodeRecord]:
    return [r for r in records if r.status == "done" and r.summary]


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else math.nan


# -- outcomes -------------------------------------------------------------------------------------


def outcomes(records: Iterable[EpisodeRecord]) -> dict[str, Any]:
    """Ending counts and rates over the finished games.

    ``win_rate`` is the team's (``survived`` / games; the interceptor's is 1 minus it).
    ``avg_interception_turn`` and ``avg_miscommunication_turn`` average the 1-based turn of every
    such event. ``interception_rate`` (IR%) = interceptions / (2 x games) x 100, and
    ``miscommunication_rate`` (MR%) likewise: the share of the two tokens that end a game.
    """
    games = _done(records)
    counts = {ending: 0 for ending in ENDINGS}
    turns, interception_turns, miscommunication_turns = [], [], []
    for record in games:
        summary = record.summary
        counts[summary["ending"]] += 1
        turns.append(summary["turns"])
        for entry in summary["turn_log"]:
            if entry["interception"]:
                interception_turns.append(entry["turn"])
            if entry["miscommunication"]:
                miscommunication_turns.append(entry["turn"])
    n = len(games)
    return {
        "games": n,
        **counts,
        "win_rate": counts["survived"] / n if n else math.nan,
        "avg_turns": _mean(turns),
        "avg_interception_turn": _mean(interception_turns),
        "avg_miscommunication_turn": _mean(miscommunication_turns),
        "interception_rate": 100 * len(interception_turns) / (2 * n) if n else math.nan,
        "miscommunication_rate": 100 * len(miscommunication_turns) / (2 * n) if n else math.nan,
    }


# -- grids ----------------------------------------------------------------------------------------


def agent_label(spec: Mapping[str, Any]) -> str:
    """``{"kind": "glove_encoder", "k": 16}`` -> ``"glove(k=16)"``; a kind without params -> its
    family; an LLM seat -> its model's name (``gpt-4o-mini(prompt_style=plain)``)."""
    kind = str(spec.get("kind", "?"))
    model = spec.get("model")
    if model is not None:  # a language model is named by its model, not its ~600-char table
        name = model.get("model", "?") if isinstance(model, Mapping) else model
        kind = str(name).rsplit("/", 1)[-1]
        spec = {k: v for k, v in spec.items() if k != "model"}
    for suffix in SEAT_SUFFIXES:
        if kind.endswith(suffix):
            kind = kind[: -len(suffix)]
            break
    # ``recorded``: the turns a replay agent gives back (one recorded game's), not who plays
    params = ", ".join(f"{k}={spec[k]}" for k in sorted(spec) if k not in ("kind", "recorded"))
    return f"{kind}({params})" if params else kind


@dataclass(frozen=True)
class GridCell:
    """One grid cell: the metric's mean and SEM over seed blocks (SEM is NaN with one block),
    and the games' average length in turns with its SEM over games (NaN with one game)."""

    mean: float
    sem: float
    blocks: int
    games: int
    avg_turns: float
    turns_sem: float = math.nan


def _block_stats(
    records: Sequence[EpisodeRecord],
    rate: Callable[[Sequence[EpisodeRecord]], float],
    episodes_per_block: int,
) -> GridCell:
    blocks: dict[int, list[EpisodeRecord]] = defaultdict(list)
    for record in records:
        blocks[record.seed // episodes_per_block].append(record)
    values = [rate(block) for _, block in sorted(blocks.items())]
    k = len(values)
    mean = _mean(values)
    if k > 1:
        variance = sum((v - mean) ** 2 for v in values) / (k - 1)
        sem = math.sqrt(variance / k)
    else:
        sem = math.nan
    turns = [r.summary["turns"] for r in records]
    avg = _mean(turns)
    n = len(turns)
    turns_sem = math.sqrt(sum((t - avg) ** 2 for t in turns) / (n - 1) / n) if n > 1 else math.nan
    return GridCell(mean, sem, k, n, avg, turns_sem)


def _loss_rate(endings: tuple[str, str]) -> Callable[[Sequence[EpisodeRecord]], float]:
    def rate(block: Sequence[EpisodeRecord]) -> float:
        return sum(r.summary["ending"] in endings for r in block) / len(block)

    return rate


def competitive_grid(
    records: Iterable[EpisodeRecord],
    episodes_per_block: int = EPISODES_PER_BLOCK,
    label: Callable[[Mapping[str, Any]], str] = agent_label,
) -> dict[tuple[str, str], GridCell]:
    """(team A, interceptor B) -> the interception-loss rate (intercept + both) / games.

    Only games whose encoder and decoder have the same label (the paper's encoder = decoder)
    count.
    """
    cells: dict[tuple[str, str], list[EpisodeRecord]] = defaultdict(list)
    for record in _done(records):
        encoder, decoder, interceptor = (label(record.seats[seat]) for seat in SEATS)
        if encoder == decoder:
            cells[(encoder, interceptor)].append(record)
    rate = _loss_rate(("intercept", "both"))
    return {
        key: _block_stats(group, rate, episodes_per_block) for key, group in sorted(cells.items())
    }


def cooperative_grid(
    records: Iterable[EpisodeRecord],
    interceptor: str | None = None,
    episodes_per_block: int = EPISODES_PER_BLOCK,
    label: Callable[[Mapping[str, Any]], str] = agent_label,
) -> dict[tuple[str, str], GridCell]:
    """(encoder, decoder) -> the miscommunication-loss rate (miscomm + both) / games.

    ``interceptor`` is the fixed interceptor's label; if ``None`` the records must hold only one.
    """
    games = _done(records)
    if interceptor is None:
        found = sorted({label(r.seats["interceptor"]) for r in games})
        if len(found) > 1:
            raise ValueError(
                f"interceptor: the records hold several interceptors {found}; name one"
            )
        interceptor = found[0] if found else None
    cells: dict[tuple[str, str], list[EpisodeRecord]] = defaultdict(list)
    for record in games:
        if label(record.seats["interceptor"]) == interceptor:
            cells[(label(record.seats["encoder"]), label(record.seats["decoder"]))].append(record)
    rate = _loss_rate(("miscomm", "both"))
    return {
        key: _block_stats(group, rate, episodes_per_block) for key, group in sorted(cells.items())
    }


# -- theory of mind ---------------------------------------------------------------------------------


def _probe_entries(record: EpisodeRecord, name: str) -> list[dict[str, Any]]:
    return [p for p in record.probes if p.get("probe") == name]


def _is_code(prediction: Any) -> bool:
    """A prediction that names a code (a list of three digits), not an abstention."""
    return isinstance(prediction, list | tuple) and len(prediction) == 3


def perspective_taking(records: Iterable[EpisodeRecord]) -> dict[str, float]:
    """The Piaget scores, each a per-episode share over the *answered* turns (a prediction that
    is a code) then averaged over the episodes with at least one:

    * ``predicted_interceptor_guess``: the prediction equals the interceptor's actual guess.
    * ``predicted_interceptor_guess_on_interception``: the same over the answered turns with an
      interception (episodes without one are skipped).
    * ``predicted_code``: the prediction is the true code (the encoder predicts an interception).

    Those three are the paper's. On an interception the guess is the code, so the second is the
    share of interception turns on which the encoder predicted the code: an encoder that always
    predicts the code scores 1.0 on it, whoever intercepts. Ours, beside them:

    * ``predicted_code_without_interception``: the prediction is the code, over the answered
      turns without an interception (the interceptor guessed and missed): the second score's
      chance level, what the same predictions score where nobody intercepted.
    * ``predicted_interceptor_guess_on_miss``: the prediction equals the guess over those turns
      (the interceptor's wrong guesses: predicting the code never hits one).
    * ``interception_foresight``: per episode with both kinds of turn, the second score minus
      the first of these: whether the encoder predicts the code more where it is intercepted.
      0 in expectation for a prediction independent of the interception (always the code, a
      random code, anything against a random interceptor), 1 for the oracle (the actual guess);
      a constant code scores above 0 where interceptions favour some codes, which the tricks
      table (:mod:`socialsim.analysis.decrypto_tricks`) shows beside.

    An unanswered turn (``null``, no ``answer`` either) is skipped, never counted as wrong; a
    prediction that is not a code (an abstention: the probe keeps it as ``answer`` beside a
    ``null`` prediction) counts and never hits; ``answered`` is the share of asked turns
    answered with a code (over all episodes). Each score's ``_se`` is its standard error
    over those episodes (ddof=1; ``nan`` below two).
    """
    on_guess: list[float] = []
    on_interception: list[float] = []
    on_code: list[float] = []
    on_miss: list[float] = []
    foresight: list[float] = []
    code_unintercepted: list[float] = []
    asked = answered = 0
    for record in _done(records):
        entries = _probe_entries(record, PIAGET)
        asked += len(entries)
        # the probe records an answer that is no code as prediction null beside the answer
        # itself (null too when there was none): an abstention, which counts
        entries = [e for e in entries if (e.get("prediction"), e.get("answer")) != (None, None)]
        answered += sum(_is_code(e["prediction"]) for e in entries)
        if not entries:
            continue
        log = {t["turn"]: t for t in record.summary["turn_log"]}
        hits, hits_when_intercepted, intercepted, is_code = 0, 0, 0, 0
        missed = hits_when_missed = code_when_missed = 0
        for entry in entries:
            turn = log[entry["turn"]]
            prediction = entry["prediction"]
            # an abstention ("unknown", empty) is no prediction: it never hits
            hit = _is_code(prediction) and prediction == turn["interceptor_guess"]
            hits += hit
            names_code = _is_code(prediction) and prediction == turn["code"]
            is_code += names_code
            if turn["interception"]:
                intercepted += 1
                hits_when_intercepted += hit
            elif turn["interceptor_guess"] is not None:
                missed += 1
                hits_when_missed += hit
                code_when_missed += names_code
        on_guess.append(hits / len(entries))
        on_code.append(is_code / len(entries))
        if intercepted:
            on_interception.append(hits_when_intercepted / intercepted)
        if missed:
            on_miss.append(hits_when_missed / missed)
            code_unintercepted.append(code_when_missed / missed)
        if intercepted and missed:  # on an interception, hit = the prediction names the code
            foresight.append(hits_when_intercepted / intercepted - code_when_missed / missed)
    return {
        "episodes": len(on_guess),
        "answered": answered / asked if asked else math.nan,
        "predicted_interceptor_guess": _mean(on_guess),
        "predicted_interceptor_guess_se": sem(on_guess),
        "predicted_interceptor_guess_on_interception": _mean(on_interception),
        "predicted_interceptor_guess_on_interception_se": sem(on_interception),
        "episodes_with_interception": len(on_interception),
        "predicted_code": _mean(on_code),
        "predicted_code_se": sem(on_code),
        "predicted_code_without_interception": _mean(code_unintercepted),
        "predicted_code_without_interception_se": sem(code_unintercepted),
        "predicted_interceptor_guess_on_miss": _mean(on_miss),
        "predicted_interceptor_guess_on_miss_se": sem(on_miss),
        "interception_foresight": _mean(foresight),
        "interception_foresight_se": sem(foresight),
        "episodes_with_both": len(foresight),
    }


def same(a: Sequence[str], b: Sequence[str]) -> bool:
    """The Smarties comparison: position by position, ignoring case, after deleting the substring
    ``"unknown"`` and whitespace; all four positions must agree."""

    def clean(word: str) -> str:
        return "".join(word.casefold().replace(UNKNOWN, "").split())

    return len(a) == len(b) and all(clean(x) == clean(y) for x, y in zip(a, b, strict=True))


# What a player writes instead of a word when it does not say (compared after casefolding and
# dropping everything but letters): never an answer, so never a pass.
ABSTENTIONS = frozenset(
    {
        "",
        "unknown",
        "none",
        "na",
        "idk",
        "idontknow",
        "notsure",
        "cannotsay",
        "cantsay",
        "pass",
        "refuse",
        "unsure",
        "nothing",
        "null",
        "xxx",
    }
)


def abstains(words: Sequence[str]) -> bool:
    """Whether a keyword answer holds a position that is no word: ``"unknown"``, empty, a
    refusal (:data:`ABSTENTIONS`). The reference's :func:`same` deletes ``"unknown"``, so an
    interceptor that answers ``["unknown"] * 4`` to all three questions passes all five Gopnik
    scores; here it passes none."""
    return any("".join(c for c in str(w).casefold() if c.isalpha()) in ABSTENTIONS for w in words)


GOPNIK_SCORES = (
    "weak_representational_change",
    "weak_false_belief",
    "strong_representational_change",
    "strong_false_belief",
    "self_other_consistency",
)


def representational_change(records: Iterable[EpisodeRecord]) -> dict[str, float]:
    """The Gopnik scores. With N = ``keywords_now``, R = ``keywords_before_reveal``, O =
    ``keywords_other_interceptor`` and K the true keywords, a turn is eligible if not same(N, K)
    (and all three answers were lists of four words); it passes

    * weak representational change if not same(R, K); weak false belief if not same(O, K);
    * strong representational change if same(R, N); strong false belief if same(O, N);
    * self-other consistency if same(R, O);

    and only if none of the answers a score reads abstains (:func:`abstains`: "unknown", empty,
    a refusal), unlike the reference, where abstaining passes every score. Each score is a
    per-episode pass rate over eligible turns, averaged over the episodes with at least one
    eligible turn. A turn with an unanswered question (``null``: the agent gave no valid
    answer) is skipped. ``answered`` is the share of asked turns whose three questions were all
    answered with words; ``abstained`` the share with an abstention. Each score's ``_se`` is its
    standard error over those episodes (ddof=1; ``nan`` below two).
    """
    per_episode: dict[str, list[float]] = {name: [] for name in GOPNIK_SCORES}
    asked = answered = abstained = 0
    for record in _done(records):
        truth = record.summary["keywords"]
        passes = {name: 0 for name in GOPNIK_SCORES}
        eligible = 0
        for entry in _probe_entries(record, GOPNIK):
            asked += 1
            now, recalled, other = (entry.get(k) for k in KEYWORD_QUESTIONS)
            if now is None or recalled is None or other is None:
                continue
            n_ok, r_ok, o_ok = (not abstains(a) for a in (now, recalled, other))
            abstained += not (n_ok and r_ok and o_ok)
            answered += n_ok and r_ok and o_ok
            if n_ok and same(now, truth):
                continue
            eligible += 1
            passes["weak_representational_change"] += r_ok and not same(recalled, truth)
            passes["weak_false_belief"] += o_ok and not same(other, truth)
            passes["strong_representational_change"] += r_ok and n_ok and same(recalled, now)
            passes["strong_false_belief"] += o_ok and n_ok and same(other, now)
            passes["self_other_consistency"] += r_ok and o_ok and same(recalled, other)
        if eligible:
            for name in GOPNIK_SCORES:
                per_episode[name].append(passes[name] / eligible)
    episodes = len(per_episode[GOPNIK_SCORES[0]])
    return {
        "episodes": episodes,
        "answered": answered / asked if asked else math.nan,
        "abstained": abstained / asked if asked else math.nan,
        **{name: _mean(values) for name, values in per_episode.items()},
        **{f"{name}_se": sem(values) for name, values in per_episode.items()},
    }


TOLD_SCORES = ("told_false_belief_weak", "told_false_belief_strong")


def _word(word: Any) -> str:
    return "".join(str(word).casefold().split())


def told_false_belief(records: Iterable[EpisodeRecord]) -> dict[str, float]:
    """Our false-belief items (not the paper's), from ``keywords_told_interceptor``: what will a
    second interceptor, told the keywords of the numbers ``told`` only, think they are.

    An item is a number ``j`` on a turn whose ``keywords_now`` answer N and told answer T are
    words, where N_j is not the keyword K_j (the truth differs from the prior: a right answer
    must differ from one of them). On a told item T_j must be K_j; on an untold item, weak: T_j
    is not K_j, strong: T_j is N_j (it was N_j's belief); an abstaining word passes neither. Per
    episode with both kinds of item, the score is the mean of the told and untold rates (each
    kind's rate is also given, ``_told`` and ``_untold``), averaged over those episodes.

    The told numbers are drawn at random, so an answer that treats the four numbers alike (a
    constant list, the revealed keywords, its own belief, random words) names the keyword as
    often on told as on untold items, and scores at most 0.5 in expectation on either score
    (on the weak one exactly 0.5 if it never abstains); the oracle scores 1.
    """
    rates: dict[str, list[float]] = {
        f"{name}{part}": [] for name in TOLD_SCORES for part in ("", "_told", "_untold")
    }
    for record in _done(records):
        truth = record.summary["keywords"]
        told_hits = weak_hits = strong_hits = told_items = untold_items = 0
        for entry in _probe_entries(record, GOPNIK):
            now, answer = entry.get(KEYWORD_QUESTIONS[0]), entry.get(KEYWORDS_TOLD_INTERCEPTOR)
            if now is None or answer is None or "told" not in entry:
                continue
            for j, (n, t, k) in enumerate(zip(now, answer, truth, strict=True)):
                if _word(n) == _word(k):
                    continue  # the interceptor knew it: not an item
                if j + 1 in entry["told"]:
                    told_items += 1
                    told_hits += _word(t) == _word(k)
                    continue
                untold_items += 1
                speaks = not abstains([t])
                weak_hits += speaks and _word(t) != _word(k)
                strong_hits += speaks and not abstains([n]) and _word(t) == _word(n)
        if told_items and untold_items:
            for name, hits in zip(TOLD_SCORES, (weak_hits, strong_hits), strict=True):
                told, untold = told_hits / told_items, hits / untold_items
                rates[name].append((told + untold) / 2)
                rates[f"{name}_told"].append(told)
                rates[f"{name}_untold"].append(untold)
    return {
        "episodes": len(rates[TOLD_SCORES[0]]),
        **{name: _mean(values) for name, values in rates.items()},
        **{f"{name}_se": sem(rates[name]) for name in TOLD_SCORES},
    }


# -- invalid actions ------------------------------------------------------------------------------


def invalid_action_rates(records: Iterable[EpisodeRecord]) -> dict[str, float]:
    """Per seat: invalid actions (``counters[seat]["invalid_actions"]``) / decisions taken."""
    invalid: dict[str, float] = defaultdict(float)
    decisions: dict[str, int] = defaultdict(int)
    for record in _done(records):
        for seat, counters in record.counters.items():
            invalid[seat] += counters.get("invalid_actions", 0)
        for step in record.steps:
            for seat in step["actions"]:
                decisions[seat] += 1
    return {
        seat: invalid[seat] / decisions[seat] if decisions[seat] else math.nan
        for seat in sorted(set(invalid) | set(decisions))
    }
