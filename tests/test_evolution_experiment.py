"""An experiment file with an [evolution] table, played by `socialsim run`: the generations of
`evolve_in_env` for each cell and replicate, resumable from any point of its log, every record
naming its generation and each seat's parent; bad tables are errors naming the key."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

import socialsim
from socialsim.config import ConfigError, load
from socialsim.records import EPISODES, read_records
from socialsim.society.episodes import evolve_in_env
from socialsim.society.evolution import Evolution

KINDS = ["always_cooperate"] * 3 + ["always_defect"] * 3 + ["stern_judging"] * 4
SMALL = {
    "name": "evolution_small",
    "episodes": 2,
    "seed": 5,
    "env": {
        "id": "donation_v0",
        "kwargs": {"n_agents": 10, "schedule": "random", "rounds": 8, "initial_resources": 8.0},
    },
    "seats": {f"agent_{i}": {"kind": kind} for i, kind in enumerate(KINDS)},
    "evolution": {"generations": 4, "mutation": 0.1},
    "grid": {"env.kwargs.gossip_reach": [1.0, 0.5]},
}


def contents(directory: Path) -> list[str]:
    return sorted(record.content() for record in read_records(directory))


@pytest.mark.parametrize(
    "table",
    [{"mutation": 0.1}, {"rule": "imitation", "beta": 0.5, "mutation": 0.05}],
    ids=["selection", "imitation"],
)
def test_each_replicate_plays_the_generations_evolve_in_env_plays_for_its_seed(tmp_path, table):
    config = copy.deepcopy(SMALL)
    config["evolution"] = {"generations": 4, **table}
    socialsim.run(config, tmp_path / "run")
    records = read_records(tmp_path / "run")
    assert len(records) == 2 * 2 * 4  # cells x replicates x generations
    population = {"always_cooperate": 3, "always_defect": 3, "stern_judging": 4}
    evolution = Evolution(**table)
    for q in (1.0, 0.5):
        for replicate in (0, 1):
            _, played, lineage = evolve_in_env(
                population, seed=5 + replicate, rounds=8, generations=4,
                evolution=evolution, gossip_reach=q,
            )  # fmt: skip
            ours = sorted(
                (r for r in records if r.cell["env.kwargs.gossip_reach"] == q),
                key=lambda r: r.cell["generation"],
            )
            ours = [r for r in ours if r.episode == replicate]
            assert [r.cell["generation"] for r in ours] == [0, 1, 2, 3]
            for g, (mine, theirs) in enumerate(zip(ours, played, strict=True)):
                assert mine.seed == theirs.seed
                assert mine.summary["interactions"] == theirs.summary["interactions"]
                assert [s["kind"] for s in mine.seats.values()] == [
                    s["kind"] for s in theirs.seats.values()
                ]
                parents = [s["parent"] for s in mine.seats.values()]
                if g == 0:
                    assert parents == [None] * 10
                else:
                    assert parents == [f"agent_{p}" for p in lineage[g - 1]]


def test_a_run_cut_anywhere_in_its_log_resumes_to_the_same_records(tmp_path):
    whole = tmp_path / "whole"
    socialsim.run(SMALL, whole)
    lines = (whole / EPISODES).read_text().splitlines(keepends=True)
    for cut in (0, 3, 4, 7, 9):  # inside generation 0 and 2, at the end of generations 0 and 1
        part = tmp_path / f"cut{cut}"
        part.mkdir()
        shutil.copy(whole / "manifest.json", part / "manifest.json")
        torn = lines[cut][: len(lines[cut]) // 2]  # kill -9 while a line was being written
        (part / EPISODES).write_text("".join(lines[:cut]) + torn)
        result = socialsim.run(SMALL, part)
        assert result.ran == len(lines) - cut
        assert contents(part) == contents(whole)


def test_a_finished_evolution_run_reruns_playing_nothing(tmp_path):
    socialsim.run(SMALL, tmp_path)
    again = socialsim.run(SMALL, tmp_path)
    assert again.ran == 0 and again.total == 16


def test_records_of_a_generation_name_it_and_the_rerun_is_identical(tmp_path):
    socialsim.run(SMALL, tmp_path / "a")
    socialsim.run(SMALL, tmp_path / "b")
    assert contents(tmp_path / "a") == contents(tmp_path / "b")
    cells = {tuple(sorted(r.cell.items())) for r in read_records(tmp_path / "a")}
    assert {dict(c)["generation"] for c in cells} == {0, 1, 2, 3}


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("generations", 0, "evolution.generations: must be an integer >= 1, got 0"),
        ("rule", "tournament", "evolution.rule: 'tournament' is not allowed; allowed: selection"),
        ("survive", 1.5, "evolution.survive: must be a number in (0, 1], got 1.5"),
        ("mutation", -0.1, "evolution.mutation: must be a number in [0, 1], got -0.1"),
        ("fitness", "payoff", "evolution.fitness: 'payoff' is not allowed; allowed: resources"),
        ("pool", ["always_defect", "saint"], "evolution.pool: unknown strategy 'saint'"),
        ("beta", 0, "evolution.beta: must be a number > 0, got 0"),
        ("generation", 3, "evolution.generation: unknown key 'generation'"),
    ],
)
def test_a_bad_evolution_key_is_an_error_naming_it(key, value, message):
    config = copy.deepcopy(SMALL)
    config["evolution"][key] = value
    with pytest.raises(ConfigError) as error:
        load(config)
    assert message in str(error.value)


def test_an_evolving_seat_must_be_a_strategy_alone():
    config = copy.deepcopy(SMALL)
    config["seats"]["agent_2"] = {"kind": "random_donor"}
    with pytest.raises(ConfigError, match=r"seats.agent_2.kind: an \[evolution\] experiment's"):
        load(config)
    del config["evolution"]["generations"]
    with pytest.raises(ConfigError, match="evolution.generations: required"):
        load(config)


def test_the_cli_exits_2_on_a_bad_evolution_table_writing_nothing(tmp_path):
    config = tomllib.loads(Path("experiments/align_evolution.toml").read_text())
    text = Path("experiments/align_evolution.toml").read_text()
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace('rule = "selection"', 'rule = "lottery"'))
    run = subprocess.run(
        [sys.executable, "-m", "socialsim", "run", str(bad), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
    )
    assert config["evolution"]["rule"] == "selection"
    assert run.returncode == 2
    assert "evolution.rule: 'lottery' is not allowed; allowed: selection, imitation" in run.stderr
    assert "Traceback" not in run.stderr
    assert not (tmp_path / "out").exists()


def cooperation_by_arm(directory: Path, generation: int) -> dict[bool, np.ndarray]:
    arms: dict[bool, list[float]] = {True: [], False: []}
    for record in read_records(directory):
        if record.cell["generation"] == generation:
            acts = [i["action"] == "cooperate" for i in record.summary["interactions"]]
            arms[record.cell["env.kwargs.gossip"]].append(float(np.mean(acts)))
    return {arm: np.asarray(values) for arm, values in arms.items()}


@pytest.mark.slow
def test_align_evolution_cooperates_more_in_its_last_generation_with_gossip(tmp_path):
    from socialsim.analysis.stats import summary

    socialsim.run("align_evolution", tmp_path)
    first, last = cooperation_by_arm(tmp_path, 0), cooperation_by_arm(tmp_path, 14)
    assert len(last[True]) == len(last[False]) == 10
    with_gossip, without = summary(last[True]), summary(last[False])
    assert with_gossip["ci_low"] > without["ci_high"]  # the intervals over seeds do not overlap
    assert with_gossip["mean"] > 0.7 > 0.05 > without["mean"]
    # the first generation is the same population in both arms; only what donors know differs
    seats = {
        arm: sorted(
            tuple(s["kind"] for s in r.seats.values())
            for r in read_records(tmp_path)
            if r.cell["generation"] == 0 and r.cell["env.kwargs.gossip"] == arm
        )
        for arm in (True, False)
    }
    assert seats[True] == seats[False]
    assert first[True].mean() < first[False].mean()  # judges who know help less at first


def test_generations_grow_in_place_to_the_records_of_a_longer_run(tmp_path):
    whole = tmp_path / "whole"
    socialsim.run(SMALL, whole)
    short = copy.deepcopy(SMALL)
    short["evolution"]["generations"] = 2
    socialsim.run(short, tmp_path / "grown")
    grown = socialsim.run(SMALL, tmp_path / "grown")
    assert (grown.total, grown.ran) == (16, 8)
    assert contents(tmp_path / "grown") == contents(whole)
    manifest = json.loads((tmp_path / "grown" / "manifest.json").read_text())
    assert manifest["episodes_total"] == 16
    assert manifest["grown"][0]["generations"] == [2, 4]
    changed = copy.deepcopy(SMALL)
    changed["evolution"]["mutation"] = 0.2
    with pytest.raises(ConfigError, match="of the .evolution. table only generations may grow"):
        socialsim.run(changed, tmp_path / "grown")


def test_checking_an_evolution_run_plays_its_first_generation_and_writes_nothing(tmp_path):
    lines = []
    result = socialsim.run(SMALL, tmp_path / "out", check_only=True, say=lines.append)
    assert result.ran == 0
    assert not (tmp_path / "out").exists()
    assert lines[0] == "evolution_small: checked; nothing written"


def test_checking_an_evolution_run_counts_every_generation_and_what_is_logged(tmp_path):
    lines = []
    socialsim.run(SMALL, tmp_path / "out", check_only=True, say=lines.append)
    # 2 cells x 2 replicates x 4 generations
    assert lines[1].startswith("  2 cells x 2 episodes x 4 generations = 16 episodes, 0 already")
    assert lines[1].endswith(", 16 to run")
    short = copy.deepcopy(SMALL)
    short["evolution"]["generations"] = 2
    socialsim.run(short, tmp_path / "out")
    lines = []
    socialsim.run(SMALL, tmp_path / "out", check_only=True, say=lines.append)
    assert lines[1].startswith("  2 cells x 2 episodes x 4 generations = 16 episodes, 8 already")
    assert lines[1].endswith(", 8 to run")


def test_a_finished_evolution_run_reruns_from_one_read_of_its_log(tmp_path, monkeypatch):
    from socialsim import records

    socialsim.run(SMALL, tmp_path / "out")
    reads = []
    scan = records.scan_log
    monkeypatch.setattr(records, "scan_log", lambda *a, **k: reads.append(a) or scan(*a, **k))
    rerun = socialsim.run(SMALL, tmp_path / "out")
    assert (rerun.total, rerun.ran) == (16, 0)
    assert len(reads) == 1  # not once per generation: the rerun grew with their square


def test_a_resumed_evolution_run_reads_its_log_once_and_plays_what_is_left(tmp_path, monkeypatch):
    from socialsim import records

    whole = socialsim.run(SMALL, tmp_path / "whole").directory
    lines = (whole / "episodes.jsonl").read_text().splitlines(keepends=True)
    (tmp_path / "cut").mkdir()
    (tmp_path / "cut" / "manifest.json").write_text((whole / "manifest.json").read_text())
    kept = [line for line in lines if json.loads(line)["cell"]["generation"] < 2]
    (tmp_path / "cut" / "episodes.jsonl").write_text("".join(kept))
    reads = []
    scan = records.scan_log
    monkeypatch.setattr(records, "scan_log", lambda *a, **k: reads.append(a) or scan(*a, **k))
    resumed = socialsim.run(SMALL, tmp_path / "cut")
    assert (resumed.total, resumed.ran) == (16, 8)
    assert len(reads) == 1
    assert contents(tmp_path / "cut") == contents(whole)


def test_a_run_killed_with_sigkill_mid_run_reruns_to_the_records_of_an_unbroken_run(tmp_path):
    import os
    import signal
    import time

    longer = copy.deepcopy(SMALL)
    longer["evolution"]["generations"] = 12
    longer["env"]["kwargs"]["rounds"] = 30
    script = f"import socialsim; socialsim.run({longer!r}, {str(tmp_path / 'killed')!r})"
    log = tmp_path / "killed" / EPISODES
    child = subprocess.Popen([sys.executable, "-c", script])
    while child.poll() is None and (not log.exists() or log.read_text().count("\n") < 11):
        time.sleep(0.01)  # waits for progress, asserts nothing about time
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    cut = log.read_text().count("\n")
    assert 11 <= cut < 48  # killed in generation 2 or later, before the end
    again = socialsim.run(longer, tmp_path / "killed")
    assert again.ran == 48 - cut
    socialsim.run(longer, tmp_path / "whole")
    assert contents(tmp_path / "killed") == contents(tmp_path / "whole")


def test_selection_by_returns_is_selection_by_resources_when_everyone_starts_equal(tmp_path):
    # returns are final resources minus the equal initial stock: the same ranks and differences
    by_returns = copy.deepcopy(SMALL)
    by_returns["evolution"] = {"generations": 4, "rule": "imitation", "fitness": "returns"}
    by_resources = copy.deepcopy(by_returns)
    by_resources["evolution"]["fitness"] = "resources"
    socialsim.run(by_returns, tmp_path / "returns")
    socialsim.run(by_resources, tmp_path / "resources")
    seats = [
        [(r.key, r.seats) for r in read_records(tmp_path / name)]
        for name in ("returns", "resources")
    ]
    assert seats[0] == seats[1]
    kinds = {s["kind"] for _, all_seats in seats[0] for s in all_seats.values()}
    assert kinds == {"always_cooperate", "always_defect", "stern_judging"}  # no mutation
