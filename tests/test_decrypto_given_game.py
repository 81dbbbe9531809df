"""A Decrypto game given instead of drawn (replays of recorded games): the env's ``keywords`` and
``codes`` play exactly those words and codes, are checked with errors that name them, and leave
a game without them as the seed draws it."""

from __future__ import annotations

import pytest
from socialsim.envs import decrypto_v0
from socialsim.envs.decrypto.core import DecryptoGame
from socialsim.envs.decrypto.protocol import given_codes

from socialsim import config
from socialsim.cli import main
from socialsim.episode import EpisodeSpec
from socialsim.runner import play_episode

KEYWORDS = ["harbour", "violin", "candle", "meadow"]
CODES = ["2-4-1", [1, 3, 2], "4-3-2", "3-1-4", "1-2-3", "2-1-3", "4-1-2", "3-2-4"]
PLAYED = [(2, 4, 1), (1, 3, 2), (4, 3, 2), (3, 1, 4), (1, 2, 3), (2, 1, 3), (4, 1, 2), (3, 2, 4)]
#: seed 0's codes with the bundled 680-word list (the core's docstring)
SEED_0 = [(3, 1, 4), (3, 4, 1), (1, 4, 2), (3, 4, 2), (4, 1, 3), (1, 2, 4), (2, 1, 4), (2, 1, 3)]
SEATS = {
    "encoder": {"kind": "decrypto_random_encoder"},
    "decoder": {"kind": "decrypto_random_guesser"},
    "interceptor": {"kind": "decrypto_random_guesser"},
}


def play_all_turns(env) -> list[tuple[int, int, int]]:
    """Play to the end with a perfect decoder and an interceptor that never intercepts; the
    codes the encoder was given, turn by turn (a reversed code is never the code)."""
    seen = []
    while env.agents:
        code = tuple(env.game.code)
        seen.append(code)
        env.step({"encoder": {"hints": ["tide", "bow", "wax"]}})
        env.step({"decoder": {"guess": list(code)}, "interceptor": {"guess": [*code][::-1]}})
    return seen


def test_given_keywords_and_codes_are_played_turn_by_turn_whatever_the_seed():
    for seed in (0, 5):
        env = decrypto_v0.parallel_env(keywords=KEYWORDS, codes=CODES)
        _, infos = env.reset(seed=seed)
        assert list(infos["decoder"]["keywords"]) == KEYWORDS
        assert infos["encoder"]["code"] == (2, 4, 1)
        assert play_all_turns(env) == PLAYED
        assert env.game.ending == "survived" and env.game.code_history == PLAYED


def test_given_codes_alone_keep_the_seeds_keywords_and_given_keywords_alone_the_seeds_codes():
    drawn = DecryptoGame(decrypto_v0.DecryptoEnv().words, 0).keywords
    env = decrypto_v0.parallel_env(codes=CODES)
    env.reset(seed=0)
    assert env.game.keywords == drawn and play_all_turns(env) == PLAYED
    env = decrypto_v0.parallel_env(keywords=KEYWORDS)
    env.reset(seed=0)
    assert env.game.keywords == tuple(KEYWORDS) and play_all_turns(env) == SEED_0


def test_without_them_the_seed_draws_the_game_and_the_record_is_unchanged():
    plain = play_episode(EpisodeSpec(env_id="decrypto_v0", seed=0, seats=SEATS))
    none = play_episode(
        EpisodeSpec(
            env_id="decrypto_v0",
            seed=0,
            seats=SEATS,
            env_kwargs={"keywords": None, "codes": None},
        )
    )
    assert [tuple(t["code"]) for t in plain.summary["turn_log"]] == SEED_0[: plain.summary["turns"]]
    assert none.summary == plain.summary and none.messages == plain.messages


def test_reset_options_give_one_game_over_the_constructors():
    env = decrypto_v0.parallel_env(keywords=KEYWORDS, codes=CODES)
    env.reset(seed=0, options={"codes": list(reversed(CODES))})
    assert env.game.keywords == tuple(KEYWORDS) and play_all_turns(env) == PLAYED[::-1]
    env.reset(seed=0)
    assert env.game.code == (2, 4, 1)


