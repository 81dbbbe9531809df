"""Workers that die: every way a pool worker can end mid-run, with one worker and with two.

Each fault ends with every episode logged exactly once: the episode whose worker died is a
``failed`` record naming how (the signal or the exit code), those it held but had not started
are played by another worker, and nothing waits for ever. The agents that fail on purpose are
:mod:`faultlab`'s (beside this file).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from socialsim import pool
from socialsim.config import load
from socialsim.records import EpisodeRecord, RecordList, read_records
from socialsim.results import run
from socialsim.seeding import agent_seed
from socialsim.testing import cli

TESTS = Path(__file__).parent
#: the episodes (of each of the two cells) whose matcher fails
DOOMED = (3, 7)
EPISODES = 10


def experiment(how: str, at=DOOMED, workers: int = 2, **more) -> dict:
    return {
        "name": "faults",
        "episodes": EPISODES,
        "seed": 0,
        "workers": workers,
        "env": {"id": "matching_pennies_v0", "kwargs": {"rounds": 5}},
        "seats": {
            "matcher": {
                "kind": "faultlab:Dies",
                "how": how,
                "at": [agent_seed(i, "matcher") for i in at],
                **more,
            },
            "mismatcher": {"kind": "pennies_copycat"},
        },
        "grid": {"env.form": ["parallel", "aec"]},
    }


def play(config: dict, workers: int) -> RecordList:
    specs = load(config).specs()
    log = RecordList()
    with pool.ProcessPool(specs, workers=workers) as workers_:
        workers_.play(specs, log)
    return log


def outcome(log: RecordList) -> dict[tuple[str, int], tuple[str, str | None]]:
    """key -> (status, error) of every line; every key logged once."""
    keys = [key for _, key in log.entries]
    assert len(keys) == len(set(keys)) == 2 * EPISODES  # 0 lost, 0 duplicated
    return {r.key: (r.status, r.error) for r in log.records}


REASONS = {
    "exit": "the worker process playing it exited with code 3",
    "kill": "the worker process playing it was killed by signal SIGKILL",
    "reset": "seat matcher (faultlab:Dies): RuntimeError: the agent refused to reset",
    "act": "seat matcher (faultlab:Dies): RuntimeError: the agent refused to act",
}


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("how", list(REASONS))
def test_a_worker_that_dies_or_raises_fails_only_the_episode_it_played_naming_why(how, workers):
    held = outcome(play(experiment(how), workers))
    failed = {key: error for key, (status, error) in held.items() if status == "failed"}
    assert sorted(episode for _, episode in failed) == [3, 3, 7, 7]
    assert set(failed.values()) == {REASONS[how]}
    assert sum(status == "done" for status, _ in held.values()) == 16


@pytest.mark.parametrize("workers", [1, 2])
def test_an_agent_raising_in_init_inside_a_worker_fails_that_episode_and_the_worker_goes_on(
    tmp_path, workers
):
    tally = tmp_path / "raised"
    held = outcome(play(experiment("init", nth=3, tally=str(tally)), workers))
    raised = tally.read_text().split()
    assert 1 <= len(raised) <= workers  # the third agent built in each worker that built three
    failed = [error for status, error in held.values() if status == "failed"]
    assert failed == [
        "seat matcher (faultlab:Dies): RuntimeError: the agent refused to be built"
    ] * len(raised)


@pytest.mark.parametrize("workers", [1, 2])
def test_every_episode_killing_its_worker_ends_with_every_episode_failed_not_a_hang(workers):
    held = outcome(play(experiment("exit", at=range(EPISODES)), workers))
    assert set(held.values()) == {("failed", REASONS["exit"])}


@pytest.mark.parametrize("workers", [1, 2])
def test_a_worker_killed_from_outside_mid_episode_is_seen_at_once(tmp_path, workers):
    """The OOM killer's way: SIGKILL to a worker whose agent is deciding (here: hangs)."""
    hanging = tmp_path / "hanging"
    config = experiment("hang", at=(5,), tally=str(hanging))
    killed: list[int] = []
    finished = threading.Event()

    def kill_each_hanging_worker() -> None:
        while not finished.is_set():
            pids = [int(p) for p in hanging.read_text().split()] if hanging.exists() else []
            for pid in pids[len(killed) :]:
                killed.append(pid)
                os.kill(pid, signal.SIGKILL)
            time.sleep(0.02)

    killer = threading.Thread(target=kill_each_hanging_worker, daemon=True)
    killer.start()
    try:
        held = outcome(play(config, workers))
    finally:
        finished.set()
        killer.join()
    assert len(killed) == 2  # episode 5 of each cell hung, and its worker was killed
    failed = {key: error for key, (status, error) in held.items() if status == "failed"}
    assert sorted(e for _, e in failed) == [5, 5] and set(failed.values()) == {REASONS["kill"]}


