"""The smaller faults of ``socialsim run``: each one line and the right exit status, never a
traceback; files written whole or not at all, with the user's umask; SIGTERM and SIGHUP (a
closed terminal) summed up as Ctrl-C is."""

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

from socialsim import records
from socialsim.cli import main
from socialsim.testing import cli

QUICK = ["matching_pennies", "--quiet", "--set", "episodes=2"]


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_the_manifest_is_written_with_the_users_umask_like_the_log(tmp_path, umask, mode):
    previous = os.umask(umask)
    try:
        assert main(["run", *QUICK, "--out", str(tmp_path / "out")]) == 0
    finally:
        os.umask(previous)
    modes = {p.name: p.stat().st_mode & 0o777 for p in (tmp_path / "out").iterdir()}
    assert modes[records.MANIFEST] == modes[records.EPISODES] == mode


def test_a_dangling_symlink_as_out_is_one_line_naming_it(tmp_path, capsys):
    (tmp_path / "out").symlink_to(tmp_path / "nowhere")
    assert main(["run", *QUICK, "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == (
        f"socialsim: error: --out {tmp_path / 'out'}: a symbolic link to {tmp_path / 'nowhere'}, "
        "which does not exist; make the directory it names, or name another directory\n"
    )


@pytest.mark.parametrize(("key", "value", "said"), [("config", [1], "its config is a JSON list"),
                                                    ("cells", 5, "its cells are a JSON int")])  # fmt: skip
def test_a_manifest_with_a_mistyped_part_is_one_line_exit_2(tmp_path, capsys, key, value, said):
    out = tmp_path / "out"
    assert main(["run", *QUICK, "--out", str(out)]) == 0
    held = json.loads((out / records.MANIFEST).read_text())
    (out / records.MANIFEST).write_text(json.dumps({**held, key: value}))
    capsys.readouterr()
    assert main(["run", *QUICK, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"socialsim: error: {out}/manifest.json: is not a manifest ({said}, ")
    assert len(err.splitlines()) == 1


def test_an_io_error_reading_the_log_at_run_start_is_one_line_exit_1(tmp_path, capsys, monkeypatch):
    def eio(path, *args, **kwargs):
        raise OSError(errno.EIO, os.strerror(errno.EIO), str(path))

    monkeypatch.setattr(records, "scan_log", eio)
    assert main(["run", *QUICK, "--out", str(tmp_path / "out")]) == 1
    assert capsys.readouterr().err == (
        f"socialsim: error: cannot read {tmp_path / 'out' / records.EPISODES}: Input/output error\n"
    )


def test_a_set_aside_cut_short_leaves_no_temporary_file_and_sets_no_line_aside_twice(
    tmp_path, monkeypatch
):
    good = json.dumps({"experiment": "x", "cell": {}, "episode": 0, "seed": 0, "env_id": "e",
                       "env_kwargs": {}, "form": "parallel", "seats": {}, "status": "done"})  # fmt: skip
    log = tmp_path / records.EPISODES
    log.write_text(f"{good}\ngarbage\n")
    replace = os.replace

    def full(source, target):
        if Path(target) == log:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        replace(source, target)

    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(OSError, match="No space left"):
        records.set_aside_bad_lines(log)
    assert sorted(p.name for p in tmp_path.iterdir()) == [records.EPISODES, records.REJECTED]
    assert log.read_text() == f"{good}\ngarbage\n"  # not changed: whole or not at all
    monkeypatch.setattr(os, "replace", replace)
    records.set_aside_bad_lines(log)  # the next run, with room again
    assert log.read_text() == f"{good}\n"
    assert [
        json.loads(line) for line in (tmp_path / records.REJECTED).read_text().splitlines()
    ] == [{"line": 2, "text": "garbage", "reason": "not JSON"}]


@pytest.mark.parametrize(
    ("signum", "workers"),
    [(signal.SIGTERM, 2), (signal.SIGHUP, 2), (signal.SIGHUP, 1)],
    ids=["sigterm", "sighup", "sighup-1-worker"],
)
def test_sigterm_to_the_group_ends_a_run_with_the_summary_ctrl_c_gives_and_no_failed_episode(
    tmp_path, signum, workers
):
    """SIGHUP (a closed terminal's, to its foreground group) as SIGTERM: exit 128 + its
    number, every record whole."""
    out = tmp_path / "out"
    args = ["run", "matching_pennies", "--quiet", "--set", "episodes=3000",
            "--set", f"workers={workers}"]  # fmt: skip
    child = subprocess.Popen(cli.command(*args, "--out", str(out)), env=cli.environment(),
                             stderr=subprocess.PIPE, text=True, start_new_session=True)  # fmt: skip
    log = out / records.EPISODES
    while not log.exists() or log.stat().st_size < 100_000:
        assert child.poll() is None, child.stderr.read()
        time.sleep(0.05)
    os.killpg(child.pid, signum)  # to the whole group, as a service manager does
    _, err = child.communicate(timeout=60)
    assert child.returncode == 128 + signum and "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("matching_pennies: interrupted; ") and last.endswith(
        f"/6000 episodes logged in {out}; rerun the same command to resume"
    )
    logged = int(last.split("; ")[1].split("/")[0])
    assert 0 < logged == len(records.done_keys(out))
    failed = [r for r in records.read_records(out, include_failed=True) if r.status != "done"]
    assert failed == []  # the workers were not killed under the run: SIGTERM is the parent's


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_a_run_whose_terminal_closes_ends_129_with_every_record_whole_and_resumes(
    tmp_path, workers
):
    """A real terminal (a pty) closed mid-run: the kernel's SIGHUP to the run, which can no
    longer print its summary (its stderr gives EIO) and still exits 129, its log whole."""
    import pty
    import select

    out = tmp_path / "out"
    args = ["run", "matching_pennies", "--set", "episodes=3000", "--set", f"workers={workers}"]
    pid, terminal = pty.fork()
    if pid == 0:  # the run, on the terminal (a progress bar too)
        try:
            os.execve(sys.executable, cli.command(*args, "--out", str(out)), cli.environment())
        finally:
            os._exit(127)
    log = out / records.EPISODES
    for _ in range(1200):  # at most a minute
        if select.select([terminal], [], [], 0.05)[0]:
            try:
                os.read(terminal, 1 << 16)
            except OSError:
                break  # it ended before: seen below
        if log.exists() and log.stat().st_size > 100_000:
            break
    os.close(terminal)  # the terminal closes
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 128 + signal.SIGHUP
    logged = records.read_records(out, include_failed=True)
    assert 0 < len(logged) < 6000 and {r.status for r in logged} == {"done"}
    again = cli.run("run", "matching_pennies", "--quiet", "--set", "episodes=3000",
                    "--set", f"workers={workers}", "--out", str(out))  # fmt: skip
    assert again.returncode == 0, again.stderr
    keys = [r.key for r in records.read_records(out, include_failed=True)]
    assert len(keys) == len(set(keys)) == 6000
