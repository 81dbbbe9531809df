"""Ratings against the frozen reference pool: the Bradley–Terry fit and its bootstrap, the pool
fitted as entrants and every member recovering its own rating, held-out log-loss and
per-opponent rates, reading an entrant's SPEC, `socialsim rate` in Decrypto and the donation game
(through a subprocess, a few games per matchup), and the ratings file the leaderboard reads."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from socialsim.config import ConfigError
from socialsim.rating import entrant, held_out, leaderboard, model, play, pool, scores
from socialsim.testing import cli

# -- the model ------------------------------------------------------------------------------------


def test_map_rating_balances_the_evidence_against_the_prior():
    # 30 wins and 10 losses against a frozen 0: the MAP solves C * sum(y - p) = r / sd^2
    matches = [model.Match(("x",), ("pool",), 1.0)] * 30 + [
        model.Match(("x",), ("pool",), 0.0)
    ] * 10
    r = model.fit(matches, frozen={"pool": 0.0})["x"]
    c = math.log(10) / model.SCALE
    p = 1 / (1 + 10 ** (-r / model.SCALE))
    assert c * (30 - 40 * p) == pytest.approx(r / model.PRIOR_SD**2, abs=1e-12)
    # below the prior-free estimate 400 log10(3) = 190.8, pulled towards 0
    assert 150 < r < 400 * math.log10(3)


def test_a_team_is_the_sum_of_its_members():
    # the encoder is frozen at 100; the decoder is fitted: the team wins half its games against
    # an interceptor frozen at 300, so encoder + decoder ~ 300 (the prior pulls it a little)
    matches = [model.Match(("enc", "dec"), ("int",), float(i % 2)) for i in range(400)]
    r = model.fit(matches, frozen={"enc": 100.0, "int": 300.0})["dec"]
    assert 100 + r == pytest.approx(300, abs=15)


def test_fit_one_for_each_bootstrap_weighting_agrees_with_the_full_fit():
    rng = np.random.default_rng(3)
    matches = [
        model.Match(("x", "a"), ("b",), float(rng.random() < 0.6), group=i % 8) for i in range(80)
    ]
    frozen = {"a": 50.0, "b": -20.0}
    weights = rng.integers(0, 3, size=(5, len(matches))).astype(float)
    many = model.fit_one(matches, "x", frozen, weights)
    for row, value in zip(weights, many, strict=True):
        assert model.fit(matches, frozen, weights=row)["x"] == pytest.approx(value, abs=1e-6)


def test_bootstrap_resamples_are_seeded_and_draw_every_seed_index_n_times():
    first, again = model.resample_counts(32, seed=7), model.resample_counts(32, seed=7)
    assert np.array_equal(first, again)
    assert not np.array_equal(first, model.resample_counts(32, seed=8))
    assert first.shape == (model.RESAMPLES, 32) and set(first.sum(axis=1)) == {32.0}


def test_cluster_interval_widens_the_percentile_distances_for_few_clusters():
    values = np.linspace(-1.0, 1.0, 10001)  # percentiles -0.95 and 0.95
    widen = math.sqrt(18 / 17) * 2.1098156 / 1.9599640  # t(0.975, 17) / z(0.975): 1.1077
    low, high = model.interval(values, 0.0, clusters=18)
    assert (low, high) == (
        pytest.approx(-0.95 * widen, abs=1e-5),
        pytest.approx(0.95 * widen, abs=1e-5),
    )
    # around a point off the middle, each side keeps its own distance
    assert model.interval(values, 0.5, 18)[0] == pytest.approx(0.5 - 1.45 * widen, abs=1e-4)


def test_t_quantile_matches_scipy():
    stats = pytest.importorskip("scipy.stats")
    for df in range(1, 60):
        assert model.t_quantile(df) == pytest.approx(stats.t.ppf(0.975, df), abs=3e-3)


def test_a_ratio_and_its_interval_over_the_seeds():
    value, low, high = model.ratio_with_interval(
        np.array([1, 1, 0, 0]), np.array([1, 1, 1, 1]), model.resample_counts(4, 0)
    )
    assert value == 0.5 and 0.0 <= low <= 0.5 <= high <= 1.0


def _round_robin(strengths: dict[str, float], seeds: int, rng) -> list[model.Match]:
    """Every player rated in turn against every other, one game each per seed."""
    out = []
    for group in range(seeds):
        for me, mine in strengths.items():
            for them, theirs in strengths.items():
                if me != them:
                    won = rng.random() < 1 / (1 + 10 ** ((theirs - mine) / 400))
                    out.append(model.Match((me,), (them,), float(won), group))
    return out


def test_a_pool_fitted_as_entrants_gives_each_member_its_own_rating_back_as_an_entrant():
    rng = np.random.default_rng(5)
    matches = _round_robin({"a": 150.0, "b": 0.0, "c": -40.0, "d": -200.0}, 12, rng)
    players, ratings, offset = model.fit_as_entrants(matches)
    frozen = dict(zip(players, ratings[0], strict=True))
    assert sum(frozen.values()) == pytest.approx(0.0, abs=1e-6)  # the offset keeps the mean 0
    for player in players:
        mine = [model.Match((player, "h"), m.b, m.y, m.group) for m in matches if m.a[0] == player]
        others = {p: r for p, r in frozen.items() if p != player} | {"h": offset[0]}
        again = model.fit_one(mine, player, others, np.ones((1, len(mine))))[0]
        assert again == pytest.approx(frozen[player], abs=1e-6)
    assert frozen["a"] > frozen["b"] > frozen["d"]


def test_pool_fit_as_entrants_for_each_bootstrap_weighting_agrees_with_one_fit_each():
    rng = np.random.default_rng(6)
    matches = _round_robin({"a": 100.0, "b": 0.0, "c": -100.0}, 8, rng)
    counts = model.resample_counts(8, seed=1, resamples=4)
    _, many, offsets = model.fit_as_entrants(matches, counts[:, [m.group for m in matches]])
    for row, ratings, offset in zip(counts, many, offsets, strict=True):
        _, one, one_offset = model.fit_as_entrants(matches, row[[m.group for m in matches]])
        assert np.allclose(one[0], ratings) and one_offset[0] == pytest.approx(offset)


def test_one_number_fits_a_transitive_entrant_and_not_one_that_beats_a_and_loses_to_b():
    # against two members frozen at 0: winning 3 of 4 against both is one number (+191);
    # beating a always and losing to b always is not (the rating says 50%, a coin's log-loss)
    steady = [
        model.Match(("x",), (who,), float(game % 4 != 0), group)
        for group in range(6)
        for who in ("a", "b")
        for game in range(4)
    ]
    split = [
        model.Match(("x",), (who,), float(who == "a"), group)
        for group in range(6)
        for who in ("a", "b")
        for _ in range(4)
    ]
    frozen = {"a": 0.0, "b": 0.0}
    fits = held_out.check(steady, "x", frozen)
    assert fits.one_number_fits and fits.log_loss < held_out.COIN
    assert fits.rates == {"a": (0.75, 24), "b": (0.75, 24)}
    apart = held_out.check(split, "x", frozen)
    assert not apart.one_number_fits
    assert apart.log_loss == pytest.approx(held_out.COIN, abs=1e-3)
    # each opponent's rate from the other five seeds, one win and one loss added: 21/22
    assert apart.per_opponent_log_loss == pytest.approx(-math.log(21 / 22))
    assert apart.rates == {"a": (1.0, 24), "b": (0.0, 24)}


# -- the entrant ----------------------------------------------------------------------------------


def test_spec_forms_name_one_agent_or_a_team():
    assert entrant.parse("glove_decoder").spec == {"kind": "glove_decoder"}
    one = entrant.parse('{kind = "glove_encoder", k = 4}')
    assert one.spec == {"kind": "glove_encoder", "k": 4} and one.name == "glove_encoder(k=4)"
    assert entrant.parse('{"kind": "liar", "mode": "invert"}').spec["mode"] == "invert"
    team = entrant.parse("glove_encoder+glove_decoder")
    assert team.spec is None and team.team == {
        "encoder": {"kind": "glove_encoder"},
        "decoder": {"kind": "glove_decoder"},
    }
    assert entrant.parse("policy.zip").spec == {"kind": "rl", "path": "policy.zip"}


def test_spec_from_an_experiment_file_names_its_seat(tmp_path):
    path = tmp_path / "x.toml"
    path.write_text(
        '[seats.encoder]\nkind = "glove_encoder"\n[seats.decoder]\nkind = "glove_decoder"\n'
    )
    assert entrant.parse(str(path), seat="decoder").spec == {"kind": "glove_decoder"}
    assert (
        entrant.parse(str(path), seat="encoder,decoder").team["encoder"]["kind"] == "glove_encoder"
    )
    with pytest.raises(ConfigError, match="--seat: .* names seats decoder, encoder"):
        entrant.parse(str(path))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "SPEC: empty"),
        ("a+b+c", "a team is ENCODER\\+DECODER"),
        ("{k = 4}", "needs a 'kind'"),
        ("{kind = ", "neither a TOML inline table nor JSON"),
    ],
)
def test_a_bad_spec_is_a_config_error_naming_it(text, message):
    with pytest.raises(ConfigError, match=message):
        entrant.parse(text)


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_the_shipped_pools_name_their_version_and_every_decrypto_role(version):
    shipped = pool.load(version)
    assert shipped.version == version
    for role in pool.DECRYPTO_ROLES:
        assert len(shipped.members(role)) >= 3
    for society in shipped.societies():
        assert len(society.seats) == 8
        assert {shipped.disposition(label) for label, _ in society.seats} >= {
            "cooperator",
            "defector",
        }
    with pytest.raises(ConfigError, match="no reference pool 'v0'; shipped: v1, v2"):
        pool.load("v0")


def test_v1_still_loads_and_rates_from_agent_0_against_every_seat_as_it_did():
    v1 = pool.load("v1")
    assert v1.positions == ["agent_0"] and not v1.skips_own_label
    assert v1.entrant_offset("donation") == 0.0 and v1.intervals("donation") == {}
    assert v1.gossip_ratings("donation")["always_defect"] == -187.0
    [first] = play.gossip_matchups(entrant.parse("always_defect"), v1, "donation")[:1]
    assert first.seat == "agent_0" and list(first.seats) == [f"agent_{i}" for i in range(9)]


def test_v2_rates_every_seat_position_with_every_society_after_it_and_states_its_error():
    v2 = pool.load(pool.DEFAULT_VERSION)
    assert v2.version == "v2" and v2.positions == [f"agent_{i}" for i in range(9)]
    matchups = play.gossip_matchups(entrant.parse("always_defect"), v2, "donation")
    assert len(matchups) == 9 * len(v2.societies())
    fourth = next(m for m in matchups if m.seat == "agent_3" and m.role == "simple_standing")
    # the society fills the seats after the entrant's, wrapping round
    assert [fourth.names[f"agent_{i}"] for i in (4, 7, 8, 0, 1, 2)] == [
        "simple_standing", "simple_standing", "always_cooperate", "always_cooperate",
        "always_defect", "always_defect",
    ]  # fmt: skip
    assert list(v2.position_seeds(3, seed=0, episodes=2)) == [6, 7]
    for game in ("donation", "prisoners", "trust"):
        intervals = v2.intervals(game)
        assert set(intervals) == set(v2.gossip_ratings(game))
        for label, rating in v2.gossip_ratings(game).items():
            low, high = intervals[label]
            assert low < rating < high
    assert set(v2.intervals("decrypto")) == set(v2.decrypto_ratings())


def rerate(member: str, game: str, shipped, out, episodes=None) -> tuple[float, float, float]:
    """``socialsim rate MEMBER --game GAME`` on the pool's seeds, in process."""
    spec = next(s for society in shipped.societies() for lbl, s in society.seats if lbl == member)
    who = entrant.Entrant(member, spec=dict(spec))
    episodes, seed = episodes or shipped.gossip["episodes"], shipped.gossip["seed"]
    matchups = play.gossip_matchups(who, shipped, game)
    held = play.play(
        play.blocks(who, game, shipped, episodes, seed, matchups, out), lambda _: None, False
    )
    groups = episodes * len(shipped.positions)
    [rated] = scores.rate_gossip(scores.join(held, matchups, seed), shipped, game, groups, seed)
    return rated.rating


