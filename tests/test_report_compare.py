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
    assert "comparison: on vs off" in page and page.count("data:image/png;base64,") == 7


def test_a_comparison_names_a_directory_without_an_experiment(tmp_path, capsys):
    on = run(tmp_path, "on", "true")
    capsys.readouterr()
    assert main(["report", on, str(tmp_path / "missing")]) == 2
    assert "missing holds no experiment" in capsys.readouterr().err
