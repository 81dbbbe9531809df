"""The Decrypto LLM agents: prompts (golden files, no keyword reaching the interceptor), answer
checking, re-prompts and fallbacks, side questions, and whole games through litellm against the
scripted HTTP server of tests/llm_server.py (no network).

Golden files live in tests/golden/decrypto_*.txt. After a deliberate prompt change, regenerate
them with ``SOCIALSIM_REGENERATE_GOLDEN=1 pytest tests/test_llm_decrypto.py -k golden`` and
review the diff.
"""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path
from typing import Any

import pytest
from socialsim.agents.llm.decrypto import (
    STYLES,
    DecryptoLLMAgent,
    answer_schema,
    fallback_guess,
    parse_guess,
    parse_hints,
    placeholder_hints,
)
from socialsim.envs.decrypto.protocol import Options, Rules

from socialsim import registry
from socialsim.agent import Question, RunContext
from socialsim.cli import main as cli_main
from socialsim.episode import EpisodeSpec
from socialsim.llm import AnswerParseError, ScriptedModel
from socialsim.records import EPISODES, read_records
from socialsim.runner import play_episode
from socialsim.testing.decrypto_policies import DecryptoPolicy, hint_for

SEATS = ("encoder", "decoder", "interceptor")
GOLDEN = Path(__file__).parent / "golden"
KEY_ENV = "SOCIALSIM_DECRYPTO_TEST_KEY"


# -- helpers ----------------------------------------------------------------------------------


def scripted_agents(policy, seed_params: dict[str, Any] | None = None, **params: Any) -> dict:
    """Agents on every seat answering in process from ``policy(messages, request)``."""
    agents = {}
    for seat in SEATS:
        agent = DecryptoLLMAgent({"model": "scripted", "cache": False}, **params)
        agent.attach(RunContext())
        agent.model = ScriptedModel(
            lambda messages, settings: policy(messages, {**settings.params}), model="scripted"
        )
        agents[seat] = agent
    return agents


def play_scripted(agents: dict, seed: int, probes=(), env_kwargs=None):
    for seat, agent in agents.items():
        agent.reset(seat, seat, seed)
    spec = EpisodeSpec(
        env_id="decrypto_v0",
        seed=seed,
        seats={s: {"kind": "llm_decrypto"} for s in SEATS},
        probes=tuple(probes),
        env_kwargs=env_kwargs or {},
    )
    return play_episode(spec, agents=agents)


def server_model(server, **extra: Any) -> dict[str, Any]:
    return {
        "model": "openai/test",
        "api_base": server.url,
        "api_key_env": KEY_ENV,
        "cache": False,
        "max_retries": 0,
        **extra,
    }


def server_spec(server, seed: int = 0, probes=(), **params: Any) -> EpisodeSpec:
    seat = {"kind": "llm_decrypto", "model": server_model(server), **params}
    return EpisodeSpec(
        env_id="decrypto_v0", seed=seed, seats={s: seat for s in SEATS}, probes=tuple(probes)
    )


def server_agents(server, seed: int = 0, **params: Any) -> dict:
    agents = {}
    for seat in SEATS:
        agent = registry.build_agent(
            {"kind": "llm_decrypto", "model": server_model(server), **params}
        )
        agent.attach(RunContext())
        agent.reset(seat, seat, seed)
        agents[seat] = agent
    return agents


def transcript(messages) -> str:
    return "\n\n".join(f"### {m['role']}\n{m['content']}" for m in messages) + "\n"


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / f"decrypto_{name}.txt"
    if os.environ.get("SOCIALSIM_REGENERATE_GOLDEN"):
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"{path} missing: regenerate with SOCIALSIM_REGENERATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8"), f"{path.name} differs from the prompts"


@pytest.fixture
def api_key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-dummy-for-the-test-server")


@pytest.fixture
def decrypto_server(llm_server, api_key, fresh_models):
    llm_server.policy = DecryptoPolicy()
    return llm_server


# -- prompts ----------------------------------------------------------------------------------


