"""socialsim.results.run: what `socialsim run` does, as a function."""

import pytest

from socialsim.config import ConfigError
from socialsim.results import run

PENNIES = {
    "name": "pennies_api",
    "episodes": 3,
    "env": {"id": "matching_pennies_v0", "kwargs": {"rounds": 4}},
    "seats": {
        "matcher": {"kind": "pennies_random", "p_heads": 1.0},
        "mismatcher": {"kind": "pennies_random", "p_heads": 1.0},
    },
    "grid": {"env.form": ["parallel", "aec"]},
}


def test_run_a_dict_returns_the_results_and_a_rerun_plays_nothing(tmp_path):
    lines = []
    results = run(PENNIES, out=tmp_path / "out", overrides=["episodes=2"], say=lines.append)
    assert (results.total, results.ran, results.failed) == (4, 4, [])
    assert lines[-1] == "pennies_api: 4/4 episodes done, 0 failed this run"
    frame = results.frame()
    assert len(frame) == 8  # 4 episodes x 2 seats
    # both always show heads: the matcher wins all 4 rounds of every episode
    assert frame.groupby("seat")["ret"].mean().to_dict() == {"matcher": 4.0, "mismatcher": -4.0}
    again = run(PENNIES, out=tmp_path / "out", overrides=["episodes=2"])
    assert again.ran == 0 and len(again.records()) == 4
    grown = run(PENNIES, out=tmp_path / "out")  # the dict's 3 episodes: one more per cell
    assert (grown.total, grown.ran) == (6, 2)


def test_a_bad_override_raises_before_anything_is_written(tmp_path):
    with pytest.raises(ConfigError, match="seats.matcher.p_heads: expected a number"):
        run(PENNIES, out=tmp_path / "out", overrides=["seats.matcher.p_heads=yes"])
    assert not (tmp_path / "out").exists()


def test_overrides_as_a_dict_are_the_set_strings_they_spell(tmp_path):
    from socialsim.config.overrides import assignments

    given = {"episodes": 2, "env.kwargs.gossip": False, "seats.agent_1": {"kind": "liar"}}
    assert assignments(given) == [
        "episodes=2",
        "env.kwargs.gossip=false",
        'seats.agent_1={"kind" = "liar"}',
    ]
    results = run("align_quickstart", tmp_path / "out", {"episodes": 1})
    assert results.total == len(results.experiment.cells)


def test_an_override_value_toml_cannot_spell_is_one_clear_error():
    from socialsim.config import ConfigError
    from socialsim.config.overrides import assignments

    with pytest.raises(ConfigError, match=r"overrides\['seed'\]: a number, string, bool, list or"):
        assignments({"seed": object()})
