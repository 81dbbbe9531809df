"""``socialsim distill``: strategies fitted to a run's decisions, their held-out fidelity, and the
``distilled`` seat that plays them in the donation env."""

from __future__ import annotations

import json

import numpy as np
import pytest
from socialsim.envs.gossip.cues import decision_uniform

import socialsim
from socialsim.cli import main
from socialsim.distill.command import distill
from socialsim.distill.decisions import decisions
from socialsim.distill.strategy import Strategy, load, save
from socialsim.records import read_records
from socialsim.testing.llm_server import ScriptedChatServer
from socialsim.testing.playground import PlayPolicy

NORMS = ("image_scoring", "simple_standing", "stern_judging")


def population(
    tmp_path, seats: dict[str, str], episodes: int = 6, default: str = 'kind = "image_scoring"'
) -> str:
    """A donation run of 10 agents (random schedule, 30 rounds); ``seats`` names the seats that
    are not played by ``default`` (TOML lines of the default seat: image scorers)."""
    lines = [
        'name = "distill_population"',
        'description = "a scripted donation population"',
        f"episodes = {episodes}",
        "seed = 0",
        "[env]",
        'id = "donation_v0"',
        "[env.kwargs]",
        "n_agents = 10",
        'schedule = "random"',
        "rounds = 30",
        "initial_resources = 30.0",
        '[seats."*"]',
        default,
    ]
    for seat, kind in seats.items():
        lines += [f"[seats.{seat}]", f'kind = "{kind}"']
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "population.toml"
    path.write_text("\n".join(lines) + "\n")
    out = tmp_path / "run"
    socialsim.run(str(path), out=out, progress=False)
    return str(out)


MIXED = {
    "agent_0": "always_defect",
    "agent_1": "always_defect",
    "agent_2": "always_cooperate",
    "agent_3": "always_cooperate",
    "agent_4": "stern_judging",
    "agent_5": "stern_judging",
    "agent_6": "simple_standing",
    "agent_7": "simple_standing",
}


@pytest.fixture(scope="module")
def mixed_run(tmp_path_factory):
    return population(tmp_path_factory.mktemp("mixed"), MIXED, episodes=10)


def test_distilling_scripted_seats_recovers_each_norm_on_held_out_episodes(mixed_run):
    strategies, source = distill([mixed_run])
    assert source["episodes"] == 10 and source["by"] == "kind"
    assert set(strategies) == {*NORMS, "always_cooperate", "always_defect"}
    for name, strategy in strategies.items():
        fidelity = strategy.fidelity
        for purpose in ("donate", "gossip"):
            models = fidelity[purpose]["models"]
            assert models["distilled"]["accuracy"] == 1.0, (name, purpose)
            # the norm the seats play explains them as well as the tables, better than a constant
            assert models[name]["accuracy"] == 1.0
            assert models["distilled"]["log_likelihood"] > models["constant"]["log_likelihood"]
        assert fidelity["nearest_norm"] == name


def test_stern_judgings_gossip_is_an_exclusive_or_that_the_tables_hold(mixed_run):
    strategy = distill([mixed_run], by="kind", smoothing=0.0)[0]["stern_judging"]
    # valence classes good, neutral, bad: praise helping the good and refusing the bad
    tones = strategy.valence_probability()
    assert tones[1, 0].tolist() == [1.0, 0.0, 0.0]  # helped, own standing good
    assert tones[1, 1].tolist() == [0.0, 0.0, 1.0]  # helped, own standing bad
    assert tones[0, 0].tolist() == [0.0, 0.0, 1.0]
    assert tones[0, 1].tolist() == [1.0, 0.0, 0.0]
    assert strategy.help_probability()[:, 1].tolist() == [0.0, 0.0]  # bad standing: refused


def test_decisions_count_every_valid_donation_and_tone_of_the_record(mixed_run):
    records = read_records(mixed_run)
    found = decisions(records)
    donations = sum(len(r.summary["interactions"]) for r in records)
    assert sum(d.purpose == 0 for d in found) == donations == 10 * 30 * 5
    assert sum(d.purpose == 1 for d in found) == donations


def image_scoring_file(path) -> str:
    """A policy file whose tables are image scoring's, every cell seen, no smoothing."""
    strategy = Strategy("image", smoothing=0.0)
    strategy.donate[:] = [[[0, 9], [0, 9]], [[9, 0], [9, 0]]]  # refuse a bad image
    strategy.gossip[1, :, 0] = 9  # helped: praise
    strategy.gossip[0, :, 2] = 9  # refused: criticise
    save(path, {"image": strategy}, {"runs": []})
    return str(path)


