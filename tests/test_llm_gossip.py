"""The gossip games' LLM agent: rendered prompts (golden files), full episodes through litellm
against the local test server, the prompt options, and invalid answers.

Golden files live in ``tests/golden/gossip_*.txt``; after a deliberate prompt change, rewrite
them with ``SOCIALSIM_UPDATE_GOLDEN=1 pytest tests/test_llm_gossip.py`` and read the diff.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from socialsim.agents.llm.gossip import GossipLLMAgent

from socialsim import config, registry
from socialsim.bus import Message
from socialsim.cli import main
from socialsim.episode import EpisodeSpec
from socialsim.llm import ScriptedModel
from socialsim.runner import play_episode
from socialsim.testing.gossip_policies import REFLECTION, GossipPolicy, bad_first

GOLDEN = Path(__file__).parent / "golden"
KEY_ENV = "SOCIALSIM_GOSSIP_TEST_KEY"
DONATION4 = {"n_agents": 4}
MARKET4 = {"n_sellers": 2, "n_buyers": 2}


# -- helpers ------------------------------------------------------------------------------------


#: a tone-free log line whose message warns against the agent it is about
def scripted_episode(
    env_id: str, env_kwargs: dict[str, Any], policy, seed: int = 0, **options: Any
) -> tuple[Any, dict[str, GossipLLMAgent]]:
    """Play one episode with in-process scripted models (no HTTP): for prompt tests."""
    ids = registry.make_env(env_id, **env_kwargs).possible_agents
    agents = {}
    for agent_id in ids:
        agent = GossipLLMAgent("scripted", **options)
        agent.model = ScriptedModel(policy)
        agent.reset(agent_id, agent_id, seed)
        agents[agent_id] = agent
    spec = EpisodeSpec(env_id=env_id, seed=seed, seats={}, env_kwargs=env_kwargs)
    record = play_episode(spec, agents=agents)
    assert record.status == "done", record.error
    return record, agents


def chat_of(agent: GossipLLMAgent, round_number: int, index: int = 0) -> list[dict[str, str]]:
    """The ``index``-th chat the agent sent in round ``round_number``."""
    chats = [
        chat
        for chat in agent.model.received
        if chat[1]["content"].startswith(f"Round {round_number}.")
    ]
    return chats[index]


def assert_golden(name: str, text: str) -> None:
    path = GOLDEN / f"gossip_{name}.txt"
    if os.environ.get("SOCIALSIM_UPDATE_GOLDEN"):
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(text + "\n", encoding="utf-8")
    assert text + "\n" == path.read_text(encoding="utf-8")


def assert_readable(text: str) -> None:
    """No Python reprs and no floats written as '36.0' in a prompt."""
    for mark in ("{'", "['", "': ", "None", "True", "False"):
        assert mark not in text, mark
    assert not re.search(r"\b\d+\.0\b", text)


@pytest.fixture(scope="module", autouse=True)
def litellm_imported() -> None:
    """Import litellm once for the module (it takes seconds), outside any one test's time."""
    from socialsim.llm import load_litellm

    load_litellm()


@pytest.fixture
def http_model(llm_server, fresh_models, monkeypatch) -> dict[str, Any]:
    """A model table reaching the test server through litellm, with a dummy key."""
    monkeypatch.setenv(KEY_ENV, "dummy-key")
    return {
        "model": "openai/test",
        "api_base": llm_server.url,
        "api_key_env": KEY_ENV,
        "cache": False,
        "timeout": 10,
        "max_retries": 1,
        "backoff": 0.01,
    }


def http_episode(env_id: str, env_kwargs: dict, model: dict, seed: int = 0, **options: Any):
    ids = registry.make_env(env_id, **env_kwargs).possible_agents
    seats = {a: {"kind": "llm_gossip", "model": model, **options} for a in ids}
    spec = EpisodeSpec(env_id=env_id, seed=seed, seats=seats, env_kwargs=env_kwargs)
    return play_episode(spec)


def sent_prompts(server) -> list[str]:
    return [m["content"] for request in server.answered for m in request["messages"]]


