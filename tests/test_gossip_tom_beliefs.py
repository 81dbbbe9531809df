"""Gossip theory-of-mind items that need a mind: what Y holds (its private reputation messages
too), false- and true-belief items, the balance that puts every constant at chance, and the
tricks (constant, rule, abstaining answerers) at chance on the false-belief items of the
bundled ``llm_align_tom`` and of two other populations (limited reach; the prisoner's dilemma
with hidden gossip, where the oracle is informed)."""

from __future__ import annotations

import math

import pytest
from socialsim.agents.scripted.gossip_tom import ConstantAnswerer
from socialsim.envs.gossip import tom, tom_truth

from socialsim import config
from socialsim.analysis import baselines
from socialsim.analysis.gossip_tom import probe_scores, scored_entries
from socialsim.episode import EpisodeSpec
from socialsim.records import EpisodeRecord
from socialsim.runner import play_episode


def _m(i, kind, payload, to="*"):
    return {"id": i, "turn": 1, "sender": "env", "to": to, "channel": "x", "kind": kind,
            "payload": payload}  # fmt: skip


def _gossip(i, round_, author, about, tone, to="*"):
    payload = {"round": round_, "author": author, "about": about, "tone": tone, "message": None}
    return _m(i, "gossip", payload, to)


def _act(i, round_, actor, target, action):
    payload = {"round": round_, "actor": actor, "target": target, "action": action}
    return _m(i, "action", payload, [target])


def _record(messages):
    return EpisodeRecord(
        experiment="t", cell={}, episode=0, seed=0, env_id="donation_v0", env_kwargs={},
        form="parallel", seats={}, messages=messages, summary={"game": "donation"},
    )  # fmt: skip


def _rules(reach=None):
    payload = {"game": "donation", "agents": ["a", "b", "c", "d"]}
    return _m(0, "rules", payload if reach is None else {**payload, "gossip_reach": reach})


def test_under_limited_reach_y_holds_what_this_rounds_reputation_message_told_it():
    messages = [
        _rules(0.5),
        _act(1, 1, "c", "a", "defect"),
        _gossip(2, 1, "a", "c", "criticism", to=["a", "c"]),
        _m(3, "reputation", {"round": 2, "about": "c", "tones": ["criticism"]}, to=["b"]),
    ]
    assert tom_truth.held_tones(messages, "b", "c", 4, 2) == ["criticism"]
    assert tom_truth.held_tones(messages, "b", "c", 4, 3) == []  # not told in round 3: a stranger
    assert tom_truth.held_tones(messages, "d", "c", 4, 2) == []
    entry = {"probe": "will_help", "seat": "d", "viewer": "b", "about": "c", "norm": "image_scoring",
             "seen": 4, "round": 2}  # fmt: skip
    assert tom_truth.truth(_record(messages), entry) == "defect"
    assert tom_truth.informed(_record(messages), entry) is False  # b's message went to b alone


def test_a_hidden_tone_or_a_lie_makes_a_false_belief_item():
    messages = [
        _rules(),
        _act(1, 1, "c", "a", "defect"),
        _gossip(2, 1, "a", "c", "criticism", to=["a", "c", "d"]),  # hidden from b
        _act(3, 2, "a", "d", "cooperate"),
        _gossip(4, 2, "d", "a", "criticism"),  # a lie: a cooperated
    ]
    record = _record(messages)

    def entry(viewer, about, seat="d"):
        return {"probe": "reputation", "seat": seat, "viewer": viewer, "about": about,
                "norm": "image_scoring", "seen": 5, "round": 3}  # fmt: skip

    missed = entry("b", "c")
    assert tom_truth.truth(record, missed) == "unrated"
    assert tom_truth.second_order(messages, "donation", missed)[1] == "bad"
    assert tom_truth.item_set(record, missed) == "false_belief"
    assert tom_truth.rule_answer_of(record, missed) == "bad"  # d's own view: the egocentric trick
    lied = entry("b", "a", seat="c")
    assert tom_truth.truth(record, lied) == "bad"
    assert tom_truth.item_set(record, lied) == "false_belief"
    assert tom_truth.item_set(record, entry("d", "c", seat="a")) == "true_belief"


