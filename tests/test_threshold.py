"""The gossip reach q* above which discriminators out-earn defectors: the crossing rule, the
good-standing bound, and what the society measures beside q = c/b."""

from __future__ import annotations

import math

import numpy as np
import pytest

from socialsim.society import threshold as th

Q = [0.0, 0.1, 0.2, 0.3, 0.4]


def test_q_star_is_where_the_difference_turns_positive_for_good_interpolated():
    assert th.crossing(np.array([-2.0, -1.0, 1.0, 2.0, 3.0]), Q) == pytest.approx(0.15)
    # positive at 0.1, then not at 0.2: only the last turn counts
    assert th.crossing(np.array([-1.0, 1.0, -1.0, 3.0, 4.0]), Q) == pytest.approx(0.225)
    assert th.crossing(np.array([-1.0, 1.0, -1.0, 3.0, 4.0]), Q, first=True) == pytest.approx(0.05)
    assert th.crossing(np.array([-1.0, -1.0, -1.0, -3.0, -4.0]), Q, first=True) == math.inf
    assert th.crossing(np.array([1.0, 1.0, 1.0, 1.0, 1.0]), Q) == 0.0
    assert th.crossing(np.array([-3.0, -2.0, -1.0, 0.5, 0.0]), Q) == math.inf


def test_one_play_serves_every_c_over_b_through_the_helps_differences():
    received = np.array([[0.0, 1.0, 2.0, 3.0, 4.0]] * 2)
    given = np.array([[5.0, 5.0, 5.0, 5.0, 5.0]] * 2)
    # received - r * given > 0 from q where received = 5 r: r = 0.4 -> q = 0.2 on this line
    assert th.threshold(received, given, Q, 0.4) == pytest.approx(0.2)  # 0 at 0.2, then > 0
    assert th.threshold(received, given, Q, 0.5) == pytest.approx(0.25)
    assert list(th.break_even(received, given)) == [0.0, 0.2, 0.4, 0.6, 0.8]


def test_the_good_standing_bound_is_c_over_b_for_rare_defectors():
    assert th.good_standing_threshold(0.2, 0.1) == pytest.approx(0.2 / 0.92)
    assert th.good_standing_threshold(0.5, 0.5) == pytest.approx(2 / 3)
    assert th.good_standing_threshold(0.2, 1e-9) == pytest.approx(0.2)


def test_a_defector_share_outside_0_and_1_is_refused():
    with pytest.raises(ValueError, match="defectors: must be a share in"):
        th.population("stern_judging", 1.0, 100)


def test_stern_judging_needs_more_reach_than_image_scoring_and_both_more_than_c_over_b():
    q = np.round(np.linspace(0.0, 1.0, 11), 2)
    kwargs = {"agents": 40, "replicates": 8, "rounds": 100}
    image = th.play_reach("image_scoring", 0.1, q, **kwargs)
    stern = th.play_reach("stern_judging", 0.1, q, **kwargs)
    assert 0.2 < th.threshold(*image, q, 0.2) < th.threshold(*stern, q, 0.2) < 0.4
    low, high = th.threshold_interval(*stern, q, 0.2, resamples=200)
    assert low <= th.threshold(*stern, q, 0.2) <= high
    # half the population defecting: stern judges lose at c/b = 0.5 whatever the reach
    assert th.threshold(*th.play_reach("stern_judging", 0.5, q, **kwargs), q, 0.5) == math.inf