# -- (1) golden prompts -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def donation_episode():
    return scripted_episode("donation_v0", DONATION4, GossipPolicy({"Emma"}))


def test_donation_system_prompt_matches_golden(donation_episode):
    _, agents = donation_episode
    assert_golden("donation_system", chat_of(agents["agent_1"], 5)[0]["content"])


def test_recipient_gossip_prompt_after_a_defection_matches_golden(donation_episode):
    _, agents = donation_episode
    prompt = chat_of(agents["agent_1"], 5)[1]["content"]
    assert "Emma defected: Emma paid nothing and you gained nothing." in prompt
    assert_golden("donation_gossip", prompt)


def test_donor_prompt_shows_the_log_as_lines_and_matches_golden(donation_episode):
    _, agents = donation_episode
    prompt = chat_of(agents["agent_2"], 6)[1]["content"]
    assert 'Round 5: Kate about Emma: "Emma exploited me. Beware of Emma."' in prompt
    assert_golden("donation_donate", prompt)


def test_silent_donor_prompt_has_no_log_and_matches_golden():
    _, agents = scripted_episode(
        "donation_v0", {**DONATION4, "gossip": False}, GossipPolicy({"Emma"})
    )
    system, prompt = (m["content"] for m in chat_of(agents["agent_2"], 6))
    assert "gossip log" not in prompt and "tones" not in system
    # Jack learns nothing of the matches he was not in (rounds 1, 3 and 5).
    assert re.findall(r"Round (\d+)", prompt) == ["6", "2", "4"]
    assert "nothing about it will be published" in prompt
    assert_golden("donation_donate_silent", prompt)


def test_prisoners_play_prompt_matches_golden():
    _, agents = scripted_episode("prisoners_v0", DONATION4, GossipPolicy({"Emma"}))
    system, prompt = (m["content"] for m in chat_of(agents["agent_0"], 5))
    assert_golden("prisoners_system", system)
    assert_golden("prisoners_play", prompt)


def test_trust_return_prompt_in_a_finite_game_without_knowledge_matches_golden():
    _, agents = scripted_episode(
        "trust_v0",
        DONATION4,
        GossipPolicy({"Emma"}),
        horizon="finite",
        equilibrium_knowledge=False,
    )
    system, prompt = (m["content"] for m in chat_of(agents["agent_2"], 4))
    assert "Kate invested 10, so you received 30." in prompt
    assert_golden("trust_system", system)
    assert_golden("trust_return", prompt)


def test_market_buyer_prompts_match_golden():
    _, agents = scripted_episode("market_v0", MARKET4, GossipPolicy({"Kate"}))
    buy, gossip = chat_of(agents["agent_3"], 4, 0), chat_of(agents["agent_3"], 4, 1)
    assert_golden("market_system", buy[0]["content"])
    assert_golden("market_buy", buy[1]["content"])
    assert_golden("market_gossip", gossip[1]["content"])


def test_donation_prompts_quote_gossip_without_its_tone_unless_show_tones():
    # the reference's donation, PD and trust prompts show a gossip's message, not its tone
    prompts = {}
    for show in (False, True):
        _, agents = scripted_episode(
            "donation_v0", DONATION4, GossipPolicy({"Emma"}), show_tones=show
        )
        prompts[show] = chat_of(agents["agent_2"], 6)[1]["content"]
    message = '"Emma exploited me. Beware of Emma."'
    assert f"Round 5: Kate about Emma: {message}" in prompts[False]
    assert 'John\'s public message about me: "Jack treated me well."' in prompts[False]
    assert not {"praising", "criticism"} & set(re.findall(r"\w+", prompts[False]))
    assert f"Round 5: Kate about Emma (criticism): {message}" in prompts[True]
    assert 'John\'s public message about me (praising): "Jack treated me well."' in prompts[True]
    assert prompts[True].replace(" (criticism)", "").replace(" (praising)", "") == prompts[False]


