import json
import signal
import subprocess
import textwrap
import time
from pathlib import Path

import pytest

from socialsim import frames, records
from socialsim.cli import main
from socialsim.records import EpisodeRecord, EventLog, read_records
from socialsim.testing import cli

EXPERIMENT = """
name = "resume"
episodes = 50
seed = 100
[env]
id = "matching_pennies_v0"
[env.kwargs]
rounds = 150
[seats.matcher]
kind = "pennies_random"
[seats.mismatcher]
kind = "pennies_copycat"
"""


def record(episode: int, status: str = "done") -> EpisodeRecord:
    return EpisodeRecord(
        experiment="x",
        cell={},
        episode=episode,
        seed=episode,
        env_id="matching_pennies_v0",
        env_kwargs={},
        form="parallel",
        seats={},
        status=status,
    )


def run_cli(path, out) -> subprocess.Popen:
    return cli.start("run", str(path), "--out", str(out), "--quiet")


def children(pid: int) -> list[int]:
    """The child processes of ``pid`` (Linux's /proc)."""
    text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    return [int(child) for child in text.split()]


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, killed and not yet reaped by init, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def lines(out) -> int:
    path = out / records.EPISODES
    return path.read_bytes().count(b"\n") if path.exists() else 0


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_killed_run_resumes_without_losing_or_duplicating_episodes(tmp_path, workers):
    path = tmp_path / "exp.toml"
    path.write_text(
        textwrap.dedent(EXPERIMENT).replace("seed = 100", f"seed = 100\nworkers = {workers}")
    )
    killed, clean = tmp_path / "killed", tmp_path / "clean"
    process = run_cli(path, killed)
    deadline = time.monotonic() + 60
    while lines(killed) < 5 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    workers_left = children(process.pid)
    process.send_signal(signal.SIGKILL)
    process.wait()
    logged_before = lines(killed)
    deadline = time.monotonic() + 30  # an idle worker looks for its parent every second
    while workers_left and time.monotonic() < deadline:
        workers_left = [pid for pid in workers_left if alive(pid)]
        time.sleep(0.1)
    assert workers_left == [], "no worker outlives the killed run"
    assert 5 <= logged_before < 50, "the kill must land mid-run"
    assert run_cli(path, killed).wait() == 0
    assert run_cli(path, clean).wait() == 0

    raw = [json.loads(line) for line in (killed / records.EPISODES).read_text().splitlines()]
    episodes = [d["episode"] for d in raw]
    assert sorted(episodes) == list(range(50))  # exactly 50 distinct, none twice
    resumed = {r.episode: r.content() for r in read_records(killed)}
    uninterrupted = {r.episode: r.content() for r in read_records(clean)}
    assert resumed == uninterrupted


def test_torn_last_line_is_ignored_by_the_reader_and_cut_by_the_next_writer(tmp_path):
    with EventLog(tmp_path) as log:
        log.append(record(0))
        log.append(record(1))
    with open(tmp_path / records.EPISODES, "a") as f:
        f.write('{"experiment": "x", "cell": {}, "epis')  # a kill in mid-write
    assert [r.episode for r in read_records(tmp_path)] == [0, 1]
    with EventLog(tmp_path) as log:
        log.append(record(2))
    assert (tmp_path / records.EPISODES).read_text().count("\n") == 3
    assert [r.episode for r in read_records(tmp_path)] == [0, 1, 2]


def test_failed_episode_is_retried_and_the_done_record_wins(tmp_path):
    with EventLog(tmp_path) as log:
        log.append(record(0, "failed"))
        log.append(record(1))
    assert records.done_keys(tmp_path) == {("{}", 1)}
    assert [(r.episode, r.status) for r in read_records(tmp_path, include_failed=True)] == [
        (0, "failed"),
        (1, "done"),
    ]
    with EventLog(tmp_path) as log:
        log.append(record(0))
    assert [(r.episode, r.status) for r in read_records(tmp_path, include_failed=True)] == [
        (0, "done"),
        (1, "done"),
    ]


def test_rerun_skips_logged_episodes_and_a_changed_config_is_refused(tmp_path, capsys):
    path = tmp_path / "exp.toml"
    path.write_text(
        textwrap.dedent(EXPERIMENT)
        .replace("episodes = 50", "episodes = 4")
        .replace("rounds = 150", "rounds = 3")
    )
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out), "--quiet"]) == 0
    assert main(["run", str(path), "--out", str(out), "--quiet"]) == 0
    assert lines(out) == 4
    assert "4 already logged, 0 to run" in capsys.readouterr().err
    assert main(["run", str(path), "--out", str(out), "--quiet", "--set", "seed=1"]) == 2
    assert "holds a different experiment (keys that differ: seed)" in capsys.readouterr().err
    manifest = records.read_manifest(out)
    assert manifest["config"]["name"] == "resume" and manifest["versions"]["pettingzoo"].startswith(
        "1.27"
    )
    assert manifest["episodes_total"] == 4


def test_frames_have_a_row_per_seat_step_and_message(tmp_path):
    path = tmp_path / "exp.toml"
    path.write_text(
        textwrap.dedent(EXPERIMENT)
        .replace("episodes = 50", "episodes = 2")
        .replace("rounds = 150", "rounds = 3")
    )
    assert main(["run", str(path), "--out", str(tmp_path / "o"), "--quiet"]) == 0
    recs = read_records(tmp_path / "o")
    assert len(frames.episodes_frame(recs)) == 4
    assert len(frames.steps_frame(recs)) == 2 * 3 * 2
    assert len(frames.messages_frame(recs)) == 2 * (1 + 3 * 2 + 3)  # rules, lucky faces, reveals


def test_worker_processes_log_the_same_episodes_as_one_process(tmp_path):
    text = (
        textwrap.dedent(EXPERIMENT)
        .replace("episodes = 50", "episodes = 6")
        .replace("rounds = 150", "rounds = 5")
    )
    one, two = tmp_path / "one.toml", tmp_path / "two.toml"
    one.write_text(text)
    two.write_text(text.replace("seed = 100", "seed = 100\nworkers = 2"))
    assert main(["run", str(one), "--out", str(tmp_path / "a"), "--quiet"]) == 0
    assert main(["run", str(two), "--out", str(tmp_path / "b"), "--quiet"]) == 0
    first = [r.content() for r in read_records(tmp_path / "a")]
    second = [r.content() for r in read_records(tmp_path / "b")]
    assert len(first) == 6 and first == second