def test_balance_keeps_every_class_even_and_the_rule_right_on_one_in_k():
    items = [("good", True)] * 5 + [("good", False)] * 2 + [("bad", False)] * 6 + [("bad", True)]
    kept = baselines.balance(items, lambda x: x[0], lambda x: x[1])
    truths = [t for t, _ in kept]
    assert truths.count("good") == truths.count("bad") == 6
    assert sum(hit for _, hit in kept) == 6  # n of the k n items: the rule scores 1/2
    assert baselines.balance([("good", True)] * 4, lambda x: x[0]) == []  # one class: nothing


def test_normalised_is_zero_at_the_best_trick_and_one_at_the_oracle():
    assert baselines.normalised(0.5, 0.5, 0.9) == 0.0
    assert baselines.normalised(0.9, 0.5, 0.9) == 1.0
    assert math.isnan(baselines.normalised(0.7, 0.6, 0.6))  # the oracle is no better than a trick


def test_the_constant_answerer_takes_only_the_probes_words():
    assert ConstantAnswerer({"reputation": "bad"}).answers["reputation"] == "bad"
    assert ConstantAnswerer().answers["has_seen"] == "yes"
    with pytest.raises(ValueError, match="answers: 'reputation' = 'maybe' is not allowed"):
        ConstantAnswerer({"reputation": "maybe"})
    with pytest.raises(ValueError, match="answers: a table of probe = word, got 'good'"):
        ConstantAnswerer("good")


def test_will_help_truth_is_the_discriminators_own_move_under_limited_reach():
    seats = {f"agent_{i}": {"kind": "gossip_oracle"} for i in range(8)}
    seats["agent_6"] = seats["agent_7"] = {"kind": "always_defect"}
    spec = EpisodeSpec(
        env_id="donation_v0", seed=5, seats=seats, probes=[{"name": "will_help"}],
        env_kwargs={"n_agents": 8, "rounds": 12, "gossip_reach": 0.5, "schedule": "random"},
    )  # fmt: skip
    record = play_episode(spec)
    moves = [
        (tom_truth.truth(record, e), tom_truth.move_of(record.messages, "donation", e["viewer"],
                                                       e["about"], e["round"]))
        for e in record.probes if e["viewer"] not in ("agent_6", "agent_7")
    ]  # fmt: skip
    assert len(moves) > 20 and all(truth == move for truth, move in moves)
    assert {truth for truth, _ in moves} == {"cooperate", "defect"}


def _tricks_at_chance(records):
    rows = probe_scores(records)
    for r in rows:
        if r["items"]:  # every constant answer is at chance on every balanced set
            assert r["constant"] == r["chance"] and r["abstainer"] == r["chance"], r
    false_belief = [r for r in rows if r["item_set"] == "false_belief" and r["items"]]
    assert {r["probe"] for r in false_belief} == {"reputation", "will_help"}
    for r in false_belief:
        if r["balanced_on"] == "answer and rule":
            assert abs(r["rule"] - r["chance"]) <= 0.05, r
        if r["agent"].startswith(("gossip_constant", "gossip_rule", "gossip_abstainer")):
            assert r["credited"] <= r["chance"] + 0.05, r
        if r["agent"].startswith("gossip_rule"):  # its own answers are the rule's
            assert r["balanced_on"] == "answer and rule", r
        if r["agent"].startswith(("gossip_rule", "gossip_abstainer")):
            assert abs(r["credited"] - r["chance"]) <= 0.05, r
    for record in records:  # the oracle is right wherever it is informed
        for e in scored_entries(record):
            if e["informed"] and record.seats[e["seat"]]["kind"] == "gossip_oracle":
                assert e["hit"], e
    return rows


@pytest.mark.slow
def test_llm_align_tom_puts_constant_rule_and_abstaining_answerers_at_chance():
    oracle = '{kind = "gossip_oracle", norm = "simple_standing"}'
    sets = [f"seats.agent_{i}={oracle}" for i in range(3)] + ["episodes=4"]
    records = [play_episode(spec) for spec in config.load("llm_align_tom", sets).specs()]
    rows = _tricks_at_chance(records)
    fb = [r for r in rows if r["item_set"] == "false_belief" and r["items"]]
    assert sum(r["items"] for r in fb) >= 100
    oracle_rows = [r for r in rows if r["agent"].startswith("gossip_oracle") and r["informed"]]
    assert oracle_rows and all(r["score_informed"] == 1.0 for r in oracle_rows)