def test_market_prompts_show_the_tone_beside_the_message_as_the_reference_does():
    _, agents = scripted_episode("market_v0", MARKET4, GossipPolicy({"Kate"}))
    prompt = chat_of(agents["agent_3"], 4, 0)[1]["content"]
    assert 'Round 1: Jack about Kate (criticism): "Kate exploited me. Beware of Kate."' in prompt


@pytest.mark.parametrize(
    ("env_id", "kwargs", "defector"),
    [
        ("donation_v0", DONATION4, "Emma"),
        ("prisoners_v0", DONATION4, "Emma"),
        ("trust_v0", DONATION4, "Emma"),
        ("market_v0", MARKET4, "Kate"),
    ],
)
def test_every_prompt_of_every_game_is_readable_text(env_id, kwargs, defector):
    _, agents = scripted_episode(env_id, kwargs, GossipPolicy({defector}), horizon="finite")
    chats = [chat for agent in agents.values() for chat in agent.model.received]
    assert chats
    for chat in chats:
        for message in chat:
            assert_readable(message["content"])


# -- (2) full episodes through litellm against the HTTP server ----------------------------------


def test_gossip_on_donation_ostracises_the_defector_exactly(llm_server, http_model):
    llm_server.policy = GossipPolicy({"Emma"})
    record = http_episode("donation_v0", DONATION4, http_model)
    assert record.status == "done", record.error
    interactions = record.summary["interactions"]
    assert [(i["donor"], i["recipient"], i["action"], i["tone"]) for i in interactions] == [
        ("agent_0", "agent_1", "cooperate", "praising"),
        ("agent_2", "agent_0", "cooperate", "praising"),
        ("agent_0", "agent_3", "cooperate", "praising"),
        ("agent_1", "agent_2", "cooperate", "praising"),
        ("agent_3", "agent_1", "defect", "criticism"),
        ("agent_2", "agent_3", "defect", "criticism"),  # Jack read Kate's criticism of Emma
    ]
    assert record.summary["resources"] == {
        "agent_0": 13.0,
        "agent_1": 14.0,
        "agent_2": 14.0,
        "agent_3": 15.0,
    }
    assert interactions[4]["message"] == "Emma exploited me. Beware of Emma."
    calls = {a: c["llm_calls"] for a, c in record.counters.items()}
    assert calls == {"agent_0": 3, "agent_1": 3, "agent_2": 3, "agent_3": 3}
    assert all(c["invalid_answers"] == c["fallbacks"] == 0 for c in record.counters.values())
    assert llm_server.requests == 12
    assert all(request["model"] == "test" for request in llm_server.answered)
    for text in sent_prompts(llm_server):
        assert_readable(text)
    logged = [e for events in record.events.values() for e in events]
    assert len(logged) == 12 and all(e["type"] == "llm_call" and not e["cached"] for e in logged)
    assert {e["decision"] for e in logged} == {"donate", "gossip"}


def test_without_gossip_the_defector_is_never_found_out(llm_server, http_model):
    llm_server.policy = GossipPolicy({"Emma"})
    record = http_episode("donation_v0", {**DONATION4, "gossip": False}, http_model)
    assert record.status == "done", record.error
    actions = [i["action"] for i in record.summary["interactions"]]
    assert actions == ["cooperate"] * 4 + ["defect", "cooperate"]
    assert record.summary["resources"] == {
        "agent_0": 13.0,
        "agent_1": 14.0,
        "agent_2": 13.0,
        "agent_3": 20.0,
    }
    assert llm_server.requests == 6  # donors only: nobody gossips
    assert all("gossip log" not in text for text in sent_prompts(llm_server))


def test_prisoners_episode_punishes_the_defector_and_its_victims_gossip(llm_server, http_model):
    llm_server.policy = GossipPolicy({"Emma"})
    record = http_episode("prisoners_v0", DONATION4, http_model)
    assert record.status == "done", record.error
    moves = [tuple(i["actions"][p] for p in i["players"]) for i in record.summary["interactions"]]
    # Emma's criticism of Kate (for a justified D) makes John defect on Kate in round 5.
    assert moves == [("C", "D"), ("C", "C"), ("C", "C"), ("D", "D"), ("D", "C"), ("D", "D")]
    assert record.returns == {"agent_0": 8.0, "agent_1": 3.0, "agent_2": 8.0, "agent_3": 5.0}
    assert llm_server.requests == 24


