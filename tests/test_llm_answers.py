"""The LLM agents' answer loop against the test server: placeholders refused, constrained
answers read as JSON, the context window kept, retries at temperature 0 that change or stop,
and a seed per episode and attempt in every request."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from socialsim.agents.llm.base import OVERFLOW, LLMAgent
from socialsim.agents.llm.decrypto import parse_hints, parse_keywords
from socialsim.agents.llm.gossip_answers import parse_answer
from socialsim.envs.decrypto.protocol import SEATS
from socialsim.envs.gossip.protocol import GAMES

from socialsim.agent import RunContext
from socialsim.episode import EpisodeSpec
from socialsim.llm import AnswerParseError
from socialsim.runner import play_episode
from socialsim.testing.decrypto_policies import GAME_MASTER, DecryptoPolicy
from socialsim.testing.llm_server import ScriptedChatServer, request_schema

KEYWORDS = ["ceiling", "sword", "key", "corner"]


@pytest.fixture
def server(fresh_models):
    with ScriptedChatServer() as started:
        yield started


def table(server, **changes):
    return {"model": "openai/test", "api_base": server.url, "cache": False, **changes}


def decrypto_spec(model: dict, seed: int = 0, **options) -> EpisodeSpec:
    seat = {"kind": "llm_decrypto", "model": model, **options}
    return EpisodeSpec(env_id="decrypto_v0", seed=seed, seats={s: seat for s in SEATS})


# -- placeholders ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "hints",
    [["<hint 1>", "<hint 2>", "<hint 3>"], ["hint 1", "Hint 2.", "'hint 3'"]],
)
def test_hints_equal_to_the_formats_placeholders_are_invalid(hints):
    with pytest.raises(AnswerParseError, match="placeholder"):
        parse_hints(f"ANSWER: {json.dumps({'hints': hints})}", KEYWORDS)


@pytest.mark.parametrize("blank", ["no_hint", "No hint", "no-hint"])
def test_the_blank_fallback_hint_written_by_the_model_is_invalid(blank):
    with pytest.raises(AnswerParseError, match="the game's blank hint"):
        parse_hints(f"ANSWER: {json.dumps({'hints': ['ledge', blank, 'blade']})}", KEYWORDS)


def test_keywords_equal_to_the_placeholders_are_invalid_and_unknown_is_not():
    with pytest.raises(AnswerParseError, match="'<word 2>' is the answer format's placeholder"):
        parse_keywords('ANSWER: {"keywords": ["a", "<word 2>", "c", "d"]}')
    assert parse_keywords('ANSWER: {"keywords": ["unknown", "b", "c", "d"]}')[0] == "unknown"


def test_a_gossip_justification_equal_to_the_placeholder_is_invalid():
    donation = GAMES["donation"]
    text = '{"justification": "<your reasoning, in a few sentences>", "donor_action": "cooperate"}'
    with pytest.raises(AnswerParseError, match='"justification" repeats the placeholder'):
        parse_answer(donation, "donate", text, 0.0, 150)


def test_a_copied_placeholder_is_re_prompted_on_the_server(server):
    inner = DecryptoPolicy()

    def policy(messages, request):
        last = messages[-1]["content"]
        if "you are the Encoder" in last and not last.startswith(GAME_MASTER):
            return 'ANSWER: {"hints": ["<hint 1>", "<hint 2>", "<hint 3>"]}'
        return inner(messages, request)

    server.policy = policy
    record = play_episode(decrypto_spec(table(server)))
    assert record.status == "done", record.error
    encoder = record.counters["encoder"]
    assert encoder["invalid_answers"] == record.summary["turns"] and encoder["fallbacks"] == 0
    invalid = [e for e in record.events["encoder"] if "invalid" in e]
    assert invalid[0]["invalid"] == (
        "'<hint 1>' is the answer format's placeholder: write your own hints instead"
    )


# -- constrained answers -----------------------------------------------------------------------------


def test_a_constrained_game_sends_exact_schemas_and_reads_json_without_the_marker(server):
    inner = DecryptoPolicy()

    def policy(messages, request):  # the JSON alone, as constrained decoding gives it
        text = inner(messages, request)
        return text[text.rindex("{") :]

    server.policy = policy
    record = play_episode(decrypto_spec(table(server), structured_output=True))
    assert record.status == "done", record.error
    assert all(record.counters[s]["invalid_answers"] == 0 for s in SEATS)
    schemas = {
        request_schema(r)["properties"].__len__(): request_schema(r) for r in server.answered
    }
    hints = next(r for r in map(request_schema, server.answered) if "hints" in r["properties"])
    assert hints["properties"]["hints"] == {
        "type": "array",
        "items": {
            "type": "string",
            "minLength": 1,
            "maxLength": 32,
            "pattern": "^[^<> ]{1,15}( [^<> ]{1,15}){0,1}$",  # two words, 32 characters
        },
        "minItems": 3,
        "maxItems": 3,
    }
    guess = next(r for r in map(request_schema, server.answered) if "guess" in r["properties"])
    enum = guess["properties"]["guess"]["enum"]
    assert len(enum) == 24 and len(set(enum)) == 24 and "1-1-1" not in enum
    assert schemas  # every request carried a schema
    assert all(e["finish_reason"] == "stop" for e in record.events["encoder"])


def test_gossip_schemas_are_enums_of_the_choices_and_tones(server):
    from socialsim.agents.llm.gossip_answers import answer_schema

    donation = GAMES["donation"]
    donate = answer_schema(donation, "donate", 0.0, 150)["schema"]["properties"]
    assert donate["donor_action"] == {"type": "string", "enum": ["cooperate", "defect"]}
    assert donate["justification"] == {
        "type": "string",
        "minLength": 1,
        "maxLength": 400,
        "pattern": "^[^<>]{1,400}$",
    }
    gossip = answer_schema(donation, "gossip", 0.0, 150)["schema"]["properties"]
    assert gossip["tone"]["enum"] == ["praising", "neutral", "mocking", "complaint", "criticism"]
    assert gossip["gossip"]["maxLength"] == 6 * 149 == 894
    assert gossip["gossip"]["pattern"] == "^[^<>]{1,894}$"


# -- the answer loop on its own ------------------------------------------------------------------------


def ask(agent: LLMAgent, parse, chat=None, **overrides):
    chat = chat or [{"role": "user", "content": "Answer yes."}]

    def fallback():
        return "fallback"

    return asyncio.run(
        agent.ask(
            chat,
            parse,
            decision="test",
            correction=lambda r: f"Wrong: {r}",
            fallback=fallback,
            **overrides,
        )
    )


def only_yes(text: str) -> str:
    if text.strip() != "yes":
        raise AnswerParseError("say yes")
    return "yes"


def agent_on(server, seed: int = 7, directory: Path | None = None, **options) -> LLMAgent:
    model = options.pop("model", table(server))
    agent = LLMAgent(model, **options)
    agent.attach(RunContext(directory=directory))
    agent.reset("a", "a", seed)
    return agent


def test_at_temperature_0_re_prompts_sample_at_the_retry_temperature(server):
    server.policy = lambda m, r: "no"
    agent = agent_on(server, model=table(server, temperature=0.0), max_attempts=3)
    outcome = ask(agent, only_yes)
    assert outcome.fallback and outcome.value == "fallback"
    assert [r["temperature"] for r in server.answered] == [0.0, 0.7, 0.7]
    assert len({r["seed"] for r in server.answered}) == 3


def test_without_a_retry_temperature_a_repeated_greedy_reply_ends_the_decision(server):
    server.policy = lambda m, r: "no"
    agent = agent_on(
        server, model=table(server, temperature=0.0), max_attempts=5, retry_temperature=None
    )
    outcome = ask(agent, only_yes)
    assert outcome.fallback and server.requests == 2  # the second "no" repeated the first
    assert agent.counters == {"llm_calls": 2, "invalid_answers": 2, "fallbacks": 1}


def test_at_a_positive_temperature_a_repeat_is_asked_again(server):
    server.policy = lambda m, r: "no"
    agent = agent_on(server, model=table(server, temperature=0.5), max_attempts=3)
    ask(agent, only_yes)
    assert [r["temperature"] for r in server.answered] == [0.5, 0.5, 0.5]


def test_the_episode_seed_is_in_each_request_and_its_cache_key(server, tmp_path):
    server.policy = lambda m, r: "yes"
    model = table(server, cache=True, temperature=0.6)
    first = agent_on(server, seed=1, directory=tmp_path, model=model)
    second = agent_on(server, seed=2, directory=tmp_path, model=model)
    assert ask(first, only_yes).value == ask(second, only_yes).value == "yes"
    assert server.requests == 2  # the same prompt in two episodes: two samples
    assert server.answered[0]["seed"] != server.answered[1]["seed"]
    rerun = agent_on(server, seed=1, directory=tmp_path, model=model)
    ask(rerun, only_yes)
    assert server.requests == 2  # the same episode again: replayed from the cache
    assert rerun.events[0]["cached"] is True
    assert rerun.events[0]["request_hash"] == first.events[0]["request_hash"]


def test_failed_attempts_are_trimmed_to_fit_the_window(server):
    long_wrong = "no " * 300
    server.policy = lambda m, r: long_wrong if len(server.answered) == 0 else "yes"
    # a reply far over max_tokens, but within max_reply_chars, so it is kept whole
    model = table(server, context_window=100, max_tokens=10, max_reply_chars=1000)
    agent = agent_on(server, model=model)
    base = [{"role": "user", "content": "Answer yes, please, now."}]
    outcome = ask(agent, only_yes, chat=base)
    assert outcome.value == "yes" and outcome.attempts == 2
    assert server.answered[1]["messages"] == base  # the long failed attempt was dropped


def test_a_prompt_longer_than_the_window_is_an_invalid_answer_without_a_request(server):
    agent = agent_on(server, model=table(server, context_window=50, max_tokens=10))
    outcome = ask(agent, only_yes, chat=[{"role": "user", "content": "word " * 200}])
    assert outcome.fallback and server.requests == 0
    assert agent.events[0] == {
        "type": "context_overflow",
        "decision": "test",
        "answer_attempt": 1,
        "window": 50,
        "invalid": OVERFLOW,
    }


def test_a_game_on_a_server_whose_window_is_too_small_falls_back_and_is_not_failed(fresh_models):
    with ScriptedChatServer(
        policy=DecryptoPolicy(), family="llama_cpp_python", context_window=60
    ) as small:
        record = play_episode(decrypto_spec(table(small, max_retries=3), max_attempts=2))
        assert record.status == "done", record.error
        assert small.requests == 1  # the overflow states the window; the rest is estimated
        first = record.events["encoder"][0]
        assert first["error"].startswith("context_overflow: ") and first["invalid"] == OVERFLOW
        turns = record.summary["turns"]
        assert record.counters["encoder"]["fallbacks"] == turns
        assert record.counters["decoder"]["fallbacks"] == turns


def test_every_llm_seat_gets_generation_defaults_the_table_can_override():
    from socialsim.agents.llm.decrypto import DecryptoLLMAgent
    from socialsim.agents.llm.gossip import GossipLLMAgent

    assert GossipLLMAgent("openai/x").model_config == {
        "model": "openai/x",
        "temperature": 1.0,
        "max_tokens": 1024,
    }
    assert DecryptoLLMAgent({"model": "openai/x", "max_tokens": 99}).model_config == {
        "model": "openai/x",
        "temperature": 0.6,
        "max_tokens": 99,
    }


def test_an_unanswered_probe_question_is_stored_as_null(server):
    inner = DecryptoPolicy()

    def policy(messages, request):
        if messages[-1]["content"].startswith("Side question"):
            return "I cannot say."
        return inner(messages, request)

    server.policy = policy
    spec = decrypto_spec(table(server), max_attempts=1)
    spec = EpisodeSpec(env_id=spec.env_id, seed=0, seats=spec.seats, probes=[{"name": "piaget"}])
    record = play_episode(spec)
    assert record.status == "done", record.error
    entries = [p for p in record.probes if p["probe"] == "piaget"]
    assert entries and all(e["prediction"] is None and e["answer"] is None for e in entries)
    assert '"answer": null' in json.dumps(entries[0])
