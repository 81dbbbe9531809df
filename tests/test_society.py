"""The gossip society: the Mesa model and the numpy engine play the same model, draw for draw."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from socialsim.envs.gossip import norms

from socialsim.society.mesa_model import SocietyModel, run_society
from socialsim.society.population import STRATEGIES
from socialsim.society.vectorised import VectorSociety, statistic_columns

MIXED = {
    "always_cooperate": 3,
    "always_defect": 4,
    "image_scoring": 5,
    "simple_standing": 6,
    "stern_judging": 7,
}  # 25 agents: an odd one sits out every round


@pytest.mark.parametrize(
    "population, kwargs",
    [
        (MIXED, {}),
        (MIXED, {"error": 0.1}),
        ({"stern_judging": 12, "always_defect": 6}, {"error": 0.05, "cost": 0.3, "benefit": 1.7}),
        ({"simple_standing": 10, "always_defect": 10}, {"gossip": False}),
        ({"image_scoring": 2}, {}),
        (MIXED, {"error": 0.1, "gossip_reach": 0.5}),
        ({"stern_judging": 12, "always_defect": 6}, {"gossip_reach": 0.0}),
    ],
)
def test_mesa_and_numpy_engines_give_the_same_statistics_for_the_same_seed(population, kwargs):
    for seed in (0, 7):
        mesa_stats = run_society(population, 40, seed=seed, engine="mesa", **kwargs)
        numpy_stats = run_society(population, 40, seed=seed, engine="numpy", **kwargs)
        pd.testing.assert_frame_equal(mesa_stats, numpy_stats, check_exact=True)
        assert list(mesa_stats.columns) == statistic_columns(population)
        assert list(mesa_stats.index) == list(range(1, 41))


def test_both_engines_leave_their_generator_and_payoffs_in_the_same_state():
    model = SocietyModel(MIXED, error=0.2, cost=0.3, benefit=1.7, seed=3)
    society = VectorSociety(MIXED, error=0.2, cost=0.3, benefit=1.7, seed=3)
    for _ in range(10):
        model.step()
        society.step()
    assert model.rng.bit_generator.state == society.rng.bit_generator.state
    payoffs = np.array([agent.payoff for agent in model.members])
    np.testing.assert_array_equal(payoffs, society.payoff)


def test_the_numpy_record_holds_each_agents_valence_sum_standing_and_strategy():
    model = SocietyModel(MIXED, error=0.2, seed=5)
    society = VectorSociety(MIXED, error=0.2, seed=5)
    for _ in range(30):
        model.step()
        society.step()
    record = society.society.record[0]
    members = model.members
    np.testing.assert_array_equal(society.society.valence_sum[0], [a.valence_sum for a in members])
    np.testing.assert_array_equal(record < 0, [a.valence_sum < 0 for a in members])
    np.testing.assert_array_equal((record >> 1) & 1, [a.latest_judgement < 0 for a in members])
    assert [STRATEGIES[code] for code in society.strategy] == [a.strategy for a in members]
    assert any(a.valence_sum < 0 for a in members) and any(a.latest_judgement < 0 for a in members)


def test_different_seeds_give_different_histories():
    a = run_society(MIXED, 30, seed=1, error=0.1, engine="numpy")
    b = run_society(MIXED, 30, seed=2, error=0.1, engine="numpy")
    assert not a.equals(b)


def test_agent_reputation_is_norms_reputation_of_the_tones_about_it():
    rng = np.random.default_rng(0)
    model = SocietyModel({"image_scoring": 2}, seed=0)
    for _ in range(200):
        agent = model.members[0]
        agent.tones_about, agent.valence_sum, agent.latest_judgement = [], 0, 0
        for index in rng.integers(0, len(norms.TONES), size=int(rng.integers(0, 6))):
            agent.hear(norms.TONES[index])
        for norm in norms.NORMS:
            assert agent.reputation(norm) == norms.reputation(agent.tones_about, norm)


def test_image_scorer_meets_a_defector_by_hand():
    # Two agents, one pair a round; who donates is the permutation's first entry. The defector
    # refuses and is criticised; the image scorer helps it only while nobody criticised it.
    rounds, seed = 12, 5
    stats = run_society({"image_scoring": 1, "always_defect": 1}, rounds, seed=seed)
    rng = np.random.default_rng(seed)
    criticised = False
    for round_ in range(1, rounds + 1):
        donor = int(rng.permutation(2)[0])
        if donor == 1:  # the defector donates: refuses, the image scorer criticises it
            expected = (0.0, 0.0, 0.0)
            criticised = True
        elif criticised:  # the image scorer refuses a bad recipient; the defector criticises
            expected = (0.0, 0.0, 0.0)
        else:  # the image scorer helps a stranger; the defector reports it honestly
            expected = (1.0, -1.0, 5.0)
        row = stats.loc[round_]
        assert (
            row["cooperation_rate"],
            row["payoff_image_scoring"],
            row["payoff_always_defect"],
        ) == expected
        assert row["reputation_accuracy"] == 1.0


def test_cooperators_help_every_round_and_share_b_minus_c_per_pair():
    stats = run_society({"always_cooperate": 11}, 5, seed=0, engine="numpy")
    assert (stats["cooperation_rate"] == 1.0).all()
    assert (stats["payoff_always_cooperate"] == (5 * 5.0 - 5 * 1.0) / 11).all()
    assert (stats["reputation_accuracy"] == 1.0).all()


def test_stern_judges_condemn_helping_the_bad():
    # A stern judge that is helped while bad says the donor did wrong: criticism of a help.
    model = SocietyModel({"stern_judging": 2}, seed=0)
    donor, recipient = model.members
    recipient.hear("criticism")
    assert (
        norms.assess("stern_judging", "cooperate", recipient.reputation("stern_judging"))
        == "criticism"
    )
    assert donor.intends(recipient) == "defect"


def test_without_gossip_discriminators_cannot_tell_and_defection_pays():
    population = {"stern_judging": 80, "always_defect": 20}
    silent = run_society(population, 60, seed=4, gossip=False, engine="numpy")
    gossip = run_society(population, 60, seed=4, gossip=True, engine="numpy")
    assert silent["reputation_accuracy"].isna().all()
    late = slice(31, 60)
    assert (
        silent.loc[late, "payoff_always_defect"].mean()
        > silent.loc[late, "payoff_stern_judging"].mean()
    )
    assert (
        gossip.loc[late, "payoff_always_defect"].mean()
        < gossip.loc[late, "payoff_stern_judging"].mean()
    )
    assert (
        gossip.loc[late, "payoff_always_defect"].mean()
        < silent.loc[late, "payoff_always_defect"].mean()
    )


def test_the_mesa_model_collects_one_row_per_step():
    model = SocietyModel({"simple_standing": 4, "always_defect": 4}, seed=1)
    for _ in range(3):
        model.step()
    frame = model.datacollector.get_model_vars_dataframe()
    assert len(frame) == 3
    assert list(frame.columns) == statistic_columns({"simple_standing": 4, "always_defect": 4})
    assert model.steps == 3


def test_zero_rounds_give_an_empty_table_with_the_columns():
    stats = run_society({"image_scoring": 3}, 0, seed=0, engine="numpy")
    assert stats.empty and list(stats.columns) == statistic_columns({"image_scoring": 3})


@pytest.mark.parametrize(
    "population, kwargs, name",
    [
        ({"tit_for_tat": 3}, {}, "population"),
        ({"image_scoring": -1, "always_defect": 3}, {}, "population.image_scoring"),
        ({"image_scoring": 1}, {}, "population"),
        ({"image_scoring": 4}, {"error": 1.5}, "error"),
        ({"image_scoring": 4}, {"cost": -1}, "cost"),
        ({"image_scoring": 4}, {"engine": "netlogo"}, "engine"),
        ({"image_scoring": 4}, {"gossip": "yes"}, "gossip"),
    ],
)
def test_bad_arguments_are_rejected_naming_the_parameter(population, kwargs, name):
    with pytest.raises(ValueError, match=f"^{name}"):
        run_society(population, 3, seed=0, **kwargs)


def test_negative_rounds_are_rejected():
    with pytest.raises(ValueError, match="^rounds"):
        run_society({"image_scoring": 4}, -1, seed=0, engine="numpy")


def test_accuracy_is_nan_when_every_tone_is_neutral():
    # Simple standing says nothing bad about refusing a bad recipient: a neutral tone, no claim.
    model = SocietyModel({"simple_standing": 2}, seed=0)
    a, b = model.members
    a.hear("criticism")
    b.hear("criticism")
    model.step()
    row = model.statistics().loc[1]
    assert row["cooperation_rate"] == 0.0
    assert math.isnan(row["reputation_accuracy"])


def test_drawing_ahead_in_a_thread_changes_nothing():
    one = VectorSociety(MIXED, error=0.1, seed=11)
    two = VectorSociety(MIXED, error=0.1, seed=11)
    pd.testing.assert_frame_equal(
        one.run(25, parallel=False), two.run(25, parallel=True), check_exact=True
    )
    assert one.rng.bit_generator.state == two.rng.bit_generator.state


def test_runs_in_pieces_add_up_to_one_run():
    one = VectorSociety(MIXED, error=0.1, seed=11)
    two = VectorSociety(MIXED, error=0.1, seed=11)
    two.run(10)
    two.step()
    pd.testing.assert_frame_equal(one.run(25), two.run(14), check_exact=True)
    assert one.rng.bit_generator.state == two.rng.bit_generator.state


def test_a_donor_that_does_not_know_helps_the_defector_and_q_above_c_over_b_pays_the_judges():
    # gossip_reach q: the donor knows its recipient's reputation with probability q. With
    # q = 0 stern judges help everyone, as with gossip off; with q = 1 they refuse defectors.
    population = {"stern_judging": 80, "always_defect": 20}
    blind = run_society(population, 60, seed=4, gossip_reach=0.0, engine="numpy")
    silent = run_society(population, 60, seed=4, gossip=False, engine="numpy")
    pd.testing.assert_series_equal(blind["cooperation_rate"], silent["cooperation_rate"])
    late = slice(31, 60)
    payoff = {
        q: run_society(population, 60, seed=4, gossip_reach=q, engine="numpy").loc[late].mean()
        for q in (0.1, 0.9)
    }
    # c / b = 0.2: below it defection pays, above it discrimination does
    assert payoff[0.1]["payoff_always_defect"] > payoff[0.1]["payoff_stern_judging"]
    assert payoff[0.9]["payoff_always_defect"] < payoff[0.9]["payoff_stern_judging"]


def test_the_reach_draws_leave_the_pairing_stream_as_it_was():
    # the reach draws come from the Generator's own child, so the pairs are those of q = 1
    knowing = VectorSociety(MIXED, seed=9)
    unsure = VectorSociety(MIXED, seed=9, gossip_reach=0.5)
    knowing.run(7)
    unsure.run(7)
    assert knowing.rng.bit_generator.state == unsure.rng.bit_generator.state
    assert unsure.society.reach_rngs[0].bit_generator.state != (
        np.random.default_rng(9).spawn(1)[0].bit_generator.state
    )


@pytest.mark.parametrize("value", [-0.1, 1.5, "high", None, True])
def test_gossip_reach_outside_0_1_is_an_error_naming_it(value):
    with pytest.raises(ValueError, match="gossip_reach: must be a number in"):
        VectorSociety(MIXED, seed=0, gossip_reach=value)