def test_trust_episode_sends_exact_amounts(llm_server, http_model):
    llm_server.policy = GossipPolicy({"Emma"})
    record = http_episode("trust_v0", DONATION4, http_model)
    assert record.status == "done", record.error
    flows = [(i["investment"], i["returned"]) for i in record.summary["interactions"]]
    assert flows == [(5.0, 10.0), (5.0, 10.0), (15.0, 0.0), (10.0, 20.0), (0.0, 0.0), (0.0, 0.0)]
    assert record.summary["resources"] == {
        "agent_0": 0.0,
        "agent_1": 20.0,
        "agent_2": 20.0,
        "agent_3": 50.0,
    }
    actions = [a for step in record.steps for a in step["actions"].values() if "amount" in a]
    assert all(isinstance(a["amount"], float) and a["justification"] for a in actions)


def test_market_buyers_shun_the_low_quality_seller_after_a_review(llm_server, http_model):
    llm_server.policy = GossipPolicy({"Kate"})
    record = http_episode("market_v0", MARKET4, http_model)
    assert record.status == "done", record.error
    trades = [
        (i["seller"], i["buyer"], i["quality"], i["choice"], i["tone"])
        for i in record.summary["interactions"]
    ]
    assert trades == [
        ("agent_1", "agent_2", "L", "c", "criticism"),
        ("agent_0", "agent_2", "H", "c", "praising"),
        ("agent_0", "agent_3", "H", "c", "praising"),
        ("agent_1", "agent_3", "L", "s", "criticism"),
    ]
    assert record.summary["payoffs"] == {
        "agent_0": 4.0,
        "agent_1": 4.0,
        "agent_2": 3.0,
        "agent_3": 4.0,
    }


def test_donors_of_one_random_matching_round_ask_the_model_at_once(llm_server, http_model):
    llm_server.policy = GossipPolicy()
    llm_server.latency_s = 0.3  # each reply waits, so the three donors' requests overlap
    kwargs = {"n_agents": 6, "schedule": "random", "rounds": 1}
    record = http_episode("donation_v0", kwargs, http_model, horizon="finite")
    assert record.status == "done", record.error
    assert [i["action"] for i in record.summary["interactions"]] == ["cooperate"] * 3
    assert llm_server.requests == 6 and llm_server.max_in_flight >= 2


def test_structured_output_sends_the_answer_schema(llm_server, http_model):
    llm_server.policy = GossipPolicy({"Emma"})
    record = http_episode("donation_v0", {"n_agents": 2}, http_model, structured_output=True)
    assert record.status == "done", record.error
    donor, recipient = (r["response_format"] for r in llm_server.answered)
    assert donor["type"] == "json_schema"
    schema = donor["json_schema"]["schema"]
    assert schema["required"] == ["justification", "donor_action"]
    assert schema["properties"]["donor_action"]["enum"] == ["cooperate", "defect"]
    tones = recipient["json_schema"]["schema"]["properties"]["tone"]["enum"]
    assert tones == ["praising", "neutral", "mocking", "complaint", "criticism"]


def test_reflection_adds_one_summarising_call_per_decision(llm_server, http_model):
    llm_server.policy = GossipPolicy({"Emma"})
    record = http_episode("donation_v0", DONATION4, http_model, reflection=True)
    assert record.status == "done", record.error
    assert [i["action"] for i in record.summary["interactions"]][-1] == "defect"
    assert llm_server.requests == 24
    assert {a: c["llm_calls"] for a, c in record.counters.items()} == dict.fromkeys(
        record.counters, 6
    )
    decisions = [e["decision"] for e in record.events["agent_0"]]
    assert decisions == ["reflect", "donate", "reflect", "gossip", "reflect", "donate"]
    prompts = [r["messages"][1]["content"] for r in llm_server.answered]
    donor_prompts = [p for p in prompts if '"donor_action"' in p]
    assert all(f"{REFLECTION} (" in p and "Your memory of" not in p for p in donor_prompts)


