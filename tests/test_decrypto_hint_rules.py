"""The hint rules as an option: the reference's (only a hint equal to a keyword is refused, the
default, records unchanged) and the board game's (no keyword as a word of a hint, plurals too,
and no hint repeating another of the same turn)."""

from __future__ import annotations

import numpy as np
import pytest
from socialsim.envs import decrypto_v0
from socialsim.envs.decrypto.core import apply_hint_fallback, validate_hints
from socialsim.envs.decrypto.protocol import Options, Rules

KEYWORDS = ["ceiling", "sword", "key", "corner"]  # seed 0's, code 3-1-4


@pytest.mark.parametrize(
    ("hints", "reference", "board_game"),
    [
        (["ledge", "blade", "lock"], 0, 0),
        (["corners", "blade", "lock"], 0, 1),  # a plural of a keyword
        (["ledge", "sword fish", "lock"], 0, 1),  # a keyword as a word
        (["ledge", "Sword-fish", "lock"], 0, 1),  # case and a hyphen
        (["ledge", "swordsman", "lock"], 0, 0),  # a longer word is not the keyword
        (["keys", "blade", "lock"], 0, 1),
        (["blade", "blade", "lock"], 0, 1),  # a repeat
        (["Blade", " blade ", "BLADE"], 0, 2),
        (["corner", "blade", "lock"], 1, 1),  # the keyword itself: one reason, not two
        (["no_hint", "no_hint", "lock"], 0, 0),  # the game's blank may repeat
    ],
)
def test_hint_problems_under_each_rule(hints, reference, board_game):
    assert len(validate_hints(hints, KEYWORDS)) == reference
    assert len(validate_hints(hints, KEYWORDS, hint_rules="board_game")) == board_game


def test_a_city_keyword_refuses_cities():
    assert validate_hints(
        ["cities", "a", "b"], ["city", "x", "y", "z"], hint_rules="board_game"
    ) == ["hint 1 'cities' contains the keyword 'city'; a hint may not contain a keyword"]


def test_the_fallback_replaces_a_repeat_and_a_contained_keyword_only_under_the_board_game():
    hints = ["corners", "blade", "Blade"]
    assert apply_hint_fallback(hints, KEYWORDS) == (hints, [])
    played, reasons = apply_hint_fallback(hints, KEYWORDS, hint_rules="board_game")
    assert played == ["no_hint", "blade", "no_hint"]
    assert reasons == [
        "hint 1 'corners' contains the keyword 'corner'; a hint may not contain a keyword",
        "hint 3 'Blade' repeats hint 2; the three hints must differ",
    ]


def test_an_unknown_hint_rule_is_an_error_naming_the_choices():
    with pytest.raises(
        ValueError, match="hint_rules: must be one of reference, board_game, got 'chess'"
    ):
        decrypto_v0.parallel_env(hint_rules="chess")


def test_the_reference_rules_message_is_unchanged_and_the_board_games_states_its_rules():
    env = decrypto_v0.parallel_env()
    env.reset(seed=0)
    reference = env.unwrapped.bus.log[0].payload
    assert "hint_rules" not in reference
    assert Rules.from_payload(reference).options == Options()
    env = decrypto_v0.parallel_env(hint_rules="board_game")
    env.reset(seed=0)
    board_game = env.unwrapped.bus.log[0].payload
    assert board_game["hint_rules"] == "board_game"
    assert Rules.from_payload(board_game).options.hint_rules == "board_game"


def test_the_env_plays_the_board_games_rule_flagged_and_the_reference_plays_the_hints():
    text = {"hints": ["corners", "blade", "Blade"]}
    env = decrypto_v0.parallel_env()
    env.reset(seed=0)
    _, _, _, _, infos = env.step({"encoder": text})
    assert "invalid_action" not in infos["encoder"] and env.hints == ["corners", "blade", "Blade"]
    env = decrypto_v0.parallel_env(hint_rules="board_game")
    env.reset(seed=0)
    _, _, _, _, infos = env.step({"encoder": text})
    assert env.hints == ["no_hint", "blade", "no_hint"]
    assert infos["encoder"]["invalid_action"]["fallback"] == ("no_hint", "blade", "no_hint")


def test_a_repeated_vocabulary_hint_gets_the_fallback_under_the_board_game_only():
    for rules, expected in (("reference", ["above", "above", "above"]), ("board_game", None)):
        env = decrypto_v0.parallel_env(hint_rules=rules)
        observations, _ = env.reset(seed=0)
        index = env.unwrapped.hint_vocabulary.index("above")
        assert observations["encoder"]["action_mask"][index] == 1
        _, _, _, _, infos = env.step({"encoder": np.array([index] * 3)})
        if expected is None:
            assert env.hints == ["above", "no_hint", "no_hint"]
            assert "repeats hint 1" in infos["encoder"]["invalid_action"]["reason"]
        else:
            assert env.hints == expected and "invalid_action" not in infos["encoder"]


# -- a keyword in disguise (issue 38): hints are compared folded ---------------------------------


@pytest.mark.parametrize(
    "disguised",
    [
        "sword\u200b",  # a zero-width space
        "sw\u00adord",  # a soft hyphen
        "s\u2060word",  # a word joiner
        "sw\ufe0ford",  # a variation selector
        "\u0455w\u043erd",  # Cyrillic dze and o
        "SW\u039fRD",  # a Greek capital omicron
        "\uff53\uff57\uff4f\uff52\uff44",  # fullwidth letters
        "\U0001d42c\U0001d430\U0001d428\U0001d42b\U0001d41d",  # mathematical bold letters
    ],
)
@pytest.mark.parametrize("rules", ["reference", "board_game"])
def test_a_keyword_spelled_in_disguise_is_the_keyword_under_both_rules(disguised, rules):
    assert validate_hints(["ledge", disguised, "lock"], KEYWORDS, hint_rules=rules) == [
        f"hint 2 {disguised!r} is one of the keywords; a hint may not be a keyword"
    ]
    played, _ = apply_hint_fallback(["ledge", disguised, "lock"], KEYWORDS, hint_rules=rules)
    assert played == ["ledge", "no_hint", "lock"]


@pytest.mark.parametrize(
    ("hints", "reference", "board_game"),
    [
        (["ledge", "\u0455word fish", "lock"], 0, 1),  # a disguised keyword as a word
        (["blade", "bla\u200bde", "lock"], 0, 1),  # a disguised repeat
        (["\u043c\u0435\u0447", "blade", "lock"], 0, 0),  # a Russian word, not a keyword
        (["caf\u00e9", "blade", "lock"], 0, 0),  # accents are letters of their own
    ],
)
def test_folded_hints_under_each_rule(hints, reference, board_game):
    assert len(validate_hints(hints, KEYWORDS)) == reference
    assert len(validate_hints(hints, KEYWORDS, hint_rules="board_game")) == board_game


def test_the_env_replaces_a_disguised_keyword_with_the_fallback_and_flags_it():
    env = decrypto_v0.parallel_env()
    _, infos = env.reset(seed=0)  # seed 0: keywords ceiling, sword, key, corner
    _, _, _, _, infos = env.step({"encoder": {"hints": ["ledge", "sw\u00adord", "lock"]}})
    flag = infos["encoder"]["invalid_action"]
    assert flag["fallback"] == ("ledge", "no_hint", "lock")
    assert flag["reason"] == (
        "hint 2 'sw\\xadord' is one of the keywords; a hint may not be a keyword"
    )
