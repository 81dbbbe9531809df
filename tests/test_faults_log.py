"""Faults of the results directory: a full, read-only or vanished disk, bad lines anywhere in the
log, a broken manifest, two runs on one directory, and the configuration mistakes of issue 25's
item 12. Each ends with 0 episodes lost and 0 duplicated, or with one clear line and nothing
written. The end-to-end cases run ``socialsim`` in a subprocess, as a user does."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from socialsim import directory_lock, records
from socialsim.cli import main
from socialsim.directory_lock import LOCK
from socialsim.records import EventLog, LogWriteError
from socialsim.testing import cli

#: matching_pennies with 30 episodes a cell: 60 episodes of about 5.5 KB each, in a second
PENNIES = ("matching_pennies", "--quiet", "--set", "episodes=30")
TOTAL = 60


def run(out: Path, *more: str) -> subprocess.CompletedProcess:
    return cli.run("run", *PENNIES, "--out", str(out), *more)


def keys(out: Path) -> list[tuple[str, int]]:
    """The key of every line of the log; every line must be a whole record."""
    return [
        (json.dumps(data["cell"], sort_keys=True), data["episode"])
        for data in map(json.loads, (out / records.EPISODES).read_bytes().splitlines())
    ]


def contents(out: Path) -> dict[tuple[str, int], str]:
    return {r.key: r.content() for r in records.read_records(out)}


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> Path:
    """The 60 episodes run with nothing going wrong: what every faulty run must end with."""
    out = tmp_path_factory.mktemp("clean") / "out"
    assert run(out).returncode == 0
    return out


def assert_whole(out: Path, clean: Path) -> None:
    """0 episodes lost, 0 duplicated, every line a record equal to the clean run's."""
    logged = keys(out)
    assert len(logged) == len(set(logged)) == TOTAL
    assert contents(out) == contents(clean)


# -- a disk that fills: an injected writer ---------------------------------------------------