# -- (3) prompt options ---------------------------------------------------------------------------


def first_donor_prompt(env_kwargs: dict[str, Any] | None = None, **options: Any) -> tuple[str, str]:
    """(system, user) of agent_0's first decision in the N=9 reference game (one round of it,
    unless ``env_kwargs`` says otherwise)."""
    _, agents = scripted_episode(
        "donation_v0",
        {"n_agents": 9, "rounds": 1, **(env_kwargs or {})},
        GossipPolicy(),
        **options,
    )
    system, user = (m["content"] for m in agents["agent_0"].model.received[0])
    return system, user


def test_equilibrium_knowledge_block_is_on_by_default_and_switchable():
    _, on = first_donor_prompt()
    _, off = first_donor_prompt(equilibrium_knowledge=False)
    assert "one-shot deviation principle" in on and "Apply the common knowledge" in on
    assert "subgame-perfect" not in off and "common knowledge" not in off
    assert off.count("\n- ") == on.count("\n- ") - 1  # one guideline fewer


def test_finite_horizon_states_the_episodes_real_number_of_rounds_and_backward_induction():
    # the env plays 3 of the reference's 36 rounds: the rules message says 3, and so do prompts
    system, user = first_donor_prompt({"rounds": 3}, horizon="finite")
    assert "The game lasts exactly 3 rounds in all" in system
    assert "with a finite horizon" in system
    assert "This is round 1 of 3, so 2 rounds follow this one." in user
    assert "Use backward induction" in user and "one-shot" not in user
    assert "36" not in system + user and "3.0" not in system + user


def test_infinite_horizon_wording_names_no_number_of_rounds():
    system, user = first_donor_prompt()
    assert "rounds go on indefinitely" in system and "with an infinite horizon" in system
    assert "36" not in system + user
    assert "no set end" in user


def test_display_names_default_to_the_reference_names_and_can_be_switched_off():
    system, user = first_donor_prompt()
    assert system.startswith("You are John, one of 9 agents")
    assert "You are the donor and Kate is your recipient." in user
    system, user = first_donor_prompt(display_names=False)
    assert system.startswith("You are agent_0, one of 9 agents")
    assert "agent_1 is your recipient" in user
    system, user = first_donor_prompt(display_names={"agent_1": "Max"})
    assert system.startswith("You are agent_0,") and "Max is your recipient" in user


def test_the_entrant_the_rules_message_names_goes_by_the_reference_name_max():
    _, agents = scripted_episode(
        "donation_v0", {"entrant": "isolated", "rounds": 1}, GossipPolicy()
    )
    system, user = (m["content"] for m in agents["agent_0"].model.received[0])
    assert system.startswith("You are John, one of 9 agents")
    assert user.startswith("Round 1. You were the recipient and Max was your donor.")
    system, _ = (m["content"] for m in agents["agent_8"].model.received[0])
    assert system.startswith("You are Max, one of 9 agents")


def test_game_parameters_of_the_env_appear_as_given():
    system, user = first_donor_prompt({"cost": 2, "benefit": 7.5, "discount": 0.9})
    assert "paying 2 so that the recipient gains 7.5" in system
    assert "cooperate (-2, +7.5)" in system and "discounted by a factor of 0.9;" in system
    assert '"cooperate": you pay 2 and Kate gains 7.5;' in user


def test_one_seat_table_follows_the_envs_gossip_setting_from_the_rules_message():
    prompts = {}
    for gossip in (True, False):
        _, agents = scripted_episode(
            "donation_v0", {**DONATION4, "gossip": gossip}, GossipPolicy({"Emma"})
        )
        assert agents["agent_2"].gossip is gossip
        prompts[gossip] = [m["content"] for m in chat_of(agents["agent_2"], 6)]
    assert "gossip log" in prompts[True][1] and "gossip log" not in prompts[False][1]
    assert "tones" in prompts[True][0] and "tones" not in prompts[False][0]