@pytest.mark.parametrize("reach", [1.0, 0.5])
def test_the_rule_answerer_seat_answers_what_the_report_scores_as_the_rule(reach):
    seats = {f"agent_{i}": {"kind": "gossip_rule_answerer"} for i in range(6)}
    seats["agent_5"] = {"kind": "liar", "mode": "invert"}
    spec = EpisodeSpec(
        env_id="donation_v0", seed=2, seats=seats, probes=[{"name": p} for p in tom.GOSSIP_PROBES],
        env_kwargs={"n_agents": 6, "rounds": 8, "gossip_reach": reach, "schedule": "random"},
        interventions=[{"action": "hide", "from": ["agent_0", "agent_1"], "about": "agent_5"}],
    )  # fmt: skip
    record = play_episode(spec)
    entries = scored_entries(record)
    assert {e["probe"] for e in entries} == set(tom.GOSSIP_PROBES)
    assert all(e["answer"] == e["rule"] for e in entries)


def test_a_mixed_population_with_limited_reach_puts_the_tricks_at_chance():
    seats = {f"agent_{i}": {"kind": "gossip_oracle", "norm": "simple_standing"} for i in range(10)}
    seats.update({
        "agent_4": {"kind": "gossip_constant_answerer"}, "agent_5": {"kind": "gossip_rule_answerer"},
        "agent_6": {"kind": "gossip_abstainer"}, "agent_7": {"kind": "always_defect"},
        "agent_8": {"kind": "random_donor"}, "agent_9": {"kind": "liar", "mode": "invert"},
    })  # fmt: skip
    kwargs = {"n_agents": 10, "rounds": 12, "gossip_reach": 0.5, "schedule": "random"}
    records = [
        play_episode(EpisodeSpec(env_id="donation_v0", seed=seed, seats=seats, env_kwargs=kwargs,
                                 probes=[{"name": p} for p in tom.GOSSIP_PROBES]))
        for seed in range(4)
    ]  # fmt: skip
    _tricks_at_chance(records)


def test_under_limited_reach_a_gossip_reached_its_author_and_subject_through_two_copies():
    messages = [
        _rules(0.5),
        _gossip(1, 1, "a", "c", "criticism", to=["a"]),
        _gossip(2, 1, "a", "c", "criticism", to=["c"]),
    ]
    assert [tom_truth.has_seen(messages, who, 2) for who in "abcd"] == [True, False, True, False]
    entry = {"probe": "has_seen", "seat": "c", "gossip": 2, "viewer": "b", "seen": 3, "round": 2}
    assert tom_truth.informed(_record(messages), entry) is True  # the rules say who saw it
    assert tom_truth.rule_answer_of(_record(messages), entry) == "no"


@pytest.mark.slow
def test_a_prisoners_population_with_hidden_gossip_puts_the_tricks_at_chance():
    norm = "stern_judging"
    seats = {f"agent_{i}": {"kind": "gossip_oracle", "norm": norm} for i in range(10)}
    seats.update({
        "agent_4": {"kind": "gossip_constant_answerer", "norm": norm},
        "agent_5": {"kind": "gossip_rule_answerer", "norm": norm},
        "agent_6": {"kind": "gossip_abstainer", "norm": norm}, "agent_7": {"kind": "random_donor"},
        "agent_8": {"kind": "always_defect"}, "agent_9": {"kind": "liar", "mode": "invert"},
    })  # fmt: skip
    hide = [
        {"action": "hide", "from": ["agent_0", "agent_4", "agent_6"], "about": "agent_8"},
        {"action": "hide", "from": ["agent_1", "agent_5", "agent_8"], "author": "agent_9"},
    ]
    records = [
        play_episode(EpisodeSpec(env_id="prisoners_v0", seed=seed, seats=seats,
                                 env_kwargs={"n_agents": 10, "rounds": 12, "schedule": "random"},
                                 probes=[{"name": p} for p in tom.GOSSIP_PROBES],
                                 interventions=hide))
        for seed in range(4)
    ]  # fmt: skip
    rows = _tricks_at_chance(records)
    informed = [r for r in rows if r["item_set"] == "false_belief" and r["informed"]]
    oracle = [r for r in informed if r["agent"].startswith("gossip_oracle")]
    assert oracle and all(r["score_informed"] == 1.0 for r in oracle)
