"""Structured output in every server dialect, the probe before a run's first episode, and the
server's own word on its family and context window, against the test server
(socialsim.testing.llm_server)."""

from __future__ import annotations

import asyncio
import importlib.util
import itertools

import pytest

from socialsim import config, registry, results
from socialsim.agent import RunContext
from socialsim.llm import (
    ProviderError,
    build_model,
    gbnf,
    probe_structured_output,
    server_info,
    wire_fields,
)
from socialsim.testing.llm_server import ScriptedChatServer, request_format, request_schema

HELLO = [{"role": "user", "content": "pick one"}]
SCHEMA = {
    "name": "pick",
    "schema": {
        "type": "object",
        "properties": {"choice": {"type": "string", "enum": ["a", "b"]}},
        "required": ["choice"],
        "additionalProperties": False,
    },
}
FORMS = ("openai", "llama_cpp_python", "vllm", "llama_cpp", "grammar")


def run(coroutine):
    return asyncio.run(coroutine)


def table(server, **changes):
    return {"model": "openai/test", "api_base": server.url, "cache": False, **changes}


@pytest.fixture
def server(fresh_models):
    with ScriptedChatServer(policy=lambda messages, request: '{"choice": "a"}') as started:
        yield started


def test_the_wire_fields_of_each_format_are_exact():
    body = SCHEMA["schema"]
    assert wire_fields("openai", SCHEMA) == {
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "pick", "schema": body, "strict": True},
        }
    }
    assert wire_fields("llama_cpp_python", SCHEMA) == {
        "response_format": {"type": "json_object", "schema": body}
    }
    assert wire_fields("vllm", SCHEMA) == {"guided_json": body}
    assert wire_fields("llama_cpp", SCHEMA) == {"json_schema": body}
    assert wire_fields("grammar", SCHEMA) == {
        "grammar": 'root ::= "{" "\\"choice\\": " root-0 "}"\nroot-0 ::= "\\"a\\"" | "\\"b\\""\n'
    }


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("transport", ["openai_http", "litellm"])
def test_each_format_reaches_a_server_that_accepts_only_it(server, form, transport):
    server.structured_formats = (form,)
    model = build_model(table(server, structured_format=form, transport=transport))
    reply = run(model.complete(HELLO, schema=SCHEMA))
    assert reply.text == '{"choice": "a"}'
    sent = server.answered[-1]
    assert request_format(sent) == form
    assert {name: sent[name] for name in wire_fields(form, SCHEMA)} == wire_fields(form, SCHEMA)


def test_a_format_the_server_refuses_is_a_server_error(server):
    server.structured_formats = ("llama_cpp_python",)
    model = build_model(table(server, structured_format="openai", max_retries=0))
    with pytest.raises(ProviderError, match="unsupported structured output form 'openai'"):
        run(model.complete(HELLO, schema=SCHEMA))


@pytest.mark.parametrize(
    "family, form",
    [
        ("llama_cpp_python", "grammar"),
        ("llama_cpp", "llama_cpp"),
        ("vllm", "openai"),
        ("openai_compatible", "openai"),
    ],
)
def test_auto_sends_the_form_of_the_servers_family(fresh_models, family, form):
    with ScriptedChatServer(
        policy=lambda m, r: '{"choice": "b"}', family=family, structured_formats=(form,)
    ) as server:
        model = build_model(table(server))  # structured_format = "auto"
        assert run(model.complete(HELLO, schema=SCHEMA)).text == '{"choice": "b"}'
        assert request_format(server.answered[-1]) == form
        sent = server.answered[-1]
        if form == "grammar":
            assert sent["grammar"] == gbnf(SCHEMA["schema"])
        else:
            assert request_schema(sent) == SCHEMA["schema"]


