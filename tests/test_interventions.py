"""Interventions on the bus: hide, inject, change; applied by the engine, recorded, and the
record's audience still says who saw what after the change."""

from __future__ import annotations

import csv
import json

import pytest
from socialsim.envs.gossip import tom

from socialsim import config
from socialsim.cli import main
from socialsim.episode import Episode, EpisodeSpec
from socialsim.interventions import check
from socialsim.records import EpisodeRecord
from socialsim.runner import play_episode

RESIDENTS = [f"agent_{i}" for i in range(8)]
ENTRANT = "agent_8"
SEATS = {**{a: {"kind": "image_scoring"} for a in RESIDENTS}, ENTRANT: {"kind": "entrant"}}
KWARGS = {"n_agents": 9, "entrant": "joins", "rounds": 24, "entrant_round": 5}
HIDE = {"action": "hide", "about": ENTRANT, "from": RESIDENTS}


def _spec(*interventions, seats=SEATS):
    return EpisodeSpec(
        env_id="donation_v0", seed=0, seats=seats, env_kwargs=KWARGS, interventions=interventions
    )


def _towards_entrant(record):
    return [
        (i["round"], i["action"])
        for i in record.summary["interactions"]
        if i["recipient"] == ENTRANT
    ]


def test_hiding_the_gossip_about_the_entrant_from_the_residents_keeps_them_helping_it():
    plain = play_episode(_spec())
    hidden = play_episode(_spec(HIDE))
    # the same seed: the residents refuse the exposed entrant, and help it when they never hear
    assert _towards_entrant(plain)[-3:] == [(16, "defect"), (18, "defect"), (19, "defect")]
    assert _towards_entrant(hidden)[-3:] == [
        (16, "cooperate"),
        (18, "cooperate"),
        (19, "cooperate"),
    ]
    assert plain.interventions == []
    about = [
        m for m in hidden.messages if m["kind"] == "gossip" and m["payload"]["about"] == ENTRANT
    ]
    assert [n["message"] for n in hidden.interventions] == [m["id"] for m in about]
    assert all(n["to_before"] == "*" and n["action"] == "hide" for n in hidden.interventions)
    # the audit: each hidden gossip reached the entrant only, and no resident saw it
    for message in about:
        assert message["to"] == [ENTRANT]
        assert not any(tom.has_seen(hidden.messages, r, message["id"]) for r in RESIDENTS)


def test_a_hidden_message_never_reaches_the_inboxes_it_was_hidden_from():
    episode = Episode(_spec(HIDE))
    episode.play()
    for resident in RESIDENTS:
        assert ENTRANT not in episode.agents[resident].notebook.tones
    assert episode.agents[ENTRANT].notebook.tones[ENTRANT]  # it was told what they said


def test_an_injected_criticism_makes_the_next_donor_refuse_its_subject():
    # simple standing weighs the latest tone: one criticism makes its subject bad
    seats = {a: {"kind": "simple_standing"} for a in [*RESIDENTS, ENTRANT]}
    plain = play_episode(_spec(seats=seats))
    donor_round = next(i for i in plain.summary["interactions"] if i["round"] == 3)
    victim = donor_round["recipient"]
    inject = {
        "action": "inject",
        "round": 3,
        "as": "agent_0",
        "about": victim,
        "tone": "criticism",
        "message": "Beware.",
    }
    injected = play_episode(_spec(inject, seats=seats))
    assert donor_round["action"] == "cooperate"
    after = next(i for i in injected.summary["interactions"] if i["round"] == 3)
    assert after["recipient"] == victim and after["action"] == "defect"
    (note,) = injected.interventions
    message = injected.messages[note["message"]]
    assert message["payload"] == {
        "round": 3,
        "author": "agent_0",
        "about": victim,
        "tone": "criticism",
        "message": "Beware.",
    }
    assert message["to"] == "*" and message["turn"] == 3


def test_changing_the_tone_of_the_gossip_about_the_entrant_to_praise_keeps_it_helped():
    change = {"action": "change", "about": ENTRANT, "tone": "praising", "message": "Lovely."}
    record = play_episode(_spec(change))
    assert {a for _, a in _towards_entrant(record)} == {"cooperate"}
    for note in record.interventions:
        assert note["before"]["tone"] == "criticism"
        assert record.messages[note["message"]]["payload"]["tone"] == "praising"


def test_the_record_line_keeps_the_interventions_and_a_plain_line_has_none():
    episode = Episode(_spec(HIDE))
    episode.play()
    line = episode.line("done", None, "t", 0.0)
    record = EpisodeRecord(**json.loads(line))
    assert record.interventions == episode.record("done", None, "t", 0.0).interventions
    assert record.interventions
    plain = play_episode(_spec())
    assert "interventions" not in plain.to_json()


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"action": "erase"}, "interventions[0].action: 'erase'; allowed: hide, inject, change"),
        ({"action": "hide", "from": []}, "interventions[0].from: a non-empty list"),
        (
            {"action": "inject", "as": "a", "about": "b", "tone": "praising"},
            "interventions[0].round: an inject needs the round",
        ),
        ({"action": "change", "about": "a"}, "interventions[0]: a change sets 'tone'"),
        ({"action": "change", "tone": "rude"}, "interventions[0].tone: 'rude'; allowed: praising"),
        ({"action": "hide", "from": ["x"], "when": 3}, "interventions[0]: unknown key 'when'"),
    ],
)
def test_a_bad_intervention_is_refused_naming_its_field(spec, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("[", r"\[")):
        check(0, spec)


def test_an_experiment_with_an_unknown_agent_in_an_intervention_exits_2(tmp_path, capsys):
    path = tmp_path / "x.toml"
    path.write_text(
        'name = "x"\n[env]\nid = "donation_v0"\n[env.kwargs]\nn_agents = 3\n'
        '[seats."*"]\nkind = "image_scoring"\n'
        '[[interventions]]\naction = "hide"\nfrom = ["agent_7"]\n'
    )
    assert main(["run", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "interventions[0].from: no agent 'agent_7'" in err
    assert not (tmp_path / "out").exists()


def test_interventions_reach_the_episode_specs_from_the_experiment(tmp_path):
    path = tmp_path / "x.toml"
    path.write_text(
        'name = "x"\n[env]\nid = "donation_v0"\n[env.kwargs]\nn_agents = 3\n'
        '[seats."*"]\nkind = "image_scoring"\n'
        '[[interventions]]\naction = "hide"\nabout = "agent_0"\nfrom = ["agent_1"]\n'
    )
    (spec,) = config.load(str(path)).specs()
    assert spec.interventions == ({"action": "hide", "about": "agent_0", "from": ["agent_1"]},)


def test_the_bundled_interventions_run_is_compared_by_seed_in_the_report(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", "align_interventions", "--out", str(out), "--set", "episodes=2"]) == 0
    capsys.readouterr()
    assert main(["report", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "interventions:" in printed
    with open(out / "contrasts.csv", encoding="utf-8") as f:
        rows = {r["metric"]: r for r in csv.DictReader(f) if r["factor"] == "interventions"}
    assert rows["cooperation_to_entrant"]["paired"] == "True"
    assert float(rows["cooperation_to_entrant"]["difference"]) > 0.5
    with open(out / "cooperation_cells.csv", encoding="utf-8") as f:
        cells = list(csv.DictReader(f))
    ostracism = {r["cell"]: float(r["ostracism"]) for r in cells}
    hidden = "interventions=gossip about the entrant hidden from the residents"
    assert ostracism == {"interventions=(none)": 1.0, hidden: 0.0}
