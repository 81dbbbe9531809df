"""Records checked against their spec, and against the records' schema on every read.

A logged line counts as an episode only if it is a record (every field of its type) and the
record of its key's spec (experiment, seed, env and its options, seats); anything else is set
aside with its reason, and its episode played again. No line that parses as JSON can crash a
reader (``socialsim report``, :func:`socialsim.load`).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from socialsim import records
from socialsim.cli import main
from socialsim.record_checks import FIELDS, problem
from socialsim.results import load, run

PENNIES = ["episodes=3"]  # two cells (env.form) x 3 episodes


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("clean") / "out"
    run("matching_pennies", out=out, overrides=PENNIES)
    return out


def copy(clean: Path, to: Path) -> Path:
    to.mkdir()
    for name in (records.MANIFEST, records.EPISODES):
        (to / name).write_bytes((clean / name).read_bytes())
    return to


def lines(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / records.EPISODES).read_text().splitlines()]


def contents(out: Path) -> dict:
    return {r.key: r.content() for r in records.read_records(out)}


def rejected(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / records.REJECTED).read_text().splitlines()]


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("seed", 999, "seed 999, not its spec's {seed}"),
        ("experiment", "other", 'experiment "other", not its spec\'s "matching_pennies"'),
        ("env_kwargs", {"rounds": 3}, 'env_kwargs {"rounds":3}, not its spec\'s {"rounds":10}'),
        (
            "seats",
            {"matcher": {"kind": "pennies_copycat"}, "mismatcher": {"kind": "pennies_copycat"}},
            "seats",
        ),
    ],
)
def test_a_planted_record_of_another_spec_is_set_aside_and_its_episode_played_again(
    tmp_path, clean, field, value, reason
):
    out = copy(clean, tmp_path / "out")
    held = lines(out)
    planted = {**held[1], field: value, "returns": {"matcher": 1e9, "mismatcher": -1e9}}
    (out / records.EPISODES).write_text(
        "".join(json.dumps(line) + "\n" for line in [held[0], planted, *held[2:]])
    )
    with pytest.warns(records.BadLinesWarning, match="not the record of its spec"):
        again = run("matching_pennies", out=out, overrides=PENNIES)
    assert again.ran == 1 and again.failed == []
    assert contents(out) == contents(clean)  # the planted returns are nowhere
    assert len(lines(out)) == 6
    (aside,) = rejected(out)
    expected = "not the record of its spec: " + reason.replace("{seed}", str(held[1]["seed"]))
    assert aside["line"] == 2 and aside["reason"].startswith(expected)


def test_records_of_another_seed_are_not_adopted_after_the_manifest_is_deleted(tmp_path, clean):
    out = copy(clean, tmp_path / "out")
    (out / records.MANIFEST).unlink()
    with pytest.warns(records.BadLinesWarning, match="6 lines that are not a record"):
        again = run("matching_pennies", out=out, overrides=[*PENNIES, "seed=5"])
    assert again.ran == 6 and again.failed == []
    assert sorted(r.seed for r in records.read_records(out)) == [5, 5, 6, 6, 7, 7]
    assert len(rejected(out)) == 6


#: a value of every JSON type, for every field of a record
VALUES = [None, 5, -1, 1.5, True, "x", [], [1], {}, {"a": "x"}, {"a": {}}, [{}]]


def test_no_line_that_parses_as_json_crashes_a_reader(tmp_path, clean):
    """Every field of a done record set to a value of every JSON type: the line is either a
    record that every reader reads, or skipped by every reader, and a run sets it aside."""
    good = lines(clean)[0]
    mutants = [
        {**good, "episode": 100 + i, field: value}
        for i, (field, value) in enumerate((f, v) for f in FIELDS for v in VALUES)
        if field != "episode"
    ]
    mutants += [{**good, "episode": 100, "steps": [{"turn": 0}]}]
    mutants += [{**good, "episode": 100, "messages": [{"id": 0}]}]
    out = copy(clean, tmp_path / "out")
    with open(out / records.EPISODES, "a") as f:
        for mutant in mutants:
            f.write(json.dumps(mutant) + "\n")
    accepted = [m for m in mutants if problem(m) is None]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", records.BadLinesWarning)
        held = records.read_records(out, include_failed=True)
        frames = load(out, include_failed=True)
    assert len(held) == 6 + len({m["episode"] for m in accepted})
    assert len(frames.episodes) == len(held)
    assert main(["report", str(out), "--no-files"]) == 0
    # the types the issue named are refused by name
    assert problem({**good, "returns": None}) == "returns: must be an object of numbers, got null"
    assert problem({**good, "seats": 5}) == "seats: must be an object of seat objects, got 5"


def test_a_mistyped_line_is_set_aside_by_the_next_run_and_its_episode_played(tmp_path, clean):
    out = copy(clean, tmp_path / "out")
    held = lines(out)
    broken = [held[0], {**held[1], "returns": None}, {**held[2], "seats": 5}, *held[3:]]
    (out / records.EPISODES).write_text("".join(json.dumps(line) + "\n" for line in broken))
    assert main(["report", str(out), "--no-files"]) == 0
    with pytest.warns(records.BadLinesWarning):
        again = run("matching_pennies", out=out, overrides=PENNIES)
    assert again.ran == 2 and contents(out) == contents(clean)
    assert [(a["line"], a["reason"]) for a in rejected(out)] == [
        (2, "returns: must be an object of numbers, got null"),
        (3, "seats: must be an object of seat objects, got 5"),
    ]


#: a small evolution run: 2 replicates, 3 generations (generation g + 1 born of g's records)
EVOLVING = {
    "name": "evolving",
    "episodes": 2,
    "seed": 5,
    "env": {"id": "donation_v0", "kwargs": {"n_agents": 6, "schedule": "random", "rounds": 6}},
    "seats": {
        f"agent_{i}": {"kind": kind}
        for i, kind in enumerate(
            ["always_cooperate"] * 2 + ["always_defect"] * 2 + ["stern_judging"] * 2
        )
    },
    "evolution": {"generations": 3, "mutation": 0.1},
}


@pytest.fixture(scope="module")
def evolved(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("evolved") / "out"
    run(EVOLVING, out=out)
    return out


def generation_1(held: list[dict]) -> int:
    """The line of generation 1's first replicate."""
    return next(
        i
        for i, line in enumerate(held)
        if line["cell"] == {"generation": 1} and not line["episode"]
    )


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("seed", 999, "seed 999, not its spec's {seed}"),
        ("seats", "swapped", "seats {"),
    ],
)
def test_a_planted_record_of_a_later_generation_is_set_aside_and_played_again(
    tmp_path, evolved, field, value, reason
):
    """Generation 1's spec exists only once generation 0 is read: its records are checked
    against it then, and generation 2 is born of the record played again, not of the plant."""
    out = copy(evolved, tmp_path / "out")
    held = lines(out)
    at = generation_1(held)
    if value == "swapped":  # another population: every seat's kind rotated by one
        seats = list(held[at]["seats"].values())
        value = dict(zip(held[at]["seats"], seats[1:] + seats[:1], strict=True))
    returns = dict.fromkeys(held[at]["returns"], 1e9)
    planted = {**held[at], field: value, "returns": returns}
    (out / records.EPISODES).write_text(
        "".join(json.dumps(line) + "\n" for line in [*held[:at], planted, *held[at + 1 :]])
    )
    with pytest.warns(records.BadLinesWarning, match="not the record of its spec"):
        again = run(EVOLVING, out=out)
    assert again.ran == 1 and again.failed == []
    assert contents(out) == contents(evolved)  # every generation as in the clean run
    assert len(lines(out)) == len(held) == 6
    (aside,) = rejected(out)
    expected = "not the record of its spec: " + reason.replace("{seed}", str(held[at]["seed"]))
    assert aside["line"] == at + 1 and aside["reason"].startswith(expected)
    assert json.loads(aside["text"])["returns"] == returns