def test_a_v1_rating_still_plays_agent_0_in_one_results_directory(tmp_path):
    rating, low, high = rerate("always_defect", "donation", pool.load("v1"), tmp_path, 2)
    assert (tmp_path / "episodes.jsonl").is_file() and not (tmp_path / "agent_0").exists()
    # the value the v1 code gave for `rate always_defect --game donation --episodes 2`
    assert rating == pytest.approx(121.437565, abs=1e-5)
    assert low - 1e-9 <= rating <= high + 1e-9


MEMBERS = sorted(pool.load("v2").gossip_ratings("donation"))


@pytest.mark.slow  # 2-6 s each: the member's 90 games of the pool (9 positions x 5 societies x 2)
@pytest.mark.parametrize("game", ["donation", "prisoners"])
@pytest.mark.parametrize("member", MEMBERS)
def test_every_pool_member_rerated_as_an_entrant_lands_inside_its_frozen_interval(
    tmp_path, game, member
):
    # v1 did not: always_defect in donation was rated -104 on its 16 seeds against -187.0
    shipped = pool.load("v2")
    frozen, intervals = shipped.gossip_ratings(game)[member], shipped.intervals(game)[member]
    rating, low, high = rerate(member, game, shipped, tmp_path)
    assert intervals[0] <= rating <= intervals[1]
    # the same games as the pool's own, so the same rating (the file keeps one decimal)
    assert rating == pytest.approx(frozen, abs=0.25)
    assert low < frozen < high


