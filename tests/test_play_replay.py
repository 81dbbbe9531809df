"""A recorded Decrypto game replayed with another decoder: the recorded hints come back turn by
turn, and a replay on another seed is refused by name."""

from __future__ import annotations

from socialsim.agents.human.replay import replay_settings

from socialsim.records import EventLog
from socialsim.runner import EpisodeSpec, play_episode


def test_a_recorded_game_is_replayed_with_its_hints_against_another_decoder(tmp_path):
    recorded = EpisodeSpec(
        env_id="decrypto_v0",
        seed=7,
        seats={
            "encoder": {"kind": "decrypto_random_encoder"},
            "decoder": {"kind": "decrypto_random_guesser"},
            "interceptor": {"kind": "decrypto_random_guesser"},
        },
    )
    original = play_episode(recorded)
    with EventLog(tmp_path / "human_games") as log:
        log.append(original)
    settings = replay_settings(tmp_path / "human_games")
    assert settings["seed"] == 7 and settings["max_turns"] == original.summary["turns"]

    replay = EpisodeSpec(
        env_id="decrypto_v0",
        seed=settings["seed"],
        env_kwargs={"max_turns": settings["max_turns"]},
        seats={
            "encoder": {"kind": "decrypto_replay_encoder", "source": str(tmp_path / "human_games")},
            "decoder": {"kind": "glove_decoder"},
            "interceptor": {"kind": "decrypto_random_guesser"},
        },
    )
    again = play_episode(replay)
    assert again.status == "done", again.error
    turns = again.summary["turn_log"]
    assert [t["hints"] for t in turns] == [
        t["hints"] for t in original.summary["turn_log"][: len(turns)]
    ]
    assert again.summary["keywords"] == original.summary["keywords"]

    wrong = play_episode(EpisodeSpec(**{**replay.__dict__, "seed": 8}))
    assert wrong.status == "failed" and "seed = 7" in wrong.error
