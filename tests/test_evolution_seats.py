"""RL seats and people in an [evolution] experiment: they keep their place every generation
(never selected out, nobody's parent), the rule selects among the other seats as if they were
all, and they play and are counted in every generation's records and statistics.
``socialsim play GAME --as SEAT --with FILE`` plays one generation a command, resumably; the
browser refuses a generational experiment by name."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import numpy as np
import pytest
from socialsim.envs.culture.protocol import strategy_texts

import socialsim
from socialsim import cli, records
from socialsim.analysis.generations import generations_table, seeds_table
from socialsim.analysis.transcript import strategy_rows
from socialsim.config import ConfigError, load
from socialsim.config.evolution import evolution_rule
from socialsim.play import session
from socialsim.society.evolution import Evolution
from socialsim.society.experiment import next_seats
from socialsim.society.generations import update_generator
from socialsim.society.population import STRATEGIES
from socialsim.testing.culture_policies import CulturePolicy
from socialsim.testing.llm_server import ScriptedChatServer

#: align_evolution, short: 20 seats (agent_0 a person), 4 rounds a generation, 3 generations
SHORT = ["env.kwargs.rounds=4", "env.kwargs.initial_resources=4.0", "evolution.generations=3"]


#: what the person types in a field that offers no choices
TYPED = {"message": "fine", "fraction": "0.5"}


class Person:
    """Always the first choice (cooperate, the first tone), and a fixed message."""

    def __init__(self):
        self.decisions = 0

    async def ask(self, seat, view, request, error):
        self.decisions += 1
        return {f.name: f.choices[0] if f.choices else TYPED[f.name] for f in request.fields}


def play_generations(out: Path, games: int) -> Person:
    person = Person()
    for _ in range(games):
        experiment = session.human_experiment(
            "donation", ["agent_0"], ["align_evolution"], SHORT, seed=7, terminal=True
        )
        spec = session.prepare(experiment, out)
        record = asyncio.run(session.play_game(experiment, spec, out, {"agent_0": person}))
        assert record.status == "done", record.error
    return person


def by_generation(out: Path) -> list[records.EpisodeRecord]:
    return sorted(records.read_records(out), key=lambda r: r.cell["generation"])


def test_a_person_keeps_the_seat_and_selection_runs_among_the_other_seats(tmp_path):
    person = play_generations(tmp_path, 3)
    assert person.decisions > 0
    played = by_generation(tmp_path)
    assert [r.cell["generation"] for r in played] == [0, 1, 2]
    for g, record in enumerate(played):
        assert record.seats["agent_0"] == {
            "kind": "human",
            "name": "",
            "parent": "agent_0" if g else None,
        }
        parents = [spec["parent"] for seat, spec in record.seats.items() if seat != "agent_0"]
        assert "agent_0" not in parents  # nobody inherits from the person
        donors = {i["donor"] for i in record.summary["interactions"]}
        assert "agent_0" in donors  # the person plays every generation
    # the next seats are the rule's, applied to the 19 other seats alone, in seat order
    for before, after in zip(played, played[1:], strict=False):
        others = [f"agent_{i}" for i in range(1, 20)]
        codes = np.asarray([STRATEGIES.index(before.seats[s]["kind"]) for s in others])
        fitness = np.asarray([before.summary["resources"][s] for s in others])
        rule = evolution_rule(load("align_evolution").config["evolution"])
        born = rule.update(codes, fitness, update_generator(before.seed))
        assert [after.seats[s]["kind"] for s in others] == [STRATEGIES[c] for c in born.strategies]
        assert [after.seats[s]["parent"] for s in others] == [others[k] for k in born.parents]
    # the transcripts page lists the seats in the env's order, the person in its own place
    rows = strategy_rows(played)
    assert [row["seat"] for row in rows[1][1]] == [f"agent_{i}" for i in range(20)]
    assert [rows[g][1][0]["parent"] for g in (0, 1, 2)] == ["generation 0"] + ["kept its place"] * 2
    # exact, for seed 7: who survived generation 0 (their own parents), and the newborns'
    first = played[1].seats
    assert sorted(
        (s for s in first if first[s]["parent"] == s and s != "agent_0"),
        key=lambda s: int(s.split("_")[1]),
    ) == [f"agent_{i}" for i in (2, 3, 4, 6, 9, 11, 12, 15, 17)]
    newborns = {seat: spec["parent"] for seat, spec in first.items() if spec["parent"] != seat}
    assert newborns == {
        "agent_1": "agent_9",
        "agent_5": "agent_17",
        "agent_7": "agent_3",
        "agent_8": "agent_2",
        "agent_10": "agent_6",
        "agent_13": "agent_12",
        "agent_14": "agent_15",
        "agent_16": "agent_4",
        "agent_18": "agent_11",
        "agent_19": "agent_9",
    }


def test_the_person_is_counted_in_every_generations_statistics(tmp_path):
    play_generations(tmp_path, 2)
    played = by_generation(tmp_path)
    table = generations_table(played)
    assert list(table["share_human"]) == [0.05, 0.05]  # 1 of 20 seats, every generation
    seeds = seeds_table(played)
    for record, (_, row) in zip(played, seeds.sort_values("generation").iterrows(), strict=True):
        acts = [i["action"] for i in record.summary["interactions"]]
        assert row["cooperation"] == acts.count("cooperate") / len(acts)  # the person's too
        assert row["mean_resources"] == pytest.approx(
            np.mean(list(record.summary["resources"].values()))
        )


def test_next_seats_keep_an_rl_seat_whole_and_its_own_parent(tmp_path):
    config = {
        "name": "rl_kept",
        "seed": 1,
        "env": {"id": "donation_v0", "kwargs": {"n_agents": 4, "rounds": 2}},
        "evolution": {"generations": 2},
        "seats": {"*": {"kind": "always_defect"}, "agent_1": {"kind": "always_cooperate"}},
    }
    socialsim.run(config, tmp_path)
    record = by_generation(tmp_path)[0]
    # the same record, read as if agent_2 were a trained policy: it keeps its seat
    data = record.to_json()
    data["seats"]["agent_2"] = {"kind": "rl", "path": "donor.zip", "parent": None}
    seats = next_seats(records.EpisodeRecord.from_json(data), Evolution(), "resources")
    assert seats["agent_2"] == {"kind": "rl", "path": "donor.zip", "parent": "agent_2"}
    assert "agent_2" not in [s["parent"] for seat, s in seats.items() if seat != "agent_2"]
    assert list(seats) == ["agent_0", "agent_1", "agent_2", "agent_3"]


def test_an_evolution_needs_two_seats_that_evolve():
    config = {
        "name": "too_few",
        "env": {"id": "donation_v0", "kwargs": {"n_agents": 2, "schedule": "random"}},
        "evolution": {"generations": 2},
        "seats": {"agent_0": {"kind": "human"}, "agent_1": {"kind": "always_defect"}},
    }
    with pytest.raises(ConfigError, match=r"seats: an \[evolution\] experiment needs at least 2"):
        load(config)


class CtrlC(io.StringIO):
    def readline(self, *args):
        raise KeyboardInterrupt


def test_play_plays_one_generation_a_command_and_an_abandoned_game_is_played_again(
    tmp_path, monkeypatch, capsys
):
    out = tmp_path / "me"
    argv = ["play", "donation", "--as", "agent_0", "--with", "align_evolution", "--seed", "3"]
    argv += ["--set", "env.kwargs.gossip=false", "--set", "env.kwargs.rounds=10"]
    argv += ["--set", "evolution.generations=2", "--out", str(out)]
    monkeypatch.setattr("sys.stdin", CtrlC())  # the person leaves at the first move
    assert cli.main(argv) == 130
    assert not (out / records.EPISODES).exists()  # the abandoned game logged nothing
    for g in (0, 1):
        monkeypatch.setattr("sys.stdin", io.StringIO("defect\n" * 100))
        assert cli.main(argv) == 0
        said = capsys.readouterr().out
        assert f"generation {g} of 2" in said
        assert ("Generation 1 is next" in said) == (g == 0)
    played = by_generation(out)
    assert [r.cell["generation"] for r in played] == [0, 1]
    for record in played:
        mine = [i["action"] for i in record.summary["interactions"] if i["donor"] == "agent_0"]
        assert mine and set(mine) == {"defect"}
    assert cli.main(argv) == 2
    assert "all 2 generations are played" in capsys.readouterr().err


def test_the_browser_refuses_a_generational_experiment_by_name(tmp_path):
    pytest.importorskip("starlette")
    from socialsim.web.sessions import Sessions, read_upload

    with pytest.raises(ConfigError, match=r"^--offer align_evolution: evolution: a generat"):
        Sessions(tmp_path, offered=["align_evolution"])
    upload = (Path(__file__).parents[1] / "experiments" / "align_evolution.toml").read_text()
    with pytest.raises(ConfigError, match=r"^upload: .evolution.: not allowed in an uploaded"):
        read_upload(upload)
    with pytest.raises(ConfigError) as refused:
        session.human_experiment("donation", ["agent_0"], ["align_evolution"])
    assert str(refused.value) == (
        "--with align_evolution: evolution: a generational experiment (15 generations) is "
        "played one game a generation in the terminal (socialsim play GAME --as SEAT --with "
        "FILE --out DIR), not here; allowed here: an experiment without an [evolution] table"
    )


@pytest.mark.slow  # torch and SB3 load
def test_a_trained_policy_plays_every_generation_of_a_run_in_its_own_seat(tmp_path):
    MaskablePPO = pytest.importorskip("sb3_contrib").MaskablePPO
    from gymnasium.wrappers import FilterObservation

    from socialsim.rl.view import SeatView

    kwargs = {"n_agents": 6, "schedule": "random", "rounds": 6, "initial_resources": 6.0}
    view = SeatView("donation_v0", "agent_0", {"kind": "stern_judging"}, [], **kwargs)
    policy = tmp_path / "donor.zip"
    env = FilterObservation(view, ["observation", "action_mask"])
    MaskablePPO("MultiInputPolicy", env, n_steps=16, batch_size=16, seed=0, device="cpu").save(
        policy
    )
    config = {
        "name": "rl_in_generations",
        "seed": 2,
        "episodes": 2,
        "env": {"id": "donation_v0", "kwargs": kwargs},
        "evolution": {"generations": 3, "mutation": 0.2},
        "seats": {
            "*": {"kind": "always_defect"},
            "agent_0": {"kind": "rl", "path": str(policy)},
            "agent_1": {"kind": "always_cooperate"},
            "agent_2": {"kind": "stern_judging"},
        },
    }
    socialsim.run(config, tmp_path / "run")
    played = records.read_records(tmp_path / "run")
    assert sorted((r.episode, r.cell["generation"]) for r in played) == [
        (e, g) for e in (0, 1) for g in (0, 1, 2)
    ]
    for record in played:
        g = record.cell["generation"]
        assert record.seats["agent_0"] == {
            "kind": "rl",
            "path": str(policy),
            "parent": "agent_0" if g else None,
        }
        others = [spec["parent"] for seat, spec in record.seats.items() if seat != "agent_0"]
        assert "agent_0" not in others
        assert record.counters["agent_0"]["invalid_actions"] == 0
    table = generations_table(played)
    assert list(table["share_rl"]) == [1 / 6] * 3


def test_a_person_plays_generations_of_llm_cultural_evolution_beside_the_models(tmp_path):
    with ScriptedChatServer(policy=CulturePolicy()) as server:
        overrides = [
            f"seats.*.model.api_base={server.url}",
            "seats.*.model.model=openai/test",
            "seats.*.model.cache=false",
            "env.kwargs.n_agents=6",
            "env.kwargs.rounds=4",
            "evolution.generations=2",
        ]
        for _ in range(2):
            experiment = session.human_experiment(
                "culture", ["agent_0"], ["llm_cultural_evolution"], overrides, 5, terminal=True
            )
            spec = session.prepare(experiment, tmp_path)
            record = asyncio.run(
                session.play_game(experiment, spec, tmp_path, {"agent_0": Person()})
            )
            assert record.status == "done", record.error
    first, second = by_generation(tmp_path)
    for g, record in enumerate((first, second)):
        assert record.seats["agent_0"] == {
            "kind": "human",
            "name": "",
            "parent": "agent_0" if g else None,
        }
        given = [
            m["payload"]["fraction"]
            for m in record.messages
            if m["kind"] == "interaction" and m["payload"]["donor"] == "agent_0"
        ]
        assert given == [0.5, 0.5]  # a donor every other round of 4
    texts = strategy_texts(first.messages)
    assert sorted(texts) == [
        "agent_1",
        "agent_2",
        "agent_3",
        "agent_4",
        "agent_5",
    ]  # not the person
    others = ["agent_1", "agent_2", "agent_3", "agent_4", "agent_5"]
    ranked = sorted(others, key=first.summary["resources"].get)
    kept = [s for s in others if second.seats[s]["parent"] == s]
    assert set(kept) == set(ranked[3:])  # floor(0.5 * 5) = 2 of the 5 models survive
    for seat in others:
        if seat in kept:
            assert second.seats[seat]["strategy"] == texts[seat]
        else:
            assert second.seats[seat]["survivors"] == [texts[s] for s in kept]
