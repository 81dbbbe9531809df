"""The LLM layer end to end: litellm against a real OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import hashlib
import json

import pytest

from socialsim.llm import (
    Accounting,
    AnswerParseError,
    BudgetExceeded,
    Cache,
    ConcurrencyLimit,
    LiteLLMModel,
    ProviderError,
    Retry,
    ScriptedModel,
    Settings,
    build_model,
    extract_answer,
    extract_json,
    load_litellm,
    require_fields,
)
from socialsim.llm.chat import Chat, check_messages, prompt_hash
from socialsim.plain_json import canonical_json

HELLO = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "say hello please"},
]


def config(server, **changes) -> dict:
    """A model on the test server through litellm: tiny backoff, no cache and no limit unless
    asked."""
    return {
        "model": "openai/test-model",
        "api_base": server.url,
        "transport": "litellm",
        "timeout": 5,
        "backoff": 0.001,
        "cache": False,
        "concurrency": 0,
        **changes,
    }


def run(coroutine):
    return asyncio.run(coroutine)


@pytest.fixture(autouse=True)
def _fresh(fresh_models):
    yield


# -- a plain call --------------------------------------------------------------------------------


def test_reply_carries_the_servers_text_and_usage(llm_server):
    model = build_model(config(llm_server))
    reply = run(model.complete(HELLO))
    assert reply.text == "echo: say hello please"
    assert (reply.prompt_tokens, reply.completion_tokens) == (6, 4)  # words, as the server counts
    assert (reply.cached, reply.attempt, reply.model) == (False, 1, "openai/test-model")
    assert llm_server.requests == 1
    sent = llm_server.answered[0]
    assert sent["messages"] == HELLO and sent["model"] == "test-model"


def test_settings_and_provider_params_reach_the_server(llm_server):
    model = build_model(
        config(
            llm_server,
            temperature=0.25,
            max_tokens=77,
            seed=5,
            params={"top_p": 0.5, "stop": ["END"]},
        )
    )
    run(model.complete(HELLO, seed=9, response_format={"type": "json_object"}))
    sent = llm_server.answered[0]
    assert (sent["temperature"], sent["max_tokens"], sent["seed"], sent["top_p"]) == (
        0.25,
        77,
        9,
        0.5,
    )
    assert sent["stop"] == ["END"] and sent["response_format"] == {"type": "json_object"}


def test_event_is_json_with_every_field(llm_server):
    event = run(build_model(config(llm_server)).complete(HELLO)).event()
    assert json.loads(json.dumps(event)) == event
    assert set(event) >= {
        "prompt_hash",
        "reply",
        "prompt_tokens",
        "completion_tokens",
        "latency_s",
        "cached",
        "attempt",
        "model",
        "error",
    }
    assert event["reply"] == "echo: say hello please" and event["error"] is None


def test_a_rejected_call_raises_an_error_whose_event_has_the_prompt_hash_of_the_success(llm_server):
    llm_server.set_schedule([None, "bad_request"])
    model = build_model(config(llm_server))
    success = run(model.complete(HELLO)).event()
    with pytest.raises(ProviderError) as raised:
        run(model.complete(HELLO, seed=1))
    failure = raised.value.event()
    assert (failure["reply"], failure["error"][:8]) == (None, "rejected")
    assert failure["prompt_hash"] == success["prompt_hash"]
    assert json.loads(json.dumps(failure)) == failure


def test_api_key_is_read_from_the_named_variable_and_never_described(llm_server, monkeypatch):
    monkeypatch.setenv("SOCIALSIM_TEST_KEY", "sk-secret-123")
    model = build_model(config(llm_server, api_key_env="SOCIALSIM_TEST_KEY"))
    reply = run(model.complete(HELLO))
    assert "sk-secret-123" not in json.dumps(model.describe()) + json.dumps(reply.event())
    assert model.describe()["api_key_env"] == "SOCIALSIM_TEST_KEY"


def test_missing_api_key_variable_is_a_config_error(llm_server, monkeypatch):
    monkeypatch.delenv("SOCIALSIM_NO_SUCH_KEY", raising=False)
    with pytest.raises(ValueError, match="SOCIALSIM_NO_SUCH_KEY"):
        build_model(config(llm_server, api_key_env="SOCIALSIM_NO_SUCH_KEY"))


# -- retries -------------------------------------------------------------------------------------


@pytest.mark.parametrize("fault", ["rate_limit", "server_error", "timeout", "empty"])
def test_one_transient_fault_is_retried_and_the_second_attempt_answers(llm_server, fault):
    llm_server.timeout_sleep_s = 0.6
    llm_server.set_schedule([fault])
    reply = run(build_model(config(llm_server, timeout=0.3, max_retries=2)).complete(HELLO))
    assert reply.text == "echo: say hello please"
    assert reply.attempt == 2
    assert llm_server.requests == 2
    assert llm_server.faults[fault] == 1


def test_every_transient_fault_in_a_row_is_survived_within_the_limit(llm_server):
    llm_server.timeout_sleep_s = 0.6
    llm_server.set_schedule(["rate_limit", "server_error", "timeout", "empty"])
    reply = run(build_model(config(llm_server, timeout=0.3, max_retries=4)).complete(HELLO))
    assert (reply.attempt, llm_server.requests) == (5, 5)


def test_exhausted_retries_raise_provider_error_naming_attempts(llm_server):
    llm_server.set_schedule(["server_error"] * 3)
    model = build_model(config(llm_server, max_retries=2))
    with pytest.raises(ProviderError, match="gave up after 3 attempts") as caught:
        run(model.complete(HELLO))
    assert (caught.value.kind, caught.value.status, caught.value.attempts) == (
        "server_error",
        500,
        3,
    )
    assert llm_server.requests == 3
    event = caught.value.event()
    assert (
        event["error"].startswith("server_error")
        and event["attempt"] == 3
        and event["reply"] is None
    )


def test_empty_replies_past_the_limit_raise_provider_error(llm_server):
    llm_server.set_schedule(["empty", "empty"])
    with pytest.raises(ProviderError) as caught:
        run(build_model(config(llm_server, max_retries=1)).complete(HELLO))
    assert caught.value.kind == "empty_reply" and llm_server.requests == 2


def test_a_bad_request_is_not_retried(llm_server):
    llm_server.set_schedule(["bad_request"])
    with pytest.raises(ProviderError) as caught:
        run(build_model(config(llm_server, max_retries=5)).complete(HELLO))
    assert (caught.value.kind, caught.value.status) == ("rejected", 400)
    assert llm_server.requests == 1


def test_a_bad_request_after_retries_reports_every_attempt(llm_server):
    llm_server.set_schedule(["rate_limit", "rate_limit", "bad_request"])
    model = build_model(config(llm_server, max_retries=5))
    with pytest.raises(ProviderError) as caught:
        run(model.complete(HELLO))
    assert (caught.value.kind, caught.value.attempts) == ("rejected", 3)
    assert model.find(Accounting).requests == llm_server.requests == 3


def test_wrappers_compose_around_an_in_process_model(tmp_path):
    inner = ScriptedModel(lambda messages, settings: f"seed {settings.seed}", temperature=0.0)
    model = Accounting(Cache(Retry(inner, 2, base_delay=0.0), tmp_path / "c.sqlite"))
    texts = [run(model.complete(HELLO, seed=s)).text for s in (1, 2, 1)]
    assert texts == ["seed 1", "seed 2", "seed 1"]
    assert inner.calls == 2 and model.cache_hits == 1


def test_a_refused_connection_is_retried_then_reported(llm_server):
    model = build_model(config(llm_server, max_retries=2))
    llm_server.stop()  # nothing listens on the port any more
    with pytest.raises(ProviderError) as caught:
        run(model.complete(HELLO))
    assert (caught.value.kind, caught.value.attempts) == ("connection", 3)


def test_random_faults_at_configured_rates_are_all_survived_and_accounted(llm_server):
    llm_server.fault_rates = {"rate_limit": 0.2, "server_error": 0.2, "empty": 0.1}
    model = build_model(config(llm_server, max_retries=20, concurrency=4))

    async def thirty():
        return await asyncio.gather(
            *(model.complete([{"role": "user", "content": f"q{i}"}]) for i in range(30))
        )

    replies = run(thirty())
    totals = model.find(Accounting).snapshot()
    assert sorted(r.text for r in replies) == sorted(f"echo: q{i}" for i in range(30))
    assert sum(llm_server.faults.values()) > 0
    assert totals["requests"] == llm_server.requests == 30 + sum(llm_server.faults.values())
    assert sum(r.attempt for r in replies) == llm_server.requests


def test_the_servers_fault_draws_follow_its_seed():
    from socialsim.testing.llm_server import ScriptedChatServer

    def draws(seed):
        server = ScriptedChatServer(fault_rates={"rate_limit": 0.3, "garbage": 0.3}, seed=seed)
        return [server._begin() for _ in range(40)]

    assert draws(1) == draws(1)
    assert draws(1) != draws(2)
    assert {None, "rate_limit", "garbage"} == set(draws(1))


def test_server_counters_are_served_at_stats(llm_server):
    import urllib.request

    run(build_model(config(llm_server)).complete(HELLO))
    with urllib.request.urlopen(llm_server.url.removesuffix("/v1") + "/stats") as response:
        stats = json.load(response)
    assert (stats["requests"], stats["usage"]) == (1, {"prompt_tokens": 6, "completion_tokens": 4})


def test_backoff_is_exponential_with_jitter_from_its_own_seed():
    inner = ScriptedModel(lambda messages, settings: "x")
    first, second = (
        Retry(inner, 5, base_delay=1.0, max_delay=8.0, seed=3),
        Retry(inner, 5, base_delay=1.0, max_delay=8.0, seed=3),
    )
    delays = [first.delay(n) for n in range(1, 7)]
    assert delays == [second.delay(n) for n in range(1, 7)]
    for n, wait in enumerate(delays, start=1):
        ceiling = min(8.0, 2.0 ** (n - 1))
        assert ceiling / 2 <= wait <= ceiling
    assert Retry(inner, 5, base_delay=1.0, max_delay=8.0, seed=3).delay(1, retry_after=5.0) == 5.0


# -- cache ---------------------------------------------------------------------------------------


def test_second_identical_call_is_served_from_the_cache_with_zero_requests(llm_server, tmp_path):
    model = build_model(config(llm_server, cache=str(tmp_path / "replies.sqlite")))
    first = run(model.complete(HELLO))
    second = run(model.complete(HELLO))
    assert llm_server.requests == 1
    assert (second.text, second.cached, second.attempt) == (first.text, True, 0)
    assert (second.prompt_tokens, second.completion_tokens) == (
        first.prompt_tokens,
        first.completion_tokens,
    )


def test_cache_is_on_disk_under_the_run_dir_and_outlives_the_model(
    llm_server, tmp_path, fresh_models
):
    from socialsim.llm import forget_models

    run(build_model(config(llm_server, cache=True), run_dir=tmp_path).complete(HELLO))
    assert (tmp_path / "llm_cache.sqlite").exists()
    forget_models()
    again = run(build_model(config(llm_server, cache=True), run_dir=tmp_path).complete(HELLO))
    assert again.cached and llm_server.requests == 1


def test_two_connections_to_one_cache_file_see_each_others_replies(llm_server, tmp_path):
    """As two processes sharing a cache would: separate SQLite connections on one WAL file."""
    from socialsim.llm import ReplyStore

    path = tmp_path / "shared.sqlite"
    inner = LiteLLMModel("openai/test-model", api_base=llm_server.url)
    run(Cache(inner, ReplyStore(path)).complete(HELLO))
    again = run(Cache(inner, ReplyStore(path)).complete(HELLO))
    assert again.cached and llm_server.requests == 1


def test_concurrent_identical_calls_send_one_request(llm_server, tmp_path):
    llm_server.latency_s = 0.05
    model = build_model(config(llm_server, cache=str(tmp_path / "c.sqlite")))

    async def five():
        return await asyncio.gather(*(model.complete(HELLO) for _ in range(5)))

    replies = run(five())
    assert llm_server.requests == 1
    assert sorted(r.cached for r in replies) == [False, True, True, True, True]


def test_errors_are_never_cached(llm_server, tmp_path):
    llm_server.set_schedule(["bad_request"])
    model = build_model(config(llm_server, cache=str(tmp_path / "c.sqlite")))
    with pytest.raises(ProviderError):
        run(model.complete(HELLO))
    assert not run(model.complete(HELLO)).cached
    assert llm_server.requests == 2


BASE = Settings(
    model="openai/m",
    api_base="http://127.0.0.1:1/v1",
    temperature=0.5,
    max_tokens=100,
    seed=1,
    params={"top_p": 0.9},
)


@pytest.mark.parametrize(
    "settings, messages",
    [
        (BASE.with_overrides({"temperature": 0.6}), HELLO),
        (BASE.with_overrides({"max_tokens": 101}), HELLO),
        (BASE.with_overrides({"seed": 2}), HELLO),
        (BASE.with_overrides({"top_p": 0.8}), HELLO),
        (BASE.with_overrides({"reasoning_effort": "low"}), HELLO),
        (BASE.with_overrides({"response_format": {"type": "json_object"}}), HELLO),
        (Settings(**{**BASE.__dict__, "model": "openai/n"}), HELLO),
        (Settings(**{**BASE.__dict__, "api_base": "http://127.0.0.1:2/v1"}), HELLO),
        (BASE, [HELLO[0], {"role": "user", "content": "say hello please!"}]),
        (BASE, [HELLO[0], {"role": "assistant", "content": "say hello please"}]),
        (BASE, HELLO[1:]),
    ],
    ids=[
        "temperature",
        "max_tokens",
        "seed",
        "param",
        "new_param",
        "response_format",
        "model",
        "api_base",
        "content",
        "role",
        "fewer_messages",
    ],
)
def test_cache_key_changes_with_any_part_of_the_request(settings, messages):
    assert settings.request_hash(messages) != BASE.request_hash(HELLO)


def test_cache_key_ignores_timeout_and_dict_order():
    reordered = [{"content": m["content"], "role": m["role"]} for m in HELLO]
    assert BASE.with_overrides({"timeout": 1.0}).request_hash(reordered) == BASE.request_hash(HELLO)


@pytest.mark.parametrize(
    "settings",
    [
        BASE,
        Settings(model="openai/m"),
        BASE.with_overrides({"reasoning_effort": "low", "stop": ["\n"], "seed": None}),
        BASE.with_overrides(
            {
                "schema": {
                    "name": "a",
                    "schema": {"type": "object", "properties": {"a": {"type": "string"}}},
                }
            }
        ),
    ],
    ids=["base", "bare", "params", "schema"],
)
def test_the_cache_key_is_the_hash_of_the_requests_canonical_json(settings):
    # the key must stay the hash of this text: a cache filled before must still be hit
    chat = check_messages([*HELLO, {"role": "assistant", "content": 'héllo "wörld"\n'}])
    text = canonical_json(settings.request(chat), allow_nan=False)
    assert settings.request_json(chat) == text
    assert settings.request_hash(chat) == hashlib.sha256(text.encode()).hexdigest()
    assert settings.request_hash(list(chat)) == settings.request_hash(chat)
    plain = canonical_json([dict(m) for m in chat], allow_nan=False)
    assert (
        prompt_hash(chat)
        == prompt_hash(list(chat))
        == hashlib.sha256(plain.encode()).hexdigest()[:16]
    )


def test_a_chat_grown_message_by_message_encodes_as_the_whole_chat():
    more = [{"role": "assistant", "content": "hi ü"}, {"role": "user", "content": "and\nagain"}]
    grown = check_messages(HELLO[:1]).then(HELLO[1:]).then(more)
    whole = [*HELLO, *more]
    assert list(grown) == whole
    assert grown.json == canonical_json(whole, allow_nan=False)
    assert prompt_hash(grown) == prompt_hash(whole)
    assert BASE.request_hash(grown) == BASE.request_hash(whole)
    with pytest.raises(ValueError, match=r"messages\[0\]\.role"):
        grown.then([{"role": "narrator", "content": "x"}])
    assert Chat(()).then(HELLO) == check_messages(HELLO)
    assert Chat(()).then(HELLO).json == check_messages(HELLO).json
    with pytest.raises(ValueError, match="non-empty"):
        check_messages(Chat(()))  # the empty chat is a start, never a request


def test_a_chat_asked_with_other_settings_in_turn_gets_each_ones_request_hash():
    # a Chat keeps the hash of its last request: asked with other settings, it is never stale
    chat = check_messages(HELLO)
    other = BASE.with_overrides({"seed": 3})

    def plain_hash(settings):
        return hashlib.sha256(settings.request_json(list(chat)).encode()).hexdigest()

    assert plain_hash(BASE) != plain_hash(other)
    for settings in (BASE, other, other, BASE, other):
        assert settings.request_hash(chat) == plain_hash(settings)


def test_a_changed_seed_misses_the_cache(llm_server, tmp_path):
    model = build_model(config(llm_server, cache=str(tmp_path / "c.sqlite")))
    run(model.complete(HELLO, seed=1))
    assert not run(model.complete(HELLO, seed=2)).cached
    assert run(model.complete(HELLO, seed=1)).cached
    assert llm_server.requests == 2


# -- concurrency ---------------------------------------------------------------------------------


def test_concurrency_limit_keeps_at_most_k_requests_in_flight(llm_server):
    llm_server.latency_s = 0.1
    model = build_model(config(llm_server, concurrency=3))

    async def twelve():
        return await asyncio.gather(
            *(model.complete([{"role": "user", "content": f"n{i}"}]) for i in range(12))
        )

    replies = run(twelve())
    assert sorted(r.text for r in replies) == sorted(f"echo: n{i}" for i in range(12))
    assert llm_server.requests == 12
    assert llm_server.max_in_flight <= 3


def test_without_a_limit_the_same_calls_overlap_beyond_k(llm_server):
    """The control of the test above: unlimited, 4 requests are at the server at once. The
    server holds each request until 4 are waiting (a barrier), so no timing is assumed."""
    import threading

    barrier = threading.Barrier(4, timeout=20)
    llm_server.policy = lambda messages, request: f"passed {barrier.wait()}"
    model = build_model(config(llm_server, concurrency=0, timeout=30))

    async def eight():
        await asyncio.gather(
            *(model.complete([{"role": "user", "content": f"n{i}"}]) for i in range(8))
        )

    run(eight())
    assert llm_server.max_in_flight >= 4


def test_the_limit_is_shared_by_every_model_on_the_same_endpoint(llm_server):
    llm_server.latency_s = 0.05
    # Different configs (two agents, two temperatures) are different stacks on one model.
    cold = build_model(config(llm_server, concurrency=2, temperature=0.0))
    warm = build_model(config(llm_server, concurrency=2, temperature=1.0))
    assert cold is not warm

    async def both():
        calls = [
            m.complete([{"role": "user", "content": f"n{i}"}])
            for i in range(5)
            for m in (cold, warm)
        ]
        await asyncio.gather(*calls)
        return cold.find(ConcurrencyLimit).slots().max_in_flight

    assert run(both()) == 2
    assert llm_server.max_in_flight <= 2


def test_conflicting_limits_for_one_model_raise(llm_server):
    two = build_model(config(llm_server, concurrency=2))
    three = build_model(config(llm_server, concurrency=3))

    async def both():
        await two.complete(HELLO)
        await three.complete(HELLO)

    with pytest.raises(ValueError, match="already has a limit of 2"):
        run(both())


def test_the_limit_works_in_successive_event_loops(llm_server):
    model = build_model(config(llm_server, concurrency=1))
    run(model.complete(HELLO))
    run(model.complete(HELLO))  # a new asyncio.run: a new loop, new slots
    assert llm_server.requests == 2


# -- accounting and budget ------------------------------------------------------------------------


def test_accounting_counts_exact_calls_requests_hits_and_server_tokens(llm_server, tmp_path):
    llm_server.set_schedule(["rate_limit", None, "server_error", None])
    model = build_model(config(llm_server, cache=str(tmp_path / "c.sqlite")))

    async def calls():
        await model.complete(HELLO)  # 429 then answered: 2 requests
        await model.complete([{"role": "user", "content": "one two three"}])  # 500 then answered
        await model.complete(HELLO)  # cached

    run(calls())
    totals = model.find(Accounting).snapshot()
    assert totals["calls"] == 3
    assert totals["cache_hits"] == 1
    assert totals["requests"] == 4 == llm_server.requests
    assert totals["failures"] == 0
    assert totals["prompt_tokens"] == llm_server.usage["prompt_tokens"] == 6 + 3
    assert totals["completion_tokens"] == llm_server.usage["completion_tokens"] == 4 + 4
    assert totals["unpriced"] == 2 and totals["cost"] == 0.0  # litellm has no price for test-model


def test_accounting_counts_failures_and_their_requests(llm_server):
    llm_server.set_schedule(["server_error"] * 2)
    model = build_model(config(llm_server, max_retries=1))
    with pytest.raises(ProviderError):
        run(model.complete(HELLO))
    totals = model.find(Accounting).snapshot()
    assert (totals["calls"], totals["failures"], totals["requests"]) == (0, 1, 2)


def test_cost_is_litellms_price_times_the_servers_tokens_when_the_price_is_known(llm_server):
    model = build_model(config(llm_server, model="openai/gpt-4o-mini"))
    reply = run(model.complete(HELLO))
    price = load_litellm().model_cost["gpt-4o-mini"]
    expected = 6 * price["input_cost_per_token"] + 4 * price["output_cost_per_token"]
    assert reply.cost == pytest.approx(expected, rel=1e-9)
    assert model.find(Accounting).cost == pytest.approx(expected, rel=1e-9)


def test_unknown_price_gives_none_not_an_error(llm_server):
    assert run(build_model(config(llm_server)).complete(HELLO)).cost is None


def test_an_unpriced_model_stays_unpriced_and_sends_the_same_request_until_litellm_learns_a_price(
    llm_server,
):
    seen = []
    llm_server.policy = lambda messages, request: seen.append(request) or "hello"
    model = build_model(config(llm_server, model="openai/unpriced-model"))
    assert [run(model.complete(HELLO, seed=i)).cost for i in range(3)] == [None, None, None]
    fields = [{k: v for k, v in r.items() if k != "seed"} for r in seen]
    assert fields[0] == fields[1] == fields[2]  # the shortcut never reaches the wire
    load_litellm().register_model(
        {
            "openai/unpriced-model": {
                "input_cost_per_token": 1e-6,
                "output_cost_per_token": 2e-6,
                "litellm_provider": "openai",
                "mode": "chat",
            }
        }
    )
    try:
        reply = run(model.complete(HELLO, seed=9))
        assert reply.cost == pytest.approx(
            reply.prompt_tokens * 1e-6 + reply.completion_tokens * 2e-6
        )
    finally:
        for key in ("openai/unpriced-model", "unpriced-model"):
            load_litellm().model_cost.pop(key, None)


def test_budget_refuses_the_call_past_max_calls(llm_server):
    model = build_model(config(llm_server, budget=2))

    async def three():
        await model.complete([{"role": "user", "content": "a"}])
        await model.complete([{"role": "user", "content": "b"}])
        await model.complete([{"role": "user", "content": "c"}])

    with pytest.raises(BudgetExceeded, match="max_calls=2"):
        run(three())
    assert llm_server.requests == 2


def test_retries_count_against_the_budget(llm_server):
    llm_server.set_schedule(["server_error", "server_error"])
    model = build_model(config(llm_server, budget={"calls": 2}, max_retries=5))
    with pytest.raises(BudgetExceeded):
        run(model.complete(HELLO))
    assert llm_server.requests == 2


def test_cost_budget_refuses_once_spent(llm_server):
    model = build_model(config(llm_server, model="openai/gpt-4o-mini", budget={"cost": 1e-9}))
    run(model.complete(HELLO))
    with pytest.raises(BudgetExceeded, match="max_cost"):
        run(model.complete([{"role": "user", "content": "more"}]))
    assert llm_server.requests == 1


def test_token_budget_refuses_once_spent(llm_server):
    model = build_model(config(llm_server, budget={"tokens": 10}))
    run(model.complete(HELLO))  # 6 + 4 tokens
    with pytest.raises(BudgetExceeded, match="max_tokens=10"):
        run(model.complete([{"role": "user", "content": "more"}]))


# -- build_model ---------------------------------------------------------------------------------


def test_unknown_config_key_names_it_and_the_allowed_keys():
    with pytest.raises(
        ValueError, match=r"unknown key 'temprature'.*allowed keys: model, api_base"
    ):
        build_model({"model": "openai/x", "temprature": 0.5})


@pytest.mark.parametrize(
    "bad, field",
    [
        ({"temperature": -1}, "temperature"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"concurrency": -2}, "concurrency"),
        ({"max_retries": -1}, "max_retries"),
        ({"budget": {"dollars": 1}}, "budget"),
        ({"cache": 3}, "cache"),
        ({"params": {"seed": 3}}, "params.seed"),
    ],
)
def test_bad_config_values_name_the_field(bad, field):
    with pytest.raises(ValueError, match=field):
        build_model(
            {"model": "openai/x", "api_base": "http://127.0.0.1:9/v1", "cache": False, **bad}
        )


def test_equal_configs_give_one_shared_model(llm_server):
    assert build_model(config(llm_server)) is build_model(config(llm_server))


def test_the_stack_is_described_outermost_first(llm_server, tmp_path):
    model = build_model(
        config(llm_server, cache=True, concurrency=4, budget=9, max_retries=3), run_dir=tmp_path
    )
    layers = [layer["layer"] for layer in model.describe()["layers"]]
    assert layers == [
        "Accounting",
        "Cache",
        "ReplyLimit",
        "Retry",
        "CallBudget",
        "ConcurrencyLimit",
        "LiteLLMModel",
    ]
    assert isinstance(model.find(Cache), Cache) and model.find(Retry).max_retries == 3


def test_a_call_cannot_override_the_model():
    model = LiteLLMModel("openai/x", api_base="http://127.0.0.1:9/v1")
    with pytest.raises(ValueError, match="model: fixed per model"):
        run(model.complete(HELLO, model="openai/y"))


@pytest.mark.parametrize(
    "messages", [[], "hello", [{"role": "user"}], [{"role": "robot", "content": "x"}]]
)
def test_malformed_messages_are_rejected_before_any_request(messages, llm_server):
    with pytest.raises(ValueError, match="messages"):
        run(build_model(config(llm_server)).complete(messages))
    assert llm_server.requests == 0


# -- parsing -------------------------------------------------------------------------------------


def test_answer_after_marker_inside_a_code_fence():
    text = 'I think 4-1-3.\n```json\nANSWER: {"guess": "4-1-3"}\n```'
    assert extract_answer(text) == {"guess": "4-1-3"}


def test_answer_with_nested_braces_and_braces_inside_strings():
    text = 'ANSWER: {"hints": ["a}b", "{c", "d"], "meta": {"why": "x {y} z"}}'
    assert extract_answer(text) == {"hints": ["a}b", "{c", "d"], "meta": {"why": "x {y} z"}}


def test_example_before_the_marker_is_ignored():
    text = 'The format is {"guess": "1-2-3"}. ANSWER: {"guess": "2-3-4"}'
    assert extract_answer(text) == {"guess": "2-3-4"}


def test_last_marker_wins():
    assert extract_answer('ANSWER: {"guess": "1-2-3"} wait, no. ANSWER: {"guess": "3-2-1"}') == {
        "guess": "3-2-1"
    }


def test_a_truncated_last_answer_falls_back_to_the_last_complete_one():
    assert extract_answer('ANSWER: {"guess": "1-2-3"}\nOn reflection ANSWER: {"guess": "3-') == {
        "guess": "1-2-3"
    }


def test_last_of_several_objects_after_the_marker():
    assert extract_answer('answer: {"a": 1} {"b": 2}') == {"b": 2}


def test_markdown_bold_marker():
    assert extract_answer('**ANSWER:** {"guess": "1-4-2"}') == {"guess": "1-4-2"}


@pytest.mark.parametrize(
    "text, expected",
    [
        ("ANSWER: {'guess': '1-2-3', 'sure': True}", {"guess": "1-2-3", "sure": True}),
        ('ANSWER: {"hints": ["a", "b", "c",],}', {"hints": ["a", "b", "c"]}),
        ("ANSWER: {\u201cguess\u201d: \u201c1-2-3\u201d}", {"guess": "1-2-3"}),
    ],
    ids=["python_dict", "trailing_commas", "curly_quotes"],
)
def test_lenient_reading_of_near_json(text, expected):
    assert extract_answer(text) == expected


@pytest.mark.parametrize(
    "text, reason",
    [
        ("", "the reply is empty"),
        ("   \n", "the reply is empty"),
        ('{"guess": "1-2-3"}', "the reply has no 'ANSWER:'"),
        ('ANSWER: {"guess": "1-2-3"', "no complete JSON object follows 'ANSWER:'"),
        (
            'ANSWER: ["1", "2", "3"]',
            "the answer after 'ANSWER:' must be a JSON object {...}, not a list",
        ),
        ('ANSWER: "1-2-3"', "the answer after 'ANSWER:' must be a JSON object {...}, not a string"),
    ],
)
def test_parse_errors_say_what_was_wrong(text, reason):
    with pytest.raises(AnswerParseError) as caught:
        extract_answer(text)
    assert str(caught.value).startswith(reason)


def test_missing_marker_can_fall_back_to_the_last_object():
    assert extract_answer('sure: {"guess": "1-2-3"}', require_marker=False) == {"guess": "1-2-3"}


def test_custom_marker():
    assert extract_answer('GUESS => {"g": 1}', marker="GUESS =>") == {"g": 1}


def test_extract_json_takes_the_last_object_anywhere():
    assert extract_json('```json\n{"a": 1}\n```\nthen {"b": {"c": "}"}}') == {"b": {"c": "}"}}
    with pytest.raises(AnswerParseError, match="no complete JSON object"):
        extract_json("no json here {oops")


def test_require_fields_names_missing_and_mistyped_fields():
    assert require_fields({"guess": "1-2-3", "x": 1}, {"guess": str}) == {"guess": "1-2-3", "x": 1}
    with pytest.raises(AnswerParseError, match='lacks the field "guess"'):
        require_fields({"hints": []}, {"guess": str})
    with pytest.raises(AnswerParseError, match='"hints" must be a list, not a string'):
        require_fields({"hints": "a b c"}, {"hints": list})
    with pytest.raises(AnswerParseError, match='"donate" must be an integer, not true or false'):
        require_fields({"donate": True}, {"donate": int})
