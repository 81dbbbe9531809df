"""The log's index (socialsim.log_index): an evolution run reruns from it without parsing a line
it vouches for, and believes it only for the bytes it was written from: a record edited in
place, a line appended after it, a log cut short or an index that is not one are read and
checked as if there were no index."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path

import pytest
from test_evolution_experiment import SMALL

import socialsim
from socialsim import log_index, record_checks, records
from socialsim.records import EPISODES, REJECTED, read_records


@pytest.fixture(scope="module")
def whole(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("whole") / "out"
    socialsim.run(SMALL, out)
    return out


@pytest.fixture
def checked(monkeypatch) -> list[dict]:
    """Every line the schema check sees (each line parsed, not taken from the index)."""
    seen: list[dict] = []
    problem = record_checks.problem
    monkeypatch.setattr(record_checks, "problem", lambda data: seen.append(data) or problem(data))
    return seen


def copy_run(whole: Path, to: Path, index: bool = True) -> Path:
    to.mkdir()
    names = [records.MANIFEST, EPISODES, *([log_index.INDEX] if index else [])]
    for name in names:
        (to / name).write_bytes((whole / name).read_bytes())
    return to


def contents(directory: Path) -> list[str]:
    return sorted(record.content() for record in read_records(directory))


def lines(directory: Path) -> list[bytes]:
    return (directory / EPISODES).read_bytes().splitlines(keepends=True)


def rejected(directory: Path) -> list[tuple[int, str]]:
    held = (directory / REJECTED).read_text().splitlines()
    return [(entry["line"], entry["reason"]) for entry in map(json.loads, held)]


def test_a_finished_evolution_run_reruns_from_its_index_parsing_no_line(tmp_path, whole, checked):
    out = copy_run(whole, tmp_path / "out")
    again = socialsim.run(SMALL, out)
    assert (again.total, again.ran) == (16, 0)
    assert checked == []
    assert contents(out) == contents(whole)


def test_the_index_holds_a_head_of_every_line_and_the_hash_of_the_log(whole):
    header, _, heads = (whole / log_index.INDEX).read_bytes().partition(b"\n")
    info = json.loads(header)
    log = (whole / EPISODES).read_bytes()
    assert (info["size"], info["lines"]) == (len(log), 16)
    assert info["sha256"] == hashlib.sha256(log).hexdigest()
    kept = json.loads(heads)
    assert [(h["cell"], h["episode"]) for h in kept] == [
        (r["cell"], r["episode"]) for r in map(json.loads, log.splitlines())
    ]
    fields = {*record_checks.REQUIRED, "status", "error", "returns", "summary", "messages"}
    assert set(kept[0]) == fields
    assert set(kept[0]["summary"]) == {"agents", "resources"}


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("returns", None, "returns: must be an object of numbers, got null"),
        ("seats", 5, "seats: must be an object of seat objects, got 5"),
    ],
)
def test_a_record_edited_in_place_after_the_index_is_set_aside_and_played_again(
    tmp_path, whole, checked, field, value, reason
):
    out = copy_run(whole, tmp_path / "out")
    held = lines(out)
    edited = {**json.loads(held[5]), field: value}  # generation 1
    (out / EPISODES).write_bytes(
        b"".join([*held[:5], json.dumps(edited).encode() + b"\n", *held[6:]])
    )
    with pytest.warns(records.BadLinesWarning, match=reason):
        again = socialsim.run(SMALL, out)
    assert len(checked) == 16  # the index did not match: every line read and checked
    assert again.ran == 1
    assert rejected(out) == [(6, reason)]
    assert contents(out) == contents(whole)


def test_a_log_whose_bytes_changed_is_read_whole_and_its_index_written_again(
    tmp_path, whole, checked
):
    out = copy_run(whole, tmp_path / "out")
    held = lines(out)
    text = held[3].replace(b'"wall_s":', b'"wall_s": ')  # the same record, other bytes
    (out / EPISODES).write_bytes(b"".join([*held[:3], text, *held[4:]]))
    assert socialsim.run(SMALL, out).ran == 0
    assert len(checked) == 16
    checked.clear()
    assert socialsim.run(SMALL, out).ran == 0
    assert checked == []  # the index was written anew for these bytes


def test_lines_appended_after_the_index_are_parsed_checked_and_set_aside(tmp_path, whole, checked):
    out = copy_run(whole, tmp_path / "out")
    good = json.loads(lines(out)[0])
    mistyped = json.dumps({**good, "episode": 7, "returns": None})
    with open(out / EPISODES, "a") as f:
        f.write(mistyped + "\n" + '{"cell": {"generation": 0}, "epis')  # and a torn last line
    with pytest.warns(records.BadLinesWarning, match="returns: must be an object"):
        again = socialsim.run(SMALL, out)
    assert again.ran == 0
    assert [data["episode"] for data in checked] == [7]  # the 16 indexed lines unread
    assert rejected(out) == [
        (17, "returns: must be an object of numbers, got null"),
        (18, "torn: a last line without its newline"),
    ]
    assert lines(out) == lines(whole)


def test_a_resumed_run_reads_only_the_lines_logged_after_its_index(tmp_path, whole, checked):
    out = tmp_path / "out"
    short = copy.deepcopy(SMALL)
    short["evolution"]["generations"] = 2
    socialsim.run(short, out)  # its index covers generations 0 and 1
    generation_2 = [line for line in lines(whole) if json.loads(line)["cell"]["generation"] == 2]
    with open(out / EPISODES, "ab") as f:  # logged by a run killed before it wrote the index
        f.write(b"".join(generation_2))
    checked.clear()
    resumed = socialsim.run(SMALL, out)
    assert resumed.ran == 4  # generation 3
    assert [data["cell"]["generation"] for data in checked] == [2] * 4
    assert contents(out) == contents(whole)


@pytest.mark.parametrize(
    "index",
    [b"", b"not json\n[]", b'{"format": 1}\n[]', None],
    ids=["empty", "garbage", "a header without fields", "cut to the log's half"],
)
def test_an_index_that_is_not_one_is_passed_over(tmp_path, whole, index):
    out = copy_run(whole, tmp_path / "out")
    if index is None:  # the log cut short after its index was written
        (out / EPISODES).write_bytes(b"".join(lines(whole)[:8]))
    else:
        (out / log_index.INDEX).write_bytes(index)
    again = socialsim.run(SMALL, out)
    assert again.ran == (8 if index is None else 0)
    assert contents(out) == contents(whole)


def test_strategy_texts_a_generation_is_born_of_are_taken_from_the_index(tmp_path, checked):
    from socialsim.envs.culture.protocol import strategy_texts
    from test_culture_evolution import contents as replies_aside
    from test_culture_evolution import small

    from socialsim.config import load
    from socialsim.testing.culture_policies import CulturePolicy
    from socialsim.testing.llm_server import ScriptedChatServer

    with ScriptedChatServer(policy=CulturePolicy()) as server:
        first = load("llm_cultural_evolution", small(server.url, generations=1))
        socialsim.run(first, tmp_path / "grown")  # its index holds generation 0
        checked.clear()
        grown = load("llm_cultural_evolution", small(server.url, generations=2))
        assert socialsim.run(grown, tmp_path / "grown").ran == 1
        assert checked == []  # generation 1 was born of generation 0's heads alone
        socialsim.run(grown, tmp_path / "whole")
    assert replies_aside(tmp_path / "grown") == replies_aside(tmp_path / "whole")
    parent, child = sorted(read_records(tmp_path / "grown"), key=lambda r: r.cell["generation"])
    texts = strategy_texts(parent.messages)  # read from the whole record
    survivors = {seat: spec for seat, spec in child.seats.items() if spec["parent"] == seat}
    assert len(survivors) == 2
    assert {seat: spec["strategy"] for seat, spec in survivors.items()} == {
        seat: texts[seat] for seat in survivors
    }
