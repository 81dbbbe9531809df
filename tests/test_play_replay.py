"""The replay agents: the recorded hints and guesses come back turn by turn, a replay on
another game's codes is refused naming both codes, and bad recorded turns are errors naming
them."""

from __future__ import annotations

import pytest
from socialsim.agents.human.replay import ReplayEncoder, ReplayGuesser

from socialsim.episode import EpisodeSpec
from socialsim.runner import play_episode

HINTS = [["wick", "cider", "frozen"], ["ice", "brass", "glow"]]
CODES = ["1-2-3", "3-4-1"]


def spec(codes, encoder_codes=CODES):
    return EpisodeSpec(
        env_id="decrypto_v0",
        seed=0,
        env_kwargs={
            "keywords": ["lantern", "orchard", "glacier", "trumpet"],
            "codes": codes,
            "max_turns": 2,
        },  # fmt: skip
        seats={
            "encoder": {
                "kind": "decrypto_replay_encoder",
                "recorded": HINTS,
                "codes": encoder_codes,
            },
            "decoder": {"kind": "decrypto_replay_guesser", "recorded": ["1-2-3", [3, 4, 1]]},
            "interceptor": {"kind": "decrypto_replay_guesser", "recorded": ["3-2-1", "3-4-1"]},
        },
    )


def test_the_recorded_turns_are_played_back():
    record = play_episode(spec(CODES))
    assert record.status == "done", record.error
    turns = record.summary["turn_log"]
    assert [t["hints"] for t in turns] == HINTS
    assert [t["decoder_guess"] for t in turns] == [[1, 2, 3], [3, 4, 1]]
    assert [t["interceptor_guess"] for t in turns] == [[3, 2, 1], [3, 4, 1]]
    assert record.summary["ending"] == "survived" and record.summary["interceptions"] == 1


def test_a_replay_on_another_games_codes_is_refused_naming_both():
    record = play_episode(spec(["1-2-3", "4-3-2"]))
    assert record.status == "failed"
    assert "turn 2's code is 4-3-2, not the recorded 3-4-1" in record.error


def test_a_game_longer_than_the_recorded_turns_is_refused_naming_them():
    longer = spec(CODES)
    longer = EpisodeSpec(
        **{**longer.__dict__, "env_kwargs": {"codes": ["1-2-3", "3-4-1", "2-1-4"], "max_turns": 3}}
    )
    record = play_episode(longer)
    assert record.status == "failed"
    assert (
        "the recorded game has 2 turns and this is turn 3; play it with max_turns = 2"
        in record.error
    )


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: ReplayEncoder([["a", "b"]]), "recorded: turn 1's hints must be 3 strings"),
        (lambda: ReplayEncoder("abc"), "recorded: expected a list of turns of 3 hints each"),
        (
            lambda: ReplayGuesser(["1-2-3", "1-1-2"]),
            "recorded: turn 2's guess '1-1-2' is not a code",
        ),
        (lambda: ReplayGuesser([]), "recorded: expected a list of codes, one per turn"),
    ],
)
def test_bad_recorded_turns_are_errors_naming_the_turn(build, message):
    with pytest.raises(ValueError, match=message):
        build()
