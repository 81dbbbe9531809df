"""The cues beside the base ones (stock, round, last experience): read from a record as the
seat saw them, compared on held-out episodes, carried in a policy file that the ``distilled``
env seat plays, and summed over when the numpy society plays the file."""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest
from socialsim.envs.gossip.cues import check_cues
from test_distill import population

from socialsim.cli import main
from socialsim.distill.command import distill
from socialsim.distill.decisions import decisions, record_decisions
from socialsim.distill.strategy import Strategy, load, save
from socialsim.episode import EpisodeSpec
from socialsim.records import read_records
from socialsim.runner import play_episode
from socialsim.society.vectorised import ReplicatedSociety

#: a seat that scores images as image scoring does, but refuses everyone in the episode's
#: last third (rounds 21-30 of 30); it gossips as image scoring does
LATE_DEFECTOR = """
from socialsim.agents.scripted.gossip import ImageScoring


class LateDefector(ImageScoring):
    def cooperates(self, counterpart, decision, info):
        if info["round"] > 20:
            return "defect"
        return super().cooperates(counterpart, decision, info)
"""


def test_the_extra_cues_of_a_small_record_are_those_its_seats_were_told():
    seats = {f"agent_{i}": {"kind": "image_scoring"} for i in range(4)}
    seats["agent_0"] = {"kind": "always_defect"}
    options = {"n_agents": 4, "schedule": "random", "rounds": 6, "initial_resources": 10.0}
    record = play_episode(EpisodeSpec("donation_v0", 3, seats, options))
    found = {(d.round, d.seat, d.purpose): d.extra for d in record_decisions(record)}
    # (own stock below the initial 10, counterpart richer, third of 6 rounds, last experience)
    # round 2: agent_3 gives to agent_1, both at 9 after helping in round 1
    assert found[2, "agent_3", 0] == (1, 0, 0, 0)
    # round 3: agent_3 (8) gives to agent_1 (14), who was never agent_3's donor
    assert found[3, "agent_3", 0] == (1, 1, 1, 0)
    # round 3: agent_2 (15) gossips about agent_0 (15), who refused it in round 2
    assert found[3, "agent_2", 1] == (0, 0, 1, 2)
    # round 4: agent_0 (15) gossips about agent_1 (19), who refused it this round and helped
    # it in round 1: the last experience is round 1's (this round's help is the base cue)
    assert found[4, "agent_0", 1] == (0, 1, 1, 1)
    # round 6: agent_0 (15) gives to agent_1 (24), who helped it in round 1, refused in 4
    assert found[6, "agent_0", 0] == (0, 1, 2, 2)
    # round 6: agent_2 (13) gives to agent_3 (12), who helped it in round 1
    assert found[6, "agent_2", 0] == (0, 0, 2, 1)


@pytest.fixture(scope="module")
def late_run(tmp_path_factory):
    """Late defectors (image scorers refusing everyone in rounds 21-30) among two
    always-defectors, 10 episodes of 30 rounds."""
    lab = tmp_path_factory.mktemp("lab")
    (lab / "roundlab.py").write_text(textwrap.dedent(LATE_DEFECTOR))
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(lab))
        out = tmp_path_factory.mktemp("late")
        defectors = {"agent_0": "always_defect", "agent_1": "always_defect"}
        yield population(out, defectors, 10, 'kind = "roundlab:LateDefector"')


def test_a_seat_that_defects_late_is_explained_by_the_round_and_not_by_the_base_cues(late_run):
    late = distill([late_run], cues="base,round")[0]["roundlab:LateDefector"]
    assert late.extras == ("round",)
    table = late.fidelity["cues"]
    donate = {label: entry["donate"] for label, entry in table.items()}
    assert list(table) == ["base", "+ stock", "+ round", "+ last experience", "+ all"]
    # every donation is predicted but the three to a recipient of bad image and good standing,
    # all made in one episode: the folds that hold it out never saw that cell, whose base cell
    # is unseen too, so they play the overall shares (help)
    mine = [d for d in decisions(read_records(late_run)) if d.seat not in ("agent_0", "agent_1")]
    rare = [d for d in mine if d.purpose == 0 and d.cues == (1, 0)]
    assert len(rare) == 3 and len({d.episode for d in rare}) == 1
    n = sum(d.purpose == 0 for d in mine)
    assert donate["+ round"]["accuracy"] == (n - 3) / n
    assert late.fidelity["donate"]["models"]["distilled"]["accuracy"] == (n - 3) / n
    # the base cues see no round: at best each base cell's majority choice, which misses the
    # late refusals of recipients they call good and the early help to those of bad standing
    cells: dict = {}
    for d in mine:
        if d.purpose == 0:
            cells.setdefault(d.cues, []).append(d.choice)
    best = sum(max(c.count(0), c.count(1)) for c in cells.values())
    assert best < n - 100 and donate["base"]["accuracy"] <= best / n
    # per decision, the round's table is nearly certain where the base cues' is not
    assert donate["+ round"]["log_likelihood"] > -0.01
    assert donate["base"]["log_likelihood"] < donate["+ round"]["log_likelihood"] - 0.25
    assert (donate["base"]["cells"], donate["+ round"]["cells"], donate["+ all"]["cells"]) == (
        4,
        12,
        144,
    )
    # image scoring's honest gossip needs no extra cue
    assert table["base"]["gossip"]["accuracy"] == 1.0


