"""A study's results read like a run's: its games pooled into the study's folder (the treatment
as the cell), so ``socialsim report`` and ``socialsim.load`` read it, and its export as a frame.
The study is played by the study-test driver (8 simulated participants, scripted seats)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import socialsim
from socialsim import records
from socialsim.study import export

EXAMPLE = Path(__file__).parent.parent / "experiments" / "study_donation"


def scripted_study(folder: Path, cross: str = "") -> Path:
    """The example study, both treatments scripted (no chat server), quick to wait and idle;
    with ``cross``, its treatments crossed instead of listed."""
    shutil.copytree(EXAMPLE, folder)
    path = folder / "study.toml"
    text = path.read_text(encoding="utf-8").replace('"game_llm.toml"', '"game_scripted.toml"')
    text = text.replace("wait_seconds = 60", "wait_seconds = 1")
    text = text.replace("idle_seconds = 90", "idle_seconds = 3")
    if cross:
        head, _, rest = text.partition("[[treatments]]")
        text = f"{head}[treatments.cross]\n{cross}\n\n[pages]{rest.partition('[pages]')[2]}"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """A study the study-test driver played: (its folder, the driver's summary)."""
    pytest.importorskip("websockets")
    from socialsim.web.study_test import study_test

    tmp = tmp_path_factory.mktemp("study")
    summary = study_test(scripted_study(tmp / "study"), 8, tmp / "results", seed=0)
    assert summary["ok"], summary["text"]
    return tmp / "results" / "study_donation", summary


def test_a_studys_folder_holds_every_game_record_with_its_treatment_as_the_cell(played):
    folder, summary = played
    games = sorted(Path(g) for g in summary["games"])
    pooled = records.read_records(folder, include_failed=True)
    assert len(pooled) == len(games) == 4
    for game in games:
        facts = json.loads((game / "study_game.json").read_text())
        (own,) = records.read_records(game, include_failed=True)
        copy = next(r for r in pooled if r.episode == facts["game"])
        assert copy.cell == {"treatment": facts["treatment"]}
        assert game.name == f"g{facts['game'] + 1:04d}_{facts['treatment']}"
        own.cell, own.episode = copy.cell, copy.episode
        assert copy.content() == own.content()  # the game's record, but its cell and episode
    manifest = records.read_manifest(folder)
    assert manifest["episodes_total"] == 4
    assert manifest["cells"] == [{"treatment": "llm"}, {"treatment": "scripted"}]


def test_socialsim_load_gives_a_studys_frames_people_and_models_by_treatment(played):
    folder, _ = played
    frames = socialsim.load(folder)
    seats = frames.agent_episodes
    assert set(seats["cell.treatment"]) == {"llm", "scripted"}
    assert len(frames.episodes) == 4
    kinds = seats.groupby("cell.treatment")["kind"].agg(set).to_dict()
    assert all("human" in k and "image_scoring" in k for k in kinds.values())


def test_report_of_a_study_compares_its_treatments(played):
    folder, _ = played
    from socialsim.analysis.report import build

    sections = {s.title: s for s in build(folder, write_files=False).sections}
    kinds = sections["per agent kind"].table
    assert set(zip(kinds["cell"], kinds["kind"], strict=True)) == {
        (f"treatment={t}", k) for t in ("llm", "scripted") for k in ("human", "image_scoring")
    }
    contrasts = next(s.table for title, s in sections.items() if title.startswith("contrasts"))
    assert set(contrasts["factor"]) == {"treatment"}
    assert set(contrasts["baseline"]) == {"llm"} and set(contrasts["treatment"]) == {"scripted"}


@pytest.mark.slow
def test_socialsim_report_writes_a_studys_tables_and_page(played, tmp_path):
    folder, _ = played
    from socialsim.cli import main

    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    assert main(["report", str(copy)]) == 0
    per_kind = {(row["cell"], row["kind"]) for row in _csv_rows(copy / "cooperation_kinds.csv")}
    assert ("treatment=llm", "human") in per_kind and ("treatment=scripted", "human") in per_kind
    assert {row["factor"] for row in _csv_rows(copy / "contrasts.csv")} == {"treatment"}
    assert (copy / "report.html").is_file()


def _csv_rows(path: Path) -> list[dict[str, str]]:
    import csv

    with path.open(encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_pooling_again_copies_nothing_and_a_lost_pool_is_rebuilt_from_the_games(played, tmp_path):
    folder, _ = played
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    before = (copy / records.EPISODES).read_bytes()
    assert export.pool(copy) == 0
    assert (copy / records.EPISODES).read_bytes() == before
    (copy / records.EPISODES).unlink()
    (copy / records.MANIFEST).unlink()  # a study run before its games were pooled
    assert export.pool(copy) == 4
    assert sorted((copy / records.EPISODES).read_text().splitlines()) == sorted(
        before.decode().splitlines()
    )


def test_the_export_reads_as_a_typed_frame_one_row_per_participant(played):
    folder, summary = played
    frame = export.participants(folder)
    assert list(frame["participant"]) == [f"P{i:04d}" for i in range(1, 9)]
    assert str(frame["arrived"].dt.tz) == "UTC"
    assert frame["quiz_attempts"].dtype.kind == "i" and frame["payment"].dtype.kind == "f"
    paid = sum(float(r["payment"]) for r in summary["rows"] if r["payment"])
    assert frame["payment"].sum() == pytest.approx(paid)


def test_the_export_of_a_folder_without_one_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="no export; is .* a study's results folder"):
        export.participants(tmp_path)


def test_a_crossed_studys_games_are_pooled_by_their_crossed_keys(tmp_path):
    pytest.importorskip("websockets")
    from socialsim.web.study_test import study_test

    path = scripted_study(tmp_path / "study", cross="env.kwargs.rounds = [2, 3]")
    summary = study_test(path, 4, tmp_path / "results", seed=1)
    assert summary["ok"], summary["text"]
    seats = socialsim.load(tmp_path / "results" / "study_donation").agent_episodes
    assert summary["games"] and set(seats["cell.env.kwargs.rounds"]) <= {2, 3}
    for game in summary["games"]:
        facts = json.loads((Path(game) / "study_game.json").read_text())
        assert facts["factors"] == {"env.kwargs.rounds": int(facts["treatment"][-1])}
        assert facts["treatment"] in ("rounds_2", "rounds_3")


def test_the_people_of_a_study_are_rated_against_the_pool_from_its_folder(tmp_path):
    """``socialsim rate STUDY --seat SEAT --game donation`` reads the pooled games: with one
    person a game beside image scorers (pool members), every game is rated."""
    pytest.importorskip("websockets")
    from socialsim.rating import pool as pool_module
    from socialsim.rating import recorded
    from socialsim.web.study_test import study_test

    path = scripted_study(tmp_path / "study")
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('people = ["agent_0", "agent_1"]', 'people = ["agent_0"]'))
    summary = study_test(path, 4, tmp_path / "results", seed=0)
    assert summary["ok"], summary["text"]
    folder = tmp_path / "results" / "study_donation"
    done = records.read_records(folder)
    spec, played, groups, skipped = recorded.read(folder, "agent_0", "donation", pool_module.load())
    assert spec["kind"] == "human"
    assert (groups, skipped) == (len(done), 0) and groups >= 1