def test_the_schema_and_format_are_in_the_cache_key_and_a_plain_call_keeps_its_key(server):
    model = build_model(table(server))
    plain = model.settings.request(HELLO)
    assert "schema" not in plain and "structured_format" not in plain
    constrained = model.settings.with_overrides({"schema": SCHEMA})
    assert constrained.request(HELLO)["schema"] == SCHEMA
    assert constrained.request(HELLO)["structured_format"] == "auto"
    assert constrained.request_hash(HELLO) != model.settings.request_hash(HELLO)


def test_a_bad_schema_or_format_names_the_field(server):
    with pytest.raises(ValueError, match="structured_format: expected one of 'auto', 'openai'"):
        build_model(table(server, structured_format="xml"))
    model = build_model(table(server))
    with pytest.raises(ValueError, match="schema: expected"):
        run(model.complete(HELLO, schema={"type": "object"}))


# -- the grammar writer ---------------------------------------------------------------------------

CODES = ["-".join(map(str, c)) for c in itertools.permutations((1, 2, 3, 4), 3)]
HINTS_SCHEMA = {
    "type": "object",
    "properties": {
        "reasoning": {"type": "string", "maxLength": 400},
        "hints": {
            "type": "array",
            "items": {"type": "string", "minLength": 1, "maxLength": 32},
            "minItems": 3,
            "maxItems": 3,
        },
    },
}


def test_the_grammar_of_three_hints_is_exact():
    assert gbnf(HINTS_SCHEMA) == (
        'root ::= "{" "\\"reasoning\\": " root-0 ", \\"hints\\": " root-1 "}"\n'
        'root-0 ::= "\\"" char{0,400} "\\""\n'
        'root-1-item ::= "\\"" char{1,32} "\\""\n'
        'root-1 ::= "[" root-1-item ("," ws root-1-item){2,2} "]"\n'
        'char ::= [^"\\\\\\x7F\\x00-\\x1F] | "\\\\" ["\\\\/bfnrt]\n'
        "ws ::= [ ]?\n"
    )


def test_a_pattern_that_excludes_characters_becomes_a_character_class():
    schema = {"type": "object", "properties": {"h": {"type": "string", "pattern": "^[^<>]{1,5}$"}}}
    assert gbnf(schema) == (
        'root ::= "{" "\\"h\\": " root-0 "}"\n'
        'root-0-char ::= [^"\\\\\\x7F\\x00-\\x1F<>] | "\\\\" ["\\\\/bfnrt]\n'
        'root-0 ::= "\\"" root-0-char{1,5} "\\""\n'
    )
    with pytest.raises(ValueError, match="only patterns of the form"):
        gbnf({"type": "object", "properties": {"h": {"type": "string", "pattern": "^a+$"}}})


def test_the_grammar_refuses_what_it_cannot_write():
    with pytest.raises(ValueError, match="type 'null' is not supported"):
        gbnf({"type": "object", "properties": {"x": {"type": "null"}}})
    with pytest.raises(ValueError, match="every property must be required"):
        gbnf({"type": "object", "properties": {"x": {"type": "string"}}, "required": []})


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="needs llama_cpp")
def test_llama_cpp_parses_every_grammar_the_agents_send():
    from llama_cpp import LlamaGrammar
    from socialsim.agents.llm.decrypto import answer_schema
    from socialsim.agents.llm.gossip_answers import answer_schema as gossip_schema
    from socialsim.envs.gossip.protocol import GAMES

    guess = {"type": "object", "properties": {"guess": {"type": "string", "enum": CODES}}}
    agents = [answer_schema(kind)["schema"] for kind in ("hints", "guess", "keywords")]
    agents += [gossip_schema(GAMES["trust"], d, 5.0, 150)["schema"] for d in ("invest", "gossip")]
    numbers = {"type": "object", "properties": {"n": {"type": "number"}, "ok": {"type": "boolean"}}}
    for schema in (HINTS_SCHEMA, guess, numbers, *agents):
        LlamaGrammar.from_string(gbnf(schema), verbose=False)


# -- what the server says about itself ------------------------------------------------------------