def test_a_finished_evolution_run_with_no_stranger_rereads_and_plays_nothing(tmp_path, evolved):
    out = copy(evolved, tmp_path / "out")
    again = run(EVOLVING, out=out)
    assert again.ran == 0 and not (out / records.REJECTED).exists()
    assert contents(out) == contents(evolved)


def test_a_stranger_beside_a_line_that_is_no_record_is_set_aside_with_it(tmp_path, evolved):
    """Generation 0's stranger is looked up before its stage sets the scan's bad lines aside:
    the lookup reads a JSON line that is no object (the scan named it bad) and passes it by."""
    out = copy(evolved, tmp_path / "out")
    held = lines(out)
    at = next(i for i, line in enumerate(held) if line["cell"] == {"generation": 0})
    planted = {**held[at], "seed": 999}
    text = [json.dumps(line) for line in [*held[:at], planted, *held[at + 1 :]]]
    (out / records.EPISODES).write_text("\n".join(["[1, 2]", *text]) + "\n")
    with pytest.warns(records.BadLinesWarning):
        again = run(EVOLVING, out=out)
    assert again.ran == 1 and again.failed == []
    assert contents(out) == contents(evolved)
    assert [aside["line"] for aside in rejected(out)] == [1, at + 2]
    assert rejected(out)[1]["reason"].startswith("not the record of its spec: seed 999")
