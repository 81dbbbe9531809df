import subprocess
import sys
import threading

import pytest

from socialsim import pool
from socialsim.config import ConfigError, load
from socialsim.records import EpisodeRecord, RecordList, read_records
from socialsim.results import _AfterChecks, check_specs, run
from socialsim.runner import play_specs


def _contents(lines: list[str]) -> list[str]:
    return sorted(EpisodeRecord.from_line(line).content() for line in lines)


def test_workers_start_from_a_forkserver_while_another_thread_runs():
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert pool.start_method() == "forkserver"
    finally:
        stop.set()
        thread.join()


@pytest.mark.skipif(sys.platform != "linux", reason="workers are forked only on Linux")
def test_a_process_that_loaded_pytorch_forks_no_worker_and_one_worker_plays_here(tmp_path):
    """PyTorch's OpenMP pool, once used, leaves a forked child that uses it waiting for ever:
    such a process starts its workers from a forkserver, and ``workers = 1`` plays in it."""
    pytest.importorskip("torch")
    script = (
        "import sys, torch; from socialsim import backends, pool; from socialsim.results import run; "
        "torch.linalg.qr(torch.ones(64, 64)); "
        "assert pool.start_method() == 'forkserver' and backends.in_this_process(1); "
        "run('matching_pennies', out=sys.argv[1], overrides=['episodes=2', 'workers=1'])"
    )
    subprocess.run([sys.executable, "-c", script, str(tmp_path / "out")], check=True, timeout=120)
    assert len(read_records(tmp_path / "out")) == 4


@pytest.mark.skipif(sys.platform != "linux", reason="workers are forked only on Linux")
def test_a_run_with_no_other_thread_forks_its_workers_and_logs_the_records_of_one_process(
    tmp_path,
):
    # In a fresh process: the test session itself may run threads of earlier tests.
    script = (
        "import sys, threading; from socialsim import pool; from socialsim.results import run; "
        "assert threading.active_count() == 1 and pool.start_method() == 'fork'; "
        "run('matching_pennies', out=sys.argv[1], overrides=['episodes=4', 'workers=2'])"
    )
    subprocess.run([sys.executable, "-c", script, str(tmp_path / "forked")], check=True)
    one = run("matching_pennies", out=tmp_path / "one", overrides=["episodes=4", "workers=1"])
    forked = [r.content() for r in read_records(tmp_path / "forked")]
    assert len(forked) == 8 and forked == [r.content() for r in one.records()]


def test_one_pool_plays_two_batches_of_episodes_with_the_same_workers():
    specs = load("matching_pennies", ["episodes=3"]).specs()
    alone = RecordList()
    play_specs(specs, alone)
    first, second = RecordList(), RecordList()
    with pool.ProcessPool(specs, workers=2) as workers:
        workers.play(specs[:2], first)
        started = [p.pid for p in workers.processes]
        assert all(p.exitcode is None for p in workers.processes)  # still there for the rest
        workers.play(specs[2:], second)
        assert [p.pid for p in workers.processes] == started
    assert all(p.exitcode == 0 for p in workers.processes)
    assert _contents(first.lines + second.lines) == _contents(alone.lines)
    # the workers send each line's key and status with it: the parent decodes none of them
    keyed = {**first.by_key(), **second.by_key()}
    assert all(key is not None for _, key in first.entries + second.entries)
    decoded = {r.key: r for r in first.records + second.records}
    assert {key: status for key, (status, _) in keyed.items()} == {
        key: record.status for key, record in decoded.items()
    }
    assert len(keyed) == len(specs) and keyed.keys() == alone.by_key().keys()


def test_batches_cover_the_specs_in_order_and_shrink_to_single_episodes_at_the_end():
    specs = list(range(540))
    sizes = [len(b) for b in pool.batches(specs, workers=2)]
    assert [x for b in pool.batches(specs, workers=2) for x in b] == specs
    # a share of what is left, (left // 8) capped at 8, never below one episode
    assert sizes[:60] == [8] * 60 and sizes[60:64] == [7, 6, 5, 5] and sizes[-15:] == [1] * 15
    assert sizes == sorted(sizes, reverse=True) and sum(sizes) == 540
    # an async run's batches are at least max_concurrent episodes, the last one what is left
    assert [len(b) for b in pool.batches(list(range(20)), workers=2, least=8)] == [8, 8, 4]
    assert pool.batches([], workers=2) == []


