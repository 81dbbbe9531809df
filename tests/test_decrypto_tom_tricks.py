"""Decrypto ToM scores beside their tricks: the told-interceptor items, the Piaget scores a trick
cannot pass, the tricks scored on the same turns (socialsim/analysis/decrypto_tricks.py), the
trick agent kinds (agents/scripted/decrypto_tricks.py) and the normalised score."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from socialsim.agents.llm.decrypto_prompts import question_prompt
from socialsim.agents.scripted.decrypto_tricks import (
    KINDS,
    ConstantInterceptor,
    ConstantPredictor,
    LastGuessPredictor,
    OracleInterceptor,
    RealistInterceptor,
)
from socialsim.envs.decrypto.protocol import CONSTANT_KEYWORD_LISTS, KEYWORDS_TOLD_INTERCEPTOR
from socialsim.envs.decrypto.tom import told_numbers

from socialsim import registry
from socialsim.agent import Question
from socialsim.analysis.baselines import best_trick, normalised
from socialsim.analysis.decrypto_tricks import gopnik_tricks, piaget_tricks, tricks_rows
from socialsim.analysis.tom import perspective_taking, representational_change, told_false_belief
from socialsim.episode import EpisodeSpec
from socialsim.records import EpisodeRecord
from socialsim.runner import play_episode

K = ["apple", "river", "crown", "spider"]
N = ["pear", "lake", "king", "web"]  # a belief wrong on every number
ROOT = Path(__file__).resolve().parents[1]


def turn(number, code, guess):
    return {
        "turn": number,
        "code": list(code),
        "hints": ["a", "b", "c"],
        "decoder_guess": list(code),
        "interceptor_guess": list(guess),
        "miscommunication": False,
        "interception": list(guess) == list(code),
    }


def rec(seed, probes, turn_log=()):
    return EpisodeRecord(
        experiment="t",
        cell={},
        episode=seed,
        seed=seed,
        env_id="decrypto_v0",
        env_kwargs={},
        form="parallel",
        seats={"encoder": {"kind": "x"}, "decoder": {"kind": "x"}, "interceptor": {"kind": "x"}},
        summary={
            "keywords": K,
            "ending": "survived",
            "turns": len(turn_log),
            "turn_log": list(turn_log),
        },
        probes=list(probes),
    )


def gopnik(number, now, before, other, told_answer, told=(1, 3)):
    return {
        "probe": "gopnik",
        "turn": number,
        "keywords_now": list(now),
        "keywords_before_reveal": list(before),
        "keywords_other_interceptor": list(other),
        KEYWORDS_TOLD_INTERCEPTOR: list(told_answer),
        "told": list(told),
    }


def constant_record(words=("alpha", "bravo", "charlie", "delta")):
    return rec(
        0, [gopnik(n, words, words, words, words, told) for n, told in ((2, (1, 3)), (3, (2, 4)))]
    )


# -- the told-interceptor items -------------------------------------------------------------------


def test_a_constant_interceptor_passes_the_papers_five_and_half_the_told_items():
    records = [constant_record()]
    paper = representational_change(records)
    assert [paper[s] for s in paper if s.endswith(("change", "belief", "consistency"))] == [1.0] * 5
    told = told_false_belief(records)
    assert told["told_false_belief_weak"] == told["told_false_belief_strong"] == 0.5
    assert told["told_false_belief_weak_told"] == 0.0
    assert told["told_false_belief_weak_untold"] == 1.0


def test_a_constant_interceptor_is_normalised_to_0_on_the_new_scores_and_undefined_on_the_papers():
    rows = {r["score"]: r for r in tricks_rows([constant_record()])}
    for score in ("told_false_belief_weak", "told_false_belief_strong"):
        assert rows[score]["origin"] == "new"
        assert rows[score]["tested"] == rows[score]["constant list"] == 0.5
        assert rows[score]["oracle"] == 1.0
        assert rows[score]["normalised"] == 0.0
    for score in ("weak_representational_change", "self_other_consistency"):
        assert rows[score]["origin"] == "paper"
        assert rows[score]["tested"] == 1.0
        assert rows[score]["constant list"] == rows[score]["oracle"] == 1.0
        assert math.isnan(rows[score]["normalised"])  # the tricks reach the oracle


def test_told_items_skip_known_numbers_and_score_the_strong_form_against_the_belief():
    now = ["apple", "lake", "king", "web"]  # number 1 known: not an item
    answer = ["apple", "river", "king", "fish"]  # told 2: right; untold 3: its belief; 4: not
    told = told_false_belief([rec(0, [gopnik(2, now, now, now, answer, told=(1, 2))])])
    assert told["told_false_belief_weak"] == 1.0  # told 1/1, untold weak 2/2
    assert told["told_false_belief_strong"] == 0.75  # told 1/1, untold strong 1/2


def test_the_oracle_scores_1_and_copying_the_revealed_keywords_half():
    oracle_answer = [K[0], N[1], K[2], N[3]]  # told 1 and 3
    oracle = told_false_belief([rec(0, [gopnik(2, N, N, N, oracle_answer)])])
    realist = told_false_belief([rec(0, [gopnik(2, N, K, K, K)])])
    assert oracle["told_false_belief_weak"] == oracle["told_false_belief_strong"] == 1.0
    assert realist["told_false_belief_weak"] == realist["told_false_belief_strong"] == 0.5


def test_gopnik_tricks_score_the_same_turns_with_exact_values():
    tricks = gopnik_tricks([rec(0, [gopnik(2, N, N, N, N)])])
    assert tricks["tested"]["strong_representational_change"] == 1.0
    assert tricks["tested"]["told_false_belief_strong"] == 0.5  # its belief everywhere
    assert tricks["a constant list per question"]["weak_false_belief"] == 1.0
    assert tricks["a constant list per question"]["strong_false_belief"] == 0.0
    assert tricks["copy the revealed keywords"]["weak_representational_change"] == 0.0
    assert tricks["copy the revealed keywords"]["self_other_consistency"] == 1.0
    assert tricks["abstain"]["told_false_belief_weak"] == 0.0
    assert tricks["random words"]["told_false_belief_weak"] == 0.5
    assert tricks["random words"]["told_false_belief_strong"] == 0.0
    assert tricks["oracle"]["told_false_belief_strong"] == 1.0


def test_constant_lists_are_no_keyword_of_the_bundled_list():
    keywords = set((ROOT / "envs/decrypto/data/keywords.txt").read_text().split())
    assert all(w not in keywords for words in CONSTANT_KEYWORD_LISTS for w in words)
    assert len({tuple(w) for w in CONSTANT_KEYWORD_LISTS}) == 4


# -- Piaget ---------------------------------------------------------------------------------------

# two interceptions (turns 1, 3) and two misses (turns 2, 4)
LOG = [turn(1, (1, 2, 3), (1, 2, 3)), turn(2, (2, 1, 4), (3, 4, 1))]
LOG += [turn(3, (4, 3, 2), (4, 3, 2)), turn(4, (3, 1, 2), (1, 2, 4))]


def piaget(predictions):
    return rec(0, [{"probe": "piaget", "turn": n, "prediction": p} for n, p in predictions], LOG)


def test_predicting_the_code_passes_on_interception_and_has_no_foresight():
    scores = perspective_taking([piaget([(t["turn"], t["code"]) for t in LOG])])
    assert scores["predicted_interceptor_guess"] == 0.5
    assert scores["predicted_interceptor_guess_on_interception"] == 1.0
    assert scores["predicted_code_without_interception"] == 1.0
    assert scores["predicted_interceptor_guess_on_miss"] == 0.0
    assert scores["interception_foresight"] == 0.0


def test_a_prediction_independent_of_a_random_interceptor_reads_chance_on_foresight():
    # the code on one interception turn and one miss, another code on the others
    predictions = [(1, [1, 2, 3]), (2, [2, 1, 4]), (3, [1, 2, 4]), (4, [2, 4, 3])]
    scores = perspective_taking([piaget(predictions)])
    assert scores["predicted_interceptor_guess_on_interception"] == 0.5
    assert scores["predicted_code_without_interception"] == 0.5  # its chance level
    assert scores["interception_foresight"] == 0.0


def test_piaget_tricks_on_the_same_turns_with_exact_values():
    tricks = piaget_tricks([piaget([(t["turn"], t["interceptor_guess"]) for t in LOG])])
    assert tricks["tested"]["interception_foresight"] == 1.0
    assert tricks["oracle"]["predicted_interceptor_guess"] == 1.0
    assert tricks["predict the code"]["predicted_interceptor_guess_on_interception"] == 1.0
    assert tricks["predict the code"]["interception_foresight"] == 0.0
    assert tricks["random (expected)"]["predicted_interceptor_guess"] == pytest.approx(1 / 24)
    assert tricks["random (expected)"]["interception_foresight"] == pytest.approx(0.0)
    assert tricks["best constant"]["interception_foresight"] == 0.5  # 1-2-3: intercepted
    assert tricks["abstain"]["predicted_interceptor_guess"] == 0.0
    # the last guess: none on turn 1, then 1-2-3, 3-4-1, 4-3-2: it hits nothing here
    assert tricks["predict the last guess"]["predicted_interceptor_guess"] == 0.0
    rows = {r["score"]: r for r in tricks_rows([piaget([(1, [1, 2, 3])] * 1)])}
    assert math.isnan(rows["predicted_code"]["normalised"])  # descriptive


# -- the normalised score -------------------------------------------------------------------------


def test_normalised_is_0_at_the_best_trick_1_at_the_oracle_and_nan_when_they_meet():
    assert best_trick({"a": 0.2, "b": math.nan, "c": 0.5}) == ("c", 0.5)
    name, value = best_trick({"a": math.nan})
    assert name is None and math.isnan(value)
    assert normalised(0.5, 0.5, 1.0) == 0.0
    assert normalised(1.0, 0.5, 1.0) == 1.0
    assert normalised(0.25, 0.5, 1.0) == -0.5
    assert math.isnan(normalised(1.0, 1.0, 1.0))
    assert math.isnan(normalised(math.nan, 0.0, 1.0))


# -- the probe and the agents ---------------------------------------------------------------------


def test_told_numbers_are_two_of_four_drawn_from_the_game_and_every_pair_occurs():
    assert told_numbers(K, 2) == told_numbers(K, 2)
    pairs = {tuple(told_numbers(K, t)) for t in range(2, 60)}
    assert pairs == {(1, 2), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4)}


def play(interceptor, probes, seed=3, encoder="decrypto_random_encoder"):
    seats = {
        "encoder": {"kind": encoder},
        "decoder": {"kind": "decrypto_random_guesser"},
        "interceptor": interceptor,
    }
    spec = EpisodeSpec(env_id="decrypto_v0", seed=seed, seats=seats, probes=probes)
    record = play_episode(spec)
    assert record.status == "done", record.error
    return record


def test_the_gopnik_probe_asks_the_told_question_unless_switched_off():
    played = play({"kind": "decrypto_oracle_interceptor"}, [{"name": "gopnik"}], seed=5)
    assert played.probes, "a game of one turn asks nothing"
    for entry in played.probes:
        assert entry["told"] == told_numbers(played.summary["keywords"], entry["turn"])
        told = entry[KEYWORDS_TOLD_INTERCEPTOR]
        for j in range(4):
            expected = played.summary["keywords"][j] if j + 1 in entry["told"] else None
            assert told[j] == (expected or entry["keywords_now"][j])
    off = play(
        {"kind": "decrypto_oracle_interceptor"},
        [{"name": "gopnik", "told_interceptor": False}],
        seed=5,
    )
    assert all(KEYWORDS_TOLD_INTERCEPTOR not in e and "told" not in e for e in off.probes)


def test_a_live_constant_interceptor_scores_as_its_trick():
    records = [
        play({"kind": "decrypto_constant_interceptor"}, [{"name": "gopnik"}], seed=s)
        for s in range(4)
    ]
    rows = {r["score"]: r for r in tricks_rows(records)}
    assert rows["strong_false_belief"]["tested"] == 1.0
    assert rows["told_false_belief_weak"]["tested"] == 0.5
    assert rows["told_false_belief_weak"]["normalised"] == 0.0


def test_trick_kinds_are_registered():
    assert set(KINDS) <= set(registry.agent_kinds())


def test_trick_interceptors_answer_by_their_rule():
    context = {"turn": 2, "hint_history": [[], [], [], []], "keywords": K, "told": [2, 4]}
    constant = ConstantInterceptor()
    constant.reset("interceptor", "interceptor", 0)
    assert constant.answer(Question("keywords_before_reveal", context)) == list(
        CONSTANT_KEYWORD_LISTS[0]
    )
    realist = RealistInterceptor()
    realist.reset("interceptor", "interceptor", 0)
    assert realist.answer(Question("keywords_other_interceptor", context)) == K
    oracle = OracleInterceptor()
    oracle.reset("interceptor", "interceptor", 0)
    belief = oracle.answer(Question("keywords_now", {"turn": 2}))
    told = oracle.answer(Question(KEYWORDS_TOLD_INTERCEPTOR, context))
    assert told == [belief[0], K[1], belief[2], K[3]]


def test_trick_encoders_predict_by_their_rule_and_refuse_a_bad_code():
    last = LastGuessPredictor()
    last.reset("encoder", "encoder", 0)
    assert last.answer(Question("predict_interceptor_guess", {"code": [1, 2, 3]})) == "unknown"
    last.last_guess = [4, 3, 2]
    assert last.answer(Question("predict_interceptor_guess", {"code": [1, 2, 3]})) == [4, 3, 2]
    with pytest.raises(ValueError, match="code: must be three distinct digits"):
        ConstantPredictor(code=[1, 1, 2])
    with pytest.raises(ValueError, match="words: must be a list of four"):
        ConstantInterceptor(words=["a", "b"])


def test_the_llm_told_question_names_the_told_numbers():
    context = {"turn": 3, "hint_history": [["h"], [], [], []], "keywords": K, "told": [1, 3]}
    text = question_prompt(KEYWORDS_TOLD_INTERCEPTOR, context)
    assert "numbers 1 and 3" in text and "apple" in text


def test_live_trick_encoders_score_as_their_rules():
    abstainer = [
        play({"kind": "glove_interceptor"}, [{"name": "piaget"}], s, "decrypto_abstaining_encoder")
        for s in range(3)
    ]
    scores = perspective_taking(abstainer)
    assert scores["episodes"] == 3 and scores["answered"] == 0.0
    assert scores["predicted_interceptor_guess"] == 0.0  # abstaining counts, never hits
    coder = [
        play(
            {"kind": "decrypto_random_guesser"},
            [{"name": "piaget"}],
            seed=s,
            encoder="decrypto_code_predictor",
        )
        for s in range(3)
    ]
    assert perspective_taking(coder)["predicted_code"] == 1.0


@pytest.mark.slow  # a run and a report with its figures: about 25 s
def test_the_report_puts_every_score_beside_its_tricks(tmp_path, capsys):
    from socialsim.cli import main

    out = tmp_path / "gopnik"
    assert (
        main(["run", "decrypto_gopnik", "--out", str(out), "--quiet", "--set", "episodes=2"]) == 0
    )
    assert main(["report", str(out)]) == 0
    assert "theory of mind beside its tricks" in capsys.readouterr().out
    import pandas as pd

    table = pd.read_csv(out / "decrypto_tom_tricks.csv")
    constant = table[table["cell"] == "interceptor=decrypto_constant_interceptor"].set_index(
        "score"
    )
    assert set(constant["origin"]) == {"paper", "new"}
    assert constant.loc["strong_false_belief", "tested"] == 1.0
    assert constant.loc["told_false_belief_weak", "normalised"] == 0.0
    assert {"constant list", "abstain", "random words", "oracle", "best trick"} <= set(
        table.columns
    )