def test_the_distilled_seat_with_the_round_cue_plays_the_late_defectors_moves(late_run, tmp_path):
    strategies, source = distill([late_run], cues="base,round", smoothing=0.0)
    policy = tmp_path / "late.json"
    save(policy, strategies, source)
    assert json.loads(policy.read_text())["version"] == 2
    distilled = f'kind = "distilled"\npolicy = "{policy}"\nname = "roundlab:LateDefector"'
    defectors = {"agent_0": "always_defect", "agent_1": "always_defect"}
    played = read_records(population(tmp_path / "replay", defectors, 10, distilled))

    def moves(record):
        return [(i["donor"], i["action"], i["tone"]) for i in record.summary["interactions"]]

    assert [moves(r) for r in played] == [moves(r) for r in read_records(late_run)]


def test_a_policy_over_the_round_given_to_the_society_plays_summed_over_the_round(late_run):
    rich = distill([late_run], cues="base,round")[0]["roundlab:LateDefector"]
    base = distill([late_run], cues="base")[0]["roundlab:LateDefector"]
    assert np.array_equal(rich.marginal().donate, base.donate)
    assert np.array_equal(rich.marginal().gossip, base.gossip)
    options = {"seeds": [4, 5], "gossip_reach": 0.7}
    population_ = {"late": 30, "stern_judging": 10}
    with pytest.warns(UserWarning, match=r"distilled\.late: .*base,round.* summed over round"):
        summed = ReplicatedSociety(population_, distilled={"late": rich}, **options)
    alike = ReplicatedSociety(population_, distilled={"late": base}, **options)
    a, b = summed.run(20), alike.run(20)
    assert np.array_equal(a.to_numpy(), b.to_numpy(), equal_nan=True)
    assert np.array_equal(summed.helps_received, alike.helps_received)


def test_a_cell_never_seen_plays_its_base_cells_probabilities():
    strategy = Strategy("s", extras=("last",), smoothing=0.5)
    strategy.donate[0, 0, 1] = [0, 4]  # good recipient that helped me: helped 4 times
    strategy.donate[0, 0, 2] = [2, 0]  # good recipient that refused me: refused twice
    base = Strategy("b", strategy.donate.sum(axis=2), strategy.gossip.sum(axis=2), 0.5)
    p_rich, p_base = strategy.help_probability(), base.help_probability()
    assert p_rich[0, 0, 0] == p_base[0, 0]  # no experience: never seen
    # seen cells are shrunk towards it: (4 + 0.5 * 2 * p) / (4 + 1)
    assert p_rich[0, 0, 1] == pytest.approx((4 + p_base[0, 0]) / 5)
    assert p_rich[1, 1].tolist() == [p_base[1, 1]] * 3


def test_a_base_policy_file_stays_version_1_and_a_richer_one_round_trips(tmp_path):
    base = Strategy("b")
    base.donate[0, 0, 1] = 3
    save(tmp_path / "base.json", {"b": base}, {"runs": []})
    data = json.loads((tmp_path / "base.json").read_text())
    assert data["version"] == 1 and "cues" not in data["strategies"]["b"]
    rich = Strategy("r", extras=("stock", "last"))
    rich.donate[0, 1, 1, 0, 2, 1] = 7
    save(tmp_path / "rich.json", {"r": rich}, {"runs": []})
    loaded = load(tmp_path / "rich.json")["r"]
    assert loaded.extras == ("stock", "last") and loaded.donate.shape == (2, 2, 2, 2, 3, 2)
    assert np.array_equal(loaded.donate, rich.donate)
    assert json.loads((tmp_path / "rich.json").read_text())["strategies"]["r"]["cues"] == [
        "base",
        "stock",
        "last",
    ]


def test_cue_lists_name_extra_cues_in_one_order_and_refuse_others():
    assert check_cues("base") == ()
    assert check_cues("last,base,round") == ("round", "last")
    assert check_cues("all") == ("stock", "round", "last")
    with pytest.raises(ValueError, match=r"--cues: 'mood' is no cue; allowed: base, stock"):
        check_cues("base,mood", "--cues")


def test_the_command_prints_the_cue_table_and_refuses_an_unknown_cue(late_run, tmp_path, capsys):
    out = tmp_path / "p.json"
    assert main(["distill", late_run, "--cues", "base,round", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "the cues beside the base ones" in printed
    assert (
        "+ last experience" in printed
        and "over the base cues and round: donate 12 cells" in printed
    )
    assert load(out)["roundlab:LateDefector"].extras == ("round",)
    status = main(["distill", late_run, "--cues", "mood", "--out", str(tmp_path / "q.json")])
    error = capsys.readouterr().err
    assert status == 2 and error.count("\n") == 1 and "--cues: 'mood'" in error
    assert not (tmp_path / "q.json").exists()
