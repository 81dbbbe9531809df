"""The rl agent kind: a saved policy plays its seat through `socialsim run`, as in its view."""

import json

import pytest
from gymnasium.wrappers import FilterObservation

from socialsim import cli, records
from socialsim.episode import EpisodeSpec
from socialsim.rl.view import SeatView
from socialsim.runner import play_episode

MaskablePPO = pytest.importorskip("sb3_contrib").MaskablePPO
pytestmark = pytest.mark.slow  # torch and SB3 load in each test

KWARGS = {"n_agents": 4, "schedule": "random", "rounds": 6}
OTHERS = {f"agent_{i}": {"kind": "stern_judging"} for i in (1, 2, 3)}


def save_policy(path, keys=None, **kwargs):
    """An untrained (seeded) MaskablePPO donor saved at ``path``: enough to test the plumbing."""
    view = SeatView("donation_v0", "agent_0", OTHERS, ["counterpart"], **(kwargs or KWARGS))
    env = FilterObservation(view, keys) if keys else view
    MaskablePPO("MultiInputPolicy", env, n_steps=16, batch_size=16, seed=0, device="cpu").save(path)
    return view


def inline(spec):
    return "{" + ", ".join(f"{k} = {json.dumps(v)}" for k, v in spec.items()) + "}"


@pytest.fixture
def toml(tmp_path):
    def write(seat_spec, n_agents=4):
        seats = {f"agent_{i}": {"kind": "stern_judging"} for i in range(n_agents)}
        seats["agent_0"] = seat_spec
        lines = [
            'name = "rl_seat"',
            "episodes = 2",
            "seed = 0",
            "[env]",
            'id = "donation_v0"',
            "[env.kwargs]",
            f"n_agents = {n_agents}",
            'schedule = "random"',
            "rounds = 6",
            "[seats]",
            *(f"{agent} = {inline(spec)}" for agent, spec in seats.items()),
        ]
        path = tmp_path / "rl_seat.toml"
        path.write_text("\n".join(lines) + "\n")
        return path

    return write


@pytest.mark.parametrize("keys", [None, ["action_mask", "counterpart"]])
def test_socialsim_run_plays_a_saved_policy_as_the_view_did(tmp_path, toml, keys):
    policy = tmp_path / "policy.zip"
    view = save_policy(policy, keys)
    out = tmp_path / "out"
    assert (
        cli.main(
            ["run", str(toml({"kind": "rl", "path": str(policy)})), "--out", str(out), "--quiet"]
        )
        == 0
    )
    played = {r.seed: r for r in records.read_records(out)}
    assert len(played) == 2
    model = MaskablePPO.load(policy, device="cpu")
    for seed, record in played.items():
        observation, _ = view.reset(seed=seed)
        done = False
        while not done:
            seen = {k: observation[k] for k in (keys or observation)}
            action, _ = model.predict(seen, action_masks=view.action_masks(), deterministic=True)
            observation, _, terminated, truncated, _ = view.step(action)
            done = terminated or truncated
        assert view.record.steps == record.steps
        assert view.record.messages == record.messages


def test_a_policy_for_other_spaces_is_refused_naming_both(tmp_path, toml, capsys):
    policy = tmp_path / "policy.zip"
    save_policy(policy)  # saw 4 agents: an observation of 1 + 2 + 4 + 20 = 27 numbers
    out = tmp_path / "out"
    experiment = toml({"kind": "rl", "path": str(policy)}, n_agents=5)
    assert cli.main(["run", str(experiment), "--out", str(out), "--quiet"]) != 0
    # the run refuses the seat, on stderr or in the failed episodes' records
    said = capsys.readouterr().err
    if out.exists():
        said += "".join(r.error or "" for r in records.read_records(out, include_failed=True))
    assert "takes observation Dict(" in said and "(27,)" in said and "action Discrete(7)" in said
    assert "seat agent_0 gives observation of shape (33,)" in said


def test_a_missing_policy_file_is_a_configuration_error(tmp_path):
    seats = {"agent_0": {"kind": "rl", "path": str(tmp_path / "none.zip")}, **OTHERS}
    with pytest.raises(ValueError, match="path: no policy file at"):
        play_episode(EpisodeSpec("donation_v0", 0, seats, KWARGS))
