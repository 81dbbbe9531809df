"""The pure rules of the gossip games: schedules, norms, payoffs (socialsim.envs.gossip)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from socialsim.envs.gossip import core, norms, protocol, schedules

from socialsim.registry import build_agent

N9_ALIGN = [
    (0, 1), (2, 0), (0, 3), (4, 0), (0, 5), (6, 0), (0, 7), (8, 0), (1, 2), (3, 1), (1, 4), (5, 1),
    (1, 6), (7, 1), (1, 8), (2, 3), (4, 2), (2, 5), (6, 2), (2, 7), (8, 2), (3, 4), (5, 3), (3, 6),
    (7, 3), (3, 8), (4, 5), (6, 4), (4, 7), (8, 4), (5, 6), (7, 5), (5, 8), (6, 7), (8, 6), (7, 8),
]  # fmt: skip


def flat(schedule):
    return [pair for round_pairs in schedule for pair in round_pairs]


def test_align_schedule_for_nine_agents_is_the_reference_order():
    schedule = schedules.align_schedule(9)
    assert all(len(r) == 1 for r in schedule)
    assert flat(schedule) == N9_ALIGN


def test_align_schedule_for_five_agents_is_the_reference_trust_order():
    assert flat(schedules.align_schedule(5)) == [
        (0, 1), (2, 0), (0, 3), (4, 0), (1, 2), (3, 1), (1, 4), (2, 3), (4, 2), (3, 4),
    ]  # fmt: skip


def test_nine_agent_role_strings_alternate_even_donor_first_odd_recipient_first():
    roles = {a: "" for a in range(9)}
    for donor, recipient in N9_ALIGN:
        roles[donor] += "D"
        roles[recipient] += "R"
    for agent, played in roles.items():
        assert played == ("DRDRDRDR" if agent % 2 == 0 else "RDRDRDRD")


@pytest.mark.parametrize("n", [*range(2, 13), 50])
def test_align_schedule_meets_every_pair_once_alternating_within_quota(n):
    order = flat(schedules.align_schedule(n))
    assert sorted(tuple(sorted(p)) for p in order) == list(itertools.combinations(range(n), 2))
    quota = math.ceil((n - 1) / 2)
    history = {a: "" for a in range(n)}
    for donor, recipient in order:
        history[donor] += "D"
        history[recipient] += "R"
    for played in history.values():
        assert "DD" not in played and "RR" not in played
        assert played.count("D") <= quota and played.count("R") <= quota


def test_circle_schedule_for_five_agents_is_the_reference_pd_order():
    assert flat(schedules.circle_schedule(5)) == [
        (1, 4), (2, 3), (0, 4), (1, 2), (0, 3), (4, 2), (0, 2), (3, 1), (0, 1), (3, 4),
    ]  # fmt: skip


@pytest.mark.parametrize("n", [2, 3, 4, 6, 7])
def test_circle_schedule_is_a_round_robin(n):
    order = flat(schedules.circle_schedule(n))
    assert sorted(tuple(sorted(p)) for p in order) == list(itertools.combinations(range(n), 2))


def test_isolated_entrant_meets_each_agent_once_alternating_entrant_first_as_donor():
    # Max -> John, Kate -> Max, Max -> Jack, Emma -> Max, Max -> Luke, Mary -> Max, Max -> Alice, Bob -> Max
    assert flat(schedules.isolated_entrant_schedule(9)) == [
        (8, 0), (1, 8), (8, 2), (3, 8), (8, 4), (5, 8), (8, 6), (7, 8),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("n", "rounds", "pairs_per_round", "entrant_round"),
    [
        (2, 10, None, None),
        (9, 7, None, None),
        (6, 5, 1, None),
        (5, 6, None, 3),
        (8, 4, 2, 9),
        (2, 5, None, 3),  # one agent alone before the entry: its rounds have no pair
        (3, 4, 0, None),  # no pair asked for: still one shuffle a round
    ],
)
def test_random_schedule_draws_one_shuffle_a_round_in_round_order(
    n, rounds, pairs_per_round, entrant_round
):
    # the reference: one rng.permutation a round of the agents in play (the entrant from its
    # round on), its first pairs taken in order; the generator is left where it would be
    reference_rng, rng = np.random.default_rng(11), np.random.default_rng(11)
    expected = []
    for r in range(1, rounds + 1):
        playing = n - 1 if entrant_round is not None and r < entrant_round else n
        order = reference_rng.permutation(playing).tolist()
        count = playing // 2 if pairs_per_round is None else min(pairs_per_round, playing // 2)
        expected.append([(order[2 * k], order[2 * k + 1]) for k in range(count)])
    got = schedules.random_schedule(n, rounds, rng, pairs_per_round, entrant_round)
    assert got == expected
    assert rng.random() == reference_rng.random()


def test_random_schedule_pairs_are_disjoint_and_the_same_for_the_same_seed():
    a = schedules.random_schedule(9, 20, np.random.default_rng(3))
    b = schedules.random_schedule(9, 20, np.random.default_rng(3))
    c = schedules.random_schedule(9, 20, np.random.default_rng(4))
    assert a == b and a != c
    for round_pairs in a:
        assert len(round_pairs) == 4
        members = [x for pair in round_pairs for x in pair]
        assert len(set(members)) == len(members)


def test_random_schedule_keeps_a_joining_entrant_out_until_its_round():
    schedule = schedules.random_schedule(5, 10, np.random.default_rng(0), entrant_round=6)
    for number, round_pairs in enumerate(schedule, start=1):
        members = {x for pair in round_pairs for x in pair}
        if number < 6:
            assert 4 not in members
    assert any(4 in {x for p in r for x in p} for r in schedule[5:])


def test_random_schedule_honours_pairs_per_round():
    schedule = schedules.random_schedule(10, 5, np.random.default_rng(0), pairs_per_round=2)
    assert [len(r) for r in schedule] == [2] * 5


def test_market_schedule_pairs_every_seller_with_every_buyer_once_in_seeded_order():
    a = flat(schedules.market_schedule(6, 6, np.random.default_rng(1)))
    b = flat(schedules.market_schedule(6, 6, np.random.default_rng(1)))
    assert a == b
    assert sorted(a) == [(s, 6 + k) for s in range(6) for k in range(6)]
    assert a != sorted(a)


# -- norms ------------------------------------------------------------------------------------


def test_tones_are_in_the_reference_order_with_their_valence():
    assert norms.TONES == ("praising", "neutral", "mocking", "complaint", "criticism")
    assert [norms.valence(t) for t in norms.TONES] == [1, 0, -1, -1, -1]
    with pytest.raises(ValueError, match="tone"):
        norms.valence("sarcasm")


@pytest.mark.parametrize(
    ("norm", "action", "reputation", "tone"),
    [
        ("image_scoring", "cooperate", -1, "praising"),
        ("image_scoring", "defect", -1, "criticism"),
        ("image_scoring", "defect", 1, "criticism"),
        ("simple_standing", "cooperate", -1, "praising"),
        ("simple_standing", "defect", -1, "neutral"),
        ("simple_standing", "defect", 0, "neutral"),
        ("simple_standing", "defect", 1, "criticism"),
        ("simple_standing", "defect", None, "criticism"),
        ("stern_judging", "cooperate", 1, "praising"),
        ("stern_judging", "defect", -1, "praising"),
        ("stern_judging", "cooperate", -1, "criticism"),
        ("stern_judging", "defect", 1, "criticism"),
        ("stern_judging", "defect", None, "criticism"),
    ],
)
def test_assess_gives_the_tone_of_each_norm(norm, action, reputation, tone):
    assert norms.assess(norm, action, reputation) == tone


def test_image_scoring_reputation_is_the_sign_of_the_summed_valences():
    assert norms.reputation([], "image_scoring") is None
    assert norms.reputation(["praising", "criticism"], "image_scoring") == 1  # a tie is good
    assert norms.reputation(["praising", "mocking", "complaint"], "image_scoring") == -1
    assert norms.reputation(["neutral"], "image_scoring") == 1


def test_standing_reputation_is_the_latest_non_neutral_tone():
    for norm in ("simple_standing", "stern_judging"):
        assert norms.reputation([], norm) is None
        assert norms.reputation(["neutral", "neutral"], norm) == 1
        assert norms.reputation(["criticism", "praising", "neutral"], norm) == 1
        assert norms.reputation(["praising", "complaint", "neutral"], norm) == -1


def test_memory_chooses_the_tally_or_the_latest_tone_for_any_norm():
    tones = ["praising", "praising", "criticism", "neutral"]
    assert norms.reputation(tones, "image_scoring") == 1  # the tally: +1 +1 -1
    assert norms.reputation(tones, "image_scoring", "latest") == -1  # the classic binary image
    assert norms.reputation(tones, "simple_standing", "tally") == 1
    assert norms.reputation(tones, "stern_judging", "latest") == -1
    with pytest.raises(ValueError, match=r"memory: must be one of tally, latest, got 'last'"):
        norms.reputation(tones, "image_scoring", "last")
    with pytest.raises(ValueError, match=r"memory: must be one of tally, latest \(or absent\)"):
        build_agent({"kind": "norm_discriminator", "memory": "all"})


def test_discriminators_help_strangers_and_the_good_and_refuse_the_bad():
    for norm in norms.NORMS:
        assert norms.decide(norm, None) == "cooperate"
        assert norms.decide(norm, 1) == "cooperate"
        assert norms.decide(norm, 0) == "defect"
        assert norms.decide(norm, -1) == "defect"
    with pytest.raises(ValueError, match="norm"):
        norms.decide("tit_for_tat", 1)


# -- payoffs ----------------------------------------------------------------------------------


def test_prisoners_payoffs_are_the_donation_game_both_ways():
    pairs = (("C", "C"), ("C", "D"), ("D", "C"), ("D", "D"))
    assert [protocol.prisoners_payoff(a, b, cost=1, benefit=5) for a, b in pairs] == [
        4,
        -1,
        5,
        0,
    ]


def test_market_payoffs_are_price_minus_cost_and_value_minus_price():
    assert protocol.MARKET_PAYOFFS[("H", "c")] == (2, 3)
    assert protocol.MARKET_PAYOFFS[("H", "s")] == (0, 2)
    assert protocol.MARKET_PAYOFFS[("L", "c")] == (3, 0)
    assert protocol.MARKET_PAYOFFS[("L", "s")] == (1, 1)
    assert protocol.MARKET_PAYOFFS[("L", "none")] == (0, 0)


def test_core_play_rejects_a_bad_choice_without_changing_the_state():
    game = core.DonationGame([f"agent_{i}" for i in range(3)])
    game.reset(np.random.default_rng(0))
    before = (list(game.resources), game.round, dict(game.pending()))
    with pytest.raises(ValueError, match="action"):
        game.play({0: "donate everything"})
    assert (list(game.resources), game.round, game.pending()) == before