def test_a_decision_without_a_rules_message_in_the_inbox_is_an_error():
    agent = GossipLLMAgent("scripted")
    agent.model = ScriptedModel(GossipPolicy())
    agent.reset("agent_0", "agent_0", 0)
    info = {"decision": "donate", "round": 1, "role": "donor", "counterpart": "agent_1"}
    with pytest.raises(ValueError, match="agent_0: no 'rules' message reached this agent"):
        agent.act({}, [], info)


def test_a_rules_message_without_the_settings_a_prompt_states_is_an_error_naming_them():
    agent = GossipLLMAgent("scripted")
    agent.reset("agent_0", "agent_0", 0)
    rules = Message(0, 1, "env", "*", "public", "rules", {"game": "trust", "gossip": True})
    info = {"decision": "invest", "round": 1, "role": "investor", "counterpart": "agent_1"}
    message = (
        "rules message: the trust game's rules lack discount, n_agents, rounds, multiplier, "
        "initial_resources"
    )
    with pytest.raises(ValueError, match=re.escape(message)):
        agent.act({}, [rules], info)


@pytest.mark.parametrize(
    "option",
    [
        "gossip",
        "cost",
        "benefit",
        "multiplier",
        "discount",
        "initial_resources",
        "n_agents",
        "n_sellers",
        "rounds",
    ],
)
def test_the_games_settings_are_no_seat_options(option):
    with pytest.raises(ValueError, match=f"unknown key '{option}'"):
        registry.check_agent_spec("seats.agent_0", {"kind": "llm_gossip", "model": "x", option: 1})


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("horizon", "forever", "horizon: must be one of infinite, finite, got 'forever'"),
        ("equilibrium_knowledge", "yes", "equilibrium_knowledge: must be true or false"),
        ("show_tones", "yes", "show_tones: must be true or false, got 'yes'"),
        ("max_words", 0, "max_words: must be an integer >= 1, got 0"),
        ("max_attempts", 0, "max_attempts: must be an integer >= 1, got 0"),
        ("display_names", 3, "display_names: must be true, false or a table of id -> name"),
    ],
)
def test_bad_options_are_rejected_by_name(option, value, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        GossipLLMAgent("scripted", **{option: value})


# -- (4) invalid answers ------------------------------------------------------------------------


def valid(**fields: Any) -> str:
    return json.dumps({"justification": "ok", **fields})


def one_round(llm_server, http_model, policy, env_id="donation_v0", **options):
    """Two agents, one round (donor agent_0, recipient agent_1)."""
    llm_server.policy = policy
    return http_episode(env_id, {"n_agents": 2}, http_model, **options)


def invalid_events(record, agent_id: str) -> list[str]:
    return [e["invalid"] for e in record.events[agent_id] if "invalid" in e]


def test_bad_json_is_re_prompted_with_the_game_masters_reason(llm_server, http_model):
    policy = bad_first(GossipPolicy(), ["I think I will cooperate."], '"donor_action"')
    record = one_round(llm_server, http_model, policy)
    assert record.summary["interactions"][0]["action"] == "cooperate"
    counters = record.counters["agent_0"]
    assert (counters["llm_calls"], counters["invalid_answers"], counters["fallbacks"]) == (2, 1, 0)
    assert invalid_events(record, "agent_0") == ["the reply holds no complete JSON object {...}"]
    second = llm_server.answered[1]["messages"]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "user"]
    assert second[2]["content"] == "I think I will cooperate."
    assert second[3]["content"].startswith(
        "[GAME MASTER] Your last reply was not a valid answer: the reply holds no complete "
        'JSON object {...}. Reply again with one JSON object and nothing else, in this form: {"'
    )


