"""The papers' figures, one command each: Decrypto's Figure 3 with the baselines and an LLM in
one experiment (played here against the scripted test server)."""

from __future__ import annotations

import tomllib
from importlib import resources

import pandas as pd
import pytest

import socialsim
from socialsim import config
from socialsim.analysis import tom
from socialsim.cli import main
from socialsim.testing.decrypto_policies import DecryptoPolicy

KEY_ENV = "SOCIALSIM_FIGURE3_TEST_KEY"


def test_figure3_crosses_baselines_and_an_llm_in_every_seat_each_cell_as_labelled(monkeypatch):
    monkeypatch.setenv("SOCIALSIM_MODEL", "openai/test-model")
    experiment = config.load("llm_decrypto_figure3")
    assert len(experiment.cells) == 12
    teams = set()
    for spec in experiment.specs()[:: experiment.config["episodes"]]:
        labels = {seat: tom.agent_label(agent) for seat, agent in spec.seats.items()}
        for seat, agent in spec.seats.items():
            assert agent == spec.cell[f"seats.{seat}"]  # the cell plays what its label names
        if labels["encoder"] == labels["decoder"]:
            teams.add((labels["encoder"], labels["interceptor"]))
    llm = "test-model(prompt_style=plain)"
    assert teams == {
        (team, eve) for team in ("glove", llm) for eve in ("glove", "decrypto_random", llm)
    }


@pytest.mark.slow
def test_figure3_plays_and_reports_both_grids_in_one_run(tmp_path, llm_server, monkeypatch, capsys):
    from socialsim.analysis import decrypto_figures, figure_style

    problems = {}
    save = figure_style.save

    def checked(figure, path):
        problems[path.stem] = figure_style.layout_problems(figure)
        return save(figure, path)

    monkeypatch.setattr(decrypto_figures, "save", checked)
    monkeypatch.setenv(KEY_ENV, "sk-dummy-for-the-test-server")
    llm_server.policy = DecryptoPolicy()
    text = (resources.files("socialsim.experiments") / "llm_decrypto_figure3.toml").read_text()
    table = tomllib.loads(text.replace("${SOCIALSIM_MODEL:-openai/gpt-4o-mini}", "openai/test"))
    for values in table["grid"].values():
        for value in values:
            if "model" in value:
                value["model"].update(
                    api_base=llm_server.url, api_key_env=KEY_ENV, cache=False, max_retries=0
                )
    table["episodes"] = 2
    out = tmp_path / "figure3"
    results = socialsim.run(table, out=str(out))
    assert results.total == 24 and not results.failed
    assert main(["report", str(out)]) == 0
    capsys.readouterr()
    competitive = pd.read_csv(out / "decrypto_competitive_grid.csv")
    assert len(competitive) == 6 and set(competitive["games"]) == {2}
    cooperative = pd.read_csv(out / "decrypto_cooperative_grid.csv")
    assert len(cooperative) == 12
    for stem in ("decrypto_competitive", "decrypto_cooperative"):
        assert all((out / f"{stem}.{fmt}").is_file() for fmt in ("png", "pdf", "svg"))
        assert problems[stem] == []