@pytest.mark.parametrize(
    "family, window", [("vllm", 2048), ("llama_cpp", 4096), ("llama_cpp_python", None)]
)
def test_the_context_window_is_read_from_the_server_where_it_says(fresh_models, family, window):
    with ScriptedChatServer(family=family, context_window=window or 4096) as server:
        info = server_info(server.url, "test")
        assert info.family == family and info.context_window == window
        assert run(build_model(table(server)).context_window()) == window


def test_an_overflow_states_the_window_and_is_not_retried(fresh_models):
    with ScriptedChatServer(family="llama_cpp_python", context_window=5) as server:
        model = build_model(table(server, max_tokens=10, max_retries=5))
        with pytest.raises(ProviderError) as raised:
            run(model.complete(HELLO))
        assert raised.value.kind == "context_overflow" and raised.value.status == 400
        assert server.requests == 1
        assert run(model.context_window()) == 5  # learned from the error's message


def test_the_tables_context_window_wins(server):
    assert run(build_model(table(server, context_window=777)).context_window()) == 777


@pytest.mark.parametrize("transport", ["openai_http", "litellm"])
def test_a_bad_request_is_not_retried(server, transport):
    server.set_schedule(["bad_request"])
    model = build_model(table(server, transport=transport, max_retries=5, backoff=0.001))
    with pytest.raises(ProviderError) as raised:
        run(model.complete(HELLO))
    assert raised.value.kind == "rejected" and raised.value.status == 400
    assert server.requests == 1


def test_an_unknown_route_is_not_retried(server):
    model = build_model(table(server, api_base=server.url + "/nowhere", max_retries=5))
    with pytest.raises(ProviderError) as raised:
        run(model.complete(HELLO))
    assert raised.value.kind == "rejected" and raised.value.status == 404


def test_every_call_event_holds_the_finish_reason(server):
    model = build_model(table(server, max_retries=0))
    assert run(model.complete(HELLO)).event()["finish_reason"] == "stop"
    server.set_schedule(["server_error"])
    with pytest.raises(ProviderError) as raised:
        run(model.complete(HELLO))
    assert raised.value.event()["finish_reason"] is None


# -- the probe, before a run's first episode ---------------------------------------------------------


def decrypto_experiment(
    model: dict, interceptor_model: dict | None = None, structured: bool = True
) -> dict:
    seats = {"*": {"kind": "llm_decrypto", "structured_output": structured, "model": model}}
    if interceptor_model is not None:
        seats["interceptor"] = {"kind": "llm_decrypto", "model": interceptor_model}
    return {"name": "probe", "episodes": 1, "env": {"id": "decrypto_v0"}, "seats": seats}


def check(experiment: dict, directory) -> None:
    """``socialsim run --check``: everything a run checks before its first episode."""
    results.run(experiment, out=directory / "out", check_only=True)


def test_a_format_the_server_refuses_is_a_config_error_after_one_probe(fresh_models, tmp_path):
    with ScriptedChatServer(
        policy=lambda m, r: '{"ready": "yes"}', structured_formats=("llama_cpp_python",)
    ) as server:
        experiment = decrypto_experiment(table(server, structured_format="openai"))
        config.load(experiment)  # the config alone asks no server
        assert server.requests == 0
        with pytest.raises(config.ConfigError) as raised:
            check(experiment, tmp_path)
        message = str(raised.value)
        assert message.startswith("seats.*.model.structured_format: the server at ")
        assert "refused structured output in the form 'openai' (HTTP 500" in message
        assert "one of openai, llama_cpp_python, vllm, llama_cpp, grammar" in message
        assert server.requests == 1  # one probe, no retries


def test_auto_passes_the_probe_on_a_llama_cpp_python_server(fresh_models, tmp_path):
    with ScriptedChatServer(
        policy=lambda m, r: '{"ready": "yes"}',
        family="llama_cpp_python",
        structured_formats=("grammar", "llama_cpp_python"),
    ) as server:
        check(decrypto_experiment(table(server)), tmp_path)
        check(decrypto_experiment(table(server)), tmp_path)  # probed once per process
        assert server.requests == 1
        assert request_format(server.answered[0]) == "grammar"