class Disk:
    """The log's file as a disk that misbehaves at its ``at``-th write: ``"short"`` takes half
    the bytes and says so (write(2) on a disk that fills, then frees); ``"full"`` takes half and
    raises ENOSPC; ``"short_then_full"`` takes half, then refuses the rest."""

    def __init__(self, file, at: int, mode: str):
        self.file, self.at, self.mode, self.writes = file, at, mode, 0

    def write(self, data) -> int:
        self.writes += 1
        data = bytes(data)
        if self.writes < self.at:
            return self.file.write(data)
        if self.writes == self.at:
            written = self.file.write(data[: len(data) // 2])
            if self.mode == "full":
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return written
        if self.mode == "short_then_full":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return self.file.write(data)

    def __getattr__(self, name):
        return getattr(self.file, name)


@pytest.fixture
def failing_disk(monkeypatch):
    """Every EventLog opened in this process writes through a :class:`Disk`."""

    def install(at: int, mode: str) -> None:
        opened = EventLog.__init__

        def init(self, *args, **kwargs):
            opened(self, *args, **kwargs)
            self._file = Disk(self._file, at, mode)

        monkeypatch.setattr(EventLog, "__init__", init)

    return install


def a_line(episode: int) -> str:
    return json.dumps(
        {
            "experiment": "x",
            "cell": {},
            "episode": episode,
            "seed": episode,
            "env_id": "matching_pennies_v0",
            "env_kwargs": {},
            "form": "parallel",
            "seats": {},
            "status": "done",
            "messages": [
                {
                    "id": 0,
                    "turn": 0,
                    "sender": "x",
                    "to": "all",
                    "channel": "public",
                    "kind": "note",
                    "payload": "x" * 1000,
                }
            ],  # fmt: skip
        }
    )


def test_a_short_write_is_continued_until_the_whole_record_is_written(tmp_path, failing_disk):
    failing_disk(at=2, mode="short")
    with EventLog(tmp_path) as log:
        for episode in range(3):
            log.write(a_line(episode))
    assert (tmp_path / records.EPISODES).read_text() == "".join(a_line(e) + "\n" for e in range(3))


def test_a_failed_write_leaves_every_earlier_record_whole_and_no_partial_line(
    tmp_path, failing_disk
):
    failing_disk(at=3, mode="short_then_full")
    log = EventLog(tmp_path)
    log.write(a_line(0))
    log.write(a_line(1))
    with pytest.raises(LogWriteError) as error:
        log.write(a_line(2))
    log.close()
    assert error.value.errno == errno.ENOSPC
    assert error.value.filename == str(tmp_path / records.EPISODES)
    assert (tmp_path / records.EPISODES).read_text() == a_line(0) + "\n" + a_line(1) + "\n"


def test_a_full_disk_stops_the_run_with_one_line_and_the_rerun_loses_nothing(
    tmp_path, failing_disk, clean, capsys
):
    out = tmp_path / "out"
    failing_disk(at=20, mode="full")
    assert main(["run", *PENNIES, "--out", str(out)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == (
        f"matching_pennies: stopped: cannot write {out}/episodes.jsonl: No space left on device; "
        f"19/60 episodes logged in {out}; once the disk has room and can be written, rerun the "
        "same command to resume"
    )
    assert len(keys(out)) == 19  # every line whole
    assert run(out).returncode == 0
    assert_whole(out, clean)


def test_a_short_write_then_freed_space_logs_every_episode_whole(
    tmp_path, failing_disk, clean, capsys
):
    """Before: the run printed '60/60 episodes done' with 59 lines, one of them two records
    glued together, and two episodes lost."""
    out = tmp_path / "out"
    failing_disk(at=20, mode="short")
    assert main(["run", *PENNIES, "--out", str(out)]) == 0
    assert_whole(out, clean)


def test_a_full_disk_stops_a_run_of_two_workers_as_cleanly(tmp_path, failing_disk, clean, capsys):
    out = tmp_path / "out"
    failing_disk(at=20, mode="full")
    assert main(["run", *PENNIES, "--set", "workers=2", "--out", str(out)]) == 1
    assert "19/60 episodes logged" in capsys.readouterr().err.splitlines()[-1]
    assert run(out).returncode == 0
    assert_whole(out, clean)


# -- a real small disk: tmpfs (root only) ----------------------------------------------------


@pytest.fixture
def small_disk(tmp_path) -> Path:
    """A 2 MB tmpfs at ``tmp_path/disk``; skipped where mounting is not permitted."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_tmpfs_stops_the_run_and_after_space_is_freed_nothing_is_lost(small_disk, clean):
    filler = small_disk / "filler"
    filler.write_bytes(b"\0" * (2 * 1024 * 1024 - 200 * 1024))  # about 36 episodes of room
    out = small_disk / "out"
    first = run(out)
    assert first.returncode == 1
    last = first.stderr.strip().splitlines()[-1]
    assert "Traceback" not in first.stderr
    assert last.startswith(f"matching_pennies: stopped: cannot write {out}/episodes.jsonl: ")
    assert "No space left on device" in last and "rerun the same command to resume" in last
    logged = len(keys(out))  # every line whole, none torn
    assert 0 < logged < TOTAL and f"{logged}/60 episodes logged in {out}" in last
    filler.unlink()
    assert run(out).returncode == 0
    assert_whole(out, clean)


def test_read_only_disk_reruns_a_complete_directory_and_stops_cleanly_otherwise(small_disk, clean):
    done, part = small_disk / "done", small_disk / "part"
    assert run(done).returncode == 0
    assert cli.run("run", *PENNIES[:-1], "episodes=10", "--out", str(part)).returncode == 0
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    rerun = run(done)
    assert (rerun.returncode, rerun.stderr.splitlines()[-1]) == (
        0,
        "matching_pennies: 60/60 episodes done, 0 failed this run",
    )
    grow = run(part)
    assert (grow.returncode, grow.stderr.splitlines()) == (
        1,
        [
            f"matching_pennies: stopped: cannot write {part}/manifest.json: Read-only file "
            f"system; 20/60 episodes logged in {part}; once the disk has room and can be "
            "written, rerun the same command to resume"
        ],
    )
    report = cli.run("report", str(done))
    assert (report.returncode, report.stderr.splitlines()) == (
        1,
        [
            f"socialsim: cannot write {done}/returns.csv: Read-only file system; the report "
            "needs room for its files there (or --no-files prints it only)"
        ],
    )
    assert cli.run("report", str(done), "--no-files").returncode == 0
    new = run(small_disk / "new")
    assert new.returncode == 1 and len(new.stderr.splitlines()) == 1
    assert "Read-only file system; 0/60 episodes logged" in new.stderr
    assert_whole(done, clean)


@pytest.mark.slow
def test_a_log_removed_mid_run_stops_the_run_instead_of_reporting_success(tmp_path, clean):
    out = tmp_path / "out"
    process = cli.start("run", *PENNIES[:-1], "episodes=3000", "--out", str(out), text=True)
    while not (out / records.EPISODES).exists() and process.poll() is None:
        time.sleep(0.01)
    (out / records.EPISODES).unlink()
    _, err = process.communicate(timeout=300)
    assert process.returncode == 1
    assert "cannot write" in err and "removed while the run wrote to it" in err


# -- bad lines anywhere ----------------------------------------------------------------------


BAD_LINES = {
    "blank": (b"", "not JSON"),
    "garbage": (b"hello world", "not JSON"),
    "nul_bytes": (b"\0" * 50, "not JSON"),
    "not_utf8": (b"\xff\xfe{", "not JSON"),
    "json_array": (b"[1, 2, 3]", "a JSON list, not a record"),
    "missing_fields": (
        b'{"status": "done", "episode": 3}',
        "missing experiment, cell, seed, env_id, env_kwargs, form, seats",
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", [*BAD_LINES, "torn_not_last"])
def test_a_bad_line_is_set_aside_named_once_and_its_episode_played_again(tmp_path, clean, case):
    out = tmp_path / "out"
    subprocess.run(["cp", "-r", str(clean), str(out)], check=True)
    lines = (out / records.EPISODES).read_bytes().splitlines()
    if case == "torn_not_last":
        bad, why = lines[10][: len(lines[10]) // 2], "not JSON"
        lines[10] = bad  # episode of line 11 torn, a whole line after it
    else:
        bad, why = BAD_LINES[case]
        lines.insert(10, bad)
    (out / records.EPISODES).write_bytes(b"".join(line + b"\n" for line in lines))
    warning = (
        f"socialsim: warning: {out}/episodes.jsonl: 1 line that is not a record skipped (line "
        f"11: {why}); `socialsim run` on this directory sets it aside in episodes.rejected.jsonl "
        "and plays any episode left with no record"
    )

    report = cli.run("report", str(out), "--no-files")
    assert report.returncode == 0
    assert report.stderr.splitlines() == [warning]  # named once, the good lines reported
    ran = run(out)
    assert ran.returncode == 0
    assert ran.stderr.splitlines()[0] == warning
    rerun = 1 if case == "torn_not_last" else 0
    assert f"60 episodes, {60 - rerun} already logged, {rerun} to run" in ran.stderr
    assert_whole(out, clean)
    aside = (out / records.REJECTED).read_text().splitlines()
    assert [json.loads(line) for line in aside] == [
        {"line": 11, "text": bad.decode("utf-8", "backslashreplace"), "reason": why}
    ]
    assert cli.run("report", str(out), "--no-files").stderr == ""  # nothing left to warn of


def test_a_torn_last_line_is_set_aside_and_the_next_record_starts_on_its_own_line(tmp_path):
    with EventLog(tmp_path) as log:
        log.write(a_line(0))
    with open(tmp_path / records.EPISODES, "ab") as f:
        f.write(a_line(1).encode()[:100])  # a write cut short, no newline
    with EventLog(tmp_path) as log:
        log.write(a_line(2))
    assert (tmp_path / records.EPISODES).read_text() == a_line(0) + "\n" + a_line(2) + "\n"
    aside = json.loads((tmp_path / records.REJECTED).read_text())
    assert aside == {
        "line": 2,
        "text": a_line(1)[:100],
        "reason": "torn: a last line without its newline",
    }


@pytest.mark.slow
@pytest.mark.parametrize(
    "text, problem",
    [
        ('{"config": {', "not valid JSON: Expecting property name enclosed in double quotes"),
        ("[]", "a JSON list"),
    ],
)
def test_a_broken_manifest_is_an_error_naming_the_file_and_how_to_recover(
    tmp_path, clean, text, problem
):
    out = tmp_path / "out"
    subprocess.run(["cp", "-r", str(clean), str(out)], check=True)
    (out / records.MANIFEST).write_text(text)
    before = sorted(os.listdir(out))
    for command in (["run", *PENNIES, "--out", str(out)], ["report", str(out), "--no-files"]):
        done = cli.run(*command)
        assert done.returncode == 2
        (line,) = done.stderr.splitlines()
        assert line.startswith(f"socialsim: error: {out}/manifest.json: is not a manifest (")
        assert problem in line
        assert line.endswith(
            "the logged episodes are safe in episodes.jsonl: move the file away and rerun the "
            "same `socialsim run` command that made this directory (it writes the manifest "
            "again and plays only what is missing)"
        )
    assert sorted(os.listdir(out)) == before
    (out / records.MANIFEST).rename(out / "manifest.json.broken")
    assert run(out).returncode == 0  # the recovery the message names
    assert_whole(out, clean)


# -- one writer per directory ----------------------------------------------------------------


HOLD = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
fcntl.flock(fd, fcntl.LOCK_EX)
os.write(fd, f"{os.getpid()}\\n".encode())
print("held", flush=True)
sys.stdin.read()
"""


def test_a_run_on_a_directory_in_use_exits_2_naming_the_process_that_holds_it(tmp_path, clean):
    out = tmp_path / "out"
    subprocess.run(["cp", "-r", str(clean), str(out)], check=True)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(out / LOCK)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline() == "held\n"
        done = run(out)
    finally:
        holder.communicate("")
    assert (done.returncode, done.stderr.splitlines()) == (
        2,
        [
            f"socialsim: error: --out {out}: in use by another socialsim run (pid "
            f"{holder.pid}, which holds {out}/{LOCK}); wait for it to end, or choose another "
            "directory"
        ],
    )
    assert run(out).returncode == 0  # the holder gone, its lock file blocks nothing


def test_a_stale_lock_file_from_a_killed_run_does_not_block(tmp_path, clean):
    out = tmp_path / "out"
    out.mkdir()
    (out / LOCK).write_text("999999999\n")  # left by a run killed with SIGKILL
    assert run(out).returncode == 0
    assert_whole(out, clean)
    assert (out / LOCK).read_text() != "999999999\n"  # the last run's own pid


@pytest.mark.slow
def test_two_concurrent_runs_on_one_directory_one_refused_no_duplicates(tmp_path):
    out = tmp_path / "out"
    args = ("run", "align_quickstart", "--quiet", "--set", "episodes=100", "--out", str(out))
    first = cli.start(*args, text=True)
    while first.poll() is None and not (out / LOCK).exists():
        time.sleep(0.01)
    second = cli.start(*args, text=True)
    _, second_err = second.communicate(timeout=300)
    first.communicate(timeout=300)
    assert first.returncode == 0
    if second.returncode == 2:  # it started while the first held the directory
        assert f"in use by another socialsim run (pid {first.pid}," in second_err
    else:  # the first had ended: nothing left to run
        assert second.returncode == 0 and "0 to run" in second_err
    logged = keys(out)
    assert len(logged) == len(set(logged)) == 600


def test_a_check_takes_no_lock_and_writes_nothing(tmp_path):
    out = tmp_path / "out"
    assert run(out, "--check").returncode == 0
    assert not out.exists()


def test_two_manifest_writers_each_replace_it_whole(tmp_path):
    """Before: both wrote manifest.json.tmp; one crashed renaming a file the other had moved."""
    script = (
        "import sys; from socialsim import records\n"
        "for i in range(300): records.write_manifest(sys.argv[1], {'i': i, 'w': sys.argv[2]})\n"
    )
    writers = [
        subprocess.Popen([sys.executable, "-c", script, str(tmp_path), name]) for name in "ab"
    ]
    assert [w.wait() for w in writers] == [0, 0]
    assert json.loads((tmp_path / records.MANIFEST).read_text())["i"] == 299
    assert os.listdir(tmp_path) == [records.MANIFEST]


# -- item 12: configuration mistakes, each one clear line, exit 2, nothing written ------------


RL_SEAT = """
name = "rl_seat"
[env]
id = "donation_v0"
[env.kwargs]
n_agents = 4
[seats."*"]
kind = "image_scoring"
[seats.agent_0]
kind = "rl"
"""


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ("align_quickstart", "--set", "seats.*.episodes=3"),
            "seats.*: unknown key 'episodes'; ImageScoring takes no keys; 'episodes' is a "
            "top-level key: in TOML a key below a [table] header belongs to that table, so write "
            "it above the first header",
        ),
        (
            ("align_quickstart", "--set", "env.kwargs.n_agent=3"),
            "env.kwargs: unknown key 'n_agent' (did you mean 'n_agents'?); allowed keys: "
            "n_agents, cost, benefit, initial_resources, discount, gossip, schedule, rounds, "
            "entrant, entrant_round, pairs_per_round, gossip_reach, render_mode",
        ),
        (
            ("align_quickstart", "--set", "episode=3"),
            "episode: unknown key 'episode' (did you mean 'episodes' or 'episode_timeout'?); "
            "allowed keys: name, description, episodes, seed, max_concurrent, workers, backend, "
            "cache, env, seats, probes, interventions, grid, model_groups, evolution, "
            "decision_timeout, episode_timeout",
        ),
        (
            ("align_quickstart", "--set", "grid.seed=[0, -1]"),
            "grid cell {'env.kwargs.gossip': True, 'seats.*.kind': 'image_scoring', 'seed': -1}: "
            "seed: must be an integer >= 0, got -1",  # this one does concern a grid cell
        ),
        (
            ("RL",),
            "seats.agent_0.path: required key missing; PolicyAgent needs path",
        ),
        (
            ("RL", "--set", "seats.agent_0.path=nowhere/donor.zip"),
            "seats.agent_0: rl: path: no policy file at 'nowhere/donor.zip'",
        ),
        pytest.param(
            ("llm_align_donation", "--set", "episodes=1"),
            "seats.*.model.model: 'openai/o4-mini' reads its key from the environment variable "
            "OPENAI_API_KEY, which is not set (or empty); export it, or name the variable that "
            "holds the key in model.api_key_env",
            marks=pytest.mark.slow,  # litellm imported to tell the provider's variable
        ),
    ],
)
@pytest.mark.parametrize("check", [True, False])
def test_a_configuration_mistake_is_one_line_exit_2_with_nothing_written(
    tmp_path, args, message, check
):
    if args[0] == "RL":
        (tmp_path / "rl.toml").write_text(RL_SEAT)
        args = (str(tmp_path / "rl.toml"), *args[1:])
    out = tmp_path / "out"
    environment = {k: v for k, v in cli.environment().items() if k != "OPENAI_API_KEY"}
    done = subprocess.run(
        cli.command("run", *args, "--quiet", "--out", str(out), *(["--check"] if check else [])),
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert (done.returncode, done.stderr.splitlines()) == (2, [f"socialsim: error: {message}"])
    assert not out.exists()


@pytest.mark.parametrize(
    "others, message",
    [
        (
            ["stern_judging", "stern_judging", "stern_judging"],
            "others[0]: expected an agent spec, a table with a 'kind' key (e.g. {'kind': "
            "'stern_judging'}), got 'stern_judging'",
        ),
        (
            {"agent_1": "stern_judging", "agent_2": {"kind": "stern_judging"}, "agent_3": {}},
            "others.agent_1: expected an agent spec, a table with a 'kind' key (e.g. {'kind': "
            "'stern_judging'}), got 'stern_judging'",
        ),
    ],
)
def test_strings_for_the_views_other_seats_are_refused_naming_the_seat(others, message):
    from socialsim.rl.view import seat_specs

    with pytest.raises(ValueError) as error:
        seat_specs(["agent_1", "agent_2", "agent_3"], others)
    assert str(error.value) == message


def test_a_process_forked_while_the_lock_is_held_does_not_keep_it(tmp_path):
    """A pool worker forked from a run closes its copy of the lock: it ends with the run."""
    (tmp_path / records.EPISODES).touch()  # a directory with something in it keeps its lock file
    started, started_write = os.pipe()
    with directory_lock.hold(tmp_path):
        child = os.fork()
        if child == 0:  # a worker that outlives its run for a while
            os.write(started_write, b"!")  # it runs: what happens at fork has happened
            time.sleep(60)
            os._exit(0)
    assert os.read(started, 1) == b"!"
    try:
        with directory_lock.hold(tmp_path):  # raises "in use" if the child held the lock
            pass
    finally:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
        os.close(started)
        os.close(started_write)