def test_golden_prompts_of_every_seat_and_side_question_for_seed_0():
    agents = scripted_agents(DecryptoPolicy())
    record = play_scripted(agents, seed=0, probes=[{"name": "piaget"}, {"name": "gopnik"}])
    assert record.status == "done", record.error
    for seat in SEATS:
        check_golden(seat, transcript(agents[seat].chat))
    side = {}
    for seat in ("encoder", "interceptor"):
        for messages in agents[seat].model.received:
            text = messages[-1]["content"]
            if text.startswith("Side question"):
                kind = (
                    "predict"
                    if "predict" in text
                    else "before_reveal"
                    if "Before they were revealed" in text
                    else "other_interceptor"
                    if "second Interceptor" in text
                    else "keywords_now"
                )
                side.setdefault(kind, messages[-1]["content"] + "\n")
    assert sorted(side) == ["before_reveal", "keywords_now", "other_interceptor", "predict"]
    for kind, text in side.items():
        check_golden(f"tom_{kind}", text)


@pytest.mark.parametrize("style", STYLES)
def test_every_style_renders_every_role_with_no_placeholder_left(style):
    agents = scripted_agents(DecryptoPolicy(), prompt_style=style)
    record = play_scripted(agents, seed=3)
    assert record.status == "done", record.error
    systems = {seat: agents[seat].chat[0]["content"] for seat in SEATS}
    for seat, text in systems.items():
        assert "$" not in text and ("8 turns" in text or "8 rounds" in text), (style, seat)
        assert "ANSWER:" in text
    assert len(set(systems.values())) == 3


def test_the_five_styles_are_five_different_system_prompts():
    texts = set()
    for style in STYLES:
        agent = DecryptoLLMAgent({"model": "scripted", "cache": False}, prompt_style=style)
        agent.attach(RunContext())
        agent.reset("encoder", "encoder", 0)
        agent.learn_rules(Rules.of(Options()))
        texts.add(agent.chat[0]["content"])
    assert len(texts) == len(STYLES) == 5


def test_unknown_style_or_role_is_an_error_naming_the_choices():
    with pytest.raises(ValueError, match="prompt_style: unknown style 'fancy'; allowed: plain"):
        DecryptoLLMAgent("openai/x", prompt_style="fancy")
    with pytest.raises(ValueError, match="role: 'spy' is not a Decrypto role"):
        DecryptoLLMAgent("openai/x", role="spy")