def test_a_server_that_ignores_the_format_fails_the_probe(fresh_models):
    with ScriptedChatServer(policy=lambda m, r: "Sure! Ready.") as server:
        reason = probe_structured_output(server.url, "test", "vllm")
        assert reason == (
            "the reply 'Sure! Ready.' is not the JSON the schema allows (the server ignored the format)"
        )


def test_an_unreachable_server_is_left_to_the_run(fresh_models):
    assert probe_structured_output("http://127.0.0.1:9/v1", "test", "openai", timeout=2) is None


def test_two_seat_tables_on_one_server_with_different_concurrency_are_a_config_error(server):
    experiment = decrypto_experiment(
        table(server, concurrency=4),
        interceptor_model=table(server, concurrency=8),
        structured=False,
    )
    with pytest.raises(config.ConfigError) as raised:
        config.load(experiment)
    assert str(raised.value) == (
        f"seats.interceptor.model.concurrency: 8 requests in flight to 'openai/test' at "
        f"{server.url}, but seats.*.model.concurrency is 4; seats on one model and server share "
        "one limit: give them the same"
    )


def test_equal_concurrency_or_another_server_is_no_conflict(server):
    config.load(
        decrypto_experiment(
            table(server, concurrency=4),
            interceptor_model=table(server, concurrency=4),
            structured=False,
        )
    )
    other = {"model": "openai/test", "api_base": "http://127.0.0.1:9/v1", "concurrency": 8}
    config.load(
        decrypto_experiment(table(server, concurrency=4), interceptor_model=other, structured=False)
    )


# -- structured_output = "auto", the agents' default ----------------------------------------------


def constrained(model_table) -> bool:
    agent = registry.build_agent({"kind": "llm_decrypto", "model": model_table})
    agent.attach(RunContext())
    agent.reset("encoder", "encoder", 0)
    return run(agent.constrained())


@pytest.mark.parametrize(
    "family, expected",
    [("llama_cpp_python", True), ("llama_cpp", True), ("vllm", True), (None, False)],
)
def test_auto_constrains_the_answers_of_self_hosted_servers_only(fresh_models, family, expected):
    with ScriptedChatServer(family=family) as server:
        assert constrained(table(server)) is expected
        assert server.answered == []  # the models list tells; no chat request


def test_auto_constrains_where_the_table_names_a_format_and_never_by_provider_name(server):
    assert constrained(table(server, structured_format="vllm")) is True
    assert constrained({"model": "openai/gpt-4o-mini", "cache": False}) is False
    assert server.answered == []


def test_auto_is_resolved_per_episode_and_true_or_false_win(fresh_models):
    with ScriptedChatServer(family="llama_cpp_python") as server:
        agent = registry.build_agent(
            {"kind": "llm_gossip", "model": table(server), "structured_output": False}
        )
        agent.attach(RunContext())
        agent.reset("agent_0", "*", 0)
        assert run(agent.constrained()) is False
    with pytest.raises(ValueError, match="structured_output: must be true, false or 'auto', got 1"):
        registry.build_agent({"kind": "llm_gossip", "model": "openai/x", "structured_output": 1})


def test_auto_probes_a_llama_cpp_python_server_before_the_run_and_not_a_plain_one(
    fresh_models, tmp_path
):
    with ScriptedChatServer(
        policy=lambda m, r: '{"ready": "yes"}',
        family="llama_cpp_python",
        structured_formats=("grammar",),
    ) as server:
        experiment = decrypto_experiment(table(server))
        del experiment["seats"]["*"]["structured_output"]
        check(experiment, tmp_path)
        assert [request_format(r) for r in server.answered] == ["grammar"]
    with ScriptedChatServer(policy=lambda m, r: '{"ready": "yes"}') as server:
        experiment = decrypto_experiment(table(server))
        del experiment["seats"]["*"]["structured_output"]
        check(experiment, tmp_path)
        assert server.answered == []
