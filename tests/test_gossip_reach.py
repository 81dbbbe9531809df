"""gossip_reach q in the donation env: a donor knows its recipient's reputation only when told."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from socialsim.envs import donation_v0
from socialsim.envs.gossip.protocol import TONES
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


def inbox_tone_counts(messages, agents) -> np.ndarray:
    """Per agent, per tone: the counts an agent's inbox holds (a ``reputation`` message lists
    every tone about its agent so far, so it replaces what was known of it)."""
    counts = np.zeros((len(agents), len(TONES)), dtype=np.float32)
    for message in messages:
        payload = message.payload
        if message.kind == "gossip":
            counts[agents.index(payload["about"]), TONES.index(payload["tone"])] += 1
        elif message.kind == "reputation":
            row = counts[agents.index(payload["about"])]
            row[:] = 0
            for tone in payload["tones"]:
                row[TONES.index(tone)] += 1
    return counts


@pytest.mark.parametrize("q", [0.0, 0.4, 0.8])
def test_below_1_no_observation_or_info_holds_a_tone_its_inbox_was_not_told(q):
    env = donation_v0.parallel_env(n_agents=6, schedule="random", rounds=10, gossip_reach=q)
    agents = list(env.possible_agents)
    tones = env.unwrapped._layout.tone_offset
    pick = np.random.default_rng(0)
    observations, infos = env.reset(seed=9)
    hidden = 0
    while env.agents:
        bus, game = env.unwrapped.bus, env.unwrapped.game
        for agent in agents:
            expected = inbox_tone_counts(bus.visible_to(agent), agents)
            seen = observations[agent]["observation"][tones:].reshape(len(agents), len(TONES))
            np.testing.assert_array_equal(seen, expected)
            assert set(infos[agent]) == {"decision", "round", "role", "counterpart"}
            hidden += int((seen != game.tone_counts).any())
        actions = {
            a: int(pick.choice(np.flatnonzero(o["action_mask"])))
            for a, o in observations.items()
            if o["action_mask"].any()
        }
        observations, _, _, _, infos = env.step(actions)
    assert hidden  # some tones were published that some seat was not told


def test_at_q_1_every_observation_counts_every_tone_published():
    env = donation_v0.parallel_env(n_agents=4, schedule="random", rounds=6)
    tones = env.unwrapped._layout.tone_offset
    observations, _ = env.reset(seed=2)
    while env.agents:
        counts = env.unwrapped.game.tone_counts.ravel()
        for observation in observations.values():
            np.testing.assert_array_equal(observation["observation"][tones:], counts)
        actions = {
            a: int(np.flatnonzero(o["action_mask"])[0])
            for a, o in observations.items()
            if o["action_mask"].any()
        }
        observations, *_ = env.step(actions)


def test_a_person_and_an_llm_see_the_tones_a_judge_is_told():
    from socialsim.agents.human.gossip import view
    from socialsim.agents.llm.gossip_prompts import SeatPrompts
    from socialsim.envs.gossip.notebook import Notebook

    from socialsim.bus import Message

    record = play(11, gossip_reach=0.5)
    told = next(m for m in record.messages if m["kind"] == "reputation")
    donor, payload = told["to"][0], told["payload"]
    inbox = [Message.from_json(m) for m in record.messages if m["to"] == "*" or donor in m["to"]]
    inbox = [m for m in inbox if m.turn <= payload["round"]]
    info = {"round": payload["round"], "counterpart": payload["about"], "decision": "donate"}
    assert view(donor, inbox, info)["told"] == payload["tones"]
    notebook = Notebook(donor)
    notebook.read(inbox)
    lines = SeatPrompts(notebook, {}, display_names=False).log_lines(about=payload["about"])
    assert f"you were told the tones published so far about {payload['about']}: " + ", ".join(
        payload["tones"]
    ) in "\n".join(lines)