#: every death of the issue, through `socialsim run`: how -> (the faultlab seat's extra keys,
#: the failed episodes, each one's reason)
DEATHS = {
    "kill": ({}, 4, REASONS["kill"]),
    "exit": ({}, 4, REASONS["exit"]),
    "reset": ({}, 4, REASONS["reset"]),
    # the 3rd agent built in a worker: with the check episodes (one of each cell) first, that
    # is in one episode of the one worker, or of each of the two that built three
    "init": (
        {"nth": 3},
        None,
        "seat matcher (faultlab:Dies): RuntimeError: the agent refused to be built",
    ),
}


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("how", list(DEATHS))
def test_run_reports_the_failed_episodes_and_exits_1_without_a_traceback(tmp_path, how, workers):
    """A worker killed by a signal, ended by ``os._exit``, or an agent raising in ``__init__``
    or ``reset``, with one worker or two: every episode logged once, the failed ones naming
    why, an honest count and exit 1, no traceback; the next run plays the failed ones again."""
    more, count, reason = DEATHS[how]
    if how == "init":
        more = {**more, "tally": str(tmp_path / "raised")}
    config = experiment(how, workers=workers, **more)
    (tmp_path / "faults.toml").write_text(toml(config))
    command = ("run", str(tmp_path / "faults.toml"), "--quiet", "--out", str(tmp_path / "out"))
    done = cli.run(*command, path=[TESTS])
    if count is None:  # how many raised: one per worker that built three agents
        count = len((tmp_path / "raised").read_text().split())
        assert 1 <= count <= workers
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"faults: {20 - count}/20 episodes done, {count} failed this run" in done.stderr
    assert f"{count} x {reason}" in done.stderr
    lines = (tmp_path / "out" / "episodes.jsonl").read_text().splitlines()
    logged = [EpisodeRecord.from_line(line) for line in lines]
    assert len({r.key for r in logged}) == len(logged) == 20  # 0 missing, 0 duplicated
    assert sorted(r.status for r in logged) == ["done"] * (20 - count) + ["failed"] * count
    assert {r.error for r in logged if r.status == "failed"} == {reason}
    if how in ("kill", "exit"):  # episodes 3 and 7 of each cell, by their agent seeds
        assert sorted(r.episode for r in logged if r.status == "failed") == [3, 3, 7, 7]


def test_one_worker_and_this_process_log_the_same_records(tmp_path):
    """``workers = 1`` plays in a worker process of its own, ``workers = 0`` in the run's: the
    same seeds give the same records either way (each a fresh ``socialsim run``, which forks)."""
    held = []
    for workers in (0, 1):
        (tmp_path / f"{workers}.toml").write_text(toml(experiment("act", at=(), workers=workers)))
        done = cli.run("run", str(tmp_path / f"{workers}.toml"), "--quiet",
                       "--out", str(tmp_path / str(workers)), path=[TESTS])  # fmt: skip
        assert done.returncode == 0, done.stderr
        held.append(sorted(r.content() for r in read_records(tmp_path / str(workers))))
    assert len(held[0]) == 20 and held[0] == held[1]


def test_with_one_worker_an_agent_ending_its_process_fails_its_episode_not_the_run(tmp_path):
    if pool.start_method() != "fork":
        pytest.skip("one worker plays in this process where no worker can be forked")
    results = run(experiment("exit", workers=1), tmp_path / "out")
    assert results.ran == 20 and len(results.failed) == 4
    assert {r.error for r in results.failed} == {REASONS["exit"]}


def toml(config: dict) -> str:
    import json

    seats = "".join(
        f"[seats.{seat}]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in spec.items())
        for seat, spec in config["seats"].items()
    )
    return (
        f'name = "{config["name"]}"\nepisodes = {config["episodes"]}\nseed = 0\n'
        f"workers = {config['workers']}\n"
        f'[env]\nid = "{config["env"]["id"]}"\n[env.kwargs]\nrounds = 5\n{seats}'
        '[grid]\n"env.form" = ["parallel", "aec"]\n'
    )


@pytest.mark.parametrize("workers", [1, 2])
def test_workers_that_die_before_any_episode_end_the_play_with_every_episode_failed(
    monkeypatch, workers
):
    """A worker that cannot even start (here: it exits at once) is replaced; after the pool's
    size plus two such deaths in a row, the pool stops trying and says why, for every episode."""
    if pool.start_method() != "fork":
        pytest.skip("the replaced worker function reaches forked workers only")
    monkeypatch.setattr(pool, "_worker", lambda *args: os._exit(7))
    held = outcome(play(experiment("exit", at=()), workers))
    reason = (
        f"no worker process could be kept alive: {workers + 2} in a row ended before an episode "
        "was logged, the last exited with code 7"
    )
    assert set(held.values()) == {("failed", reason)}


def test_workers_below_0_is_refused_naming_what_0_means():
    from socialsim.config import ConfigError

    with pytest.raises(ConfigError) as refused:
        load({**experiment("act", at=()), "workers": -1})
    assert str(refused.value) == "workers: must be >= 0 (0: play in this process), got -1"
