"""The PettingZoo adapters of the gossip games: API conformance, reference values, bus, errors."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from types import MappingProxyType

import numpy as np
import pytest
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, seed_test
from socialsim.envs import donation_v0, market_v0, prisoners_v0, trust_v0

from socialsim import registry

MODES = [
    (donation_v0, {}),
    (donation_v0, {"gossip": False}),
    (donation_v0, {"schedule": "random", "n_agents": 6, "rounds": 5}),
    (donation_v0, {"schedule": "random", "pairs_per_round": 1, "n_agents": 4}),
    (donation_v0, {"entrant": "isolated"}),
    (donation_v0, {"entrant": "isolated", "gossip": False}),
    (donation_v0, {"entrant": "joins", "rounds": 6}),
    (donation_v0, {"entrant": "joins", "gossip": False, "n_agents": 5, "entrant_round": 2}),
    (prisoners_v0, {}),
    (prisoners_v0, {"gossip": False}),
    (prisoners_v0, {"n_agents": 4, "schedule": "random"}),
    (prisoners_v0, {"entrant": "isolated"}),
    (prisoners_v0, {"entrant": "joins", "gossip": False}),
    (trust_v0, {}),
    (trust_v0, {"gossip": False}),
    (trust_v0, {"schedule": "random", "n_agents": 4}),
    (trust_v0, {"entrant": "isolated"}),
    (trust_v0, {"entrant": "joins"}),
    (market_v0, {}),
    (market_v0, {"gossip": False}),
    (market_v0, {"schedule": "random", "rounds": 4}),
    (market_v0, {"n_sellers": 2, "n_buyers": 3, "gossip": False, "schedule": "random"}),
]
IDS = [f"{m.__name__.rsplit('.', 1)[-1]}-{kw}" for m, kw in MODES]


@pytest.mark.parametrize(("module", "kwargs"), MODES, ids=IDS)
def test_pettingzoo_api_and_seed_tests_pass(module, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(module.env(**kwargs), num_cycles=100)
        parallel_api_test(module.parallel_env(**kwargs), num_cycles=100)
        seed_test(lambda: module.env(**kwargs), num_cycles=30)
        parallel_seed_test(lambda: module.parallel_env(**kwargs), num_cycles=30)


def play(env, policy, seed=0):
    """Play a parallel env to the end; ``policy(agent, decision, obs) -> action``."""
    observations, infos = env.reset(seed=seed)
    returns = dict.fromkeys(env.possible_agents, 0.0)
    while env.agents:
        actions = {
            a: policy(a, infos[a]["decision"], observations[a])
            for a in env.agents
            if infos[a]["decision"]
        }
        observations, rewards, _, _, infos = env.step(actions)
        for agent, reward in rewards.items():
            returns[agent] += reward
    return returns


def nice(agent, decision, obs):
    return {"donate": 1, "play": 1, "gossip": 2}[decision]


def nasty(agent, decision, obs):
    return {"donate": 0, "play": 0, "gossip": 6}[decision]


def image_scores(summary):
    scores = dict.fromkeys(summary["agents"], 0)
    for i in summary["interactions"]:
        scores[i["donor"]] += 1 if i["action"] == "cooperate" else -1
    return scores


def test_nine_cooperators_end_with_26_each_welfare_144_image_score_4():
    env = donation_v0.parallel_env()
    returns = play(env, nice)
    summary = env.summary()
    assert summary["resources"] == {f"agent_{i}": 26.0 for i in range(9)}
    assert sum(returns.values()) == 144.0
    assert image_scores(summary) == {f"agent_{i}": 4 for i in range(9)}
    assert len(summary["interactions"]) == 36


def test_nine_defectors_keep_10_each_with_image_score_minus_4():
    env = donation_v0.parallel_env()
    returns = play(env, nasty)
    assert sum(returns.values()) == 0.0
    assert env.summary()["resources"] == {f"agent_{i}": 10.0 for i in range(9)}
    assert image_scores(env.summary()) == {f"agent_{i}": -4 for i in range(9)}


def test_five_cooperators_in_the_prisoners_dilemma_return_16_each():
    env = prisoners_v0.parallel_env()
    assert play(env, nice) == {f"agent_{i}": 16.0 for i in range(5)}


def test_donation_interaction_record_has_the_shared_schema():
    env = donation_v0.parallel_env()
    play(env, nice)
    first = env.summary()["interactions"][0]
    assert first == {
        "round": 1,
        "donor": "agent_0",
        "recipient": "agent_1",
        "action": "cooperate",
        "donor_before": 10.0,
        "recipient_before": 10.0,
        "donation": 1.0,
        "benefit": 5.0,
        "ratio": 0.1,
        "tone": "praising",
        "message": None,
        "invalid": False,
    }
    assert env.summary()["game"] == "donation" and env.summary()["discount"] == 0.99


def test_donation_rounds_are_a_donor_step_then_a_recipient_gossip_step():
    env = donation_v0.parallel_env()
    _, infos = env.reset(seed=0)
    assert {a: i["decision"] for a, i in infos.items() if i["decision"]} == {"agent_0": "donate"}
    _, rewards, _, _, infos = env.step(
        {"agent_0": {"action": "cooperate", "justification": "why not"}}
    )
    assert rewards["agent_0"] == -1.0 and rewards["agent_1"] == 5.0
    assert {a: i["decision"] for a, i in infos.items() if i["decision"]} == {"agent_1": "gossip"}
    assert env.turn == 1
    env.step({"agent_1": {"tone": "complaint", "message": "Only one unit?"}})
    assert env.turn == 2
    gossip = [m for m in env.bus.log if m.kind == "gossip"]
    assert len(gossip) == 1 and dict(gossip[0].payload) == {
        "round": 1,
        "author": "agent_1",
        "about": "agent_0",
        "tone": "complaint",
        "message": "Only one unit?",
    }
    assert env.bus.audience_of(gossip[0]) == frozenset(env.possible_agents)


def test_without_gossip_the_recipient_never_decides_and_nothing_is_published():
    env = donation_v0.parallel_env(gossip=False)
    _, infos = env.reset(seed=0)
    decisions = set()
    while env.agents:
        decisions |= {i["decision"] for i in infos.values()}
        _, _, _, _, infos = env.step({a: 1 for a in env.agents if infos[a]["decision"]})
    assert decisions == {"donate", None}
    assert not [m for m in env.bus.log if m.kind == "gossip"]
    assert env.turn == 36


def play_random(env, seed: int, choices: int):
    """Play one episode of the Parallel ``env`` reset with ``seed``, each decision a legal
    action drawn by a generator seeded ``choices``; return the env, its bus log kept."""
    rng = np.random.default_rng(choices)
    observations, infos = env.reset(seed=seed)
    while env.agents:
        actions = {}
        for agent in env.agents:
            if infos[agent]["decision"]:
                mask = observations[agent]["action_mask"]
                actions[agent] = int(rng.choice(np.flatnonzero(mask)))
        observations, _, _, _, infos = env.step(actions)
    return env


@pytest.mark.parametrize(("module", "kwargs"), MODES, ids=IDS)
def test_nobody_but_the_agent_acted_upon_receives_an_action(module, kwargs):
    env = play_random(module.parallel_env(**kwargs), seed=3, choices=7)
    actions_seen = 0
    rules = [m for m in env.bus.log if m.kind == "rules"]
    assert len(rules) == 1 and rules[0].id == 0 and rules[0] == env.bus.log[0]
    for message in env.bus.log:
        audience = env.bus.audience_of(message)
        if message.kind == "rules":
            # everyone is told the settings; nothing in them is anyone's action
            assert audience == set(env.possible_agents) and message.channel == "public"
            assert not {"actor", "action", "actions", "target"} & set(message.payload)
        elif message.kind == "action":
            actions_seen += 1
            assert audience == {message.payload["target"]}
            assert message.payload["actor"] != message.payload["target"]
        elif message.kind == "match":
            assert set(message.payload) == {"round", "roles", "resources"}
            assert audience == set(message.payload["roles"])
        else:
            assert message.kind == "gossip" and set(message.payload) == {
                "round",
                "author",
                "about",
                "tone",
                "message",
            }
    assert actions_seen > 0


def _read_only(value) -> bool:
    """Whether a payload is as the bus must keep it: read-only mappings and tuples of scalars."""
    if isinstance(value, Mapping):
        return type(value) is MappingProxyType and all(map(_read_only, value.values()))
    if isinstance(value, (list, tuple)):
        return type(value) is tuple and all(map(_read_only, value))
    return value is None or type(value) in (str, int, float, bool)


@pytest.mark.parametrize(("module", "kwargs"), MODES, ids=IDS)
def test_every_message_the_env_publishes_is_read_only(module, kwargs):
    env = play_random(module.parallel_env(**kwargs), seed=2, choices=5)
    kinds = {message.kind for message in env.bus.log}
    assert {"rules", "match", "action"} <= kinds
    assert [m.id for m in env.bus.log if not _read_only(m.payload)] == []
    with pytest.raises(TypeError):
        next(m for m in env.bus.log if m.kind == "match").payload["roles"]["agent_0"] = "x"


def test_observation_counts_the_tones_published_about_each_agent():
    env = donation_v0.parallel_env(n_agents=3)
    observations, _ = env.reset(seed=0)
    space = env.observation_space("agent_2")
    assert space is env.observation_space("agent_2")
    assert (
        observations["agent_2"]["observation"].shape
        == space["observation"].shape
        == (1 + 2 + 3 + 15,)
    )
    env.step({"agent_0": 0})
    observations, *_ = env.step({"agent_1": 6})  # criticism about agent_0
    tones = observations["agent_2"]["observation"][6:].reshape(3, 5)
    assert tones[0].tolist() == [0, 0, 0, 0, 1] and tones[1:].sum() == 0


def test_observation_holds_own_resources_role_and_counterpart():
    env = donation_v0.parallel_env(n_agents=3)
    observations, _ = env.reset(seed=0)
    donor = observations["agent_0"]["observation"]
    assert donor[0] == 10.0 and donor[1:3].tolist() == [1, 0] and donor[3:6].tolist() == [0, 1, 0]
    recipient = observations["agent_1"]["observation"]
    assert recipient[1:3].tolist() == [0, 1] and recipient[3:6].tolist() == [1, 0, 0]
    assert observations["agent_2"]["observation"][1:6].sum() == 0
    assert observations["agent_0"]["action_mask"].tolist() == [1, 1, 0, 0, 0, 0, 0]
    assert observations["agent_2"]["action_mask"].tolist() == [1] + [0] * 6  # the no-op


def test_returned_observations_are_never_changed_by_later_steps_or_resets():
    env = donation_v0.parallel_env(n_agents=3)
    first, _ = env.reset(seed=0)
    kept = [first]
    # a donation (resources), a criticism (tone counts), then a new round (role, counterpart)
    for action in (1, 6, 1):
        observations, *_ = env.step(dict.fromkeys(env.agents, action))
        kept.append(observations)
    snapshots = [
        {a: (o["observation"].copy(), o["action_mask"].copy()) for a, o in obs.items()}
        for obs in kept
    ]
    while env.agents:
        env.step({a: 0 for a in env.agents})
    again, _ = env.reset(seed=0)
    env.step(dict.fromkeys(env.agents, 1))
    for observations, snapshot in zip(kept, snapshots, strict=True):
        for agent, (vector, mask) in snapshot.items():
            assert observations[agent]["observation"].tolist() == vector.tolist()
            assert observations[agent]["action_mask"].tolist() == mask.tolist()
    assert snapshots[1]["agent_0"][0][0] == 9.0 and snapshots[1]["agent_1"][0][0] == 15.0
    for agent, (vector, mask) in snapshots[0].items():  # a reset starts from the initial state
        assert again[agent]["observation"].tolist() == vector.tolist()
        assert again[agent]["action_mask"].tolist() == mask.tolist()


def test_a_tone_when_a_donation_is_due_falls_back_to_defect_and_is_flagged():
    env = donation_v0.parallel_env()
    env.reset(seed=0)
    _, rewards, _, _, infos = env.step({"agent_0": 4})
    assert infos["agent_0"]["invalid_action"]["fallback"] == "defect"
    assert rewards["agent_1"] == 0.0
    _, _, _, _, infos = env.step({"agent_1": {"action": "cooperate"}})
    assert infos["agent_1"]["invalid_action"]["fallback"] == "neutral"
    assert env.summary()["interactions"][0]["tone"] == "neutral"


def test_a_flag_reaches_only_the_flagged_agent_even_when_it_sits_out_next():
    env = donation_v0.parallel_env(n_agents=4, gossip=False)
    _, infos = env.reset(seed=0)
    while env.agents:
        (donor,) = [a for a in env.agents if infos[a]["decision"]]
        _, _, _, _, infos = env.step({donor: 4})  # a tone where a donation is due
        assert [a for a in infos if "invalid_action" in infos[a]] == [donor]
        assert infos[donor]["invalid_action"]["fallback"] == "defect"


def test_a_donor_without_enough_resources_may_not_cooperate():
    env = donation_v0.parallel_env(n_agents=2, initial_resources=0.5)
    observations, _ = env.reset(seed=0)
    assert observations["agent_0"]["action_mask"].tolist() == [1, 0, 0, 0, 0, 0, 0]
    _, rewards, _, _, infos = env.step({"agent_0": 1})
    assert infos["agent_0"]["invalid_action"]["fallback"] == "defect" and rewards["agent_0"] == 0.0


def test_actions_of_agents_without_a_decision_are_ignored():
    env = donation_v0.parallel_env()
    env.reset(seed=0)
    _, rewards, _, _, infos = env.step({a: "garbage" if a != "agent_0" else 1 for a in env.agents})
    assert rewards["agent_1"] == 5.0 and "invalid_action" not in infos["agent_3"]


def snapshot(env):
    game = env.unwrapped.game
    return (
        list(game.resources),
        game.round,
        game.phase_index,
        len(env.unwrapped.bus.log),
        dict(game.pending()),
    )


@pytest.mark.parametrize(
    ("action", "named"),
    [
        (7, "agent_0"),
        (-1, "agent_0"),
        (1.5, "agent_0"),
        ("cooperate", "agent_0"),
        ({"action": "donate"}, "agent_0"),
        ({"tone": 7, "message": "x"}, "tone"),
        ({"tone": "sarcastic"}, "tone"),
        ({"justification": "no action"}, "agent_0"),
    ],
)
def test_malformed_actions_raise_naming_the_problem_and_change_nothing(action, named):
    env = donation_v0.parallel_env()
    env.reset(seed=0)
    before = snapshot(env)
    with pytest.raises(ValueError, match=named):
        env.step({"agent_0": action})
    assert snapshot(env) == before


def test_a_missing_action_of_a_decider_is_an_error():
    env = donation_v0.parallel_env()
    env.reset(seed=0)
    with pytest.raises(ValueError, match="agent_0"):
        env.step({"agent_1": 1})


def test_a_tone_index_7_is_outside_the_space_in_the_aec_form_too():
    env = donation_v0.env()
    env.reset(seed=0)
    assert env.agent_selection == "agent_0"
    with pytest.raises(ValueError, match="Discrete"):
        env.step(7)
    env.step(1)
    assert env.agent_selection == "agent_1"


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"n_agents": 1}, "n_agents"),
        ({"cost": -1}, "cost"),
        ({"benefit": -5}, "benefit"),
        ({"initial_resources": -1}, "initial_resources"),
        ({"discount": 1.5}, "discount"),
        ({"gossip": "yes"}, "gossip"),
        ({"schedule": "swiss"}, "schedule"),
        ({"entrant": "lurks"}, "entrant"),
        ({"rounds": 37}, "rounds"),
        ({"entrant": "joins", "schedule": "align"}, "schedule"),
        ({"entrant_round": 3}, "entrant_round"),
    ],
)
def test_bad_constructor_arguments_raise_naming_the_parameter(kwargs, named):
    with pytest.raises(ValueError, match=named):
        donation_v0.parallel_env(**kwargs)


def test_an_unknown_game_option_is_rejected():
    with pytest.raises(ValueError, match="unknown key 'temperature'"):
        registry.make_env("donation_v0", temperature=0.0)
    with pytest.raises(TypeError):
        donation_v0.raw_env(temperature=0.0)


def test_trust_amounts_above_the_stock_or_negative_raise_and_change_nothing():
    env = trust_v0.parallel_env()
    env.reset(seed=0)
    before = snapshot(env)
    for amount in (5.5, -1, float("nan"), "lots"):
        with pytest.raises(ValueError, match="amount"):
            env.step({"agent_0": {"amount": amount}})
        assert snapshot(env) == before
    env.step({"agent_0": {"amount": 2.0}})
    with pytest.raises(ValueError, match="amount"):
        env.step({"agent_1": {"amount": 6.5}})  # more than 3 x 2
    _, rewards, *_ = env.step({"agent_1": {"amount": 6.0}})
    assert rewards == {**dict.fromkeys(env.agents, 0.0), "agent_0": 6.0, "agent_1": -6.0}
    interaction = env.unwrapped.game._open[0]
    assert interaction["payoffs"] == {"agent_0": 4.0, "agent_1": 0.0}


def test_trust_grid_actions_send_a_share_of_the_most_allowed():
    env = trust_v0.parallel_env(gossip=False)
    env.reset(seed=0)
    _, rewards, *_ = env.step({"agent_0": 4})  # 0.4 x 5
    assert rewards["agent_0"] == -2.0 and rewards["agent_1"] == 6.0
    _, rewards, *_ = env.step({"agent_1": 5})  # half of 6
    assert rewards["agent_0"] == 3.0 and rewards["agent_1"] == -3.0
    record = env.summary()["interactions"][0]
    assert record["investment"] == 2.0 and record["returned"] == 3.0
    assert record["payoffs"] == {"agent_0": 1.0, "agent_1": 3.0}


def test_trust_round_ends_with_both_gossiping_and_the_reference_second_pair():
    env = trust_v0.parallel_env()
    _, infos = env.reset(seed=0)
    env.step({"agent_0": 10})
    _, _, _, _, infos = env.step({"agent_1": 0})
    assert {a for a, i in infos.items() if i["decision"] == "gossip"} == {"agent_0", "agent_1"}
    _, _, _, _, infos = env.step({"agent_0": {"tone": "criticism"}, "agent_1": {"tone": 0}})
    assert infos["agent_2"]["decision"] == "invest" and infos["agent_0"]["role"] == "responder"
    record = env.summary()["interactions"][0]
    assert record["tones"] == {"agent_0": "criticism", "agent_1": "praising"}


def test_market_seller_and_buyer_move_together_and_only_the_buyer_gossips():
    env = market_v0.parallel_env()
    observations, infos = env.reset(seed=0)
    deciders = {a: i["decision"] for a, i in infos.items() if i["decision"]}
    assert sorted(deciders.values()) == ["buy", "sell"]
    seller = next(a for a, d in deciders.items() if d == "sell")
    buyer = next(a for a, d in deciders.items() if d == "buy")
    assert int(seller.split("_")[1]) < 6 <= int(buyer.split("_")[1])
    assert observations[buyer]["action_mask"].tolist() == [0, 0, 1, 1, 1, 0, 0, 0, 0, 0]
    _, rewards, _, _, infos = env.step({seller: {"action": "H"}, buyer: {"action": "c"}})
    assert rewards[seller] == 2.0 and rewards[buyer] == 3.0
    assert {a for a, i in infos.items() if i["decision"]} == {buyer}
    env.step({buyer: {"tone": "praising", "message": "great"}})
    assert env.summary()["interactions"][0]["tone"] == "praising"
    assert "resources" not in env.summary()


def test_market_order_is_fixed_by_the_seed():
    def order(seed):
        env = market_v0.parallel_env(gossip=False)
        play(env, lambda a, d, o: 1 if d == "sell" else 3, seed)
        return [(i["seller"], i["buyer"]) for i in env.summary()["interactions"]]

    assert order(5) == order(5) != order(6)
    assert len(order(5)) == 36


def test_a_joining_entrant_has_no_decision_before_its_round():
    env = donation_v0.parallel_env(entrant="joins", rounds=10, entrant_round=4, gossip=False)
    _, infos = env.reset(seed=0)
    while env.agents:
        if env.turn < 4:
            assert infos["agent_8"]["role"] is None
        _, _, _, _, infos = env.step({a: 1 for a in env.agents if infos[a]["decision"]})
    rounds = {
        i["round"]
        for i in env.summary()["interactions"]
        if "agent_8" in (i["donor"], i["recipient"])
    }
    assert rounds and min(rounds) >= 4
    assert env.summary()["entrant"] == "agent_8" and env.summary()["entrant_round"] == 4


def test_isolated_entrant_plays_only_the_reference_schedule():
    env = donation_v0.parallel_env(entrant="isolated")
    play(env, nice)
    pairs = [(i["donor"], i["recipient"]) for i in env.summary()["interactions"]]
    assert pairs[:2] == [("agent_8", "agent_0"), ("agent_1", "agent_8")] and len(pairs) == 8


def test_aec_form_only_selects_agents_with_a_decision_and_keeps_every_reward():
    env = prisoners_v0.env()
    env.reset(seed=0)
    returns = dict.fromkeys(env.possible_agents, 0.0)
    selected = []
    for agent in env.agent_iter():
        _, _, termination, truncation, info = env.last()
        if termination or truncation:
            env.step(None)
            continue
        selected.append((agent, info["decision"]))
        env.step(1 if info["decision"] == "play" else 2)
        for a, r in env.rewards.items():
            returns[a] += r
    assert selected[:4] == [
        ("agent_1", "play"),
        ("agent_4", "play"),
        ("agent_1", "gossip"),
        ("agent_4", "gossip"),
    ]
    assert returns == {f"agent_{i}": 16.0 for i in range(5)}
    assert env.unwrapped.summary()["game"] == "prisoners"


def test_same_seed_gives_the_same_bus_log():
    def log(seed):
        env = donation_v0.parallel_env(schedule="random", rounds=6)
        play(env, lambda a, d, o: 1 if d == "donate" else 3, seed)
        return [m.to_json() for m in env.bus.log]

    assert log(11) == log(11) != log(12)


def test_aec_form_flags_a_forbidden_action_at_the_step_it_is_given():
    env = prisoners_v0.env()
    env.reset(seed=0)
    assert env.agent_selection == "agent_1"
    env.step(3)  # a tone while a move is due: falls back to D
    assert env.infos["agent_1"]["invalid_action"]["fallback"] == "D"
    env.step(1)
    assert env.unwrapped.parallel.game._open[0]["actions"] == {"agent_1": "D", "agent_4": "C"}


def test_a_forbidden_donation_is_marked_invalid_in_the_record():
    env = donation_v0.parallel_env(n_agents=2)
    env.reset(seed=0)
    env.step({"agent_0": 5})
    env.step({"agent_1": 2})
    assert env.summary()["interactions"][0]["invalid"] is True
    assert env.summary()["interactions"][0]["action"] == "defect"


def test_every_reset_first_tells_everyone_the_rules_of_the_reference_donation_game():
    env = donation_v0.parallel_env()
    for seed in (0, 1):
        env.reset(seed=seed)
        first = env.bus.log[0]
        assert (first.kind, first.turn, first.channel, first.to) == ("rules", 1, "public", "*")
        assert env.bus.audience_of(first) == frozenset(env.possible_agents)
        assert [m.kind for m in env.bus.log] == ["rules", "match"]
        assert first.to_json()["payload"] == {
            "game": "donation",
            "n_agents": 9,
            "cost": 1.0,
            "benefit": 5.0,
            "initial_resources": 10.0,
            "discount": 0.99,
            "gossip": True,
            "schedule": "align",
            "rounds": 36,
            "pairs_per_round": None,
            "entrant": None,
            "entrant_mode": None,
            "entrant_round": None,
            "agents": [f"agent_{i}" for i in range(9)],
        }


@pytest.mark.parametrize(
    ("module", "kwargs", "expected"),
    [
        (donation_v0, {"entrant": "isolated"}, {"rounds": 8, "entrant": "agent_8"}),
        (donation_v0, {"rounds": 5, "gossip": False}, {"rounds": 5, "gossip": False}),
        (
            donation_v0,
            {"entrant": "joins", "n_agents": 5},
            {"rounds": 8, "entrant": "agent_4", "entrant_mode": "joins", "entrant_round": 5},
        ),
        (prisoners_v0, {"n_agents": 4, "benefit": 3.0}, {"rounds": 6, "benefit": 3.0}),
        (trust_v0, {"multiplier": 2.0}, {"rounds": 10, "multiplier": 2.0}),
        (
            market_v0,
            {"n_sellers": 2, "n_buyers": 3},
            {"rounds": 6, "n_sellers": 2, "n_buyers": 3, "n_agents": 5, "entrant": None},
        ),
    ],
)
def test_the_rules_message_states_the_real_number_of_rounds_and_the_entrant(
    module, kwargs, expected
):
    env = module.parallel_env(**kwargs)
    env.reset(seed=0)
    payload = env.bus.log[0].to_json()["payload"]
    assert {key: payload[key] for key in expected} == expected
    assert payload["rounds"] == len(env.unwrapped.game.schedule)
    assert "display_names" not in payload  # the envs have no display-name option


# -- conventions: the one AEC form, render, state, masks, signatures ----------------------------


def _play_rounds(env, actions_for, steps):
    observations, infos = env.reset(seed=1)
    for _ in range(steps):
        deciding = [a for a in env.agents if infos[a]["decision"]]
        acts = {a: actions_for(infos[a]["decision"]) for a in deciding}
        observations, _, _, _, infos = env.step(acts)
    return observations, infos


def test_render_ansi_shows_the_round_the_latest_gossip_and_the_published_tones():
    env = prisoners_v0.parallel_env(render_mode="ansi", n_agents=4)
    _play_rounds(
        env, lambda d: {"tone": "praising", "message": "fair play"} if d == "gossip" else 1, 5
    )
    assert env.render().splitlines() == [
        "prisoner's dilemma, round 3 of 6",
        "latest gossip:",
        '  agent_1 about agent_2: praising "fair play"',
        '  agent_2 about agent_1: praising "fair play"',
        "tones published so far:",
        "  agent_0: praising 1",
        "  agent_1: praising 1",
        "  agent_2: praising 1",
        "  agent_3: praising 1",
    ]


def test_render_human_prints_the_ansi_text(capsys):
    env = donation_v0.parallel_env(render_mode="human", n_agents=3)
    env.reset(seed=0)
    assert env.render() is None
    assert capsys.readouterr().out == "donation game, round 1 of 3\nno gossip yet\n"


def test_unknown_render_mode_names_the_allowed_ones():
    with pytest.raises(ValueError, match="render_mode: must be one of ansi, human or None"):
        donation_v0.parallel_env(render_mode="rgb_array")


def test_state_holds_progress_resources_seats_and_tones():
    env = donation_v0.parallel_env(n_agents=3)
    env.reset(seed=0)
    env.step({"agent_0": 1})  # agent_0 gives to agent_1: 9 and 15
    state = env.state()
    assert state.shape == env.state_space.shape == (1 + 3 * (1 + 2 + 3 + 5),)
    assert state[0] == 0.0  # still round 1 of 3 (the gossip is due)
    assert state[1:4].tolist() == [9.0, 15.0, 10.0]
    roles = state[4:10].reshape(3, 2)
    assert roles.tolist() == [[1, 0], [0, 1], [0, 0]]  # donor, recipient, sitting out
    counterparts = state[10:19].reshape(3, 3)
    assert counterparts.tolist() == [[0, 1, 0], [1, 0, 0], [0, 0, 0]]


@pytest.mark.parametrize("module", [donation_v0, prisoners_v0, trust_v0, market_v0])
def test_agents_without_a_decision_may_play_only_the_no_op(module):
    env = module.parallel_env()
    observations, infos = env.reset(seed=0)
    idle = [a for a in env.agents if not infos[a]["decision"]]
    assert idle
    for agent in idle:
        assert np.flatnonzero(observations[agent]["action_mask"]).tolist() == [0]
    for agent in env.agents:
        if infos[agent]["decision"]:
            assert observations[agent]["action_mask"].any()


@pytest.mark.parametrize("module", [donation_v0, prisoners_v0, trust_v0, market_v0])
def test_raw_env_is_the_aec_class_and_unwrapped_stays_in_its_form(module):
    from pettingzoo import AECEnv, ParallelEnv

    aec = module.env()
    assert isinstance(aec.unwrapped, module.raw_env)
    assert isinstance(aec.unwrapped, AECEnv)
    assert isinstance(module.parallel_env().unwrapped, ParallelEnv)
    aec.reset(seed=0)
    assert aec.unwrapped.bus.log[0].kind == "rules"


def test_factories_show_the_envs_arguments():
    import inspect

    for factory in (donation_v0.env, donation_v0.parallel_env, donation_v0.raw_env):
        parameters = inspect.signature(factory).parameters
        assert list(parameters)[:3] == ["n_agents", "cost", "benefit"]
        assert parameters["n_agents"].default == 9


def test_the_aec_form_keeps_pettingzoos_order_checks_without_a_wrapper():
    env = donation_v0.env(n_agents=3)
    calls = (lambda: env.step(0), lambda: env.observe("agent_0"), env.render, env.state)
    for call in (*calls, env.agent_iter):
        with pytest.raises(AssertionError, match="reset\\(\\) needs to be called before"):
            call()
    with pytest.raises(AttributeError):
        env.agent_selection  # noqa: B018 - nothing to select before reset
    env.reset(seed=0)
    with pytest.raises(AssertionError, match="need to call step\\(\\) or reset\\(\\)"):
        for _ in env.agent_iter():
            pass  # a loop that never steps
    env.reset(seed=0)
    for agent in env.agent_iter():
        env.step(None if env.terminations[agent] else 0)
    from pettingzoo.utils.env_logger import EnvLogger

    EnvLogger.flush()
    env.step(0)  # logged as PettingZoo's wrapper logs it, and ignored
    assert any("step() called after all agents are terminated" in m for m in EnvLogger.mqueue)


def test_an_entrant_joining_after_the_last_round_is_refused():
    with pytest.raises(ValueError, match="entrant_round: the entrant would join after the last"):
        donation_v0.parallel_env(entrant="joins", rounds=6, entrant_round=7)
    donation_v0.parallel_env(entrant="joins", rounds=6, entrant_round=6)  # joins for the last
