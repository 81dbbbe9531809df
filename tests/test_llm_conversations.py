"""Chats every template accepts: every bundled LLM experiment played against a test server that
refuses non-alternating conversations (as Gemma's and Mistral's chat templates do) and answers a
third of its requests with garbage, and the offline playground (``llm_server --play``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from socialsim.agents.llm.base import FALLBACK_NOTE, conversation
from socialsim.envs.decrypto.protocol import SEATS

import socialsim
from socialsim.records import read_records
from socialsim.runner import EpisodeSpec, play_episode
from socialsim.testing.chat_requests import ALTERNATION_ERROR, roles_alternate
from socialsim.testing.decrypto_policies import DecryptoPolicy
from socialsim.testing.gossip_policies import GossipPolicy
from socialsim.testing.llm_server import ScriptedChatServer
from socialsim.testing.playground import PlayPolicy, play_overrides

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"
BUNDLED_LLM = sorted(
    p.stem for p in EXPERIMENTS.glob("*.toml") if p.stem.startswith(("llm_", "smollm2_"))
)
# -- the one conversation form --------------------------------------------------------------------


def test_consecutive_messages_of_one_role_fold_into_one_turn():
    chat = [
        {"role": "system", "content": "rules"},
        {"role": "user", "content": "turn 1"},
        {"role": "user", "content": FALLBACK_NOTE},
        {"role": "user", "content": "turn 2"},
    ]
    assert list(conversation(chat)) == [
        {"role": "system", "content": "rules"},
        {"role": "user", "content": f"turn 1\n\n{FALLBACK_NOTE}\n\nturn 2"},
    ]
    assert list(conversation(chat, system_as_user=True)) == [
        {"role": "user", "content": f"rules\n\nturn 1\n\n{FALLBACK_NOTE}\n\nturn 2"}
    ]


def test_an_alternating_chat_is_sent_as_it_is():
    chat = conversation([{"role": "system", "content": "s"}, {"role": "user", "content": "u"}])
    assert conversation(chat) is chat


def test_a_chat_opening_with_a_reply_is_an_error():
    with pytest.raises(ValueError, match="a user turn before any reply"):
        conversation([{"role": "assistant", "content": "a"}, {"role": "user", "content": "u"}])


def test_the_strict_server_refuses_two_user_turns_in_a_row(fresh_models):
    import json
    import urllib.error
    import urllib.request

    with ScriptedChatServer(alternating_roles=True) as server:
        body = {
            "model": "m",
            "messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}],
        }
        request = urllib.request.Request(
            f"{server.url}/chat/completions",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)  # noqa: S310 - 127.0.0.1
        assert refused.value.code == 500
        assert ALTERNATION_ERROR in refused.value.read().decode()
        assert server.stats()["refused"] == 1


def test_a_decrypto_fallback_note_joins_the_next_prompt_in_one_user_turn(fresh_models):
    # the encoder moves alone first: its turn-1 decision gets both garbage replies, falls back
    with ScriptedChatServer(
        DecryptoPolicy(), alternating_roles=True, schedule=["garbage", "garbage"]
    ) as server:
        seat = {
            "kind": "llm_decrypto",
            "max_attempts": 2,
            "model": {"model": "openai/test", "api_base": server.url, "cache": False},
        }
        spec = EpisodeSpec(env_id="decrypto_v0", seed=0, seats={s: seat for s in SEATS})
        record = play_episode(spec)
        assert record.status == "done", record.error
        assert server.refused == 0
        assert record.counters["encoder"]["fallbacks"] == 1
        encoder = [r["messages"] for r in server.answered if "you are the Encoder" in str(r)]
        second = encoder[2]  # turn 2's first attempt, after the two failed ones of turn 1
        assert [m["role"] for m in second] == ["system", "user"]
        prompt = second[1]["content"]
        assert prompt.index("Turn 1: you are the Encoder") < prompt.index(FALLBACK_NOTE)
        assert prompt.index(FALLBACK_NOTE) < prompt.index("Turn 2: you are the Encoder")
        assert all(roles_alternate(r["messages"]) for r in server.answered)


def test_llm_gossip_sends_the_system_text_as_user_when_asked(fresh_models):
    with ScriptedChatServer(GossipPolicy(), alternating_roles=True) as server:
        seat = {
            "kind": "llm_gossip",
            "system_as_user": True,
            "model": {"model": "openai/test", "api_base": server.url, "cache": False},
        }
        spec = EpisodeSpec(
            env_id="donation_v0",
            seed=0,
            seats={f"agent_{i}": seat for i in range(3)},
            env_kwargs={"n_agents": 3, "rounds": 2},
        )
        record = play_episode(spec)
        assert record.status == "done", record.error
        assert server.answered and server.refused == 0
        for request in server.answered:
            roles = [m["role"] for m in request["messages"]]
            assert roles[0] == "user" and "system" not in roles
            assert request["messages"][0]["content"].startswith("You are ")


# -- every bundled LLM experiment, strict and noisy -----------------------------------------------


def test_the_bundled_llm_experiments_are_the_expected_sixteen():
    expected = {
        "smollm2_decrypto",
        "llm_decrypto_figure3",
        "llm_cultural_evolution",
        "llm_align_tom",
    }
    assert len(BUNDLED_LLM) == 16 and expected <= set(BUNDLED_LLM)


@pytest.mark.parametrize("name", BUNDLED_LLM)
def test_every_bundled_llm_experiment_survives_a_strict_server_with_a_third_garbage(
    name, tmp_path, fresh_models
):
    # the first request is answered (smollm2_decrypto probes the structured output first)
    with ScriptedChatServer(
        PlayPolicy(),
        alternating_roles=True,
        fault_rates={"garbage": 1 / 3},
        schedule=[None],
        seed=7,
    ) as server:
        results = socialsim.run(name, out=tmp_path, overrides=play_overrides(name, server.url))
        stats = server.stats()
    records = read_records(tmp_path, include_failed=True)
    assert results.failed == [] and [r.status for r in records] == ["done"] * len(records)
    assert stats["refused"] == 0
    assert stats["faults"]["garbage"] > 0
    invalid = sum(c.get("invalid_answers", 0) for r in records for c in r.counters.values())
    assert invalid > 0  # the garbage forced re-prompts, every one accepted by the server


# -- the offline playground -----------------------------------------------------------------------


@pytest.mark.parametrize("name", BUNDLED_LLM)
def test_the_playground_answers_every_bundled_prompt_with_a_legal_move(
    name, tmp_path, fresh_models
):
    with ScriptedChatServer(PlayPolicy(), alternating_roles=True) as server:
        socialsim.run(name, out=tmp_path, overrides=play_overrides(name, server.url))
    records = read_records(tmp_path, include_failed=True)
    assert [r.status for r in records] == ["done"] * len(records)
    for record in records:
        for counters in record.counters.values():
            assert counters.get("invalid_answers", 0) == 0 and counters.get("fallbacks", 0) == 0
            assert counters.get("tom_invalid_answers", 0) == 0


@pytest.mark.slow
def test_the_playground_serves_from_the_command_line_for_socialsim_run(tmp_path):
    server = subprocess.Popen(
        [sys.executable, "-m", "socialsim.testing.llm_server", "--play"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        url = server.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        command = [sys.executable, "-m", "socialsim.cli", "run", "llm_decrypto_competitive"]
        for assignment in play_overrides("llm_decrypto_competitive", url):
            command += ["--set", assignment]
        done = subprocess.run(
            [*command, "--out", str(tmp_path / "run")],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        assert "1/1 episodes done, 0 failed" in done.stderr + done.stdout
    finally:
        server.terminate()
        server.wait(timeout=10)