# -- socialsim rate -------------------------------------------------------------------------------


def rate(tmp_path, *args, out="out"):
    return cli.run(
        "rate", *args, "--out", str(tmp_path / out), "--ratings", str(tmp_path / "ratings.jsonl"),
        "--quiet", cwd=tmp_path,
    )  # fmt: skip


def entries(tmp_path) -> list[dict]:
    return leaderboard.read(tmp_path / "ratings.jsonl")


def rating_of(tmp_path, name, role):
    return next(e for e in entries(tmp_path) if e["entrant"] == name and e["role"] == role)


@pytest.mark.slow
def test_glove_decoder_and_glove_team_rate_above_the_random_ones_with_intervals_apart(tmp_path):
    for spec in (
        "glove_decoder",
        "decrypto_random_guesser",
        "glove_encoder+glove_decoder",
        "decrypto_random_encoder+decrypto_random_guesser",
    ):
        done = rate(tmp_path, spec, "--game", "decrypto", "--episodes", "4", out=spec)
        assert done.returncode == 0, done.stderr
    glove = rating_of(tmp_path, "glove_decoder", "decoder")
    random = rating_of(tmp_path, "decrypto_random_guesser", "decoder")
    assert glove["rating"][1] > random["rating"][2]  # the low end above the other's high end
    assert glove["scores"]["win_rate"][1] > random["scores"]["win_rate"][2]
    team = rating_of(tmp_path, "glove_encoder+glove_decoder", "team")
    random_team = rating_of(tmp_path, "decrypto_random_encoder+decrypto_random_guesser", "team")
    assert team["rating"][1] > random_team["rating"][2]
    assert {e["pool"] for e in entries(tmp_path)} == {"v2"}


