"""``socialsim report A B``: runs side by side, each a value of the ``run`` factor."""

from __future__ import annotations

import pandas as pd

from socialsim.cli import main


def run(tmp_path, name: str, gossip: str) -> str:
    out = tmp_path / name
    code = main(
        [
            "run",
            "align_quickstart",
            "--out",
            str(out),
            "--quiet",
            "--set",
            "episodes=2",
            "--set",
            f"env.kwargs.gossip={gossip}",
        ]
    )
    assert code == 0
    return str(out)


def test_two_runs_are_reported_side_by_side_as_values_of_the_run_factor(tmp_path, capsys):
    on, off = run(tmp_path, "on", "true"), run(tmp_path, "off", "false")
    capsys.readouterr()
    assert main(["report", on, off, "--out", str(tmp_path / "both")]) == 0
    text = capsys.readouterr().out
    assert "experiment: comparison: on vs off" in text
    assert "episodes: 12 done, 0 failed (of 12)" in text
    cells = pd.read_csv(tmp_path / "both" / "cooperation_cells.csv").set_index("cell")
    on_cell, off_cell = "run=on, all seats=image_scoring", "run=off, all seats=image_scoring"
    assert cells.loc[on_cell, "ostracism"] == 1.0 and cells.loc[off_cell, "ostracism"] == 0.0
    assert cells.loc[on_cell, "cooperation_residents"] == 1.0
    page = (tmp_path / "both" / "report.html").read_text()
    assert "comparison: on vs off" in page and page.count("data:image/png;base64,") == 8


def test_a_comparison_names_a_directory_without_an_experiment(tmp_path, capsys):
    on = run(tmp_path, "on", "true")
    capsys.readouterr()
    assert main(["report", on, str(tmp_path / "missing")]) == 2
    assert "missing holds no experiment" in capsys.readouterr().err


def test_the_quickstart_beside_a_gossip_off_run_gives_the_entrant_s_contrast(tmp_path, capsys):
    # the README's example: the quickstart grid (gossip swept) beside a run that fixes it off
    both = str(tmp_path / "both")
    assert main(["run", "align_quickstart", "--out", both, "--quiet", "--set", "episodes=4"]) == 0
    off = run(tmp_path, "off", "false")
    capsys.readouterr()
    assert main(["report", both, off, "--out", str(tmp_path / "cmp")]) == 0
    table = pd.read_csv(tmp_path / "cmp" / "contrasts.csv")
    entrant = table[
        (table["factor"] == "gossip")
        & (table["metric"] == "entrant_return")
        & (table["context"] == "run=both, all seats=image_scoring")
    ].iloc[0]
    assert (entrant["baseline"], entrant["treatment"]) == ("False", "True")
    assert entrant["paired"] and entrant["n_baseline"] == entrant["n_treatment"] == 4
    assert entrant["difference"] < 0 and entrant["ci_low"] <= entrant["difference"]
    assert entrant["ci_high"] < 0  # the entrant loses with gossip, in every resample
    assert entrant["p_value"] == 2 / 16  # exact sign-flip test over 4 seeds: its floor
    assert (table["comparisons"] == len(table)).all()
    # the gossip-off run lines up on the factor it fixed: its cells are gossip=False
    cells = pd.read_csv(tmp_path / "cmp" / "cooperation_cells.csv")
    assert set(cells["cell"]) >= {"run=off, gossip=False, all seats=image_scoring"}
    run_rows = table[(table["factor"] == "run") & (table["metric"] == "entrant_return")]
    assert set(run_rows["context"]) == {
        f"gossip=False, all seats={norm}"
        for norm in ("image_scoring", "simple_standing", "stern_judging")
    }
    assert "contrasts between cells" in (tmp_path / "cmp" / "report.html").read_text()


def test_runs_of_different_game_families_are_refused_with_nothing_written(tmp_path, capsys):
    gossip = run(tmp_path, "on", "true")
    decrypto = str(tmp_path / "dq")
    assert (
        main(["run", "decrypto_quickstart", "--out", decrypto, "--quiet", "--set", "episodes=1"])
        == 0
    )
    capsys.readouterr()
    assert main(["report", gossip, decrypto, "--out", str(tmp_path / "cmp")]) == 2
    error = capsys.readouterr().err
    assert "runs of different game families cannot be compared" in error
    assert "is gossip" in error and "is decrypto" in error
    assert not (tmp_path / "cmp").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dq", "on"]


def test_a_comparison_that_fails_leaves_no_half_written_directory(tmp_path, monkeypatch):
    on, off = run(tmp_path, "on", "true"), run(tmp_path, "off", "false")
    from socialsim.analysis import figures

    def broken(*args, **kwargs):
        raise RuntimeError("a figure failed")

    monkeypatch.setattr(figures, "plot_dynamics", broken)
    import pytest

    with pytest.raises(RuntimeError, match="a figure failed"):
        main(["report", on, off, "--out", str(tmp_path / "cmp")])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["off", "on"]


def test_same_named_cells_of_two_runs_are_never_merged(tmp_path, capsys):
    first, second = str(tmp_path / "a"), str(tmp_path / "b")
    for out in (first, second):
        assert (
            main(["run", "decrypto_quickstart", "--out", out, "--quiet", "--set", "episodes=3"])
            == 0
        )
    capsys.readouterr()
    assert main(["report", first, second, "--out", str(tmp_path / "cmp")]) == 0
    grid = pd.read_csv(tmp_path / "cmp" / "decrypto_competitive_grid.csv")
    assert set(grid["run"]) == {"a", "b"} and set(grid["games"]) == {3}
    outcomes = pd.read_csv(tmp_path / "cmp" / "decrypto_statistics.csv")
    assert set(outcomes["n"]) == {3}
    assert len(set(outcomes["cell"])) == 4  # 2 runs x 2 interceptors
