"""gossip_reach q in the donation env: a donor knows its recipient's reputation only when told."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from socialsim.envs import donation_v0
from socialsim.envs.gossip.reach import reach_generator

from socialsim.episode import EpisodeSpec
from socialsim.runner import play_episode

KINDS = ["stern_judging", "always_defect", "always_cooperate", "stern_judging", "always_defect"]


def play(seed: int, **kwargs):
    seats = {f"agent_{i}": {"kind": kind} for i, kind in enumerate(KINDS)}
    options = {"n_agents": 5, "schedule": "random", "rounds": 8, "initial_resources": 100}
    return play_episode(EpisodeSpec("donation_v0", seed, seats, {**options, **kwargs}))


def test_below_1_a_tone_reaches_only_its_author_and_the_agent_it_is_about():
    record = play(3, gossip_reach=0.5)
    tones = [m for m in record.messages if m["kind"] == "gossip"]
    assert tones and all(m["channel"] == "private" for m in tones)
    for m in tones:
        assert m["to"] in ([m["payload"]["author"]], [m["payload"]["about"]])
    public = [m for m in play(3).messages if m["kind"] == "gossip"]
    assert all(m["to"] == "*" for m in public)


def test_a_told_donor_hears_every_tone_about_its_recipient_by_the_reach_draws():
    seed, q = 11, 0.5
    record = play(seed, gossip_reach=q)
    interactions = record.summary["interactions"]
    reach = reach_generator(np.random.default_rng(seed))
    for round_ in range(1, 9):
        pairs = [(i["donor"], i["recipient"]) for i in interactions if i["round"] == round_]
        knows = reach.random(len(pairs)) < q
        told = {
            m["to"][0]: m["payload"]
            for m in record.messages
            if m["kind"] == "reputation" and m["payload"]["round"] == round_
        }
        expected = {}
        for (donor, recipient), knew in zip(pairs, knows, strict=True):
            before = [
                i["tone"] for i in interactions if i["donor"] == recipient and i["round"] < round_
            ]
            if knew and before:
                expected[donor] = {"round": round_, "about": recipient, "tones": before}
        assert told == expected
    assert any(m["kind"] == "reputation" for m in record.messages)


def test_reach_draws_leave_the_schedule_as_at_q_1():
    knowing, unsure = play(5), play(5, gossip_reach=0.3)
    pairs = [
        [(i["round"], i["donor"], i["recipient"]) for i in r.summary["interactions"]]
        for r in (knowing, unsure)
    ]
    assert pairs[0] == pairs[1]


def test_the_rules_state_gossip_reach_only_below_1():
    rules = [m["payload"] for m in play(2).messages if m["kind"] == "rules"][0]
    assert "gossip_reach" not in rules
    rules = [m["payload"] for m in play(2, gossip_reach=0.25).messages if m["kind"] == "rules"][0]
    assert rules["gossip_reach"] == 0.25


def test_a_stern_judge_that_is_not_told_helps_a_criticised_defector():
    # q = 0: nobody is ever told, so the judges help everyone, as with gossip off
    blind = play(7, gossip_reach=0.0).summary["interactions"]
    silent = play(7, gossip=False).summary["interactions"]
    assert [i["action"] for i in blind] == [i["action"] for i in silent]
    criticised = {i["donor"]: i["round"] for i in reversed(blind) if i["tone"] == "criticism"}
    helped = [
        i
        for i in blind
        if KINDS[int(i["donor"][6:])] == "stern_judging"
        and criticised.get(i["recipient"], 99) < i["round"]
    ]
    assert helped and all(i["action"] == "cooperate" for i in helped)
    told = play(7, gossip_reach=1.0).summary["interactions"]
    assert [i["action"] for i in told] != [i["action"] for i in blind]


@pytest.mark.parametrize("value", [-0.5, 2, "all", None, True])
def test_gossip_reach_outside_0_1_is_an_error_naming_it(value):
    with pytest.raises(ValueError, match=r"gossip_reach: must be a number in \[0.0, 1.0\]"):
        donation_v0.parallel_env(gossip_reach=value)


@pytest.mark.parametrize("form", ["parallel", "aec"])
def test_the_donation_env_with_partial_reach_keeps_the_contract(form):
    from socialsim.testing import check_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        check_env(
            "donation_v0",
            env_kwargs={"gossip_reach": 0.5, "schedule": "random", "n_agents": 6},
            form=form,
        )


def test_gossip_reach_1_given_is_the_record_without_it():
    given, default = play(4, gossip_reach=1.0), play(4)
    assert given.messages == default.messages
    assert given.summary == default.summary