def test_the_given_game_is_never_published_and_the_interceptor_never_sees_a_keyword():
    record = play_episode(
        EpisodeSpec(
            env_id="decrypto_v0",
            seed=3,
            seats=SEATS,
            env_kwargs={"keywords": KEYWORDS, "codes": CODES},
        )
    )
    assert record.status == "done", record.error
    rules = next(m for m in record.messages if m["kind"] == "rules")["payload"]
    assert "codes" not in rules and "keywords" not in rules
    for message in record.messages:
        if message["kind"] == "keywords":
            assert message["to"] == "team:encoders" and message["payload"]["keywords"] == KEYWORDS
    assert [tuple(t["code"]) for t in record.summary["turn_log"]] == PLAYED[
        : record.summary["turns"]
    ]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"keywords": ["sun", "moon", "star"]},
            "keywords: expected a list of 4 distinct non-empty strings, the keyword of digit 1 "
            "first, got ['sun', 'moon', 'star']",
        ),
        ({"keywords": "sun moon star sky"}, "keywords: expected a list of 4 distinct"),
        ({"keywords": ["sun", "moon", " ", "sky"]}, "keywords: expected a list of 4 distinct"),
        (
            {"keywords": ["sun", "Moon", "star", "moon"]},
            "keywords: ['sun', 'Moon', 'star', 'moon'] repeats a keyword",
        ),
        (
            {"codes": CODES[:5]},
            "codes: 5 codes given for max_turns 8; give one code for each turn the game may last",
        ),
        (
            {"codes": ["1-2-3", "3-3-1", *CODES]},
            "codes: turn 2's code '3-3-1' is not a code such as '3-1-4' or [3, 1, 4], distinct "
            "digits 1-4",
        ),
        ({"codes": [314, *CODES]}, "codes: turn 1's code 314 is a number"),
        (
            {"codes": ["1-2-3", "3-1-4", "1-2-3"], "max_turns": 3},
            "codes: 1-2-3 is given for turns 1 and 3; codes never repeat within a game",
        ),
        ({"codes": "1-2-3"}, "codes: expected a list of codes, one per turn"),
    ],
)
def test_a_bad_given_game_is_an_error_naming_the_field(kwargs, message):
    with pytest.raises(ValueError) as error:
        decrypto_v0.parallel_env(**kwargs)
    assert message in str(error.value)


def test_a_short_code_list_is_enough_for_a_shorter_game():
    assert given_codes(["1-2-3", "4-3-2"], max_turns=2) == ((1, 2, 3), (4, 3, 2))
    env = decrypto_v0.parallel_env(codes=["1-2-3", "4-3-2"], max_turns=2)
    env.reset(seed=0)
    assert play_all_turns(env) == [(1, 2, 3), (4, 3, 2)]


def test_a_bad_given_game_in_an_experiment_is_a_config_error_before_anything_is_written(
    tmp_path, capsys
):
    path = tmp_path / "given.toml"
    path.write_text(
        'name = "given"\nepisodes = 1\n[env]\nid = "decrypto_v0"\n'
        '[env.kwargs]\nkeywords = ["harbour", "violin", "candle", "meadow"]\n'
        'codes = ["2-4-1", "1-3-2"]\n'
        '[seats.encoder]\nkind = "decrypto_random_encoder"\n'
        '[seats.decoder]\nkind = "decrypto_random_guesser"\n'
        '[seats.interceptor]\nkind = "decrypto_random_guesser"\n'
    )
    with pytest.raises(
        config.ConfigError, match=r"env.kwargs.codes: 2 codes given for max_turns 8"
    ):
        config.load(str(path))
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out), "--quiet"]) == 2
    assert not out.exists()
    assert "env.kwargs.codes: 2 codes given" in capsys.readouterr().err
