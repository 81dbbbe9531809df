"""One statistical convention in every table: the episode (seed) is the unit of replication,
per-agent measures are averaged within an episode first, SE = sample SD (ddof 1) / sqrt(n);
contrasts between cells with a seeded bootstrap interval and a permutation test."""

import math

import numpy as np
import pandas as pd
import pytest

from socialsim.analysis import contrasts, stats, tables
from socialsim.records import EpisodeRecord


def _record(episode: int, returns: dict[str, float], cell=None) -> EpisodeRecord:
    return EpisodeRecord(
        experiment="x",
        cell=cell or {},
        episode=episode,
        seed=episode,
        env_id="matching_pennies_v0",
        env_kwargs={},
        form="parallel",
        seats={a: {"kind": "k"} for a in returns},
        returns=returns,
    )


def test_a_kind_s_return_is_averaged_within_each_episode_then_se_over_episodes():
    # five seats of one kind in two episodes: agent-episodes would give n = 10
    recs = [
        _record(0, {f"a{i}": float(v) for i, v in enumerate([1, 2, 3, 4, 5])}),
        _record(1, {f"a{i}": float(v) for i, v in enumerate([3, 4, 5, 6, 7])}),
    ]
    table = tables.returns_table(recs)
    row = table.iloc[0]
    assert row["episodes"] == 2 and row["mean"] == 4.0
    assert row["sem"] == pytest.approx(np.std([3.0, 5.0], ddof=1) / math.sqrt(2))  # 1.0


def test_sem_is_the_sample_sd_over_root_n():
    assert stats.sem([1.0, 2.0, 3.0, 4.0]) == pytest.approx(np.std([1, 2, 3, 4], ddof=1) / 2)
    assert math.isnan(stats.sem([1.0]))


def test_a_paired_contrast_enumerates_every_sign_pattern_of_up_to_14_seeds():
    base = {s: 0.0 for s in range(6)}
    treated = {s: 1.0 + 0.1 * s for s in range(6)}
    row = stats.contrast(base, treated)
    assert row["paired"] and row["difference"] == pytest.approx(1.25)
    assert row["p_value"] == 2 / 64  # only the observed signs and their mirror are as extreme
    assert row["ci_low"] <= 1.25 <= row["ci_high"]
    assert stats.contrast(base, treated) == row  # seeded: the same values, the same row


def test_an_unpaired_contrast_shuffles_the_labels_and_equal_cells_give_p_1():
    row = stats.contrast({0: 1.0, 1: 2.0, 2: 3.0}, {10: 1.0, 11: 2.0, 12: 3.0})
    assert not row["paired"] and row["difference"] == 0.0 and row["p_value"] == 1.0


def _gossip_by_norm(**extra_metrics) -> pd.DataFrame:
    rows = []
    for gossip in (True, False):
        for norm in ("a", "b"):
            for seed in range(4):
                score = float(seed) + (2.0 if gossip else 0.0)
                rows.append(
                    {
                        "cell.env.kwargs.gossip": gossip,
                        "cell.norm": norm,
                        "seed": seed,
                        "fingerprint": f"{gossip}{norm}{seed}",
                        "score": score,
                        **{name: rule(score, seed) for name, rule in extra_metrics.items()},
                    }
                )
    return pd.DataFrame(rows)


def test_contrasts_hold_the_other_factors_fixed_and_state_the_comparisons():
    table = contrasts.contrasts(_gossip_by_norm(), ["score"])
    gossip = table[table["factor"] == "gossip"]
    assert list(gossip["context"]) == ["norm=a", "norm=b"]
    # no grid given: the values in natural order, false first
    assert (gossip["baseline"] == "False").all() and (gossip["difference"] == 2.0).all()
    assert (gossip["p_value"] == 2 / 16).all()
    norm = table[table["factor"] == "norm"]
    assert (norm["difference"] == 0.0).all() and (norm["p_value"] == 1.0).all()
    assert (table["comparisons"] == 4).all()
    # Holm over the 4: p = 1/8, 1/8, 1, 1 -> 4/8, max(3/8, 4/8), 1, 1
    assert list(table["p_holm"]) == [0.5, 0.5, 1.0, 1.0]


def test_the_contrasts_baseline_is_the_files_first_grid_value():
    grid = {"env.kwargs.gossip": [True, False], "norm": ["b", "a"]}
    table = contrasts.contrasts(_gossip_by_norm(), ["score"], grid)
    gossip = table[table["factor"] == "gossip"]
    assert (gossip["baseline"] == "True").all() and (gossip["treatment"] == "False").all()
    assert (gossip["difference"] == -2.0).all()
    norm = table[table["factor"] == "norm"]
    assert (norm["baseline"] == "b").all() and (norm["treatment"] == "a").all()


def test_metrics_that_rescale_another_share_its_row_naming_them_all():
    frame = _gossip_by_norm(
        copy=lambda score, seed: score,
        welfare=lambda score, seed: 3 * score + 1,
        squared=lambda score, seed: score**2,
    )
    table = contrasts.contrasts(frame, ["score", "copy", "welfare", "squared"])
    gossip = table[(table["factor"] == "gossip") & (table["context"] == "norm=a")]
    assert list(gossip["metric"]) == ["score = copy = welfare / 3", "squared"]
    assert list(gossip["difference"]) == [2.0, 4 * 1.5 + 4]  # (s + 2)^2 - s^2 = 4 s + 4
    norm = table[table["factor"] == "norm"]  # equal cells: squared is score's rescaling nowhere
    assert list(norm["metric"]) == ["score = copy = welfare / 3", "squared"] * 2
    assert (table["comparisons"] == 8).all()  # 2 factors x 2 contexts x 2 rows


def test_holm_multiplies_the_ith_smallest_of_m_by_m_minus_i_plus_1_keeping_the_order():
    adjusted = stats.holm([0.01, 0.04, 0.03, math.nan, 0.5])
    assert adjusted[:3].tolist() == pytest.approx([0.04, 0.09, 0.09])
    assert math.isnan(adjusted[3]) and adjusted[4] == 0.5
    assert stats.holm([0.6, 0.9]).tolist() == [1.0, 1.0]


def test_a_share_of_seeds_has_the_exact_clopper_pearson_interval():
    # the beta quantiles Beta(0.025; 2, 9) and Beta(0.975; 3, 8), as scipy gives them
    assert stats.binomial_ci(2, 10) == pytest.approx((0.0252107263, 0.5560954623), abs=1e-9)
    assert stats.binomial_ci(0, 10) == pytest.approx((0.0, 1 - 0.025 ** (1 / 10)), abs=1e-9)
    assert stats.binomial_ci(10, 10) == pytest.approx((0.025 ** (1 / 10), 1.0), abs=1e-9)
    assert all(math.isnan(v) for v in stats.binomial_ci(0, 0))


def test_a_cell_whose_games_are_all_the_same_is_one_replicate_with_no_se():
    frame = pd.DataFrame(
        {
            "cell.x": ["a"] * 3,
            "cell": ["x=a"] * 3,
            "episode": [0, 1, 2],
            "fingerprint": ["same"] * 3,
            "score": [1.0, 1.0, 1.0],
        }
    )
    row = tables._mean_and_se(frame, ["cell"]).iloc[0]
    assert row["n"] == 3 and row["replicates"] == 1
    assert math.isnan(row["score_se"]) and math.isnan(row["score_ci_low"])