def test_cooperate_with_a_capital_and_a_bang_ends_in_the_logged_defect_fallback(
    llm_server, http_model
):
    policy = bad_first(GossipPolicy(), [valid(donor_action="Cooperate!")] * 3, '"donor_action"')
    record = one_round(llm_server, http_model, policy)
    interaction = record.summary["interactions"][0]
    assert interaction["action"] == "defect" and interaction["invalid"] is False
    counters = record.counters["agent_0"]
    assert (counters["llm_calls"], counters["invalid_answers"], counters["fallbacks"]) == (3, 3, 1)
    assert (
        invalid_events(record, "agent_0")
        == ['the field "donor_action" must be "cooperate" or "defect", not "Cooperate!"'] * 3
    )
    assert record.events["agent_0"][-1] == {
        "type": "fallback",
        "decision": "donate",
        "value": ["defect", ""],
    }
    assert record.steps[0]["actions"]["agent_0"] == {"action": "defect", "justification": ""}


def test_spacing_and_case_of_a_choice_are_forgiven(llm_server, http_model):
    policy = bad_first(GossipPolicy(), [valid(donor_action=" Cooperate ")], '"donor_action"')
    record = one_round(llm_server, http_model, policy)
    assert record.summary["interactions"][0]["action"] == "cooperate"
    assert record.counters["agent_0"]["invalid_answers"] == 0


def test_unknown_tone_and_overlong_gossip_are_re_prompted(llm_server, http_model):
    long_message = " ".join(["blah"] * 200)
    bad = [valid(tone="angry", gossip="Bad."), valid(tone="criticism", gossip=long_message)]
    record = one_round(llm_server, http_model, bad_first(GossipPolicy(), bad, '"tone"'))
    interaction = record.summary["interactions"][0]
    assert (interaction["tone"], interaction["message"]) == ("praising", "John treated me well.")
    counters = record.counters["agent_1"]
    assert (counters["llm_calls"], counters["invalid_answers"], counters["fallbacks"]) == (3, 2, 0)
    assert invalid_events(record, "agent_1") == [
        'the field "tone" must be one of "praising", "neutral", "mocking", "complaint", '
        '"criticism", not "angry"',
        'the field "gossip" has 200 words; it must have fewer than 150',
    ]
    third = llm_server.answered[3]["messages"]  # the donor's call, then three of the recipient
    assert len(third) == 6 and "has 200 words" in third[-1]["content"]


def test_a_149_word_message_is_accepted(llm_server, http_model):
    message = " ".join(["fine"] * 149)
    policy = bad_first(GossipPolicy(), [valid(tone="neutral", gossip=message)], '"tone"')
    record = one_round(llm_server, http_model, policy)
    assert record.summary["interactions"][0]["message"] == message
    assert record.counters["agent_1"]["invalid_answers"] == 0


def test_gossip_that_never_parses_falls_back_to_a_neutral_empty_message(llm_server, http_model):
    bad = ['{"justification": "x", "tone": "praising"}', "{{{", "praising!"]
    record = one_round(llm_server, http_model, bad_first(GossipPolicy(), bad, '"tone"'))
    interaction = record.summary["interactions"][0]
    assert (interaction["tone"], interaction["message"]) == ("neutral", "")
    counters = record.counters["agent_1"]
    assert (counters["invalid_answers"], counters["fallbacks"]) == (3, 1)
    assert invalid_events(record, "agent_1")[0] == 'the answer lacks the field "gossip"'
    assert record.events["agent_1"][-1]["type"] == "fallback"


def test_an_investment_beyond_the_stock_is_re_prompted(llm_server, http_model):
    policy = bad_first(GossipPolicy(), [valid(investor_action=99)], '"investor_action"')
    record = one_round(llm_server, http_model, policy, env_id="trust_v0")
    assert record.summary["interactions"][0]["investment"] == 5.0
    assert invalid_events(record, "agent_0") == [
        'the field "investor_action" must be a number between 0 and 5, not 99'
    ]


# -- bundled experiment files -----------------------------------------------------------------

LLM_FILES = [
    "llm_align_donation",
    "llm_align_entrant",
    "llm_align_prisoners",
    "llm_align_trust",
    "llm_align_market",
]
#: what the env's rules message tells; a seat table repeating any of it would be refused
GAME_SETTINGS = {
    "gossip",
    "cost",
    "benefit",
    "multiplier",
    "discount",
    "initial_resources",
    "n_agents",
    "n_sellers",
    "rounds",
}


