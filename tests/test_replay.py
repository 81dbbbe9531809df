"""Recorded Decrypto games replayed against agents (``socialsim replay``): the recorded cell
gives the recorded players' own results under the benchmark's ending, an agent in the decoder or
the interceptor seat plays the recorded hints and guesses of the others, and the run is an
ordinary results directory that resumes and reports.

The fixture ``tests/data/decrypto_human_games.json`` is our own: three games in the Decrypto
reference's human-data form (``summarized_history`` turns with ``guess_bob`` / ``guess_eve``).
Game 0 survives 8 turns with one interception (turn 5); game 1 was played on to turn 6 but
ends by interceptions on turns 2 and 4 (a miscommunication on turn 3); game 2 ends by
miscommunications on turns 2 and 3, recorded as ``0-0-0`` and ``1-1-2`` (not codes), and its
interceptor's turn-1 guess ``1-1-1`` is not a code either.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from socialsim import records
from socialsim.cli import main
from socialsim.episode import EpisodeSpec
from socialsim.records import EventLog
from socialsim.replay import read_games
from socialsim.runner import play_episode
from socialsim.testing.decrypto_policies import answer

GAMES = Path(__file__).parent / "data" / "decrypto_human_games.json"
KEY_ENV = "SOCIALSIM_REPLAY_TEST_KEY"


def by_cell(out: Path) -> dict[str, list[records.EpisodeRecord]]:
    cells: dict[str, list[records.EpisodeRecord]] = {}
    for record in records.read_records(out):
        cells.setdefault(record.cell["replay"], []).append(record)
    return cells


def table(out: Path) -> dict[str, dict[str, str]]:
    with open(out / "replay.csv", newline="") as f:
        return {row["seat"]: row for row in csv.DictReader(f)}


def test_the_recorded_cell_is_the_recorded_players_results_under_the_benchmark_ending(
    tmp_path, capsys
):
    out = tmp_path / "replay"
    assert main(["replay", str(GAMES), "--as", "decoder", "--out", str(out), "--quiet"]) == 0
    recorded = by_cell(out)["recorded"]
    assert [r.summary["ending"] for r in recorded] == ["survived", "intercept", "miscomm"]
    assert [r.summary["turns"] for r in recorded] == [8, 4, 3]  # game 1 stops at turn 4, not 6
    game_1 = recorded[1].summary["turn_log"]
    assert [t["code"] for t in game_1] == [[2, 4, 1], [1, 3, 2], [4, 2, 3], [3, 1, 4]]
    assert [t["hints"] for t in game_1][1] == ["ships", "wax", "bow"]
    assert recorded[1].summary["keywords"] == ["harbour", "violin", "candle", "meadow"]
    row = table(out)["recorded"]
    # interceptions 1 + 2 + 0 and miscommunications 0 + 1 + 2, per two tokens of 3 games
    assert (row["IR (%)"], row["MR (%)"], row["avg_turns"]) == ("50.0", "50.0", "5.0")
    assert (row["intercept"], row["miscomm"], row["both"], row["survived"]) == ("1", "1", "0", "1")
    manifest = records.read_manifest(out)
    substituted = [g["substituted"] for g in manifest["config"]["replay"]["games"]]
    assert substituted == [{}, {}, {"decoder": [2, 3], "interceptor": [1]}]
    printed = capsys.readouterr().out
    assert "3 recorded games" in printed and "replay=recorded" in printed
    # the report reads it like any run: one outcome row per cell
    assert main(["report", str(out), "--no-files"]) == 0
    report = capsys.readouterr().out
    assert "decrypto_replay + decrypto_replay vs decrypto_replay" in report
    assert "decrypto_replay + glove vs decrypto_replay" in report


def test_an_llm_decoder_and_an_llm_interceptor_replay_the_human_games(
    tmp_path, llm_server, monkeypatch, fresh_models, capsys
):
    monkeypatch.setenv(KEY_ENV, "sk-dummy-for-the-test-server")
    prompts: list[str] = []

    def first_code(messages, request):
        prompts.append("\n".join(m["content"] for m in messages))
        return answer({"guess": "1-2-3"}, "Always the first code.", request)

    llm_server.policy = first_code
    model = f'{{model = "openai/test", api_base = "{llm_server.url}", api_key_env = "{KEY_ENV}", cache = false, max_retries = 0}}'
    out = tmp_path / "llm"
    code = main(
        [
            "replay",
            str(GAMES),
            "--with",
            "llm_decrypto_human_replay",
            "--set",
            f"seats.*.model={model}",
            "--out",
            str(out),
            "--quiet",
        ]
    )
    assert code == 0
    cells = by_cell(out)
    decoder, interceptor = cells["decoder"], cells["interceptor"]
    assert all(r.seats["decoder"]["kind"] == "llm_decrypto" for r in decoder)
    assert table(out)["decoder"]["agent"] == "llm_decrypto(openai/test)"
    # always 1-2-3 as the decoder: right only on game 0's turn 1 (code 1-2-3)
    assert [r.summary["ending"] for r in decoder] == ["miscomm"] * 3
    assert [r.summary["turns"] for r in decoder] == [3, 2, 2]
    # always 1-2-3 as the interceptor: intercepts game 0's turn 1; the recorded decoders lose
    # game 1 on turn 6 (turns 3 and 6) and game 2 on turn 3
    assert [r.summary["ending"] for r in interceptor] == ["survived", "miscomm", "miscomm"]
    assert [r.summary["turns"] for r in interceptor] == [8, 6, 3]
    rows = table(out)
    assert (rows["decoder"]["IR (%)"], rows["decoder"]["MR (%)"]) == ("16.666666666666668", "100.0")
    assert (rows["interceptor"]["IR (%)"], rows["interceptor"]["MR (%)"]) == (
        "16.666666666666668",
        "66.66666666666667",
    )
    # the interceptor was asked with the recorded human hints and never saw a keyword
    asked = [p for p in prompts if "you are the Interceptor." in p]
    assert asked and any("ships" in p for p in asked)
    assert not any(word in p for p in asked for word in ("harbour", "violin", "candle"))
    # a rerun resumes: nothing is played again
    requests = len(prompts)
    assert main(["replay", str(GAMES), "--with", "llm_decrypto_human_replay", "--set",
                 f"seats.*.model={model}", "--out", str(out), "--quiet"]) == 0  # fmt: skip
    assert len(prompts) == requests
    assert "0 to run" in capsys.readouterr().err


def test_our_own_games_in_a_results_directory_replay_with_their_rules(tmp_path):
    seats = {
        "encoder": {"kind": "decrypto_random_encoder"},
        "decoder": {"kind": "decrypto_random_guesser"},
        "interceptor": {"kind": "decrypto_random_guesser"},
    }
    played = [
        play_episode(
            EpisodeSpec(
                env_id="decrypto_v0",
                seed=seed,
                episode=i,
                seats=seats,
                env_kwargs={"first_round_interception": False},
            )
        )
        for i, seed in enumerate((7, 8))
    ]
    with EventLog(tmp_path / "games") as log:
        for record in played:
            log.append(record)
    games = read_games(tmp_path / "games")
    assert [g.keywords for g in games] == [r.summary["keywords"] for r in played]
    assert games[0].players == {s: seats[s]["kind"] for s in seats}
    out = tmp_path / "replay"
    assert (
        main(
            ["replay", str(tmp_path / "games"), "--as", "interceptor", "--out", str(out), "--quiet"]
        )
        == 0
    )
    recorded = by_cell(out)["recorded"]
    # every seat recorded: the same games again, turn for turn
    assert [r.summary for r in recorded] == [r.summary for r in played]
    rules = next(m for m in recorded[0].messages if m["kind"] == "rules")["payload"]
    assert rules["first_round_interception"] is False
    assert all(
        r.seats["interceptor"]["kind"] == "glove_interceptor" for r in by_cell(out)["interceptor"]
    )


@pytest.mark.parametrize(
    ("games", "args", "message"),
    [
        ("missing.json", [], "GAMES: no file or directory at"),
        ("bad_turn.json", [], "GAMES: bad_turn.json#0 turn 1: missing guess_eve"),
        ("repeat.json", [], "GAMES: repeat.json#0 turn 2: code '123' is not a code"),
        ("ok.json", ["--as", "encoder"], "--as: 'encoder' cannot be replaced"),
        ("ok.json", ["--with", "encoder=glove_encoder"], "--with encoder: only the decoder"),
        ("ok.json", ["--with", "decoder=genius"], "unknown agent kind 'genius'"),
    ],
)
def test_bad_replay_input_exits_2_naming_it_and_writes_nothing(
    tmp_path, capsys, games, args, message
):
    turn = {"keywords": ["a1", "b2", "c3", "d4"], "code": "123", "hints": ["x", "y", "z"]}
    files = {
        "bad_turn.json": [{"summarized_history": [{**turn, "guess_bob": "1-2-3"}]}],
        "repeat.json": [[{**turn, "guess_bob": [1, 2, 3], "guess_eve": [3, 2, 1]}] * 2],
        "ok.json": [[{**turn, "guess_bob": [1, 2, 3], "guess_eve": [3, 2, 1]}]],
    }
    for name, data in files.items():
        (tmp_path / name).write_text(json.dumps(data))
    out = tmp_path / "out"
    code = main(["replay", str(tmp_path / games), *args, "--out", str(out), "--quiet"])
    assert code == 2
    assert message in capsys.readouterr().err
    assert not out.exists()
