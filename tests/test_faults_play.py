"""One writer per directory for ``socialsim play``: it holds the lock ``socialsim run`` holds,
from before it reads the directory until its game is logged, so that a second ``play`` or a
``run`` on the same ``--out`` is refused naming it, and no game is ever logged into another
experiment's log."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from socialsim import records
from socialsim.cli import main
from socialsim.config import ConfigError, load
from socialsim.directory_lock import LOCK
from socialsim.play import session
from socialsim.testing import cli

DONATION = ["play", "donation", "--as", "agent_3", "--with", "*=image_scoring", "--seed", "2"]
DONATION += ["--set", "env.kwargs.n_agents=4", "--set", "env.kwargs.rounds=6"]


@pytest.fixture
def waiting_player(tmp_path):
    """A ``socialsim play`` on ``tmp_path/out`` whose person has not answered yet."""
    out = tmp_path / "out"
    child = subprocess.Popen(cli.command(*DONATION, "--out", str(out)), env=cli.environment(),
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)  # fmt: skip
    lock = out / LOCK
    while not (lock.exists() and lock.read_text().strip()):
        assert child.poll() is None, child.stderr.read()
        time.sleep(0.05)
    yield out, child
    child.send_signal(signal.SIGINT)  # the person leaves: the game is abandoned, nothing logged
    # 130 from the play's own handler; a SIGINT that lands while asyncio's runner holds the
    # signal ends the process by it (-2): either way nothing may be logged
    assert child.wait(timeout=60) in (130, -signal.SIGINT)
    assert not (out / records.EPISODES).exists()


def refusal(out: Path, pid: int) -> str:
    return (
        f"socialsim: error: --out {out}: in use by another socialsim run (pid {pid}, which "
        f"holds {out / LOCK}); wait for it to end, or choose another directory\n"
    )


def test_a_second_play_on_one_out_exits_2_naming_the_first(waiting_player, capsys):
    out, child = waiting_player
    assert main([*DONATION, "--out", str(out)]) == 2
    assert capsys.readouterr().err == refusal(out, child.pid)


def test_a_run_on_the_directory_of_a_play_exits_2_naming_it(waiting_player, capsys):
    out, child = waiting_player
    assert main(["run", "matching_pennies", "--quiet", "--out", str(out)]) == 2
    assert capsys.readouterr().err == refusal(out, child.pid)
    assert sorted(p.name for p in out.iterdir()) == [LOCK]  # the run wrote nothing


def test_a_game_is_not_logged_into_a_log_another_experiment_wrote_while_it_was_played(tmp_path):
    """(``serve`` plays through the same function: a directory taken meanwhile is refused.)"""
    out = tmp_path / "out"
    experiment = load("matching_pennies", ["episodes=1"])
    spec = session.prepare(experiment, out)
    assert (
        main(["run", "matching_pennies", "--quiet", "--set", "episodes=2", "--out", str(out)]) == 0
    )
    before = (out / records.EPISODES).read_bytes()
    with pytest.raises(ConfigError, match="another experiment's results were written there"):
        asyncio.run(session.play_game(experiment, spec, out, {}))
    assert (out / records.EPISODES).read_bytes() == before
    assert json.loads((out / records.MANIFEST).read_text())["config"]["episodes"] == 2
