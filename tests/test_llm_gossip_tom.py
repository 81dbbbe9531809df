"""The gossip theory-of-mind probes asked of LLM seats: the bundled ``llm_align_tom`` against
the test chat server (whose scripted gossip player answers the side questions), its report,
and the side questions kept out of the game."""

from __future__ import annotations

import csv
import math

import pytest
from socialsim.agents.llm.gossip_tom import parse_probe_reply, question_prompt
from socialsim.envs.gossip import tom

from socialsim.agent import Question
from socialsim.cli import main
from socialsim.llm.parsing import AnswerParseError
from socialsim.records import read_records
from socialsim.testing.gossip_policies import GossipPolicy

KEY_ENV = "SOCIALSIM_GOSSIP_TEST_KEY"
LLM = "test(max_attempts=2)"  # the LLM seats' label: the model's name and their one option


@pytest.fixture(scope="module", autouse=True)
def litellm_imported() -> None:
    from socialsim.llm import load_litellm

    load_litellm()


def test_a_probe_reply_is_a_probe_word_or_an_abstention():
    assert parse_probe_reply("reputation", '{"answer": "Bad"}') == "bad"
    assert parse_probe_reply("has_seen", "yes") == "yes"
    assert parse_probe_reply("has_seen", '{"answer": "unknown"}') == "unknown"
    with pytest.raises(AnswerParseError):
        parse_probe_reply("will_help", '{"answer": "maybe"}')
    assert tom.parse_answer("will_help", "unknown") is None  # recorded as an abstention


def test_has_seen_shows_the_gossip_but_not_its_audience():
    gossip = {"round": 1, "author": "a", "about": "b", "tone": "criticism", "message": "no"}
    other = {"round": 1, "author": "b", "about": "a", "tone": "praising", "message": "yes"}
    question = Question(
        "has_seen",
        {
            "round": 2,
            "you": "a",
            "gossip": 3,
            "viewer": "c",
            "gossip_said": gossip,
            # the probe leaves the asked gossip out of the inbox it shows
            "inbox_gossip": [{"id": 4, "to": ["a", "b"], "payload": other}],
        },
    )
    names = {"a": "John", "b": "Kate", "c": "Jack"}.get
    text = question_prompt(question, names)
    assert text.startswith("Side question: has_seen\n")
    assert 'Round 1: Kate about John (praising): "yes" [sent to John, Kate]' in text
    assert 'John about Kate (criticism): "no". Has Jack seen it?' in text
    assert text.count("[sent to") == 1  # the other gossip's audience only
    assert "agent" not in text and "{" in text  # the JSON form only
    chat = [{"role": "user", "content": text}]
    public = [{"role": "system", "content": "You are John, one of"}, *chat]
    assert GossipPolicy()(public) == '{"answer": "yes"}'  # public gossip: everyone saw it
    limited = "You are John, one of. Gossip: a message reaches only its author and the agent"
    assert GossipPolicy()([{"role": "system", "content": limited}, *chat]) == '{"answer": "no"}'


@pytest.mark.slow
def test_llm_align_tom_against_the_test_server_reports_every_probe(
    llm_server, fresh_models, monkeypatch, tmp_path, capsys
):
    monkeypatch.setenv(KEY_ENV, "dummy-key")
    llm_server.policy = GossipPolicy({"Kate"})  # agent_1 always defects
    out = tmp_path / "run"
    sets = [
        "seats.*.model.model=openai/test",
        f"seats.*.model.api_base={llm_server.url}",
        f"seats.*.model.api_key_env={KEY_ENV}",
        "seats.*.model.cache=false",
        "episodes=1",
    ]
    argv = ["run", "llm_align_tom", "--out", str(out)]
    for item in sets:
        argv += ["--set", item]
    assert main(argv) == 0
    (record,) = read_records(out)
    assert record.status == "done", record.error
    asked_seats = {e["seat"] for e in record.probes}
    assert asked_seats == {f"agent_{i}" for i in range(8)}  # the others answer nothing
    capsys.readouterr()
    assert main(["report", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "gossip theory of mind: probe scores" in printed
    with open(out / "gossip_tom.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert (out / "gossip_tom.png").exists()
    assert {r["probe"] for r in rows if r["agent"] == LLM} == set(tom.GOSSIP_PROBES)
    assert {r["item_set"] for r in rows if r["probe"] == tom.REPUTATION} == {
        "false_belief",
        "true_belief",
    }
    for r in (r for r in rows if int(r["items"])):
        if r["agent"] == LLM:
            assert float(r["answered"]) == 1.0 and not math.isnan(float(r["score"]))
        if r["agent"].startswith("gossip_oracle") and float(r["informed"]) > 0:
            assert float(r["score_informed"]) == 1.0, r
        # every score beside its tricks, on balanced items
        assert float(r["constant"]) == float(r["chance"]), r
        assert float(r["best_trick"]) >= float(r["chance"])
