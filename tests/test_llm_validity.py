"""Validity that cannot be inflated: a placeholder (with or without its brackets, in any field)
and the blank fallback hint written by a model are invalid answers, counted exactly; valid means
a legal move of the model's own."""

from __future__ import annotations

import json

import pytest
from socialsim.agents.llm.decrypto_answers import parse_hints, parse_keywords
from socialsim.agents.llm.gossip_answers import parse_answer
from socialsim.envs.decrypto.protocol import SEATS
from socialsim.envs.gossip.protocol import GAMES

from socialsim.llm import AnswerParseError
from socialsim.runner import EpisodeSpec, play_episode
from socialsim.testing.decrypto_policies import GAME_MASTER, DecryptoPolicy, latest
from socialsim.testing.llm_server import ScriptedChatServer

KEYWORDS = ["ceiling", "sword", "key", "corner"]


def hints_reply(*hints: str, reasoning: str | None = None) -> str:
    if reasoning is None:
        return f"ANSWER: {json.dumps({'hints': list(hints)})}"
    return json.dumps({"reasoning": reasoning, "hints": list(hints)})


#: (reply, constrained, hint rules, valid?)
ENCODER_REPLIES = [
    (hints_reply("no_hint", "no_hint", "no_hint"), False, "reference", False),
    (hints_reply("ledge", "No Hint", "lock"), False, "reference", False),
    (hints_reply("hint 1", "hint 2", "hint 3"), False, "reference", False),
    (hints_reply("<hint 1>", "<hint 2>", "<hint 3>"), False, "reference", False),
    (hints_reply("keyword 1", "blade", "lock"), False, "reference", False),
    (hints_reply("[Your answer]", "blade", "lock"), False, "reference", False),
    (hints_reply("ledge", "blade", "lock", reasoning="Your reasoning, in a sentence or two."), True, "reference", False),
    (hints_reply("ledge", "blade", "lock", reasoning="X-Y-Z"), True, "reference", False),
    (hints_reply("ledge", "blade", "lock", reasoning="a ledge is near a ceiling"), True, "reference", True),
    (hints_reply("ledge", "blade", "lock"), False, "reference", True),
    (hints_reply("corners", "blade", "lock"), False, "reference", True),
    (hints_reply("corners", "blade", "lock"), False, "board_game", False),
    (hints_reply("blade", "Blade", "lock"), False, "reference", True),
    (hints_reply("blade", "Blade", "lock"), False, "board_game", False),
    (hints_reply("sword fish", "ledge", "lock"), False, "board_game", False),
    (hints_reply("swordsman", "ledge", "lock"), False, "board_game", True),
]  # fmt: skip


def test_encoder_replies_exactly_5_of_16_are_valid_moves_of_the_models_own():
    valid = []
    for reply, structured, rules, expected in ENCODER_REPLIES:
        try:
            parse_hints(
                reply, KEYWORDS, max_words=2, max_chars=32, structured=structured, hint_rules=rules
            )
        except AnswerParseError:
            valid.append(False)
        else:
            valid.append(True)
        assert valid[-1] == expected, reply
    assert (len(valid), sum(valid)) == (16, 5)


def test_keyword_answers_repeating_a_placeholder_without_brackets_are_invalid():
    with pytest.raises(AnswerParseError, match="placeholder"):
        parse_keywords('ANSWER: {"keywords": ["word 1", "b", "c", "d"]}')
    with pytest.raises(AnswerParseError, match="placeholder"):
        parse_keywords('ANSWER: {"keywords": ["a", "Keyword 2", "c", "d"]}')
    assert parse_keywords('ANSWER: {"keywords": ["unknown", "b", "c", "d"]}')[0] == "unknown"


#: (decision, reply, valid?)
GOSSIP_REPLIES = [
    ("donate", {"justification": "your reasoning, in a few sentences", "donor_action": "cooperate"}, False),
    ("donate", {"justification": "<your reasoning, in a few sentences>", "donor_action": "defect"}, False),
    ("donate", {"justification": "Kate has a clean record", "donor_action": "cooperate"}, True),
    ("gossip", {"justification": "true", "tone": "neutral", "gossip": ""}, False),
    ("gossip", {"justification": "true", "tone": "praising", "gossip": "Your public message, under 150 words"}, False),
    ("gossip", {"justification": "true", "tone": "praising", "gossip": "Kate paid for me."}, True),
]  # fmt: skip


def test_gossip_replies_exactly_2_of_6_are_valid():
    donation = GAMES["donation"]
    valid = 0
    for decision, reply, expected in GOSSIP_REPLIES:
        try:
            parse_answer(donation, decision, json.dumps(reply), 0.0, 150)
        except AnswerParseError:
            assert not expected, reply
        else:
            assert expected, reply
            valid += 1
    assert valid == 2


def encoder_bad_first(bad: list[str]):
    """A scripted model whose encoder answers ``bad[k]`` at the k-th attempt of each decision."""
    good = DecryptoPolicy()

    def policy(messages, request):
        attempt = 0
        for message in reversed(messages):
            if message["role"] != "user":
                continue
            if message["content"].startswith(f"{GAME_MASTER} Error"):
                attempt += 1
            else:
                prompt = latest(message["content"])
                break
        if "you are the Encoder" in prompt and attempt < len(bad):
            return bad[attempt]
        return good(messages, request)

    return policy


def play(server, max_attempts: int):
    seat = {
        "kind": "llm_decrypto",
        "max_attempts": max_attempts,
        "model": {"model": "openai/test", "api_base": server.url, "cache": False},
    }
    record = play_episode(EpisodeSpec(env_id="decrypto_v0", seed=0, seats={s: seat for s in SEATS}))
    assert record.status == "done", record.error
    return record


BAD = [hints_reply("no_hint", "no_hint", "no_hint"), hints_reply("hint 1", "hint 2", "hint 3")]


def test_a_copied_blank_and_placeholder_are_re_prompted_and_counted(fresh_models):
    # seed 0 lasts 3 turns (two interceptions): each encoder decision is blank, placeholder, own
    with ScriptedChatServer(encoder_bad_first(BAD), alternating_roles=True) as server:
        record = play(server, max_attempts=3)
        assert server.refused == 0
    assert record.summary["turns"] == 3
    counters = record.counters["encoder"]
    assert (counters["llm_calls"], counters["invalid_answers"], counters["fallbacks"]) == (9, 6, 0)
    reasons = [e.get("invalid") for e in record.events["encoder"]]
    assert sum("the game's blank hint" in (r or "") for r in reasons) == 3
    assert sum("placeholder" in (r or "") for r in reasons) == 3


def test_an_encoder_that_only_copies_gets_no_valid_decision(fresh_models):
    with ScriptedChatServer(encoder_bad_first(BAD), alternating_roles=True) as server:
        record = play(server, max_attempts=2)
        assert server.refused == 0
    turns = record.summary["turns"]
    counters = record.counters["encoder"]
    assert (counters["llm_calls"], counters["invalid_answers"], counters["fallbacks"]) == (
        2 * turns,
        2 * turns,
        turns,
    )
    assert all(t["hints"] == ["no_hint"] * 3 for t in record.summary["turn_log"])
