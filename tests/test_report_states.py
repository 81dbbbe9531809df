"""A report says what kind of run it reads before any number: a run cut short is
``partial: N of M episodes`` on the page, under every figure's title and in every CSV file; a
run still writing (holding its lock) is named as running."""

from __future__ import annotations

import os

import pandas as pd
import pytest

import socialsim
from socialsim import directory_lock
from socialsim.cli import main

SMALL = {
    "name": "states",
    "episodes": 4,
    "env": {"id": "donation_v0", "kwargs": {"n_agents": 4, "rounds": 4}},
    "seats": {"*": {"kind": "stern_judging"}},
}


@pytest.fixture
def half(tmp_path):
    """A run of 4 episodes whose log holds its first 2: as a killed run leaves it."""
    out = socialsim.run(SMALL, tmp_path / "run").directory
    log = out / "episodes.jsonl"
    log.write_text("".join(log.read_text().splitlines(keepends=True)[:2]))
    return out


def test_a_partial_run_says_so_on_the_page_in_figures_and_in_csv_files(half, capsys, monkeypatch):
    from socialsim.analysis import figure_style

    titles = []
    save = figure_style.save

    def keep(figure, path):
        saved = save(figure, path)
        titles.append(figure._suptitle.get_text())
        return saved

    monkeypatch.setattr(figure_style, "FORMATS", ("png",))
    monkeypatch.setattr("socialsim.analysis.figures.save", keep)
    assert main(["report", str(half)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("state: partial: 2 of 4 episodes;")
    assert "state: partial: 2 of 4 episodes" in (half / "report.html").read_text()
    assert titles and all(t.endswith("[partial: 2 of 4 episodes]") for t in titles)
    returns = pd.read_csv(half / "returns.csv")
    assert list(returns.columns)[0] == "state"
    assert set(returns["state"]) == {"partial: 2 of 4 episodes"}


def test_a_finished_run_says_no_state(tmp_path, capsys):
    out = socialsim.run(SMALL, tmp_path / "run").directory
    assert main(["report", str(out), "--no-files"]) == 0
    assert capsys.readouterr().out.startswith("experiment: states")


def test_a_run_that_holds_its_lock_is_named_as_running(half, capsys):
    with directory_lock.hold(half):
        assert main(["report", str(half), "--no-files"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith(f"state: running (pid {os.getpid()}): 2 of 4 episodes")


def test_no_run_holds_a_directory_whose_lock_file_a_finished_run_left(half):
    assert (half / directory_lock.LOCK).exists()
    assert directory_lock.holder(half) is None


def test_decrypto_returns_are_wins_and_losses_not_resource_units(tmp_path, capsys):
    out = socialsim.run("decrypto_quickstart", tmp_path / "d", ["episodes=1"]).directory
    assert main(["report", str(out), "--no-files"]) == 0
    text = capsys.readouterr().out
    assert "(a Decrypto game's return: +1 won, -1 lost (0: not over);" in text
    assert "resource units" not in text.split("mean return per")[1].split("\n")[1]


def test_gossip_returns_are_resource_units(half, capsys):
    assert main(["report", str(half), "--no-files"]) == 0
    text = capsys.readouterr().out
    assert "mean return per seat:\n  (resource units;" in text
