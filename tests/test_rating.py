"""Ratings against the frozen reference pool: the Bradley–Terry fit and its bootstrap, reading
an entrant's SPEC, `socialsim rate` in Decrypto and the donation game (through a subprocess, a
few games per matchup), and the ratings file the leaderboard reads."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from socialsim.config import ConfigError
from socialsim.rating import entrant, leaderboard, model, pool, scores
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


def test_a_ratio_and_its_interval_over_the_seeds():
    value, low, high = model.ratio_with_interval(
        np.array([1, 1, 0, 0]), np.array([1, 1, 1, 1]), model.resample_counts(4, 0)
    )
    assert value == 0.5 and 0.0 <= low <= 0.5 <= high <= 1.0


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


def test_the_shipped_pool_names_its_version_and_every_decrypto_role():
    shipped = pool.load("v1")
    assert shipped.version == "v1"
    for role in pool.DECRYPTO_ROLES:
        assert len(shipped.members(role)) >= 3
    for society in shipped.societies():
        assert len(society.seats) == 8
        assert {shipped.disposition(label) for label, _ in society.seats} >= {
            "cooperator",
            "defector",
        }
    with pytest.raises(ConfigError, match="no reference pool 'v0'; shipped: v1"):
        pool.load("v0")


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
    assert {e["pool"] for e in entries(tmp_path)} == {"v1"}


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
    shipped = pool.load("v1")
    assert len(rows) == len(shipped.members("encoder")) * len(shipped.members("interceptor"))
    assert {row["games"] for row in rows} == {"2"}
    assert (
        "decoder  " in done.stdout and "pool v1" in done.stdout and "Bradley-Terry" in done.stdout
    )


@pytest.mark.slow
def test_two_runs_with_one_seed_print_identical_ratings_and_a_rerun_resumes(tmp_path):
    first = rate(
        tmp_path, "stern_judging", "--game", "donation", "--episodes", "2", "--seed", "5", out="a"
    )
    second = rate(
        tmp_path, "stern_judging", "--game", "donation", "--episodes", "2", "--seed", "5", out="b"
    )
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    assert first.stdout == second.stdout and "seeds 5-6" in first.stdout
    again = rate(
        tmp_path, "stern_judging", "--game", "donation", "--episodes", "2", "--seed", "5", out="a"
    )
    assert again.stdout == first.stdout and "0 to run" in again.stderr
    # the rerun replaced its entry rather than adding one
    assert len(entries(tmp_path)) == 1
    report = cli.run("report", str(tmp_path / "a"), "--no-files", cwd=tmp_path)
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
        (["glove_decoder", "--game", "chess"], "--game: 'chess' is not rated by pool v1; allowed: decrypto, donation, prisoners, trust"),
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
        "ada", "decoder", 6, "v1"
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