def test_a_distilled_file_of_image_scoring_plays_exactly_as_image_scoring(tmp_path):
    policy = image_scoring_file(tmp_path / "image.json")
    scripted = read_records(population(tmp_path / "a", {"agent_0": "always_defect"}, 2))
    distilled = f'kind = "distilled"\npolicy = "{policy}"'
    played = read_records(population(tmp_path / "b", {"agent_0": "always_defect"}, 2, distilled))

    def moves(record):
        return [(i["donor"], i["action"], i["tone"]) for i in record.summary["interactions"]]

    assert [moves(r) for r in played] == [moves(r) for r in scripted]


def test_the_decision_draw_is_the_same_for_one_seat_or_a_million():
    seeds = np.array([0, 1, 2**63 - 1, 12345678901234567], dtype=np.uint64)
    drawn = decision_uniform(seeds, 7, 1)
    assert drawn.tolist() == [decision_uniform(int(s), 7, 1) for s in seeds]
    assert all(0.0 <= u < 1.0 for u in drawn)
    assert decision_uniform(5, 7, 0) != decision_uniform(5, 7, 1) != decision_uniform(5, 8, 1)


def test_a_mixed_llm_run_prints_its_fidelity_beside_the_constant_and_nearest_norm(
    tmp_path, capsys, fresh_models
):
    with ScriptedChatServer(PlayPolicy(), alternating_roles=True) as server:
        socialsim.run(
            "llm_align_donation",
            out=tmp_path / "llm",
            overrides=[
                "episodes=2",
                "grid.env.kwargs.gossip=[true]",
                "grid.seats.*.equilibrium_knowledge=[true]",
                f"seats.*.model.api_base={server.url}",
                "seats.*.model.model=openai/play",
            ],
            progress=False,
        )
    out = tmp_path / "llm.json"
    assert main(["distill", str(tmp_path / "llm"), "--by", "model", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "strategy openai/play: 2 episodes, 2-fold" in printed
    assert "(nearest norm)" in printed and "constant" in printed
    strategy = load(out)["openai/play"]
    assert strategy.donate.sum() > 0 and strategy.gossip.sum() > 0
    assert json.loads(out.read_text())["source"]["experiments"] == ["llm_align_donation"]


@pytest.mark.parametrize(
    ("argv", "field"),
    [
        (["--by", "colour"], "--by"),
        (["--folds", "1"], "--folds"),
        (["--seats", "agent_99"], "--seats"),
        (["--smoothing", "-1"], "smoothing"),
    ],
)
def test_bad_arguments_are_one_line_naming_the_field(mixed_run, tmp_path, capsys, argv, field):
    status = main(["distill", mixed_run, "--out", str(tmp_path / "p.json"), *argv])
    error = capsys.readouterr().err
    assert status == 2 and error.count("\n") == 1 and field in error
    assert not (tmp_path / "p.json").exists()


@pytest.mark.parametrize(
    ("content", "field"),
    [
        ("not json", "policy"),
        ('{"format": "other"}', "policy"),
        (
            '{"format": "socialsim-distilled", "version": 1, "smoothing": 0.5, '
            '"strategies": {"x": {"donate": [1, 2], "gossip": []}}}',
            "policy.strategies.x.donate",
        ),
    ],
)
def test_a_bad_policy_file_fails_the_run_before_anything_is_played(tmp_path, content, field):
    (tmp_path / "bad.json").write_text(content)
    with pytest.raises(ValueError, match=field.replace(".", r"\.")):
        load(tmp_path / "bad.json")


@pytest.mark.slow
def test_the_demo_distils_an_offline_llm_run_and_plays_it_at_scale_and_in_evolution(
    tmp_path, fresh_models
):
    from socialsim.experiments.distill_demo import at_scale, evolve, play_llm_run

    run = play_llm_run(tmp_path, episodes=2)
    strategies, _ = distill([run], by="model", folds=2)
    strategy = strategies["openai/play"]
    models = strategy.fidelity["donate"]["models"]
    # one seat always defects, the others judge: no constant explains them as the tables do
    assert models["distilled"]["log_likelihood"] > models["constant"]["log_likelihood"]
    assert 0.0 <= at_scale(strategy, agents=2000, rounds=120, gossip=True) <= 1.0
    shares, present = evolve(strategy, seeds=2, generations=2)
    assert sum(shares.values()) == pytest.approx(1.0)
    assert set(present) == {"llm", "stern_judging", "always_defect"}
