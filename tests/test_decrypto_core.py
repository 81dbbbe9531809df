"""The rules of Decrypto (envs/decrypto/core.py) and its word lists."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from socialsim.envs.decrypto.core import DecryptoGame, apply_hint_fallback, validate_hints
from socialsim.envs.decrypto.protocol import CODES, ENDINGS, FALLBACK_HINT, Options, parse_code
from socialsim.envs.decrypto.words import (
    KEYWORDS_PATH,
    RL_HINTS_PATH,
    hint_vocabulary,
    keyword_list,
    load_words,
)

WORDS = keyword_list()
HINTS = ["red", "blue", "green"]
WRONG = (1, 2, 3)


def code_sequence(seed: int, words=WORDS) -> list[str]:
    """The codes a seed plays when the team always survives (decoder right, interceptor never)."""
    game = DecryptoGame(words, seed)
    seen = []
    while not game.done:
        code = game.code
        seen.append("".join(map(str, code)))
        miss = next(c for c in CODES if c != code)
        game.play_turn(HINTS, code, miss)
    return seen


def other(code):
    return next(c for c in CODES if c != code)


# -- word lists -------------------------------------------------------------------------------


def test_keyword_list_has_680_distinct_sorted_lowercase_words():
    lines = KEYWORDS_PATH.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 680
    assert len(set(lines)) == 680
    assert lines == sorted(lines)
    assert all(w.isalpha() and w.islower() and w.isascii() for w in lines)
    assert WORDS == tuple(lines)


def test_rl_hint_vocabulary_is_a_few_hundred_words_disjoint_from_keywords():
    lines = RL_HINTS_PATH.read_text(encoding="utf-8").splitlines()
    assert 200 <= len(lines) <= 1000
    assert len(set(lines)) == len(lines)
    assert lines == sorted(lines)
    assert all(w.isalpha() and w.islower() for w in lines)
    assert not set(lines) & set(WORDS)
    assert hint_vocabulary() == tuple(lines)


def test_duplicate_word_in_a_list_is_an_error_naming_it(tmp_path):
    path = tmp_path / "words.txt"
    path.write_text("cat\ndog\ncat\nfox\nowl\n")
    with pytest.raises(ValueError, match="'cat' twice"):
        load_words(path)


def test_missing_wordlist_file_is_an_error_naming_the_parameter(tmp_path):
    with pytest.raises(ValueError, match="wordlist: no file"):
        keyword_list(tmp_path / "nope.txt")


# -- seeds ------------------------------------------------------------------------------------


def test_seed_0_plays_the_reference_code_sequence():
    assert code_sequence(0) == ["314", "341", "142", "342", "413", "124", "214", "213"]


@pytest.mark.parametrize(
    ("seed", "expected"),
    [
        (1, ["312", "234", "214", "243", "431", "142", "412", "143"]),
        (2, ["234", "123", "124", "342", "243", "213", "312", "142"]),
        (3, ["432", "231", "412", "312", "124", "321", "421", "314"]),
    ],
)
def test_seeds_1_to_3_play_their_recorded_code_sequences(seed, expected):
    assert code_sequence(seed) == expected


def test_code_sequence_depends_only_on_the_wordlist_length():
    other_words = [f"word{i}" for i in range(680)]
    assert code_sequence(5, other_words) == code_sequence(5)
    assert code_sequence(5, other_words[:600]) != code_sequence(5)


def test_codes_do_not_depend_on_what_the_players_do():
    rng = np.random.default_rng(7)
    for seed in range(20):
        survived = code_sequence(seed)
        game = DecryptoGame(WORDS, seed)
        played = []
        while not game.done:
            played.append("".join(map(str, game.code)))
            game.play_turn(
                [str(x) for x in rng.choice(["sun", "ice", "fog", "war"], 3)],
                CODES[int(rng.integers(24))],
                CODES[int(rng.integers(24))],
            )
        assert played == survived[: len(played)]


def test_keywords_are_drawn_like_the_reference_choice_over_the_list():
    for seed in (0, 1, 41):
        expected = [
            str(w) for w in np.random.RandomState(seed).choice(list(WORDS), 4, replace=False)
        ]  # noqa: NPY002
        assert list(DecryptoGame(WORDS, seed).keywords) == expected


def test_codes_never_repeat_within_a_game_of_24_turns():
    game = DecryptoGame(WORDS, 11, Options(max_turns=24))
    while not game.done:
        game.play_turn(HINTS, game.code, other(game.code))
    assert sorted(game.code_history) == sorted(CODES)
    assert game.ending == "survived"


def test_fixed_keywords_keep_the_seeds_codes():
    game = DecryptoGame(WORDS, 0, keywords=["sun", "moon", "star", "sky"])
    assert game.keywords == ("sun", "moon", "star", "sky")
    assert game.code == (3, 1, 4)


# -- codes ------------------------------------------------------------------------------------


def test_action_index_0_is_1_2_3_and_23_is_4_3_2():
    assert CODES[0] == (1, 2, 3)
    assert CODES[23] == (4, 3, 2)
    assert CODES == list(itertools.permutations((1, 2, 3, 4), 3))


@pytest.mark.parametrize("value", [2, np.int64(2), [1, 3, 2], (1, 3, 2), "1-3-2", " 1 - 3 - 2 "])
def test_parse_code_accepts_an_index_digits_or_text(value):
    assert parse_code(value) == CODES[2] == (1, 3, 2)


@pytest.mark.parametrize(
    "value",
    [24, -1, True, [1, 1, 2], "1-1-2", "0-1-2", "5-1-2", "132", [1, 2], [1.0, 2.0, 3.0], None],
)
def test_parse_code_rejects_what_is_not_a_code(value):
    with pytest.raises(ValueError, match="guess"):
        parse_code(value)


# -- hints ------------------------------------------------------------------------------------


KEYWORDS = ["apple", "river", "crown", "spider"]


def test_valid_hints_have_no_reasons():
    assert validate_hints(["fruit", "water flow", "king"], KEYWORDS) == []


@pytest.mark.parametrize(
    ("hints", "fragment"),
    [
        (["Apple", "b", "c"], "hint 1 'Apple' is one of the keywords"),
        (["a", " RIVER ", "c"], "hint 2 'RIVER' is one of the keywords"),
        (["a", "b", "  "], "hint 3 is empty"),
        (["one two three", "b", "c"], "hint 1 'one two three' has 3 words; at most 2"),
        (["a", "x" * 33, "c"], "has 33 characters; at most 32"),
        (["a", "b"], "got 2"),
        (["a", "b", "c", "d"], "got 4"),
        ("a b c", "must be a list of 3 strings"),
        (["a", 7, "c"], "hint 2 must be a string"),
    ],
)
def test_validate_hints_names_each_broken_rule(hints, fragment):
    reasons = validate_hints(hints, KEYWORDS)
    assert any(fragment in r for r in reasons), reasons


def test_hint_limits_are_configurable():
    assert validate_hints(["one two three", "b", "c"], KEYWORDS, max_words=3) == []
    assert validate_hints(["abcdef", "b", "c"], KEYWORDS, max_chars=5) != []


def test_a_hint_containing_a_keyword_is_allowed():
    assert validate_hints(["apple pie", "b", "c"], KEYWORDS) == []


def test_fallback_replaces_only_the_rule_breaking_hints():
    played, reasons = apply_hint_fallback(["fruit", "River", ""], KEYWORDS)
    assert played == ["fruit", FALLBACK_HINT, FALLBACK_HINT]
    assert len(reasons) == 2


def test_game_refuses_a_keyword_hint_and_changes_nothing():
    game = DecryptoGame(WORDS, 0)
    with pytest.raises(ValueError, match="one of the keywords"):
        game.play_turn([game.keywords[0], "b", "c"], game.code, WRONG)
    assert game.turn == 1 and game.hint_history == [[], [], [], []] and game.code == (3, 1, 4)


# -- turns, counters, endings -------------------------------------------------------------------


def test_reveal_files_each_hint_under_its_keyword():
    game = DecryptoGame(WORDS, 0)  # code 3-1-4
    game.play_turn(["a", "b", "c"], (3, 1, 4), (1, 2, 3))
    assert game.hint_history == [["b"], [], ["a"], ["c"]]
    assert game.code_history == [(3, 1, 4)]
    assert game.turn == 2 and game.code == (3, 4, 1)


def test_wrong_decoder_guess_is_a_miscommunication_and_right_interceptor_guess_an_interception():
    game = DecryptoGame(WORDS, 0)
    result = game.play_turn(HINTS, (1, 3, 4), (3, 1, 4))
    assert result.miscommunication and result.interception
    assert (game.miscommunications, game.interceptions) == (1, 1)
    assert game.ending is None and game.rewards() == {"encoder": 0, "decoder": 0, "interceptor": 0}


def test_two_interceptions_end_the_game_as_intercept():
    game = DecryptoGame(WORDS, 0)
    game.play_turn(HINTS, game.code, game.code)
    game.play_turn(HINTS, game.code, game.code)
    assert game.ending == "intercept" and game.done and game.code is None
    assert game.rewards() == {"encoder": -1, "decoder": -1, "interceptor": 1}
    assert game.summary()["turns"] == 2


def test_two_miscommunications_end_the_game_as_miscomm():
    game = DecryptoGame(WORDS, 0)
    for _ in range(2):
        game.play_turn(HINTS, other(game.code), other(game.code))
    assert game.ending == "miscomm"
    assert game.rewards()["interceptor"] == 1


def test_both_counters_reaching_two_is_ending_both():
    game = DecryptoGame(WORDS, 0)
    game.play_turn(HINTS, other(game.code), game.code)
    game.play_turn(HINTS, other(game.code), game.code)
    assert game.ending == "both"
    assert game.rewards() == {"encoder": -1, "decoder": -1, "interceptor": 1}


def test_surviving_eight_turns_wins_for_the_team():
    game = DecryptoGame(WORDS, 0)
    for turn in range(1, 9):
        assert game.turn == turn
        game.play_turn(HINTS, game.code, other(game.code))
    assert game.ending == "survived" and game.turn == 8
    assert game.rewards() == {"encoder": 1, "decoder": 1, "interceptor": -1}


def test_second_interception_on_turn_8_is_a_loss():
    game = DecryptoGame(WORDS, 0)
    game.play_turn(HINTS, game.code, game.code)  # turn 1: interception
    for _ in range(6):
        game.play_turn(HINTS, game.code, other(game.code))
    assert game.turn == 8
    game.play_turn(HINTS, game.code, game.code)
    assert game.ending == "intercept" and game.rewards()["interceptor"] == 1


def test_second_miscommunication_on_turn_8_is_a_loss():
    game = DecryptoGame(WORDS, 0)
    game.play_turn(HINTS, other(game.code), other(game.code))
    for _ in range(6):
        game.play_turn(HINTS, game.code, other(game.code))
    game.play_turn(HINTS, other(game.code), other(game.code))
    assert game.ending == "miscomm"


def test_max_turns_sets_the_survival_length():
    game = DecryptoGame(WORDS, 0, Options(max_turns=3))
    for _ in range(3):
        game.play_turn(HINTS, game.code, other(game.code))
    assert game.ending == "survived" and len(game.turn_log) == 3


def test_turn_1_interception_counts_by_default():
    game = DecryptoGame(WORDS, 0)
    assert game.interceptor_guesses
    assert game.play_turn(HINTS, game.code, game.code).interception


def test_first_round_rule_means_no_interceptor_guess_on_turn_1():
    game = DecryptoGame(WORDS, 0, Options(first_round_interception=False))
    assert not game.interceptor_guesses
    with pytest.raises(ValueError, match="first-round rule"):
        game.play_turn(HINTS, game.code, game.code)
    result = game.play_turn(HINTS, game.code, None)
    assert result.interceptor_guess is None and not result.interception
    assert game.interceptor_guesses  # from turn 2 on
    with pytest.raises(ValueError, match="interceptor guesses on turn 2"):
        game.play_turn(HINTS, game.code, None)


def test_playing_after_the_end_is_an_error():
    game = DecryptoGame(WORDS, 0, Options(max_turns=1))
    game.play_turn(HINTS, game.code, WRONG)
    with pytest.raises(ValueError, match="game is over"):
        game.play_turn(HINTS, WRONG, WRONG)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"max_turns": 0}, "max_turns"),
        ({"max_turns": 25}, "max_turns"),
        ({"first_round_interception": "yes"}, "first_round_interception"),
        ({"max_hint_words": 0}, "max_hint_words"),
        ({"max_hint_chars": 2.5}, "max_hint_chars"),
    ],
)
def test_bad_options_are_errors_naming_the_option(kwargs, name):
    with pytest.raises(ValueError, match=name):
        Options(**kwargs)


def test_bad_given_keywords_are_an_error_naming_them():
    with pytest.raises(ValueError, match="keywords"):
        DecryptoGame(WORDS, 0, keywords=["a", "b"])


def test_summary_lists_the_turns_as_json():
    game = DecryptoGame(WORDS, 0)
    game.play_turn(["a", "b", "c"], (1, 2, 3), (3, 1, 4))
    assert game.summary() == {
        "keywords": list(game.keywords),
        "ending": None,
        "turns": 1,
        "miscommunications": 1,
        "interceptions": 1,
        "turn_log": [
            {
                "turn": 1,
                "code": [3, 1, 4],
                "hints": ["a", "b", "c"],
                "decoder_guess": [1, 2, 3],
                "interceptor_guess": [3, 1, 4],
                "miscommunication": True,
                "interception": True,
            }
        ],
    }
    assert ENDINGS == ("intercept", "miscomm", "both", "survived")