@pytest.mark.slow
def test_glove_decoder_is_rated_as_decoder_only_and_says_why_not_as_interceptor(tmp_path):
    done = rate(tmp_path, "glove_decoder", "--game", "decrypto", "--episodes", "2")
    assert done.returncode == 0, done.stderr
    assert (
        "not rated as interceptor: it plays only seat decoder: it reads what that seat alone is "
        "shown" in done.stderr
    )
    assert "KeyError" not in done.stderr
    assert [e["role"] for e in entries(tmp_path)] == ["decoder"]
    with (tmp_path / "out" / "crossplay.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    # every pool encoder x every pool interceptor, two games each
    shipped = pool.load("v2")
    assert len(rows) == len(shipped.members("encoder")) * len(shipped.members("interceptor"))
    assert {row["games"] for row in rows} == {"2"}
    assert (
        "decoder  " in done.stdout and "pool v2" in done.stdout and "Bradley-Terry" in done.stdout
    )
    assert "held-out log-loss" in done.stdout and "(a coin: 0.693" in done.stdout
    assert "pool v2's own ratings carry sampling error: 95% intervals of +-" in done.stdout


@pytest.mark.slow
def test_two_runs_with_one_seed_print_identical_ratings_and_a_rerun_resumes(tmp_path):
    first = rate(
        tmp_path, "stern_judging", "--game", "donation", "--episodes", "2", "--seed", "5", out="a"
    )
    second = rate(
        tmp_path, "stern_judging", "--game", "donation", "--episodes", "2", "--seed", "5", out="b"
    )
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    assert first.stdout == second.stdout
    assert "2 games per matchup in each of 9 seat positions, seeds 5-22" in first.stdout
    again = rate(
        tmp_path, "stern_judging", "--game", "donation", "--episodes", "2", "--seed", "5", out="a"
    )
    assert again.stdout == first.stdout and "0 to run" in again.stderr
    # the rerun replaced its entry rather than adding one
    assert len(entries(tmp_path)) == 1
    # one ordinary results directory per seat position
    assert sorted(p.name for p in (tmp_path / "a").iterdir() if p.is_dir()) == [
        f"agent_{i}" for i in range(9)
    ]
    report = cli.run("report", str(tmp_path / "a" / "agent_4"), "--no-files", cwd=tmp_path)
    assert report.returncode == 0, report.stderr


@pytest.mark.slow
def test_always_cooperate_cooperates_but_never_refuses_and_a_norm_does_both(tmp_path):
    for kind in ("always_cooperate", "simple_standing"):
        done = rate(tmp_path, kind, "--game", "donation", "--episodes", "2", out=kind)
        assert done.returncode == 0, done.stderr
    naive = rating_of(tmp_path, "always_cooperate", "donation")["scores"]
    norm = rating_of(tmp_path, "simple_standing", "donation")["scores"]
    assert naive["cooperates_with_cooperators"][0] == 1.0
    assert naive["refuses_defectors"][0] == 0.0 and naive["exploits"][0] == 0.0
    assert norm["cooperates_with_cooperators"][0] > 0.7 and norm["refuses_defectors"][0] > 0.7


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["glove_decoder", "--game", "chess"], "--game: 'chess' is not rated by pool v2; allowed: decrypto, donation, prisoners, trust"),
        (["glove_decodr", "--game", "decrypto"], "SPEC.kind: unknown agent kind 'glove_decodr' (did you mean 'glove_decoder'"),
        (["glove_decoder", "--game", "donation"], "SPEC: glove_decoder cannot play donation: it plays decrypto games"),
        (["always_cooperate", "--game", "decrypto", "--pool", "v9"], "--pool: no reference pool 'v9'"),
        (["glove_decoder", "--game", "decrypto", "--episodes", "0"], "--episodes: must be >= 1, got 0"),
        (['{kind = "glove_encoder", k = 0}', "--game", "decrypto"], "SPEC: k: must be an integer >= 1, got 0"),
    ],
)  # fmt: skip
def test_a_bad_rating_request_exits_2_naming_the_field_and_writes_nothing(tmp_path, args, message):
    done = rate(tmp_path, *args)
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "ratings.jsonl").exists()