@pytest.mark.parametrize("method", ["fork", "forkserver"])
def test_a_pool_whose_idle_workers_are_killed_starts_others_and_logs_every_episode_once(method):
    import os
    import signal

    specs = load("matching_pennies", ["episodes=40"]).specs()
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)  # a second thread: the pool uses a forkserver
    if method == "forkserver":
        thread.start()
    elif pool.start_method() != "fork":
        pytest.skip("this session runs other threads (or is not Linux): workers cannot fork")
    try:
        with pool.ProcessPool(specs, workers=2) as workers:
            assert pool.start_method() == method
            log = RecordList()
            workers.play(specs[:4], log)
            killed = [process.pid for process in workers.processes]
            for pid in killed:
                os.kill(pid, signal.SIGKILL)
            workers.play(specs[4:], log)  # each worker's end is seen; two others play
            assert workers.running == 2 and not {p.pid for p in workers.processes} & set(killed)
            logged = [key for _, key in log.entries]
            assert sorted(logged) == sorted(spec.key for spec in specs) and len(logged) == 80
            assert {status for status, _ in log.entries} == {"done"}
    finally:
        stop.set()
        if thread.is_alive():
            thread.join()


def test_forkserver_workers_log_the_records_of_one_process(tmp_path):
    def contents(out, workers):
        results = run(
            "matching_pennies", out=tmp_path / out, overrides=["episodes=4", f"workers={workers}"]
        )
        return [r.content() for r in results.records()]

    one = contents("one", 1)
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        served = contents("served", 2)
    finally:
        stop.set()
        thread.join()
    assert len(one) == 8 and served == one


# -- the check episodes, sent to the workers with the rest ---------------------------------------

FAILS_WITH_FIRST_1 = '''
from socialsim.agent import Agent


class Picky(Agent):
    """Shows ``first`` every round, and cannot play at all when ``first`` is 1."""

    def __init__(self, first: int = 0):
        self.first = first

    def act(self, observation, messages, info):
        if self.first == 1:
            raise RuntimeError("picky cannot play heads")
        return self.first
'''


@pytest.mark.parametrize("workers", [1, 2])
def test_a_failed_check_episode_writes_nothing_with_one_worker_or_two(
    tmp_path, monkeypatch, workers
):
    (tmp_path / "picky_agents.py").write_text(FAILS_WITH_FIRST_1)
    monkeypatch.syspath_prepend(str(tmp_path))
    config = {
        "name": "picky",
        "episodes": 20,
        "env": {"id": "matching_pennies_v0", "kwargs": {"rounds": 3}},
        "seats": {
            "matcher": {"kind": "picky_agents:Picky"},
            "mismatcher": {"kind": "pennies_random"},
        },
        "grid": {"seats.matcher.first": [0, 1]},
    }
    out = tmp_path / "out"
    with pytest.raises(ConfigError) as error:
        run({**config, "workers": workers}, out=out)
    assert str(error.value) == (
        "grid cell {'seats.matcher.first': 1}: episode 0 (seed 0), played as a check before "
        "writing anything, failed: seat matcher (picky_agents:Picky): RuntimeError: picky cannot "
        "play heads"
    )
    assert not out.exists()


def test_lines_are_held_until_the_last_check_is_done_then_written_in_order(tmp_path):
    specs = load("matching_pennies", ["episodes=3"]).specs()  # 2 cells (env.form) x 3
    checks = check_specs(specs)
    assert [s.episode for s in checks] == [0, 0] and checks == [specs[0], specs[3]]
    started: list[RecordList] = []

    def start() -> RecordList:
        started.append(RecordList())
        return started[-1]

    log = _AfterChecks(checks, tmp_path, start)
    log.write("other", "done", specs[1].key)  # sent after the checks, ended first
    log.write("first check", "done", specs[0].key)
    assert started == [] and not log.open
    log.write("last check", "done", specs[3].key)
    assert len(started) == 1 and log.open
    log.write("after", "failed", specs[2].key)
    assert started[0].lines == ["other", "first check", "last check", "after"]
    assert [status for status, _ in started[0].entries] == ["done", "done", "done", "failed"]


def test_a_run_without_check_episodes_opens_its_log_at_once(tmp_path):
    started = []
    log = _AfterChecks([], tmp_path, lambda: started.append(RecordList()) or started[-1])
    assert log.open and len(started) == 1
