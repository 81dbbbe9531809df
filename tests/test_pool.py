import subprocess
import sys
import threading

import pytest

from socialsim import pool
from socialsim.config import load
from socialsim.records import EpisodeRecord, read_records
from socialsim.results import run
from socialsim.runner import RecordList, play_specs


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