def test_a_donor_that_cannot_afford_the_cost_has_no_move():
    # agent_0 refuses a cooperator with 5 in hand (a move), then has 0.5 < cost 1 (no move)
    interactions = [
        {"donor": "agent_0", "recipient": "agent_1", "donor_before": 5.0, "action": "defect",
         "tone": None},
        {"donor": "agent_0", "recipient": "agent_1", "donor_before": 0.5, "action": "defect",
         "tone": None},
    ]  # fmt: skip
    record = SimpleNamespace(
        summary={"game": "donation", "cost": 1.0, "interactions": interactions},
        returns={"agent_0": 3.0},
    )
    tally = scores.gossip_counts(record, "agent_0", {"agent_1": "always_cooperate"}, pool.load())
    assert (tally["cooperates_with_cooperators"], tally["cooperates_with_cooperators/"]) == (0, 1)
    assert (tally["exploits"], tally["exploits/"]) == (1, 1)


def test_trust_exchanges_read_as_moves_and_gossip_is_checked_against_them():
    # agent_0 invests 5 in a cooperator (a move), is repaid 10 and praises it (truthful); then,
    # responding, keeps a defector's 5 (a refusal) and calls it out although it trusted (untrue)
    interactions = [
        {"investor": "agent_0", "responder": "agent_1", "investor_before": 5.0,
         "investment": 5.0, "returned": 10.0, "tones": {"agent_0": "praising"}},
        {"investor": "agent_2", "responder": "agent_0", "investor_before": 5.0,
         "investment": 5.0, "returned": 0.0, "tones": {"agent_0": "criticism"}},
        {"investor": "agent_2", "responder": "agent_0", "investor_before": 5.0,
         "investment": 0.0, "returned": 0.0, "tones": {"agent_0": "neutral"}},
    ]  # fmt: skip
    record = SimpleNamespace(
        summary={"game": "trust", "interactions": interactions}, returns={"agent_0": 7.0}
    )
    labels = {"agent_1": "always_cooperate", "agent_2": "always_defect"}
    tally = scores.gossip_counts(record, "agent_0", labels, pool.load("v1"))
    assert (tally["cooperates_with_cooperators"], tally["cooperates_with_cooperators/"]) == (1, 1)
    assert (tally["refuses_defectors"], tally["refuses_defectors/"]) == (
        1,
        1,
    )  # nothing invested: no move
    assert (tally["truthful_gossip"], tally["truthful_gossip/"]) == (1, 2)
    assert tally["return"] == 7.0


