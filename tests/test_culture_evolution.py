"""llm_cultural_evolution against the test chat server: newborns read the survivors' strategies
(the requests the server received carry them), and a run killed with SIGKILL in the middle of a
generation reruns to the records of an unbroken run. Scripted culture donors evolve too."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from socialsim.envs.culture.protocol import strategy_texts

import socialsim
from socialsim.config import ConfigError, load
from socialsim.records import EPISODES, read_records
from socialsim.testing.culture_policies import CulturePolicy
from socialsim.testing.llm_server import ScriptedChatServer


class Recording(CulturePolicy):
    """The culture policy, keeping every user prompt it answered."""

    def __init__(self):
        self.prompts: list[str] = []

    def __call__(self, messages, request=None):
        self.prompts.append(next(m["content"] for m in messages if m["role"] == "user"))
        return super().__call__(messages, request)


def small(url: str, generations: int = 3, episodes: int = 1) -> list[str]:
    """The bundled file, small: --set overrides as a user gives them."""
    return [
        f"seats.*.model.api_base={url}",
        "seats.*.model.model=openai/test",
        "seats.*.model.cache=false",
        "env.kwargs.n_agents=4",
        "env.kwargs.rounds=4",
        f"evolution.generations={generations}",
        f"episodes={episodes}",
    ]


def contents(directory: Path) -> list[str]:
    """The records' contents less each LLM call's measured ``latency_s`` (a clock reading, not
    part of the game: everything else, the replies included, must agree)."""
    kept = []
    for record in read_records(directory):
        data = json.loads(record.content())
        for events in data["events"].values():
            for event in events:
                event.pop("latency_s", None)
        kept.append(json.dumps(data, sort_keys=True))
    return sorted(kept)


def test_the_next_generations_prompts_carry_the_survivors_strategies(tmp_path):
    policy = Recording()
    with ScriptedChatServer(policy=policy) as server:
        socialsim.run(load("llm_cultural_evolution", small(server.url, generations=2)), tmp_path)
    first, second = sorted(read_records(tmp_path), key=lambda r: r.cell["generation"])
    texts = strategy_texts(first.messages)
    assert sorted(texts) == ["agent_0", "agent_1", "agent_2", "agent_3"]  # everyone posted one
    survivors = [seat for seat, spec in second.seats.items() if spec["parent"] == seat]
    newborns = [seat for seat in second.seats if seat not in survivors]
    assert len(survivors) == len(newborns) == 2
    kept = [texts[seat] for seat in sorted(survivors)]
    for seat in survivors:  # a survivor keeps its own strategy and writes none
        assert second.seats[seat]["strategy"] == texts[seat]
    for seat in newborns:
        assert second.seats[seat]["survivors"] == kept
    asked = [prompt for prompt in policy.prompts if '{"strategy"' in prompt]
    assert len(asked) == 4 + 2  # generation 0's four agents, generation 1's two newborns
    assert not any("did best in the previous generation" in prompt for prompt in asked[:4])
    for prompt in asked[4:]:
        assert all(text in prompt for text in kept)
    # the survivors are the richer half of generation 0
    ranked = sorted(first.summary["resources"], key=first.summary["resources"].get)
    assert set(survivors) == set(ranked[2:])


@pytest.mark.slow
def test_a_run_killed_in_a_generation_reruns_to_the_records_of_an_unbroken_run(tmp_path):
    with ScriptedChatServer(policy=CulturePolicy()) as server:
        overrides = small(server.url, generations=3, episodes=3)
        killed = tmp_path / "killed"
        script = (
            "import socialsim; from socialsim.config import load; "
            f"socialsim.run(load('llm_cultural_evolution', {overrides!r}), {str(killed)!r})"
        )
        log = killed / EPISODES
        child = subprocess.Popen([sys.executable, "-c", script])
        while child.poll() is None and (not log.exists() or log.read_text().count("\n") < 4):
            time.sleep(0.01)  # waits for progress, asserts nothing about time
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        cut = log.read_text().count("\n")
        assert 4 <= cut < 9  # killed in generation 1 or later, before the end
        again = socialsim.run(load("llm_cultural_evolution", overrides), killed)
        assert again.ran == 9 - cut
        socialsim.run(load("llm_cultural_evolution", overrides), tmp_path / "whole")
    assert contents(killed) == contents(tmp_path / "whole")


def test_scripted_culture_donors_evolve_whole_specs(tmp_path):
    config = {
        "name": "culture_scripted",
        "episodes": 1,
        "seed": 3,
        "env": {"id": "culture_v0", "kwargs": {"n_agents": 4, "rounds": 4}},
        "evolution": {"generations": 2},
        "seats": {
            "agent_0": {"kind": "culture_give", "fraction": 0.0},
            "agent_1": {"kind": "culture_give", "fraction": 1.0},
            "agent_2": {"kind": "culture_conditional", "fraction": 0.5, "threshold": 0.3},
            "agent_3": {"kind": "culture_give", "fraction": 0.2},
        },
    }
    socialsim.run(config, tmp_path)
    first, second = sorted(read_records(tmp_path), key=lambda r: r.cell["generation"])
    newborns = [seat for seat, spec in second.seats.items() if spec["parent"] != seat]
    assert len(newborns) == 2
    for spec in second.seats.values():
        parent = {k: v for k, v in first.seats[spec["parent"]].items() if k != "parent"}
        assert {k: v for k, v in spec.items() if k != "parent"} == parent
    assert (
        strategy_texts(first.messages)["agent_1"]
        == "Always give 1 of my resources, whoever the recipient is."
    )


def test_the_report_gives_each_seeds_resources_against_the_ceiling_and_donated_fraction(tmp_path):
    import pandas as pd

    from socialsim.analysis.generations import generations_report

    with ScriptedChatServer(policy=CulturePolicy()) as server:
        run = load("llm_cultural_evolution", small(server.url, generations=2, episodes=2))
        socialsim.run(run, tmp_path)
    records = read_records(tmp_path)
    [(_, table, _, figures)] = generations_report(records, tmp_path)
    assert sorted(f.name for f in figures) == [
        "generations_donated.png",
        "generations_resources.png",
        "generations_seeds.png",
        "generations_shares.png",
    ]  # no cooperation figure: the culture game has no cooperate/defect
    seeds = pd.read_csv(tmp_path / "generations_seeds.csv")
    assert len(seeds) == 4  # 2 generations x 2 seeds
    for r in records:
        row = seeds[(seeds.generation == r.cell["generation"]) & (seeds.seed == r.episode)]
        assert row.mean_resources.item() == pytest.approx(r.summary["mean_resources"])
        assert row.donated_fraction.item() == pytest.approx(r.summary["donated_fraction"])
    assert set(seeds.ceiling) == {10 * 3 * 2**3 / 2}  # 4 agents, 4 rounds: 120
    assert list(table.generation) == [0, 1]


def culture_config(**evolution):
    return {
        "name": "culture_checks",
        "env": {"id": "culture_v0", "kwargs": {"n_agents": 2, "rounds": 2}},
        "evolution": {"generations": 2, **evolution},
        "seats": {"*": {"kind": "culture_give"}},
    }


def test_seats_inherited_whole_refuse_mutation_by_name(tmp_path):
    with pytest.raises(ConfigError, match=r"evolution.mutation: seats inherited whole"):
        socialsim.run(culture_config(mutation=0.1), tmp_path)
    assert not (tmp_path / EPISODES).exists()


def test_the_llm_donor_reads_give_and_punish_as_the_rules_allow():
    from socialsim.agents.llm.culture import parse_donation
    from socialsim.envs.culture import protocol as p

    from socialsim.llm import AnswerParseError

    assert parse_donation('ok {"fraction": 0.3}', punishment=False) == p.action_of("give", 0.3)
    assert parse_donation('{"verb": "punish", "fraction": 0.2}', True) == p.action_of("punish", 0.2)
    with pytest.raises(AnswerParseError, match='"verb" must be give'):
        parse_donation('{"verb": "punish", "fraction": 0.2}', punishment=False)
    with pytest.raises(AnswerParseError, match="multiple of 0.1"):
        parse_donation('{"fraction": 0.25}', punishment=False)
