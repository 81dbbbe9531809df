"""The papers' findings, shown by scripted populations in the bundled experiments: the direction
and the exact values for the bundled seeds (each experiment runs in seconds)."""

from __future__ import annotations

import math

import pytest

from socialsim import records
from socialsim.analysis import report as report_module
from socialsim.analysis import tables, tom
from socialsim.cli import main


def run(name: str, tmp_path, capsys):
    out = tmp_path / name
    assert main(["run", name, "--out", str(out), "--quiet"]) == 0
    capsys.readouterr()
    return records.read_records(out), out


def test_gossip_sustains_cooperation_among_reputation_seekers_and_nowhere_else(tmp_path, capsys):
    recs, _ = run("align_gossip_proxy", tmp_path, capsys)
    report = tables.cooperation_report(recs)
    cells = report["cells"].set_index("cell")
    on = cells.loc["discount=0.99, gossip=True"]
    assert on["cooperation_residents"] == 1.0  # every seeker helps every seeker
    assert on["cooperation_to_entrant_after"] == 0.0  # and nobody helps the exposed entrant
    assert on["cooperation_to_entrant"] == pytest.approx(0.0738095238095238)
    assert on["social_welfare"] == pytest.approx(342.8)
    for cell in ("discount=0.99, gossip=False", "discount=0.1, gossip=True"):
        # without gossip, or when reputation cannot pay (0.1 * 5 < 1), cooperation collapses
        assert cells.loc[cell, "cooperation_residents"] == 0.0
        assert cells.loc[cell, "social_welfare"] == 0.0
    kinds = report["kinds"].set_index(["cell", "kind"])["return"]
    assert kinds[("discount=0.99, gossip=True", "reputation_seeker")] == pytest.approx(42.5375)
    assert kinds[("discount=0.99, gossip=True", "entrant")] == pytest.approx(2.5)
    # the blended rate would have hidden nothing here, but the split names who refused whom
    assert tables.identical_cells(report["episodes"]) == [
        ["discount=0.1, gossip=False", "discount=0.99, gossip=False"]
    ]


def test_image_scoring_punishes_justified_refusals_and_loses_the_cooperation_standing_keeps(
    tmp_path, capsys
):
    recs, out = run("align_norms", tmp_path, capsys)
    report = tables.cooperation_report(recs)
    cells = report["cells"].set_index("cell")
    liar = "agent_3=liar(mode=invert)"
    honest = "agent_3=as others"
    norms = ("image_scoring", "simple_standing", "stern_judging")
    # every seat, the named defectors and cooperator included, gossips under the cell's norm
    assert {r.seats["agent_4"]["norm"] for r in recs} == set(norms)
    assert tables.identical_cells(report["episodes"]) == []
    # the classic result: standing and stern judging sustain cooperation, image scoring does not
    cooperation = {n: cells.loc[f"norm={n}, {honest}", "cooperation_residents"] for n in norms}
    assert cooperation == pytest.approx(
        {
            "image_scoring": 149 / 576,
            "simple_standing": 0.35381944444444446,
            "stern_judging": 0.39652777777777776,
        }
    )
    welfare = {n: cells.loc[f"norm={n}, {honest}", "social_welfare"] for n in norms}
    assert welfare == pytest.approx(
        {"image_scoring": 298.0, "simple_standing": 407.6, "stern_judging": 456.8}
    )
    kinds = report["kinds"].set_index(["cell", "kind"])["return"]
    discriminators = {n: kinds[(f"norm={n}, {honest}", "norm_discriminator")] for n in norms}
    assert discriminators == pytest.approx(
        {"image_scoring": 36.65, "simple_standing": 62.925, "stern_judging": 59.85}
    )
    # stern judging praises a defector's refusal of a bad agent, and the defectors profit
    defectors = {n: kinds[(f"norm={n}, {honest}", "norm_defector")] for n in norms}
    assert defectors == pytest.approx(
        {"image_scoring": 25.375, "simple_standing": 26.5, "stern_judging": 47.625}
    )
    # a liar costs the discriminators under every norm, and lowers reputation accuracy
    for n in norms:
        assert kinds[(f"norm={n}, {liar}", "norm_discriminator")] < discriminators[n]
        assert (
            cells.loc[f"norm={n}, {liar}", "reputation_accuracy"]
            < cells.loc[f"norm={n}, {honest}", "reputation_accuracy"]
        )
    assert cells.loc[f"norm=image_scoring, {honest}", "reputation_accuracy"] == 1.0
    assert cells.loc[f"norm=simple_standing, {liar}", "reputation_accuracy"] == pytest.approx(
        0.823105, abs=1e-6
    )
    assert "identical cells" not in report_module.report(out, write_files=False)


def test_the_quickstart_entrant_is_ostracised_with_gossip_and_profits_without(tmp_path, capsys):
    recs, _ = run("align_quickstart", tmp_path, capsys)
    report = tables.cooperation_report(recs)
    cells = report["cells"].set_index("cell")
    for norm in ("image_scoring", "simple_standing", "stern_judging"):
        on, off = (cells.loc[f"gossip={g}, all seats={norm}"] for g in (True, False))
        # the residents never stop helping each other: gossip does not lower cooperation
        assert on["cooperation_residents"] == off["cooperation_residents"] == 1.0
        assert on["ostracism"] == 1.0 and off["ostracism"] == 0.0
        assert on["cooperation_to_entrant"] == pytest.approx(0.1148, abs=5e-5)
    kinds = report["kinds"].set_index(["cell", "kind"])["return"]
    assert kinds[("gossip=True, all seats=image_scoring", "entrant")] == 5.0
    assert kinds[("gossip=False, all seats=image_scoring", "entrant")] == 48.0


def test_embedding_teams_survive_random_interceptors_where_random_teams_never_do(tmp_path, capsys):
    recs, _ = run("decrypto_embedding_vs_random", tmp_path, capsys)
    grid = tom.cooperative_grid(recs)
    assert grid[("glove", "glove")].mean == 0.0  # no miscommunication loss
    for team in (("decrypto_random", "decrypto_random"), ("glove", "decrypto_random")):
        assert grid[team].mean == 1.0
    assert grid[("decrypto_random", "glove")].mean == 1.0
    glove = [r for r in recs if tom.agent_label(r.seats["encoder"]) == "glove"]
    glove = [r for r in glove if tom.agent_label(r.seats["decoder"]) == "glove"]
    assert tom.outcomes(glove)["survived"] == 32
    assert tom.outcomes(glove)["interception_rate"] == pytest.approx(17.1875)
    random_team = [r for r in recs if r.seats["encoder"]["kind"] == "decrypto_random_encoder"]
    assert sum(tom.outcomes(random_team)[e] for e in ("survived",)) == 0
    assert not math.isnan(grid[("glove", "glove")].avg_turns)
    assert grid[("glove", "glove")].avg_turns == 8.0
