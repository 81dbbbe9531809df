"""The Decrypto PettingZoo env (decrypto_v0): API, flow, information hiding, actions, seeds."""

from __future__ import annotations

import copy
import re

import numpy as np
import pytest
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, seed_test
from socialsim.agents.scripted.decrypto import RandomEncoder, RandomGuesser
from socialsim.envs import decrypto_v0
from socialsim.envs.decrypto.env import TEAMS
from socialsim.envs.decrypto.protocol import CODES, FALLBACK_HINT, Rules

from socialsim.agent import Agent
from socialsim.bus import audience_of
from socialsim.episode import EpisodeSpec
from socialsim.runner import play_episode
from socialsim.seeding import agent_seed

RANDOM_SEATS = {
    "encoder": {"kind": "decrypto_random_encoder"},
    "decoder": {"kind": "decrypto_random_guesser"},
    "interceptor": {"kind": "decrypto_random_guesser"},
}
SEATS = ("encoder", "decoder", "interceptor")


def play(seed: int, seats=RANDOM_SEATS, agents=None, **kwargs):
    record = play_episode(
        EpisodeSpec(env_id="decrypto_v0", seed=seed, seats=seats, **kwargs), agents
    )
    assert record.status == "done", record.error
    return record


def strings(value):
    """Every string inside a JSON-like value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from strings(item)


class KeywordLeakingEncoder(Agent):
    """Tries to give the keywords themselves as hints (the env must never pass them on)."""

    def act(self, observation, messages, info):
        keywords = info["keywords"]
        return {"hints": [keywords[d - 1].upper() for d in info["code"]]}


# -- PettingZoo API -------------------------------------------------------------------------------


def test_parallel_api_test_passes():
    parallel_api_test(decrypto_v0.parallel_env(), num_cycles=100)


def test_aec_api_test_passes():
    api_test(decrypto_v0.env(), num_cycles=100)


def test_seed_tests_pass():
    seed_test(decrypto_v0.env, num_cycles=50)
    parallel_seed_test(decrypto_v0.parallel_env, num_cycles=50)


def test_spaces_are_discrete_24_for_guessers_and_one_hint_of_the_vocabulary_for_the_encoder():
    env = decrypto_v0.parallel_env()
    vocabulary = len(env.hint_vocabulary)
    assert env.action_space("decoder").n == 24 and env.action_space("interceptor").n == 24
    assert env.action_space("encoder").n == vocabulary
    assert env.observation_space("encoder")["action_mask"].shape == (vocabulary,)
    assert env.observation_space("decoder")["observation"].shape == (14 + 9 * 8,)
    assert env.observation_space("encoder") is env.observation_space("encoder")


def test_hint_vocabulary_kwarg_sets_the_encoder_space(tmp_path):
    path = tmp_path / "hints.txt"
    path.write_text("alpha\nbeta\ngamma\ndelta\n")
    env = decrypto_v0.parallel_env(hint_vocabulary=str(path))
    assert env.action_space("encoder").n == 4
    env.reset(seed=0)
    env.step({"encoder": np.array([3, 0, 1])})
    assert env.hints == ["delta", "alpha", "beta"]


def test_encoder_gives_one_hint_a_step_and_nothing_shows_until_the_third(tmp_path):
    path = tmp_path / "hints.txt"
    path.write_text("alpha\nbeta\ngamma\ndelta\n")
    env = decrypto_v0.parallel_env(hint_vocabulary=str(path))
    env.reset(seed=0)
    posted = len(env.bus.log)
    observations, _, _, _, infos = env.step({"encoder": 3})
    observations, _, _, _, infos = env.step({"encoder": np.int64(0)})
    assert infos["encoder"]["decision"] == "hints" and infos["decoder"]["decision"] is None
    assert len(env.bus.log) == posted and env.hints is None
    assert observations["encoder"]["observation"][11:14].tolist() == [3, 0, 5]  # 5: none yet
    assert observations["decoder"]["observation"][11:14].tolist() == [5, 5, 5]
    _, _, _, _, infos = env.step({"encoder": 1})
    assert env.hints == ["delta", "alpha", "beta"] and infos["decoder"]["decision"] == "guess"
    assert env.bus.log[-1].kind == "hints"


def test_a_full_hint_triple_after_the_first_hint_step_is_a_value_error():
    env = decrypto_v0.parallel_env()
    env.reset(seed=0)
    env.step({"encoder": 5})
    with pytest.raises(ValueError, match=r"encoder: expected hint 2 of 3, an element of Discrete"):
        env.step({"encoder": {"hints": ["red", "blue", "green"]}})


def test_wordlist_kwarg_draws_keywords_from_another_list(tmp_path):
    path = tmp_path / "words.txt"
    words = [f"thing{i}" for i in range(680)]
    path.write_text("\n".join(words) + "\n")
    env = decrypto_v0.parallel_env(wordlist=str(path))
    env.reset(seed=0)
    assert all(k in words for k in env.game.keywords)
    assert env.game.code == (3, 1, 4)


def test_unknown_constructor_keyword_is_rejected_by_the_registry():
    from socialsim.registry import make_env

    with pytest.raises(ValueError, match="unknown key 'max_turn'"):
        make_env("decrypto_v0", max_turn=3)


# -- flow and infos ---------------------------------------------------------------------------------


def test_turn_flow_is_encoder_then_both_guessers_then_reveal():
    env = decrypto_v0.parallel_env()
    _, infos = env.reset(seed=0)
    assert env.turn == 1
    assert [infos[a]["decision"] for a in SEATS] == ["hints", None, None]
    _, _, _, _, infos = env.step({"encoder": {"hints": ["red", "blue", "green"]}})
    assert [infos[a]["decision"] for a in SEATS] == [None, "guess", "guess"]
    assert env.turn == 1
    _, rewards, terminations, _, infos = env.step(
        {"decoder": CODES.index((3, 1, 4)), "interceptor": 0}
    )
    assert [infos[a]["decision"] for a in SEATS] == ["hints", None, None]
    assert env.turn == 2 and rewards == {"encoder": 0, "decoder": 0, "interceptor": 0}
    assert not any(terminations.values())
    assert infos["interceptor"]["last_turn"] == {  # read-only, of tuples
        "turn": 1,
        "code": (3, 1, 4),
        "hints": ("red", "blue", "green"),
        "decoder_guess": (3, 1, 4),
        "interceptor_guess": (1, 2, 3),
        "miscommunication": False,
        "interception": False,
    }
    assert infos["decoder"]["hint_history"] == (("blue",), (), ("red",), ("green",))
    assert infos["decoder"]["code_history"] == ((3, 1, 4),)


def test_infos_show_keywords_to_the_team_and_the_code_to_the_encoder_only():
    env = decrypto_v0.parallel_env()
    _, infos = env.reset(seed=0)
    keywords = env.game.keywords
    assert infos["encoder"]["keywords"] == keywords and infos["encoder"]["code"] == (3, 1, 4)
    assert infos["decoder"]["keywords"] == keywords and "code" not in infos["decoder"]
    assert "keywords" not in infos["interceptor"] and "code" not in infos["interceptor"]
    _, _, _, _, infos = env.step({"encoder": {"hints": ["red", "blue", "green"]}})
    assert "code" not in infos["encoder"] and "code" not in infos["decoder"]
    assert infos["decoder"]["hints"] == infos["interceptor"]["hints"] == ("red", "blue", "green")
    assert set(infos["interceptor"]) == {
        "decision", "turn", "miscommunications", "interceptions", "hint_history", "code_history", "last_turn", "hints",
    }  # fmt: skip


def test_observation_hides_keywords_and_code_from_the_interceptor():
    env = decrypto_v0.parallel_env()
    observations, _ = env.reset(seed=0)
    n = len(env.words)
    assert list(observations["interceptor"]["observation"][4:8]) == [n] * 4
    assert list(observations["decoder"]["observation"][4:8]) == [
        env.words.index(k) for k in env.game.keywords
    ]
    assert list(observations["encoder"]["observation"][8:11]) == [3, 1, 4]
    assert list(observations["decoder"]["observation"][8:11]) == [0, 0, 0]


def test_game_over_rewards_and_message_hold_no_keywords():
    env = decrypto_v0.parallel_env()
    env.reset(seed=0)
    for _ in range(2):
        env.step({"encoder": {"hints": ["red", "blue", "green"]}})
        code = env.game.code
        _, rewards, terminations, _, infos = env.step(
            {"decoder": CODES.index(code), "interceptor": CODES.index(code)}
        )
    assert rewards == {"encoder": -1, "decoder": -1, "interceptor": 1}
    assert all(terminations.values()) and env.agents == []
    assert all(info["decision"] is None for info in infos.values())
    last = env.bus.log[-1]
    assert last.kind == "game_over" and dict(last.payload) == {"ending": "intercept", "turns": 2}
    assert env.summary()["ending"] == "intercept"


def test_first_round_rule_gives_the_interceptor_no_decision_on_turn_1():
    env = decrypto_v0.parallel_env(first_round_interception=False)
    env.reset(seed=0)
    _, _, _, _, infos = env.step({"encoder": {"hints": ["red", "blue", "green"]}})
    assert infos["interceptor"]["decision"] is None and infos["decoder"]["decision"] == "guess"
    env.step(
        {"decoder": 0, "interceptor": CODES.index((3, 1, 4))}
    )  # the interceptor's action is ignored
    assert env.game.interceptions == 0
    assert env.summary()["turn_log"][0]["interceptor_guess"] is None
    env.step({"encoder": {"hints": ["red", "blue", "green"]}})
    assert env.deciding() == ["decoder", "interceptor"]


def test_bus_messages_follow_the_shared_conventions():
    record = play(0)
    kinds = [(m["kind"], m["to"]) for m in record.messages[:6]]
    assert kinds == [
        ("rules", "*"),
        ("keywords", "team:encoders"),
        ("code", ["encoder"]),
        ("hints", "*"),
        ("reveal", "*"),
        ("code", ["encoder"]),
    ]
    reveal = record.messages[4]["payload"]
    assert set(reveal) == {
        "turn", "code", "hints", "decoder_guess", "interceptor_guess",
        "miscommunication", "interception", "miscommunications", "interceptions",
    }  # fmt: skip
    assert record.messages[-1]["kind"] == "game_over"
    assert set(record.summary) == {
        "keywords",
        "ending",
        "turns",
        "miscommunications",
        "interceptions",
        "turn_log",
    }


# -- information audit ------------------------------------------------------------------------------


@pytest.mark.parametrize("leaky", [False, True])
def test_information_audit_over_many_seeded_games(leaky):
    for seed in range(60):
        agents = None
        if leaky:
            agents = {
                "encoder": KeywordLeakingEncoder(),
                "decoder": RandomGuesser(),
                "interceptor": RandomGuesser(),
            }
            for seat, agent in agents.items():
                agent.reset(seat, seat, agent_seed(seed, seat))
        record = play(seed, agents=agents)
        keywords = {k.casefold() for k in record.summary["keywords"]}
        codes = {entry["turn"]: entry["code"] for entry in record.summary["turn_log"]}
        revealed: set[int] = set()
        for message in record.messages:
            audience = audience_of_json(message)
            if "interceptor" in audience:
                for text in strings(message["payload"]):
                    assert text.casefold() not in keywords, (seed, message)
                    assert not set(re.split(r"\W+", text.casefold())) & keywords, (seed, message)
            if message["kind"] == "reveal":
                revealed.add(message["turn"])
            if "decoder" in audience and message["turn"] not in revealed:
                payload = message["payload"]
                assert message["kind"] != "code", (seed, message)
                assert payload.get("code") != codes[message["turn"]], (seed, message)
        if leaky:
            assert all(
                h == FALLBACK_HINT for entry in record.summary["turn_log"] for h in entry["hints"]
            )
            assert record.counters["encoder"]["invalid_actions"] == record.summary["turns"]


def audience_of_json(message):
    from socialsim.bus import Message

    return audience_of(Message.from_json(message), SEATS, TEAMS)


def test_interceptor_and_decoder_infos_never_leak_over_many_games():
    env = decrypto_v0.parallel_env()
    for seed in range(40):
        encoder, decoder, interceptor = RandomEncoder(), RandomGuesser(), RandomGuesser()
        for seat, agent in zip(SEATS, (encoder, decoder, interceptor), strict=True):
            agent.reset(seat, seat, seed)
        observations, infos = env.reset(seed=seed)
        while env.agents:
            assert "keywords" not in infos["interceptor"] and "code" not in infos["interceptor"]
            assert "code" not in infos["decoder"]
            assert list(observations["interceptor"]["observation"][4:11]) == [
                len(env.words)
            ] * 4 + [0, 0, 0]
            assert list(observations["decoder"]["observation"][8:11]) == [0, 0, 0]
            if infos["encoder"]["decision"]:
                actions = {"encoder": encoder.act(None, env.bus.read("encoder"), infos["encoder"])}
            else:
                actions = {
                    "decoder": decoder.act(None, [], infos["decoder"]),
                    "interceptor": interceptor.act(None, [], infos["interceptor"]),
                }
            observations, _, _, _, infos = env.step(actions)


# -- actions ------------------------------------------------------------------------------------


def snapshot(env):
    return (copy.deepcopy(env.summary()), env.phase, env.hints, len(env.bus.log), env.turn)


@pytest.mark.parametrize(
    "action",
    [
        {"hints": ["a", "b"]},
        {"hints": ["a", "b", "c", "d"]},
        {"hints": "a b c"},
        {"hints": ["a", 3, "c"]},
        {"hint": ["a", "b", "c"]},
        ["a", "b", "c"],
        "a, b, c",
        7.0,
        -1,
        np.array([0, 1]),
        np.array([0, 1, 10_000]),
        [0, 1, -1],
    ],
)
def test_malformed_encoder_action_is_a_value_error_and_changes_nothing(action):
    env = decrypto_v0.parallel_env()
    env.reset(seed=0)
    before = snapshot(env)
    with pytest.raises(ValueError) as error:
        env.step({"encoder": action})
    message = str(error.value)
    assert message.startswith(
        "encoder: expected an element of Discrete(328) (one hint-vocabulary index: the first of "
        "three hints), three indices or {'hints': [str, str, str]}"
    )
    assert f"got {action!r}" in message
    assert snapshot(env) == before


@pytest.mark.parametrize(
    "action",
    [
        {"guess": "1-1-2"},
        {"guess": [2, 2, 3]},
        {"guess": [0, 1, 2]},
        {"guess": "5-1-2"},
        24,
        -1,
        "1-2-3",
        [1, 2, 3],
        {"code": [1, 2, 3]},
        2.0,
    ],
)
def test_guess_that_is_not_a_code_is_a_value_error_and_changes_nothing(action):
    env = decrypto_v0.parallel_env()
    env.reset(seed=0)
    env.step({"encoder": {"hints": ["red", "blue", "green"]}})
    before = snapshot(env)
    with pytest.raises(ValueError) as error:
        env.step({"decoder": 0, "interceptor": action})
    message = str(error.value)
    assert message.startswith("interceptor: expected an action in Discrete(24) or {'guess'")
    assert f"got {action!r}" in message
    assert snapshot(env) == before


@pytest.mark.parametrize(
    "guess",
    [5, np.int64(5), {"guess": 5}, {"guess": [1, 4, 3]}, {"guess": "1-4-3", "reasoning": "..."}],
)
def test_guess_forms_are_equivalent(guess):
    env = decrypto_v0.parallel_env()
    env.reset(seed=0)
    env.step({"encoder": {"hints": ["red", "blue", "green"]}})
    env.step({"decoder": guess, "interceptor": 0})
    assert env.summary()["turn_log"][0]["decoder_guess"] == [1, 4, 3] == list(CODES[5])


def test_missing_action_for_a_deciding_agent_is_a_value_error():
    env = decrypto_v0.parallel_env()
    env.reset(seed=0)
    env.step({"encoder": {"hints": ["red", "blue", "green"]}})
    with pytest.raises(ValueError, match=r"no action for \['interceptor'\]"):
        env.step({"decoder": 0})


def test_actions_of_agents_without_a_decision_are_ignored():
    env = decrypto_v0.parallel_env()
    env.reset(seed=0)
    env.step(
        {"encoder": {"hints": ["red", "blue", "green"]}, "decoder": "nonsense", "interceptor": None}
    )
    assert env.phase == "guess"


@pytest.mark.parametrize(
    ("hint", "reason"),
    [
        ("KEYWORD", "is one of the keywords"),
        ("", "is empty"),
        ("far too many", "has 3 words"),
        ("x" * 40, "has 40 characters"),
    ],
)
def test_rule_breaking_hint_gets_the_fallback_and_is_flagged(hint, reason):
    env = decrypto_v0.parallel_env()
    env.reset(seed=0)
    if hint == "KEYWORD":
        hint = env.game.keywords[0].upper()
    _, _, _, _, infos = env.step({"encoder": {"hints": ["red", hint, "green"]}})
    assert env.hints == ["red", FALLBACK_HINT, "green"]
    flag = infos["encoder"]["invalid_action"]
    assert reason in flag["reason"] and flag["fallback"] == ("red", FALLBACK_HINT, "green")
    assert "invalid_action" not in infos["decoder"]
    hints_message = env.bus.log[-1]
    assert hints_message.kind == "hints" and list(hints_message.payload["hints"]) == [
        "red",
        FALLBACK_HINT,
        "green",
    ]


def test_hint_limits_are_env_keywords():
    env = decrypto_v0.parallel_env(max_hint_words=4, max_hint_chars=50)
    env.reset(seed=0)
    _, _, _, _, infos = env.step({"encoder": {"hints": ["red", "far too many words", "green"]}})
    assert "invalid_action" not in infos["encoder"] and env.hints[1] == "far too many words"


def test_runner_counts_invalid_hints_in_the_record():
    record = play(3, agents=leaky_agents(3))
    assert record.counters["encoder"]["invalid_actions"] == record.summary["turns"] > 0
    assert all("invalid" in step for step in record.steps if "encoder" in step["actions"])


def leaky_agents(seed):
    agents = {
        "encoder": KeywordLeakingEncoder(),
        "decoder": RandomGuesser(),
        "interceptor": RandomGuesser(),
    }
    for seat, agent in agents.items():
        agent.reset(seat, seat, agent_seed(seed, seat))
    return agents


def test_multidiscrete_action_plays_vocabulary_words():
    env = decrypto_v0.parallel_env()
    env.reset(seed=0)
    env.step({"encoder": [0, 1, 2]})
    assert env.hints == list(env.hint_vocabulary[:3])


# -- seeds and forms ------------------------------------------------------------------------------


def test_seed_0_reveals_the_reference_codes_in_the_env():
    env = decrypto_v0.parallel_env()
    env.reset(seed=0)
    codes = []
    while env.agents:
        codes.append("".join(map(str, env.game.code)))
        env.step({"encoder": {"hints": ["red", "blue", "green"]}})
        code = env.game.code
        env.step({"decoder": CODES.index(code), "interceptor": CODES.index(code) ^ 1})
    assert codes == ["314", "341", "142", "342", "413", "124", "214", "213"]


def test_codes_of_a_seed_do_not_depend_on_the_agents():
    for seed in range(10):
        a = play(seed).summary
        b = play(seed, agents=leaky_agents(seed + 100)).summary
        codes_a = [t["code"] for t in a["turn_log"]]
        codes_b = [t["code"] for t in b["turn_log"]]
        shorter = min(len(codes_a), len(codes_b))
        assert codes_a[:shorter] == codes_b[:shorter]
        assert a["keywords"] == b["keywords"]


def test_same_seed_plays_the_same_episode_in_parallel_and_aec_forms():
    for seed in range(5):
        parallel = play(seed)
        aec = play(seed, form="aec")
        assert parallel.summary == aec.summary
        assert parallel.messages == aec.messages
        assert parallel.content() == play(seed).content()


def test_random_interceptor_intercepts_about_one_turn_in_24():
    # the decoder always right, so that games are long and every turn has an interceptor guess
    env = decrypto_v0.parallel_env()
    turns = interceptions = 0
    for seed in range(200):
        encoder, interceptor = RandomEncoder(), RandomGuesser()
        encoder.reset("encoder", "encoder", agent_seed(seed, "encoder"))
        interceptor.reset("interceptor", "interceptor", agent_seed(seed, "interceptor"))
        _, infos = env.reset(seed=seed)
        while env.agents:
            env.step({"encoder": encoder.act(None, env.bus.read("encoder"), infos["encoder"])})
            guess = interceptor.act(None, [], infos["interceptor"])
            _, _, _, _, infos = env.step(
                {"decoder": CODES.index(env.game.code), "interceptor": guess}
            )
        turns += env.game.turn
        interceptions += env.game.interceptions
    rate = interceptions / turns  # 1/24 = 0.042; the standard error here is about 0.005
    assert 0.027 < rate < 0.057, (interceptions, turns)


def test_unseeded_reset_continues_from_the_last_seed():
    first, second = decrypto_v0.parallel_env(), decrypto_v0.parallel_env()
    first.reset(seed=9)
    second.reset(seed=9)
    first.reset()
    second.reset()
    assert first.game.keywords == second.game.keywords and first.game.code == second.game.code


def test_reset_options_fix_the_keywords():
    env = decrypto_v0.parallel_env()
    _, infos = env.reset(seed=0, options={"keywords": ["sun", "moon", "star", "sky"]})
    assert infos["decoder"]["keywords"] == ("sun", "moon", "star", "sky") and infos["encoder"][
        "code"
    ] == (3, 1, 4)


# -- the AEC form ---------------------------------------------------------------------------------


def test_aec_form_selects_only_the_agents_with_a_decision():
    env = decrypto_v0.env()
    env.reset(seed=0)
    order = []
    for agent in env.agent_iter(max_iter=7):
        order.append(agent)
        _, _, termination, _, info = env.last()
        assert info["decision"] is not None
        if agent == "encoder":
            env.step({"hints": ["red", "blue", "green"]})
        else:  # the decoder is right, the interceptor wrong: the game goes on
            right = CODES.index(env.unwrapped.parallel.game.code)
            env.step(right if agent == "decoder" else right ^ 1)
    assert order == ["encoder", "decoder", "interceptor"] * 2 + ["encoder"]


def test_aec_malformed_action_is_a_value_error_at_that_agents_step():
    env = decrypto_v0.env()
    env.reset(seed=0)
    env.step({"hints": ["red", "blue", "green"]})
    env.step(0)  # the decoder
    before = snapshot(env.unwrapped.parallel)
    with pytest.raises(ValueError, match=r"^interceptor: expected an action in Discrete\(24\)"):
        env.step({"guess": "2-2-1"})
    assert snapshot(env.unwrapped.parallel) == before and env.agent_selection == "interceptor"


def test_aec_form_flags_and_counts_invalid_hints_on_the_encoders_step():
    record = play(3, agents=leaky_agents(3), form="aec")
    assert record.counters["encoder"]["invalid_actions"] == record.summary["turns"] > 0
    assert record.summary == play(3, agents=leaky_agents(3)).summary


def test_aec_form_with_the_first_round_rule_skips_the_interceptor_on_turn_1():
    record = play(0, form="aec", env_kwargs={"first_round_interception": False})
    first_turn = [list(step["actions"]) for step in record.steps if step["turn"] == 1]
    assert first_turn == [["encoder"], ["decoder"]]


# -- the rules message, masks, render, state ------------------------------------------------------


def test_rules_message_is_first_and_carries_the_settings_in_force():
    env = decrypto_v0.parallel_env(max_turns=5, max_hint_words=3, max_hint_chars=40)
    env.reset(seed=0)
    first = env.bus.log[0]
    assert (first.id, first.turn, first.kind, first.to, first.channel) == (
        0, 1, "rules", "*", "public",
    )  # fmt: skip
    assert Rules.from_payload(first.payload) == Rules(
        game="decrypto",
        max_turns=5,
        first_round_interception=True,
        max_hint_words=3,
        max_hint_chars=40,
        seats=["encoder", "decoder", "interceptor"],
        teams={"encoders": ["encoder", "decoder"], "interceptors": ["interceptor"]},
    )
    assert all(m.kind == "rules" for m in env.bus.read("interceptor")[:1])
    assert not set(strings(dict(first.payload))) & set(env.game.keywords)


def test_agents_without_a_decision_may_play_only_the_no_op():
    env = decrypto_v0.parallel_env(first_round_interception=False)
    observations, _ = env.reset(seed=0)
    no_op = [1] + [0] * 23
    assert observations["decoder"]["action_mask"].tolist() == no_op
    assert observations["interceptor"]["action_mask"].tolist() == no_op
    observations, _, _, _, _ = env.step({"encoder": {"hints": ["red", "blue", "green"]}})
    assert np.flatnonzero(observations["encoder"]["action_mask"]).tolist() == [0]
    assert observations["decoder"]["action_mask"].tolist() == [1] * 24
    assert observations["interceptor"]["action_mask"].tolist() == no_op  # the first-round rule
    observations, _, _, _, _ = env.step({"decoder": 0, "interceptor": 0, "encoder": 0})
    assert observations["interceptor"]["action_mask"].tolist() == no_op
    assert observations["encoder"]["action_mask"].shape == (len(env.hint_vocabulary),)


def test_encoder_masks_are_read_only_and_a_game_never_changes_one_already_observed(tmp_path):
    path = tmp_path / "hints.txt"
    path.write_text("sun\nglow\nwarm\n")
    env = decrypto_v0.parallel_env(hint_vocabulary=str(path))
    observations, _ = env.reset(seed=0, options={"keywords": ["sun", "moon", "star", "sky"]})
    encoder, decoder = (
        observations["encoder"]["action_mask"],
        observations["decoder"]["action_mask"],
    )
    with pytest.raises(ValueError, match="read-only"):
        encoder[1] = 0
    decoder[1] = 1  # a guesser's mask is its own
    env.step({"encoder": [1, 2, 1]})
    env.reset(seed=1, options={"keywords": ["glow", "moon", "star", "sky"]})
    assert encoder.tolist() == [0, 1, 1]  # the first game's, as observed
    assert decoder.tolist() == [1, 1] + [0] * 22
    assert env.observe("decoder")["action_mask"].tolist() == [1] + [0] * 23
    assert env.observe("encoder")["action_mask"].tolist() == [1, 0, 1]


def test_encoder_mask_forbids_the_keywords_and_hints_over_the_limits(tmp_path):
    path = tmp_path / "hints.txt"
    path.write_text("sun\nMoon\nwarm light\nglow\nfar too many\n")
    env = decrypto_v0.parallel_env(hint_vocabulary=str(path), max_hint_words=2)
    observations, _ = env.reset(seed=0, options={"keywords": ["sun", "moon", "star", "sky"]})
    mask = observations["encoder"]["action_mask"]
    assert mask.tolist() == [0, 0, 1, 1, 0]
    assert env.observation_space("encoder").contains(observations["encoder"])
    assert env.observation_space("encoder") is env.observation_space("encoder")
    # an index the mask forbids is played as the fallback and flagged
    _, _, _, _, infos = env.step({"encoder": np.array([0, 2, 3])})
    assert env.hints == [FALLBACK_HINT, "warm light", "glow"]
    assert "is one of the keywords" in infos["encoder"]["invalid_action"]["reason"]


def test_every_spelling_of_a_keyword_in_the_vocabulary_is_masked_and_falls_back(tmp_path):
    path = tmp_path / "hints.txt"
    path.write_text("Sun\nsun\nglow\nwarm\n")
    env = decrypto_v0.parallel_env(hint_vocabulary=str(path))
    observations, _ = env.reset(seed=0, options={"keywords": ["sun", "moon", "star", "sky"]})
    assert observations["encoder"]["action_mask"].tolist() == [0, 0, 1, 1]
    _, _, _, _, infos = env.step({"encoder": [0, 2, 3]})  # "Sun", allowed by no mask
    assert env.hints == [FALLBACK_HINT, "glow", "warm"]
    assert "is one of the keywords" in infos["encoder"]["invalid_action"]["reason"]


def test_a_forbidden_hint_given_alone_falls_back_and_is_flagged_at_its_step(tmp_path):
    path = tmp_path / "hints.txt"
    path.write_text("Sun\nsun\nglow\nwarm\n")
    env = decrypto_v0.parallel_env(hint_vocabulary=str(path))
    env.reset(seed=0, options={"keywords": ["sun", "moon", "star", "sky"]})
    _, _, _, _, infos = env.step({"encoder": 2})
    assert "invalid_action" not in infos["encoder"]
    _, _, _, _, infos = env.step({"encoder": 1})  # "sun", a keyword
    flag = infos["encoder"]["invalid_action"]
    assert flag["fallback"] == FALLBACK_HINT and "is one of the keywords" in flag["reason"]
    env.step({"encoder": 3})
    assert env.hints == ["glow", FALLBACK_HINT, "warm"]


def test_an_allowed_index_hint_plays_exactly_as_the_same_words_given_as_text():
    by_index, by_text = decrypto_v0.parallel_env(), decrypto_v0.parallel_env()
    by_index.reset(seed=4)
    by_text.reset(seed=4)
    words = [by_index.hint_vocabulary[i] for i in (5, 6, 7)]
    _, _, _, _, index_infos = by_index.step({"encoder": np.array([5, 6, 7])})
    _, _, _, _, text_infos = by_text.step({"encoder": {"hints": words}})
    assert by_index.hints == by_text.hints == words
    assert index_infos == text_infos and "invalid_action" not in index_infos["encoder"]
    assert [m.to_json() for m in by_index.bus.log] == [m.to_json() for m in by_text.bus.log]


def test_an_unseeded_reset_continues_from_the_last_seed_given():
    env, again = decrypto_v0.parallel_env(), decrypto_v0.parallel_env()
    env.reset(seed=3)
    env.reset()
    again.reset(seed=3)
    again.reset()
    assert env.game.keywords == again.game.keywords
    fresh = decrypto_v0.parallel_env()
    fresh.reset(seed=3)
    assert env.game.keywords != fresh.game.keywords


def test_render_ansi_shows_the_public_hint_history_tokens_and_turn():
    env = decrypto_v0.parallel_env(render_mode="ansi")
    env.reset(seed=0)
    env.step({"encoder": {"hints": ["red", "blue", "green"]}})
    assert env.render().splitlines() == [
        "Decrypto, turn 1 of 8: the guessers guess",
        "tokens: miscommunications 0/2, interceptions 0/2",
        "hints this turn: red, blue, green",
        "hint history by keyword:",
        "  1: -",
        "  2: -",
        "  3: -",
        "  4: -",
    ]
    env.step({"decoder": CODES.index((3, 1, 4)), "interceptor": CODES.index((3, 1, 4))})
    text = env.render()
    assert text.splitlines() == [
        "Decrypto, turn 2 of 8: the encoder hints",
        "tokens: miscommunications 0/2, interceptions 1/2",
        "hint history by keyword:",
        "  1: blue",
        "  2: -",
        "  3: red",
        "  4: green",
    ]
    assert not set(re.split(r"\W+", text)) & set(env.game.keywords)
    aec = decrypto_v0.env(render_mode="ansi")
    aec.reset(seed=0)
    assert aec.render().startswith("Decrypto, turn 1 of 8: the encoder hints")


def test_render_human_prints_the_ansi_text(capsys):
    env = decrypto_v0.parallel_env(render_mode="human")
    env.reset(seed=0)
    assert env.render() is None
    assert capsys.readouterr().out.startswith("Decrypto, turn 1 of 8: the encoder hints\n")
    assert decrypto_v0.parallel_env().render() is None
    assert decrypto_v0.parallel_env().metadata["render_modes"] == ["ansi", "human"]


def test_unknown_render_mode_is_an_error_naming_the_allowed_values():
    with pytest.raises(
        ValueError, match=r"render_mode: must be one of ansi, human or None, got 'rgb'"
    ):
        decrypto_v0.parallel_env(render_mode="rgb")


def test_state_is_the_observation_layout_with_nothing_hidden():
    env = decrypto_v0.parallel_env()
    env.reset(seed=0)
    state = env.state()
    assert env.state_space.contains(state)
    assert state[:11].tolist() == [1, 1, 0, 0] + [env.words.index(k) for k in env.game.keywords] + [
        3, 1, 4,
    ]  # fmt: skip
    assert env.state()[11:].tolist() == env.observe("interceptor")["observation"][11:].tolist()


def test_raw_env_is_the_aec_class_and_the_factories_show_the_arguments():
    import inspect

    from pettingzoo import AECEnv

    assert issubclass(decrypto_v0.raw_env, AECEnv)
    assert isinstance(decrypto_v0.parallel_env(), decrypto_v0.DecryptoEnv)
    for factory in (decrypto_v0.env, decrypto_v0.parallel_env, decrypto_v0.raw_env):
        assert list(inspect.signature(factory).parameters)[:2] == ["max_turns", "wordlist"]
        assert "render_mode" in inspect.signature(factory).parameters
    assert decrypto_v0.env().unwrapped.bus is not None


def test_every_info_copies_deep_copies_and_pickles_as_rl_libraries_need():
    """Stable-Baselines3's vector envs deep-copy infos: what a Decrypto info shares read-only
    (tuples, the last turn's read-only mapping) survives copy.deepcopy and pickle, equal, and
    stays read-only."""
    import pickle

    env = decrypto_v0.parallel_env()
    env.reset(seed=0)
    env.step({"encoder": {"hints": ["red", "blue", "green"]}})
    _, _, _, _, infos = env.step({"decoder": CODES.index((3, 1, 4)), "interceptor": 0})
    for info in infos.values():
        assert copy.deepcopy(info) == info
        assert pickle.loads(pickle.dumps(info)) == info
    last_turn = infos["decoder"]["last_turn"]
    assert copy.deepcopy(last_turn)["code"] == (3, 1, 4)
    with pytest.raises(TypeError):
        last_turn["code"] = (1, 2, 3)


# -- shaped rewards -------------------------------------------------------------------------------


def test_turn_rewards_pay_each_reveal_on_top_of_the_outcome_and_are_recorded():
    env = decrypto_v0.parallel_env(turn_rewards=0.5, max_turns=2)
    env.reset(seed=0, options={"codes": ["3-1-4", "1-2-3"]})
    env.step({"encoder": {"hints": ["red", "blue", "green"]}})
    # the decoder reads the code, the interceptor intercepts it
    _, rewards, _, _, _ = env.step(
        {"decoder": {"guess": "3-1-4"}, "interceptor": {"guess": "3-1-4"}}
    )
    assert rewards == {"encoder": 0.5, "decoder": 0.5, "interceptor": 0.5}
    env.step({"encoder": {"hints": ["red", "blue", "green"]}})
    _, rewards, terminations, _, _ = env.step(
        {"decoder": {"guess": "1-2-4"}, "interceptor": {"guess": "4-3-2"}}
    )
    # a miscommunication, and the team survives its 2 turns: +1 -0.5 each, the interceptor -1
    assert all(terminations.values()) and env.game.ending == "survived"
    assert rewards == {"encoder": 0.5, "decoder": 0.5, "interceptor": -1.0}
    assert env.summary()["turn_rewards"] == 0.5


def test_without_turn_rewards_the_summary_and_rewards_are_as_they_were():
    env = decrypto_v0.parallel_env()
    env.reset(seed=0)
    env.step({"encoder": {"hints": ["red", "blue", "green"]}})
    _, rewards, _, _, _ = env.step({"decoder": 0, "interceptor": 0})
    assert rewards == {"encoder": 0, "decoder": 0, "interceptor": 0}
    assert "turn_rewards" not in env.summary()


@pytest.mark.parametrize("bad", [-1, True, "1", float("nan"), float("inf")])
def test_turn_rewards_must_be_a_number_at_least_zero(bad):
    with pytest.raises(ValueError, match=r"turn_rewards: must be a number >= 0, got"):
        decrypto_v0.parallel_env(turn_rewards=bad)