@pytest.mark.slow
def test_recorded_games_rate_the_seat_where_its_partners_are_pool_members(tmp_path):
    # games already played (a person's, in the browser, are logged the same way): the decoder
    # seat of a GloVe team against the GloVe interceptor, both pool members
    played = tmp_path / "played"
    run = cli.run(
        "run", "decrypto_quickstart", "--set", "episodes=3", "--out", str(played), "--quiet",
        cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    done = rate(tmp_path, str(played), "--seat", "decoder", "--game", "decrypto", "--name", "ada")
    assert done.returncode == 0, done.stderr
    assert "seat decoder of 6 recorded games" in done.stdout and "0 skipped" in done.stdout
    [rated] = entries(tmp_path)
    assert (rated["entrant"], rated["role"], rated["games"], rated["pool"]) == (
        "ada", "decoder", 6, "v2"
    )  # fmt: skip
    # none of these games had a pool society around the seat
    refused = rate(tmp_path, str(played), "--seat", "decoder", "--game", "donation", out="x")
    assert refused.returncode == 2 and "none of the 6 games" in refused.stderr


# -- the ratings file and the leaderboard ---------------------------------------------------------


def entry(name, rating, game="decrypto", role="decoder", **extra):
    return {
        "entrant": name, "spec": {"kind": name}, "game": game, "role": role, "pool": "v1",
        "model": model.DESCRIPTION, "seed": 0, "episodes": 4, "games": 48,
        "rating": [rating, rating - 50, rating + 50],
        "scores": {"win_rate": [0.5, 0.4, 0.6]}, "results": "x", **extra,
    }  # fmt: skip


def test_a_later_rating_of_the_same_entrant_replaces_the_earlier(tmp_path):
    path = tmp_path / "ratings.jsonl"
    leaderboard.append(path, [entry("a", 10.0), entry("b", 20.0)])
    leaderboard.append(path, [entry("a", 30.0), entry("a", 5.0, role="interceptor")])
    held = {(e["entrant"], e["role"]): e["rating"][0] for e in leaderboard.read(path)}
    assert held == {("a", "decoder"): 30.0, ("b", "decoder"): 20.0, ("a", "interceptor"): 5.0}


def test_leaderboard_writes_a_page_with_intervals_and_the_pool_and_a_csv(tmp_path):
    path = tmp_path / "ratings.jsonl"
    leaderboard.append(path, [entry("a", 10.0), entry("c", 5.0, game="donation", role="donation")])
    done = cli.run("leaderboard", str(path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "leaderboard.html").read_text()
    assert "Reference pool: v1" in text and '<span class="ci">[-40, 60]</span>' in text
    assert "<h2>decrypto</h2>" in text and "<h2>donation</h2>" in text
    with (tmp_path / "leaderboard.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["entrant"], r["rating"], r["rating_low"]) for r in rows] == [
        ("a", "10.0", "-40.0"),
        ("c", "5.0", "-45.0"),
    ]


def test_leaderboard_lists_per_opponent_rates_only_where_one_number_does_not_fit(tmp_path):
    def fit(rating_loss, rates_loss):
        return {
            "held_out_log_loss": rating_loss, "coin_log_loss": 0.693147,
            "per_opponent_log_loss": rates_loss, "one_number_fits": rates_loss >= rating_loss,
            "per_opponent": {"always_defect": [0.9, 40], "simple_standing": [0.2, 40]},
        }  # fmt: skip

    path = tmp_path / "ratings.jsonl"
    leaderboard.append(
        path,
        [
            entry("split", -80.0, game="donation", role="donation", fit=fit(0.691, 0.655)),
            entry("steady", 20.0, game="donation", role="donation", fit=fit(0.640, 0.650)),
        ],
    )
    text = leaderboard.page(leaderboard.read(path))
    assert "vs always_defect: 0.90 (40 games)<br>vs simple_standing: 0.20 (40 games)" in text
    assert text.count("vs always_defect") == 1  # the steady entrant's one number fits
    assert '<td data-value="0.691">0.691</td>' in text
    leaderboard.write_csv(leaderboard.read(path), tmp_path / "board.csv")
    with (tmp_path / "board.csv").open() as handle:
        rows = {r["entrant"]: r for r in csv.DictReader(handle)}
    assert rows["split"]["one_number_fits"] == "False"
    assert rows["split"]["per_opponent"] == "always_defect 0.900; simple_standing 0.200"


def test_leaderboard_of_a_missing_file_exits_2(tmp_path):
    done = cli.run("leaderboard", str(tmp_path / "none.jsonl"), cwd=tmp_path)
    assert done.returncode == 2 and "no ratings file" in done.stderr


def test_ratings_file_lines_are_strict_json(tmp_path):
    path = tmp_path / "ratings.jsonl"
    leaderboard.append(path, [entry("a", 1.0, scores={"truthful_gossip": [None, None, None]})])
    assert json.loads(path.read_text())["scores"]["truthful_gossip"] == [None, None, None]


def test_a_rating_told_where_to_write_appends_its_ratings_there_not_to_the_working_directory():
    import argparse

    from socialsim.rating.command import ratings_file

    out = Path("elsewhere/run")
    told = argparse.Namespace(out=str(out), ratings=None)
    assert ratings_file(told, out) == out / "ratings.jsonl"
    named = argparse.Namespace(out=str(out), ratings="board.jsonl")
    assert ratings_file(named, out) == Path("board.jsonl")
    default = argparse.Namespace(out=None, ratings=None)
    assert ratings_file(default, Path("results/x")) == leaderboard.DEFAULT_FILE
