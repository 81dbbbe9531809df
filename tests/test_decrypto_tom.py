"""Decrypto theory-of-mind probes (envs/decrypto/tom.py) and metrics (socialsim/analysis/tom.py)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from socialsim.agents.scripted.decrypto import RandomEncoder, RandomGuesser

from socialsim import config
from socialsim.agent import Question
from socialsim.analysis.tom import (
    GOPNIK_SCORES,
    abstains,
    agent_label,
    competitive_grid,
    cooperative_grid,
    invalid_action_rates,
    outcomes,
    perspective_taking,
    representational_change,
    same,
)
from socialsim.episode import EpisodeSpec
from socialsim.records import EpisodeRecord
from socialsim.runner import play_episode
from socialsim.seeding import agent_seed

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"
RANDOM_SEATS = {
    "encoder": {"kind": "decrypto_random_encoder"},
    "decoder": {"kind": "decrypto_random_guesser"},
    "interceptor": {"kind": "decrypto_random_guesser"},
}
KEYWORDS = ["apple", "river", "crown", "spider"]


def play(seed, probes=(), form="parallel", agents=None, **env_kwargs):
    spec = EpisodeSpec(
        env_id="decrypto_v0",
        seed=seed,
        seats=RANDOM_SEATS,
        probes=probes,
        form=form,
        env_kwargs=env_kwargs,
    )
    record = play_episode(spec, agents)
    assert record.status == "done", record.error
    return record


def turn(number, code, decoder, interceptor):
    return {
        "turn": number,
        "code": list(code),
        "hints": ["a", "b", "c"],
        "decoder_guess": list(decoder),
        "interceptor_guess": None if interceptor is None else list(interceptor),
        "miscommunication": list(decoder) != list(code),
        "interception": interceptor is not None and list(interceptor) == list(code),
    }


def record(seed, turn_log, ending=None, seats=RANDOM_SEATS, probes=(), counters=None, steps=()):
    if ending is None:
        misc = sum(t["miscommunication"] for t in turn_log)
        inter = sum(t["interception"] for t in turn_log)
        ending = {(True, True): "both", (True, False): "miscomm", (False, True): "intercept"}.get(
            (misc >= 2, inter >= 2), "survived"
        )
    return EpisodeRecord(
        experiment="t",
        cell={},
        episode=seed,
        seed=seed,
        env_id="decrypto_v0",
        env_kwargs={},
        form="parallel",
        seats={k: dict(v) for k, v in seats.items()},
        summary={
            "keywords": KEYWORDS,
            "ending": ending,
            "turns": len(turn_log),
            "miscommunications": sum(t["miscommunication"] for t in turn_log),
            "interceptions": sum(t["interception"] for t in turn_log),
            "turn_log": turn_log,
        },
        probes=list(probes),
        counters=counters or {},
        steps=list(steps),
    )


C = (1, 2, 3)
X = (4, 3, 2)  # a code that is not C


def ended(seed, ending, seats=RANDOM_SEATS, turns=2):
    """A record with only its ending and length mattering."""
    return record(seed, [turn(i, C, C, X) for i in range(1, turns + 1)], ending=ending, seats=seats)


# -- outcomes -------------------------------------------------------------------------------------


def test_outcomes_count_endings_turns_and_token_rates():
    records = [
        record(0, [turn(1, C, C, C), turn(2, C, C, C)]),  # intercept on turns 1, 2
        record(
            1,
            [
                turn(1, C, C, X),
                turn(2, C, C, X),
                turn(3, C, X, X),
                turn(4, C, C, X),
                turn(5, C, C, C),
            ]
            + [turn(i, C, C, X) for i in (6, 7, 8)],
        ),  # fmt: skip
        record(2, [turn(1, C, X, X), turn(2, C, C, X), turn(3, C, X, X)]),  # miscomm on turns 1, 3
    ]
    stats = outcomes(records)
    assert stats["games"] == 3
    assert (stats["intercept"], stats["miscomm"], stats["both"], stats["survived"]) == (1, 1, 0, 1)
    assert stats["win_rate"] == pytest.approx(1 / 3)
    assert stats["avg_turns"] == pytest.approx(13 / 3)
    assert stats["avg_interception_turn"] == pytest.approx((1 + 2 + 5) / 3)
    assert stats["avg_miscommunication_turn"] == pytest.approx((3 + 1 + 3) / 3)
    assert stats["interception_rate"] == pytest.approx(3 / 6 * 100)
    assert stats["miscommunication_rate"] == pytest.approx(3 / 6 * 100)


def test_failed_records_are_ignored():
    failed = ended(0, "intercept")
    failed.status = "failed"
    assert outcomes([failed, ended(1, "survived")])["games"] == 1


# -- grids ------------------------------------------------------------------------------------


GLOVE_TEAM = {
    "encoder": {"kind": "glove_encoder"},
    "decoder": {"kind": "glove_decoder"},
    "interceptor": {"kind": "decrypto_random_guesser"},
}
MIXED_TEAM = {
    "encoder": {"kind": "glove_encoder"},
    "decoder": {"kind": "decrypto_random_guesser"},
    "interceptor": {"kind": "glove_interceptor"},
}


def test_agent_label_drops_the_seat_suffix_and_keeps_parameters():
    assert (
        agent_label({"kind": "glove_encoder"}) == agent_label({"kind": "glove_decoder"}) == "glove"
    )
    assert (
        agent_label({"kind": "decrypto_random_guesser"})
        == agent_label({"kind": "decrypto_random_encoder"})
        == "decrypto_random"
    )
    assert (
        agent_label({"kind": "llm", "model": "gpt-4o", "temperature": 0})
        == "gpt-4o(temperature=0)"  # an LLM seat is named by its model (issue 31: short labels)
    )


def test_competitive_grid_is_mean_and_sem_of_interception_losses_over_seed_blocks():
    records = [
        ended(0, "intercept", GLOVE_TEAM),
        ended(1, "survived", GLOVE_TEAM),  # block 0: 1/2
        ended(2, "both", GLOVE_TEAM),
        ended(3, "intercept", GLOVE_TEAM, turns=4),  # block 1: 2/2
        ended(4, "intercept", MIXED_TEAM),  # encoder != decoder: not in the competitive grid
    ]
    grid = competitive_grid(records, episodes_per_block=2)
    assert list(grid) == [("glove", "decrypto_random")]
    cell = grid[("glove", "decrypto_random")]
    assert cell.mean == pytest.approx(0.75)
    assert cell.sem == pytest.approx(0.25)  # std([0.5, 1.0], ddof=1) / sqrt(2)
    assert (cell.blocks, cell.games) == (2, 4)
    assert cell.avg_turns == pytest.approx(10 / 4)


def test_grid_cells_carry_the_sem_of_average_turns_over_games():
    records = [
        ended(0, "intercept", GLOVE_TEAM, turns=2),
        ended(1, "intercept", GLOVE_TEAM, turns=4),
    ]
    cell = competitive_grid(records)[("glove", "decrypto_random")]
    assert cell.avg_turns == 3.0
    assert cell.turns_sem == pytest.approx(1.0)  # std([2, 4], ddof=1) / sqrt(2)
    one = competitive_grid(records[:1])[("glove", "decrypto_random")]
    assert math.isnan(one.turns_sem)


def test_the_report_writes_undefined_tom_scores_as_null_in_strict_json(tmp_path):
    import json

    from socialsim import records as records_module
    from socialsim.analysis.report import report

    # a Piaget probe in an episode without interception: that score is undefined (nan)
    rec = record(0, [turn(1, C, C, X), turn(2, C, C, X)], probes=[piaget(1, C), piaget(2, X)])
    records_module.write_manifest(tmp_path, {"config": {"name": "t"}, "episodes_total": 1})
    with records_module.EventLog(tmp_path) as log:
        log.append(rec)
    text = report(tmp_path)
    scores = json.loads(
        (tmp_path / "decrypto_tom.json").read_text(),
        parse_constant=lambda c: pytest.fail(f"bare {c} in decrypto_tom.json"),
    )
    assert scores["perspective_taking"]["predicted_interceptor_guess_on_interception"] is None
    assert scores["perspective_taking"]["predicted_code"] == 0.5
    assert "NaN" not in text and "IR (%)" in text and "MR (%)" in text
    assert (tmp_path / "decrypto_competitive.png").exists()
    assert (tmp_path / "decrypto_cooperative.png").exists()
    assert (tmp_path / "decrypto_tom.png").exists()


def test_single_block_has_no_sem():
    cell = competitive_grid([ended(0, "intercept", GLOVE_TEAM)], episodes_per_block=32)[
        ("glove", "decrypto_random")
    ]
    assert cell.mean == 1.0 and math.isnan(cell.sem)


def test_cooperative_grid_crosses_encoders_and_decoders_against_one_interceptor():
    records = [
        ended(0, "miscomm", GLOVE_TEAM),
        ended(1, "both", GLOVE_TEAM),
        ended(2, "intercept", GLOVE_TEAM),
        ended(3, "survived", GLOVE_TEAM),
        ended(0, "miscomm", RANDOM_SEATS),
        ended(0, "miscomm", MIXED_TEAM),  # another interceptor
    ]
    with pytest.raises(ValueError, match="interceptor: the records hold several interceptors"):
        cooperative_grid(records)
    grid = cooperative_grid(records, interceptor="decrypto_random", episodes_per_block=2)
    assert set(grid) == {("glove", "glove"), ("decrypto_random", "decrypto_random")}
    assert grid[("glove", "glove")].mean == pytest.approx(0.5)  # blocks 1.0 and 0.0
    assert grid[("glove", "glove")].sem == pytest.approx(0.5)
    assert grid[("decrypto_random", "decrypto_random")].mean == 1.0


# -- perspective taking -------------------------------------------------------------------------------


def piaget(turn_number, prediction):
    return {"turn": turn_number, "probe": "piaget", "prediction": prediction}


def test_perspective_taking_scores_per_episode_then_averages():
    first = record(
        0,
        [
            turn(1, C, C, X),
            turn(2, (2, 1, 3), C, (2, 1, 3)),
            turn(3, (3, 1, 2), C, (1, 3, 2)),
            turn(4, (1, 2, 4), C, X),
        ],
        probes=[piaget(1, list(X)), piaget(2, [2, 1, 3]), piaget(3, [3, 1, 2]), piaget(4, None)],
    )
    # turn 4 unanswered: skipped. Predicted the guess on turns 1, 2 (2/3); on the one
    # interception turn (2) right (1/1); predicted the code on turns 2, 3 (2/3)
    second = record(
        1,
        [turn(1, C, C, X), turn(2, (2, 1, 3), C, X)],
        probes=[piaget(1, list(C)), piaget(2, list(X))],
    )
    # guess: turn 2 (1/2); no interception: skipped; code: turn 1 (1/2)
    unprobed = record(2, [turn(1, C, C, C), turn(2, C, C, C)])
    scores = perspective_taking([first, second, unprobed])
    assert scores["episodes"] == 2
    assert scores["answered"] == pytest.approx(5 / 6)
    assert scores["predicted_interceptor_guess"] == pytest.approx((2 / 3 + 1 / 2) / 2)
    assert scores["predicted_interceptor_guess_on_interception"] == pytest.approx(1.0)
    assert scores["episodes_with_interception"] == 1
    assert scores["predicted_code"] == pytest.approx((2 / 3 + 1 / 2) / 2)


def test_an_episode_whose_predictions_were_all_unanswered_is_not_scored():
    silent = record(
        0, [turn(1, C, C, X), turn(2, (2, 1, 3), C, X)], probes=[piaget(1, None), piaget(2, None)]
    )
    scores = perspective_taking([silent])
    assert scores["episodes"] == 0 and scores["answered"] == 0.0
    assert math.isnan(scores["predicted_interceptor_guess"])  # not 0.0: nothing was answered


# -- representational change and false belief ----------------------------------------------------------


def test_same_compares_positions_ignoring_case_whitespace_and_unknown():
    assert same(["Apple ", "RIVER", "crown", "spider"], KEYWORDS)
    assert same(["unknown", "x", "y", "z"], ["", "X", " y", "Z"])
    assert same(["unknownapple", "river", "crown", "spider"], KEYWORDS)
    assert not same(["river", "apple", "crown", "spider"], KEYWORDS)
    assert not same(["apple", "river", "crown"], KEYWORDS)


def gopnik(turn_number, now, before, other):
    return {
        "turn": turn_number,
        "probe": "gopnik",
        "keywords_now": now,
        "keywords_before_reveal": before,
        "keywords_other_interceptor": other,
    }


def test_representational_change_scores_eligible_turns_per_episode():
    guess = ["fruit", "water", "king", "web"]
    episode = record(
        0,
        [turn(i, C, C, X) for i in (1, 2, 3, 4, 5)],
        probes=[
            gopnik(2, guess, guess, guess),  # passes all five
            # an abstention ("unknown") passes nothing: weak FB fails too, as do the others
            gopnik(3, guess, KEYWORDS, ["unknown"] * 4),
            gopnik(4, KEYWORDS, guess, guess),  # not eligible: already knew the keywords
            gopnik(5, guess, None, guess),  # skipped: an answer was not four words (null)
        ],
    )
    other = record(  # abstains on two questions: eligible, passes no score
        1,
        [turn(1, C, C, X), turn(2, C, C, X)],
        probes=[gopnik(2, ["unknown"] * 4, ["unknown"] * 4, KEYWORDS)],
    )
    only_ineligible = record(
        2, [turn(1, C, C, X), turn(2, C, C, X)], probes=[gopnik(2, KEYWORDS, KEYWORDS, KEYWORDS)]
    )
    scores = representational_change([episode, other, only_ineligible])
    assert scores["episodes"] == 2
    # answered with words: turns 2 and 4 of the first, the third's; abstained: turn 3, the second's
    assert scores["answered"] == pytest.approx(3 / 6)
    assert scores["abstained"] == pytest.approx(2 / 6)
    for name in GOPNIK_SCORES:
        assert scores[name] == pytest.approx((1 / 2 + 0) / 2), name


def test_an_abstaining_answer_is_recognised_in_any_spelling():
    assert abstains(["unknown"] * 4) and abstains(["apple", "", "crown", "spider"])
    assert abstains(["apple", "I don't know", "crown", "spider"])
    assert abstains(["apple", "N/A", "crown", "spider"]) and abstains(["UNKNOWN.", "a", "b", "c"])
    assert not abstains(KEYWORDS) and not abstains(["unknownapple", "river", "crown", "spider"])


# -- invalid actions --------------------------------------------------------------------------------


def test_invalid_action_rates_are_per_decision_per_seat():
    steps = [
        {"turn": 1, "actions": {"encoder": {}}, "rewards": {}},
        {"turn": 1, "actions": {"decoder": 0, "interceptor": 0}, "rewards": {}},
        {"turn": 2, "actions": {"encoder": {}}, "rewards": {}},
        {"turn": 2, "actions": {"decoder": 0, "interceptor": 0}, "rewards": {}},
    ]
    counters = {
        "encoder": {"invalid_actions": 1},
        "decoder": {"invalid_actions": 0},
        "interceptor": {"invalid_actions": 0},
    }
    rates = invalid_action_rates(
        [record(0, [turn(1, C, C, X), turn(2, C, C, X)], counters=counters, steps=steps)]
    )
    assert rates == {"decoder": 0.0, "encoder": 0.5, "interceptor": 0.0}


# -- the probes in play ------------------------------------------------------------------------------


def test_piaget_probe_asks_the_encoder_once_per_turn_before_the_guesses():
    played = play(4, probes=[{"name": "piaget"}])
    entries = played.probes
    assert [e["turn"] for e in entries] == list(range(1, played.summary["turns"] + 1))
    assert all(e["probe"] == "piaget" and len(set(e["prediction"])) == 3 for e in entries)


def test_probes_do_not_change_the_game():
    for seed in range(5):
        bare = play(seed)
        probed = play(seed, probes=[{"name": "piaget"}, {"name": "gopnik"}])
        assert probed.summary == bare.summary and probed.messages == bare.messages


def test_probes_record_the_same_in_parallel_and_aec_forms():
    for seed in range(3):
        probes = [{"name": "piaget"}, {"name": "gopnik"}]
        assert play(seed, probes, form="aec").probes == play(seed, probes).probes


def test_gopnik_probe_asks_the_interceptor_from_turn_2():
    played = play(1, probes=[{"name": "gopnik"}])
    turns = played.summary["turns"]
    assert [e["turn"] for e in played.probes] == list(range(2, turns + 1))
    for entry in played.probes:
        assert (
            entry["keywords_now"]
            == entry["keywords_before_reveal"]
            == entry["keywords_other_interceptor"]
            == ["unknown"] * 4
        )


def test_piaget_skips_turn_1_under_the_first_round_rule():
    played = play(4, probes=[{"name": "piaget"}], first_round_interception=False)
    assert [e["turn"] for e in played.probes] == list(range(2, played.summary["turns"] + 1))


class AskedGuesser(RandomGuesser):
    """A random guesser that keeps the side questions it was asked."""

    def reset(self, agent_id, seat, seed):
        super().reset(agent_id, seat, seed)
        self.questions = []

    def answer(self, question):
        self.questions.append(question)
        return super().answer(question)


class AskedEncoder(RandomEncoder):
    """A random encoder that keeps the side questions it was asked."""

    def reset(self, agent_id, seat, seed):
        super().reset(agent_id, seat, seed)
        self.questions = []

    def answer(self, question):
        self.questions.append(question)
        return super().answer(question)


def test_questions_carry_the_documented_context_and_hide_the_keywords_when_they_must():
    agents = {"encoder": AskedEncoder(), "decoder": RandomGuesser(), "interceptor": AskedGuesser()}
    for seat, agent in agents.items():
        agent.reset(seat, seat, agent_seed(5, seat))
    encoder_log, interceptor_log = agents["encoder"], agents["interceptor"]
    played = play(5, probes=[{"name": "piaget"}, {"name": "gopnik"}], agents=agents)
    log = played.summary["turn_log"]
    first = encoder_log.questions[0]
    assert first.kind == "predict_interceptor_guess"
    assert set(first.context) == {
        "turn",
        "code",
        "hints",
        "keywords",
        "hint_history",
        "code_history",
        "rules",
    }
    assert first.context["rules"]["max_turns"] == 8 and "keywords" not in first.context["rules"]
    assert first.context["code"] == log[0]["code"] and first.context["hints"] == log[0]["hints"]
    assert first.context["keywords"] == played.summary["keywords"] and first.context[
        "hint_history"
    ] == [[], [], [], []]
    kinds = [q.kind for q in interceptor_log.questions]
    assert kinds[:3] == ["keywords_now", "keywords_before_reveal", "keywords_other_interceptor"]
    now, before, other = interceptor_log.questions[:3]
    assert set(now.context) == {"turn", "hint_history", "code_history", "rules"}
    assert now.context["turn"] == 2
    assert before.context["keywords"] == other.context["keywords"] == played.summary["keywords"]
    assert now.context["code_history"] == [log[0]["code"]]  # up to the previous turn only
    assert sum(len(h) for h in now.context["hint_history"]) == 3


def test_random_players_answer_side_questions_deterministically():
    def answers(seed):
        agent = RandomGuesser()
        agent.reset("encoder", "encoder", seed)
        return [agent.answer(Question("predict_interceptor_guess", {})) for _ in range(5)]

    assert answers(3) == answers(3) != answers(4)
    guesser = RandomGuesser()
    guesser.reset("interceptor", "interceptor", 0)
    assert guesser.answer(Question("keywords_before_reveal", {})) == ["unknown"] * 4
    with pytest.raises(NotImplementedError, match="does not answer 'riddle'"):
        guesser.answer(Question("riddle", {}))


def test_a_random_interceptor_answering_unknown_passes_no_gopnik_score():
    records = [play(seed, probes=[{"name": "gopnik"}]) for seed in range(10)]
    scores = representational_change(records)
    assert scores["episodes"] == 10
    # under the reference's scoring "unknown" x 4 passed all five (issue 26): it is no answer
    assert all(scores[name] == 0.0 for name in GOPNIK_SCORES)
    assert scores["answered"] == 0.0 and scores["abstained"] == 1.0
    assert all(scores[f"{name}_se"] == 0.0 for name in GOPNIK_SCORES)


# -- the bundled experiment files ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "cells"), [("decrypto_baselines", 8), ("decrypto_piaget", 12), ("decrypto_gopnik", 8)]
)
def test_bundled_experiments_load_with_96_episodes_from_seed_0(name, cells):
    experiment = config.load(str(EXPERIMENTS / f"{name}.toml"))
    assert len(experiment.cells) == cells
    specs = experiment.specs()
    assert len(specs) == 96 * cells
    assert sorted({s.seed for s in specs}) == list(range(96))


class Mumbler(RandomGuesser):
    """Answers every side question with text that is neither a code nor four words."""

    def answer(self, question):
        return "no idea"


def test_answers_that_are_not_codes_or_four_words_are_kept_a_prediction_as_an_abstention():
    agents = {"encoder": RandomEncoder(), "decoder": RandomGuesser(), "interceptor": Mumbler()}
    for seat, agent in agents.items():
        agent.reset(seat, seat, agent_seed(2, seat))
    mumbling_encoder = Mumbler()
    mumbling_encoder.reset("encoder", "encoder", 0)
    agents["encoder"].answer = mumbling_encoder.answer
    played = play(2, probes=[{"name": "piaget"}, {"name": "gopnik"}], agents=agents)
    piaget_entries = [e for e in played.probes if e["probe"] == "piaget"]
    gopnik_entries = [e for e in played.probes if e["probe"] == "gopnik"]
    assert piaget_entries and all(
        e["prediction"] is None and e["answer"] == "no idea" for e in piaget_entries
    )
    assert gopnik_entries and all(
        e["keywords_now"] is None and e["keywords_now_answer"] == "no idea" for e in gopnik_entries
    )
    piaget_scores = perspective_taking([played])
    # a reply that is no code abstains: it counts and never hits (only no reply is skipped)
    assert piaget_scores["answered"] == 0.0 and piaget_scores["episodes"] == 1
    assert piaget_scores["predicted_interceptor_guess"] == 0.0
    assert representational_change([played])["episodes"] == 0


def test_the_gopnik_report_scores_the_abstaining_random_guesser_zero_and_marks_baselines(
    tmp_path, capsys
):
    import json

    from socialsim.cli import main

    out = tmp_path / "gopnik"
    assert (
        main(["run", "decrypto_gopnik", "--out", str(out), "--quiet", "--set", "episodes=2"]) == 0
    )
    assert main(["report", str(out)]) == 0
    capsys.readouterr()
    scores = json.loads((out / "decrypto_tom.json").read_text())["by_cell"]
    random = scores["interceptor=decrypto_random_guesser"]["representational_change"]
    assert {name: random[name] for name in GOPNIK_SCORES} == dict.fromkeys(GOPNIK_SCORES, 0.0)
    assert random["answered"] == 0.0 and random["abstained"] == 1.0
    glove = scores["interceptor=glove_interceptor"]["representational_change"]
    # both are baselines, which the reference leaves out of its scores: marked
    assert random["reference_scores_it"] is False and glove["reference_scores_it"] is False
    assert glove["probed"] == "glove_interceptor"