def nonce_wordlist(tmp_path) -> Path:
    # made-up words that no template can contain by accident, so any occurrence is a leak
    path = tmp_path / "nonce_keywords.txt"
    path.write_text("\n".join(f"qz{i:03d}vex" for i in range(40)) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("style", STYLES)
def test_interceptor_prompts_never_contain_a_keyword(tmp_path, style):
    words = nonce_wordlist(tmp_path)
    for seed in range(4):
        for link in (True, False):
            agents = scripted_agents(DecryptoPolicy(link=link), prompt_style=style)
            record = play_scripted(
                agents, seed, probes=[{"name": "piaget"}], env_kwargs={"wordlist": str(words)}
            )
            assert record.status == "done", record.error
            keywords = record.summary["keywords"]
            team = " ".join(m["content"] for m in agents["decoder"].chat)
            assert all(k in team for k in keywords)  # the check below can see a keyword
            sent = agents["interceptor"].model.received
            assert len(sent) == record.summary["turns"]
            for messages in sent:
                for message in messages:
                    assert not any(k in message["content"] for k in keywords), (seed, message)
                    assert "qz" not in message["content"]


# -- answer checking --------------------------------------------------------------------------


def test_a_guess_must_be_three_distinct_digits_from_1_to_4():
    assert parse_guess('so ANSWER: {"guess": "3-1-4"}') == [3, 1, 4]
    assert parse_guess('ANSWER: {"guess": [2, 4, 1]}') == [2, 4, 1]
    assert parse_guess('```json\nANSWER: {"guess": "4-3-2"}\n```') == [4, 3, 2]
    for bad in ('"1-1-2"', '"0-1-2"', '"5-1-2"', '"1-2"', "123"):
        with pytest.raises(AnswerParseError, match="is not a code"):
            parse_guess(f'ANSWER: {{"guess": {bad}}}')


def test_a_decoder_answering_with_hints_is_an_invalid_answer():
    with pytest.raises(AnswerParseError, match="you are the Decoder: answer with a guess"):
        parse_guess('ANSWER: {"hints": ["a", "b", "c"]}', "decoder")


def test_hints_are_checked_against_the_keywords_and_limits():
    keywords = ["apple", "bear", "cloud", "door"]
    assert parse_hints('ANSWER: {"hints": [" red fruit", "grizzly", "rain"]}', keywords) == [
        "red fruit",
        "grizzly",
        "rain",
    ]
    with pytest.raises(AnswerParseError, match="hint 2 'Bear' is one of the keywords"):
        parse_hints('ANSWER: {"hints": ["fruit", "Bear", "rain"]}', keywords)
    with pytest.raises(AnswerParseError, match="hint 1 'a very long hint' has 4 words"):
        parse_hints('ANSWER: {"hints": ["a very long hint", "b", "c"]}', keywords)
    with pytest.raises(AnswerParseError, match="got 2"):
        parse_hints('ANSWER: {"hints": ["a", "b"]}', keywords)
    with pytest.raises(AnswerParseError, match="Encoder: answer with three hints"):
        parse_hints('ANSWER: {"guess": "1-2-3"}', keywords)


def test_fallbacks_are_legal_and_the_guess_cannot_match_after_turn_1():
    assert placeholder_hints(["a", "b", "c", "d"], max_words=2, max_chars=32) == ["no_hint"] * 3
    assert (
        placeholder_hints(["no_hint", "b", "c", "d"], max_words=2, max_chars=32) == ["no hint"] * 3
    )
    assert fallback_guess([[3, 1, 4], [3, 4, 1]]) == [3, 4, 1]
    assert fallback_guess([]) == [1, 2, 3]


def test_the_hint_limits_are_named_wherever_they_are_given():
    # answer_schema took (max_chars, max_words) and placeholder_hints (max_words, max_chars):
    # by position, one of them got the two swapped
    keywords = ["apple", "bear", "cloud", "door"]
    for call in (
        lambda: answer_schema("hints", 2, 32),
        lambda: placeholder_hints(keywords, 2, 32),
        lambda: parse_hints('ANSWER: {"hints": ["a", "b", "c"]}', keywords, 2, 32),
    ):
        with pytest.raises(TypeError, match="positional argument"):
            call()
    item = answer_schema("hints", max_words=2, max_chars=32)["schema"]["properties"]["hints"]
    assert item["items"]["maxLength"] == 32
    assert item["items"]["pattern"] == "^[^<> ]{1,15}( [^<> ]{1,15}){0,1}$"


def test_a_keyword_as_hint_is_re_prompted_with_the_reason():
    good = DecryptoPolicy()

    def policy(messages, request):
        last = messages[-1]["content"]
        if "you are the Encoder" in last:
            keyword = re.search(r"Keywords: \{1: ([^,]+),", last).group(1)
            return f'ANSWER: {{"hints": ["{keyword}", "x", "y"]}}'
        return good(messages, request)

    agents = scripted_agents(policy)
    record = play_scripted(agents, seed=0)
    encoder = agents["encoder"]
    corrections = [
        m["content"] for m in encoder.chat if m["content"].startswith("[GAME MASTER] Error:")
    ]
    assert len(corrections) == record.summary["turns"]
    assert "hint 1" in corrections[0] and "is one of the keywords" in corrections[0]
    assert record.counters["encoder"]["invalid_answers"] == record.summary["turns"]
    assert record.counters["encoder"]["invalid_actions"] == 0  # the env never saw a bad hint


# -- whole games through litellm and the HTTP server ------------------------------------------


def test_full_game_seed_0_ends_with_the_second_interception_on_turn_3(decrypto_server):
    # Seed 0 deals 3-1-4, 3-4-1, 1-4-2. The scripted encoder repeats one hint per keyword, the
    # decoder inverts it, and the interceptor links hints to the history: turn 1 it knows
    # nothing and guesses 1-2-3; turn 2 every number was hinted on turn 1 (3-4-1 intercepted);
    # turn 3 numbers 1 and 4 are known and 1-4-2 is the first code that fits (intercepted).
    record = play_episode(server_spec(decrypto_server, seed=0))
    assert record.status == "done", record.error
    summary = record.summary
    assert (summary["ending"], summary["turns"]) == ("intercept", 3)
    assert (summary["miscommunications"], summary["interceptions"]) == (0, 2)
    log = summary["turn_log"]
    assert [t["code"] for t in log] == [[3, 1, 4], [3, 4, 1], [1, 4, 2]]
    assert [t["decoder_guess"] for t in log] == [[3, 1, 4], [3, 4, 1], [1, 4, 2]]
    assert [t["interceptor_guess"] for t in log] == [[1, 2, 3], [3, 4, 1], [1, 4, 2]]
    keywords = summary["keywords"]
    assert log[0]["hints"] == [hint_for(keywords[d - 1]) for d in (3, 1, 4)]
    assert record.returns == {"encoder": -1.0, "decoder": -1.0, "interceptor": 1.0}
    for seat in SEATS:
        counters = record.counters[seat]
        assert (counters["llm_calls"], counters["invalid_answers"], counters["fallbacks"]) == (
            3,
            0,
            0,
        )
        assert len(record.events[seat]) == 3
        assert all(e["type"] == "llm_call" and not e["cached"] for e in record.events[seat])
    assert decrypto_server.requests == 9
    first = decrypto_server.answered[0]
    assert first["model"] == "test" and first["temperature"] == 0.6
    assert first["max_tokens"] == 750


def test_full_game_with_fresh_hints_survives_8_turns(decrypto_server):
    # With a new hint each time a keyword is hinted the interceptor can link nothing and
    # guesses the first code not played yet: for seed 0 that is never the code dealt.
    decrypto_server.policy = DecryptoPolicy(link=False)
    record = play_episode(server_spec(decrypto_server, seed=0))
    assert record.status == "done", record.error
    summary = record.summary
    assert (summary["ending"], summary["turns"]) == ("survived", 8)
    assert (summary["miscommunications"], summary["interceptions"]) == (0, 0)
    assert decrypto_server.requests == 24
    assert record.returns == {"encoder": 1.0, "decoder": 1.0, "interceptor": -1.0}


def test_structured_output_sends_a_json_schema_and_reads_bare_json(decrypto_server):
    record = play_episode(server_spec(decrypto_server, seed=0, structured_output=True))
    assert record.status == "done", record.error
    assert (record.summary["ending"], record.summary["turns"]) == ("intercept", 3)
    formats = [r["response_format"]["json_schema"]["name"] for r in decrypto_server.answered]
    assert formats[:3] == ["decrypto_hints", "decrypto_guess", "decrypto_guess"]
    assert all(not e["reply"].startswith("ANSWER") for e in record.events["encoder"])
    assert all(record.counters[s]["invalid_answers"] == 0 for s in SEATS)


def test_garbled_answers_are_re_prompted_then_fall_back_after_max_attempts(decrypto_server):
    # The first 10 requests are the encoder's turn-1 attempts: all garbage, so it plays the
    # placeholder hints, which nobody can place: the decoder's 1-2-3 misses 3-1-4.
    decrypto_server.set_schedule(["garbage"] * 10)
    record = play_episode(server_spec(decrypto_server, seed=0))
    assert record.status == "done", record.error
    encoder = record.counters["encoder"]
    assert (encoder["invalid_answers"], encoder["fallbacks"]) == (10, 1)
    assert record.summary["turn_log"][0]["hints"] == ["no_hint"] * 3
    assert record.summary["turn_log"][0]["miscommunication"] is True
    events = record.events["encoder"]
    assert [e.get("answer_attempt") for e in events[:10]] == list(range(1, 11))
    assert all("invalid" in e for e in events[:10])
    assert events[10] == {"type": "fallback", "decision": "hints", "value": ["no_hint"] * 3}
    # each re-prompt carries the game master's reason, and the attempts pile up in the chat
    second = decrypto_server.answered[1]["messages"]
    assert second[-1]["content"].startswith("[GAME MASTER] Error: ")
    assert second[-1]["content"].endswith('ANSWER: {"hints": ["<hint 1>", "<hint 2>", "<hint 3>"]}')
    assert len(decrypto_server.answered[9]["messages"]) == 2 + 2 * 9
    assert record.counters["decoder"]["invalid_answers"] == 0


def test_dropping_failed_attempts_resends_the_same_prompt_with_a_new_seed(decrypto_server):
    decrypto_server.set_schedule(["garbage"] * 2)
    record = play_episode(server_spec(decrypto_server, seed=0, drop_failed_attempts=True))
    assert record.status == "done", record.error
    assert record.counters["encoder"]["invalid_answers"] == 2
    first, second, third = (decrypto_server.answered[i] for i in range(3))
    assert first["messages"] == second["messages"] == third["messages"]
    assert len({first.get("seed"), second.get("seed"), third.get("seed")}) == 3
    # the game went on as without the faults
    assert (record.summary["ending"], record.summary["turns"]) == ("intercept", 3)


def test_a_decoder_replying_with_hints_is_re_prompted_not_a_crash(decrypto_server):
    decrypto_server.policy = DecryptoPolicy(decoder_hints_first=True)
    record = play_episode(server_spec(decrypto_server, seed=0))
    assert record.status == "done", record.error
    assert (record.summary["ending"], record.summary["turns"]) == ("intercept", 3)
    decoder = record.counters["decoder"]
    assert (decoder["llm_calls"], decoder["invalid_answers"], decoder["fallbacks"]) == (6, 3, 0)
    reasons = [e["invalid"] for e in record.events["decoder"] if "invalid" in e]
    assert (
        reasons == ['you are the Decoder: answer with a guess, {"guess": "X-Y-Z"}, not hints'] * 3
    )


def test_tom_probes_use_side_chats_that_never_enter_the_history(decrypto_server):
    decrypto_server.policy = DecryptoPolicy(recall_revealed=True)
    agents = server_agents(decrypto_server, seed=0)
    spec = server_spec(decrypto_server, seed=0, probes=[{"name": "piaget"}, {"name": "gopnik"}])
    record = play_episode(spec, agents=agents)
    assert record.status == "done", record.error
    keywords = record.summary["keywords"]
    piaget = [p for p in record.probes if p["probe"] == "piaget"]
    gopnik = [p for p in record.probes if p["probe"] == "gopnik"]
    assert [(p["turn"], p["prediction"]) for p in piaget] == [
        (1, [3, 1, 4]),
        (2, [3, 4, 1]),
        (3, [1, 4, 2]),
    ]
    assert [p["turn"] for p in gopnik] == [2, 3]
    for entry in gopnik:
        assert entry["keywords_now"] == ["unknown"] * 4
        assert entry["keywords_before_reveal"] == keywords
        assert entry["keywords_other_interceptor"] == keywords
    # the seats' own chats hold one user prompt and one reply per turn, no side question
    for seat in SEATS:
        chat = agents[seat].chat
        assert [m["role"] for m in chat] == ["system"] + ["user", "assistant"] * 3
        assert not any("Side question" in m["content"] for m in chat)
    assert not any("revealed to you" in m["content"] for m in agents["interceptor"].chat)
    # each side question was asked on a copy of the chat as it stood
    final = {s: agents[s].chat for s in ("encoder", "interceptor")}
    side = [
        r["messages"]
        for r in decrypto_server.answered
        if r["messages"][-1]["content"].startswith("Side question")
    ]
    assert len(side) == 3 + 2 * 4  # the encoder's 3, and the interceptor's 4 on turns 2 and 3
    for messages in side:
        seat = "encoder" if "predict" in messages[-1]["content"] else "interceptor"
        history = messages[:-1]
        assert history == list(final[seat][: len(history)])
    counters = record.counters
    assert counters["encoder"]["tom_questions"] == 3
    assert counters["interceptor"]["tom_questions"] == 8
    assert counters["interceptor"]["llm_calls"] == 3 + 8


def test_side_questions_with_garbled_answers_fall_back_to_none_on_their_own_counters(
    decrypto_server,
):
    agent = server_agents(decrypto_server, seed=0, max_attempts=2)["encoder"]
    decrypto_server.set_schedule(["garbage"] * 2)
    context = {
        "turn": 1,
        "code": [3, 1, 4],
        "hints": ["a", "b", "c"],
        "keywords": ["w", "x", "y", "z"],
        "hint_history": [[], [], [], []],
        "code_history": [],
        "rules": Rules.of(Options()).to_payload(),
    }
    assert asyncio.run(agent.aanswer(Question("predict_interceptor_guess", context))) is None
    counters = agent.counters
    assert (counters["invalid_answers"], counters["fallbacks"]) == (0, 0)
    assert (counters["tom_invalid_answers"], counters["tom_fallbacks"]) == (2, 1)
    assert counters["llm_calls"] == 2
    with pytest.raises(NotImplementedError, match="not 'keywords_now'"):
        asyncio.run(agent.aanswer(Question("keywords_now", context)))


EXPERIMENT = """
name = "llm_decrypto_cache_test"
episodes = 2
seed = 0
max_concurrent = 2

[env]
id = "decrypto_v0"

[seats."*"]
kind = "llm_decrypto"

[seats."*".model]
model = "openai/test"
api_base = "{url}"
api_key_env = "{key}"
max_retries = 0

[[probes]]
name = "piaget"
"""


def test_second_run_of_an_experiment_through_the_cli_makes_no_request(decrypto_server, tmp_path):
    from socialsim.llm import forget_models

    path = tmp_path / "experiment.toml"
    path.write_text(EXPERIMENT.format(url=decrypto_server.url, key=KEY_ENV), encoding="utf-8")
    out = tmp_path / "run"
    assert cli_main(["run", str(path), "--out", str(out), "--quiet"]) == 0
    first = read_records(out)
    assert len(first) == 2 and decrypto_server.requests > 0
    assert (out / "llm_cache.sqlite").is_file()
    # play the same episodes again from scratch (the log is gone, the cache stays)
    (out / EPISODES).unlink()
    forget_models()
    decrypto_server.reset_counts()
    assert cli_main(["run", str(path), "--out", str(out), "--quiet"]) == 0
    second = read_records(out)
    assert decrypto_server.requests == 0
    assert [r.summary for r in second] == [r.summary for r in first]
    assert all(e["cached"] for r in second for events in r.events.values() for e in events)


@pytest.mark.slow
def test_injected_faults_are_survived_and_garbage_is_counted_as_invalid_answers(
    decrypto_server, tmp_path
):
    from socialsim.records import EventLog
    from socialsim.runner import run_specs_async

    decrypto_server.fault_rates = {
        "server_error": 0.10,
        "rate_limit": 0.10,
        "garbage": 0.10,
        "timeout": 0.05,
    }
    decrypto_server.timeout_sleep_s = 1.5
    model = server_model(decrypto_server, max_retries=8, backoff=0.01, timeout=1.0)
    seat = {"kind": "llm_decrypto", "model": model}
    specs = [
        EpisodeSpec(env_id="decrypto_v0", seed=seed, seats={s: seat for s in SEATS}, episode=seed)
        for seed in range(4)
    ]
    with EventLog(tmp_path) as log:
        records = asyncio.run(run_specs_async(specs, log, max_concurrent=4))
    assert sorted(r.episode for r in records) == [0, 1, 2, 3]
    assert all(r.status == "done" for r in records), [r.error for r in records]
    faults = decrypto_server.faults
    assert faults["garbage"] > 0 and faults["timeout"] > 0
    assert faults["server_error"] > 0 and faults["rate_limit"] > 0
    invalid = sum(r.counters[s]["invalid_answers"] for r in records for s in SEATS)
    assert invalid == faults["garbage"]
    calls = sum(r.counters[s]["llm_calls"] for r in records for s in SEATS)
    transient = faults["server_error"] + faults["rate_limit"] + faults["timeout"]
    assert decrypto_server.requests - transient == calls  # every other request was one call


def test_the_kind_is_registered_and_takes_its_parameters():
    assert (
        registry.agent_kinds()["llm_decrypto"] == "socialsim.agents.llm.decrypto:DecryptoLLMAgent"
    )
    registry.check_agent_spec(
        "seats.encoder",
        {"kind": "llm_decrypto", "model": {"model": "openai/x"}, "prompt_style": "terse"},
    )


def test_the_chat_starts_afresh_every_episode():
    agents = scripted_agents(DecryptoPolicy())
    first = play_scripted(agents, seed=0)
    second = play_scripted(agents, seed=1)
    assert first.summary["keywords"] != second.summary["keywords"]
    for seat in SEATS:
        chat = agents[seat].chat
        assert [m["role"] for m in chat] == ["system"] + ["user", "assistant"] * second.summary[
            "turns"
        ]
        assert chat[1]["content"].startswith("This is the first turn")
        assert second.counters[seat]["llm_calls"] == second.summary["turns"]
    line = "Keywords: {" + ", ".join(
        f"{i}: {w}" for i, w in enumerate(second.summary["keywords"], 1)
    )
    old = "Keywords: {" + ", ".join(f"{i}: {w}" for i, w in enumerate(first.summary["keywords"], 1))
    texts = [m["content"] for m in agents["decoder"].chat]
    assert all(line in text for text in texts[1::2])
    assert not any(old in text for text in texts)


def test_the_aec_form_plays_the_same_game_as_the_parallel_form():
    parallel = play_scripted(scripted_agents(DecryptoPolicy(link=False)), seed=5)
    agents = scripted_agents(DecryptoPolicy(link=False))
    for seat, agent in agents.items():
        agent.reset(seat, seat, 5)
    spec = EpisodeSpec(
        env_id="decrypto_v0",
        seed=5,
        seats={s: {"kind": "llm_decrypto"} for s in SEATS},
        form="aec",
    )
    aec = play_episode(spec, agents=agents)
    assert aec.status == "done", aec.error
    assert aec.summary == parallel.summary


def test_system_as_user_puts_the_rules_in_the_first_user_message_only():
    agents = scripted_agents(DecryptoPolicy(), system_as_user=True)
    record = play_scripted(agents, seed=0)
    assert record.status == "done", record.error
    sent = agents["decoder"].model.received
    assert len(sent) == record.summary["turns"]
    for turn, chat in enumerate(sent, 1):
        assert [m["role"] for m in chat] == ["user", "assistant"] * (turn - 1) + ["user"]
        assert chat[0]["content"].startswith("You are playing a three-player version")
        assert "This is the first turn" in chat[0]["content"]
        assert not any(m["content"].startswith("You are playing") for m in chat[1:])


def test_the_llm_agents_take_max_turns_and_hint_limits_from_the_rules_message():
    good = DecryptoPolicy()

    def policy(messages, request):
        last = messages[-1]["content"]
        if "you are the Encoder" in last:  # legal by default, not with one word (then corrected)
            return 'ANSWER: {"hints": ["two words", "x", "y"]}'
        return good(messages, request)

    agents = scripted_agents(policy, max_attempts=2)
    env_kwargs = {"max_hint_words": 1, "max_hint_chars": 20, "max_turns": 5}
    record = play_scripted(agents, seed=0, env_kwargs=env_kwargs)
    assert record.status == "done", record.error
    encoder = agents["encoder"]
    assert encoder.rules.max_hint_words == 1 and encoder.rules.max_turns == 5
    system = encoder.chat[0]["content"]
    assert "a single word (at most 20 characters)" in system and "5 turns" in system
    corrections = [m["content"] for m in encoder.chat if m["content"].startswith("[GAME MASTER]")]
    assert "hint 1 'two words' has 2 words; at most 1 allowed" in corrections[0]
    assert record.counters["encoder"]["invalid_answers"] == record.summary["turns"]


def test_an_llm_agent_whose_inbox_has_no_rules_message_is_an_error():
    agent = scripted_agents(DecryptoPolicy())["decoder"]
    agent.reset("decoder", "decoder", 0)
    info = {"decision": "guess", "turn": 1, "hints": ["a", "b", "c"]}
    with pytest.raises(ValueError, match="decoder: no 'rules' message reached this agent"):
        asyncio.run(agent.aact(None, [], info))
