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


def test_the_question_shows_the_gossip_with_its_audience_by_display_name():
    gossip = {"round": 1, "author": "a", "about": "b", "tone": "criticism", "message": "no"}
    question = Question(
        "has_seen",
        {
            "round": 2,
            "you": "a",
            "gossip": 3,
            "viewer": "c",
            "gossip_said": gossip,
            "gossip_to": ["a", "b"],
            "inbox_gossip": [{"id": 3, "to": ["a", "b"], "payload": gossip}],
        },
    )
    names = {"a": "John", "b": "Kate", "c": "Jack"}.get
    text = question_prompt(question, names)
    assert text.startswith("Side question: has_seen\n")
    assert 'Round 1: John about Kate (criticism): "no" [sent to John, Kate]' in text
    assert "sent to John, Kate. Has Jack seen it?" in text
    assert "agent" not in text and "{" in text  # the JSON form only
    assert (
        GossipPolicy()(
            [
                {"role": "system", "content": "You are John, one of"},
                {"role": "user", "content": text},
            ]
        )
        == '{"answer": "no"}'
    )


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
    assert asked_seats == {f"agent_{i}" for i in range(6)}
    capsys.readouterr()
    assert main(["report", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "gossip theory of mind: probe scores" in printed
    with open(out / "gossip_tom.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert (out / "gossip_tom.png").exists()
    by = {(r["probe"], r["agent"]): r for r in rows}
    for probe in tom.GOSSIP_PROBES:
        llm = by[(probe, LLM)]
        assert float(llm["answered"]) == 1.0 and not math.isnan(float(llm["score"]))
        assert float(by[(probe, "gossip_random_answerer")]["answered"]) == 1.0
    for probe in (tom.REPUTATION, tom.WILL_HELP, tom.HAS_SEEN):
        assert float(by[(probe, "gossip_oracle")]["score"]) == 1.0
    # the scripted player reads the audiences the question shows: it knows who saw what
    assert float(by[(tom.HAS_SEEN, LLM)]["score"]) == 1.0
