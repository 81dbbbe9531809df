"""Trained policies as co-players: the bundled experiment files put an rl seat beside LLM seats
(answered by the scripted test server), and ``socialsim play`` puts one against a person."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from gymnasium.wrappers import FilterObservation

from socialsim import cli, records
from socialsim.rl.view import SeatView
from socialsim.testing.decrypto_policies import DecryptoPolicy
from socialsim.testing.gossip_policies import GossipPolicy

MaskablePPO = pytest.importorskip("sb3_contrib").MaskablePPO
pytestmark = pytest.mark.slow  # torch, SB3 and the GloVe vectors load in each test

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"
KEY_ENV = "SOCIALSIM_RL_COPLAY_TEST_KEY"
sys.path.insert(0, str(Path(__file__).parent))
from test_play_terminal import SEED_0_CODES, SOCIALSIM, Pty  # noqa: E402


def save(view, keys, path):
    """An untrained (seeded) MaskablePPO policy of the view's seat saved at ``path``."""
    env = FilterObservation(view, keys)
    MaskablePPO("MultiInputPolicy", env, n_steps=16, batch_size=16, seed=0, device="cpu").save(path)


def interceptor_policy(path):
    from socialsim.agents.rl.decrypto import HintHistory

    team = {"encoder": {"kind": "decrypto_random_encoder"}, "decoder": {"kind": "glove_decoder"}}
    save(
        SeatView("decrypto_v0", "interceptor", team, [HintHistory()]),
        ["action_mask", "hint_history"],
        path,
    )


def model_overrides(server, monkeypatch) -> list[str]:
    monkeypatch.setenv(KEY_ENV, "dummy-key")
    overrides = {
        "model": "openai/test",
        "api_base": server.url,
        "api_key_env": KEY_ENV,
        "cache": "false",
        "timeout": "10",
        "max_retries": "1",
    }
    return [arg for k, v in overrides.items() for arg in ("--set", f"seats.*.model.{k}={v}")]


def test_a_trained_donor_plays_among_llm_agents_from_the_bundled_file(
    tmp_path, llm_server, fresh_models, monkeypatch
):
    llm_server.policy = GossipPolicy()
    policy = tmp_path / "donor.zip"
    kwargs = {"n_agents": 8, "gossip": True, "schedule": "random", "rounds": 20}
    save(
        SeatView("donation_v0", "agent_0", {"kind": "stern_judging"}, ["counterpart"], **kwargs),
        ["action_mask", "counterpart"],
        policy,
    )
    out = tmp_path / "out"
    argv = ["run", str(EXPERIMENTS / "llm_rl_donor.toml"), "--out", str(out), "--quiet"]
    argv += ["--set", f"seats.agent_0.path={policy}", "--set", "episodes=1"]
    argv += ["--set", "env.kwargs.rounds=4"]
    assert cli.main(argv + model_overrides(llm_server, monkeypatch)) == 0
    (record,) = records.read_records(out)
    assert record.seats["agent_0"] == {"kind": "rl", "path": str(policy)}
    assert {record.seats[f"agent_{i}"]["kind"] for i in range(1, 8)} == {"llm_gossip"}
    moves = [i for i in record.summary["interactions"] if i["donor"] == "agent_0"]
    assert len(moves) >= 1 and all(m["action"] in ("cooperate", "defect") for m in moves)
    assert record.counters["agent_0"]["invalid_actions"] == 0
    assert (
        sum(record.counters[f"agent_{i}"]["llm_calls"] for i in range(1, 8))
        == llm_server.requests
        > 0
    )


def test_a_trained_interceptor_plays_against_an_llm_team_from_the_bundled_file(
    tmp_path, llm_server, fresh_models, monkeypatch
):
    llm_server.policy = DecryptoPolicy()
    policy = tmp_path / "interceptor.zip"
    interceptor_policy(policy)
    out = tmp_path / "out"
    argv = ["run", str(EXPERIMENTS / "llm_rl_interceptor.toml"), "--out", str(out), "--quiet"]
    argv += ["--set", f"seats.interceptor.path={policy}", "--set", "episodes=2"]
    assert cli.main(argv + model_overrides(llm_server, monkeypatch)) == 0
    played = records.read_records(out)
    assert len(played) == 2
    for record in played:
        assert record.seats["interceptor"]["kind"] == "rl"
        assert record.seats["encoder"]["kind"] == record.seats["decoder"]["kind"] == "llm_decrypto"
        turns = record.summary["turn_log"]
        assert turns and all(t["interceptor_guess"] is not None for t in turns)
        assert record.counters["interceptor"]["invalid_actions"] == 0


def test_a_person_plays_decoder_against_a_trained_interceptor(tmp_path):
    policy = tmp_path / "interceptor.zip"
    interceptor_policy(policy)
    out = tmp_path / "game"
    argv = SOCIALSIM + ["play", "decrypto", "--as", "decoder", "--seed", "0", "--out", str(out)]
    argv += ["--with", "encoder=glove_encoder"]
    argv += ["--with", f'interceptor={{kind = "rl", path = "{policy}"}}']
    child = Pty(argv, tmp_path)
    child.expect([r"You are the decoder"], timeout=120)
    turn = 0
    while child.expect([r"Your guess \(like 3-1-4\): ", r"Logged to "], timeout=120) == 0:
        child.send(SEED_0_CODES[turn])
        turn += 1
    assert child.close() == 0
    (record,) = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert record["status"] == "done"
    assert record["seats"]["interceptor"] == {"kind": "rl", "path": str(policy)}
    assert record["seats"]["decoder"]["kind"] == "human"
    played = record["summary"]["turn_log"]
    assert len(played) == turn and all(t["interceptor_guess"] is not None for t in played)
    assert not any(t["miscommunication"] for t in played)