@pytest.mark.parametrize("name", LLM_FILES)
def test_bundled_llm_files_leave_the_rules_to_the_env(name):
    experiment = config.load(name)
    assert experiment.max_concurrent == 16
    specs = experiment.specs()
    assert {s.cell["seats.*.equilibrium_knowledge"] for s in specs} == {True, False}
    for spec in specs:
        llm_seats = [s for s in spec.seats.values() if s["kind"] == "llm_gossip"]
        assert llm_seats
        for seat in llm_seats:
            assert not GAME_SETTINGS & set(seat)


def test_the_donation_file_crosses_gossip_with_equilibrium_knowledge_in_one_grid():
    specs = config.load("llm_align_donation").specs()
    cells = {(s.cell["env.kwargs.gossip"], s.cell["seats.*.equilibrium_knowledge"]) for s in specs}
    assert cells == {(True, True), (True, False), (False, True), (False, False)}
    assert len(specs) == 4 * 3
    for spec in specs:
        assert spec.env_kwargs["gossip"] == spec.cell["env.kwargs.gossip"]
        assert {s["equilibrium_knowledge"] for s in spec.seats.values()} == {
            spec.cell["seats.*.equilibrium_knowledge"]
        }


def test_one_set_option_chooses_the_model_of_every_llm_seat():
    experiment = config.load(
        "llm_align_entrant", ["seats.*.model.model=openai/gpt-4o-mini", "episodes=1"]
    )
    for spec in experiment.specs():
        models = {a: s.get("model", {}).get("model") for a, s in spec.seats.items()}
        assert models == {**{f"agent_{i}": "openai/gpt-4o-mini" for i in range(8)}, "agent_8": None}


def test_entrant_file_played_through_the_cli_ostracises_max(llm_server, fresh_models, tmp_path):
    llm_server.policy = GossipPolicy()
    out = tmp_path / "entrant"
    code = main(
        [
            "run",
            "llm_align_entrant",
            "--out",
            str(out),
            "--quiet",
            "--set",
            "episodes=1",
            "--set",
            "grid.seats.*.equilibrium_knowledge=[true]",
            "--set",
            "seats.*.model.model=openai/test",
            "--set",
            f"seats.*.model.api_base={llm_server.url}",
            "--set",
            "seats.*.model.cache=false",
        ]
    )
    assert code == 0
    (line,) = (out / "episodes.jsonl").read_text().splitlines()
    record = json.loads(line)
    moves = [(i["donor"], i["action"], i["tone"]) for i in record["summary"]["interactions"]]
    # Max defects on John, Jack, Luke and Alice, who say so; Kate, Emma, Mary and Bob read it.
    assert moves == [
        ("agent_8", "defect", "criticism"),
        ("agent_1", "defect", "neutral"),
        ("agent_8", "defect", "criticism"),
        ("agent_3", "defect", "neutral"),
        ("agent_8", "defect", "criticism"),
        ("agent_5", "defect", "neutral"),
        ("agent_8", "defect", "criticism"),
        ("agent_7", "defect", "neutral"),
    ]
    assert set(record["summary"]["resources"].values()) == {10.0}
    kate = llm_server.answered[1]["messages"][1]["content"]
    assert kate.startswith("Round 2. You are the donor and Max is your recipient.")
    assert 'Round 1: John about Max: "Max exploited me. Beware of Max."' in kate
    last = llm_server.answered[-1]["messages"][1]["content"]
    assert 'Round 2: Max about Kate: "No comment"' in last


def test_rules_wording_follows_the_envs_schedule():
    reference, _ = first_donor_prompt()
    assert "Two agents never meet twice, and each agent's role alternates" in reference
    random_matching, _ = first_donor_prompt({"schedule": "random", "rounds": 1})
    assert (
        "Pairs and roles are drawn at random every round, so two agents may meet again"
        in random_matching
    )
    assert "never meet twice" not in random_matching
